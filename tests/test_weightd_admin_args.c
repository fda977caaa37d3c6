/*
 * test_weightd_admin_args.c — what the daemon's admin WARM and EVICT make of
 * their layout field: WARM without one produces the default layout (it was
 * WT_EPROTO "request has no layout"); EVICT with one is refused (it dropped
 * the model's shards of every layout, not the one named) and the cache keeps
 * every shard; EVICT without one still drops them all, of that model only
 * (not of another name served from the same bytes, which shares its revision).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"
#include "test_weightd_util.h"

#define SEED 4242u

static uint64_t cached_shards(nng_socket s)
{
	tw_reply k = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_STATS, NULL, 0);
	assert_int_equal(k.rv, WT_OK);
	assert_int_equal(k.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	uint64_t n = k.r->admin->shards;
	tw_reply_free(&k);
	return n;
}

static void test_warm_default_layout(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-admargs-warm", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	/* tp 0 in tw_admin: no layout in the request */
	tw_reply w = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_WARM, "llama", 0);
	assert_int_equal(w.rv, WT_OK);
	if (w.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		fail_msg("warm without a layout: %s", w.r->error->message);
	assert_int_equal(w.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_int_equal(w.r->admin->shards, 1); /* tp=1, ep=1 */
	assert_non_null(strstr(w.r->admin->text, "tp=1,ep=1,"));
	tw_reply_free(&w);
	/* the same bytes a Manifest request for the default layout gets: a hit */
	tw_reply m = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&m);
	assert_int_equal(cached_shards(s), 1);
	/* still refused: no model */
	w = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_WARM, "", 0);
	assert_int_equal(tw_errcode(&w), WT_EINVAL);
	tw_reply_free(&w);
	nng_close(s);
	tw_env_free(e);
}

static void test_evict_with_layout_refused(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-admargs-evict", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply w = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_WARM, "llama", 1);
	assert_int_equal(w.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	tw_reply_free(&w);
	w = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_WARM, "llama", 2);
	assert_int_equal(w.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	tw_reply_free(&w);
	assert_int_equal(cached_shards(s), 3);
	/* "evict tp=2" of one model, and of all models: refused, nothing dropped */
	const char *models[] = {"llama", ""};
	for (size_t i = 0; i < 2; i++) {
		tw_reply ev = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, models[i], 2);
		assert_int_equal(ev.rv, WT_OK);
		if (ev.r->body_case == WEIGHTS__REPLY__BODY_ADMIN)
			fail_msg("evict '%s' with a layout: %s", models[i], ev.r->admin->text);
		assert_int_equal(tw_errcode(&ev), WT_EINVAL);
		assert_non_null(strstr(ev.r->error->message, "without a layout"));
		tw_reply_free(&ev);
		assert_int_equal(cached_shards(s), 3);
	}
	/* the warm layouts are still served from the cache */
	tw_reply m = tw_manifest(s, "llama", 2, 1);
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&m);
	/* without a layout: every layout of the model goes */
	tw_reply ev = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, "llama", 0);
	assert_int_equal(ev.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_int_equal(ev.r->admin->shards, 3);
	tw_reply_free(&ev);
	assert_int_equal(cached_shards(s), 0);
	nng_close(s);
	tw_env_free(e);
}

/* Two names served from the same bytes share a revision: evicting one must
 * leave the other's shards (it dropped them too, matched by revision). */
static void test_evict_spares_same_revision(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-admargs-twin", SEED);
	char *twin = tu_path(e->models, "twin");
	assert_int_equal(tw_write_llama8(twin, SEED), 0); /* the same bytes as llama */
	free(twin);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	const char *names[] = {"llama", "twin"};
	for (size_t i = 0; i < 2; i++) {
		tw_reply w = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_WARM, names[i], 2);
		assert_int_equal(w.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
		assert_int_equal(w.r->admin->shards, 2);
		tw_reply_free(&w);
	}
	assert_int_equal(cached_shards(s), 4);
	tw_reply ev = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, "llama", 0);
	assert_int_equal(ev.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_int_equal(ev.r->admin->shards, 2);
	tw_reply_free(&ev);
	assert_int_equal(cached_shards(s), 2);
	/* twin's layout is still a cache hit: no production */
	tw_reply k = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_STATS, NULL, 0);
	uint64_t prods = k.r->admin->productions;
	tw_reply_free(&k);
	tw_reply m = tw_manifest(s, "twin", 2, 1);
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&m);
	k = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_STATS, NULL, 0);
	assert_int_equal(k.r->admin->productions, prods);
	tw_reply_free(&k);
	nng_close(s);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_warm_default_layout),
	    cmocka_unit_test(test_evict_with_layout_refused),
	    cmocka_unit_test(test_evict_spares_same_revision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
