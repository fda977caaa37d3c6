/*
 * api.h — export macro. The build uses -fvisibility=hidden; only WT_API symbols
 * are exported (the list is include/weights/libweights.abi, checked by
 * scripts/check-abi.sh). Macros only: the headers that declare functions wrap
 * them in extern "C" for C++ callers.
 */
#ifndef WEIGHTS_API_H
#define WEIGHTS_API_H

#if defined(__GNUC__)
#define WT_API          __attribute__((visibility("default")))
#define WT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WT_API
#define WT_PRINTF(a, b)
#endif

#endif
