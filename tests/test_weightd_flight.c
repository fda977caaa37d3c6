/* test_weightd_flight.c — the single-flight table and the shard-id derivation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include <cmocka.h>

#include "weightd/weightd_int.h"

typedef struct test_waiter {
	wd_flight_waiter w;
	int calls;
	int rv;
	char msg[WT_ERRMSG_MAX];
} test_waiter;

static void waiter_done(wd_flight_waiter *w, int rv, const wt_errbuf *err)
{
	test_waiter *t = (test_waiter *)w;
	t->calls++;
	t->rv = rv;
	snprintf(t->msg, sizeof(t->msg), "%s", err ? err->msg : "");
}

static void test_flight_basic(void **state)
{
	(void)state;
	wd_flights *t;
	assert_int_equal(wd_flights_create(&t), WT_OK);
	wt_hash128 a = {1, 2}, b = {3, 4};
	test_waiter w[4];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 4; i++)
		w[i].w.done = waiter_done;
	assert_int_equal(wd_flight_join(t, a, &w[0].w), WD_FLIGHT_LEADER);
	assert_int_equal(w[0].calls, 0); /* the leader is not queued */
	assert_int_equal(wd_flight_join(t, a, &w[1].w), WD_FLIGHT_WAITING);
	assert_int_equal(wd_flight_join(t, a, &w[2].w), WD_FLIGHT_WAITING);
	/* another layout is independent */
	assert_int_equal(wd_flight_join(t, b, &w[3].w), WD_FLIGHT_LEADER);
	assert_int_equal(wd_flights_active(t), 2);
	wt_errbuf err;
	wt_seterr(&err, WT_ELAYOUT, "tp_size 3 does not divide 32 heads");
	wd_flight_finish(t, a, WT_ELAYOUT, &err);
	assert_int_equal(w[1].calls, 1);
	assert_int_equal(w[2].calls, 1);
	assert_int_equal(w[1].rv, WT_ELAYOUT);
	assert_string_equal(w[2].msg, "tp_size 3 does not divide 32 heads");
	assert_int_equal(w[3].calls, 0);
	assert_int_equal(wd_flights_active(t), 1);
	/* a finished key starts a new flight */
	assert_int_equal(wd_flight_join(t, a, NULL), WD_FLIGHT_LEADER);
	wd_flight_finish(t, a, WT_OK, NULL);
	wd_flight_finish(t, b, WT_OK, NULL);
	assert_int_equal(w[3].calls, 0); /* b's leader had no waiters */
	assert_int_equal(wd_flights_active(t), 0);
	wd_flight_finish(t, b, WT_OK, NULL); /* unknown key: no-op */
	wd_flights_destroy(t);
}

/* Many threads join one key at once: exactly one leads; every waiter is
 * completed exactly once by the leader's finish. */
#define N_THREADS 8
typedef struct race_arg {
	wd_flights *t;
	pthread_barrier_t *bar;
	test_waiter tw;
	int role;
} race_arg;

static void *race_main(void *p)
{
	race_arg *a = p;
	wt_hash128 k = {42, 42};
	pthread_barrier_wait(a->bar);
	a->role = wd_flight_join(a->t, k, &a->tw.w);
	pthread_barrier_wait(a->bar); /* all joined before anyone finishes */
	if (a->role == WD_FLIGHT_LEADER)
		wd_flight_finish(a->t, k, WT_OK, NULL);
	return NULL;
}

