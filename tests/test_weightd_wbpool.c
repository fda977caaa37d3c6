/*
 * test_weightd_wbpool.c — the write-behind buffers of weightd/wback.c:
 * released buffers are kept per size for the next ones (and serve ones of
 * down to half their size), in use + kept stays within writeback_bytes (room
 * for a fresh buffer drops kept ones), writeback_prefault_bytes faults
 * buffers in at start within that bound, and a prefault of more than half of
 * the machine's RAM is refused at start with a message naming the key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"

#define SEED 1313u

static int wb_never(void *ctx, uint32_t rank, size_t ti, size_t c, wd_wbuf *b, wt_errbuf *err)
{
	(void)ctx, (void)rank, (void)ti, (void)c, (void)b;
	return wt_seterr(err, WT_EINVAL, "nothing is queued in this test");
}

static wd_wbuf *wb_get(wd_wback *wb, size_t len)
{
	wd_wbuf *b = NULL;
	wt_errbuf err;
	assert_int_equal(wd_wback_alloc(wb, len, &b, &err), WT_OK);
	size_t n;
	uint8_t *d = (uint8_t *)wd_wbuf_data(b, &n);
	assert_int_equal(n, len);
	memset(d, 0x5a, n); /* all of it is usable */
	return b;
}

static void assert_wb(tw_env *e, uint64_t used, uint64_t kept, uint64_t fresh, uint64_t reused)
{
	wd_wbudget_stats st;
	wd_wbudget_get(e->srv->wbudget, &st);
	assert_int_equal(st.used, used);
	assert_int_equal(st.kept, kept);
	assert_int_equal(st.fresh, fresh);
	assert_int_equal(st.reused, reused);
}

/*
 * Released write-behind buffers are kept for the next ones of their size
 * (whole pages; whole huge pages from 2 MiB on) or of up to half of it
 * (fresh memory is zeroed by the kernel as it is first touched), and what is
 * in use plus what is kept stays within writeback_bytes: room for a fresh
 * buffer is made by dropping kept ones.
 */
static void test_writeback_pool(void **state)
{
	(void)state;
	const uint64_t M = 1u << 20;
	tw_env *e = tw_env_new("wd-wbpool", SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "writeback_bytes", "16M", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	wd_wback *wb;
	assert_int_equal(wd_wback_start(e->srv, wb_never, NULL, &wb, &err), WT_OK);
	wd_wbuf *b[4];
	for (int i = 0; i < 3; i++)
		b[i] = wb_get(wb, 4 * M - 100); /* rounded to 4 MiB */
	assert_wb(e, 12 * M, 0, 3, 0);
	for (int i = 0; i < 3; i++)
		wd_wbuf_unref(b[i]);
	assert_wb(e, 0, 12 * M, 3, 0);
	b[0] = wb_get(wb, 4 * M);
	b[1] = wb_get(wb, 3 * M + 1); /* 4 MiB too */
	assert_wb(e, 8 * M, 4 * M, 3, 2);
	b[2] = wb_get(wb, 6 * M); /* 8 + 6 in use: the kept 4 MiB would pass 16 */
	assert_wb(e, 14 * M, 0, 4, 2);
	b[3] = wb_get(wb, M); /* whole pages below a huge page */
	assert_wb(e, 15 * M, 0, 5, 2);
	for (int i = 0; i < 4; i++)
		wd_wbuf_unref(b[i]);
	assert_wb(e, 0, 15 * M, 5, 2);
	b[0] = wb_get(wb, 6 * M);
	assert_wb(e, 6 * M, 9 * M, 5, 3);
	wd_wbuf_unref(b[0]);
	/* none of 2 MiB kept: one of 4 MiB (at most twice the size) serves */
	b[0] = wb_get(wb, 2 * M);
	assert_wb(e, 4 * M, 11 * M, 5, 4);
	wd_wbuf_unref(b[0]);
	/* 255 pages: the kept buffer of 256 (1 MiB) serves */
	b[0] = wb_get(wb, M - 5000);
	assert_wb(e, M, 14 * M, 5, 5);
	wd_wbuf_unref(b[0]);
	assert_wb(e, 0, 15 * M, 5, 5);
	/* kept: 1, 4, 4 and 6 MiB. A fresh 10 MiB needs 9 of them back: the
	 * smallest go first (1 + 4 + 4), the 6 MiB one stays (largest first
	 * would keep 4 + 1) */
	b[0] = wb_get(wb, 10 * M);
	assert_wb(e, 10 * M, 6 * M, 6, 5);
	wd_wbuf_unref(b[0]);
	assert_int_equal(wd_wback_finish(wb, false, &err), WT_OK);
	tw_env_free(e); /* frees what is kept (ASan: no leak) */

	/* writeback_prefault_bytes: buffers of chunk_bytes faulted in at start,
	 * within writeback_bytes; a production's first buffers are those */
	e = tw_env_new("wd-wbprefault", SEED);
	assert_int_equal(wd_config_set(&e->cfg, "writeback_bytes", "16M", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "writeback_prefault_bytes", "64M", "test", &err),
	                 WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "chunk_bytes", "4M", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	wd_wbudget_stats st = {0};
	for (int i = 0; i < 1000 && st.prefaulted < 16 * M; i++) {
		usleep(10000);
		wd_wbudget_get(e->srv->wbudget, &st);
	}
	usleep(50000); /* it stops at the bound: nothing more comes */
	wd_wbudget_get(e->srv->wbudget, &st);
	printf("prefaulted %llu MiB of 64 asked (writeback_bytes 16M)\n",
	       (unsigned long long)(st.prefaulted / M));
	assert_int_equal(st.prefaulted, 16 * M);
	assert_wb(e, 0, 16 * M, 0, 0);
	assert_int_equal(wd_wback_start(e->srv, wb_never, NULL, &wb, &err), WT_OK);
	b[0] = wb_get(wb, 4 * M);
	assert_wb(e, 4 * M, 12 * M, 0, 1);
	wd_wbuf_unref(b[0]);
	assert_int_equal(wd_wback_finish(wb, false, &err), WT_OK);
	tw_env_free(e);
}

/* More prefault than half of this machine's RAM: start-up fails naming the key
 * (faulting it in would bring the OOM killer, not a slow start). */
static void test_prefault_too_big(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-wbprefault-big", SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "writeback_bytes", "1024T", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "writeback_prefault_bytes", "1024T", "test", &err),
	                 WT_OK);
	wd_server *srv = NULL;
	int rv = wd_server_open(&srv, &e->cfg, &err);
	printf("writeback_prefault_bytes 1024T: %s\n", rv == WT_OK ? "started" : err.msg);
	assert_int_equal(rv, WT_EINVAL);
	assert_null(srv);
	assert_non_null(strstr(err.msg, "writeback_prefault_bytes"));
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_writeback_pool),
	    cmocka_unit_test(test_prefault_too_big),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
