/*
 * test_weightd_regopen.c — a REGISTER opens the new model on a thread of its
 * own (weightd/registry.c): a new revision's digest reads every byte, which
 * for a large remote checkpoint takes minutes. Meanwhile the request answers
 * within its wait_ms with how far the open got, the model is listed as being
 * registered and refused with WT_ENOTFOUND (never served half-open; a
 * client does not retry it for its whole budget, as it would WT_EBUSY), other
 * registrations go on, nothing is written to the registry file until it has
 * opened; a follow request learns the outcome, a failed open leaves nothing
 * registered, and an unregister cancels it. wt_client_register_progress
 * reports the progress and returns at the end.
 *
 * The source is tests/integration/objstore_server.py in /gate/ mode: its
 * tensor reads (GETs over 64 KiB) wait while the test holds the gate closed.
 * An unregister or a stop ends such a read in flight (store_set_cancel), a
 * production's read too. Parked REGISTERs and cut-through chunk requests
 * (each holds an nng context) leave a quarter of the contexts to requests
 * that do not wait.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "test_objstore_util.h"
#include "test_weightd_util.h"
#include "weights/client.h"
#include "weightd/server_int.h"

#define SEED     5151u
#define OP_REG   WEIGHTS__ADMIN_REQUEST__OP__OP_REGISTER
#define OP_UNREG WEIGHTS__ADMIN_REQUEST__OP__OP_UNREGISTER

typedef struct fixture {
	tw_env *e;
	os_helper srv;
	char host[64];
	char uri[160]; /* http://host/gate/src: a copy of the llama outside models_dir */
	nng_socket s;
} fixture;

