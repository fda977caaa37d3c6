/*
 * safetensors.c — the safetensors format: the strict header parser. Format
 * code only: no store, no curl (libweights links it with the writer,
 * st_write.c; st_read_file lives in st_read.c).
 *
 * File layout (all integers little-endian):
 *
 *   | offset        | size | field                                              |
 *   |---------------|------|----------------------------------------------------|
 *   | 0             | 8    | N: u64 header length in bytes (<= 100 MiB here)    |
 *   | 8             | N    | header: UTF-8 JSON object, may end in ' ' padding   |
 *   | 8 + N         | D    | data section: tensor bytes, row-major, no gaps     |
 *
 * Header JSON object, one entry per tensor plus an optional "__metadata__":
 *
 *   | key            | value                                                     |
 *   |----------------|-----------------------------------------------------------|
 *   | "__metadata__" | object, string -> string only                             |
 *   | tensor name    | {"dtype": "BF16", "shape": [d0, ...], "data_offsets": [b, e]} |
 *
 *   dtype        one of F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 I16 I8 U8 BOOL
 *   shape        0..8 integers >= 0 (empty = scalar, 1 element)
 *   data_offsets [begin, end) relative to the data section;
 *                end - begin == product(shape) * dtype size
 *
 * Whole-file rules: the tensors' byte ranges, sorted, tile the data section
 * exactly (first begins at 0, each begins where the previous ended, the last
 * ends at D) and 8 + N + D == file size. Names are unique.
 *
 * Validation order (STYLE.md 9), each with its error code:
 *   header length > cap                       WT_ETOOBIG
 *   8 + N > file size                         WT_ECORRUPT
 *   not JSON / not an object / wrong types    WT_ECORRUPT
 *   duplicate key                             WT_EDUP
 *   __metadata__ not string -> string         WT_ECORRUPT
 *   unknown dtype                             WT_EDTYPE
 *   more than WT_MAX_DIMS dims                WT_EUNSUPPORTED
 *   negative dim                              WT_ESHAPE
 *   element count or byte count overflows     WT_EOVERFLOW
 *   end < begin                               WT_ECORRUPT
 *   end - begin != nbytes                     WT_ESHAPE
 *   end beyond the data section               WT_ECORRUPT
 *   overlap / hole between tensors            WT_ECORRUPT
 *   data section shorter/longer than tensors  WT_ECORRUPT
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/loader.h"

/* ===================== parser ===================== */

/* Name of the duplicate key jansson stopped at: the JSON string that ends just
 * before error position. Writes "" when it cannot be recovered. */
/* Nesting depth ({ and [ outside strings) at byte `end` of the header. */
static int nesting_at(const char *hdr, size_t end)
{
	int depth = 0;
	bool in_str = false;
	for (size_t i = 0; i < end; i++) {
		char ch = hdr[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			depth--;
		}
	}
	return depth;
}

static void dup_key_name(const char *hdr, size_t hdr_len, const json_error_t *je, char *out,
                         size_t outsz)
{
	out[0] = '\0';
	size_t end = (size_t)je->position;
	if (end < 2 || end > hdr_len || hdr[end - 1] != '"')
		return;
	size_t i = end - 1;
	while (i > 0) {
		i--;
		if (hdr[i] != '"')
			continue;
		size_t bs = 0;
		while (i >= bs + 1 && hdr[i - bs - 1] == '\\')
			bs++;
		if (bs % 2 == 0)
			break;
	}
	json_t *s = json_loadb(hdr + i, end - i, JSON_DECODE_ANY, NULL);
	if (s != NULL && json_is_string(s))
		snprintf(out, outsz, "%s", json_string_value(s));
	json_decref(s);
}

