/*
 * test_weightd_auth.c — who may do what (weightd/auth.c, config_token.c,
 * regpolicy.c, pipes.c, proto/wire_check.c): a data token cannot run admin
 * ops; a wrong-token Hello de-authenticates; tokens from a file and from the
 * environment; strings with NUL or invalid UTF-8 are refused without echo
 * (protobuf-c would truncate "s3cret\0junk" to the real token); auth failures
 * are logged at a bounded rate; REGISTER reaches only register_roots /
 * register_hosts / register_buckets; a silent URL neither blocks the data
 * workers nor the registration for longer than register_timeout_ms; a
 * registered model's redirects stay on register_hosts and its folder, as
 * opened, under register_roots; the connection cap and the Hello deadline
 * close connections.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "test_objstore_util.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"

#define SEED  777u
#define OP(x) WEIGHTS__ADMIN_REQUEST__OP__OP_##x

static void set(tw_env *e, const char *key, const char *val)
{
	wt_errbuf err;
	int rv = wd_config_set(&e->cfg, key, val, "test", &err);
	if (rv != WT_OK)
		printf("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
}

static tw_reply list(nng_socket s)
{
	return tw_list_models(s);
}

static int admin_code(nng_socket s, Weights__AdminRequest__Op op, const char *model,
                      const char *uri, uint32_t tp)
{
	tw_reply x = tw_admin_uri(s, op, model, uri, tp);
	assert_int_equal(x.rv, WT_OK);
	int code = tw_errcode(&x);
	printf("admin op %d: %s\n", (int)op,
	       code > 0           ? x.r->error->message
	       : x.r->admin->text ? x.r->admin->text
	                          : "");
	tw_reply_free(&x);
	return code < 0 ? WT_OK : code;
}

/* item 4: a data token reads, only the admin token changes anything */
static void test_roles(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-roles", SEED);
	set(e, "auth_token", "data-tok");
	set(e, "admin_token", "admin-tok");
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket d = tw_dial(e->url);
	tw_reply x = tw_hello(d, 1, "data-tok");
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	x = tw_manifest(d, "llama", 1, 0);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&x);
	assert_int_equal(admin_code(d, OP(STATS), "", "", 0), WT_OK);
	char uri[600];
	snprintf(uri, sizeof(uri), "file://%s/llama", e->models);
	assert_int_equal(admin_code(d, OP(EVICT), "", "", 0), WT_EPERM);
	assert_int_equal(admin_code(d, OP(VERIFY), "", "", 0), WT_EPERM);
	assert_int_equal(admin_code(d, OP(RECLAIM), "", "", 0), WT_EPERM);
	assert_int_equal(admin_code(d, OP(WARM), "llama", "", 2), WT_EPERM);
	assert_int_equal(admin_code(d, OP(REGISTER), "again", uri, 0), WT_EPERM);
	assert_int_equal(admin_code(d, OP(UNREGISTER), "again", "", 0), WT_EPERM);
	/* the admin token: everything, data included */
	nng_socket a = tw_dial(e->url);
	x = tw_hello(a, 1, "admin-tok");
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	assert_int_equal(admin_code(a, OP(REGISTER), "again", uri, 0), WT_OK);
	assert_int_equal(admin_code(a, OP(UNREGISTER), "again", "", 0), WT_OK);
	assert_int_equal(admin_code(a, OP(EVICT), "", "", 0), WT_OK);
	x = tw_manifest(a, "llama", 1, 0);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&x);
	nng_close(a);
	nng_close(d);
	tw_stop(e);
	/* auth_token without admin_token: admin ops are off for everyone */
	free(e->cfg.admin_token);
	e->cfg.admin_token = strdup("");
	assert_int_equal(tw_start(e), WT_OK);
	d = tw_dial(e->url);
	x = tw_hello(d, 1, "data-tok");
	tw_reply_free(&x);
	tw_reply y = tw_admin(d, OP(EVICT), "", 0);
	assert_int_equal(tw_errcode(&y), WT_EPERM);
	assert_non_null(strstr(y.r->error->message, "admin_token"));
	tw_reply_free(&y);
	nng_close(d);
	tw_env_free(e);
}

/* item 6: a later wrong-token Hello takes the role away */
static void test_deauth(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-deauth", SEED);
	set(e, "auth_token", "s3cret");
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply x = tw_hello(s, 1, "s3cret");
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	x = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&x);
	x = tw_hello(s, 1, "wrong");
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	x = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	x = list(s);
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

