/* test_weightd_config.c — the daemon's config table: defaults, file parsing
 * with file:line errors, flags over the file, byte suffixes, the sample conf.
 * Hostile files, flags and combinations: test_weightd_config_hostile.c. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "weightd/weightd.h"

#include "tests/test_weightd_config_util.h"

static void test_defaults(void **state)
{
	(void)state;
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	assert_int_equal(c.listen.n, 1);
	assert_string_equal(c.listen.v[0], "tcp://127.0.0.1:7450");
	assert_string_equal(c.models_dir, "./models");
	assert_string_equal(c.cache_dir, "./weightd-cache");
	assert_int_equal(c.model.n, 0);
	assert_int_equal(c.chunk_bytes, 4u << 20);
	assert_int_equal(c.max_request_bytes, 64u << 10);
	assert_int_equal(c.workers, 4);
	assert_int_equal(c.log_level, WT_LOG_NOTICE);
	assert_string_equal(c.auth_token, "");
	wd_config_free(&c);
	wd_config_free(&c); /* idempotent */
	wd_config_free(NULL);
}

static void test_bytes_suffixes(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(wd_config_parse_bytes("512", &v), WT_OK);
	assert_int_equal(v, 512);
	assert_int_equal(wd_config_parse_bytes("64K", &v), WT_OK);
	assert_int_equal(v, 65536);
	assert_int_equal(wd_config_parse_bytes("4M", &v), WT_OK);
	assert_int_equal(v, 4u << 20);
	assert_int_equal(wd_config_parse_bytes("2GiB", &v), WT_OK);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(wd_config_parse_bytes("1T", &v), WT_OK);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(wd_config_parse_bytes("1P", &v), WT_OK); /* the ranges' top: 1P */
	assert_int_equal(v, 1ull << 50);
	assert_int_equal(wd_config_parse_bytes("16385P", &v), WT_EOVERFLOW);
	assert_int_equal(wd_config_parse_bytes("1g", &v), WT_OK);
	assert_int_equal(v, 1ull << 30);
	assert_int_equal(wd_config_parse_bytes("4X", &v), WT_EINVAL);
	assert_int_equal(wd_config_parse_bytes("-4", &v), WT_EINVAL);
	assert_int_equal(wd_config_parse_bytes("", &v), WT_EINVAL);
	assert_int_equal(wd_config_parse_bytes("4MM", &v), WT_EINVAL);
	assert_int_equal(wd_config_parse_bytes("99999999999999999999", &v), WT_EOVERFLOW);
	assert_int_equal(wd_config_parse_bytes("17179869184T", &v), WT_EOVERFLOW);
}

static void test_file_and_flags(void **state)
{
	(void)state;
	const char *path = write_conf("a.conf", "# comment\n"
	                                        "[weightd]\n"
	                                        "listen = tcp://127.0.0.1:9000\n"
	                                        "listen = ipc:///tmp/x.sock\n"
	                                        "cache_max_bytes = 2G\n"
	                                        "workers = 8\n"
	                                        "model = a=file:///data/a\n"
	                                        "log_level = debug\n");
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *argv[] = {"weightd",    "--workers", "2",         "--config",
	                (char *)path, "--model",   "b=/data/b", "--chunk-bytes=64K"};
	wt_errbuf err;
	int rv = wd_config_parse_args(&c, 8, argv, &err);
	assert_int_equal(rv, WT_OK);
	/* file values */
	assert_int_equal(c.listen.n, 2);
	assert_string_equal(c.listen.v[0], "tcp://127.0.0.1:9000");
	assert_string_equal(c.listen.v[1], "ipc:///tmp/x.sock");
	assert_int_equal(c.cache_max_bytes, 2ull << 30);
	assert_int_equal(c.log_level, WT_LOG_DEBUG);
	/* flags override the file, wherever --config stands */
	assert_int_equal(c.workers, 2);
	assert_int_equal(c.chunk_bytes, 64 * 1024);
	/* a list set by flags replaces the file's list */
	assert_int_equal(c.model.n, 1);
	assert_string_equal(c.model.v[0], "b=/data/b");
	/* set by name: file and flags count, defaults do not */
	assert_true(wd_config_is_set(&c, "workers"));         /* flag */
	assert_true(wd_config_is_set(&c, "cache_max_bytes")); /* file */
	assert_false(wd_config_is_set(&c, "models_dir"));     /* default */
	assert_false(wd_config_is_set(&c, "no_such_key"));
	assert_int_equal(wd_config_set(&c, "models_dir", "/m", "test", &err), WT_OK);
	assert_true(wd_config_is_set(&c, "models_dir"));
	wd_config_free(&c);
}

