/* test_weightd_config_hostile.c — hostile start-up input to the daemon's
 * config: FIFOs where files are read, duplicate keys, NUL bytes, huge lines,
 * settings that combine into something invalid, secrets others may read,
 * server_id, nested cache/models folders, flags given twice, range edges. */
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

/* Run fn(arg) in a child process and return its exit status, or -1 when it
 * had not ended after 3 s (killed): a start-up read that hangs is a failure,
 * not a hung test. */
static int in_child(int (*fn)(const char *arg), const char *arg)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	for (int i = 0; i < 300; i++) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* 0 when args (a space-separated command line after "weightd") are refused
 * with "not a regular file". */
static int refused_not_file(const char *args)
{
	char buf[640], *argv[8] = {"weightd"}, *save = NULL; /* args: up to 600 */
	int argc = 1;
	snprintf(buf, sizeof(buf), "%s", args);
	for (char *w = strtok_r(buf, " ", &save); w && argc < 8; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	wd_config c;
	if (wd_config_init(&c) != WT_OK)
		return 3;
	wt_errbuf err;
	int rv = wd_config_parse_args(&c, argc, argv, &err);
	printf("  %s -> %s\n", args, rv == WT_OK ? "accepted" : err.msg);
	wd_config_free(&c);
	return rv == WT_ECONFIG && strstr(err.msg, "is not a regular file") ? 0 : 1;
}

/* A FIFO where a file is read at start (config, token files, TLS files) is
 * refused at once: opening one for reading waits for a writer, and start-up
 * (or a SIGHUP reload, which a SIGTERM then waits on) hung for ever. */
static void test_fifo_refused(void **state)
{
	(void)state;
	char fifo[256], args[600];
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	static const char *const flags[] = {"--config", "--auth-token-file", "--admin-token-file",
	                                    "--tls-cert-key-file", "--tls-ca-file"};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		snprintf(args, sizeof(args), "%s %s", flags[i], fifo);
		int rc = in_child(refused_not_file, args);
		printf("%s FIFO: child %s %d\n", flags[i], rc < 0 ? "hung, killed" : "exit", rc);
		assert_int_equal(rc, 0);
	}
	unlink(fifo);
}

/* Each hostile file gives WT_ECONFIG naming file:line and what to change. */
static void test_file_hostile(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		size_t len;
		int line;
		const char *needle;
	} cases[] = {
	    /* a single-value key twice: the later line won silently */
	    {"workers = 2\n\nworkers = 8\n", 0, 3,
	     "workers is set twice in this file (also on line 1)"},
	    {"[weightd]\ncache_dir = /a\ncache_dir = /b\n", 0, 3, "cache_dir is set twice"},
	    /* a NUL byte: inih read the line up to it and dropped the rest */
	    {"workers = 4\0; 8\n", 16, 1, "NUL byte"},
	    {"workers = 4\nserver_id = a\0b\n", 28, 2, "NUL byte"},
	    /* model lines: refused at open without the place (exit 1) */
	    {"model = .hidden=file:///a\n", 0, 1, "model name '.hidden' is not usable"},
	    {"model = a/b=file:///a\n", 0, 1, "model name 'a/b' is not usable"},
	    {"model = a=\n", 0, 1, "model 'a' has an empty URI"},
	    {"model = a=/x\nmodel = b=/y\nmodel = a=/z\n", 0, 3,
	     "model 'a' is given twice (also as a=/x); keep one"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/hostile.conf", tmpdir);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		assert_int_equal(fwrite(cases[i].text, 1, len, f), len);
		fclose(f);
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		wt_errbuf err = {0};
		int rv = wd_config_load_file(&c, path, &err);
		printf("case %zu: %s\n", i, rv == WT_OK ? "accepted" : err.msg);
		char want[300];
		snprintf(want, sizeof(want), "%s:%d: ", path, cases[i].line);
		assert_int_equal(rv, WT_ECONFIG);
		assert_non_null(strstr(err.msg, want));
		assert_non_null(strstr(err.msg, cases[i].needle));
		wd_config_free(&c);
	}
	/* list keys stay repeatable */
	const char *path = write_conf("lists.conf", "listen = ipc:///a\nlisten = ipc:///b\n");
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	wt_errbuf err;
	assert_int_equal(wd_config_load_file(&c, path, &err), WT_OK);
	assert_int_equal(c.listen.n, 2);
	wd_config_free(&c);
}

