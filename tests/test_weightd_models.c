/*
 * test_weightd_models.c — the model registry (weightd/models.c) while a new
 * revision opens: its content digest may read for minutes, and meanwhile
 * requests that may use the current revision get it at once (listing
 * included), instead of waiting on the model's lock behind the open (which
 * held every data worker that asked for the model); a forced check waits for
 * the open, then checks again: a source changed during that open is seen.
 *
 * The digest is held open by the registry's memo (ckpt_memo): its lookup
 * blocks on a gate the test opens. At start, models open several at a time.
 * An unregistered model's entry is freed once no request holds it (it was
 * kept until the daemon stopped: memory grew with every unregistration).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "loader/loader.h"
#include "tests/util/testutil.h"
#include "weightd/weightd.h"
#include "weightd/weightd_int.h"

#define SEED 919u

typedef struct gate {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	bool armed, entered, open;
} gate;

/* Lookups block while the gate is armed and closed; nothing is remembered. */
static bool gate_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out, uint64_t head,
                     uint32_t bb, wt_hash128 *blocks, size_t nb)
{
	(void)bb;
	(void)head;
	(void)blocks;
	(void)nb;
	(void)uri;
	(void)o;
	(void)out;
	gate *g = ctx;
	pthread_mutex_lock(&g->lk);
	if (g->armed) {
		g->entered = true;
		pthread_cond_broadcast(&g->cv);
		while (!g->open)
			pthread_cond_wait(&g->cv, &g->lk);
	}
	pthread_mutex_unlock(&g->lk);
	return false;
}

static void gate_put(void *ctx, const char *uri, const store_obj *o, wt_hash128 d, uint64_t head,
                     uint32_t bb, const wt_hash128 *blocks, size_t nb)
{
	(void)bb;
	(void)head;
	(void)blocks;
	(void)nb;
	(void)ctx;
	(void)uri;
	(void)o;
	(void)d;
}

typedef struct getter {
	wd_models *m;
	bool force;
	pthread_mutex_t lk;
	pthread_cond_t cv;
	bool done;
	int rv;
	char revision[80];
} getter;

static void *get_main(void *p)
{
	getter *g = p;
	wd_snap *s = NULL;
	wt_errbuf err;
	int rv = wd_models_get(g->m, "m", g->force, &s, &err);
	pthread_mutex_lock(&g->lk);
	g->rv = rv;
	if (rv == WT_OK)
		snprintf(g->revision, sizeof(g->revision), "%s", s->revision);
	g->done = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->lk);
	wd_snap_release(s);
	return NULL;
}

/* Wait up to ms for g to finish; whether it did. */
static bool wait_done(getter *g, int ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&g->lk);
	while (!g->done && pthread_cond_timedwait(&g->cv, &g->lk, &dl) == 0) {
	}
	bool d = g->done;
	pthread_mutex_unlock(&g->lk);
	return d;
}

static void start_getter(getter *g, pthread_t *t, wd_models *m, bool force)
{
	memset(g, 0, sizeof(*g));
	g->m = m;
	g->force = force;
	pthread_mutex_init(&g->lk, NULL);
	pthread_cond_init(&g->cv, NULL);
	assert_int_equal(pthread_create(t, NULL, get_main, g), 0);
}

static void open_gate(gate *gt)
{
	pthread_mutex_lock(&gt->lk);
	gt->open = true;
	pthread_cond_broadcast(&gt->cv);
	pthread_mutex_unlock(&gt->lk);
}

/* Rewrite the checkpoint at dir with seed; the shards' mtimes shifted by
 * `shift` seconds, so their versions differ even on a coarse clock (same
 * names and sizes as before). */
static void rewrite(const char *dir, uint64_t seed, int shift)
{
	assert_int_equal(
	    tu_write_ckpt(dir, tu_llama_config, tu_tiny_llama, TU_TINY_LLAMA_N, 2, seed), 0);
	for (size_t k = 1; k <= 2; k++) {
		char nm[64];
		tu_shard_name(nm, sizeof(nm), k, 2);
		char *p = tu_path(dir, nm);
		assert_int_equal(tu_touch(p, (int64_t)shift * 1000000000 + (int64_t)k), 0);
		free(p);
	}
}

