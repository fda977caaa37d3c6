/*
 * test_weightd_stopbound.c — the bound on a daemon's stop (weightd/stopbound.c):
 * armed and not disarmed in time, the process ends with the given status and an
 * error naming the bound; disarmed in time, nothing happens; one bound per
 * process. Each case runs in a forked child (the bound ends its process).
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
	if (wd_stop_bound_arm(200, 7) != WT_OK)
		_exit(98);
	sleep(20); /* a close that never returns */
}

static void quick_close(void)
{
	if (wd_stop_bound_arm(200, 7) != WT_OK)
		_exit(98);
	usleep(20000); /* a close that returns */
	wd_stop_bound_disarm();
	usleep(400000);         /* past the bound: it must not fire any more */
	wd_stop_bound_disarm(); /* a second disarm is a no-op */
	/* armed again after a disarm, and once only */
	if (wd_stop_bound_arm(5000, 7) != WT_OK || wd_stop_bound_arm(5000, 8) != WT_EINVAL)
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
	assert_non_null(strstr(text, "not finished 200 ms after it began"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stuck_close_ends),
	    cmocka_unit_test(test_quick_close_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