static void set(tw_env *e, const char *key, const char *val)
{
	wt_errbuf err;
	int rv = wd_config_set(&e->cfg, key, val, "test", &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
}

static void gate(fixture *f, const char *cmd)
{
	assert_int_equal(os_cmd(&f->srv, cmd, 5000), 0);
	assert_string_equal(f->srv.line, "ok");
}

/* kv: NULL or NULL-terminated key, value pairs set before the start; serve:
 * model "big" = the gated source, opened at start (the gate open meanwhile,
 * then closed again). */
static void fx_start_ex(fixture *f, const char *tag, const char *const *kv, bool serve)
{
	memset(f, 0, sizeof(*f));
	f->e = tw_env_new(tag, SEED);
	char *src = tu_path(f->e->dir, "src");
	assert_int_equal(tw_write_llama8(src, SEED), 0); /* the bytes of models_dir's llama */
	assert_int_equal(tu_touch_dir(src, -10000000000ll),
	                 0); /* settled: README "Revision digest" */
	free(src);
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", f->e->dir, "--stdin", NULL};
	assert_int_equal(os_start(&f->srv, argv, 20000), 0);
	free(script);
	int port = 0;
	assert_int_equal(sscanf(f->srv.line, "PORT %d", &port), 1);
	snprintf(f->host, sizeof(f->host), "127.0.0.1:%d", port);
	snprintf(f->uri, sizeof(f->uri), "http://%s/gate/src", f->host);
	set(f->e, "register_hosts", f->host);
	set(f->e, "register_roots", f->e->dir);
	for (size_t i = 0; kv != NULL && kv[i] != NULL; i += 2)
		set(f->e, kv[i], kv[i + 1]);
	if (serve) {
		char spec[200];
		snprintf(spec, sizeof(spec), "big=%s", f->uri);
		set(f->e, "model", spec);
		gate(f, "open");
	}
	assert_int_equal(tw_start(f->e), WT_OK);
	if (serve)
		gate(f, "close");
	f->s = tw_dial(f->e->url);
}

static void fx_start(fixture *f, const char *tag)
{
	fx_start_ex(f, tag, NULL, false);
}

static void fx_stop(fixture *f)
{
	nng_close(f->s);
	os_cmd(&f->srv, "open", 5000); /* a stop never waits on the gate */
	tw_env_free(f->e);
	os_stop(&f->srv);
}

/* REGISTER (or follow) with wait_ms; the reply, checked to be one. */
static tw_reply reg(nng_socket s, const char *name, const char *uri, uint32_t wait_ms, bool follow)
{
	Weights__AdminRequest ar = WEIGHTS__ADMIN_REQUEST__INIT;
	ar.op = OP_REG;
	ar.model = (char *)name;
	ar.uri = (char *)uri;
	ar.wait_ms = wait_ms;
	ar.follow = follow;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 7;
	rq.body_case = WEIGHTS__REQUEST__BODY_ADMIN;
	rq.admin = &ar;
	tw_reply x = tw_call(s, &rq);
	assert_int_equal(x.rv, WT_OK);
	if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		printf("register %s%s: %s: %s\n", name, follow ? " (follow)" : "",
		       wt_errname(tw_errcode(&x)), x.r->error->message);
	else
		printf("register %s%s: %s\n", name, follow ? " (follow)" : "", x.r->admin->text);
	return x;
}

/* The reply says the registration still opens, with its progress (the
 * total is known once the open read the headers: a first reply under load
 * may come before). */
static void expect_opening(tw_reply *x, bool total_known)
{
	assert_int_equal(x->r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_true(x->r->admin->opening);
	if (total_known)
		assert_true(x->r->admin->open_total > 65536); /* the shard's size */
	assert_true(x->r->admin->open_read < x->r->admin->open_total ||
	            x->r->admin->open_total == 0);
	assert_non_null(strstr(x->r->admin->text, "registering model"));
	tw_reply_free(x);
}

static const Weights__ModelInfo *listed(const tw_reply *x, const char *name)
{
	for (size_t i = 0; i < x->r->models->n_models; i++)
		if (strcmp(x->r->models->models[i]->name, name) == 0)
			return x->r->models->models[i];
	return NULL;
}

static tw_reply list(nng_socket s)
{
	tw_reply x = tw_list_models(s);
	assert_int_equal(x.rv, WT_OK);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	return x;
}

static bool in_registry_file(const tw_env *e, const char *name)
{
	char *p = tu_path(e->cache, WD_REGISTRY_FILE);
	size_t len;
	char *t = tu_read_file(p, &len);
	free(p);
	char line[64];
	snprintf(line, sizeof(line), "\n%s=", name);
	bool yes = t != NULL && strstr(t, line) != NULL;
	free(t);
	return yes;
}

static double now_s(void)
{
	return (double)common_now_ns() / 1e9;
}

/* The registration answers within its wait_ms while the bytes are read; the
 * model is not served, listed as being registered, not in the file; another
 * registration completes meanwhile; a follow learns the end; then it is
 * served with the revision of the same bytes through file://. */
static void test_register_background(void **state)
{
	(void)state;
	fixture f;
	fx_start(&f, "wd-regbg");
	double t0 = now_s();
	tw_reply x = reg(f.s, "big", f.uri, 300, false);
	double dt = now_s() - t0;
	printf("first reply after %.3f s\n", dt);
	assert_true(dt < 3.0);
	expect_opening(&x, false);

	x = tw_manifest(f.s, "big", 2, 1); /* never served half-open */
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	printf("manifest meanwhile: %s\n", x.r->error->message);
	assert_non_null(strstr(x.r->error->message, "being registered"));
	tw_reply_free(&x);

	x = list(f.s);
	const Weights__ModelInfo *mi = listed(&x, "big");
	assert_non_null(mi);
	printf("listed: available %d registering %d opening %d %llu/%llu: %s\n", mi->available,
	       mi->registering, mi->opening, (unsigned long long)mi->open_read,
	       (unsigned long long)mi->open_total, mi->error);
	assert_false(mi->available);
	assert_true(mi->registering && mi->opening);
	uint64_t ms[WD_MODEL_N_STATES]; /* weightd_models{state=...} */
	wd_models_count(f.e->srv->models, ms);
	assert_int_equal(ms[WD_MODEL_REGISTERING], 1);
	assert_int_equal(ms[WD_MODEL_AVAILABLE], 1);
	assert_non_null(strstr(mi->error, "being registered"));
	tw_reply_free(&x);
	assert_false(in_registry_file(f.e, "big"));

	/* the same registration again: waits on that one, starts nothing */
	x = reg(f.s, "big", f.uri, 200, false);
	expect_opening(&x, false);
	/* another URI for the name is refused at once */
	char other[300];
	snprintf(other, sizeof(other), "file://%s/src", f.e->dir);
	x = reg(f.s, "big", other, 200, false);
	assert_int_equal(tw_errcode(&x), WT_EEXIST);
	tw_reply_free(&x);
	/* other registrations are not held up behind it */
	t0 = now_s();
	x = reg(f.s, "local", other, 0, false);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_false(x.r->admin->opening);
	assert_non_null(strstr(x.r->admin->text, "registered model 'local'"));
	tw_reply_free(&x);
	printf("another registration meanwhile: %.3f s\n", now_s() - t0);
	assert_true(in_registry_file(f.e, "local"));
	assert_false(in_registry_file(f.e, "big"));

	x = reg(f.s, "big", f.uri, 200, true);
	expect_opening(&x, true);
	gate(&f, "open");
	x = reg(f.s, "big", f.uri, 0, true);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_false(x.r->admin->opening);
	assert_non_null(strstr(x.r->admin->text, "registered model 'big'"));
	tw_reply_free(&x);
	assert_true(in_registry_file(f.e, "big"));

	x = list(f.s);
	mi = listed(&x, "big");
	const Weights__ModelInfo *llama = listed(&x, "llama");
	assert_non_null(mi);
	assert_true(mi->available && !mi->registering && !mi->opening);
	assert_string_equal(mi->revision, llama->revision);
	assert_string_equal(mi->source, "registered");
	tw_reply_free(&x);
	wd_models_count(f.e->srv->models, ms);
	assert_int_equal(ms[WD_MODEL_REGISTERING], 0);
	assert_int_equal(ms[WD_MODEL_AVAILABLE], 3); /* llama, local, big */
	x = tw_manifest(f.s, "big", 2, 1);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&x);
	/* a follow after the end still learns it; one for nothing is refused */
	x = reg(f.s, "big", f.uri, 0, true);
	assert_non_null(strstr(x.r->admin->text, "registered model 'big'"));
	tw_reply_free(&x);
	x = reg(f.s, "nosuch", f.uri, 0, true);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	tw_reply_free(&x);
	fx_stop(&f);
}

/* A source that changes while its bytes are read (rewritten in place, same
 * size, a new mtime: a new ETag): the open fails after the reply, the follow
 * gets the loader's error naming the file, and nothing is registered. */
static void test_register_fails_late(void **state)
{
	(void)state;
	fixture f;
	fx_start(&f, "wd-regfail");
	tw_reply x = reg(f.s, "big", f.uri, 300, false);
	expect_opening(&x, false);
	const char *key = "model.safetensors";
	char *src = tu_path(f.e->dir, "src");
	char *shard = tu_path(src, key);
	assert_int_equal(tu_flip_last_byte(shard, 5), 0); /* a new version on any clock */
	gate(&f, "open");
	x = reg(f.s, "big", f.uri, 0, true);
	int code = tw_errcode(&x);
	assert_true(code > 0);
	assert_non_null(strstr(x.r->error->message, key));
	tw_reply_free(&x);
	x = list(f.s);
	assert_null(listed(&x, "big"));
	tw_reply_free(&x);
	assert_false(in_registry_file(f.e, "big"));
	x = tw_manifest(f.s, "big", 2, 1);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	tw_reply_free(&x);
	free(shard);
	free(src);
	fx_stop(&f);
}

/* Unregistering a model being registered cancels it; the name can be
 * registered again at once after. */
static void test_unregister_while_opening(void **state)
{
	(void)state;
	fixture f;
	fx_start(&f, "wd-regcancel");
	tw_reply x = reg(f.s, "big", f.uri, 300, false);
	expect_opening(&x, false);
	x = tw_admin_uri(f.s, OP_UNREG, "big", "", 0);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	printf("%s\n", x.r->admin->text);
	tw_reply_free(&x);
	x = list(f.s);
	assert_null(listed(&x, "big"));
	tw_reply_free(&x);
	gate(&f, "open");
	x = reg(f.s, "big", f.uri, 0, true);
	assert_int_equal(tw_errcode(&x), WT_ECANCELED);
	assert_non_null(strstr(x.r->error->message, "unregistered"));
	tw_reply_free(&x);
	assert_false(in_registry_file(f.e, "big"));
	x = reg(f.s, "big", f.uri, 0, false);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	assert_non_null(strstr(x.r->admin->text, "registered model 'big'"));
	tw_reply_free(&x);
	assert_true(in_registry_file(f.e, "big"));
	fx_stop(&f);
}

/* Until name is listed (the registration started), at most 10 s. */
static void wait_listed(nng_socket s, const char *name)
{
	double t0 = now_s();
	for (;;) {
		tw_reply x = list(s);
		bool there = listed(&x, name) != NULL;
		tw_reply_free(&x);
		if (there)
			return;
		assert_true(now_s() - t0 < 10);
		usleep(20000);
	}
}

/* How a request sent on a thread ended: its reply's code (0 for the reply
 * it asked for, -1 for none), message, and when it came. */
typedef struct bg_out {
	int code;
	char msg[600];
	double done_s;
	_Atomic bool finished; /* code, msg and done_s are set */
} bg_out;

/* A REGISTER on a socket of its own, on a thread. */
typedef struct bg_reg {
	const char *url, *name, *uri;
	uint32_t wait_ms;
	bg_out o;
} bg_reg;

static void *bg_main(void *p)
{
	bg_reg *b = p;
	nng_socket s = tw_dial(b->url);
	tw_reply x = reg(s, b->name, b->uri, b->wait_ms, false);
	b->o.code = x.r->body_case == WEIGHTS__REPLY__BODY_ERROR ? tw_errcode(&x) : 0;
	snprintf(b->o.msg, sizeof(b->o.msg), "%s",
	         b->o.code ? x.r->error->message : x.r->admin->text);
	tw_reply_free(&x);
	b->o.done_s = now_s();
	atomic_store(&b->o.finished, true);
	nng_close(s);
	return NULL;
}

/* A REGISTER that waits to the end (wait_ms 0: clients before 1.4) parks
 * without holding the admin thread: an UNREGISTER meanwhile answers at once
 * and cancels it; the waiting request then learns that. */
static void test_waiting_register_parked(void **state)
{
	(void)state;
	fixture f;
	fx_start(&f, "wd-regpark");
	bg_reg b = {.url = f.e->url, .name = "big", .uri = f.uri, .wait_ms = 0};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, bg_main, &b), 0);
	wait_listed(f.s, "big");
	double t0 = now_s();
	tw_reply x = tw_admin_uri(f.s, OP_UNREG, "big", "", 0);
	double dt = now_s() - t0;
	printf("unregister while a REGISTER waits to the end: %.3f s\n", dt);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	tw_reply_free(&x);
	assert_true(dt < 2.0);
	/* the gate stays closed: the cancel ends the read in flight */
	pthread_join(t, NULL);
	printf("the waiting REGISTER, %.3f s after the unregister: %s: %s\n", b.o.done_s - t0 - dt,
	       wt_errname(b.o.code), b.o.msg);
	assert_int_equal(b.o.code, WT_ECANCELED);
	assert_non_null(strstr(b.o.msg, "unregistered"));
	assert_true(b.o.done_s - t0 < 5.0); /* not when the source answers (60 s) */
	fx_stop(&f);
}

