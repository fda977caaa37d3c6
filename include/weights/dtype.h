/*
 * dtype.h — tensor element types. Codes are FROZEN (protobuf, cache keys).
 * Names are the safetensors spellings.
 */
#ifndef WEIGHTS_DTYPE_H
#define WEIGHTS_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include "weights/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WT_MAX_DIMS 8

typedef enum {
	WT_DTYPE_INVALID = 0,
	WT_F64 = 1,
	WT_F32 = 2,
	WT_F16 = 3,
	WT_BF16 = 4,
	WT_F8_E4M3 = 5,
	WT_F8_E5M2 = 6,
	WT_I64 = 7,
	WT_I32 = 8,
	WT_I16 = 9,
	WT_I8 = 10,
	WT_U8 = 11,
	WT_BOOL = 12,
	WT_DTYPE_COUNT_ /* keep last */
} wt_dtype;

/* Bytes per element; 0 for WT_DTYPE_INVALID or an unknown code. */
WT_API size_t wt_dtype_size(wt_dtype dt);

/* "BF16", "F8_E4M3", ...; "INVALID" for an unknown code. */
WT_API const char *wt_dtype_name(wt_dtype dt);

/* Parse a safetensors dtype name; WT_DTYPE_INVALID if unknown. */
WT_API wt_dtype wt_dtype_from_name(const char *name);

/* 1 for F64 F32 F16 BF16 F8_E4M3 F8_E5M2, else 0. */
WT_API int wt_dtype_is_float(wt_dtype dt);

#ifdef __cplusplus
}
#endif

#endif
