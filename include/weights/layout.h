/*
 * layout.h — a shard layout (docs/format.md section 1): how a checkpoint is cut
 * and converted for one deployment, plus the rank within it.
 *
 * The canonical string (wt_layout_format) is part of the cache key and of the
 * safetensors metadata `weightd.layout`; it is FROZEN per format version.
 */
#ifndef WEIGHTS_LAYOUT_H
#define WEIGHTS_LAYOUT_H

#include <stdint.h>
#include "weights/api.h"
#include "weights/dtype.h"
#include "weights/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Quantization schemes. Codes FROZEN. */
typedef enum {
	WT_QUANT_NONE = 0,
	WT_QUANT_FP8_TENSOR = 1,
	WT_QUANT_FP8_CHANNEL = 2,
	WT_QUANT_FP8_BLOCK = 3,
	WT_QUANT_INT8_CHANNEL = 4,
	WT_QUANT_INT4_GROUP = 5,
	WT_QUANT_COUNT_ /* keep last */
} wt_quant;

/* "none", "fp8-tensor", ...; NULL for an unknown code. */
WT_API const char *wt_quant_name(wt_quant q);
/* Parse a scheme name; returns WT_OK or WT_EINVAL (err lists the valid names). */
WT_API int wt_quant_from_name(const char *name, wt_quant *out, wt_errbuf *err);

/*
 * Limits on a layout (README "Request limits"): any layout beyond them is refused
 * by wt_layout_check with a message that names the value and the limit.
 */
#define WT_MAX_EXCLUDE             64   /* patterns per layout */
#define WT_EXCLUDE_MAX_BYTES       256  /* bytes per pattern */
#define WT_EXCLUDE_MAX_POSITIONS   1000 /* regex positions per pattern, repetitions expanded */
#define WT_EXCLUDE_MAX_DEPTH       32   /* nested groups per pattern (the ^(...)$ wrapper is one) */
#define WT_EXCLUDE_TOTAL_POSITIONS 4096 /* regex positions of all a layout's patterns */
#define WT_MAX_TP_SIZE             1024
#define WT_MAX_EP_SIZE             1024
#define WT_MAX_RANKS               4096  /* tp_size * ep_size */
#define WT_MAX_GROUP_SIZE          1024  /* int4-group; engines use 32..256 */
#define WT_MAX_VOCAB_PAD           4096  /* engines pad to a multiple of 64..1024 */
#define WT_MAX_VOCAB_MULTIPLE      65536 /* lcm(vocab_pad, tp_size): padded rows per step */
#define WT_MAX_INCLUDE             1024  /* raw layout: names per layout */
#define WT_INCLUDE_MAX_BYTES       512   /* raw layout: bytes per name */

typedef struct wt_layout {
	uint32_t tp_size;              /* >= 1 */
	uint32_t tp_rank;              /* < tp_size */
	uint32_t ep_size;              /* >= 1 */
	uint32_t ep_rank;              /* < ep_size */
	wt_quant quant;                /* default WT_QUANT_NONE */
	wt_dtype dtype;                /* unquantized outputs; WT_DTYPE_INVALID = "source" */
	uint32_t group_size;           /* int4-group; default 128 */
	uint32_t vocab_pad;            /* default 64; 1 = no padding beyond divisibility */
	int w13_up_gate;               /* 0 = gate_up (default), 1 = up_gate (rtp-llm) */
	int requant_allow;             /* 1 = --requant allow */
	uint32_t n_exclude;            /* patterns below, as given (the planner merges and sorts) */
	char *exclude[WT_MAX_EXCLUDE]; /* owned; freed by wt_layout_clear() */
	/* Since 0.5 (README "Raw serving"): the checkpoint's own tensors, unmodified (names,
	 * dtypes, shapes, bytes), in one rank. A raw layout keeps every other member at its
	 * default (tp/ep 1, quant none, dtype source, no exclude). */
	int raw;            /* 0 = partitioned (default), 1 = raw */
	uint32_t n_include; /* raw: checkpoint names to serve; 0 = every tensor */
	char **include;     /* owned; freed by wt_layout_clear() */
} wt_layout;

