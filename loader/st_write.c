/*
 * st_write.c — the safetensors streaming writer: a header built from the
 * tensor descriptions (the layout of safetensors.c's table, offsets
 * consecutive from 0, header padded with spaces to 8 bytes), then the data
 * section checked byte for byte against what was declared: in order, or by
 * tensor and offset (st_writer_open_at, for producers that emit out of order).
 * Format code only, like the parser: libweights links it for the file sink.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "loader/loader.h"

struct st_writer {
	st_write_fn fn;
	void *ctx;
	char **names;   /* copies, for error messages */
	uint64_t *ends; /* cumulative end of each tensor in the data section */
	size_t n;
	uint64_t total;   /* data section bytes declared */
	uint64_t written; /* data section bytes written so far */
	/* positional (st_writer_open_at): the data through pfn, each tensor's bytes so
	 * far in next[i], the data section from file offset data_at */
	st_pwrite_fn pfn;
	uint64_t *next;
	uint64_t data_at;
};

void st_writer_abort(st_writer *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->names[i]);
	free(w->names);
	free(w->ends);
	free(w->next);
	free(w);
}

static int desc_nbytes(const st_desc *d, uint64_t *out, wt_errbuf *err)
{
	if (wt_dtype_size(d->dtype) == 0)
		return wt_seterr(err, WT_EDTYPE, "tensor '%s': invalid dtype code %d", d->name,
		                 (int)d->dtype);
	if (d->ndim < 0 || d->ndim > WT_MAX_DIMS)
		return wt_seterr(err, WT_EINVAL, "tensor '%s': ndim %d not in 0..%d", d->name,
		                 d->ndim, WT_MAX_DIMS);
	uint64_t count = 1;
	for (int i = 0; i < d->ndim; i++) {
		if (d->shape[i] < 0)
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': shape[%d] = %lld is negative", d->name, i,
			                 (long long)d->shape[i]);
		if (!wt_mul_u64(count, (uint64_t)d->shape[i], &count))
			return wt_seterr(err, WT_EOVERFLOW, "tensor '%s': element count overflows",
			                 d->name);
	}
	if (!wt_mul_u64(count, wt_dtype_size(d->dtype), out))
		return wt_seterr(err, WT_EOVERFLOW, "tensor '%s': byte count overflows", d->name);
	return WT_OK;
}

/* root["__metadata__"] = the n_meta string pairs (n_meta > 0). */
static int add_meta(json_t *root, const st_kv *meta, size_t n_meta, wt_errbuf *err)
{
	json_t *m = json_object();
	if (m == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory building __metadata__");
	int rv = WT_OK;
	for (size_t i = 0; rv == WT_OK && i < n_meta; i++) {
		if (meta[i].key == NULL || meta[i].value == NULL)
			rv = wt_seterr(err, WT_EINVAL,
			               "__metadata__ entry %zu has a NULL key/value", i);
		/* jansson refuses a string that is not UTF-8, which would read as out
		 * of memory: a safetensors header is UTF-8 JSON */
		else if (!common_utf8_valid(meta[i].key, strlen(meta[i].key), false) ||
		         !common_utf8_valid(meta[i].value, strlen(meta[i].value), false))
			rv = wt_seterr(err, WT_EINVAL,
			               "__metadata__ entry %zu: key or value is not valid UTF-8 "
			               "(a safetensors header is UTF-8 JSON)",
			               i);
		else if (json_object_get(m, meta[i].key) != NULL)
			rv = wt_seterr(err, WT_EDUP, "__metadata__ '%s': duplicate key",
			               meta[i].key);
		else if (json_object_set_new(m, meta[i].key, json_string(meta[i].value)) != 0)
			rv = wt_seterr(err, WT_ENOMEM, "out of memory building __metadata__");
	}
	if (rv != WT_OK) {
		json_decref(m);
		return rv;
	}
	if (json_object_set_new(root, "__metadata__", m) != 0)
		return wt_seterr(err, WT_ENOMEM, "out of memory building __metadata__");
	return WT_OK;
}

/* Build the JSON header text (caller frees with free()). */
static int build_header(st_writer *w, const st_desc *descs, size_t n, const st_kv *meta,
                        size_t n_meta, char **out, wt_errbuf *err)
{
	json_t *root = json_object();
	if (root == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory building a header of %zu tensors",
		                 n);
	int rv = n_meta ? add_meta(root, meta, n_meta, err) : WT_OK;
	if (rv != WT_OK) {
		json_decref(root);
		return rv;
	}
	uint64_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		const st_desc *d = &descs[i];
		if (d->name == NULL || d->name[0] == '\0' || strcmp(d->name, "__metadata__") == 0) {
			rv = wt_seterr(err, WT_EINVAL, "tensor %zu: name is empty or reserved", i);
			goto fail;
		}
		if (!common_utf8_valid(d->name, strlen(d->name), false)) {
			rv = wt_seterr(
			    err, WT_EINVAL,
			    "tensor %zu: name is not valid UTF-8 (a safetensors header is "
			    "UTF-8 JSON)",
			    i);
			goto fail;
		}
		if (json_object_get(root, d->name) != NULL) {
			rv = wt_seterr(err, WT_EDUP, "tensor '%s': duplicate name", d->name);
			goto fail;
		}
		uint64_t nb;
		if ((rv = desc_nbytes(d, &nb, err)) != WT_OK)
			goto fail;
		uint64_t end;
		if (!wt_add_u64(pos, nb, &end) || end > (uint64_t)INT64_MAX) {
			rv = wt_seterr(err, WT_EOVERFLOW, "tensor '%s': data section overflows",
			               d->name);
			goto fail;
		}
		json_t *t = json_object();
		json_t *shape = json_array();
		json_t *offs = json_array();
		if (t == NULL || shape == NULL || offs == NULL) {
			json_decref(t);
			json_decref(shape);
			json_decref(offs);
			goto nomem;
		}
		int bad = json_object_set_new(t, "dtype", json_string(wt_dtype_name(d->dtype)));
		for (int k = 0; k < d->ndim; k++)
			bad |= json_array_append_new(shape, json_integer(d->shape[k]));
		bad |= json_array_append_new(offs, json_integer((json_int_t)pos));
		bad |= json_array_append_new(offs, json_integer((json_int_t)end));
		bad |= json_object_set_new(t, "shape", shape);
		bad |= json_object_set_new(t, "data_offsets", offs);
		bad |= json_object_set_new(root, d->name, t);
		if (bad)
			goto nomem;
		if ((w->names[i] = strdup(d->name)) == NULL)
			goto nomem;
		w->ends[i] = end;
		w->n = i + 1;
		pos = end;
	}
	w->total = pos;
	*out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (*out == NULL)
		goto nomem;
	json_decref(root);
	return WT_OK;
nomem:
	rv = wt_seterr(err, WT_ENOMEM, "out of memory building a header of %zu tensors", n);
fail:
	json_decref(root);
	return rv;
}

