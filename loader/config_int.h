/*
 * config_int.h — private to loader/: the language-model view of config.json
 * shared by ckpt_config_parse (config.c) and ckpt_config_fields
 * (config_fields.c), so the `text_config` overlay has one implementation.
 */
#ifndef WT_LOADER_CONFIG_INT_H
#define WT_LOADER_CONFIG_INT_H

#include <jansson.h>

#include "weights/error.h"

/* *out = root itself, or (root has a `text_config` object) a shallow copy of
 * root with text_config's fields laid over it. A new reference either way. */
int config_lm_view(json_t *root, json_t **out, wt_errbuf *err);

#endif