/* 0 when the 1 GiB one-line file arg is refused as too long under a 256 MiB
 * address-space allowance: the reader buffered the whole line first. */
static __attribute__((unused)) int huge_line_refused(const char *path) /* not under sanitizers */
{
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f == NULL || fscanf(f, "%ld", &pages) != 1)
		return 3;
	fclose(f);
	rlim_t as = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256u << 20);
	struct rlimit rl = {as, as};
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		return 4;
	wd_config c;
	if (wd_config_init(&c) != WT_OK)
		return 5;
	wt_errbuf err = {0};
	int rv = wd_config_load_file(&c, path, &err);
	printf("  1 GiB line -> %s\n", rv == WT_OK ? "accepted" : err.msg);
	wd_config_free(&c);
	return rv == WT_ECONFIG && strstr(err.msg, ":1: line longer than") ? 0 : 1;
}

/* A config path naming a large file with no newline (a checkpoint given by
 * mistake) is refused after one line's worth of bytes, not read into memory. */
static void test_huge_line(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	skip(); /* a sanitizer's shadow memory does not fit an address-space limit */
#else
	char path[256];
	snprintf(path, sizeof(path), "%s/huge.conf", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("server_id = ", f);
	assert_int_equal(ftruncate(fileno(f), 1ll << 30), 0); /* sparse: no disk used */
	fclose(f);
	int rc = in_child(huge_line_refused, path);
	printf("1 GiB line: child %d\n", rc);
	assert_int_equal(rc, 0);
	unlink(path);
#endif
}

/* Settings that are each in range but invalid together are refused when the
 * flags are parsed (exit 2 at once), not after the cache and every model have
 * opened; a SIGHUP reload is refused the same way. */
static void test_combinations(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b, *c, *d, *needle;
	} cases[] = {
	    {"--contexts", "8", "--max-watchers", "8",
	     "max_watchers 8 must be below contexts 8 (parked watches hold contexts); lower "
	     "max_watchers or raise contexts"},
	    {"--listen", "tls+tcp://127.0.0.1:0", "--workers", "2",
	     "a tls+tcp:// listen or stream_listen URL needs tls_cert_key_file"},
	    {"--stream-listen", "tls+tcp://127.0.0.1:0", "--workers", "2",
	     "needs tls_cert_key_file"},
	    {"--listen", "", "--workers", "2", "no listen URL; set listen or --listen"},
	    {"--tls-ca-file", "/nonexistent/ca.pem", "--workers", "2",
	     "/nonexistent/ca.pem: cannot open tls_ca_file"},
	    /* the port forgotten: a free port nobody could learn (and a ready file
	     * saying tcp://127.0.0.1) */
	    {"--listen", "tcp://127.0.0.1", "--workers", "2",
	     "listen 'tcp://127.0.0.1': give the port, HOST:PORT"},
	    {"--listen", "tcp://[::1]", "--workers", "2", "give the port"},
	    {"--listen", "tcp://127.0.0.1:65536", "--workers", "2", "give the port"},
	    {"--stream-listen", "tcp://127.0.0.1:", "--workers", "2",
	     "stream_listen 'tcp://127.0.0.1:': give the port"},
	    {"--peer", "tcp://peer.example", "--workers", "2", "peer 'tcp://peer.example': give"},
	    /* a bad scheme was found at listen, after every model had opened */
	    {"--listen", "tcpp://127.0.0.1:1", "--workers", "2",
	     "listen 'tcpp://127.0.0.1:1': unknown scheme"},
	    {"--metrics-listen", "http://127.0.0.1", "--workers", "2",
	     "metrics_listen 'http://127.0.0.1': give http://HOST:PORT"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		char *argv[] = {"weightd", (char *)cases[i].a, (char *)cases[i].b,
		                (char *)cases[i].c, (char *)cases[i].d};
		wt_errbuf err = {0};
		int rv = wd_config_parse_args(&c, 5, argv, &err);
		printf("case %zu: %s\n", i, rv == WT_OK ? "accepted" : err.msg);
		assert_int_equal(rv, WT_ECONFIG);
		assert_non_null(strstr(err.msg, cases[i].needle));
		wd_config_free(&c);
	}
	/* the limit itself is fine */
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *ok[] = {"weightd",          "--contexts",    "8",        "--max-watchers", "7",
	              "--listen",         "tcp://[::1]:0", "--listen", "tcp://h:7450",   "--listen",
	              "ipc:///tmp/x.sock"};
	wt_errbuf err;
	assert_int_equal(wd_config_parse_args(&c, 11, ok, &err), WT_OK);
	wd_config_free(&c);
}

typedef struct logged {
	char text[4096];
} logged;

static void log_cb(void *ctx, int level, const char *msg)
{
	(void)level;
	logged *l = ctx;
	size_t n = strlen(l->text);
	snprintf(l->text + n, sizeof(l->text) - n, "%s\n", msg);
}

/* A TLS key file others may read is warned about (as token files are). */
static void test_tls_key_mode(void **state)
{
	(void)state;
	const char *key = write_conf("key.pem", "-----BEGIN PRIVATE KEY-----\n");
	char path[256];
	snprintf(path, sizeof(path), "%s", key);
	assert_int_equal(chmod(path, 0644), 0);
	logged l = {{0}};
	common_log_set(log_cb, &l, WT_LOG_DEBUG);
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *argv[] = {"weightd", "--tls-cert-key-file", path};
	wt_errbuf err;
	assert_int_equal(wd_config_parse_args(&c, 3, argv, &err), WT_OK);
	wd_config_free(&c);
	printf("log: %s", l.text);
	assert_non_null(strstr(l.text, "tls_cert_key_file is readable by group or others (mode "
	                               "644); chmod 600 it"));
	l.text[0] = '\0';
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(wd_config_init(&c), WT_OK);
	assert_int_equal(wd_config_parse_args(&c, 3, argv, &err), WT_OK);
	wd_config_free(&c);
	assert_null(strstr(l.text, "readable by group"));
	common_log_set(NULL, NULL, WT_LOG_NOTICE);
}

/* A token written in a config file that others may read is warned about, as
 * a token file is (the token was read silently). */
static void test_token_in_readable_conf(void **state)
{
	(void)state;
	const char *p = write_conf("tok.conf", "workers = 2\nadmin_token = s3cret-admin\n");
	char path[256];
	snprintf(path, sizeof(path), "%s", p);
	logged l = {{0}};
	common_log_set(log_cb, &l, WT_LOG_DEBUG);
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(chmod(path, pass == 0 ? 0644 : 0600), 0);
		l.text[0] = '\0';
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		wt_errbuf err;
		assert_int_equal(wd_config_load_file(&c, path, &err), WT_OK);
		wd_config_free(&c);
		printf("mode %s: log: %s\n", pass == 0 ? "644" : "600", l.text);
		if (pass == 0)
			assert_non_null(strstr(l.text, ":2: a token in a file readable by group or "
			                               "others (mode 644); chmod 600 it"));
		else
			assert_null(strstr(l.text, "readable by group"));
		assert_null(strstr(l.text, "s3cret")); /* never echoed */
	}
	common_log_set(NULL, NULL, WT_LOG_NOTICE);
}

