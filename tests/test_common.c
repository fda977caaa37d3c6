/* test_common.c — error strings, dtypes, layout parsing and canonical text, hashing. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/common.h"
#include "weights/weights.h"

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(wt_strerror(WT_OK), "success");
	assert_string_equal(wt_errname(WT_ECORRUPT), "WT_ECORRUPT");
	assert_string_equal(wt_strerror(-1), "unknown error");
	assert_string_equal(wt_strerror(WT_ERR_COUNT_), "unknown error");
	for (int e = 0; e < WT_ERR_COUNT_; e++)
		assert_string_not_equal(wt_strerror(e), "unknown error");
	wt_errbuf err;
	assert_int_equal(wt_seterr(&err, WT_EHASH, "chunk %d", 7), WT_EHASH);
	assert_string_equal(err.msg, "chunk 7");
	wt_errprefix(&err, "fetch '%s'", "m");
	assert_string_equal(err.msg, "fetch 'm': chunk 7");
	assert_int_equal(wt_seterr(NULL, WT_EIO, "x"), WT_EIO);
	/* a message cut at the buffer's end keeps whole UTF-8 characters (a
	 * server's text: "é" is 2 bytes, "€" 3, "𝄞" 4), at every cut offset */
	const char *chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9d\x84\x9e"};
	for (size_t c = 0; c < 3; c++)
		for (size_t lead = 0; lead < 4; lead++) {
			char text[WT_ERRMSG_MAX * 2] = "";
			size_t len = lead;
			memset(text, 'a', lead);
			while (len + 4 < sizeof(text)) {
				memcpy(text + len, chars[c], strlen(chars[c]));
				len += strlen(chars[c]);
			}
			text[len] = '\0';
			wt_seterr(&err, WT_EPROTO, "%s", text);
			assert_true(strlen(err.msg) >= WT_ERRMSG_MAX - 4);
			assert_true(common_utf8_valid(err.msg, strlen(err.msg), false));
			wt_seterr(&err, WT_EPROTO, "%s", text + lead); /* whole characters */
			wt_errprefix(&err, "endpoint %.*s", (int)lead, "aaa");
			assert_true(common_utf8_valid(err.msg, strlen(err.msg), false));
			assert_non_null(strstr(err.msg + WT_ERRMSG_MAX - 8, "..."));
		}
}

static void test_dtype(void **state)
{
	(void)state;
	assert_int_equal(wt_dtype_size(WT_BF16), 2);
	assert_int_equal(wt_dtype_size(WT_F8_E4M3), 1);
	assert_int_equal(wt_dtype_size(WT_I64), 8);
	assert_int_equal(wt_dtype_size(WT_DTYPE_INVALID), 0);
	for (int d = 1; d < WT_DTYPE_COUNT_; d++)
		assert_int_equal(wt_dtype_from_name(wt_dtype_name((wt_dtype)d)), d);
	assert_int_equal(wt_dtype_from_name("bf16"), WT_DTYPE_INVALID);
	assert_true(wt_dtype_is_float(WT_F8_E5M2));
	assert_false(wt_dtype_is_float(WT_I8));
}

static void test_layout_parse(void **state)
{
	(void)state;
	char *argv[] = {"x",         "--tp-size", "4",           "--tp-rank=3", "--quant",
	                "fp8-block", "--exclude", "b.{i}.c",     "--exclude",   "a.",
	                "--exclude", "b.{i}.c",   "--w13-order", "up_gate",     "--other"};
	int argc = (int)(sizeof(argv) / sizeof(argv[0]));
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	int i = 1;
	while (i < argc) {
		int r = wt_layout_parse_arg(&l, argc, argv, &i, &err);
		if (r == 0)
			break;
		assert_int_equal(r, 1);
	}
	assert_int_equal(i, argc - 1); /* stopped at --other */
	assert_int_equal(l.tp_size, 4);
	assert_int_equal(l.tp_rank, 3);
	assert_int_equal(l.quant, WT_QUANT_FP8_BLOCK);
	assert_int_equal(wt_layout_check(&l, &err), WT_OK);
	assert_int_equal(wt_layout_rank_index(&l), 3);
	char buf[512];
	size_t n = wt_layout_format(&l, buf, sizeof(buf));
	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf, "tp=4,ep=1,quant=fp8-block,dtype=source,group=128,vocab_pad=64,"
	                         "w13=up_gate,requant=deny,exclude=[a.;b.{i}.c]");
	char small[8];
	assert_int_equal(wt_layout_format(&l, small, sizeof(small)), n);
	assert_string_equal(small, "tp=4,ep");

	wt_layout c;
	wt_layout_init(&c);
	assert_int_equal(wt_layout_copy(&c, &l), WT_OK);
	assert_int_equal(c.n_exclude, 3);
	assert_ptr_not_equal(c.exclude[0], l.exclude[0]);
	wt_layout_clear(&c);
	wt_layout_clear(&l);
}

