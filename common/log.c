/* log.c — the process-wide log sink (daemon and CLI; libweights takes a callback instead). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"

static void default_sink(void *ctx, int level, const char *msg);

static common_log_fn log_fn = default_sink;
static void *log_ctx;
static int log_max = WT_LOG_NOTICE;

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
	log_fn = fn ? fn : default_sink;
	log_ctx = ctx;
	log_max = max_level;
}

int common_log_level(void)
{
	return log_max;
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
	if (level > log_max)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(log_ctx, level, msg);
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
