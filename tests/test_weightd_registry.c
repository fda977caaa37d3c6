/*
 * test_weightd_registry.c — models registered at run time (admin REGISTER /
 * UNREGISTER, weightd/registry.c): they survive a restart on the same cache
 * dir, unregister removes them for good, folder/config models cannot be
 * unregistered, a second registration of a name is refused unless it is the
 * same URI, a damaged registry file or a registered source that went away
 * never stops the daemon, a failed write undoes the registration, and EVICT
 * still reaches the shards of an unregistered model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_weightd_util.h"
#include "weights/client.h"
#include "weightd/server_int.h"

#define SEED 4242u

#define OP_REG   WEIGHTS__ADMIN_REQUEST__OP__OP_REGISTER
#define OP_UNREG WEIGHTS__ADMIN_REQUEST__OP__OP_UNREGISTER

static tw_reply list(nng_socket s)
{
	tw_reply x = tw_list_models(s);
	assert_int_equal(x.rv, WT_OK);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	return x;
}

/* "name:source:available,..." in list order, into buf. */
static const char *summary(nng_socket s, char *buf, size_t cap)
{
	tw_reply x = list(s);
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < x.r->models->n_models; i++) {
		const Weights__ModelInfo *mi = x.r->models->models[i];
		len += (size_t)snprintf(buf + len, cap - len, "%s%s:%s:%s", i ? "," : "", mi->name,
		                        mi->source, mi->available ? "ok" : "unavailable");
	}
	tw_reply_free(&x);
	printf("models: %s\n", buf);
	return buf;
}

/* The URI a model is listed with (copied into buf). */
static const char *listed_uri(nng_socket s, const char *name, char *buf, size_t cap)
{
	tw_reply x = list(s);
	buf[0] = '\0';
	for (size_t i = 0; i < x.r->models->n_models; i++)
		if (strcmp(x.r->models->models[i]->name, name) == 0)
			snprintf(buf, cap, "%s", x.r->models->models[i]->uri);
	tw_reply_free(&x);
	return buf;
}

/* Admin reply text of a successful op (asserted), printed. */
static void expect_ok(nng_socket s, Weights__AdminRequest__Op op, const char *name, const char *uri,
                      const char *text_has)
{
	tw_reply x = tw_admin_uri(s, op, name, uri, 0);
	assert_int_equal(x.rv, WT_OK);
	if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		printf("unexpected error: %s\n", x.r->error->message);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	printf("%s\n", x.r->admin->text);
	assert_non_null(strstr(x.r->admin->text, text_has));
	tw_reply_free(&x);
}

/* Error code of an op (its message printed). */
static int expect_err(nng_socket s, Weights__AdminRequest__Op op, const char *name, const char *uri,
                      const char *msg_has)
{
	tw_reply x = tw_admin_uri(s, op, name, uri, 0);
	int code = tw_errcode(&x);
	if (code > 0) {
		printf("%s: %s\n", wt_errname(code), x.r->error->message);
		assert_non_null(strstr(x.r->error->message, msg_has));
	}
	tw_reply_free(&x);
	return code;
}

static void manifest_ok(nng_socket s, const char *model)
{
	tw_reply x = tw_manifest(s, model, 2, 1);
	assert_int_equal(x.rv, WT_OK);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_string_equal(x.r->manifest->model, model);
	tw_reply_free(&x);
}

static void restart(tw_env *e, nng_socket *s)
{
	nng_close(*s);
	tw_stop(e);
	assert_int_equal(tw_start(e), WT_OK);
	*s = tw_dial(e->url);
}

static char *registry_text(const tw_env *e)
{
	char *p = tu_path(e->cache, WD_REGISTRY_FILE);
	size_t len;
	char *t = tu_read_file(p, &len);
	free(p);
	return t;
}

/* A second model outside models_dir; uri gets file://dir. */
static char *make_extra(const tw_env *e, const char *rel, uint64_t seed, char *uri, size_t cap)
{
	char *dir = tu_path(e->dir, rel);
	assert_int_equal(tw_write_llama8(dir, seed), 0);
	snprintf(uri, cap, "file://%s", dir);
	return dir;
}