static int parse_meta(json_t *m, st_file *f, wt_errbuf *err)
{
	if (!json_is_object(m))
		return wt_seterr(err, WT_ECORRUPT,
		                 "__metadata__ is not an object; it must map strings to strings");
	size_t n = json_object_size(m);
	if (n == 0)
		return WT_OK;
	f->meta = calloc(n, sizeof(*f->meta));
	if (f->meta == NULL)
		return wt_seterr(err, WT_ENOMEM, "__metadata__: out of memory for %zu entries", n);
	const char *k;
	json_t *v;
	json_object_foreach(m, k, v)
	{
		if (!json_is_string(v))
			return wt_seterr(err, WT_ECORRUPT,
			                 "__metadata__ '%s': value is not a string; metadata "
			                 "must map strings to strings",
			                 k);
		st_kv *kv = &f->meta[f->n_meta];
		kv->key = strdup(k);
		kv->value = strdup(json_string_value(v));
		f->n_meta++;
		if (kv->key == NULL || kv->value == NULL)
			return wt_seterr(err, WT_ENOMEM, "__metadata__ '%s': out of memory", k);
	}
	return WT_OK;
}

/* Parse one tensor entry into t (name already set); begin/end relative. */
static int parse_tensor(const char *name, json_t *v, st_tensor *t, uint64_t *begin, uint64_t *end,
                        wt_errbuf *err)
{
	if (!json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT, "tensor '%s': entry is not an object", name);
	json_t *jd = json_object_get(v, "dtype");
	json_t *js = json_object_get(v, "shape");
	json_t *jo = json_object_get(v, "data_offsets");
	if (!json_is_string(jd) || !json_is_array(js) || !json_is_array(jo))
		return wt_seterr(err, WT_ECORRUPT,
		                 "tensor '%s': needs \"dtype\" (string), \"shape\" (array) and "
		                 "\"data_offsets\" (array)",
		                 name);
	if (json_object_size(v) != 3) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
		{
			if (strcmp(k, "dtype") != 0 && strcmp(k, "shape") != 0 &&
			    strcmp(k, "data_offsets") != 0)
				return wt_seterr(err, WT_ECORRUPT,
				                 "tensor '%s': unknown field '%s'", name, k);
		}
	}
	t->dtype = wt_dtype_from_name(json_string_value(jd));
	if (t->dtype == WT_DTYPE_INVALID)
		return wt_seterr(err, WT_EDTYPE,
		                 "tensor '%s': unknown dtype '%s'; known: F64 F32 F16 BF16 F8_E4M3 "
		                 "F8_E5M2 I64 I32 I16 I8 U8 BOOL",
		                 name, json_string_value(jd));
	size_t nd = json_array_size(js);
	if (nd > WT_MAX_DIMS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': %zu dims, at most %d supported", name, nd,
		                 WT_MAX_DIMS);
	t->ndim = (int)nd;
	for (size_t i = 0; i < nd; i++) {
		json_t *d = json_array_get(js, i);
		if (!json_is_integer(d))
			return wt_seterr(err, WT_ECORRUPT,
			                 "tensor '%s': shape[%zu] is not an integer", name, i);
		t->shape[i] = (int64_t)json_integer_value(d);
		if (t->shape[i] < 0)
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': shape[%zu] = %lld is negative", name, i,
			                 (long long)t->shape[i]);
	}
	uint64_t count = 1;
	for (size_t i = 0; i < nd; i++)
		if (!wt_mul_u64(count, (uint64_t)t->shape[i], &count))
			return wt_seterr(
			    err, WT_EOVERFLOW,
			    "tensor '%s': element count overflows 64 bits at shape[%zu]", name, i);
	if (!wt_mul_u64(count, wt_dtype_size(t->dtype), &t->nbytes))
		return wt_seterr(err, WT_EOVERFLOW,
		                 "tensor '%s': %llu elements x %zu bytes overflows 64 bits", name,
		                 (unsigned long long)count, wt_dtype_size(t->dtype));
	if (json_array_size(jo) != 2 || !json_is_integer(json_array_get(jo, 0)) ||
	    !json_is_integer(json_array_get(jo, 1)))
		return wt_seterr(err, WT_ECORRUPT,
		                 "tensor '%s': data_offsets must be two integers [begin, end]",
		                 name);
	json_int_t b = json_integer_value(json_array_get(jo, 0));
	json_int_t e = json_integer_value(json_array_get(jo, 1));
	if (b < 0 || e < b)
		return wt_seterr(err, WT_ECORRUPT, "tensor '%s': data_offsets [%lld, %lld] invalid",
		                 name, (long long)b, (long long)e);
	*begin = (uint64_t)b;
	*end = (uint64_t)e;
	if (*end - *begin != t->nbytes)
		return wt_seterr(
		    err, WT_ESHAPE,
		    "tensor '%s': data_offsets [%llu, %llu] span %llu bytes but dtype %s "
		    "and shape need %llu",
		    name, (unsigned long long)*begin, (unsigned long long)*end,
		    (unsigned long long)(*end - *begin), wt_dtype_name(t->dtype),
		    (unsigned long long)t->nbytes);
	return WT_OK;
}

