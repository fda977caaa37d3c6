/*
 * error.h — the one error enum of weightd, plus an error buffer that carries a
 * message naming the object and the fix.
 *
 * The numeric values are FROZEN: they travel in protobuf Error replies and
 * process exit paths. Append only; a retired value is commented out, never reused.
 */
#ifndef WEIGHTS_ERROR_H
#define WEIGHTS_ERROR_H

#include <stddef.h>
#include "weights/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	WT_OK = 0,
	WT_ENOMEM = 1,       /* allocation failed */
	WT_EINVAL = 2,       /* bad argument, flag or config value */
	WT_ENOTFOUND = 3,    /* object, tensor, model or key does not exist */
	WT_ECORRUPT = 4,     /* malformed file or structure (safetensors, index, cache record) */
	WT_EHASH = 5,        /* bytes do not match their XXH3-128 */
	WT_ETOOBIG = 6,      /* over a configured or format ceiling */
	WT_EUNSUPPORTED = 7, /* valid but not supported (architecture, scheme, URI scheme) */
	WT_EIO = 8,          /* read/write/system call failed */
	WT_EOVERFLOW = 9,    /* size/offset arithmetic would overflow */
	WT_EDUP = 10,        /* duplicate name or key */
	WT_EDTYPE = 11,      /* unknown or unacceptable dtype */
	WT_ESHAPE = 12,      /* shape disagrees with config.json or the plan */
	WT_ELAYOUT = 13,     /* layout invalid for this model (plan-time error) */
	WT_ENONFINITE = 14,  /* NaN or Inf in a tensor to be quantized */
	WT_EPROTO = 15,      /* garbled, unknown or out-of-order protocol message */
	WT_ETIMEDOUT = 16,   /* deadline passed */
	WT_ECLOSED = 17,     /* handle or connection closed */
	WT_EBUSY = 18,       /* resource pinned or in use */
	WT_EEXIST = 19,      /* already exists */
	WT_EPERM = 20,       /* refused: path outside the root, bad token */
	WT_ECONFIG = 21,     /* bad configuration file or key */
	WT_ENOSPC = 22,      /* cache byte budget cannot hold it */
	WT_EVERSION = 23,    /* protocol or format version mismatch */
	WT_ECANCELED = 24,   /* operation canceled (shutdown, caller) */
	WT_EUNAVAIL = 25,    /* no server reachable */
	WT_EDEVICE = 26,     /* CUDA/NCCL device error or no device */
	WT_ECHANGED = 27,    /* a source object changed while it was being read */
	WT_ERR_COUNT_        /* not an error; keep last */
} wt_err;

/* Static string for an error code ("corrupt data"). Never NULL. */
WT_API const char *wt_strerror(int err);

/* Short stable identifier for an error code ("WT_ECORRUPT"). Never NULL. */
WT_API const char *wt_errname(int err);

#define WT_ERRMSG_MAX 512

/*
 * An error buffer: the code plus a human message that names the object and
 * what to change, e.g.
 *   "tensor 'model.layers.3.mlp.up_proj.weight': data_offsets end 81920 > file size 81800"
 * Functions that take a `wt_errbuf *err` fill it on failure only; err may be NULL.
 */
typedef struct wt_errbuf {
	int code;
	char msg[WT_ERRMSG_MAX];
} wt_errbuf;

/* Set err (if non-NULL) and return code, so callers can write `return wt_seterr(...)`. */
WT_API int wt_seterr(wt_errbuf *err, int code, const char *fmt, ...) WT_PRINTF(3, 4);

/* Prefix the existing message with context: "loading 'x': <old message>". Returns err->code. */
WT_API int wt_errprefix(wt_errbuf *err, const char *fmt, ...) WT_PRINTF(2, 3);

/* Clear to WT_OK and an empty message. */
WT_API void wt_errclear(wt_errbuf *err);

#ifdef __cplusplus
}
#endif

#endif
