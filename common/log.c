/* log.c — the process-wide log sink (daemon and CLI; libweights takes a callback instead). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"

static void default_sink(void *ctx, int level, const char *msg);

/*
 * The sink and the level are read by every thread that logs while a SIGHUP
 * (or a test) may change them: the level is atomic, and the sink is an
 * immutable (fn, ctx) pair published by one atomic pointer, so a reader never
 * pairs one sink's function with another's context. Replaced pairs stay
 * linked (a few bytes per common_log_set): a thread may still be using one.
 */
typedef struct log_sink {
	common_log_fn fn;
	void *ctx;
	const struct log_sink *prev; /* keeps replaced pairs reachable */
} log_sink;

static const log_sink default_pair = {default_sink, NULL, NULL};
static _Atomic(const log_sink *) log_cur = &default_pair;
static _Atomic int log_max = WT_LOG_NOTICE;

static const char *level_name(int level)
{
	switch (level) {
	case WT_LOG_ERR:
		return "err";
	case WT_LOG_WARNING:
		return "warning";
	case WT_LOG_NOTICE:
		return "notice";
	case WT_LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

static void default_sink(void *ctx, int level, const char *msg)
{
	(void)ctx;
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s %s: %s\n", ts, level_name(level), msg);
}

void common_log_set(common_log_fn fn, void *ctx, int max_level)
{
	log_sink *ls = malloc(sizeof(*ls));
	if (ls != NULL) { /* out of memory: keep the current sink, change the level */
		ls->fn = fn ? fn : default_sink;
		ls->ctx = ctx;
		ls->prev = atomic_load(&log_cur);
		atomic_store(&log_cur, ls);
	}
	atomic_store(&log_max, max_level);
}

int common_log_level(void)
{
	return atomic_load_explicit(&log_max, memory_order_relaxed);
}

int common_log_level_from_name(const char *name)
{
	static const char *const names[] = {"err", "warning", "notice", "info", "debug"};
	for (int i = 0; i < 5; i++)
		if (strcmp(name, names[i]) == 0)
			return WT_LOG_ERR + i;
	return -1;
}

void common_log(int level, const char *fmt, ...)
{
	if (level > common_log_level())
		return;
	const log_sink *ls = atomic_load(&log_cur);
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!common_text_needs_escape(msg)) {
		ls->fn(ls->ctx, level, msg);
		return;
	}
	/* a logged string (a model name or pattern from a client) cannot start a new
	 * line or move the terminal cursor */
	char line[4 * sizeof(msg) + 1];
	common_text_escape(msg, line, sizeof(line), false);
	ls->fn(ls->ctx, level, line);
}

void common_assert_fail(const char *cond, const char *file, int line)
{
	fprintf(stderr, "weightd: assertion failed: %s (%s:%d)\n", cond, file, line);
	abort();
}

uint64_t common_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct timespec common_timespec_in(clockid_t clk, uint64_t ms)
{
	struct timespec t;
	clock_gettime(clk, &t);
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}
