/*
 * stopbound.c — a bound on how long a stopping daemon may take: armed before
 * wd_server_close, a thread ends the process with _exit(code) and an error in
 * the log unless the close returned (disarmed) within the bound.
 *
 * Why: nng 1.5.2's socket close has been seen to wait forever after every
 * request was drained (fetch_faults.sh under the emulated CI, 2026-12-03:
 * wt-faultyd's main thread in nng_close from wd_server_close, every nng thread
 * idle on its condition variable, nothing of ours running), so SIGTERM never
 * ended the process. The likely cause is nng's own (issue #1813, fixed in nng
 * 1.8.0 by pull request #1824): an aio of nng's whose task was prepared but
 * never started, with no cancel function, made nni_aio_stop wait forever on
 * the socket's close; it is not ours to work around from the public API.
 * By then nothing is served and every committed shard is
 * on disk; the cache is crash-safe (a kill -9 at any point leaves no partial
 * shard), so ending the process there loses nothing a clean close would keep.
 * One bound armed at a time.
 *
 * wd_stop runs a daemon's stop in two bounded parts: the drain, which ends with
 * the cache closed (status 1 past drain_timeout_ms + WD_STOP_SLACK_MS: our own
 * close is stuck), then the socket close (status 0 past WD_SOCKET_CLOSE_MS:
 * the stop is done, only nng's close is stuck). The emulated CI saw the TSan
 * build's weightd still in its stop 20 s after SIGTERM, with every request
 * drained (test_weightd_flow test_sigterm, 2026-12-06), where the one bound of
 * 40 s used to end it with status 1.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "weightd/weightd.h"

static pthread_mutex_t sb_lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sb_cv;
static pthread_t sb_thread;
static bool sb_armed, sb_done;
static uint64_t sb_ms;
static int sb_code;
static const char *sb_what;

static void *sb_main(void *arg)
{
	(void)arg;
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += (time_t)(sb_ms / 1000);
	dl.tv_nsec += (long)(sb_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&sb_lk);
	int rc = 0;
	while (!sb_done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&sb_cv, &sb_lk, &dl);
	bool fire = !sb_done;
	pthread_mutex_unlock(&sb_lk);
	if (fire) {
		WT_LOG(sb_code == 0 ? WT_LOG_WARNING : WT_LOG_ERR,
		       "stop: %s not finished %llu ms after it began (nng 1.5.2's socket close can "
		       "wait forever); exiting with status %d: nothing is served any more and "
		       "the cache is crash-safe",
		       sb_what, (unsigned long long)sb_ms, sb_code);
		_exit(sb_code);
	}
	return NULL;
}

int wd_stop_bound_arm(uint64_t ms, int code, const char *what)
{
	pthread_mutex_lock(&sb_lk);
	if (sb_armed) {
		pthread_mutex_unlock(&sb_lk);
		return WT_EINVAL;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sb_cv, &ca);
	pthread_condattr_destroy(&ca);
	sb_ms = ms;
	sb_code = code;
	sb_what = what != NULL ? what : "the close";
	sb_done = false;
	int rc = pthread_create(&sb_thread, NULL, sb_main, NULL);
	sb_armed = rc == 0;
	if (rc != 0)
		pthread_cond_destroy(&sb_cv);
	pthread_mutex_unlock(&sb_lk);
	return rc == 0 ? WT_OK : WT_ENOMEM;
}

void wd_stop_bound_disarm(void)
{
	pthread_mutex_lock(&sb_lk);
	if (!sb_armed) {
		pthread_mutex_unlock(&sb_lk);
		return;
	}
	sb_done = true;
	pthread_cond_signal(&sb_cv);
	pthread_mutex_unlock(&sb_lk);
	pthread_join(sb_thread, NULL);
	pthread_mutex_lock(&sb_lk);
	sb_armed = false;
	pthread_cond_destroy(&sb_cv);
	pthread_mutex_unlock(&sb_lk);
}

size_t wd_stop(wd_server *s, uint64_t drain_ms, void (*stopped)(void *ctx, size_t left), void *ctx)
{
	wd_stop_bound_arm(drain_ms + WD_STOP_SLACK_MS, 1, "the drain");
	size_t left = wd_server_drain(s);
	wd_stop_bound_disarm();
	if (stopped != NULL)
		stopped(ctx, left);
	wd_stop_bound_arm(WD_SOCKET_CLOSE_MS, 0, "the socket close");
	wd_server_close(s);
	wd_stop_bound_disarm();
	return left;
}
