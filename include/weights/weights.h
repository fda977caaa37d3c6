/*
 * weights.h — umbrella header of the weightd client library (libweights).
 *
 * Everything a user may call is declared under include/weights/ with the
 * prefix wt_ and exported with WT_API; everything else is internal.
 */
#ifndef WEIGHTS_WEIGHTS_H
#define WEIGHTS_WEIGHTS_H

#define WT_VERSION_MAJOR  0
#define WT_VERSION_MINOR  1
#define WT_VERSION_PATCH  0
#define WT_VERSION_STRING "0.1.0"

/* Format version of the shard format (docs/format.md; policy in section 7). */
#define WT_FORMAT_VERSION 1

#include "weights/api.h"
#include "weights/error.h"
#include "weights/dtype.h"
#include "weights/layout.h"

#endif