/* server_id goes out in every HelloReply and into clients' logs: over 127 bytes
 * it was cut short silently, and control characters went out as they were. */
static void test_server_id(void **state)
{
	(void)state;
	char line[200], id127[128], id128[129];
	memset(id127, 'a', 127);
	id127[127] = '\0';
	memset(id128, 'b', 128);
	id128[128] = '\0';
	const char *const bad[] = {NULL, "red\x1b[31mX", "a\tb", "caf\xc3\xa9"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "workers = 2\nserver_id = %s\n",
		         bad[i] ? bad[i] : id128);
		const char *path = write_conf("sid.conf", line);
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		wt_errbuf err = {0};
		int rv = wd_config_load_file(&c, path, &err);
		printf("file case %zu: %s\n", i, rv == WT_OK ? "accepted" : err.msg);
		char want[300];
		snprintf(want, sizeof(want), "%s:2: server_id ", path);
		assert_int_equal(rv, WT_ECONFIG);
		assert_non_null(strstr(err.msg, want));
		assert_non_null(
		    strstr(err.msg, bad[i] ? "printable ASCII" : "128 bytes, over 127"));
		wd_config_free(&c);
	}
	/* a flag: a newline in it (a shell can pass one) */
	const char *const flags[] = {"web\nfake log line", id128};
	for (size_t i = 0; i < 2; i++) {
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		char *argv[] = {"weightd", "--server-id", (char *)flags[i]};
		wt_errbuf err = {0};
		int rv = wd_config_parse_args(&c, 3, argv, &err);
		printf("flag case %zu: %s\n", i, rv == WT_OK ? "accepted" : err.msg);
		assert_int_equal(rv, WT_ECONFIG);
		assert_non_null(strstr(err.msg, "--server-id: server_id "));
		wd_config_free(&c);
	}
	/* 127 printable bytes, spaces and punctuation are fine */
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *ok[] = {"weightd", "--server-id", id127};
	wt_errbuf err;
	assert_int_equal(wd_config_parse_args(&c, 3, ok, &err), WT_OK);
	assert_string_equal(c.server_id, id127);
	assert_int_equal(wd_config_set(&c, "server_id", "node-7 (rack 3): a/b_c.d", "t", &err),
	                 WT_OK);
	assert_int_equal(wd_config_check(&c, &err), WT_OK);
	/* a configuration built in code is checked too (wd_server_open) */
	free(c.server_id);
	c.server_id = strdup("x\ny");
	assert_int_equal(wd_config_check(&c, &err), WT_ECONFIG);
	assert_non_null(strstr(err.msg, "server_id: server_id holds byte 0x0a"));
	wd_config_free(&c);
}

