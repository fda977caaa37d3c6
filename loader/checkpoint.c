/*
 * checkpoint.c — the Hugging Face model folder as an immutable tensor table.
 *
 * Accepted layouts (keys at the store root):
 *   config.json + model.safetensors                      (single file; wins if present)
 *   config.json + model.safetensors.index.json + shards  (weight_map: tensor -> file)
 * and, without config.json, Mistral's native format (config_mistral.c, loader_mistral.h):
 *   params.json + consolidated.safetensors               (single file; wins if present)
 *   params.json + consolidated.safetensors.index.json + shards
 * whose Meta names are renamed to transformers' once the index and the headers agree.
 *
 * Every referenced safetensors header is read and validated at open; the
 * index must agree exactly with the files' headers. Every object is read
 * through a pin held for the life of the ckpt, so a file replaced under its
 * name is not seen and an in-place write is caught (ckpt_check). The
 * revision digest covers every object's bytes (revision.c).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/ckpt_int.h"
#include "loader/loader_mistral.h"

#define KEY_CONFIG "config.json"
#define KEY_SINGLE "model.safetensors"
#define KEY_INDEX  "model.safetensors.index.json"

struct ckpt {
	store *s; /* borrowed */
	/* the format's keys: config.json or params.json, model.* or consolidated.* */
	const char *key_config, *key_single, *key_index;
	ckpt_mistral_dims md; /* Mistral's native format: params.json's dims */
	int64_t *rope;        /* per tensor (name order): ckpt_rope_heads; owned; NULL unless
	                         Mistral's native format */
	ckpt_config cfg;      /* owned */
	char *config_json;    /* owned, NUL-terminated */
	size_t config_len;
	char revision[65];        /* hex SHA-256 */
	char **objects;           /* safetensors keys, sorted; owned */
	store_pin **pins;         /* one per object, same order; owned */
	uint64_t *heads;          /* per object: its header's end (data_off); owned */
	wt_hash128 *head_digests; /* per object: of the header that was parsed; owned */
	size_t n_objects;
	const ckpt_memo *memo; /* during open only */
	ckpt_memo forget;      /* a copy of the memo: ckpt_read drops a digest it disproves */
	ckpt_progress *prog;   /* during open only; may be NULL */
	bool quick;            /* ckpt_open_quick: no content digests, revision "" */
	char *override;        /* the configuration override, canonical; owned; NULL: none */
	/* digests of config.json and the index, for the revision */
	uint64_t config_bytes, index_bytes;
	wt_hash128 config_digest, index_digest;
	char **names;         /* tensor names in name order; owned */
	ckpt_tensor *tensors; /* name order; name/object point into names/objects */
	size_t n_tensors;
	uint64_t total_bytes;
};

/* A tensor found in a file header, before it is placed. */
typedef struct found {
	const char *name; /* borrowed from files[file] (or the renames) */
	size_t file;
	const st_tensor *t;
	int64_t rope; /* ckpt_rope_heads */
} found;

/* An index entry. */
typedef struct entry {
	const char *name;
	const char *file; /* borrowed from the index JSON */
} entry;

