/*
 * test_weightd_reload.c — a SIGHUP reload stores the reload-safe settings of
 * the running server's config (wd_config_reload) while the server's threads
 * read them: the sweep of unauthenticated connections reads hello_timeout_ms
 * every few milliseconds. Under ThreadSanitizer (make tsan) a plain store or
 * a plain read there is a data race report; the new value takes effect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "tests/util/testutil.h"
#include "weightd/server_int.h"
#include "weightd/weightd.h"

#include "tests/test_weightd_util.h"

#define SEED 0x5e10adull

static void set(tw_env *e, const char *key, const char *val)
{
	wt_errbuf err;
	int rv = wd_config_set(&e->cfg, key, val, "test", &err);
	if (rv != WT_OK)
		printf("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
}

static void test_reload_while_sweeping(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reload", SEED);
	set(e, "auth_token", "s3cret");
	set(e, "hello_timeout_ms", "20"); /* the sweep runs every 10 ms */
	assert_int_equal(tw_start(e), WT_OK);

	/* a reload as main.c's reload thread does it: only the fresh values are
	 * read, so a shallow copy of the running config stands in for a re-read
	 * file (its strings and lists are the running config's: not freed) */
	uint64_t deadline = common_now_ns() + 600 * 1000000ull;
	size_t reloads = 0;
	while (common_now_ns() < deadline) {
		wd_config fresh = e->cfg;
		fresh.hello_timeout_ms = reloads % 2 ? 20 : 30;
		fresh.revalidate_ms = reloads % 2 ? 1000 : 1500;
		assert_int_equal(wd_config_reload(&e->cfg, &fresh, NULL, NULL), 2);
		wd_server_reconfigure(e->srv);
		reloads++;
		usleep(2000);
	}
	printf("%zu reloads while the sweep ran\n", reloads);
	assert_int_equal(wd_cfg_live(&e->cfg.hello_timeout_ms), reloads % 2 ? 30 : 20);

	/* the sweep goes on with the value in force: a connection that never
	 * says Hello is closed */
	int fd = tw_raw_connect(e->url);
	assert_int_equal(tw_closed_within(fd, 2000), 1);
	close(fd);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reload_while_sweeping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