typedef struct bg_stop {
	tw_env *e;
	double done_s;
} bg_stop;

static void *stop_main(void *p)
{
	bg_stop *b = p;
	tw_stop(b->e);
	b->done_s = now_s();
	return NULL;
}

/* Shutting down answers a REGISTER parked on its open at once (it is not
 * saved), even while that open's read is still held; after a restart the
 * model is not there. */
static void test_stop_while_registering(void **state)
{
	(void)state;
	fixture f;
	fx_start(&f, "wd-regstop");
	bg_reg b = {.url = f.e->url, .name = "big", .uri = f.uri, .wait_ms = 0};
	pthread_t t, st;
	assert_int_equal(pthread_create(&t, NULL, bg_main, &b), 0);
	wait_listed(f.s, "big");
	nng_close(f.s);
	bg_stop bs = {.e = f.e};
	double t0 = now_s();
	assert_int_equal(pthread_create(&st, NULL, stop_main, &bs), 0);
	pthread_join(t, NULL); /* answered while the read is still held */
	printf("parked REGISTER answered %.3f s into the stop: %s: %s\n", b.o.done_s - t0,
	       wt_errname(b.o.code), b.o.msg);
	pthread_join(st, NULL); /* the gate stays closed: the cancel ends the read */
	printf("stopped after %.3f s\n", bs.done_s - t0);
	assert_int_equal(b.o.code, WT_ECANCELED);
	assert_non_null(strstr(b.o.msg, "is not saved")); /* the parked reply's, at the stop */
	assert_true(b.o.done_s - t0 < 5.0);
	assert_true(bs.done_s - t0 < 5.0); /* not when the source answers (60 s) */
	assert_false(in_registry_file(f.e, "big"));
	assert_int_equal(tw_start(f.e), WT_OK);
	f.s = tw_dial(f.e->url);
	tw_reply x = list(f.s);
	assert_null(listed(&x, "big"));
	tw_reply_free(&x);
	fx_stop(&f);
}