static void test_layout_errors(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	char *bad[][2] = {{"--tp-size", "0"},   {"--tp-size", "x"},      {"--quant", "fp9"},
	                  {"--dtype", "f8"},    {"--w13-order", "gate"}, {"--group-size", "4"},
	                  {"--requant", "yes"}, {"--tp-rank", "-1"}};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		int i = 0;
		assert_int_equal(wt_layout_parse_arg(&l, 2, bad[k], &i, &err), -1);
		assert_int_equal(err.code, WT_EINVAL);
		assert_int_equal(i, 0);
	}
	char *missing[] = {"--tp-size"};
	int i = 0;
	assert_int_equal(wt_layout_parse_arg(&l, 1, missing, &i, &err), -1);
	l.tp_rank = 2;
	l.tp_size = 2;
	assert_int_equal(wt_layout_check(&l, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "tp_rank 2"));
	wt_layout_clear(&l);
}

static void test_hash(void **state)
{
	(void)state;
	const char *s = "weightd";
	wt_hash128 h = common_hash128(s, strlen(s));
	uint8_t b[16];
	common_hash128_to_bytes(h, b);
	assert_true(common_hash128_eq(common_hash128_from_bytes(b), h));
	common_hasher *st = common_hasher_new();
	assert_non_null(st);
	common_hasher_update(st, "weig", 4);
	common_hasher_update(st, "htd", 3);
	assert_true(common_hash128_eq(common_hasher_digest(st), h));
	common_hasher_free(st);
	char hex[WT_HASH_HEX_LEN + 1];
	common_hash128_hex(h, hex);
	assert_int_equal(strlen(hex), 32);
	wt_hash128 h2 = common_hash128("weightc", 7);
	assert_false(common_hash128_eq(h, h2));
}

/* Digest of the LCG bytes below, computed with libxxhash's scalar reference code
 * (XXH_VECTOR=XXH_SCALAR), so the dispatched AVX paths are checked against it. */
static void lcg_fill(uint8_t *b, size_t n)
{
	uint64_t st = 42;
	for (size_t i = 0; i < n; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (uint8_t)(st >> 56);
	}
}

static void test_hash_known_answers(void **state)
{
	(void)state;
	char hex[WT_HASH_HEX_LEN + 1];
	common_hash128_hex(common_hash128("weightd", 7), hex);
	assert_string_equal(hex, "0bbdd81fe8d07c74b697bf85e198d079");
	size_t n = (4u << 20) + 12345;
	uint8_t *b = malloc(n);
	assert_non_null(b);
	lcg_fill(b, n);
	common_hash128_hex(common_hash128(b, n), hex);
	assert_string_equal(hex, "f8b78c20de9900a5d3d55232d701d4a9");
	free(b);
}

/* The fused copy+hash gives common_hash128's digest and the same bytes at every
 * length around its 128 KiB pieces; the streaming hasher agrees fed in odd pieces. */