/* item 4: tokens from a file and from the environment, never on the command line */
static void test_token_sources(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("wd-tokfile");
	assert_int_equal(tu_write_file(dir, "auth", "from-file\n", 10), 0);
	assert_int_equal(tu_write_file(dir, "nul", "ab\0cd\n", 6), 0);
	assert_int_equal(tu_write_file(dir, "empty", "\n", 1), 0);
	char *auth = tu_path(dir, "auth"), *nul = tu_path(dir, "nul"),
	     *empty = tu_path(dir, "empty");
	chmod(auth, 0600);
	wd_config c;
	wt_errbuf err;
	assert_int_equal(setenv("WEIGHTD_ADMIN_TOKEN", "from-env", 1), 0);
	assert_int_equal(wd_config_init(&c), WT_OK);
	char *a1[] = {"weightd", "--auth-token-file", auth};
	assert_int_equal(wd_config_parse_args(&c, 3, a1, &err), WT_OK);
	assert_string_equal(c.auth_token, "from-file");
	assert_string_equal(c.admin_token, "from-env");
	wd_config_free(&c);
	/* both the key and its file; a NUL in the file; an empty file; admin == auth */
	char *a2[] = {"weightd", "--auth-token-file", auth, "--auth-token", "x"};
	char *a3[] = {"weightd", "--auth-token-file", nul};
	char *a4[] = {"weightd", "--admin-token-file", empty};
	char *a5[] = {"weightd", "--auth-token", "from-env"};
	char **bad[] = {a2, a3, a4, a5};
	int nbad[] = {5, 3, 3, 3};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(wd_config_init(&c), WT_OK);
		assert_int_equal(wd_config_parse_args(&c, nbad[i], bad[i], &err), WT_ECONFIG);
		printf("refused: %s\n", err.msg);
		assert_null(strstr(err.msg, "from-env")); /* never echoed */
		wd_config_free(&c);
	}
	unsetenv("WEIGHTD_ADMIN_TOKEN");
	free(auth);
	free(nul);
	free(empty);
	tu_rmrf(dir);
	free(dir);
}

/* Pack rq, then overwrite the first occurrence of `mark` in the bytes with repl
 * (same length): strings protobuf-c itself would never produce. */
static tw_reply call_patched(nng_socket s, Weights__Request *rq, const char *mark, const char *repl,
                             size_t n)
{
	size_t len = wire_framed_size(&rq->base);
	uint8_t *buf = malloc(len);
	assert_int_equal(wire_frame(&rq->base, buf, len), len);
	uint8_t *p = memmem(buf, len, mark, n);
	assert_non_null(p);
	memcpy(p, repl, n);
	tw_reply x = tw_raw(s, buf, len);
	free(buf);
	return x;
}

static tw_reply hello_patched(nng_socket s, const char *token, const char *client_id,
                              const char *mark, const char *repl, size_t n)
{
	Weights__Hello h = WEIGHTS__HELLO__INIT;
	h.protocol_version = 1;
	h.client_id = (char *)client_id;
	h.token = (char *)token;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 1;
	rq.body_case = WEIGHTS__REQUEST__BODY_HELLO;
	rq.hello = &h;
	return call_patched(s, &rq, mark, repl, n);
}

/* item 6: NUL / invalid UTF-8 in tokens, client ids, model names: refused */
static void test_bad_strings(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-strings", SEED);
	set(e, "auth_token", "s3cret");
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	/* "s3cret\0junk": protobuf-c alone unpacks it as "s3cret" */
	tw_reply x = hello_patched(s, "s3cretXjunk", "c", "s3cretX", "s3cret\0", 7);
	assert_int_equal(tw_errcode(&x), WT_EINVAL);
	printf("%s\n", x.r->error->message);
	assert_null(strstr(x.r->error->message, "junk"));
	assert_null(strstr(x.r->error->message, "s3cret"));
	tw_reply_free(&x);
	x = list(s);
	assert_int_equal(tw_errcode(&x), WT_EPERM); /* not authenticated */
	tw_reply_free(&x);
	/* invalid UTF-8 in the client id */
	x = hello_patched(s, "s3cret", "abcZ", "abcZ", "abc\xff", 4);
	assert_int_equal(tw_errcode(&x), WT_EINVAL);
	assert_non_null(strstr(x.r->error->message, "client_id"));
	assert_null(memchr(x.r->error->message, 0xff, strlen(x.r->error->message)));
	tw_reply_free(&x);
	x = tw_hello(s, 1, "s3cret");
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	/* "llama\0x" would be served as "llama" */
	Weights__Layout l = WEIGHTS__LAYOUT__INIT;
	l.tp_size = 1;
	l.ep_size = 1;
	l.group_size = 128;
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	mr.model = "llamaQx";
	mr.layout = &l;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 4;
	rq.body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	rq.manifest = &mr;
	x = call_patched(s, &rq, "llamaQ", "llama\0", 6);
	assert_int_equal(tw_errcode(&x), WT_EINVAL);
	assert_non_null(strstr(x.r->error->message, "model"));
	tw_reply_free(&x);
	/* an overlong '/' in a REGISTER URI */
	x = tw_hello(s, 1, "s3cret");
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

static atomic_int n_fail_lines, n_suppressed_lines;

static void count_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	if (strstr(msg, "bad or missing token") != NULL)
		atomic_fetch_add(&n_fail_lines, 1);
	if (strstr(msg, "more auth failures not logged") != NULL)
		atomic_fetch_add(&n_suppressed_lines, 1);
}

