/*
 * test_weightd_stopbound.c — the bound on a daemon's stop (weightd/stopbound.c):
 * armed and not disarmed in time, the process ends with the given status and an
 * error naming what did not finish; disarmed in time, nothing happens; one bound
 * armed at a time. wd_stop with a socket close that never returns (nng 1.5.2's)
 * ends with status 0 once the cache is closed. Each case runs in a forked child
 * (the bound ends its process).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "tests/util/testutil.h"
#include "cache/cache.h"
#include "test_weightd_util.h"
#include "weightd/weightd.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Run body in a child whose stderr goes to log; its exit status (-1: not an exit)
 * and how long it ran. */
static int in_child(void (*body)(void), const char *log, double *secs)
{
	double t0 = now_s();
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(30); /* never outlive a broken bound */
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(99);
		body();
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*secs = now_s() - t0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void stuck_close(void)
{
	if (wd_stop_bound_arm(200, 7, "the drain") != WT_OK)
		_exit(98);
	sleep(20); /* a close that never returns */
}

static void quick_close(void)
{
	if (wd_stop_bound_arm(200, 7, "the drain") != WT_OK)
		_exit(98);
	usleep(20000); /* a close that returns */
	wd_stop_bound_disarm();
	usleep(400000);         /* past the bound: it must not fire any more */
	wd_stop_bound_disarm(); /* a second disarm is a no-op */
	/* armed again after a disarm, and once only */
	if (wd_stop_bound_arm(5000, 7, "a") != WT_OK ||
	    wd_stop_bound_arm(5000, 8, "b") != WT_EINVAL)
		_exit(97);
	wd_stop_bound_disarm();
}

static void test_stuck_close_ends(void **state)
{
	(void)state;
	char log[] = "/tmp/wt-stopbound-XXXXXX";
	int fd = mkstemp(log);
	assert_true(fd >= 0);
	close(fd);
	double secs;
	int code = in_child(stuck_close, log, &secs);
	printf("stuck close: exit %d after %.2f s\n", code, secs);
	assert_int_equal(code, 7);
	assert_true(secs < 10.0); /* not the 20 s sleep, nor the 30 s alarm */
	size_t n = 0;
	char *text = tu_read_file(log, &n);
	unlink(log);
	assert_non_null(text);
	printf("its log: %s", text);
	assert_non_null(strstr(text, "err: stop: the drain not finished 200 ms after it began"));
	assert_non_null(strstr(text, "exiting with status 7"));
	free(text);
}

static void test_quick_close_kept(void **state)
{
	(void)state;
	char log[] = "/tmp/wt-stopbound-XXXXXX";
	int fd = mkstemp(log);
	assert_true(fd >= 0);
	close(fd);
	double secs;
	int code = in_child(quick_close, log, &secs);
	unlink(log);
	printf("quick close: exit %d after %.2f s\n", code, secs);
	assert_int_equal(code, 0);
}

/* ---- wd_stop: the drain closes the cache, then the socket close is bounded ---- */

static char hang_note[64] = "/tmp/wt-stopnote-XXXXXX";
static tw_env *hang_env;

/* Stands in for nng 1.5.2's socket close that never returns. Called after the
 * drain: the cache must be closed by then (RocksDB refuses a second open of a
 * database this process holds), with its shard in it. */
static void hang_in_socket_close(void *ctx)
{
	(void)ctx;
	cache *c;
	wt_errbuf err;
	cache_opts o;
	cache_opts_init(&o);
	o.chunk_bytes = 16384;
	char line[160];
	if (cache_open(&c, hang_env->cache, &o, &err) != WT_OK) {
		snprintf(line, sizeof(line), "cache still open: %.120s\n", err.msg);
	} else {
		cache_stats cs;
		cache_stats_get(c, &cs);
		cache_close(c);
		snprintf(line, sizeof(line), "cache closed, %llu shards\n",
		         (unsigned long long)cs.shards);
	}
	FILE *f = fopen(hang_note, "a");
	if (f != NULL) {
		fputs(line, f);
		fclose(f);
	}
	sleep(20); /* never returns in time */
}

static void note_stopped(void *ctx, size_t left)
{
	FILE *f = fopen(ctx, "a");
	if (f != NULL) {
		fprintf(f, "stopped, %zu left\n", left);
		fclose(f);
	}
}

static void stop_with_hung_socket(void)
{
	if (tw_start(hang_env) != WT_OK)
		_exit(96);
	nng_socket s = tw_dial(hang_env->url);
	tw_reply m = tw_manifest(s, "llama", 1, 0); /* one shard committed */
	if (m.rv != WT_OK || m.r->body_case != WEIGHTS__REPLY__BODY_MANIFEST)
		_exit(95);
	tw_reply_free(&m);
	nng_close(s);
	hang_env->faults.before_socket_close = hang_in_socket_close;
	wd_stop(hang_env->srv, 1000, note_stopped, hang_note);
	_exit(94); /* the bound ends the process first */
}

static void test_socket_close_hang(void **state)
{
	(void)state;
	char log[] = "/tmp/wt-stopbound-XXXXXX";
	int fd = mkstemp(log);
	assert_true(fd >= 0);
	close(fd);
	fd = mkstemp(hang_note);
	assert_true(fd >= 0);
	close(fd);
	hang_env = tw_env_new("wd-stophang", 7); /* here: the parent removes it */
	double secs;
	int code = in_child(stop_with_hung_socket, log, &secs);
	tw_env_free(hang_env); /* its server lived in the child */
	size_t n = 0;
	char *text = tu_read_file(log, &n);
	char *note = tu_read_file(hang_note, &n);
	unlink(log);
	unlink(hang_note);
	printf("hung socket close: exit %d after %.2f s\nits log: %s\nits notes: %s", code, secs,
	       text ? text : "(none)", note ? note : "(none)");
	assert_int_equal(code, 0);
	assert_true(secs < 15.0); /* the 3 s bound, not the 20 s hang nor the 30 s alarm */
	assert_non_null(text);
	assert_non_null(strstr(text, "warning: stop: the socket close not finished 3000 ms"));
	assert_non_null(strstr(text, "exiting with status 0"));
	assert_non_null(note);
	/* in this order: the caller's clean-up, then the hook with the cache closed */
	assert_non_null(strstr(note, "stopped, 0 left\ncache closed, 1 shards\n"));
	free(text);
	free(note);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stuck_close_ends),
	    cmocka_unit_test(test_quick_close_kept),
	    cmocka_unit_test(test_socket_close_hang),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