/* cache_dir inside models_dir was listed as an unavailable model; compared by
 * real path (symlinks, "..", folders not created yet). */
static void test_nested_dirs(void **state)
{
	(void)state;
	char m[300], other[300], link[300];
	snprintf(m, sizeof(m), "%s/nm", tmpdir);
	snprintf(other, sizeof(other), "%s/nother", tmpdir);
	snprintf(link, sizeof(link), "%s/nlink", tmpdir);
	assert_int_equal(mkdir(m, 0700), 0);
	assert_int_equal(mkdir(other, 0700), 0);
	assert_int_equal(symlink(m, link), 0);
	char c1[320], c2[320], c3[320], c4[320], c5[320], c6[320], c7[320];
	snprintf(c1, sizeof(c1), "%s/cache", m);           /* not created yet */
	snprintf(c2, sizeof(c2), "%s/c", link);            /* through a symlink */
	snprintf(c3, sizeof(c3), "%s/../nm/new/x", other); /* ".." */
	snprintf(c4, sizeof(c4), "%s/", m);                /* the same folder */
	snprintf(c5, sizeof(c5), "%s/no/such/../..", m);   /* ".." past new names */
	snprintf(c6, sizeof(c6), "%s/nm", tmpdir);         /* models_dir in cache_dir: */
	snprintf(c7, sizeof(c7), "%s/sub", other);
	static const char *const needles[] = {"is inside models_dir", "is inside models_dir",
	                                      "is inside models_dir", "are the same folder",
	                                      "are the same folder"};
	const char *caches[] = {c1, c2, c3, c4, c5};
	for (size_t i = 0; i < 5; i++) {
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		char *argv[] = {"weightd", "--models-dir", m, "--cache-dir", (char *)caches[i]};
		wt_errbuf err = {0};
		int rv = wd_config_parse_args(&c, 5, argv, &err);
		printf("case %zu: %s\n", i, rv == WT_OK ? "accepted" : err.msg);
		assert_int_equal(rv, WT_ECONFIG);
		assert_non_null(strstr(err.msg, needles[i]));
		assert_non_null(strstr(err.msg, "cache_dir"));
		wd_config_free(&c);
	}
	/* models_dir inside cache_dir, the other way round */
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *in[] = {"weightd", "--models-dir", c7, "--cache-dir", other};
	wt_errbuf err = {0};
	int rv = wd_config_parse_args(&c, 5, in, &err);
	printf("models in cache: %s\n", rv == WT_OK ? "accepted" : err.msg);
	assert_int_equal(rv, WT_ECONFIG);
	assert_non_null(strstr(err.msg, "models_dir"));
	assert_non_null(strstr(err.msg, "is inside cache_dir"));
	wd_config_free(&c);
	/* siblings, and a name that only starts the same (nm vs nmx), are fine */
	char sib[340];
	snprintf(sib, sizeof(sib), "%sx", c6);
	const char *fine[] = {other, sib};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(wd_config_init(&c), WT_OK);
		char *argv[] = {"weightd", "--models-dir", m, "--cache-dir", (char *)fine[i]};
		assert_int_equal(wd_config_parse_args(&c, 5, argv, &err), WT_OK);
		wd_config_free(&c);
	}
}