/* item 6: a client cannot flood the log with failed Hellos */
static void test_auth_log_rate(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-authlog", SEED);
	set(e, "auth_token", "s3cret");
	assert_int_equal(tw_start(e), WT_OK);
	common_log_set(count_log, NULL, WT_LOG_WARNING);
	nng_socket s = tw_dial(e->url);
	for (int i = 0; i < 60; i++) {
		tw_reply x = tw_hello(s, 1, "wrong");
		assert_int_equal(tw_errcode(&x), WT_EPERM);
		tw_reply_free(&x);
	}
	int lines = atomic_load(&n_fail_lines);
	printf("60 bad Hellos: %d log lines\n", lines);
	assert_true(lines >= 1 && lines <= 30); /* 10 a second; the loop may span 2-3 s */
	usleep(1100 * 1000);
	tw_reply x = tw_hello(s, 1, "wrong");
	tw_reply_free(&x);
	assert_int_equal(atomic_load(&n_suppressed_lines) >= 1, lines < 60);
	common_log_set(NULL, NULL, WT_LOG_WARNING);
	nng_close(s);
	tw_env_free(e);
}

static void clear_list(wd_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* item 5: REGISTER reaches only the configured roots, hosts and buckets */
static void test_register_reach(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-reach", SEED);
	clear_list(&e->cfg.register_roots); /* the default: models_dir only */
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	char uri[700];
	char *out = tu_path(e->dir, "elsewhere/x");
	assert_int_equal(tw_write_llama8(out, SEED + 1), 0);
	snprintf(uri, sizeof(uri), "file://%s", out);
	assert_int_equal(admin_code(s, OP(REGISTER), "x", uri, 0), WT_EPERM);
	assert_int_equal(admin_code(s, OP(REGISTER), "x", out, 0), WT_EPERM); /* plain path */
	/* a sibling sharing the prefix: <dir>/models2 is not under <dir>/models */
	char *sib = tu_path(e->dir, "models2/y");
	assert_int_equal(tw_write_llama8(sib, SEED + 2), 0);
	snprintf(uri, sizeof(uri), "file://%s", sib);
	assert_int_equal(admin_code(s, OP(REGISTER), "y", uri, 0), WT_EPERM);
	/* .. and a symlink out of the root */
	snprintf(uri, sizeof(uri), "file://%s/../elsewhere/x", e->models);
	assert_int_equal(admin_code(s, OP(REGISTER), "x", uri, 0), WT_EPERM);
	char *link = tu_path(e->models, "link");
	assert_int_equal(symlink(out, link), 0);
	snprintf(uri, sizeof(uri), "file://%s", link);
	assert_int_equal(admin_code(s, OP(REGISTER), "x", uri, 0), WT_EPERM);
	/* not an existing folder outside: the same answer (no existence oracle) */
	assert_int_equal(admin_code(s, OP(REGISTER), "x", "file:///etc/nonexistent-wt", 0),
	                 WT_EPERM);
	/* inside the root: allowed */
	snprintf(uri, sizeof(uri), "file://%s/llama", e->models);
	assert_int_equal(admin_code(s, OP(REGISTER), "alias", uri, 0), WT_OK);
	/* http(s) and s3: refused unless configured, the message names the key */
	tw_reply x = tw_admin_uri(s, OP(REGISTER), "h", "http://169.254.169.254/latest/", 0);
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	assert_non_null(strstr(x.r->error->message, "register_hosts"));
	tw_reply_free(&x);
	x = tw_admin_uri(s, OP(REGISTER), "b", "s3://internal-bucket/m", 0);
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	assert_non_null(strstr(x.r->error->message, "register_buckets"));
	tw_reply_free(&x);
	nng_close(s);
	tw_stop(e);
	/* hosts: exact host, port rules, no userinfo */
	set(e, "register_hosts", "models.example:8080");
	set(e, "register_buckets", "weights");
	wt_errbuf err;
	assert_int_equal(wd_register_allowed(&e->cfg, "http://models.example:8080/m", &err), WT_OK);
	assert_int_equal(wd_register_allowed(&e->cfg, "http://models.example/m", &err), WT_EPERM);
	assert_int_equal(
	    wd_register_allowed(&e->cfg, "http://models.example:8080@10.0.0.1/m", &err), WT_EPERM);
	assert_int_equal(wd_register_allowed(&e->cfg, "https://evil.example:8080/m", &err),
	                 WT_EPERM);
	assert_int_equal(wd_register_allowed(&e->cfg, "s3://weights/m", &err), WT_OK);
	assert_int_equal(wd_register_allowed(&e->cfg, "s3://weightsx/m", &err), WT_EPERM);
	assert_int_equal(wd_register_allowed(&e->cfg, "ftp://x/m", &err), WT_EUNSUPPORTED);
	free(link);
	free(sib);
	free(out);
	tw_env_free(e);
}

typedef struct reg_arg {
	const char *url;
	const char *name; /* NULL: "silent" */
	char uri[100];
	int code;
	double secs;
} reg_arg;

static double now_s(void)
{
	return (double)common_now_ns() / 1e9;
}

static void *register_thread(void *p)
{
	reg_arg *a = p;
	nng_socket s = tw_dial(a->url);
	double t0 = now_s();
	a->code = admin_code(s, OP(REGISTER), a->name ? a->name : "silent", a->uri, 0);
	a->secs = now_s() - t0;
	nng_close(s);
	return NULL;
}

/* item 5: a silent URL neither holds the data workers nor the registration */
static void test_register_silent(void **state)
{
	(void)state;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 16), 0); /* the kernel accepts; nobody ever answers */
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	char host[64];
	snprintf(host, sizeof(host), "127.0.0.1:%d", ntohs(sa.sin_port));
	tw_env *e = tw_env_new("wd-silent", SEED);
	set(e, "workers", "1"); /* one data worker: REGISTER on it would stop everything */
	set(e, "register_hosts", host);
	set(e, "register_timeout_ms", "1500");
	assert_int_equal(tw_start(e), WT_OK);
	reg_arg a = {.url = e->url};
	snprintf(a.uri, sizeof(a.uri), "http://%s/model", host);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, register_thread, &a), 0);
	usleep(300 * 1000); /* the registration is waiting on the silent server */
	nng_socket s = tw_dial(e->url);
	double t0 = now_s();
	tw_reply x = tw_hello(s, 1, NULL);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	x = list(s);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	tw_reply_free(&x);
	double dt = now_s() - t0;
	/* other admin requests do not queue behind the silent source check */
	t0 = now_s();
	int unreg = admin_code(s, OP(UNREGISTER), "nosuch", "", 0);
	double du = now_s() - t0;
	pthread_join(t, NULL);
	printf("hello + list during a silent registration: %.3f s; an unregister: %s in %.3f s; "
	       "registration: %s after %.3f s\n",
	       dt, wt_errname(unreg), du, wt_errname(a.code), a.secs);
	assert_true(dt < 5.0);
	assert_int_equal(unreg, WT_ENOTFOUND);
	assert_true(du < 0.8); /* one admin thread: it waited for the check (~1.2 s) */
	assert_int_equal(a.code, WT_ETIMEDOUT);
	assert_true(a.secs < 1.5 + 4.0);
	nng_close(s);
	close(lfd); /* the abandoned source check sees the connection reset */
	tw_env_free(e);
}