static int found_cmp(const void *a, const void *b)
{
	return strcmp(((const found *)a)->name, ((const found *)b)->name);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ckpt_close(ckpt *c)
{
	if (c == NULL)
		return;
	ckpt_config_clear(&c->cfg);
	free(c->config_json);
	free(c->override);
	for (size_t i = 0; i < c->n_objects; i++) {
		free(c->objects[i]);
		if (c->pins != NULL)
			store_pin_close(c->pins[i]);
	}
	free(c->objects);
	free(c->pins);
	free(c->heads);
	free(c->head_digests);
	for (size_t i = 0; c->names != NULL && i < c->n_tensors; i++)
		free(c->names[i]);
	free(c->names);
	free(c->tensors);
	free(c->rope);
	free(c);
}

/* Does key exist? WT_OK (yes), WT_ENOTFOUND (no), or another error. */
static int exists(store *s, const char *key, wt_errbuf *err)
{
	store_obj o;
	int rv = store_stat(s, key, &o, err);
	store_obj_clear(&o);
	return rv;
}

/* Parse the index into entries (sorted by name) and c->objects (unique, sorted). */
static int parse_index(ckpt *c, json_t **rootp, entry **out, size_t *n_out, wt_errbuf *err)
{
	char *text;
	size_t len;
	int rv = store_read_all(c->s, c->key_index, CKPT_MAX_JSON_BYTES, &text, &len, err);
	if (rv != WT_OK)
		return rv;
	c->index_bytes = len;
	c->index_digest = common_hash128(text, len);
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (root == NULL)
		return wt_seterr(
		    err, json_error_code(&je) == json_error_duplicate_key ? WT_EDUP : WT_ECORRUPT,
		    "%s: not valid JSON: %s at line %d column %d", c->key_index, je.text, je.line,
		    je.column);
	*rootp = root;
	json_t *wm = json_object_get(root, "weight_map");
	if (!json_is_object(root) || !json_is_object(wm))
		return wt_seterr(err, WT_ECORRUPT, "%s: needs a \"weight_map\" object",
		                 c->key_index);
	size_t n = json_object_size(wm);
	entry *e = calloc(n ? n : 1, sizeof(*e));
	c->objects = calloc(n ? n : 1, sizeof(*c->objects));
	if (e == NULL || c->objects == NULL) {
		free(e);
		return wt_seterr(err, WT_ENOMEM, "%s: out of memory for %zu entries", c->key_index,
		                 n);
	}
	size_t k = 0;
	const char *name;
	json_t *v;
	json_object_foreach(wm, name, v)
	{
		if (!json_is_string(v)) {
			free(e);
			return wt_seterr(err, WT_ECORRUPT,
			                 "%s: tensor '%s': file name is not a string", c->key_index,
			                 name);
		}
		e[k].name = name;
		e[k].file = json_string_value(v);
		k++;
	}
	qsort(e, n, sizeof(*e), entry_cmp);
	/* unique files */
	const char **files = malloc((n ? n : 1) * sizeof(*files));
	if (files == NULL) {
		free(e);
		return wt_seterr(err, WT_ENOMEM, "%s: out of memory", c->key_index);
	}
	for (size_t i = 0; i < n; i++)
		files[i] = e[i].file;
	qsort(files, n, sizeof(*files), str_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(files[i], files[i - 1]) == 0)
			continue;
		if ((c->objects[c->n_objects] = strdup(files[i])) == NULL) {
			free(files);
			free(e);
			return wt_seterr(err, WT_ENOMEM, "%s: out of memory", c->key_index);
		}
		c->n_objects++;
	}
	free(files);
	*out = e;
	*n_out = n;
	return WT_OK;
}

/* The index entry naming `file` first (for messages). */
static const char *first_tensor_of(const entry *e, size_t n, const char *file)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(e[i].file, file) == 0)
			return e[i].name;
	return "?";
}

