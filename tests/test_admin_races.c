/*
 * test_admin_races.c — admin ops on a live daemon against what it serves:
 * EVICT of one model leaves the LRU order (and the hit counter) of the
 * others alone; a chunk read that misses while the same bytes are written
 * again is not taken for damage (no false corruption, no good shard evicted),
 * for a fetch and for VERIFY; two EVICTs at once do not take each other's
 * manifest reads for readers ("busy").
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
#include "test_cache_util.h"
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

/* ---- a chunk read that misses while the same bytes are written again ---- */

/* What the cache's race hook does, once each, at the point named. */
typedef struct race {
	cache *c;
	wt_hash128 x; /* the chunk raced on */
	int evict_at; /* evict shard "a" (drops x) here */
	int reput_at; /* commit shard "b" (puts x again) here */
	int evicted, reput;
} race;

static void race_hook(void *ctx, int where, wt_hash128 h)
{
	race *r = ctx;
	wt_errbuf err;
	if (!common_hash128_eq(h, r->x))
		return;
	if (where == r->evict_at && !r->evicted) {
		r->evicted = 1;
		assert_int_equal(cache_evict(r->c, "a", 1, &err), WT_OK);
	}
	if (where == r->reput_at && !r->reput) {
		r->reput = 1;
		int rv = tc_put_shard(r->c, "b", 1, 7, &err); /* the same bytes as "a" */
		if (rv != WT_OK)
			fail_msg("put b: %s", err.msg);
	}
}

/* Shard "a" of one chunk x (seed 7), the hook armed; x's hash in r->x. */
static void race_setup(fx *f, race *r, int evict_at, int reput_at)
{
	wt_errbuf err;
	tc_reopen(f);
	assert_int_equal(tc_put_shard(f->c, "a", 1, 7, &err), WT_OK);
	uint8_t buf[TC_CHUNK];
	tu_fill(buf, tc_chunk_len(0), 7);
	*r = (race){.c = f->c,
	            .x = common_hash128(buf, tc_chunk_len(0)),
	            .evict_at = evict_at,
	            .reput_at = reput_at};
	f->c->race_ctx = r;
	f->c->race_hook = race_hook;
}

/* The good shard "b" (just committed, listing x) is still served. */
static void assert_b_kept(fx *f)
{
	cache_stats st;
	cache_stats_get(f->c, &st);
	printf("shard b cached: %d, corruptions %llu\n", cache_has_shard(f->c, "b", 1),
	       (unsigned long long)st.corruptions);
	assert_true(cache_has_shard(f->c, "b", 1));
	assert_int_equal(st.corruptions, 0);
	uint8_t buf[TC_CHUNK];
	size_t got = 0;
	wt_errbuf err;
	f->c->race_hook = NULL;
	assert_int_equal(cache_evict(f->c, "b", 1, &err), WT_OK);
	cache_stats_get(f->c, &st);
	assert_int_equal(st.bytes, 0); /* nothing left counted */
	assert_int_equal(st.chunks, 0);
	assert_int_equal(
	    cache_read_chunk(f->c, common_hash128("", 0), buf, sizeof(buf), &got, &err),
	    WT_ENOTFOUND);
}

/* A fetch reads chunk x by hash just after EVICT dropped it (its read finds
 * no value), and a production (WARM) puts the same bytes again before the
 * reader looks at the index: the index then says "written and listed", and the
 * miss was taken for lost bytes: WT_ECORRUPT, the new shard evicted, a
 * corruption counted. The miss is now confirmed under the cache lock. */
static void test_read_miss_rewritten(void **state)
{
	fx *f = *state;
	race r;
	race_setup(f, &r, 0, CACHE_RACE_GET_MISS);
	wt_errbuf err;
	assert_int_equal(cache_evict(f->c, "a", 1, &err), WT_OK); /* x dropped */
	uint8_t buf[TC_CHUNK];
	size_t got = 0;
	int rv = cache_read_chunk(f->c, r.x, buf, sizeof(buf), &got, &err);
	printf("read of x: %s%s%s\n", wt_errname(rv), rv ? ": " : "", rv ? err.msg : "");
	assert_true(r.reput);
	assert_int_equal(rv, WT_OK); /* the bytes are there again */
	assert_int_equal(got, tc_chunk_len(0));
	assert_b_kept(f);
}

/* VERIFY meets x evicted (before its read) and put again by a production at
 * put_at: no chunk is bad, and the new shard stays. */