/* n requests (o[i], each on thread t[i]) that wait on a production or a
 * registration held at the gate, with 8 contexts: the last 2 are refused
 * WT_EBUSY at once, the other 6 park, and a listing meanwhile is answered at
 * once (every context parked, it waited for the gate). Then the gate opens and
 * the 6 end well. */
static void expect_quarter_free(fixture *f, bg_out *const *o, pthread_t *t, int n, const char *what)
{
	double t0 = now_s();
	int answered = 0;
	while (now_s() - t0 < 10 && answered < 2) {
		usleep(20000);
		answered = 0;
		for (int i = 0; i < n; i++)
			answered += atomic_load(&o[i]->finished);
	}
	double l0 = now_s();
	tw_reply x = tw_list_models(f->s);
	double dl = now_s() - l0;
	int lrv = x.rv;
	tw_reply_free(&x);
	gate(f, "open"); /* before any assert: the parked ones end */
	int busy = 0, ok = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		busy += o[i]->code == WT_EBUSY;
		ok += o[i]->code == 0;
		if (o[i]->code == WT_EBUSY)
			printf("refused: %s\n", o[i]->msg);
	}
	printf("%d %s on 8 contexts: %d answered early, %d refused, %d ended well; a listing "
	       "meanwhile: %s in %.3f s\n",
	       n, what, answered, busy, ok, wt_errname(lrv), dl);
	assert_int_equal(lrv, WT_OK);
	assert_true(dl < 2.0);
	assert_int_equal(busy, 2);
	assert_int_equal(ok, n - 2);
	for (int i = 0; i < n; i++)
		if (o[i]->code == WT_EBUSY)
			assert_non_null(strstr(o[i]->msg, "kept for requests that do not wait"));
}