/* Precedence written in --help: flags over the file, the last of a repeated
 * flag wins, a list flag replaces the file's list; --config twice is refused
 * (the second file was merged over the first, lists added). */
static void test_flag_twice(void **state)
{
	(void)state;
	const char *a = write_conf("twice-a.conf", "workers = 4\nlisten = ipc:///a\n");
	char pa[256];
	snprintf(pa, sizeof(pa), "%s", a);
	const char *b = write_conf("twice-b.conf", "workers = 6\nlisten = ipc:///b\n");
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *argv[] = {"weightd", "--workers", "2",         "--config", pa,         "--workers",
	                "8",       "--listen",  "ipc:///f1", "--listen", "ipc:///f2"};
	wt_errbuf err = {0};
	assert_int_equal(wd_config_parse_args(&c, 11, argv, &err), WT_OK);
	assert_int_equal(c.workers, 8); /* the last flag; the file's 4 is overridden */
	assert_int_equal(c.listen.n, 2);
	assert_string_equal(c.listen.v[0], "ipc:///f1");
	assert_string_equal(c.listen.v[1], "ipc:///f2");
	wd_config_free(&c);
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *two[] = {"weightd", "--config", pa, "--config", (char *)b};
	int rv = wd_config_parse_args(&c, 5, two, &err);
	printf("--config twice: %s\n", rv == WT_OK ? "accepted" : err.msg);
	assert_int_equal(rv, WT_ECONFIG);
	assert_non_null(strstr(err.msg, "--config is given twice"));
	wd_config_free(&c);
	/* --help says so */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	wd_config_usage(f);
	fclose(f);
	assert_non_null(strstr(buf, "A flag given twice: the\nlast one wins"));
	assert_non_null(strstr(buf, "Flags override the file"));
	free(buf);
}

/* Range messages at and past the limits: a ratio said its range x100, and a
 * number past 2^64 was "not a number". */
static void test_range_edges(void **state)
{
	(void)state;
	static const struct {
		const char *key, *value, *needle; /* needle NULL: accepted */
	} cases[] = {
	    {"workers", "1", NULL},
	    {"workers", "256", NULL},
	    {"workers", "257", "workers 257 is out of range; use 1..256"},
	    {"max_watchers", "0", NULL},
	    {"drain_timeout_ms", "600000", NULL},
	    {"drain_timeout_ms", "600001", "out of range; use 0..600000 (ms)"},
	    {"workers", "99999999999999999999", "workers 99999999999999999999 is out of range"},
	    {"cache_max_bytes", "1M", NULL},
	    {"cache_max_bytes", "1P", NULL}, /* the top of its range */
	    {"cache_max_bytes", "2P", "out of range; use 1048576..1125899906842624"},
	    {"cache_max_bytes", "1024T", NULL},
	    {"cache_max_bytes", "1025T", "out of range; use 1048576..1125899906842624"},
	    {"cache_max_bytes", "17179869184T", "cache_max_bytes 17179869184T is out of range"},
	    {"cache_reclaim_ratio", "1000", NULL},
	    {"cache_reclaim_ratio", "1000.01",
	     "cache_reclaim_ratio 1000.01 is out of range; use 0.00..1000.00 (ratio)"},
	    {"cache_reclaim_ratio", "1.555", "at most two decimals"},
	    {"cache_reclaim_ratio", "1", "must be above 1"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wd_config c;
		assert_int_equal(wd_config_init(&c), WT_OK);
		wt_errbuf err = {0};
		int rv = wd_config_set(&c, cases[i].key, cases[i].value, "--x", &err);
		printf("case %zu: %s %s: %s\n", i, cases[i].key, cases[i].value,
		       rv == WT_OK ? "accepted" : err.msg);
		if (cases[i].needle == NULL) {
			assert_int_equal(rv, WT_OK);
		} else {
			assert_int_equal(rv, WT_ECONFIG);
			assert_non_null(strstr(err.msg, cases[i].needle));
		}
		wd_config_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fifo_refused), cmocka_unit_test(test_file_hostile),
	    cmocka_unit_test(test_huge_line),    cmocka_unit_test(test_combinations),
	    cmocka_unit_test(test_tls_key_mode), cmocka_unit_test(test_token_in_readable_conf),
	    cmocka_unit_test(test_server_id),    cmocka_unit_test(test_nested_dirs),
	    cmocka_unit_test(test_flag_twice),   cmocka_unit_test(test_range_edges),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
