/*
 * config_fields.c — ckpt_config_fields: named config.json fields for readers
 * other than the planner (loader.h), through the same JSON rules and the same
 * language-model view (config_lm_view) as ckpt_config_parse.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* The JSON value of key ("name" or "parent.child") in lm; NULL when absent or null. */
static int lookup(json_t *lm, const char *key, json_t **out, wt_errbuf *err)
{
	*out = NULL;
	const char *dot = strchr(key, '.');
	json_t *o = lm;
	if (dot != NULL) {
		char parent[CKPT_FIELD_STR];
		size_t n = (size_t)(dot - key);
		if (n >= sizeof(parent))
			return wt_seterr(err, WT_EINVAL, "config field '%s': parent name too long",
			                 key);
		memcpy(parent, key, n);
		parent[n] = '\0';
		o = json_object_get(lm, parent);
		if (o == NULL || json_is_null(o))
			return WT_OK;
		if (!json_is_object(o))
			return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an object",
			                 parent);
		key = dot + 1;
	}
	json_t *v = json_object_get(o, key);
	*out = v == NULL || json_is_null(v) ? NULL : v;
	return WT_OK;
}

static int read_field(json_t *lm, ckpt_field *f, wt_errbuf *err)
{
	json_t *v;
	int rv = lookup(lm, f->key, &v, err);
	if (rv != WT_OK || v == NULL)
		return rv;
	switch (f->kind) {
	case CKPT_FIELD_INT:
		if (!json_is_integer(v))
			return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an integer",
			                 f->key);
		f->i = (int64_t)json_integer_value(v);
		break;
	case CKPT_FIELD_REAL:
		if (!json_is_number(v))
			return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a number",
			                 f->key);
		f->r = json_number_value(v);
		break;
	case CKPT_FIELD_BOOL:
		if (!json_is_boolean(v))
			return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a boolean",
			                 f->key);
		f->b = json_is_true(v);
		break;
	case CKPT_FIELD_STRING:
		if (!json_is_string(v))
			return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a string",
			                 f->key);
		if (json_string_length(v) >= sizeof(f->s))
			return wt_seterr(err, WT_ETOOBIG,
			                 "config.json: '%s' is longer than %zu bytes", f->key,
			                 sizeof(f->s) - 1);
		memcpy(f->s, json_string_value(v), json_string_length(v) + 1);
		break;
	default:
		return wt_seterr(err, WT_EINVAL, "config field '%s': unknown kind %d", f->key,
		                 (int)f->kind);
	}
	f->present = true;
	return WT_OK;
}

int ckpt_config_fields(const char *json, size_t len, ckpt_field *fields, size_t n, wt_errbuf *err)
{
	for (size_t i = 0; i < n; i++) {
		fields[i].present = false;
		fields[i].i = 0;
		fields[i].r = 0;
		fields[i].b = false;
		fields[i].s[0] = '\0';
	}
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je), *lm = NULL;
	if (root == NULL)
		return wt_seterr(
		    err, json_error_code(&je) == json_error_duplicate_key ? WT_EDUP : WT_ECORRUPT,
		    "config.json: not valid JSON: %s at line %d column %d", je.text, je.line,
		    je.column);
	json_t *flat = NULL; /* Tarsier2: text_config's view (config_tarsier2.c) */
	int rv = !json_is_object(root)
	             ? wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object")
	         : config_is_tarsier2(root) ? config_tarsier2_root(root, &flat, err)
	                                    : WT_OK;
	if (rv == WT_OK)
		rv = config_lm_view(flat != NULL ? flat : root, &lm, err);
	json_decref(flat);
	for (size_t i = 0; rv == WT_OK && i < n; i++)
		rv = read_field(lm, &fields[i], err);
	json_decref(lm);
	json_decref(root);
	return rv;
}