/* With 8 contexts, 8 REGISTERs that wait to the end on one registration: 6
 * park, the last 2 get WT_EBUSY, and a listing meanwhile is answered at once
 * (every context parked, it waited for the registration: nothing else was
 * received). */
static void test_parked_leave_contexts(void **state)
{
	(void)state;
	fixture f;
	const char *kv[] = {"contexts", "8", "max_watchers", "4", NULL};
	fx_start_ex(&f, "wd-regctx", kv, false);
	enum { N = 8 };
	bg_reg b[N];
	pthread_t t[N];
	for (int i = 0; i < N; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].url = f.e->url;
		b[i].name = "big";
		b[i].uri = f.uri;
		assert_int_equal(pthread_create(&t[i], NULL, bg_main, &b[i]), 0);
		if (i == 0)
			wait_listed(f.s, "big"); /* the others join its registration */
	}
	bg_out *o[N];
	for (int i = 0; i < N; i++)
		o[i] = &b[i].o;
	expect_quarter_free(&f, o, t, N, "waiting REGISTERs");
	fx_stop(&f);
}

typedef struct bg_live {
	const char *url;
	ProtobufCBinaryData shard_id;
	bg_out o; /* code 0: the chunk came */
} bg_live;

/* Live chunk 0 of shard_id on a connection of its own. */
static void *live_main(void *p)
{
	bg_live *b = p;
	nng_socket s = tw_dial(b->url);
	Weights__ChunkRequest cr = WEIGHTS__CHUNK_REQUEST__INIT;
	cr.shard_id = b->shard_id;
	cr.live = true;
	cr.index = 0;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 11;
	rq.body_case = WEIGHTS__REQUEST__BODY_CHUNK;
	rq.chunk = &cr;
	tw_reply x = tw_call(s, &rq);
	b->o.code = x.rv != WT_OK ? -1 : tw_errcode(&x) >= 0 ? tw_errcode(&x) : 0;
	if (b->o.code > 0)
		snprintf(b->o.msg, sizeof(b->o.msg), "%s", x.r->error->message);
	tw_reply_free(&x);
	nng_close(s);
	b->o.done_s = now_s();
	atomic_store(&b->o.finished, true);
	return NULL;
}