/* The revision ListModels gives model name ("" if not listed). */
static void revision_of(nng_socket s, const char *name, char out[65])
{
	tw_reply x = list(s);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	out[0] = '\0';
	for (size_t i = 0; i < x.r->models->n_models; i++)
		if (strcmp(x.r->models->models[i]->name, name) == 0)
			snprintf(out, 65, "%s", x.r->models->models[i]->revision);
	tw_reply_free(&x);
}

/* e's models_dir over HTTP (tests/integration/objstore_server.py, srv; stop
 * it with os_stop), its host "127.0.0.1:PORT" into host and register_hosts.
 * The llama folder is dated a while ago: one answered in the second of its
 * last write would be asked about again a second later (README "Revision
 * digest"), past a short register_timeout_ms. */
static void serve_models(tw_env *e, os_helper *srv, char host[64])
{
	char *llama = tu_path(e->models, "llama");
	assert_int_equal(tu_touch_dir(llama, -10000000000ll), 0);
	free(llama);
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", e->models, "--stdin", NULL};
	int port = 0;
	assert_int_equal(os_start(srv, argv, 20000), 0);
	free(script);
	assert_int_equal(sscanf(srv->line, "PORT %d", &port), 1);
	snprintf(host, 64, "127.0.0.1:%d", port);
	set(e, "register_hosts", host);
}

