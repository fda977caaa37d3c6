/*
 * test_weightctl_admin.c — `weightctl admin evict` against an in-process
 * weightd while a reader holds a shard open: the shard stays cached (busy),
 * libweights says how many (wt_admin_result.bad) and weightctl exits 4 with a
 * message saying to run it again; once the reader is gone the same command
 * drops it and exits 0. It used to exit 0 after dropping nothing ("evicted
 * 0 shards of llama (1 busy, retry later)"), so a script took it for done.
 *
 * The CLI runs in-process (ctl_admin: the Makefile links weightctl's objects
 * but main.o into this test) so the test can pin the shard through the cache.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "client/weightctl/weightctl.h"
#include "common/common.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"
#include "weights/client.h"

#define SEED 4242u

/* ctl_admin(evict --model llama) with its stderr in *msg (malloc'd, caller
 * frees). Returns its exit code. */
static int ctl_evict(const tw_env *e, const char *dir, char **msg)
{
	char *path = tu_path(dir, "ctl.err");
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	FILE *f = fopen(path, "w+");
	assert_non_null(f);
	assert_true(dup2(fileno(f), 2) >= 0);
	char *argv[] = {"admin", "--endpoint", (char *)e->url, "evict", "--model", "llama"};
	int code = ctl_admin((int)(sizeof(argv) / sizeof(argv[0])), argv);
	fflush(stderr);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	fflush(stdout);
	long n = ftell(f);
	assert_true(n >= 0);
	*msg = calloc(1, (size_t)n + 1);
	assert_non_null(*msg);
	rewind(f);
	assert_int_equal(fread(*msg, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	free(path);
	printf("weightctl admin evict --model llama: exit %d, stderr: %s\n", code, *msg);
	return code;
}

static void test_evict_busy_exit(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("ctl-evict-busy", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply m = tw_manifest(s, "llama", 1, 0); /* produces and caches the shard */
	assert_int_equal(m.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	uint8_t id[WD_SHARD_ID_BYTES];
	assert_int_equal(m.r->manifest->shard_id.len, WD_SHARD_ID_BYTES);
	memcpy(id, m.r->manifest->shard_id.data, WD_SHARD_ID_BYTES);
	tw_reply_free(&m);
	nng_close(s);

	/* a reader holds the shard open */
	cache_shard *sh;
	wt_errbuf err;
	assert_int_equal(cache_shard_open(e->srv->cache, id, sizeof(id), &sh, &err), WT_OK);

	/* the library: nothing dropped, one busy */
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {e->url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	wt_client *c = NULL;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_admin_result res = {0};
	assert_int_equal(wt_client_admin(c, WT_ADMIN_EVICT, "llama", NULL, &res, &err), WT_OK);
	printf("library: %s (shards=%llu bad=%llu)\n", res.text, (unsigned long long)res.shards,
	       (unsigned long long)res.bad);
	assert_int_equal(res.shards, 0);
	assert_int_equal(res.bad, 1);
	assert_non_null(strstr(res.text, "1 busy (being read) left cached: evict again"));
	wt_admin_result_clear(&res);
	wt_client_close(c);

	/* the CLI: exit 4 (CTL_BUSY, a contract number), saying what to do */
	char *msg = NULL;
	assert_int_equal(ctl_evict(e, e->dir, &msg), 4);
	assert_non_null(strstr(msg, "left 1 shard(s) cached: readers had them open"));
	assert_non_null(strstr(msg, "run it again"));
	free(msg);
	assert_true(cache_has_shard(e->srv->cache, id, sizeof(id)));

	/* the reader is gone: dropped, exit 0, no busy message */
	cache_shard_close(sh);
	assert_int_equal(ctl_evict(e, e->dir, &msg), 0);
	assert_null(strstr(msg, "weightctl admin: evict left"));
	free(msg);
	assert_false(cache_has_shard(e->srv->cache, id, sizeof(id)));
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_evict_busy_exit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