static void test_stale_while_opening(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("wd-models");
	char *models = tu_path(dir, "models"), *cachedir = tu_path(dir, "cache");
	char *model = tu_path(models, "m");
	assert_int_equal(mkdir(models, 0700), 0);
	assert_int_equal(mkdir(model, 0700), 0);
	assert_int_equal(mkdir(cachedir, 0700), 0);
	assert_int_equal(
	    tu_write_ckpt(model, tu_llama_config, tu_tiny_llama, TU_TINY_LLAMA_N, 2, SEED), 0);
	wd_config cfg;
	wt_errbuf err;
	assert_int_equal(wd_config_init(&cfg), WT_OK);
	assert_int_equal(wd_config_set(&cfg, "models_dir", models, "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&cfg, "cache_dir", cachedir, "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&cfg, "revalidate_ms", "0", "test", &err), WT_OK);
	gate gt = {0};
	pthread_mutex_init(&gt.lk, NULL);
	pthread_cond_init(&gt.cv, NULL);
	ckpt_memo memo = {.get = gate_get, .put = gate_put, .ctx = &gt};
	wd_models *m;
	assert_int_equal(wd_models_open(&m, &cfg, &memo, &err), WT_OK);
	wd_snap *a = NULL;
	assert_int_equal(wd_models_get(m, "m", false, &a, &err), WT_OK);
	char rev_a[80];
	snprintf(rev_a, sizeof(rev_a), "%s", a->revision);
	wd_snap_release(a);

	/* a new revision in place; its digest will wait at the gate */
	rewrite(model, SEED + 1, 1);
	gt.armed = true;
	getter fg, sg;
	pthread_t ft, st;
	start_getter(&fg, &ft, m, true); /* forced: opens the new revision */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&gt.lk);
	while (!gt.entered && pthread_cond_timedwait(&gt.cv, &gt.lk, &dl) == 0) {
	}
	bool entered = gt.entered;
	pthread_mutex_unlock(&gt.lk);
	if (!entered) { /* the change was not seen: never leave the getter blocked */
		open_gate(&gt);
		pthread_join(ft, NULL);
		fail_msg("the forced check did not open the new revision within 10 s");
	}

	start_getter(&sg, &st, m, false); /* may use the current revision */
	bool stale_done = wait_done(&sg, 3000);
	wd_model_info *info = NULL;
	size_t n = 0;
	bool listed = false;
	if (stale_done) {
		assert_int_equal(wd_models_list(m, &info, &n), WT_OK);
		listed = n == 1 && info[0].available && strcmp(info[0].snap->revision, rev_a) == 0;
		wd_models_list_free(info, n);
	}
	bool forced_waited = !fg.done;
	/* the source changes again while that open waits; a forced check asked
	 * now must see this newest revision, not the result of the older open */
	rewrite(model, SEED + 2, 2);
	getter fg2;
	pthread_t ft2;
	start_getter(&fg2, &ft2, m, true);
	usleep(100 * 1000); /* it waits for the open in progress */
	open_gate(&gt);     /* before any assert: never leave the opener blocked */
	pthread_join(st, NULL);
	pthread_join(ft, NULL);
	pthread_join(ft2, NULL);
	char rev_c[80];
	{
		store *cs;
		ckpt *cc;
		assert_int_equal(store_open(&cs, model, &err), WT_OK);
		assert_int_equal(ckpt_open(&cc, cs, &err), WT_OK);
		snprintf(rev_c, sizeof(rev_c), "%s", ckpt_revision(cc));
		ckpt_close(cc);
		store_close(cs);
	}
	printf("while the new revision opened: a request got %s in time %d (revision %.12s, "
	       "old %.12s), listed %d; the forced check waited %d and got %s %.12s; changed "
	       "again meanwhile, a later forced check got %s %.12s (newest %.12s)\n",
	       wt_errname(sg.rv), stale_done, sg.revision, rev_a, listed, forced_waited,
	       wt_errname(fg.rv), fg.revision, wt_errname(fg2.rv), fg2.revision, rev_c);
	assert_true(stale_done);
	assert_int_equal(sg.rv, WT_OK);
	assert_string_equal(sg.revision, rev_a);
	assert_true(listed);
	assert_true(forced_waited);
	assert_int_equal(fg2.rv, WT_OK);
	assert_string_equal(fg2.revision, rev_c);
	assert_string_not_equal(rev_c, rev_a);
	/* from now on everyone gets the newest revision */
	wd_snap *b = NULL;
	assert_int_equal(wd_models_get(m, "m", false, &b, &err), WT_OK);
	assert_string_equal(b->revision, rev_c);
	wd_snap_release(b);
	wd_models_close(m);
	wd_config_free(&cfg);
	tu_rmrf(dir);
	free(model);
	free(models);
	free(cachedir);
	free(dir);
}

/* A memo whose lookup waits (up to 2 s) until another lookup is inside at
 * the same time: the most lookups inside at once is what it records. */
typedef struct meet {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	int inside, most, lookups;
} meet;