/* Each bad file gives WT_ECONFIG with "path:line:" naming the offending line. */
static void test_file_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int line;
		const char *needle;
	} cases[] = {
	    {"workers = 4\nbogus_key = 1\n", 2, "unknown key 'bogus_key'"},
	    {"\n\nworkers = 0\n", 3, "workers 0 is out of range; use 1..256"},
	    {"workers = 257\n", 1, "out of range"},
	    {"workers = four\n", 1, "not a non-negative decimal integer"},
	    {"cache_max_bytes = 12Q\n", 1, "not a byte count"},
	    {"chunk_bytes = 512M\n", 1, "chunk_bytes 536870912 is out of range"},
	    {"log_level = loud\n", 1, "not a level"},
	    {"model = nameonly\n", 1, "not NAME=URI"},
	    {"model_override = ds={\"architectures\": [\n", 1,
	     "model_override for 'ds': config "
	     "override: not valid JSON"},
	    {"model_override = {\"a\": 1}\n", 1, "is not NAME=JSON"},
	    {"model_override = ds=[\"X\"]\n", 1, "a JSON object is needed"},
	    {"model_override = ds={}\n", 1, "the object is empty"},
	    {"model_override = ds=\n", 1, "empty; give one JSON object"},
	    {"model_override = ds={\"a\": 1}\nmodel_override = ds={\"b\": 2}\n", 2,
	     "given twice; put every key into one JSON object"},
	    {"[other]\nworkers = 2\n", 2, "unknown section [other]"},
	    {"workers = 2\nthis line has no equals\n", 2, "syntax error"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = write_conf("bad.conf", cases[i].text);
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		wt_errbuf err;
		int rv = wd_config_load_file(&c, path, &err);
		char want[300];
		snprintf(want, sizeof(want), "%s:%d: ", path, cases[i].line);
		printf("case %zu: %s\n", i, err.msg);
		assert_int_equal(rv, WT_ECONFIG);
		assert_non_null(strstr(err.msg, want));
		assert_non_null(strstr(err.msg, cases[i].needle));
		wd_config_free(&c);
	}
	/* over-long line */
	char big[400];
	memset(big, 'x', sizeof(big));
	memcpy(big, "server_id = ", 12);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	const char *path = write_conf("long.conf", big);
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	wt_errbuf err;
	assert_int_equal(wd_config_load_file(&c, path, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, ":1: line longer than"));
	/* missing file */
	assert_int_equal(wd_config_load_file(&c, "/nonexistent/w.conf", &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "/nonexistent/w.conf: cannot open"));
	/* a folder: it opens and read as an empty file (the defaults, silently) */
	assert_int_equal(wd_config_load_file(&c, tmpdir, &err), WT_ECONFIG);
	printf("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "not a regular file"));
	wd_config_free(&c);
}

/* model_override: parsed (file or flag) beside its model key; one that names no model key is
 * refused by wd_config_check (which ends the flags' parse); the flag form --model-override. */
static void test_model_override(void **state)
{
	(void)state;
	const char *path = write_conf("ov.conf", "model = ds=file:///data/ds\n"
	                                         "model_override = ds={\"architectures\": "
	                                         "[\"DeepSeekMTPModel\"]}\n");
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	wt_errbuf err = {0};
	assert_int_equal(wd_config_load_file(&c, path, &err), WT_OK);
	assert_int_equal(c.model_override.n, 1);
	assert_string_equal(c.model_override.v[0],
	                    "ds={\"architectures\": [\"DeepSeekMTPModel\"]}");
	char *argv[] = {"weightd", "--listen", "ipc:///tmp/x", "--models-dir", tmpdir};
	assert_int_equal(wd_config_parse_args(&c, 5, argv, &err), WT_OK);
	assert_int_equal(wd_config_check(&c, &err), WT_OK);
	wd_config_free(&c);
	/* naming no model key */
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *argv2[] = {"weightd", "--listen",     "ipc:///tmp/x",     "--models-dir",  tmpdir,
	                 "--model", "ds=file:///d", "--model-override", "dsx={\"a\": 1}"};
	/* (the flags' parse ends with wd_config_check) */
	assert_int_equal(wd_config_parse_args(&c, 9, argv2, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "model_override names 'dsx', which no model key defines"));
	wd_config_free(&c);
	/* the flag's value checked as the file's */
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *argv3[] = {"weightd", "--model-override", "ds=[1]"};
	assert_int_equal(wd_config_parse_args(&c, 3, argv3, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "--model-override"));
	assert_non_null(strstr(err.msg, "a JSON object is needed"));
	wd_config_free(&c);
}

static void test_flag_errors(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b, *needle;
	} cases[] = {
	    {"--no-such-flag", "1", "unknown flag '--no-such-flag'"},
	    {"--work", "3", "'--work' is not a flag; write --workers in full"}, /* no prefixes */
	    {"--version=1", "x", "--version takes no value"},
	    {"--workers", "0", "--workers: workers 0 is out of range"},
	    {"--cache-max-bytes", "1K", "out of range"},
	    {"--log-level", "verbose", "not a level"},
	    {"positional", "x", "'positional': not a flag"},
	    /* the daemon carries no fault injection: the old test hook is gone */
	    {"--test-corrupt-chunk", "1", "unknown flag '--test-corrupt-chunk'"},
	};
	setenv("WEIGHTD_TEST_HOOKS", "1", 1); /* the old hook's switch: no effect */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		char *argv[] = {"weightd", (char *)cases[i].a, (char *)cases[i].b};
		wt_errbuf err;
		int rv = wd_config_parse_args(&c, 3, argv, &err);
		printf("case %zu: %s\n", i, err.msg);
		assert_int_equal(rv, WT_ECONFIG);
		assert_non_null(strstr(err.msg, cases[i].needle));
		wd_config_free(&c);
	}
	/* missing value */
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *argv[] = {"weightd", "--workers"};
	wt_errbuf err;
	assert_int_equal(wd_config_parse_args(&c, 2, argv, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "--workers needs a value"));
	unsetenv("WEIGHTD_TEST_HOOKS");
	wd_config_free(&c);
}

