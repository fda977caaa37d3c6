/*
 * test_bcast_util.h — test_bcast.c's replicas (test code only; over tests/util/fake_weightd.h): a
 * counting sink around a host sink, whose callbacks are checked against engine.h's order (abort
 * exactly once on failure, never with end), and replicas receiving a broadcast on threads. Include
 * after cmocka.h.
 */
#ifndef WT_TEST_BCAST_UTIL_H
#define WT_TEST_BCAST_UTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "weights/bcast.h"
#include "weights/client.h"
#include "tests/util/fake_weightd.h"
#include "weights/engine.h"

/* ---- a counting sink around a host sink ---- */

typedef struct csink {
	wt_sink base;
	wt_host_sink *h;
	int begins, tbegins, writes, tends, ends, aborts;
	int fail_write;          /* write() number (1-based) that fails with WT_EIO; 0 none */
	_Atomic int began;       /* a tensor began: read from other threads */
	wt_bcast_cancel *cancel; /* fired by tensor_begin when set */
} csink;

static wt_sink *inner_of(wt_sink *s)
{
	return wt_host_sink_sink(((csink *)s)->h);
}
static int c_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	((csink *)s)->begins++;
	return inner_of(s)->ops->begin(inner_of(s), m, err);
}
static int c_tbegin(wt_sink *s, size_t t, wt_errbuf *err)
{
	((csink *)s)->tbegins++;
	((csink *)s)->began = 1;
	wt_bcast_cancel_fire(((csink *)s)->cancel);
	return inner_of(s)->ops->tensor_begin(inner_of(s), t, err);
}
static int c_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t len, wt_errbuf *err)
{
	csink *c = (csink *)s;
	if (++c->writes == c->fail_write)
		return wt_seterr(err, WT_EIO, "test sink: write %d fails", c->writes);
	return inner_of(s)->ops->write(inner_of(s), t, off, d, len, err);
}
static int c_tend(wt_sink *s, size_t t, wt_errbuf *err)
{
	((csink *)s)->tends++;
	return inner_of(s)->ops->tensor_end(inner_of(s), t, err);
}
static int c_end(wt_sink *s, wt_errbuf *err)
{
	((csink *)s)->ends++;
	return inner_of(s)->ops->end(inner_of(s), err);
}
static void c_abort(wt_sink *s)
{
	((csink *)s)->aborts++;
	inner_of(s)->ops->abort(inner_of(s));
}
static const wt_sink_ops c_ops = {.struct_size = sizeof(wt_sink_ops),
                                  .begin = c_begin,
                                  .tensor_begin = c_tbegin,
                                  .write = c_write,
                                  .tensor_end = c_tend,
                                  .end = c_end,
                                  .abort = c_abort};

static void csink_init(csink *c)
{
	memset(c, 0, sizeof(*c));
	c->base.ops = &c_ops;
	assert_int_equal(wt_host_sink_create(&c->h, NULL), WT_OK);
}

/* ---- replicas on threads ---- */

typedef struct rep {
	char url[128];
	const char *group;
	uint32_t io_ms, join_ms;
	wt_manifest *m; /* its own, from the fake */
	csink cs;
	int rv;
	wt_errbuf err;
	double secs; /* how long wt_bcast_receive took */
	wt_bcast_cancel *cancel;
	pthread_t th;
} rep;

static double now_s(void)
{
	return (double)common_now_ns() / 1e9;
}

static void *rep_main(void *arg)
{
	rep *r = arg;
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.url = r->url;
	o.group = r->group;
	o.io_timeout_ms = r->io_ms ? r->io_ms : 5000;
	o.join_timeout_ms = r->join_ms ? r->join_ms : 5000;
	o.cancel = r->cancel;
	double t0 = now_s();
	r->rv = wt_bcast_receive(&o, r->m, &r->cs.base, &r->err);
	r->secs = now_s() - t0;
	return NULL;
}

/* Replica r (manifest asked through c now) for url, not started yet. */
static void rep_init(rep *r, wt_client *c, const char *url, const char *group)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->url, sizeof(r->url), "%s", url);
	r->group = group;
	r->m = fake_manifest(c);
	csink_init(&r->cs);
}

/* Start replica r (manifest asked through c now) dialing url. */
static void rep_start(rep *r, wt_client *c, const char *url, const char *group)
{
	rep_init(r, c, url, group);
	assert_int_equal(pthread_create(&r->th, NULL, rep_main, r), 0);
}

static void rep_join(rep *r)
{
	pthread_join(r->th, NULL);
	printf("replica: rv %s (%.2f s) %s; begin %d tbegin %d write %d tend %d end %d abort %d\n",
	       wt_errname(r->rv), r->secs, r->rv ? r->err.msg : "", r->cs.begins, r->cs.tbegins,
	       r->cs.writes, r->cs.tends, r->cs.ends, r->cs.aborts);
}

static void rep_free(rep *r)
{
	wt_host_sink_destroy(r->cs.h);
	wt_manifest_free(r->m);
}

/* A replica that failed after begin: abort exactly once, no end, nothing published. */
static void assert_aborted_once(const rep *r)
{
	assert_int_equal(r->cs.begins, 1);
	assert_int_equal(r->cs.aborts, 1);
	assert_int_equal(r->cs.ends, 0);
	assert_int_equal(wt_host_sink_n_tensors(r->cs.h), 0);
}

#endif