/* Cut-through chunk requests over messages wait for their chunk holding an
 * nng context, as REGISTERs do: with 8 contexts and the production held at
 * the gate, 8 requests for a chunk not produced yet: 6 park, 2 get WT_EBUSY
 * at once, and a listing meanwhile is answered (all 8 parked before: it
 * waited for the production). Released, the 6 get their chunk. */
static void test_live_chunks_leave_contexts(void **state)
{
	(void)state;
	fixture f;
	const char *kv[] = {"contexts", "8", "max_watchers", "4", NULL};
	fx_start_ex(&f, "wd-livectx", kv, true);
	Weights__Layout l = WEIGHTS__LAYOUT__INIT;
	l.tp_size = 1;
	l.ep_size = 1;
	l.group_size = 128;
	l.vocab_pad = 64;
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	mr.model = "big";
	mr.layout = &l;
	mr.live_ok = true;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 10;
	rq.body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	rq.manifest = &mr;
	tw_reply m = tw_call(f.s, &rq); /* the production starts, held at its first read */
	assert_int_equal(m.rv, WT_OK);
	if (m.r->body_case != WEIGHTS__REPLY__BODY_MANIFEST)
		fail_msg("live manifest: %s", tw_errcode(&m) >= 0 ? m.r->error->message : "?");
	assert_true(m.r->manifest->live);
	enum { N = 8 };
	bg_live b[N];
	pthread_t t[N];
	for (int i = 0; i < N; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].url = f.e->url;
		b[i].shard_id = m.r->manifest->shard_id;
		assert_int_equal(pthread_create(&t[i], NULL, live_main, &b[i]), 0);
	}
	bg_out *o[N];
	for (int i = 0; i < N; i++)
		o[i] = &b[i].o;
	expect_quarter_free(&f, o, t, N, "live chunk requests");
	tw_reply_free(&m);
	fx_stop(&f);
}

typedef struct bg_man {
	const char *url;
	int rv, code;
} bg_man;

static void *man_main(void *p)
{
	bg_man *b = p;
	nng_socket s = tw_dial(b->url);
	tw_reply x = tw_manifest(s, "big", 1, 0);
	b->rv = x.rv;
	b->code = tw_errcode(&x);
	tw_reply_free(&x);
	nng_close(s);
	return NULL;
}

/* A stop whose drain times out ends a production blocked on a source read
 * (the gate held closed): the read in flight is canceled, and weightd stops
 * within a few seconds, not when the source answers (60 s). */