static void test_flight_race(void **state)
{
	(void)state;
	wd_flights *t;
	assert_int_equal(wd_flights_create(&t), WT_OK);
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, N_THREADS);
	race_arg args[N_THREADS];
	pthread_t th[N_THREADS];
	memset(args, 0, sizeof(args));
	for (int i = 0; i < N_THREADS; i++) {
		args[i].t = t;
		args[i].bar = &bar;
		args[i].tw.w.done = waiter_done;
		args[i].tw.rv = -1;
		assert_int_equal(pthread_create(&th[i], NULL, race_main, &args[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	int leaders = 0;
	for (int i = 0; i < N_THREADS; i++) {
		if (args[i].role == WD_FLIGHT_LEADER) {
			leaders++;
			assert_int_equal(args[i].tw.calls, 0);
		} else {
			assert_int_equal(args[i].role, WD_FLIGHT_WAITING);
			assert_int_equal(args[i].tw.calls, 1);
			assert_int_equal(args[i].tw.rv, WT_OK);
		}
	}
	assert_int_equal(leaders, 1);
	assert_int_equal(wd_flights_active(t), 0);
	pthread_barrier_destroy(&bar);
	wd_flights_destroy(t);
}

/* The frozen formula, re-derived with libxxhash directly. */
static void reference_id(const char *model, const char *rev, const char *layout, uint32_t rank,
                         uint8_t out[17])
{
	uint8_t buf[1024];
	size_t n = 0;
	memcpy(buf, "weightd-shard", 14); /* with its NUL */
	n = 14;
	memcpy(buf + n, model, strlen(model) + 1);
	n += strlen(model) + 1;
	memcpy(buf + n, rev, strlen(rev) + 1);
	n += strlen(rev) + 1;
	memcpy(buf + n, layout, strlen(layout) + 1);
	n += strlen(layout) + 1;
	uint32_t v[2] = {WD_PLAN_VERSION, rank};
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 4; i++)
			buf[n++] = (uint8_t)(v[j] >> (8 * i));
	XXH128_hash_t h = XXH3_128bits(buf, n);
	out[0] = 2;
	for (int i = 0; i < 8; i++) {
		out[1 + i] = (uint8_t)(h.high64 >> (56 - 8 * i));
		out[9 + i] = (uint8_t)(h.low64 >> (56 - 8 * i));
	}
}

static void test_shard_id(void **state)
{
	(void)state;
	const char *rev = "9f2c0e5d1a7b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5";
	const char *lay = "tp=4,ep=1,quant=none,dtype=source,group=128,vocab_pad=64,w13=gate_up,"
	                  "requant=deny,exclude=[]";
	uint8_t id[WD_SHARD_ID_BYTES], ref[17], other[WD_SHARD_ID_BYTES];
	for (uint32_t r = 0; r < 4; r++) {
		wd_shard_id("llama", rev, lay, r, id);
		reference_id("llama", rev, lay, r, ref);
		assert_memory_equal(id, ref, 17);
		assert_int_equal(id[0], WD_SHARD_ID_VERSION);
	}
	/* every input changes the id */
	wd_shard_id("llama", rev, lay, 0, id);
	wd_shard_id("llama", rev, lay, 1, other);
	assert_memory_not_equal(id, other, WD_SHARD_ID_BYTES);
	wd_shard_id("llama", "0f2c", lay, 0, other);
	assert_memory_not_equal(id, other, WD_SHARD_ID_BYTES);
	wd_shard_id("llama", rev, "tp=2", 0, other);
	assert_memory_not_equal(id, other, WD_SHARD_ID_BYTES);
	/* two models never share a shard, even at the same revision */
	wd_shard_id("llama-copy", rev, lay, 0, other);
	assert_memory_not_equal(id, other, WD_SHARD_ID_BYTES);
	/* field boundaries are unambiguous: ("ab","c") != ("a","bc") */
	uint8_t x[WD_SHARD_ID_BYTES], y[WD_SHARD_ID_BYTES];
	wd_shard_id("m", "ab", "c", 0, x);
	wd_shard_id("m", "a", "bc", 0, y);
	assert_memory_not_equal(x, y, WD_SHARD_ID_BYTES);
	wd_shard_id("ma", "b", "c", 0, x);
	wd_shard_id("m", "ab", "c", 0, y);
	assert_memory_not_equal(x, y, WD_SHARD_ID_BYTES);
	/* the layout key ignores the rank and differs from every shard id */
	wt_hash128 k1 = wd_layout_key("llama", rev, lay), k2 = wd_layout_key("llama", rev, lay);
	assert_true(common_hash128_eq(k1, k2));
	assert_false(common_hash128_eq(k1, wd_layout_key("llama", rev, "tp=2")));
	assert_false(common_hash128_eq(k1, wd_layout_key("other", rev, lay)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flight_basic),
	    cmocka_unit_test(test_flight_race),
	    cmocka_unit_test(test_shard_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