/* The deployment example for the systemd unit (dist/weightd.conf) parses. */
static void test_deploy_conf(void **state)
{
	(void)state;
	const char *src = getenv("WT_SRCDIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/dist/weightd.conf", src ? src : ".");
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	wt_errbuf err;
	int rv = wd_config_load_file(&c, path, &err);
	if (rv != WT_OK)
		printf("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_int_equal(c.workers, 8);
	assert_int_equal(c.producers, 4);
	assert_int_equal(c.listen.n, 2);
	assert_string_equal(c.metrics_listen, "http://127.0.0.1:9450");
	assert_string_equal(c.auth_token_file, "/etc/weightd/data.token");
	wd_config_free(&c);
}

/* The sample weightd.conf parses and documents (sets) every key of the table. */
static void test_sample_conf(void **state)
{
	(void)state;
	const char *src = getenv("WT_SRCDIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/weightd/weightd.conf", src ? src : ".");
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	wt_errbuf err;
	int rv = wd_config_load_file(&c, path, &err);
	if (rv != WT_OK)
		printf("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char text[32768];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	size_t nk;
	const wd_cfg_key *t = wd_config_table(&nk);
	for (size_t i = 0; i < nk; i++) {
		char needle[80];
		/* each key has a "# key — help" paragraph */
		snprintf(needle, sizeof(needle), "\n# %s ", t[i].name);
		if (strstr(text, needle) == NULL)
			printf("weightd.conf does not document '%s'\n", t[i].name);
		assert_non_null(strstr(text, needle));
		/* and the file's value equals the built-in default */
		wd_config d;
		assert_int_equal(wd_config_init(&d), WT_OK);
		const uint8_t *a = (const uint8_t *)&c + t[i].off;
		const uint8_t *b = (const uint8_t *)&d + t[i].off;
		if (t[i].type == WD_CFG_STRING)
			assert_string_equal(*(char *const *)a, *(char *const *)b);
		else if (t[i].type != WD_CFG_LIST)
			assert_memory_equal(a, b, sizeof(uint64_t));
		wd_config_free(&d);
	}
	wd_config_free(&c);
}

typedef struct seen {
	char names[8][32];
	bool applied[8];
	int n;
} seen;

static void seen_cb(void *ctx, const wd_cfg_key *k, bool applied)
{
	seen *s = ctx;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", k->name);
	s->applied[s->n++] = applied;
}

/* Reload copies only reload-safe keys and reports the rest. */
static void test_reload(void **state)
{
	(void)state;
	wd_config cur, fresh;
	wt_errbuf err;
	assert_int_equal(wd_config_init(&cur), WT_OK);
	assert_int_equal(wd_config_init(&fresh), WT_OK);
	assert_int_equal(wd_config_set(&fresh, "log_level", "debug", "t", &err), WT_OK);
	assert_int_equal(wd_config_set(&fresh, "workers", "9", "t", &err), WT_OK);
	assert_int_equal(wd_config_set(&fresh, "listen", "ipc:///x", "t", &err), WT_OK);
	seen s = {0};
	assert_int_equal(wd_config_reload(&cur, &fresh, seen_cb, &s), 3);
	assert_int_equal(s.n, 3);
	for (int i = 0; i < s.n; i++) {
		bool safe = strcmp(s.names[i], "log_level") == 0;
		assert_int_equal(s.applied[i], safe);
	}
	assert_int_equal(cur.log_level, WT_LOG_DEBUG); /* applied */
	assert_int_equal(cur.workers, 4);              /* needs a restart */
	assert_string_equal(cur.listen.v[0], "tcp://127.0.0.1:7450");
	/* nothing differs now but the unsafe keys */
	s.n = 0;
	assert_int_equal(wd_config_reload(&cur, &fresh, seen_cb, &s), 2);
	wd_config_free(&cur);
	wd_config_free(&fresh);
}

static void test_usage_lists_flags(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	wd_config_usage(f);
	fclose(f);
	static const char *const flags[] = {
	    "--listen",    "--models-dir", "--model ",    "--cache-dir",   "--cache-max-bytes",
	    "--config",    "--workers",    "--log-level", "--chunk-bytes", "--max-request-bytes",
	    "--auth-token"};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		assert_non_null(strstr(buf, flags[i]));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),       cmocka_unit_test(test_bytes_suffixes),
	    cmocka_unit_test(test_file_and_flags), cmocka_unit_test(test_file_errors),
	    cmocka_unit_test(test_flag_errors),    cmocka_unit_test(test_sample_conf),
	    cmocka_unit_test(test_deploy_conf),    cmocka_unit_test(test_usage_lists_flags),
	    cmocka_unit_test(test_reload),         cmocka_unit_test(test_model_override),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