static void test_stop_cancels_production_read(void **state)
{
	(void)state;
	fixture f;
	const char *kv[] = {"drain_timeout_ms", "300", NULL};
	fx_start_ex(&f, "wd-prodstop", kv, true);
	bg_man m = {.url = f.e->url};
	pthread_t t, st;
	assert_int_equal(pthread_create(&t, NULL, man_main, &m), 0);
	usleep(1000 * 1000); /* the production reads its first tensor: held at the gate */
	nng_close(f.s);
	bg_stop bs = {.e = f.e};
	double t0 = now_s();
	assert_int_equal(pthread_create(&st, NULL, stop_main, &bs), 0);
	pthread_join(st, NULL);
	pthread_join(t, NULL);
	printf("stopped %.3f s after the stop began, a production's read held; its manifest "
	       "request: %s, code %s\n",
	       bs.done_s - t0, wt_errname(m.rv), m.code >= 0 ? wt_errname(m.code) : "-");
	assert_true(bs.done_s - t0 < 8.0);
	fx_stop(&f);
}

typedef struct prog {
	fixture *f;
	int calls, stop_at; /* stop_at > 0: stop waiting at that call */
	uint64_t last_read, total;
} prog;

static int on_progress(void *ctx, uint64_t read, uint64_t total)
{
	prog *p = ctx;
	printf("progress %d: %llu of %llu\n", p->calls, (unsigned long long)read,
	       (unsigned long long)total);
	p->calls++;
	p->last_read = read;
	p->total = total;
	if (p->calls == 2)
		gate(p->f, "open");
	return p->stop_at > 0 && p->calls == p->stop_at;
}

/* The client's registration reports progress while the server opens it and
 * returns at the end with the server's text. */
static void test_client_progress(void **state)
{
	(void)state;
	fixture f;
	fx_start(&f, "wd-regcli");
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {f.e->url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	wt_client *c = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	prog p = {.f = &f};
	wt_admin_result res;
	double t0 = now_s();
	int rv = wt_client_register_progress(c, "big", f.uri, on_progress, &p, &res, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	printf("%s (%d progress calls, %.2f s)\n", res.text, p.calls, now_s() - t0);
	assert_true(p.calls >= 2);
	assert_true(p.total > 65536 && p.last_read < p.total);
	assert_non_null(strstr(res.text, "registered model 'big'"));
	wt_admin_result_clear(&res);
	/* again: already registered, no progress */
	p.calls = 0;
	assert_int_equal(wt_client_register_progress(c, "big", f.uri, on_progress, &p, &res, &err),
	                 WT_OK);
	assert_int_equal(p.calls, 0);
	assert_non_null(strstr(res.text, "already registered"));
	wt_admin_result_clear(&res);
	/* the caller stops waiting at its first report: WT_ECANCELED at once, and
	 * the registration goes on in the server (other bytes: read, not known) */
	char *src2 = tu_path(f.e->dir, "src2"), uri2[200];
	assert_int_equal(tw_write_llama8(src2, SEED + 1), 0);
	assert_int_equal(tu_touch_dir(src2, -10000000000ll), 0);
	free(src2);
	snprintf(uri2, sizeof(uri2), "http://%s/gate/src2", f.host);
	gate(&f, "close");
	p = (prog){.f = &f, .stop_at = 1};
	t0 = now_s();
	rv = wt_client_register_progress(c, "big2", uri2, on_progress, &p, &res, &err);
	printf("stopped waiting after %.2f s: %s\n", now_s() - t0, err.msg);
	assert_int_equal(rv, WT_ECANCELED);
	assert_int_equal(p.calls, 1);
	assert_non_null(strstr(err.msg, "goes on in the server"));
	tw_reply x = list(f.s);
	const Weights__ModelInfo *mi = listed(&x, "big2");
	assert_true(mi != NULL && mi->registering);
	tw_reply_free(&x);
	gate(&f, "open");
	x = reg(f.s, "big2", uri2, 0, true);
	assert_non_null(strstr(x.r->admin->text, "registered model 'big2'"));
	tw_reply_free(&x);
	wt_client_close(c);
	fx_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_register_background),
	    cmocka_unit_test(test_register_fails_late),
	    cmocka_unit_test(test_unregister_while_opening),
	    cmocka_unit_test(test_client_progress),
	    cmocka_unit_test(test_waiting_register_parked),
	    cmocka_unit_test(test_stop_while_registering),
	    cmocka_unit_test(test_parked_leave_contexts),
	    cmocka_unit_test(test_live_chunks_leave_contexts),
	    cmocka_unit_test(test_stop_cancels_production_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