/* The source check is bounded by register_timeout_ms, not the content digest:
 * a checkpoint whose bytes take longer than that to read registers (the
 * probe reads config, index and headers; the registration reads every byte
 * once), with the revision of the same bytes through file://. */
static void test_register_slow_bytes(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-slowreg", SEED);
	os_helper srv;
	char host[64];
	serve_models(e, &srv, host);
	set(e, "register_timeout_ms", "700"); /* the probe's few small GETs, under ASan too */
	assert_int_equal(tw_start(e), WT_OK);
	reg_arg a = {.url = e->url, .name = "slow"};
	/* /slow/: every GET of more than 64 KiB (the digest's) waits 1 s */
	snprintf(a.uri, sizeof(a.uri), "http://%s/slow/llama", host);
	register_thread(&a);
	printf("register over a source whose bytes take >= 1 s: %s after %.3f s\n",
	       wt_errname(a.code), a.secs);
	assert_int_equal(a.code, WT_OK);
	assert_true(a.secs >= 1.0); /* the digest read every byte, after the probe */
	nng_socket s = tw_dial(e->url);
	char want[65], got[65];
	revision_of(s, "llama", want);
	revision_of(s, "slow", got);
	assert_int_equal(strlen(want), 64);
	assert_string_equal(got, want);
	nng_close(s);
	os_stop(&srv);
	tw_env_free(e);
}

/* A registered http model's redirects lead only to register_hosts (the
 * REGISTER check read the URI's host alone, and the store followed any
 * redirect: an allowed host could point the daemon at any other). Here
 * 127.0.0.1:PORT and localhost are allowed, 127.0.0.2 (this server too) is
 * not: a redirect on the same host or to localhost registers, one to
 * 127.0.0.2 is refused by the source check (/away/: every request) or by the
 * registration's read of the tensor bytes (/bigaway/: only those). */
static void test_register_redirects(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-redir", SEED);
	os_helper srv;
	char host[64];
	serve_models(e, &srv, host);
	set(e, "register_hosts", "LocalHost");
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	const struct {
		const char *name, *path;
		int code;
	} cases[] = {
	    {"same", "redir/llama", WT_OK},                   /* 302 to /ok/llama here */
	    {"named", "away/localhost/llama", WT_OK},         /* to localhost:PORT */
	    {"away", "away/127.0.0.2/llama", WT_EPERM},       /* config.json already */
	    {"bigaway", "bigaway/127.0.0.2/llama", WT_EPERM}, /* the tensor bytes only */
	};
	char want[65], got[65];
	revision_of(s, "llama", want);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char uri[160];
		snprintf(uri, sizeof(uri), "http://%s/%s", host, cases[i].path);
		tw_reply x = tw_admin_uri(s, OP(REGISTER), cases[i].name, uri, 0);
		assert_int_equal(x.rv, WT_OK);
		int code = tw_errcode(&x);
		printf("register %s: %s\n", uri, code > 0 ? x.r->error->message : "registered");
		assert_int_equal(code < 0 ? WT_OK : code, cases[i].code);
		if (code > 0) { /* names the target and the key to set */
			assert_non_null(strstr(x.r->error->message, "127.0.0.2"));
			assert_non_null(strstr(x.r->error->message, "register_hosts"));
		}
		tw_reply_free(&x);
		revision_of(s, cases[i].name, got);
		assert_string_equal(got, code > 0 ? "" : want); /* the same bytes, or nothing */
	}
	nng_close(s);
	os_stop(&srv);
	tw_env_free(e);
}

/* register_step hook of test_register_swapped: at step, the folder
 * (from) moves aside and a symlink to `to` takes its name. Runs on the
 * daemon's admin thread: no cmocka asserts, done says it happened. */