int st_writer_open(st_writer **out, const st_desc *descs, size_t n, const st_kv *meta,
                   size_t n_meta, st_write_fn fn, void *ctx, wt_errbuf *err)
{
	*out = NULL;
	st_writer *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	w->fn = fn;
	w->ctx = ctx;
	w->names = calloc(n ? n : 1, sizeof(*w->names));
	w->ends = calloc(n ? n : 1, sizeof(*w->ends));
	char *json = NULL;
	uint8_t *hdr = NULL;
	int rv;
	if (w->names == NULL || w->ends == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "out of memory for %zu tensors", n);
		goto fail;
	}
	if ((rv = build_header(w, descs, n, meta, n_meta, &json, err)) != WT_OK)
		goto fail;
	size_t jlen = strlen(json);
	size_t padded = (jlen + 7) & ~(size_t)7;
	if (padded > ST_MAX_HEADER_BYTES) {
		rv = wt_seterr(err, WT_ETOOBIG, "header of %zu bytes > cap %u bytes", padded,
		               ST_MAX_HEADER_BYTES);
		goto fail;
	}
	if ((hdr = malloc(8 + padded)) == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "out of memory for a %zu-byte header", padded);
		goto fail;
	}
	for (int i = 0; i < 8; i++)
		hdr[i] = (uint8_t)((uint64_t)padded >> (8 * i));
	memcpy(hdr + 8, json, jlen);
	memset(hdr + 8 + jlen, ' ', padded - jlen);
	if ((rv = fn(ctx, hdr, 8 + padded)) != WT_OK) {
		rv = wt_seterr(err, rv, "writing the %zu-byte safetensors header failed: %s",
		               8 + padded, wt_strerror(rv));
		goto fail;
	}
	w->data_at = 8 + padded;
	free(hdr);
	free(json);
	*out = w;
	return WT_OK;
fail:
	free(hdr);
	free(json);
	st_writer_abort(w);
	return rv;
}

/* Index of the tensor that data-section byte `pos` belongs to. */
static size_t tensor_at(const st_writer *w, uint64_t pos)
{
	size_t i = 0;
	while (i + 1 < w->n && w->ends[i] <= pos)
		i++;
	return i;
}

int st_writer_open_at(st_writer **out, const st_desc *descs, size_t n, const st_kv *meta,
                      size_t n_meta, st_write_fn fn, st_pwrite_fn pfn, void *ctx, wt_errbuf *err)
{
	int rv = st_writer_open(out, descs, n, meta, n_meta, fn, ctx, err);
	if (rv != WT_OK)
		return rv;
	(*out)->pfn = pfn;
	if (((*out)->next = calloc(n ? n : 1, sizeof(uint64_t))) == NULL) {
		st_writer_abort(*out);
		*out = NULL;
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu tensors", n);
	}
	return WT_OK;
}

