/* ctl_common.h — helpers shared by the layout commands (plan, shard): argument
 * parsing with wt_layout_parse_arg, model opening, exit-code mapping. */
#ifndef WT_CTL_COMMON_H
#define WT_CTL_COMMON_H

#include <stdbool.h>

#include "loader/loader.h"
#include "shardmap/shardmap.h"
#include "weights/layout.h"

typedef struct ctl_layout_args {
	wt_layout layout;      /* owned; wt_layout_clear() via ctl_layout_args_clear */
	const char *model_dir; /* borrowed from argv */
	const char *out;       /* --out FILE, borrowed */
	bool rank_only;        /* --rank-only */
	bool help;
} ctl_layout_args;

/* Parse `--model-dir DIR <layout> [--out FILE] [--rank-only]`. Returns CTL_OK or
 * CTL_USAGE (message printed to stderr, prefixed with cmd). */
int ctl_parse_layout_args(const char *cmd, int argc, char **argv, ctl_layout_args *a);
void ctl_layout_args_clear(ctl_layout_args *a);

/* Open the store + checkpoint at dir. On failure prints the error and returns CTL_ERR. */
int ctl_open_model(const char *cmd, const char *dir, store **s, ckpt **c);

/* Plan; on failure prints the error and returns CTL_LAYOUT for plan-time errors,
 * CTL_USAGE for bad flag values, CTL_ERR otherwise. */
int ctl_plan(const char *cmd, const ckpt *c, const wt_layout *l, sm_plan **p);

/* Basename of a folder path or file:// URI, without trailing slashes, into buf. */
void ctl_model_name(const char *dir, char *buf, size_t cap);

/* "[a, b, c]" into buf. */
void ctl_shape_text(const int64_t *shape, int ndim, char *buf, size_t cap);

#endif