typedef struct span {
	uint64_t begin, end;
	size_t idx;
} span;

static int span_cmp(const void *a, const void *b)
{
	const span *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* Check the sorted spans tile [0, data_len); reorder f->tensors by offset. */
static int check_tiling(st_file *f, span *sp, uint64_t data_len, wt_errbuf *err)
{
	size_t n = f->n_tensors;
	qsort(sp, n, sizeof(*sp), span_cmp);
	uint64_t pos = 0;
	const char *prev = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = f->tensors[sp[i].idx].name;
		if (sp[i].end > data_len)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "tensor '%s': data_offsets end %llu > data section size %llu "
			    "(file truncated?)",
			    name, (unsigned long long)sp[i].end, (unsigned long long)data_len);
		if (sp[i].begin < pos)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "tensor '%s': data_offsets [%llu, %llu] overlap tensor '%s' "
			    "ending at %llu",
			    name, (unsigned long long)sp[i].begin, (unsigned long long)sp[i].end,
			    prev ? prev : "?", (unsigned long long)pos);
		if (sp[i].begin > pos)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "tensor '%s': hole of %llu bytes before data_offsets begin %llu "
			    "(previous tensor %s%s%s ends at %llu)",
			    name, (unsigned long long)(sp[i].begin - pos),
			    (unsigned long long)sp[i].begin, prev ? "'" : "",
			    prev ? prev : "(none)", prev ? "'" : "", (unsigned long long)pos);
		pos = sp[i].end;
		prev = name;
	}
	if (pos != data_len)
		return wt_seterr(err, WT_ECORRUPT,
		                 "data section is %llu bytes but tensors cover %llu (last tensor "
		                 "%s%s%s); file size does not match the header",
		                 (unsigned long long)data_len, (unsigned long long)pos,
		                 prev ? "'" : "", prev ? prev : "(none)", prev ? "'" : "");
	st_tensor *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (sorted == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory sorting %zu tensors", n);
	for (size_t i = 0; i < n; i++) {
		sorted[i] = f->tensors[sp[i].idx];
		sorted[i].off = f->data_off + sp[i].begin;
	}
	free(f->tensors);
	f->tensors = sorted;
	return WT_OK;
}

int st_check_prefix(const void *prefix8, uint64_t file_bytes, uint64_t *hdr_len, wt_errbuf *err)
{
	const uint8_t *p = prefix8;
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = (n << 8) | p[i];
	if (n > ST_MAX_HEADER_BYTES)
		return wt_seterr(err, WT_ETOOBIG,
		                 "header length %llu > cap %u bytes (not a safetensors file?)",
		                 (unsigned long long)n, ST_MAX_HEADER_BYTES);
	if (file_bytes < 8 || n > file_bytes - 8)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "header length %llu does not fit in file of %llu bytes (truncated?)",
		    (unsigned long long)n, (unsigned long long)file_bytes);
	*hdr_len = n;
	return WT_OK;
}

