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

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if s[0] starts none, or it encodes
 * a C1 control (U+0080..U+009F: some terminals take U+009B as an escape introducer). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 && !(c == 0xc2 && s[1] < 0xa0) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80
		           ? 4
		           : 0;
	}
	return 0;
}

/* Does msg need escaping (a control byte, DEL or any non-ASCII byte)? The common case,
 * plain ASCII, is one pass with no copy. */
static bool needs_escape(const char *msg)
{
	for (const unsigned char *p = (const unsigned char *)msg; *p != '\0'; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return true;
	return false;
}

/* Copy msg into out (cap >= 4 * strlen(msg) + 1) with control bytes, DEL, C1 controls and
 * bytes that are not valid UTF-8 written as \n, \r, \t or \xNN: a logged string (a model
 * name or pattern from a client) cannot start a new line or move the terminal cursor. */
static void escape_line(const char *msg, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)msg;
	size_t o = 0;
	while (*p != '\0' && o + 5 <= cap) {
		size_t n = *p >= 0x80 ? utf8_len(p) : 0;
		if (n > 0) {
			memcpy(out + o, p, n);
			o += n;
			p += n;
			continue;
		}
		unsigned char c = *p++;
		if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
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
	if (!needs_escape(msg)) {
		ls->fn(ls->ctx, level, msg);
		return;
	}
	char line[4 * sizeof(msg) + 1];
	escape_line(msg, line, sizeof(line));
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
