/* rendezvous.c — which endpoint owns a shard: highest random weight hashing. */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "client/client_int.h"
#include "weights/layout.h"

void client_route_key(const char *model, const wt_layout *layout, uint8_t key[16])
{
	char text[4096];
	size_t n = wt_layout_format(layout, text, sizeof(text));
	if (n >= sizeof(text))
		n = sizeof(text) - 1; /* a truncated key still routes deterministically */
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	XXH3_128bits_update(&st, model, strlen(model) + 1);
	XXH3_128bits_update(&st, text, n + 1);
	uint32_t ranks[2] = {layout->tp_rank, layout->ep_rank};
	XXH3_128bits_update(&st, ranks, sizeof(ranks));
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
	memcpy(key, c.digest, 16);
}

void client_rendezvous_order(const uint8_t key[16], const char *const *urls, size_t n,
                             size_t *order)
{
	uint64_t w[CLIENT_MAX_ENDPOINTS];
	for (size_t i = 0; i < n && i < CLIENT_MAX_ENDPOINTS; i++) {
		XXH3_state_t st;
		XXH3_64bits_reset(&st);
		XXH3_64bits_update(&st, key, 16);
		XXH3_64bits_update(&st, urls[i], strlen(urls[i]));
		w[i] = XXH3_64bits_digest(&st);
		order[i] = i;
	}
	/* insertion sort, descending weight, stable (n is small) */
	for (size_t i = 1; i < n && i < CLIENT_MAX_ENDPOINTS; i++) {
		size_t v = order[i], j = i;
		while (j > 0 && w[order[j - 1]] < w[v]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
}
