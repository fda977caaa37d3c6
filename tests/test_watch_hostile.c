/*
 * test_watch_hostile.c — a Watch reply that lies (a revision that is not 64
 * hex digits, changed=1 for the known revision, changed=0 for another) is
 * WT_EPROTO, never a revision handed to the engine (fake: tests/util/fake_weightd.h).
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

#include "client/client.h"
#include "client/client_int.h"
#include "common/common.h"
#include "tests/util/fake_weightd.h"
#include "tests/util/testutil.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/weights.h"

#define REV_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define REV_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static wt_client *open_client(const char *url)
{
	const char *eps[1] = {url};
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.request_timeout_ms = 2000;
	o.max_retries = 0;
	wt_client *c = NULL;
	wt_errbuf err;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		fail_msg("wt_client_open: %s", err.msg);
	return c;
}

/* Watch with the fake answering (rev, changed): the return code; out/ch set. */
static int watch(fake *f, wt_client *c, const char *rev, int changed, const char *known,
                 char out[65], int *ch, wt_errbuf *err)
{
	f->watch_revision = rev;
	f->watch_changed = changed;
	memset(out, 'X', 64);
	out[64] = '\0';
	*ch = -1;
	return wt_client_watch(c, "fake", known, 0, out, ch, err);
}

static void test_watch_reply_lies(void **state)
{
	(void)state;
	fake *f = fake_start();
	wt_client *c = open_client(f->url);
	char out[65];
	int ch;
	wt_errbuf err;

	/* an honest reply: a new revision, changed */
	assert_int_equal(watch(f, c, REV_B, 1, REV_A, out, &ch, &err), WT_OK);
	assert_string_equal(out, REV_B);
	assert_int_equal(ch, 1);

	/* the known revision, yet changed=1: an engine would reload for nothing */
	assert_int_equal(watch(f, c, REV_A, 1, REV_A, out, &ch, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "contradicts itself"));
	assert_int_equal(ch, -1);

	/* another revision, yet changed=0: an engine would miss the update */
	assert_int_equal(watch(f, c, REV_B, 0, REV_A, out, &ch, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "contradicts itself"));

	/* not hex, and too short: never handed out as a revision */
	static const char nonhex[] =
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";
	assert_int_equal(watch(f, c, nonhex, 1, REV_A, out, &ch, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "64 lowercase hex digits"));
	assert_int_equal(out[0], 'X');
	assert_int_equal(watch(f, c, "rev2", 1, REV_A, out, &ch, &err), WT_EPROTO);
	assert_non_null(strstr(err.msg, "4 characters"));
	assert_int_equal(watch(f, c, "", 0, "", out, &ch, &err), WT_EPROTO);

	/* no known revision: the current one, changed */
	assert_int_equal(watch(f, c, REV_A, 1, NULL, out, &ch, &err), WT_OK);
	assert_string_equal(out, REV_A);
	assert_int_equal(ch, 1);
	wt_client_close(c);
	fake_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_watch_reply_lies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
