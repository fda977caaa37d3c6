/*
 * config_override.c — a model's configuration override (vLLM's hf_overrides): a JSON
 * object merged over the checkpoint's config.json (or the config.json made from Mistral's
 * params.json) before anything reads it. An object value merges into the object of the
 * same key, recursively (a sub-config such as text_config keeps the keys the override does
 * not name); any other value replaces the key's. The override's canonical text (keys
 * sorted, compact) is part of the checkpoint's revision (checkpoint.c), so two overrides
 * of one folder never share a revision, and a layout produced under one is never served
 * under another.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/ckpt_int.h"

#define EXAMPLE "e.g. '{\"architectures\": [\"DeepSeekMTPModel\"]}'"

int ckpt_override_canonical(const char *text, char **out, wt_errbuf *err)
{
	*out = NULL;
	size_t len = text != NULL ? strlen(text) : 0;
	if (len == 0)
		return WT_OK;
	if (len > CKPT_MAX_OVERRIDE_BYTES)
		return wt_seterr(err, WT_ETOOBIG,
		                 "config override: %zu bytes, more than the %u allowed; override "
		                 "only the keys that must change",
		                 len, CKPT_MAX_OVERRIDE_BYTES);
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (o == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "config override: not valid JSON (%s at column %d); give one JSON "
		                 "object, " EXAMPLE,
		                 je.text, je.column);
	int rv = WT_OK;
	if (!json_is_object(o))
		rv = wt_seterr(err, WT_EINVAL,
		               "config override: a JSON object is needed, not %s; " EXAMPLE,
		               json_is_array(o) ? "an array" : "a single value");
	else if (json_object_size(o) == 0)
		rv = wt_seterr(err, WT_EINVAL,
		               "config override: the object is empty; leave the override out, or "
		               "name the keys to change, " EXAMPLE);
	if (rv == WT_OK) {
		*out = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
		if (*out == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "out of memory for the config override");
	}
	/* the canonical text is what registry lines and revisions hold: \uXXXX escapes make
	 * it up to 3x the text's bytes */
	if (rv == WT_OK && strlen(*out) > CKPT_MAX_OVERRIDE_BYTES) {
		rv = wt_seterr(
		    err, WT_ETOOBIG,
		    "config override: %zu bytes in canonical form (non-ASCII characters "
		    "written as \\u escapes), more than the %u allowed; override only the "
		    "keys that must change",
		    strlen(*out), CKPT_MAX_OVERRIDE_BYTES);
		free(*out);
		*out = NULL;
	}
	json_decref(o);
	return rv;
}

int ckpt_override_apply(char **json, size_t *len, const char *canon, wt_errbuf *err)
{
	json_error_t je;
	json_t *cfg = json_loadb(*json, *len, JSON_REJECT_DUPLICATES, &je);
	if (cfg == NULL || !json_is_object(cfg)) {
		json_decref(cfg);
		/* the override needs an object to merge into: the parser names the fault */
		ckpt_config c = {0};
		int rv = ckpt_config_parse(*json, *len, &c, err);
		ckpt_config_clear(&c);
		return rv != WT_OK ? rv
		                   : wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object");
	}
	json_t *o = json_loads(canon, 0, &je);
	int rv = WT_OK;
	if (o == NULL || json_object_update_recursive(cfg, o) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "out of memory merging the config override");
	char *merged = rv == WT_OK ? json_dumps(cfg, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	if (rv == WT_OK && merged == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "out of memory for the overridden config.json");
	json_decref(o);
	json_decref(cfg);
	if (rv != WT_OK)
		return rv;
	free(*json);
	*json = merged;
	*len = strlen(merged);
	return WT_OK;
}

int ckpt_override_for_arch(const char *arch, char **out, wt_errbuf *err)
{
	*out = NULL;
	if (arch == NULL || arch[0] == '\0')
		return wt_seterr(err, WT_EINVAL,
		                 "architecture override: empty; give a class name such as "
		                 "DeepSeekMTPModel");
	for (const char *p = arch; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return wt_seterr(
			    err, WT_EINVAL,
			    "architecture override: control character in the name; give "
			    "a class name such as DeepSeekMTPModel");
	json_t *o = json_pack("{s:[s]}", "architectures", arch);
	*out = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
	json_decref(o);
	if (*out == NULL) /* json_pack also refuses a name that is not UTF-8 */
		return wt_seterr(err, WT_EINVAL,
		                 "architecture override: '%s' is not a UTF-8 class name", arch);
	return WT_OK;
}