static void test_hash_copy(void **state)
{
	(void)state;
	size_t lens[] = {0,
	                 1,
	                 16,
	                 240,
	                 241,
	                 1024,
	                 (128u << 10) - 1,
	                 128u << 10,
	                 (128u << 10) + 1,
	                 3 * (128u << 10) + 17,
	                 4u << 20};
	size_t max = 4u << 20;
	uint8_t *src = malloc(max), *dst = malloc(max);
	assert_non_null(src);
	assert_non_null(dst);
	lcg_fill(src, max);
	common_hasher *st = common_hasher_new();
	assert_non_null(st);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		wt_hash128 want = common_hash128(src, lens[i]);
		memset(dst, 0, max);
		assert_true(common_hash128_eq(common_hash128_copy(dst, src, lens[i]), want));
		if (lens[i] > 0)
			assert_memory_equal(dst, src, lens[i]);
		common_hasher_reset(st);
		for (size_t off = 0; off < lens[i]; off += 100003)
			common_hasher_update(st, src + off,
			                     lens[i] - off < 100003 ? lens[i] - off : 100003);
		assert_true(common_hash128_eq(common_hasher_digest(st), want));
	}
	common_hasher_free(st);
	free(src);
	free(dst);
}

/* common_find_name over records with the name in the middle of the struct. */
static void test_find_name(void **state)
{
	(void)state;
	typedef struct rec {
		int before;
		const char *name;
		double after;
	} rec;
	const rec r[] = {
	    {0, "a.bias", 0}, {1, "a.weight", 0}, {2, "b", 0}, {3, "lm_head", 0}, {4, "z", 0}};
	size_t n = sizeof(r) / sizeof(r[0]), idx = 99;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(
		    common_find_name(r, n, sizeof(rec), offsetof(rec, name), r[i].name, &idx),
		    WT_OK);
		assert_int_equal(idx, i);
	}
	const char *absent[] = {"", "a", "a.c", "c", "zz"};
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(
		    common_find_name(r, n, sizeof(rec), offsetof(rec, name), absent[i], &idx),
		    WT_ENOTFOUND);
	assert_int_equal(common_find_name(r, 0, sizeof(rec), offsetof(rec, name), "b", &idx),
	                 WT_ENOTFOUND);
}

static void test_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t n;
		bool ok;
	} v[] = {
	    {"", 0, true},
	    {"llama-3.1", 9, true},
	    {"\xc3\xa9t\xc3\xa9", 5, true}, /* été */
	    {"\xe2\x82\xac", 3, true},      /* U+20AC */
	    {"\xf0\x9f\x98\x80", 4, true},  /* U+1F600 */
	    {"\xf4\x8f\xbf\xbf", 4, true},  /* U+10FFFF */
	    {"a\0b", 3, false},             /* NUL */
	    {"\xff", 1, false},             /* never in UTF-8 */
	    {"\x80", 1, false},             /* lone continuation */
	    {"\xc0\xaf", 2, false},         /* overlong '/' */
	    {"\xe0\x80\xaf", 3, false},     /* overlong '/' */
	    {"\xed\xa0\x80", 3, false},     /* surrogate U+D800 */
	    {"\xf4\x90\x80\x80", 4, false}, /* U+110000 */
	    {"\xe2\x82", 2, false},         /* truncated */
	    {"\xc3(", 2, false},            /* bad continuation */
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		printf("utf8 case %zu\n", i);
		assert_int_equal(common_utf8_valid(v[i].s, v[i].n, false), v[i].ok);
		/* scrubbed: valid text stays as it is, any other becomes valid */
		char t[16] = "";
		memcpy(t, v[i].s, v[i].n);
		common_utf8_scrub(t);
		assert_true(common_utf8_valid(t, strlen(t), false));
		if (v[i].ok)
			assert_memory_equal(t, v[i].s, v[i].n);
	}
	assert_true(common_utf8_valid("a\0b", 3, true));
	/* control characters: C0, DEL, C1 (U+009B, CSI); not non-ASCII, not invalid UTF-8 */
	assert_true(common_text_has_control("a\x1b[2J") && common_text_has_control("a\x7f") &&
	            common_text_has_control("a\xc2\x9b") && common_text_has_control("\n"));
	assert_false(common_text_has_control("\xc3\xa9t\xc3\xa9 \xc2\xa0") ||
	             common_text_has_control("b.\xff\xfe") || common_text_has_control(""));
	char cut[] = "r\xc3\xa9v\xe2\x82"; /* a character cut short: one '?' per byte */
	common_utf8_scrub(cut);
	assert_string_equal(cut, "r\xc3\xa9v??");
}

