/* api.h — export macro. The build uses -fvisibility=hidden; only WT_API symbols are exported. */
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
