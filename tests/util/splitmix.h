/* splitmix64: the one deterministic PRNG of the tests and fixtures (header
 * only, so wt-mkckpt, which does not link tests/util, uses it too). */
#ifndef WT_TESTS_SPLITMIX_H
#define WT_TESTS_SPLITMIX_H

#include <stdint.h>

/* Advance *s and return the next value. */
static inline uint64_t tu_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