static bool meet_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out, uint64_t head,
                     uint32_t bb, wt_hash128 *blocks, size_t nb)
{
	(void)bb;
	(void)head;
	(void)blocks;
	(void)nb;
	(void)uri;
	(void)o;
	(void)out;
	meet *mt = ctx;
	pthread_mutex_lock(&mt->lk);
	mt->lookups++;
	if (++mt->inside > mt->most)
		mt->most = mt->inside;
	pthread_cond_broadcast(&mt->cv);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	while (mt->most < 2 && pthread_cond_timedwait(&mt->cv, &mt->lk, &dl) == 0) {
	}
	mt->inside--;
	pthread_mutex_unlock(&mt->lk);
	return false;
}

/* At start the models of models_dir (one file each: one digest thread per
 * model) are opened several at a time, and every one is served after. */
static void test_open_at_start(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("wd-mstart");
	char *models = tu_path(dir, "models"), *cachedir = tu_path(dir, "cache");
	assert_int_equal(mkdir(models, 0700), 0);
	assert_int_equal(mkdir(cachedir, 0700), 0);
	const char *names[] = {"a", "b", "c"};
	for (int i = 0; i < 3; i++) {
		char *p = tu_path(models, names[i]);
		assert_int_equal(mkdir(p, 0700), 0);
		assert_int_equal(tu_write_ckpt(p, tu_llama_config, tu_tiny_llama, TU_TINY_LLAMA_N,
		                               1, SEED + (uint64_t)i),
		                 0);
		free(p);
	}
	wd_config cfg;
	wt_errbuf err;
	assert_int_equal(wd_config_init(&cfg), WT_OK);
	assert_int_equal(wd_config_set(&cfg, "models_dir", models, "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&cfg, "cache_dir", cachedir, "test", &err), WT_OK);
	meet mt = {0};
	pthread_mutex_init(&mt.lk, NULL);
	pthread_cond_init(&mt.cv, NULL);
	ckpt_memo memo = {.get = meet_get, .put = gate_put, .ctx = &mt};
	wd_models *m;
	uint64_t t0 = common_now_ns();
	assert_int_equal(wd_models_open(&m, &cfg, &memo, &err), WT_OK);
	double s = (double)(common_now_ns() - t0) / 1e9;
	printf("3 models opened in %.2f s: %d lookups, at most %d at once\n", s, mt.lookups,
	       mt.most);
	assert_int_equal(mt.lookups, 3);
	assert_true(mt.most >= 2);
	for (int i = 0; i < 3; i++) {
		wd_snap *sn = NULL;
		assert_int_equal(wd_models_get(m, names[i], false, &sn, &err), WT_OK);
		assert_int_equal(strlen(sn->revision), 64);
		wd_snap_release(sn);
	}
	assert_int_equal(mt.lookups, 3); /* served as opened: nothing read again */
	wd_models_close(m);
	wd_config_free(&cfg);
	pthread_cond_destroy(&mt.cv);
	pthread_mutex_destroy(&mt.lk);
	tu_rmrf(dir);
	free(models);
	free(cachedir);
	free(dir);
}

typedef struct churn {
	wd_models *m;
	_Atomic bool stop;
	_Atomic int lists, gets, bad;
} churn;

/* List and get "r" until told to stop, while the test adds and removes it. */
static void *churn_main(void *p)
{
	churn *c = p;
	while (!atomic_load(&c->stop)) {
		wd_model_info *info = NULL;
		size_t n = 0;
		if (wd_models_list(c->m, &info, &n) == WT_OK) {
			for (size_t i = 0; i < n; i++) /* names and URIs stay readable */
				if (strcmp(info[i].name, "r") != 0 ||
				    strncmp(info[i].uri, "file://", 7))
					atomic_fetch_add(&c->bad, 1);
			wd_models_list_free(info, n);
			atomic_fetch_add(&c->lists, 1);
		}
		wd_snap *s = NULL;
		wt_errbuf err;
		if (wd_models_get(c->m, "r", false, &s, &err) == WT_OK)
			atomic_fetch_add(&c->gets, 1);
		wd_snap_release(s);
	}
	return NULL;
}

typedef struct opener {
	wd_models *m;
	int rv;
	wt_errbuf err;
} opener;

static void *open_pending_main(void *p)
{
	opener *o = p;
	wd_snap *s = NULL;
	o->rv = wd_models_open_pending(o->m, "p", &s, &o->err);
	wd_snap_release(s);
	return NULL;
}

/* Unregistered (removed) models are freed as soon as nobody holds them: by
 * the remove itself, by the last listing that holds one, or by the open
 * that was reading it; concurrent lists and gets see valid entries. */
static void test_removed_freed(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("wd-mfree");
	char *models = tu_path(dir, "models"), *cachedir = tu_path(dir, "cache");
	char *src = tu_path(dir, "src");
	assert_int_equal(mkdir(models, 0700), 0);
	assert_int_equal(mkdir(cachedir, 0700), 0);
	assert_int_equal(mkdir(src, 0700), 0);
	assert_int_equal(
	    tu_write_ckpt(src, tu_llama_config, tu_tiny_llama, TU_TINY_LLAMA_N, 1, SEED), 0);
	char uri[1200];
	snprintf(uri, sizeof(uri), "file://%s", src);
	wd_config cfg;
	wt_errbuf err;
	assert_int_equal(wd_config_init(&cfg), WT_OK);
	assert_int_equal(wd_config_set(&cfg, "models_dir", models, "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&cfg, "cache_dir", cachedir, "test", &err), WT_OK);
	/* src is registered (WD_SRC_REGISTERED): inside register_roots, as REGISTER checks */
	assert_int_equal(wd_config_set(&cfg, "register_roots", dir, "test", &err), WT_OK);
	gate gt = {0};
	pthread_mutex_init(&gt.lk, NULL);
	pthread_cond_init(&gt.cv, NULL);
	ckpt_memo memo = {.get = gate_get, .put = gate_put, .ctx = &gt};
	wd_models *m;
	assert_int_equal(wd_models_open(&m, &cfg, &memo, &err), WT_OK);
	size_t base = wd_models_alive();

	/* removed while a listing holds it: freed by the listing's free */
	for (int i = 0; i < 20; i++) {
		assert_int_equal(
		    wd_models_add_from(m, "r", uri, WD_SRC_REGISTERED, WD_OPEN_NOW, &err), WT_OK);
		assert_int_equal(wd_models_alive(), base + 1);
		wd_model_info *info = NULL;
		size_t n = 0;
		assert_int_equal(wd_models_list(m, &info, &n), WT_OK);
		assert_int_equal(n, 1);
		assert_int_equal(wd_models_remove(m, "r", &err), WT_OK);
		assert_int_equal(wd_models_alive(), base + 1);
		assert_string_equal(info[0].name, "r"); /* still valid */
		assert_string_equal(info[0].uri, uri);
		wd_models_list_free(info, n);
		assert_int_equal(wd_models_alive(), base);
	}

	/* removed while its open reads: freed when that open ends */
	assert_int_equal(wd_models_add_from(m, "p", uri, WD_SRC_REGISTERED, WD_OPEN_PENDING, &err),
	                 WT_OK);
	gt.armed = true;
	opener op = {.m = m};
	pthread_t ot;
	assert_int_equal(pthread_create(&ot, NULL, open_pending_main, &op), 0);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&gt.lk);
	while (!gt.entered && pthread_cond_timedwait(&gt.cv, &gt.lk, &dl) == 0) {
	}
	bool entered = gt.entered;
	pthread_mutex_unlock(&gt.lk);
	assert_int_equal(wd_models_remove(m, "p", &err), WT_OK);
	size_t held = wd_models_alive();
	open_gate(&gt); /* before any assert: never leave the opener blocked */
	pthread_join(ot, NULL);
	size_t after = wd_models_alive();
	printf("removed while its open read: %zu entries alive (base %zu), %zu after the open "
	       "ended (%s)\n",
	       held, base, after, wt_errname(op.rv));
	assert_true(entered);
	assert_int_equal(held, base + 1);
	assert_int_equal(op.rv, WT_ECANCELED);
	assert_int_equal(after, base);

	/* added and removed while other threads list and get it */
	gt.armed = false;
	churn c = {.m = m};
	pthread_t ct[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&ct[i], NULL, churn_main, &c), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(
		    wd_models_add_from(m, "r", uri, WD_SRC_REGISTERED, WD_OPEN_NOW, &err), WT_OK);
		assert_int_equal(wd_models_remove(m, "r", &err), WT_OK);
	}
	atomic_store(&c.stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(ct[i], NULL);
	printf("100 registrations removed while 2 threads listed (%d) and got (%d ok): %zu "
	       "entries alive (base %zu)\n",
	       atomic_load(&c.lists), atomic_load(&c.gets), wd_models_alive(), base);
	assert_int_equal(atomic_load(&c.bad), 0);
	assert_int_equal(wd_models_alive(), base);
	wd_models_close(m);
	assert_int_equal(wd_models_alive(), 0);
	wd_config_free(&cfg);
	pthread_cond_destroy(&gt.cv);
	pthread_mutex_destroy(&gt.lk);
	tu_rmrf(dir);
	free(src);
	free(models);
	free(cachedir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stale_while_opening),
	    cmocka_unit_test(test_open_at_start),
	    cmocka_unit_test(test_removed_freed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