/* register -> restart -> still served; unregister -> restart -> gone. */
static void test_persist(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-persist", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	char uri[600], buf[600];
	char *dir = make_extra(e, "elsewhere/extra", SEED + 1, uri, sizeof(uri));
	expect_ok(s, OP_REG, "extra", uri, "registered model 'extra'");
	assert_string_equal(summary(s, buf, sizeof(buf)), "extra:registered:ok,llama:folder:ok");
	char *t = registry_text(e);
	assert_non_null(t);
	char line[700];
	snprintf(line, sizeof(line), "\nextra=%s\n", uri);
	assert_non_null(strstr(t, line));
	free(t);

	restart(e, &s);
	assert_string_equal(summary(s, buf, sizeof(buf)), "extra:registered:ok,llama:folder:ok");
	assert_string_equal(listed_uri(s, "extra", buf, sizeof(buf)), uri);
	manifest_ok(s, "extra");

	expect_ok(s, OP_UNREG, "extra", "", "unregistered model 'extra'");
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok");
	tw_reply x = tw_manifest(s, "extra", 2, 1);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	tw_reply_free(&x);
	assert_int_equal(expect_err(s, OP_UNREG, "extra", "", "not served"), WT_ENOTFOUND);

	restart(e, &s);
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok");
	t = registry_text(e);
	assert_non_null(t);
	assert_null(strstr(t, "extra="));
	free(t);
	/* registered again after an unregister: a new entry, served */
	expect_ok(s, OP_REG, "extra", uri, "registered model 'extra'");
	manifest_ok(s, "extra");
	free(dir);
	nng_close(s);
	tw_env_free(e);
}

/* register_roots = e->dir/a (and e->dir/b). A list set from another source
 * (file or flag) than the last replaces it; from the same one it grows. */
static void set_roots(tw_env *e, bool from_file, const char *a, const char *b)
{
	wt_errbuf err;
	char *ra = tu_path(e->dir, a), *rb = b ? tu_path(e->dir, b) : NULL;
	if (from_file) {
		char text[2400];
		int n = snprintf(text, sizeof(text), "register_roots = %s\n", ra);
		if (rb != NULL)
			n += snprintf(text + n, sizeof(text) - (size_t)n, "register_roots = %s\n",
			              rb);
		assert_int_equal(tu_write_file(e->dir, "roots.conf", text, (size_t)n), 0);
		char *p = tu_path(e->dir, "roots.conf");
		assert_int_equal(wd_config_load_file(&e->cfg, p, &err), WT_OK);
		free(p);
	} else {
		assert_int_equal(wd_config_set(&e->cfg, "register_roots", ra, "test", &err), WT_OK);
		if (rb != NULL)
			assert_int_equal(wd_config_set(&e->cfg, "register_roots", rb, "test", &err),
			                 WT_OK);
	}
	free(ra);
	free(rb);
}

/* A registration the register_* settings refuse at start (a root no longer
 * allowed, perhaps not mounted yet) stays in the file, not served, through the
 * next rewrite: served again once allowed (it was dropped for good); an
 * unregister drops it. */