/* A list over its limit has no canonical text: never a truncated one that
 * would name another layout's shards. */
static void test_layout_format_overlong(void **state)
{
	(void)state;
	static char *names[WT_MAX_INCLUDE + 1];
	for (size_t i = 0; i <= WT_MAX_INCLUDE; i++)
		names[i] = "x";
	wt_layout l;
	wt_layout_init(&l);
	char buf[64];
	l.n_exclude = WT_MAX_EXCLUDE + 1; /* past the array: only the count is read */
	assert_int_equal(wt_layout_format(&l, buf, sizeof(buf)), SIZE_MAX);
	assert_string_equal(buf, "");
	l.n_exclude = 0;
	l.raw = 1;
	l.include = names;
	l.n_include = WT_MAX_INCLUDE + 1;
	assert_int_equal(wt_layout_format(&l, buf, sizeof(buf)), SIZE_MAX);
	l.n_include = 2; /* at the limit's side: sorted, de-duplicated */
	assert_true(wt_layout_format(&l, buf, sizeof(buf)) < sizeof(buf));
	assert_string_equal(buf, "raw,include=[x]");
	l.include = NULL;
	l.n_include = 0;
	l.raw = 0;
}

/* Every layout number is capped at values engines use; the error names value and limit.
 * Before the caps, vocab_pad 2^22 turned a 3 MB model into a 4.3 GB shard. */
static void test_layout_limits(void **state)
{
	(void)state;
	struct {
		uint32_t tp, ep, group, pad;
		int w13;
		const char *a, *b;
	} bad[] = {
	    {1, 1, 128, 4194304, 0, "vocab_pad 4194304", "limit 4096"},
	    {1, 1, 128, 4097, 0, "vocab_pad 4097", "64..1024"},
	    {2048, 1, 128, 64, 0, "tp_size 2048", "1..1024"},
	    {1, 1025, 128, 64, 0, "ep_size 1025", "1..1024"},
	    {64, 128, 128, 64, 0, "8192 ranks", "limit 4096"},
	    {1, 1, 2048, 64, 0, "group_size 2048", "8..1024"},
	    {1024, 1, 128, 4095, 0, "multiple of 4193280", "limit 65536"},
	    {1, 1, 128, 64, 2, "w13_up_gate 2", "0 or 1"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = bad[k].tp;
		l.ep_size = bad[k].ep;
		l.group_size = bad[k].group;
		l.vocab_pad = bad[k].pad;
		l.w13_up_gate = bad[k].w13;
		wt_errbuf err = {0};
		assert_int_equal(wt_layout_check(&l, &err), WT_EINVAL);
		if (!strstr(err.msg, bad[k].a) || !strstr(err.msg, bad[k].b))
			fail_msg("case %zu: '%s' lacks '%s' / '%s'", k, err.msg, bad[k].a,
			         bad[k].b);
	}
	/* The largest values engines use still pass. */
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 64;
	l.ep_size = 64;
	l.group_size = 1024;
	l.vocab_pad = 4096;
	wt_errbuf err = {0};
	assert_int_equal(wt_layout_check(&l, &err), WT_OK);
	/* The CLI parser accepts the number; the check refuses it. */
	char *argv[] = {"--vocab-pad", "4194304"};
	int i = 0;
	wt_layout_init(&l);
	assert_int_equal(wt_layout_parse_arg(&l, 2, argv, &i, &err), 1);
	assert_int_equal(wt_layout_check(&l, &err), WT_EINVAL);
}

/* A layout's exclude patterns are checked by wt_layout_check (so a client and the daemon's
 * wire decoder refuse them before any regcomp): each pattern's limits, then the total. */
static void test_layout_exclude_limits(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err = {0};
	assert_int_equal(wt_layout_add_exclude(&l, "re:((a{1,100}){1,100}){1,100}", &err), WT_OK);
	assert_int_equal(wt_layout_check(&l, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "re:((a{1,100}){1,100}){1,100}"));
	assert_non_null(strstr(err.msg, "1000 regex positions"));
	wt_layout_clear(&l);
	/* Five patterns of ~900 positions each: each fine, together over 4096. */
	for (int k = 0; k < 5; k++) {
		char pat[64];
		snprintf(pat, sizeof(pat), "re:x%d[a-z]{1,440}", k);
		assert_int_equal(wt_layout_add_exclude(&l, pat, &err), WT_OK);
		if (k == 0)
			assert_int_equal(wt_layout_check(&l, &err), WT_OK);
	}
	assert_int_equal(wt_layout_check(&l, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "limit of 4096"));
	wt_layout_clear(&l);
}

typedef struct {
	int n;
	int level;
	char msg[8192];
} log_capture;

static void capture(void *ctx, int level, const char *msg)
{
	log_capture *c = ctx;
	c->n++;
	c->level = level;
	snprintf(c->msg, sizeof(c->msg), "%s", msg);
}

/* A client string cannot forge a log line or drive the terminal: control bytes, DEL, C1
 * controls and invalid UTF-8 reach the sink escaped; valid UTF-8 and plain text pass. */
/* Threads log while another swaps the sink and the level (as SIGHUP does): each
 * sink checks that it was called with its own context, so a reader that paired
 * one sink's function with another's context fails; under ASan/UBSan the
 * swaps must be clean. */
typedef struct race_sink {
	_Atomic uint64_t calls, wrong;
} race_sink;

static race_sink race_a, race_b;

static void race_fn_a(void *ctx, int level, const char *msg)
{
	(void)level;
	(void)msg;
	atomic_fetch_add(&race_a.calls, 1);
	if (ctx != &race_a)
		atomic_fetch_add(&race_a.wrong, 1);
}

static void race_fn_b(void *ctx, int level, const char *msg)
{
	(void)level;
	(void)msg;
	atomic_fetch_add(&race_b.calls, 1);
	if (ctx != &race_b)
		atomic_fetch_add(&race_b.wrong, 1);
}

static _Atomic int race_stop;

static void *race_logger(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_stop))
		WT_LOG(WT_LOG_NOTICE, "line %d", 1);
	return NULL;
}

