/*
 * oom.h — for tests that replace malloc (forwarding to glibc's __libc_*) to
 * fail chosen allocations: AddressSanitizer owns malloc, so under it OOM_SKIP
 * is defined and such a test skips itself (exit 77); otherwise glibc's own
 * allocators are declared here.
 */
#ifndef WT_TEST_OOM_H
#define WT_TEST_OOM_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define OOM_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_SKIP 1
#endif
#endif

#ifndef OOM_SKIP
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t sz);
extern void *__libc_realloc(void *p, size_t n);
#endif

#endif