static void test_refused_line_kept(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-kept", SEED);
	char ua[600], ub[600], buf[600];
	char *da = make_extra(e, "ra/a", SEED + 11, ua, sizeof(ua));
	char *db = make_extra(e, "rb/b", SEED + 12, ub, sizeof(ub));
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	expect_ok(s, OP_REG, "a", ua, "registered model 'a'");
	nng_close(s);
	tw_stop(e);
	set_roots(e, true, "rb", NULL); /* ra no longer allowed */
	assert_int_equal(tw_start(e), WT_OK);
	s = tw_dial(e->url);
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok");
	expect_ok(s, OP_REG, "b", ub, "registered model 'b'"); /* a rewrite of the file */
	char *t = registry_text(e);
	printf("rewritten:\n%s", t);
	char line[700];
	snprintf(line, sizeof(line), "\na=%s\n", ua);
	assert_non_null(strstr(t, line));
	free(t);
	nng_close(s);
	tw_stop(e);
	set_roots(e, false, "ra", "rb"); /* both allowed again */
	assert_int_equal(tw_start(e), WT_OK);
	s = tw_dial(e->url);
	assert_string_equal(summary(s, buf, sizeof(buf)),
	                    "a:registered:ok,b:registered:ok,llama:folder:ok");
	manifest_ok(s, "a");
	nng_close(s);
	tw_stop(e);
	set_roots(e, true, "rb", NULL); /* kept again, then unregistered */
	assert_int_equal(tw_start(e), WT_OK);
	s = tw_dial(e->url);
	expect_ok(s, OP_UNREG, "a", "", "unregistered model 'a'");
	t = registry_text(e);
	assert_null(strstr(t, "a="));
	assert_non_null(strstr(t, "b="));
	free(t);
	free(da);
	free(db);
	nng_close(s);
	tw_env_free(e);
}

/* A name registered twice, one line refused by the register_* settings and one
 * served, in either order: the served one stays, the refused line goes, and an
 * unregister removes the served model (not just the refused line). */
static void test_refused_twin_unregistered(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-twin", SEED);
	char ua[600], ub[600], buf[600], text[1500];
	char *da = make_extra(e, "ra/a", SEED + 13, ua, sizeof(ua));
	char *db = make_extra(e, "rb/b", SEED + 14, ub, sizeof(ub));
	set_roots(e, true, "rb", NULL); /* ra refused */
	int n = snprintf(text, sizeof(text), "x=%s\nx=%s\ny=%s\ny=%s\n", ua, ub, ub, ua);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(tu_write_file(e->cache, WD_REGISTRY_FILE, text, (size_t)n), 0);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	assert_string_equal(summary(s, buf, sizeof(buf)),
	                    "llama:folder:ok,x:registered:ok,y:registered:ok");
	expect_ok(s, OP_UNREG, "x", "", "unregistered model 'x'");
	expect_ok(s, OP_UNREG, "y", "", "unregistered model 'y'");
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok");
	char *t = registry_text(e);
	printf("rewritten:\n%s", t);
	assert_null(strstr(t, "x="));
	assert_null(strstr(t, "y="));
	free(t);
	free(da);
	free(db);
	nng_close(s);
	tw_env_free(e);
}

/* Folder and config models cannot be unregistered; the message says where they
 * come from and how to remove them. */
static void test_unregister_refused(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-refuse", SEED);
	char uri[600], buf[600], spec[700];
	char *dir = make_extra(e, "elsewhere/cfgm", SEED + 2, uri, sizeof(uri));
	snprintf(spec, sizeof(spec), "cfgm=%s", uri);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "model", spec, "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	assert_string_equal(summary(s, buf, sizeof(buf)), "cfgm:config:ok,llama:folder:ok");
	assert_int_equal(expect_err(s, OP_UNREG, "llama", "", "models folder"), WT_EPERM);
	assert_int_equal(expect_err(s, OP_UNREG, "cfgm", "", "configuration"), WT_EPERM);
	assert_int_equal(expect_err(s, OP_UNREG, "nosuch", "", "not served"), WT_ENOTFOUND);
	/* registering over them is refused too, whatever the URI */
	assert_int_equal(expect_err(s, OP_REG, "cfgm", uri, "configuration"), WT_EEXIST);
	assert_int_equal(expect_err(s, OP_REG, "llama", uri, "models folder"), WT_EEXIST);
	assert_string_equal(summary(s, buf, sizeof(buf)), "cfgm:config:ok,llama:folder:ok");
	manifest_ok(s, "llama");
	free(dir);
	nng_close(s);
	tw_env_free(e);
}

/* The same name twice: same URI is a no-op, another URI WT_EEXIST; names the
 * file cannot hold and missing URIs are WT_EINVAL; a bad checkpoint gets the
 * loader's error and nothing is written. */