/* Read every object's header; collect the tensors sorted by name. */
static int read_headers(ckpt *c, st_file *files, found **out, size_t *n_out, const entry *e,
                        size_t n_e, wt_errbuf *err)
{
	size_t total = 0;
	c->pins = calloc(c->n_objects ? c->n_objects : 1, sizeof(*c->pins));
	c->heads = calloc(c->n_objects ? c->n_objects : 1, sizeof(*c->heads));
	c->head_digests = calloc(c->n_objects ? c->n_objects : 1, sizeof(*c->head_digests));
	if (c->pins == NULL || c->heads == NULL || c->head_digests == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu objects", c->n_objects);
	for (size_t i = 0; i < c->n_objects; i++) {
		int rv = store_pin_open(c->s, c->objects[i], &c->pins[i], err);
		if (rv == WT_OK)
			rv = st_read_pinned(c->pins[i], &files[i], err);
		if (rv == WT_ENOTFOUND && e != NULL)
			return wt_seterr(err, WT_ENOTFOUND,
			                 "%s: tensor '%s' maps to '%s', which does not "
			                 "exist; restore the file or fix the index",
			                 c->key_index, first_tensor_of(e, n_e, c->objects[i]),
			                 c->objects[i]);
		if (rv != WT_OK)
			return rv;
		c->heads[i] = files[i].data_off;
		c->head_digests[i] = files[i].head_digest;
		total += files[i].n_tensors;
	}
	found *f = calloc(total ? total : 1, sizeof(*f));
	if (f == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu tensors", total);
	size_t k = 0;
	for (size_t i = 0; i < c->n_objects; i++)
		for (size_t j = 0; j < files[i].n_tensors; j++)
			f[k++] = (found){files[i].tensors[j].name, i, &files[i].tensors[j]};
	qsort(f, total, sizeof(*f), found_cmp);
	for (size_t i = 1; i < total; i++)
		if (strcmp(f[i].name, f[i - 1].name) == 0) {
			int rv =
			    wt_seterr(err, WT_EDUP,
			              "tensor '%s' is in both '%s' and '%s'; a tensor must "
			              "be stored once",
			              f[i].name, c->objects[f[i - 1].file], c->objects[f[i].file]);
			free(f);
			return rv;
		}
	*out = f;
	*n_out = total;
	return WT_OK;
}

/* The index and the headers must agree exactly (both sorted by name). */
static int check_index(const ckpt *c, const entry *e, size_t n_e, const found *f, size_t n_f,
                       wt_errbuf *err)
{
	size_t i = 0, j = 0;
	while (i < n_e || j < n_f) {
		int cmp = i == n_e ? 1 : j == n_f ? -1 : strcmp(e[i].name, f[j].name);
		if (cmp < 0)
			return wt_seterr(err, WT_ENOTFOUND,
			                 "%s: tensor '%s' maps to '%s' but no file has it; "
			                 "fix the index or the shards",
			                 c->key_index, e[i].name, e[i].file);
		if (cmp > 0)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "tensor '%s' is in '%s' but not in %s; add it to weight_map", f[j].name,
			    c->objects[f[j].file], c->key_index);
		if (strcmp(e[i].file, c->objects[f[j].file]) != 0)
			return wt_seterr(err, WT_ENOTFOUND,
			                 "%s: tensor '%s' maps to '%s' but is not in it "
			                 "(found in '%s')",
			                 c->key_index, e[i].name, e[i].file, c->objects[f[j].file]);
		i++;
		j++;
	}
	return WT_OK;
}

static int build_table(ckpt *c, const found *f, size_t n, wt_errbuf *err)
{
	c->names = calloc(n ? n : 1, sizeof(*c->names));
	c->tensors = calloc(n ? n : 1, sizeof(*c->tensors));
	bool native = ckpt_mistral_native(c);
	if (native)
		c->rope = calloc(n ? n : 1, sizeof(*c->rope));
	if (c->names == NULL || c->tensors == NULL || (native && c->rope == NULL))
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu tensors", n);
	c->n_tensors = n;
	for (size_t i = 0; i < n; i++) {
		if ((c->names[i] = strdup(f[i].name)) == NULL)
			return wt_seterr(err, WT_ENOMEM, "out of memory");
		ckpt_tensor *t = &c->tensors[i];
		t->name = c->names[i];
		t->object = c->objects[f[i].file];
		t->object_index = f[i].file;
		t->dtype = f[i].t->dtype;
		t->ndim = f[i].t->ndim;
		memcpy(t->shape, f[i].t->shape, sizeof(t->shape));
		t->off = f[i].t->off;
		t->nbytes = f[i].t->nbytes;
		if (c->rope != NULL)
			c->rope[i] = f[i].rope;
		if (!wt_add_u64(c->total_bytes, t->nbytes, &c->total_bytes))
			return wt_seterr(err, WT_EOVERFLOW, "total tensor bytes overflow");
	}
	return WT_OK;
}

/* Revision over config.json, the index, the configuration override (an entry of its own
 * under a key no store object can have) and every pinned safetensors file. */
static int compute_revision(ckpt *c, bool indexed, wt_errbuf *err)
{
	size_t lead = 1 + (indexed ? 1 : 0) + (c->override != NULL ? 1 : 0);
	size_t n = c->n_objects + lead;
	ckpt_rev_obj *o = calloc(n, sizeof(*o));
	if (o == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	o[0] = (ckpt_rev_obj){c->key_config, c->config_bytes, c->config_digest};
	if (indexed)
		o[1] = (ckpt_rev_obj){c->key_index, c->index_bytes, c->index_digest};
	if (c->override != NULL)
		o[lead - 1] = (ckpt_rev_obj){CKPT_OVERRIDE_KEY, strlen(c->override),
		                             common_hash128(c->override, strlen(c->override))};
	wt_hash128 *dig = calloc(c->n_objects ? c->n_objects : 1, sizeof(*dig));
	if (dig == NULL) {
		free(o);
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	}
	/* the safetensors files, several at once: the full read of a new revision */
	ckpt_digest_in in = {.pins = c->pins,
	                     .heads = c->heads,
	                     .head_digests = c->head_digests,
	                     .n = c->n_objects,
	                     .uri = store_uri(c->s),
	                     .memo = c->memo,
	                     .prog = c->prog};
	int rv = ckpt_objects_digest(&in, dig, err);
	for (size_t i = 0; rv == WT_OK && i < c->n_objects; i++) {
		ckpt_rev_obj *r = &o[lead + i];
		r->key = c->objects[i];
		r->nbytes = store_pin_obj(c->pins[i])->nbytes;
		r->digest = dig[i];
	}
	if (rv == WT_OK)
		rv = ckpt_revision_compute(o, n, c->revision, err);
	free(dig);
	free(o);
	return rv;
}

static int open_objects(ckpt *c, bool *indexed, wt_errbuf *err)
{
	int rv = exists(c->s, c->key_single, err);
	if (rv == WT_OK) {
		*indexed = false;
		c->objects = calloc(1, sizeof(*c->objects));
		if (c->objects == NULL || (c->objects[0] = strdup(c->key_single)) == NULL)
			return wt_seterr(err, WT_ENOMEM, "out of memory");
		c->n_objects = 1;
		return WT_OK;
	}
	if (rv != WT_ENOTFOUND && rv != WT_EPERM)
		return rv;
	/* S3 answers a missing key with 403 when the credentials may not list the
	 * bucket (s3:GetObject without s3:ListBucket): a sharded model's single
	 * file looks forbidden, so the index is tried; its own answer decides */
	wt_errbuf first = {0};
	if (err != NULL)
		first = *err;
	int rv0 = rv;
	rv = exists(c->s, c->key_index, err);
	if (rv == WT_ENOTFOUND && rv0 == WT_EPERM) { /* the single file is forbidden */
		if (err != NULL)
			*err = first;
		return rv0;
	}
	if (rv == WT_ENOTFOUND)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "neither %s nor %s found; is this a Hugging Face safetensors "
		                 "model folder?",
		                 c->key_single, c->key_index);
	*indexed = true;
	return rv;
}

/* Mistral's native format: params.json read (its bytes are the revision's), the config.json
 * text made from it. WT_ENOTFOUND when there is no params.json either. */
static int read_params(ckpt *c, wt_errbuf *err)
{
	char *text;
	size_t len;
	int rv = store_read_all(c->s, CKPT_MISTRAL_PARAMS, CKPT_MAX_JSON_BYTES, &text, &len, err);
	if (rv != WT_OK)
		return rv;
	c->key_config = CKPT_MISTRAL_PARAMS;
	c->key_single = CKPT_MISTRAL_SINGLE;
	c->key_index = CKPT_MISTRAL_INDEX;
	c->config_bytes = len;
	c->config_digest = common_hash128(text, len);
	rv = ckpt_mistral_config(text, len, &c->config_json, &c->config_len, &c->md, err);
	free(text);
	return rv;
}

/* config.json, else params.json (config.json wins when both are there, as vLLM's `auto`
 * config format picks). */
static int read_config(ckpt *c, wt_errbuf *err)
{
	c->key_config = KEY_CONFIG;
	c->key_single = KEY_SINGLE;
	c->key_index = KEY_INDEX;
	int rv = store_read_all(c->s, KEY_CONFIG, CKPT_MAX_JSON_BYTES, &c->config_json,
	                        &c->config_len, err);
	if (rv == WT_ENOTFOUND) {
		wt_errbuf first = {0};
		if (err != NULL)
			first = *err;
		rv = read_params(c, err);
		if (rv == WT_ENOTFOUND && !ckpt_mistral_native(c) && err != NULL)
			*err = first; /* neither: config.json's message */
		return rv;
	}
	if (rv != WT_OK)
		return rv;
	c->config_bytes = c->config_len;
	c->config_digest = common_hash128(c->config_json, c->config_len);
	return WT_OK;
}

/* Mistral's native format: the Meta names of f renamed to transformers' (names owned by
 * *own, n of them), f re-sorted; an unknown name or two tensors of one name refused. */
static int rename_mistral(const ckpt *c, found *f, size_t n, char ***own, wt_errbuf *err)
{
	char **nm = calloc(n ? n : 1, sizeof(*nm));
	*own = nm;
	if (nm == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu names", n);
	for (size_t i = 0; i < n; i++) {
		char buf[256];
		int rv = ckpt_mistral_name(&c->md, f[i].name, buf, sizeof(buf), &f[i].rope, err);
		if (rv != WT_OK)
			return rv;
		/* the permute needs whole heads of head_dim rows */
		const st_tensor *t = f[i].t;
		if (f[i].rope > 0 && (t->ndim != 2 || t->shape[0] != f[i].rope * c->md.head_dim))
			return wt_seterr(err, WT_ECORRUPT,
			                 "tensor '%s': %d-D with %lld rows; params.json gives %lld "
			                 "heads of head_dim %lld ([%lld, dim])",
			                 f[i].name, t->ndim, (long long)(t->ndim ? t->shape[0] : 0),
			                 (long long)f[i].rope, (long long)c->md.head_dim,
			                 (long long)(f[i].rope * c->md.head_dim));
		if ((nm[i] = strdup(buf)) == NULL)
			return wt_seterr(err, WT_ENOMEM, "out of memory");
		f[i].name = nm[i];
	}
	qsort(f, n, sizeof(*f), found_cmp);
	for (size_t i = 1; i < n; i++)
		if (strcmp(f[i].name, f[i - 1].name) == 0)
			return wt_seterr(err, WT_EDUP,
			                 "two tensors are '%s'; a tensor must be stored once",
			                 f[i].name);
	return WT_OK;
}

static void free_names(char **nm, size_t n)
{
	for (size_t i = 0; nm != NULL && i < n; i++)
		free(nm[i]);
	free(nm);
}

static int load(ckpt *c, wt_errbuf *err)
{
	int rv = read_config(c, err);
	if (rv == WT_OK && c->override != NULL) {
		rv = ckpt_override_apply(&c->config_json, &c->config_len, c->override, err);
		if (rv != WT_OK)
			return ckpt_mistral_native(c)
			           ? wt_errprefix(err, "%s (as config.json)", c->key_config)
			           : rv;
	}
	if (rv != WT_OK)
		return rv;
	if ((rv = ckpt_config_parse(c->config_json, c->config_len, &c->cfg, err)) != WT_OK) {
		if (c->override != NULL)
			wt_errprefix(err, "with the config override %s", c->override);
		return ckpt_mistral_native(c)
		           ? wt_errprefix(err, "%s (as config.json)", c->key_config)
		           : rv;
	}
	bool indexed = false;
	if ((rv = open_objects(c, &indexed, err)) != WT_OK)
		return rv;
	json_t *iroot = NULL;
	entry *e = NULL;
	size_t n_e = 0;
	if (indexed && (rv = parse_index(c, &iroot, &e, &n_e, err)) != WT_OK) {
		json_decref(iroot);
		return rv;
	}
	st_file *files = calloc(c->n_objects ? c->n_objects : 1, sizeof(*files));
	found *f = NULL;
	size_t n_f = 0;
	if (files == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "out of memory");
	if (rv == WT_OK)
		rv = read_headers(c, files, &f, &n_f, e, n_e, err);
	if (rv == WT_OK && indexed)
		rv = check_index(c, e, n_e, f, n_f, err);
	char **renamed = NULL;
	if (rv == WT_OK && ckpt_mistral_native(c))
		rv = rename_mistral(c, f, n_f, &renamed, err);
	if (rv == WT_OK)
		rv = build_table(c, f, n_f, err);
	free_names(renamed, n_f);
	free(f);
	for (size_t i = 0; files != NULL && i < c->n_objects; i++)
		st_file_free(&files[i]);
	free(files);
	free(e);
	json_decref(iroot);
	if (rv == WT_OK && !c->quick)
		rv = compute_revision(c, indexed, err);
	return rv;
}

int ckpt_open_with(ckpt **out, store *s, const ckpt_open_opts *o, wt_errbuf *err)
{
	*out = NULL;
	ckpt *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	c->s = s;
	c->memo = o->memo;
	if (o->memo != NULL)
		c->forget = *o->memo;
	c->prog = o->prog;
	c->quick = o->quick;
	int rv = ckpt_override_canonical(o->config_override, &c->override, err);
	if (rv == WT_OK)
		rv = load(c, err);
	c->memo = NULL;
	c->prog = NULL;
	if (rv != WT_OK) {
		wt_errprefix(err, "model '%s'", store_uri(s));
		ckpt_close(c);
		return rv;
	}
	*out = c;
	return WT_OK;
}

int ckpt_open(ckpt **out, store *s, wt_errbuf *err)
{
	return ckpt_open_with(out, s, &(ckpt_open_opts){0}, err);
}

int ckpt_open_memo(ckpt **out, store *s, const ckpt_memo *memo, wt_errbuf *err)
{
	return ckpt_open_with(out, s, &(ckpt_open_opts){.memo = memo}, err);
}

int ckpt_open_progress(ckpt **out, store *s, const ckpt_memo *memo, ckpt_progress *p,
                       wt_errbuf *err)
{
	return ckpt_open_with(out, s, &(ckpt_open_opts){.memo = memo, .prog = p}, err);
}

int ckpt_open_quick(ckpt **out, store *s, wt_errbuf *err)
{
	return ckpt_open_with(out, s, &(ckpt_open_opts){.quick = true}, err);
}

const char *ckpt_config_override(const ckpt *c)
{
	return c->override != NULL ? c->override : "";
}

const ckpt_config *ckpt_get_config(const ckpt *c)
{
	return &c->cfg;
}

const char *ckpt_config_json(const ckpt *c, size_t *len)
{
	if (len != NULL)
		*len = c->config_len;
	return c->config_json;
}

const char *ckpt_revision(const ckpt *c)
{
	return c->revision;
}

store *ckpt_store(const ckpt *c)
{
	return c->s;
}

size_t ckpt_n_tensors(const ckpt *c)
{
	return c->n_tensors;
}

const ckpt_tensor *ckpt_tensor_at(const ckpt *c, size_t i)
{
	return i < c->n_tensors ? &c->tensors[i] : NULL;
}

const ckpt_tensor *ckpt_find(const ckpt *c, const char *name)
{
	size_t lo = 0, hi = c->n_tensors;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(c->tensors[mid].name, name);
		if (cmp == 0)
			return &c->tensors[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t ckpt_tensor_index(const ckpt *c, const ckpt_tensor *t)
{
	WT_ASSERT(t >= c->tensors && t < c->tensors + c->n_tensors);
	return (size_t)(t - c->tensors);
}

uint64_t ckpt_total_bytes(const ckpt *c)
{
	return c->total_bytes;
}

int ckpt_read(const ckpt *c, const ckpt_tensor *t, uint64_t off, void *buf, size_t len,
              wt_errbuf *err)
{
	uint64_t end;
	if (!wt_add_u64(off, len, &end) || end > t->nbytes)
		return wt_seterr(err, WT_EINVAL,
		                 "tensor '%s': read of %zu bytes at %llu is beyond its %llu bytes",
		                 t->name, len, (unsigned long long)off,
		                 (unsigned long long)t->nbytes);
	store_pin *p = c->pins[t->object_index];
	int rv = store_pin_read(p, t->off + off, buf, len, err);
	/* bytes that are not the revision's under the same version: the memo's
	 * digest of that version is wrong now, and the next open must not reuse it */
	if (rv == WT_ECHANGED && c->forget.forget != NULL && store_pin_content_changed(p))
		c->forget.forget(c->forget.ctx, store_uri(c->s), store_pin_obj(p));
	return rv;
}

bool ckpt_content_changed(const ckpt *c)
{
	for (size_t i = 0; i < c->n_objects; i++)
		if (store_pin_content_changed(c->pins[i]))
			return true;
	return false;
}

int ckpt_check(const ckpt *c, wt_errbuf *err)
{
	for (size_t i = 0; i < c->n_objects; i++) {
		int rv = store_pin_check(c->pins[i], err);
		if (rv != WT_OK)
			return wt_errprefix(err, "model '%s'", store_uri(c->s));
	}
	return WT_OK;
}

bool ckpt_mistral_native(const ckpt *c)
{
	return c->key_config != NULL && strcmp(c->key_config, CKPT_MISTRAL_PARAMS) == 0;
}

int64_t ckpt_rope_heads(const ckpt *c, size_t i)
{
	return c->rope != NULL && i < c->n_tensors ? c->rope[i] : 0;
}