static void test_log_sink_swap(void **state)
{
	(void)state;
	pthread_t t[3];
	common_log_set(race_fn_a, &race_a, WT_LOG_NOTICE);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race_logger, NULL), 0);
	/* swap at least 2000 times and until both sinks got lines (a busy CI machine
	 * may not schedule the loggers during the first 2000 swaps); 20 s at most */
	time_t until = time(NULL) + 20;
	for (int k = 0;
	     k < 2000 || ((race_a.calls < 100 || race_b.calls < 100) && time(NULL) < until); k++) {
		if (k % 2)
			common_log_set(race_fn_b, &race_b, k % 3 ? WT_LOG_NOTICE : WT_LOG_ERR);
		else
			common_log_set(race_fn_a, &race_a, WT_LOG_NOTICE);
	}
	common_log_set(race_fn_a, &race_a, WT_LOG_NOTICE);
	atomic_store(&race_stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("log sink swaps: %llu + %llu lines, %llu + %llu with a foreign context\n",
	       (unsigned long long)race_a.calls, (unsigned long long)race_b.calls,
	       (unsigned long long)race_a.wrong, (unsigned long long)race_b.wrong);
	assert_true(race_a.calls > 0 && race_b.calls > 0);
	assert_int_equal(race_a.wrong + race_b.wrong, 0);
	common_log_set(NULL, NULL, WT_LOG_NOTICE);
}