static int parse_root(const char *hdr, size_t hdr_len, json_t *root, st_file *f, wt_errbuf *err)
{
	(void)hdr;
	(void)hdr_len;
	if (!json_is_object(root))
		return wt_seterr(err, WT_ECORRUPT, "header is not a JSON object");
	size_t cap = json_object_size(root);
	f->tensors = calloc(cap ? cap : 1, sizeof(*f->tensors));
	span *sp = calloc(cap ? cap : 1, sizeof(*sp));
	int rv = WT_OK;
	if (f->tensors == NULL || sp == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "out of memory for %zu tensors", cap);
		goto out;
	}
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v)
	{
		if (strcmp(k, "__metadata__") == 0) {
			if ((rv = parse_meta(v, f, err)) != WT_OK)
				goto out;
			continue;
		}
		if (common_text_has_control(k)) { /* a name goes into manifests, files and logs */
			char shown[WT_ERRMSG_MAX / 2];
			common_text_escape(k, shown, sizeof(shown), false);
			rv =
			    wt_seterr(err, WT_ECORRUPT,
			              "tensor '%s': its name holds a control character; rename the "
			              "tensor",
			              shown);
			goto out;
		}
		st_tensor *t = &f->tensors[f->n_tensors];
		if ((t->name = strdup(k)) == NULL) {
			rv = wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", k);
			goto out;
		}
		sp[f->n_tensors].idx = f->n_tensors;
		f->n_tensors++;
		rv = parse_tensor(k, v, t, &sp[f->n_tensors - 1].begin, &sp[f->n_tensors - 1].end,
		                  err);
		if (rv != WT_OK)
			goto out;
	}
	rv = check_tiling(f, sp, f->file_bytes - f->data_off, err);
out:
	free(sp);
	return rv;
}

int st_parse_header(const char *hdr, size_t hdr_len, uint64_t file_bytes, st_file *out,
                    wt_errbuf *err)
{
	memset(out, 0, sizeof(*out));
	if (hdr_len > ST_MAX_HEADER_BYTES)
		return wt_seterr(err, WT_ETOOBIG, "header length %zu > cap %u bytes", hdr_len,
		                 ST_MAX_HEADER_BYTES);
	if (file_bytes < 8 || hdr_len > file_bytes - 8)
		return wt_seterr(err, WT_ECORRUPT,
		                 "header length %zu does not fit in file of %llu bytes", hdr_len,
		                 (unsigned long long)file_bytes);
	st_file f = {.data_off = 8 + (uint64_t)hdr_len, .file_bytes = file_bytes};
	json_error_t je;
	json_t *root = json_loadb(hdr, hdr_len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		if (json_error_code(&je) == json_error_duplicate_key) {
			char name[256];
			dup_key_name(hdr, hdr_len, &je, name, sizeof(name));
			if (nesting_at(hdr, (size_t)je.position) > 1)
				return wt_seterr(
				    err, WT_EDUP,
				    "duplicate field '%s' inside a tensor entry (byte %d)", name,
				    je.position);
			return wt_seterr(err, WT_EDUP,
			                 "tensor '%s': duplicate name in header (byte %d); names "
			                 "must be unique",
			                 name, je.position);
		}
		return wt_seterr(err, WT_ECORRUPT, "header is not valid JSON: %s at byte %d",
		                 je.text, je.position);
	}
	int rv = parse_root(hdr, hdr_len, root, &f, err);
	json_decref(root);
	if (rv != WT_OK) {
		st_file_free(&f);
		return rv;
	}
	*out = f;
	return WT_OK;
}

void st_file_free(st_file *f)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < f->n_tensors; i++)
		free(f->tensors[i].name);
	free(f->tensors);
	for (size_t i = 0; i < f->n_meta; i++) {
		free(f->meta[i].key);
		free(f->meta[i].value);
	}
	free(f->meta);
	memset(f, 0, sizeof(*f));
}

const st_tensor *st_find(const st_file *f, const char *name)
{
	for (size_t i = 0; i < f->n_tensors; i++)
		if (strcmp(f->tensors[i].name, name) == 0)
			return &f->tensors[i];
	return NULL;
}

const char *st_meta_get(const st_file *f, const char *key)
{
	for (size_t i = 0; i < f->n_meta; i++)
		if (strcmp(f->meta[i].key, key) == 0)
			return f->meta[i].value;
	return NULL;
}