static void verify_race(fx *f, int put_at)
{
	race r;
	race_setup(f, &r, CACHE_RACE_VERIFY_READ, put_at);
	uint64_t bad = 99;
	wt_errbuf err;
	assert_int_equal(cache_verify_all(f->c, NULL, NULL, &bad, &err), WT_OK);
	printf("verify: %llu bad\n", (unsigned long long)bad);
	assert_true(r.evicted && r.reput);
	assert_int_equal(bad, 0);
	assert_b_kept(f);
}

/* ... before verify's read looks at the index (the read's own race). */
static void test_verify_miss_rewritten(void **state)
{
	verify_race(*state, CACHE_RACE_GET_MISS);
}

/* VERIFY's read of x answers WT_ENOTFOUND (evicted), and a production puts x
 * again before verify decided what the miss means: it looked at the index
 * once more, found x written and listed, and reported it missing (evicting
 * the new shard). */
static void test_verify_notfound_rewritten(void **state)
{
	verify_race(*state, CACHE_RACE_VERIFY_MISS);
}

/* ---- two EVICTs at once ---- */

/* An admin request answered in this thread, as a worker would. Owned: free
 * with wire_reply_free. */
static Weights__Reply *admin_here(wd_server *srv, Weights__AdminRequest__Op op, const char *model)
{
	Weights__AdminRequest ar = WEIGHTS__ADMIN_REQUEST__INIT;
	ar.op = op;
	ar.model = (char *)model;
	nng_msg *m = wd_admin_reply(srv, 11, &ar);
	assert_non_null(m);
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	wt_errbuf err;
	assert_int_equal(wire_parse_reply(nng_msg_body(m), nng_msg_len(m), nng_msg_len(m), &r,
	                                  &tail, &tail_len, &err),
	                 WT_OK);
	assert_int_equal(tail_len, 0);
	nng_msg_free(m);
	if (r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		fail_msg("admin op %d: %s", (int)op, r->error->message);
	assert_int_equal(r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	return r;
}

/* The second EVICT, run once from inside the first one's scan. */
typedef struct evict_race {
	wd_server *srv;
	int ran;
	uint64_t evicted, busy; /* its reply */
} evict_race;

static void evict_hook(void *ctx, int where, wt_hash128 h)
{
	evict_race *r = ctx;
	(void)h;
	if (where != CACHE_RACE_SCAN_OPEN || r->ran)
		return;
	r->ran = 1;
	Weights__Reply *rp = admin_here(r->srv, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, "llama");
	printf("inner evict: %s\n", rp->admin->text);
	r->evicted = rp->admin->shards;
	r->busy = rp->admin->bad;
	wire_reply_free(rp);
}

/* EVICT reads each cached shard's manifest (to find the model's) with the
 * shard open; a second EVICT of the same model that came to that shard
 * meanwhile found it pinned and reported it busy (AdminReply.bad 1, which
 * weightctl now exits 4 for) although no one was reading it. A scan's pin is
 * no reader now: the second EVICT drops the shard, the first one finds it
 * gone, neither reports a busy shard. */
static void test_evict_during_evict_scan(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("admin-evict2", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply w = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_WARM, "llama", 1);
	assert_int_equal(w.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	tw_reply_free(&w);
	nng_close(s);
	cache_stats st;
	cache_stats_get(e->srv->cache, &st);
	assert_int_equal(st.shards, 1);

	evict_race r = {.srv = e->srv};
	e->srv->cache->race_ctx = &r;
	e->srv->cache->race_hook = evict_hook;
	Weights__Reply *rp = admin_here(e->srv, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, "llama");
	e->srv->cache->race_hook = NULL;
	printf("outer evict: %s\n", rp->admin->text);
	assert_true(r.ran);
	assert_int_equal(r.busy, 0); /* the outer scan's pin is no reader */
	assert_int_equal(r.evicted, 1);
	assert_int_equal(rp->admin->bad, 0);
	assert_int_equal(rp->admin->shards, 0); /* the inner one dropped it */
	wire_reply_free(rp);
	cache_stats_get(e->srv->cache, &st);
	assert_int_equal(st.shards, 0);
	assert_int_equal(st.pinned, 0);
	assert_int_equal(st.bytes, 0); /* the chunks went with the last unpin */
	tw_env_free(e);
}

static int setup(void **state)
{
	return tc_setup(state, "admin-races");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_evict_leaves_lru),
	    cmocka_unit_test(test_evict_during_evict_scan),
	    cmocka_unit_test_setup_teardown(test_read_miss_rewritten, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_verify_miss_rewritten, setup, tc_teardown),
	    cmocka_unit_test_setup_teardown(test_verify_notfound_rewritten, setup, tc_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