int st_writer_write_at(st_writer *w, size_t i, uint64_t off, const void *data, size_t len,
                       wt_errbuf *err)
{
	if (w->pfn == NULL || i >= w->n)
		return wt_seterr(err, WT_EINVAL, "tensor %zu of %zu: %s", i, w->n,
		                 w->pfn == NULL ? "a positional write to a sequential writer"
		                                : "no such tensor");
	uint64_t begin = i ? w->ends[i - 1] : 0, size = w->ends[i] - begin;
	if (off != w->next[i] || len > size - off)
		return wt_seterr(err, WT_EINVAL,
		                 "tensor '%s': %zu bytes at %llu, of %llu (%llu written so far); "
		                 "write each tensor's bytes in order, within it",
		                 w->names[i], len, (unsigned long long)off,
		                 (unsigned long long)size, (unsigned long long)w->next[i]);
	if (len == 0)
		return WT_OK;
	int rv = w->pfn(w->ctx, data, len, w->data_at + begin + off);
	if (rv != WT_OK)
		return wt_seterr(err, rv, "tensor '%s': writing %zu bytes failed: %s", w->names[i],
		                 len, wt_strerror(rv));
	w->next[i] += len; /* (w->written is summed at close: threads write apart) */
	return WT_OK;
}

int st_writer_write(st_writer *w, const void *data, size_t len, wt_errbuf *err)
{
	if (w->pfn != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "a sequential write to a positional writer (st_writer_write_at)");
	if (len > w->total - w->written)
		return wt_seterr(err, WT_EINVAL,
		                 "write of %zu bytes exceeds the declared data by %llu bytes "
		                 "(declared %llu, written %llu)",
		                 len, (unsigned long long)(len - (w->total - w->written)),
		                 (unsigned long long)w->total, (unsigned long long)w->written);
	if (len == 0)
		return WT_OK;
	int rv = w->fn(w->ctx, data, len);
	if (rv != WT_OK)
		return wt_seterr(err, rv, "tensor '%s': writing %zu bytes failed: %s",
		                 w->names[tensor_at(w, w->written)], len, wt_strerror(rv));
	w->written += len;
	return WT_OK;
}

int st_writer_close(st_writer *w, wt_errbuf *err)
{
	if (w == NULL)
		return WT_OK;
	int rv = WT_OK;
	if (w->pfn != NULL) /* positional: the tensors' bytes so far */
		for (size_t k = 0; k < w->n; k++)
			w->written += w->next[k];
	if (w->written != w->total) {
		size_t i = tensor_at(w, w->written);
		for (size_t k = 0; w->pfn != NULL && k < w->n; k++)
			if (w->next[k] != w->ends[k] - (k ? w->ends[k - 1] : 0)) {
				i = k; /* the first tensor not whole */
				break;
			}
		uint64_t begin = i ? w->ends[i - 1] : 0;
		uint64_t done = w->pfn != NULL ? w->next[i] : w->written - begin;
		rv = wt_seterr(err, WT_EINVAL,
		               "tensor '%s': only %llu of %llu bytes written (data section %llu of "
		               "%llu); write every declared byte",
		               w->names[i], (unsigned long long)done,
		               (unsigned long long)(w->ends[i] - begin),
		               (unsigned long long)w->written, (unsigned long long)w->total);
	}
	st_writer_abort(w);
	return rv;
}

/* ---- whole file at a path ---- */

int st_write_path(const char *path, const st_desc *descs, const void *const *data, size_t n,
                  const st_kv *meta, size_t n_meta, wt_errbuf *err)
{
	common_afile *f = malloc(sizeof(*f));
	if (f == NULL)
		return wt_seterr(err, WT_ENOMEM, "writing '%s': out of memory", path);
	st_writer *w = NULL;
	/* durable: a written checkpoint or shard is kept, not regenerated */
	int rv = common_afile_open(f, path, true, err);
	if (rv == WT_OK)
		rv = st_writer_open(&w, descs, n, meta, n_meta, common_afile_write_cb, f, err);
	for (size_t i = 0; rv == WT_OK && i < n; i++) {
		uint64_t nb;
		desc_nbytes(&descs[i], &nb, NULL); /* validated by st_writer_open */
		if (nb > 0 && (data == NULL || data[i] == NULL))
			rv =
			    wt_seterr(err, WT_EINVAL, "tensor '%s': %llu bytes declared, data NULL",
			              descs[i].name, (unsigned long long)nb);
		else if (nb > SIZE_MAX)
			rv = wt_seterr(err, WT_ETOOBIG, "tensor '%s': too big for memory",
			               descs[i].name);
		else
			rv = st_writer_write(w, nb ? data[i] : NULL, (size_t)nb, err);
	}
	if (rv == WT_OK)
		rv = st_writer_close(w, err); /* frees w, also on error */
	else
		st_writer_abort(w); /* NULL-safe */
	if (rv == WT_OK)
		rv = common_afile_commit(f, err);
	if (rv != WT_OK) {
		common_afile_abort(f); /* no-op once committed or never opened */
		wt_errprefix(err, "writing '%s'", path);
	}
	free(f);
	return rv;
}