static void test_duplicate_and_invalid(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-dup", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	char uri[600], uri2[600], buf[600];
	char *d1 = make_extra(e, "a/one", SEED + 3, uri, sizeof(uri));
	char *d2 = make_extra(e, "a/two", SEED + 4, uri2, sizeof(uri2));
	expect_ok(s, OP_REG, "one", uri, "registered model 'one'");
	expect_ok(s, OP_REG, "one", uri, "nothing changed");
	assert_int_equal(expect_err(s, OP_REG, "one", uri2, "unregister it first"), WT_EEXIST);
	assert_string_equal(listed_uri(s, "one", buf, sizeof(buf)), uri);
	assert_int_equal(expect_err(s, OP_REG, "a=b", uri2, "cannot be registered"), WT_EINVAL);
	assert_int_equal(expect_err(s, OP_REG, "a b", uri2, "cannot be registered"), WT_EINVAL);
	assert_int_equal(expect_err(s, OP_REG, "#x", uri2, "cannot be registered"), WT_EINVAL);
	assert_int_equal(expect_err(s, OP_REG, "x", "", "no URI"), WT_EINVAL);
	assert_int_equal(expect_err(s, OP_REG, "x", "file:///a\nb", "control"), WT_EINVAL);
	/* a missing folder inside register_roots is WT_ENOTFOUND; outside them the
	 * answer is WT_EPERM whether it exists or not */
	char gone[700];
	snprintf(gone, sizeof(gone), "file://%s/gone", e->dir);
	assert_int_equal(expect_err(s, OP_REG, "gone", gone, "no such folder"), WT_ENOTFOUND);
	int code = expect_err(s, OP_REG, "gone", "file:///nonexistent/wt-reg", "register_roots");
	assert_int_equal(code, WT_EPERM);
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok,one:registered:ok");
	char *t = registry_text(e);
	assert_non_null(t);
	const char *first = strstr(t, "\none=");
	assert_non_null(first);
	assert_null(strstr(first + 1, "\none=")); /* one line for it */
	assert_null(strstr(t, "gone"));
	free(t);
	free(d1);
	free(d2);
	nng_close(s);
	tw_env_free(e);
}

/* A reply's text quotes the model's URI cut to its buffer (1 KiB): with a
 * long URI of two-byte characters the cut falls inside one for one of the
 * two alignments. Each reply must still be one the client reads (strings
 * are UTF-8: x.rv WT_OK in expect_ok), register and unregister alike. */
static void test_long_utf8_uri(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-utf8", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	for (int align = 0; align < 2; align++) {
		char rel[1400] = "", uri[1500], name[16];
		size_t at = (size_t)snprintf(rel, sizeof(rel), "u%d%s", align, align ? "a" : "");
		for (int c = 0; c < 5; c++) { /* 5 folders of 120 x "é" (240 bytes each) */
			rel[at++] = '/';
			for (int k = 0; k < 120; k++, at += 2)
				memcpy(rel + at, "\xc3\xa9", 2);
		}
		rel[at] = '\0';
		char *dir = make_extra(e, rel, SEED + 10 + (uint64_t)align, uri, sizeof(uri));
		snprintf(name, sizeof(name), "utf%d", align);
		expect_ok(s, OP_REG, name, uri, "registered model");
		expect_ok(s, OP_UNREG, name, NULL, "unregistered model");
		free(dir);
	}
	nng_close(s);
	tw_env_free(e);
}

/* Bad lines are skipped with a warning; the others load, the daemon serves;
 * a registered name that the folder also has: the folder wins. */
static void test_damaged_file(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-damaged", SEED);
	char uri[600], buf[600], other[600];
	char *d = make_extra(e, "x/good", SEED + 5, uri, sizeof(uri));
	char *o = make_extra(e, "x/other", SEED + 6, other, sizeof(other));
	static char text[32768];
	char longl[12000]; /* over the line limit (read in a bounded buffer, skipped) */
	memset(longl, 'a', sizeof(longl) - 1);
	longl[sizeof(longl) - 1] = '\0';
	int n = snprintf(text, sizeof(text),
	                 "# hand-edited\n"
	                 "no equals sign here\n"
	                 "=file:///x\n"
	                 "bad name=file:///x\n"
	                 "%s=file:///x\n"
	                 "\n"
	                 "  good = %s  \r\n"
	                 "good=%s\n"
	                 "llama=%s\n"
	                 "dot=\n"
	                 "\x01\x02\x03 binary junk\n",
	                 longl, uri, other, other);
	memcpy(text + n, "nul\0byte=file:///x\n", 20); /* a NUL byte: skipped too */
	n += 20;
	assert_int_equal(mkdir(e->cache, 0755), 0);
	assert_int_equal(tu_write_file(e->cache, WD_REGISTRY_FILE, text, (size_t)n), 0);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	assert_string_equal(summary(s, buf, sizeof(buf)), "good:registered:ok,llama:folder:ok");
	assert_string_equal(listed_uri(s, "good", buf, sizeof(buf)), uri); /* the first line */
	assert_null(strstr(listed_uri(s, "llama", buf, sizeof(buf)), "x/other"));
	manifest_ok(s, "good");
	manifest_ok(s, "llama");
	/* the next write keeps the good registration only */
	expect_ok(s, OP_REG, "other", other, "registered model 'other'");
	char *t = registry_text(e);
	printf("rewritten:\n%s", t);
	char line[1400];
	snprintf(line, sizeof(line), "\ngood=%s\nother=%s\n", uri, other);
	assert_non_null(strstr(t, line));
	assert_null(strstr(t, "llama="));
	assert_null(strstr(t, "junk"));
	free(t);
	free(d);
	free(o);
	nng_close(s);
	tw_env_free(e);
}

/* A FIFO where the registry file goes: the start warns and serves (the open
 * waited for a writer: weightd never listened), and the next registration
 * writes a file in its place. A start still blocked after 10 s fails the test;
 * the test then opens the FIFO for writing, which lets that start go on. */
typedef struct fifo_start {
	tw_env *e;
	int rv;
	_Atomic bool done;
} fifo_start;

static void *fifo_start_main(void *arg)
{
	fifo_start *f = arg;
	f->rv = tw_start(f->e);
	atomic_store(&f->done, true);
	return NULL;
}

static void test_registry_fifo(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-fifo", SEED);
	char uri[600], buf[600];
	char *d = make_extra(e, "x/good", SEED + 5, uri, sizeof(uri));
	assert_int_equal(mkdir(e->cache, 0755), 0);
	char *p = tu_path(e->cache, WD_REGISTRY_FILE);
	assert_int_equal(mkfifo(p, 0600), 0);
	fifo_start f = {.e = e};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, fifo_start_main, &f), 0);
	for (int i = 0; i < 1000 && !atomic_load(&f.done); i++)
		usleep(10 * 1000);
	bool in_time = atomic_load(&f.done);
	if (!in_time) { /* a writer ends the reader's open: the start goes on */
		int w = open(p, O_WRONLY | O_NONBLOCK);
		if (w >= 0)
			close(w);
	}
	pthread_join(th, NULL);
	printf("start with a FIFO as the registry file: %s, rv %d\n",
	       in_time ? "returned" : "blocked for 10 s", f.rv);
	assert_true(in_time);
	assert_int_equal(f.rv, WT_OK);
	nng_socket s = tw_dial(e->url);
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok");
	expect_ok(s, OP_REG, "good", uri, "registered model 'good'");
	struct stat sb;
	assert_int_equal(stat(p, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	free(p);
	free(d);
	nng_close(s);
	tw_env_free(e);
}

/* A registered model whose source is gone at start: listed unavailable, still
 * registered (unregister works), the others are served. */
static void test_source_removed(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-removed", SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "revalidate_ms", "0", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	char uri[600], buf[600];
	char *dir = make_extra(e, "y/vanish", SEED + 7, uri, sizeof(uri));
	expect_ok(s, OP_REG, "vanish", uri, "registered model 'vanish'");
	nng_close(s);
	tw_stop(e);
	char *moved = tu_path(e->dir, "y/moved");
	assert_int_equal(rename(dir, moved), 0);
	assert_int_equal(tw_start(e), WT_OK);
	s = tw_dial(e->url);
	assert_string_equal(summary(s, buf, sizeof(buf)),
	                    "llama:folder:ok,vanish:registered:unavailable");
	manifest_ok(s, "llama");
	tw_reply x = tw_manifest(s, "vanish", 2, 0);
	assert_true(tw_errcode(&x) > 0);
	printf("vanish: %s\n", x.r->error->message);
	tw_reply_free(&x);
	/* it comes back when the folder does (next revalidation), still registered */
	assert_int_equal(rename(moved, dir), 0);
	manifest_ok(s, "vanish");
	expect_ok(s, OP_UNREG, "vanish", "", "unregistered model 'vanish'");
	restart(e, &s);
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok");
	free(moved);
	free(dir);
	nng_close(s);
	tw_env_free(e);
}

/* The registry cannot be written (its temp path is a folder): the registration
 * is undone (WT_EIO) and an unregister keeps the model. */
static void test_write_failure(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-wfail", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	char uri[600], buf[600];
	char *dir = make_extra(e, "z/m", SEED + 8, uri, sizeof(uri));
	expect_ok(s, OP_REG, "m", uri, "registered model 'm'");
	char name[64]; /* common_write_file_atomic's temp file (the server runs in this process) */
	snprintf(name, sizeof(name), WD_REGISTRY_FILE ".tmp.%ld", (long)getpid());
	char *tmp = tu_path(e->cache, name);
	assert_int_equal(mkdir(tmp, 0755), 0);
	assert_int_equal(expect_err(s, OP_REG, "m2", uri, "not registered"), WT_EIO);
	assert_int_equal(expect_err(s, OP_UNREG, "m", "", "still registered"), WT_EIO);
	assert_string_equal(summary(s, buf, sizeof(buf)), "llama:folder:ok,m:registered:ok");
	assert_int_equal(rmdir(tmp), 0);
	expect_ok(s, OP_REG, "m2", uri, "registered model 'm2'");
	restart(e, &s);
	assert_string_equal(summary(s, buf, sizeof(buf)),
	                    "llama:folder:ok,m:registered:ok,m2:registered:ok");
	free(tmp);
	free(dir);
	nng_close(s);
	tw_env_free(e);
}

/* Unregister keeps the cached shards; EVICT by the old name still drops them. */
static void test_evict_after_unregister(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-evict", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	char uri[600];
	char *dir = make_extra(e, "w/ev", SEED + 9, uri, sizeof(uri));
	expect_ok(s, OP_REG, "ev", uri, "registered model 'ev'");
	manifest_ok(s, "ev");
	expect_ok(s, OP_UNREG, "ev", "", "cached shards stay");
	tw_reply x = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, "ev", 0);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	printf("%s\n", x.r->admin->text);
	assert_int_equal(x.r->admin->shards, 2); /* the 2 ranks of TP=2 */
	tw_reply_free(&x);
	x = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT, "ev", 0);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	tw_reply_free(&x);
	free(dir);
	nng_close(s);
	tw_env_free(e);
}

typedef struct churn_arg {
	const char *url;
	const char *uri;
	int t;
	int failures;
} churn_arg;

/* Register/unregister "c<t>" 10 times, then register it again if t is even. */
static void *churn_main(void *p)
{
	churn_arg *a = p;
	nng_socket s = tw_dial(a->url);
	char name[16];
	snprintf(name, sizeof(name), "c%d", a->t);
	for (int j = 0; j < 21; j++) {
		if (j == 20 && a->t % 2 != 0)
			break;
		tw_reply x = tw_admin_uri(s, j % 2 ? OP_UNREG : OP_REG, name, a->uri, 0);
		a->failures += x.rv != WT_OK || x.r->body_case != WEIGHTS__REPLY__BODY_ADMIN;
		tw_reply_free(&x);
	}
	nng_close(s);
	return NULL;
}

/* Four clients register and unregister at once while a fifth lists: the file
 * written last holds exactly the models registered in memory (a restart shows
 * c0 and c2). */
static void test_concurrent(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-churn", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	char uri[600], buf[600];
	char *dir = make_extra(e, "c/m", SEED + 10, uri, sizeof(uri));
	churn_arg a[4];
	pthread_t th[4];
	for (int t = 0; t < 4; t++) {
		a[t] = (churn_arg){.url = e->url, .uri = uri, .t = t};
		assert_int_equal(pthread_create(&th[t], NULL, churn_main, &a[t]), 0);
	}
	nng_socket s = tw_dial(e->url);
	for (int i = 0; i < 20; i++) {
		tw_reply x = list(s);
		tw_reply_free(&x);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		assert_int_equal(a[t].failures, 0);
	}
	const char *want = "c0:registered:ok,c2:registered:ok,llama:folder:ok";
	assert_string_equal(summary(s, buf, sizeof(buf)), want);
	restart(e, &s);
	assert_string_equal(summary(s, buf, sizeof(buf)), want);
	manifest_ok(s, "c2");
	free(dir);
	nng_close(s);
	tw_env_free(e);
}

/* The library calls: wt_client_register / wt_client_unregister, the
 * WT_ADMIN_* codes through wt_client_admin, wt_model_info.source. */
static void test_client_api(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reg-client", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	char uri[600];
	char *dir = make_extra(e, "k/api", SEED + 11, uri, sizeof(uri));
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {e->url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	wt_client *c;
	wt_errbuf err;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_admin_result r = {0};
	assert_int_equal(wt_client_register(c, "api", uri, &r, &err), WT_OK);
	printf("%s\n", r.text);
	assert_non_null(strstr(r.text, "registered model 'api'"));
	assert_true(r.bytes > 0);
	wt_admin_result_clear(&r);
	assert_int_equal(wt_client_register(c, "api", NULL, &r, &err), WT_EINVAL);
	assert_int_equal(wt_client_admin(c, WT_ADMIN_REGISTER, "api", NULL, &r, &err), WT_EINVAL);
	wt_model_info *list = NULL;
	size_t n = 0;
	assert_int_equal(wt_client_list_models(c, &list, &n, &err), WT_OK);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "api");
	assert_string_equal(list[0].source, "registered");
	assert_string_equal(list[1].source, "folder");
	wt_model_list_free(list, n);
	assert_int_equal(wt_client_unregister(c, "llama", &r, &err), WT_EPERM);
	printf("%s\n", err.msg);
	assert_int_equal(wt_client_admin(c, WT_ADMIN_UNREGISTER, "api", NULL, &r, &err), WT_OK);
	printf("%s\n", r.text);
	wt_admin_result_clear(&r);
	assert_int_equal(wt_client_unregister(c, "api", &r, &err), WT_ENOTFOUND);
	assert_int_equal(wt_client_unregister(c, "", &r, &err), WT_EINVAL);
	wt_client_close(c);
	free(dir);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_persist),
	    cmocka_unit_test(test_unregister_refused),
	    cmocka_unit_test(test_duplicate_and_invalid),
	    cmocka_unit_test(test_damaged_file),
	    cmocka_unit_test(test_registry_fifo),
	    cmocka_unit_test(test_refused_line_kept),
	    cmocka_unit_test(test_refused_twin_unregistered),
	    cmocka_unit_test(test_source_removed),
	    cmocka_unit_test(test_write_failure),
	    cmocka_unit_test(test_evict_after_unregister),
	    cmocka_unit_test(test_concurrent),
	    cmocka_unit_test(test_client_api),
	    cmocka_unit_test(test_long_utf8_uri),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