static struct {
	int step;
	char from[600], to[600];
	atomic_bool done;
} g_swap;

static void swap_step(void *ctx, const char *uri, int step)
{
	(void)ctx, (void)uri;
	char aside[700];
	snprintf(aside, sizeof(aside), "%s.old", g_swap.from);
	if (step == g_swap.step && rename(g_swap.from, aside) == 0 &&
	    symlink(g_swap.to, g_swap.from) == 0)
		atomic_store(&g_swap.done, true);
}

/* A folder under register_roots swapped for a symlink to one outside after
 * REGISTER's check (step 1: before the source check opens it; step 2: after
 * it, before the registration opens it): refused, nothing registered. The
 * check reads the name; what is checked now is the folder the store holds
 * open (store_local_root). Before, both registered the outside folder. */
static void test_register_swapped(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-swap", SEED);
	char *roots = tu_path(e->dir, "roots");
	wd_strlist_free(&e->cfg.register_roots); /* tw_env_new's: e->dir, models_dir inside */
	set(e, "register_roots", roots);
	free(roots);
	e->faults.register_step = swap_step;
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	for (int step = 1; step <= 2; step++) {
		char rel[32], name[16], uri[700], got[65];
		snprintf(rel, sizeof(rel), "roots/m%d", step);
		snprintf(name, sizeof(name), "m%d", step);
		char *dir = tu_path(e->dir, rel);
		assert_int_equal(tw_write_llama8(dir, SEED + (uint64_t)step), 0);
		g_swap.step = step;
		atomic_store(&g_swap.done, false);
		snprintf(g_swap.from, sizeof(g_swap.from), "%s", dir);
		snprintf(g_swap.to, sizeof(g_swap.to), "%s/llama", e->models); /* outside */
		snprintf(uri, sizeof(uri), "file://%s", dir);
		tw_reply x = tw_admin_uri(s, OP(REGISTER), name, uri, 0);
		assert_int_equal(x.rv, WT_OK);
		int code = tw_errcode(&x);
		printf("swapped at step %d: %s\n", step,
		       code > 0 ? x.r->error->message : "registered");
		assert_true(atomic_load(&g_swap.done));
		assert_int_equal(code, WT_EPERM);
		assert_non_null(strstr(x.r->error->message, "swapped for a symlink"));
		tw_reply_free(&x);
		revision_of(s, name, got);
		assert_string_equal(got, "");
		free(dir);
	}
	nng_close(s);
	tw_env_free(e);
}

/* SP over TCP by hand: connect and exchange the 8-byte protocol headers. */
/* item 7: max_connections closes one more at connect */
static void test_max_connections(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-maxconn", SEED);
	set(e, "max_connections", "3");
	assert_int_equal(tw_start(e), WT_OK);
	int fd[4];
	for (int i = 0; i < 3; i++)
		fd[i] = tw_raw_connect(e->url);
	usleep(100 * 1000);
	assert_int_equal(wd_server_n_pipes(e->srv), 3);
	fd[3] = tw_raw_connect(e->url);
	assert_int_equal(tw_closed_within(fd[3], 2000), 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tw_closed_within(fd[i], 400), 0);
	close(fd[3]);
	close(fd[0]);
	usleep(200 * 1000);
	nng_socket s = tw_dial(e->url); /* room again */
	tw_reply x = tw_hello(s, 1, NULL);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	nng_close(s);
	close(fd[1]);
	close(fd[2]);
	tw_env_free(e);
}

/* item 7: with a token, a connection that never says Hello is closed */
static void test_hello_timeout(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-hellotime", SEED);
	set(e, "auth_token", "s3cret");
	set(e, "hello_timeout_ms", "300");
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply x = tw_hello(s, 1, "s3cret");
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	int fd = tw_raw_connect(e->url);
	assert_int_equal(tw_closed_within(fd, 4000), 1);
	close(fd);
	x = list(s); /* the authenticated one stays */
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roles),
	    cmocka_unit_test(test_deauth),
	    cmocka_unit_test(test_token_sources),
	    cmocka_unit_test(test_bad_strings),
	    cmocka_unit_test(test_auth_log_rate),
	    cmocka_unit_test(test_register_reach),
	    cmocka_unit_test(test_register_silent),
	    cmocka_unit_test(test_register_slow_bytes),
	    cmocka_unit_test(test_register_redirects),
	    cmocka_unit_test(test_register_swapped),
	    cmocka_unit_test(test_max_connections),
	    cmocka_unit_test(test_hello_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