static void test_log_escape(void **state)
{
	(void)state;
	log_capture c = {0};
	common_log_set(capture, &c, WT_LOG_INFO);
	const char *model = "m\nFAKE 2026-01-01T00:00:00Z err: x\x1b[31m\r\t\x7f\xff\xc2\x9b"
	                    "\xc3\xa9\xe2\x82\xac\xed\xa0\x80\xf0\x9f\x98\x80\xc3";
	WT_LOG(WT_LOG_WARNING, "model '%s': refused", model);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.level, WT_LOG_WARNING);
	assert_string_equal(c.msg, "model 'm\\nFAKE 2026-01-01T00:00:00Z err: x\\x1b[31m\\r\\t"
	                           "\\x7f\\xff\\xc2\\x9b\xc3\xa9\xe2\x82\xac\\xed\\xa0\\x80"
	                           "\xf0\x9f\x98\x80\\xc3': refused");
	assert_null(strchr(c.msg, '\n'));
	WT_LOG(WT_LOG_INFO, "plain %s line", "ascii");
	assert_string_equal(c.msg, "plain ascii line");
	/* A message at the 1023-byte cap of control bytes escapes in full (4 bytes each). */
	char big[1100];
	memset(big, 0x01, sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	WT_LOG(WT_LOG_ERR, "%s", big);
	assert_int_equal(strlen(c.msg), 4 * 1023);
	assert_memory_equal(c.msg, "\\x01\\x01", 8);
	WT_LOG(WT_LOG_DEBUG, "off");
	assert_int_equal(c.n, 3);
	common_log_set(NULL, NULL, WT_LOG_NOTICE);
}

/* common_timespec_in: ms after now on the given clock, tv_nsec normalised
 * (a carry into tv_sec), for every remainder of ms around the second. */
static void test_timespec_in(void **state)
{
	(void)state;
	const uint64_t ms[] = {0, 1, 100, 999, 1000, 1001, 1999, 2500, 86400000};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		struct timespec before, after;
		clock_gettime(CLOCK_MONOTONIC, &before);
		struct timespec t = common_timespec_in(CLOCK_MONOTONIC, ms[i]);
		clock_gettime(CLOCK_MONOTONIC, &after);
		assert_true(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
		int64_t at = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
		int64_t lo =
		    (int64_t)before.tv_sec * 1000000000 + before.tv_nsec + (int64_t)ms[i] * 1000000;
		int64_t hi =
		    (int64_t)after.tv_sec * 1000000000 + after.tv_nsec + (int64_t)ms[i] * 1000000;
		assert_true(at >= lo && at <= hi);
	}
}

/* common_dl_bind: every name into its slot of the table, or the first name the library
 * lacks (libc's own functions through dlopen(NULL), the program's global scope). */
typedef struct dl_table {
	size_t (*len)(const char *);
	int (*cmp)(const char *, const char *);
} dl_table;

static void test_dl_bind(void **state)
{
	(void)state;
	void *h = dlopen(NULL, RTLD_NOW);
	assert_non_null(h);
	static const common_dl_sym ok[] = {{"strlen", offsetof(dl_table, len)},
	                                   {"strcmp", offsetof(dl_table, cmp)}};
	dl_table t = {0};
	assert_null(common_dl_bind(h, ok, 2, &t));
	assert_int_equal(t.len("abc"), 3);
	assert_true(t.cmp("a", "b") < 0);
	static const common_dl_sym bad[] = {{"strlen", offsetof(dl_table, len)},
	                                    {"wt_no_such_function", offsetof(dl_table, cmp)},
	                                    {"strcmp", offsetof(dl_table, cmp)}};
	dl_table u = {0};
	assert_string_equal(common_dl_bind(h, bad, 3, &u), "wt_no_such_function");
	assert_null(u.cmp); /* the names after the missing one are not looked for */
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash_known_answers),
	    cmocka_unit_test(test_hash_copy),
	    cmocka_unit_test(test_find_name),
	    cmocka_unit_test(test_strerror),
	    cmocka_unit_test(test_dtype),
	    cmocka_unit_test(test_layout_parse),
	    cmocka_unit_test(test_layout_errors),
	    cmocka_unit_test(test_hash),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_layout_limits),
	    cmocka_unit_test(test_layout_format_overlong),
	    cmocka_unit_test(test_layout_exclude_limits),
	    cmocka_unit_test(test_log_escape),
	    cmocka_unit_test(test_log_sink_swap),
	    cmocka_unit_test(test_timespec_in),
	    cmocka_unit_test(test_dl_bind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
