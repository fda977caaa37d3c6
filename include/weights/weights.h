/*
 * weights.h — umbrella header of the weightd client library (libweights).
 *
 * Everything a user may call is declared under include/weights/ with the
 * prefix wt_ and exported with WT_API; everything else is internal.
 */
#ifndef WEIGHTS_WEIGHTS_H
#define WEIGHTS_WEIGHTS_H

#define WT_VERSION_MAJOR  1
#define WT_VERSION_MINOR  10
#define WT_VERSION_PATCH  0
#define WT_VERSION_STRING "1.10.0"

/* Format version of the shard format (docs/format.md; policy in section 7). */
#define WT_FORMAT_VERSION 1

#include "weights/api.h"
#include "weights/error.h"
#include "weights/dtype.h"
#include "weights/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version of the libweights the program runs with (the WT_VERSION_* macros
 * are the version it was compiled against). Returns the static string
 * "MAJOR.MINOR.PATCH"; stores the numbers where the pointers are non-NULL.
 * ABI rules (docs/client.md): libweights.so.1 stays compatible across 1.x; a
 * struct with a struct_size member only grows at its end.
 */
WT_API const char *wt_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif
