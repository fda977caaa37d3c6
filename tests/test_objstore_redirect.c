/*
 * test_objstore_redirect.c — store_limit_redirects on the http:// store
 * (loader/store_http.c, curl_xfer.c): the Location of every redirect is
 * resolved as curl resolves it and checked against the host list before it
 * is followed. Against tests/integration/objstore_server.py: /redir/K (302
 * on the same host), /away/H/K (302 to http://H:<its port>/ok/K), /bigaway/H/K
 * (only a GET of more than 64 KiB redirected). 127.0.0.2 and localhost are
 * other names of the same server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "tests/test_objstore_util.h"
#include "tests/util/testutil.h"

static char *g_dir;
static os_helper g_srv;
static char g_host[64]; /* 127.0.0.1:PORT */
static int g_port;

#define BIG_BYTES (100 * 1024)

static int setup(void **state)
{
	(void)state;
	g_dir = tu_mkdtemp("wt-redir");
	static char big[BIG_BYTES];
	tu_fill(big, sizeof(big), 7);
	if (g_dir == NULL || tu_write_file(g_dir, "m/small", "hello", 5) != 0 ||
	    tu_write_file(g_dir, "m/big", big, sizeof(big)) != 0)
		return -1;
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", g_dir, "--stdin", NULL};
	int rv = os_start(&g_srv, argv, 20000);
	free(script);
	if (rv != 0 || sscanf(g_srv.line, "PORT %d", &g_port) != 1)
		return -1;
	snprintf(g_host, sizeof(g_host), "127.0.0.1:%d", g_port);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	os_stop(&g_srv);
	tu_rmrf(g_dir);
	free(g_dir);
	return 0;
}

/* An http store at 127.0.0.1:PORT/path, its redirects limited to hosts
 * (NULL: not limited). */
static store *open_at(const char *path, char *const *hosts, size_t n)
{
	char uri[2048];
	snprintf(uri, sizeof(uri), "http://%s/%s", g_host, path);
	store *st = NULL;
	wt_errbuf err;
	assert_int_equal(store_open(&st, uri, &err), WT_OK);
	if (hosts != NULL)
		assert_int_equal(store_limit_redirects(st, hosts, n, &err), WT_OK);
	return st;
}

/* store_stat of key "small" under path: its code, the message into err. */
static int stat_small(const char *path, char *const *hosts, size_t n, wt_errbuf *err)
{
	store *st = open_at(path, hosts, n);
	store_obj o = {0};
	int rv = store_stat(st, "small", &o, err);
	printf("%s: %s\n", path, rv == WT_OK ? "followed" : err->msg);
	if (rv == WT_OK)
		assert_int_equal(o.nbytes, 5);
	store_obj_clear(&o);
	store_close(st);
	return rv;
}

static void test_hosts(void **state)
{
	(void)state;
	char local_any[] = "LOCALHOST", local_other_port[] = "localhost:1";
	char *self[] = {g_host}, *both[] = {g_host, local_any},
	     *wrong_port[] = {g_host, local_other_port};
	wt_errbuf err;
	/* the same host, a relative Location */
	assert_int_equal(stat_small("redir/m", self, 1, &err), WT_OK);
	/* another host: only when listed (an entry without port: any; case ignored) */
	assert_int_equal(stat_small("away/localhost/m", self, 1, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "redirected to http://localhost:"));
	assert_non_null(strstr(err.msg, "register_hosts"));
	assert_int_equal(stat_small("away/localhost/m", both, 2, &err), WT_OK);
	assert_int_equal(stat_small("away/localhost/m", wrong_port, 2, &err), WT_EPERM);
	assert_int_equal(stat_small("away/127.0.0.2/m", both, 2, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "127.0.0.2"));
	/* IPv6: curl names the host in brackets, as register_hosts writes it */
	assert_int_equal(stat_small("away/[::2]/m", both, 2, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "host [::2] port"));
	/* user names in the target are not followed, listed host or not */
	assert_int_equal(stat_small("away/user@localhost/m", both, 2, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "a user name"));
	/* an empty list follows no redirect; an unlimited store any */
	assert_int_equal(stat_small("redir/m", NULL, 0, &err), WT_OK);
	char *none[] = {NULL};
	assert_int_equal(stat_small("redir/m", none, 0, &err), WT_EPERM);
	assert_int_equal(stat_small("away/localhost/m", NULL, 0, &err), WT_OK);
}

/* A Location longer than the header line kept (1 KiB) is refused, not cut
 * and checked short of what curl would follow. */
static void test_long_location(void **state)
{
	(void)state;
	char *both[] = {g_host, "localhost"};
	char path[1400];
	size_t at = (size_t)snprintf(path, sizeof(path), "away/localhost/");
	for (int i = 0; i < 90; i++)
		at += (size_t)snprintf(path + at, sizeof(path) - at, "dir%07d/", i);
	snprintf(path + at, sizeof(path) - at, "m");
	wt_errbuf err;
	assert_int_equal(stat_small(path, both, 2, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "Location is over"));
}

/* Only the tensor reads redirected: the stat passes, the read is refused. */
static void test_read_redirected(void **state)
{
	(void)state;
	char *self[] = {g_host};
	store *st = open_at("bigaway/127.0.0.2/m", self, 1);
	store_obj o = {0};
	wt_errbuf err;
	assert_int_equal(store_stat(st, "big", &o, &err), WT_OK);
	assert_int_equal(o.nbytes, BIG_BYTES);
	store_obj_clear(&o);
	static char buf[BIG_BYTES];
	assert_int_equal(store_read(st, "big", 0, buf, 1000, &err), WT_OK); /* small: here */
	assert_int_equal(store_read(st, "big", 0, buf, sizeof(buf), &err), WT_EPERM);
	printf("read: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "127.0.0.2"));
	/* limited once only */
	assert_int_equal(store_limit_redirects(st, self, 1, &err), WT_EINVAL);
	store_close(st);
	/* file:// follows no redirect: nothing to limit */
	char uri[600];
	snprintf(uri, sizeof(uri), "file://%s/m", g_dir);
	assert_int_equal(store_open(&st, uri, &err), WT_OK);
	assert_int_equal(store_limit_redirects(st, self, 1, &err), WT_OK);
	store_close(st);
}

/* The matcher REGISTER's check and the redirect check share. */
static void test_host_listed(void **state)
{
	(void)state;
	char *hosts[] = {"Models.Example", "cdn.example:8443", "[::2]", "[fe80::1]:80"};
#define LISTED(h, p) store_host_listed(hosts, 4, h, strlen(h), p, strlen(p))
	assert_true(LISTED("models.example", "80")); /* no port: any; case ignored */
	assert_true(LISTED("MODELS.EXAMPLE", "1234"));
	assert_true(LISTED("cdn.example", "8443"));
	assert_false(LISTED("cdn.example", "443"));
	assert_false(LISTED("cdn.example", "08443"));  /* ports compare as text */
	assert_false(LISTED("models.example.", "80")); /* no trailing-dot aliasing */
	assert_false(LISTED("evil.models.example", "80"));
	assert_true(LISTED("[::2]", "80")); /* brackets, as curl names v6 */
	assert_false(LISTED("::2", "80"));
	assert_true(LISTED("[fe80::1]", "80"));
	assert_false(LISTED("[fe80::1]", "8080"));
	assert_false(LISTED("", ""));
#undef LISTED
	const char *h, *p;
	size_t hl, pl;
	store_split_hostport("[::1]:99", 8, &h, &hl, &p, &pl);
	assert_true(hl == 5 && memcmp(h, "[::1]", 5) == 0 && pl == 2 && memcmp(p, "99", 2) == 0);
	store_split_hostport("host", 4, &h, &hl, &p, &pl);
	assert_true(hl == 4 && pl == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host_listed),
	    cmocka_unit_test(test_hosts),
	    cmocka_unit_test(test_long_location),
	    cmocka_unit_test(test_read_redirected),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
