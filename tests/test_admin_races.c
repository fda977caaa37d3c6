/*
 * test_admin_races.c — admin ops on a live daemon against what it serves:
 * EVICT of one model leaves the LRU order (and the hit counter) of the
 * others alone; a chunk read that misses while the same bytes are written
 * again is not taken for damage (no false corruption, no good shard evicted),
 * for a fetch and for VERIFY.
 *
 * Interleavings are forced with hooks, not clocks: the cache's test hook
 * (cache_int.h) runs the competing writer at the exact point of the race.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "common/common.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"

#define SEED 4242u

/* ---- EVICT of one model and the LRU order of the others ---- */

#define MAX_SHARDS 16

typedef struct lru_snap {
	uint8_t id[MAX_SHARDS][WD_SHARD_ID_BYTES];
	uint64_t last_use[MAX_SHARDS];
	size_t n;
} lru_snap;

static void snap_cb(void *ctx, const cache_shard_info *info)
{
	lru_snap *l = ctx;
	assert_int_equal(info->id_len, WD_SHARD_ID_BYTES);
	assert_true(l->n < MAX_SHARDS);
	memcpy(l->id[l->n], info->id, WD_SHARD_ID_BYTES);
	l->last_use[l->n++] = info->last_use;
}

static uint64_t last_use_of(const lru_snap *l, const uint8_t *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (memcmp(l->id[i], id, WD_SHARD_ID_BYTES) == 0)
			return l->last_use[i];
	fail_msg("shard not listed");
	return 0;
}

/* EVICT of model "other" reads the manifest of every cached shard to find
 * other's: that must not count as a use of llama's shards. It did (the
 * scan opened each shard like a fetch): every shard's LRU clock was bumped
 * in hash-table order, so the next budget eviction could pick the shard used
 * last instead of the one used least, and the hit counter grew by one per
 * cached shard. */
static void test_evict_leaves_lru(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("admin-lru", SEED);
	char *other = tu_path(e->models, "other");
	assert_int_equal(tw_write_llama8(other, SEED + 1), 0);
	free(other);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	/* llama TP=2 (2 shards), then other TP=1 (1 shard), then llama rank 1 again:
	 * llama rank 1 is the most recent use, llama rank 0 the least recent */
	tw_reply m = tw_manifest(s, "llama", 2, 0);
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	uint8_t id0[WD_SHARD_ID_BYTES];
	memcpy(id0, m.r->manifest->shard_id.data, WD_SHARD_ID_BYTES);
	tw_reply_free(&m);
	m = tw_manifest(s, "other", 1, 0);
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&m);
	m = tw_manifest(s, "llama", 2, 1);
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	uint8_t id1[WD_SHARD_ID_BYTES];
	memcpy(id1, m.r->manifest->shard_id.data, WD_SHARD_ID_BYTES);
	tw_reply_free(&m);

	lru_snap before = {0}, after = {0};
	cache_stats st0, st1;
	assert_int_equal(cache_list(e->srv->cache, snap_cb, &before), 3);
	cache_stats_get(e->srv->cache, &st0);
	assert_true(last_use_of(&before, id0) < last_use_of(&before, id1));

	tw_reply ev = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, "other", 0);
	assert_int_equal(ev.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_int_equal(ev.r->admin->shards, 1);
	assert_int_equal(ev.r->admin->bad, 0); /* none busy */
	tw_reply_free(&ev);

	assert_int_equal(cache_list(e->srv->cache, snap_cb, &after), 2);
	cache_stats_get(e->srv->cache, &st1);
	printf("llama rank 0 last use %llu -> %llu, rank 1 %llu -> %llu; hits %llu -> %llu\n",
	       (unsigned long long)last_use_of(&before, id0),
	       (unsigned long long)last_use_of(&after, id0),
	       (unsigned long long)last_use_of(&before, id1),
	       (unsigned long long)last_use_of(&after, id1), (unsigned long long)st0.hits,
	       (unsigned long long)st1.hits);
	assert_int_equal(last_use_of(&after, id0), last_use_of(&before, id0));
	assert_int_equal(last_use_of(&after, id1), last_use_of(&before, id1));
	assert_int_equal(st1.hits, st0.hits);
	nng_close(s);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_evict_leaves_lru),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
