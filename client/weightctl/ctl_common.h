/* ctl_common.h — helpers shared by the layout commands (plan, shard): argument
 * parsing with wt_layout_parse_arg, model opening, exit-code mapping. */
#ifndef WT_CTL_COMMON_H
#define WT_CTL_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "client/weightctl/ctl_opt.h"
#include "loader/loader.h"
#include "shardmap/shardmap.h"
#include "weights/layout.h"

typedef struct ctl_layout_args {
	wt_layout layout;      /* owned; wt_layout_clear() via ctl_layout_args_clear */
	const char *model_dir; /* borrowed from argv */
	const char *out;       /* --out FILE, borrowed */
	const char *name;      /* --name NAME (model name for metadata), borrowed; NULL if absent */
	const char
	    *config_override; /* --config-override JSON, or --architecture NAME's; NULL none */
	char *arch_override;  /* owned: the JSON --architecture NAME makes */
	bool by_arch;         /* config_override holds --architecture's NAME until parsed */
	bool rank_only;       /* --rank-only */
	bool tp_rank_set;     /* --tp-rank given */
	bool ep_rank_set;     /* --ep-rank given */
	bool help;
} ctl_layout_args;

/* Parse `--model-dir DIR <layout> [--out FILE] [--name NAME] [--rank-only]
 * [--config-override JSON | --architecture NAME]` and the
 * command's own flags (own; NULL = none) with getopt_long (ctl_opt.h).
 * Returns CTL_OK, CTL_USAGE (a flag that cannot be parsed or is missing) or
 * CTL_LAYOUT (flags that parse but make no valid layout: wt_layout_check), the
 * message printed to stderr, prefixed with cmd. */
int ctl_parse_layout_args(const char *cmd, int argc, char **argv, const ctl_flagset *own,
                          ctl_layout_args *a);
void ctl_layout_args_clear(ctl_layout_args *a);

/* Open the store + checkpoint at dir, config.json under override (NULL: none;
 * ckpt_open_opts.config_override). On failure prints the error and returns CTL_ERR. */
int ctl_open_model(const char *cmd, const char *dir, const char *override, store **s, ckpt **c);

/* Plan; on failure prints the error and returns ctl_plan_exit(code). */
int ctl_plan(const char *cmd, const ckpt *c, const wt_layout *l, sm_plan **p);

/* Exit code of a plan-time error: CTL_LAYOUT for the layout or checkpoint
 * refusals (WT_ELAYOUT, WT_ENOTFOUND, WT_EDUP, WT_ESHAPE, WT_EDTYPE,
 * WT_EUNSUPPORTED, WT_EINVAL = an invalid exclude regex), CTL_ERR otherwise.
 * With `remote` (a daemon's reply), WT_ENOTFOUND and WT_EINVAL are CTL_ERR:
 * there they also mean an unknown model or a malformed request. */
int ctl_plan_exit(int rv, bool remote);

/* A model name weightd accepts (1-200 bytes, no '/', not starting with '.',
 * no control characters). */
bool ctl_model_name_ok(const char *name);

/* Basename of a folder path or file:// URI, without trailing slashes, into buf. */
void ctl_model_name(const char *dir, char *buf, size_t cap);

/* "[a, b, c]" into buf. */
void ctl_shape_text(const int64_t *shape, int ndim, char *buf, size_t cap);

/* --out-dir DIR (shard, fetch): made if missing; an existing non-folder is an error
 * (printed, prefixed with cmd). CTL_OK or CTL_ERR. */
int ctl_make_out_dir(const char *cmd, const char *dir);

/* "DIR/tpR-epE.safetensors" for rank index r (tp fastest) of a layout of tp_size:
 * the file `--out-dir` writes for that rank (malloc'd; NULL: no memory). */
char *ctl_rank_path(const char *dir, uint32_t tp_size, uint32_t r);

/* Install h for SIGINT and SIGTERM (SA_RESTART); one ignored when weightctl
 * started (a shell's background job, nohup) stays ignored. */
void ctl_catch_stop_signals(void (*h)(int));

/* From now on SIGINT / SIGTERM remove the temporary files common_afile writes
 * outs[0..n) (NULL ones skipped) through ("OUT.tmp.PID": kept by a plain kill, as large as what was
 * written), say "weightctl CMD: interrupted by SIG..." and exit 128 + the
 * signal: no temporary file is left (an OUT is whole if its rename came first). False:
 * a path is too long or no memory (nothing installed; the write itself refuses such a
 * path). Called once. */
bool ctl_remove_tmps_on_stop(const char *cmd, const char *const *outs, size_t n);

#endif