/* Fill with the defaults of docs/format.md section 1 (tp 1/0, ep 1/0, quant none, dtype source,
 * group 128, vocab_pad 64, gate_up, requant off, no exclusions). */
WT_API void wt_layout_init(wt_layout *l);

/* Free the exclude strings and re-initialise. NULL is a no-op. */
WT_API void wt_layout_clear(wt_layout *l);

/* Deep copy; dst must be initialised or cleared. */
WT_API int wt_layout_copy(wt_layout *dst, const wt_layout *src);

/* Add one exclude pattern (copied). WT_ETOOBIG past WT_MAX_EXCLUDE; WT_EINVAL for an
 * empty pattern or one containing ';' (the canonical text's separator). */
WT_API int wt_layout_add_exclude(wt_layout *l, const char *pat, wt_errbuf *err);

/* Add one checkpoint tensor name to a raw layout's subset (copied; raw is not set).
 * WT_ETOOBIG past WT_MAX_INCLUDE; WT_EINVAL for an empty name, one over
 * WT_INCLUDE_MAX_BYTES or one containing ';' or ']' (the canonical text's separators). */
WT_API int wt_layout_add_include(wt_layout *l, const char *name, wt_errbuf *err);

/* Range checks that need no model: 1 <= sizes <= WT_MAX_TP_SIZE / WT_MAX_EP_SIZE,
 * ranks < sizes, tp_size * ep_size <= WT_MAX_RANKS, group_size a multiple of 8 in
 * [8, WT_MAX_GROUP_SIZE], 1 <= vocab_pad <= WT_MAX_VOCAB_PAD and
 * lcm(vocab_pad, tp_size) <= WT_MAX_VOCAB_MULTIPLE, dtype a float type or source,
 * w13/requant flags 0 or 1, and each exclude pattern within the WT_EXCLUDE_* limits
 * and without ';'. */
WT_API int wt_layout_check(const wt_layout *l, wt_errbuf *err);

/*
 * Canonical text WITHOUT the rank, e.g.
 *   "tp=4,ep=1,quant=fp8-block,dtype=source,group=128,vocab_pad=64,w13=gate_up,requant=deny,exclude=[a;b]"
 * Exclusions appear sorted and de-duplicated. A raw layout is "raw", or
 * "raw,include=[a;b]" (names sorted and de-duplicated). Writes at most cap bytes including NUL;
 * returns the length it needed (like snprintf). A layout over WT_MAX_EXCLUDE or
 * WT_MAX_INCLUDE names has no canonical text: SIZE_MAX and an empty buf.
 */
WT_API size_t wt_layout_format(const wt_layout *l, char *buf, size_t cap);

/* Rank index within the layout: ep_rank * tp_size + tp_rank. */
WT_API uint32_t wt_layout_rank_index(const wt_layout *l);
/* Number of ranks: tp_size * ep_size. */
WT_API uint32_t wt_layout_n_ranks(const wt_layout *l);

/*
 * Parse one layout flag of the CLI contract (`--tp-size T --tp-rank r --ep-size P
 * --ep-rank e --quant Q --dtype D --exclude PAT --w13-order O --vocab-pad N
 * --group-size G --requant allow|deny`, and `--include NAME` for a raw layout). argv[*i] is the
 * flag; its value is argv[*i + 1] (or after '=' in `--flag=value`). On a match advances *i past the
 * value and returns 1; returns 0 if argv[*i] is not a layout flag; returns -1 with
 * err set on a bad value.
 */
WT_API int wt_layout_parse_arg(wt_layout *l, int argc, char **argv, int *i, wt_errbuf *err);

#ifdef __cplusplus
}
#endif

#endif
