/*
 * test_update_stale.c — an in-place host update that failed half-way leaves
 * the tensors it began stale, so a later update that does not rewrite them (a
 * revision that reverted them) is refused (WT_ELAYOUT naming one) instead of
 * reporting success over a mix of two revisions, also when no tensor changed (fixture:
 * tests/util/manifest_fixture.h). The CUDA sink's update sink alike, where a
 * GPU is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/client.h"
#include "client/client_int.h"
#include "common/common.h"
#include "tests/util/testutil.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/weights.h"

#include "tests/util/manifest_fixture.h"

static wt_manifest *mk(mf *x, const char *rev)
{
	x->m.revision = (char *)rev;
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	assert_int_equal(client_manifest_from_pb(&x->m, 1 << 20, "m", &l, &m, &err), WT_OK);
	return m;
}

/* The fixture's manifest holding only the tensors with keep[i]. */
static wt_manifest *mk_sub(const int keep[2], const char *rev)
{
	mf x;
	mf_init(&x);
	size_t n = 0;
	for (int i = 0; i < 2; i++)
		if (keep[i])
			x.tp[n++] = &x.te[i];
	x.m.n_tensors = n;
	x.m.total_bytes = 64 * n;
	return mk(&x, rev);
}

/* begin + every tensor of m whole (data[i]), + end; stop_at: fail there
 * (after half of that tensor's bytes) and abort, as a fetch that lost its server. */
static int drive(wt_sink *s, const wt_manifest *m, uint8_t data[][64], size_t stop_at,
                 wt_errbuf *err)
{
	int rv = s->ops->begin(s, m, err);
	for (size_t i = 0; rv == WT_OK && i < wt_manifest_n_tensors(m); i++) {
		rv = s->ops->tensor_begin(s, i, err);
		if (rv == WT_OK)
			rv = s->ops->write(s, i, 0, data[i], i == stop_at ? 32 : 64, err);
		if (rv == WT_OK && i == stop_at) {
			s->ops->abort(s);
			return wt_seterr(err, WT_EIO, "server gone");
		}
		if (rv == WT_OK)
			rv = s->ops->tensor_end(s, i, err);
	}
	if (rv == WT_OK)
		return s->ops->end(s, err);
	s->ops->abort(s);
	return rv;
}

static void test_host_update_after_failed_update(void **state)
{
	(void)state;
	static const int both[2] = {1, 1}, only_b[2] = {0, 1};
	uint8_t a_old[2][64], b_new[2][64], c_new[1][64];
	tu_fill(a_old[0], 64, 1);
	tu_fill(a_old[1], 64, 2);
	tu_fill(b_new[0], 64, 3);
	tu_fill(b_new[1], 64, 4);
	tu_fill(c_new[0], 64, 5);
	wt_host_sink *h;
	wt_errbuf err;
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	wt_manifest *full = mk_sub(both, "a");
	assert_int_equal(drive(wt_host_sink_sink(h), full, a_old, SIZE_MAX, &err), WT_OK);
	const void *pa, *pb;
	uint64_t n;
	assert_int_equal(wt_host_sink_find(h, "a.weight", &pa, &n), WT_OK);
	assert_int_equal(wt_host_sink_find(h, "b.weight", &pb, &n), WT_OK);

	/* update a -> b of both tensors: a.weight written whole, b.weight half, then
	 * the fetch fails */
	wt_manifest *ub = mk_sub(both, "b");
	assert_int_equal(drive(wt_host_sink_update_sink(h), ub, b_new, 1, &err), WT_EIO);
	assert_memory_equal(pa, b_new[0], 64);

	/* revision c reverted a.weight to a's bytes and changed b.weight: the
	 * delta a -> c is b.weight only. Accepting it would leave a.weight with
	 * revision b's bytes while reporting success. */
	wt_manifest *uc = mk_sub(only_b, "c");
	assert_int_equal(drive(wt_host_sink_update_sink(h), uc, c_new, SIZE_MAX, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "tensor 'a.weight' holds bytes of an earlier update"));
	assert_memory_equal(pb, b_new[1], 32); /* nothing written */

	/* an update that rewrites every stale tensor is accepted, and clears them */
	assert_int_equal(drive(wt_host_sink_update_sink(h), ub, b_new, SIZE_MAX, &err), WT_OK);
	assert_memory_equal(pa, b_new[0], 64);
	assert_memory_equal(pb, b_new[1], 64);
	assert_int_equal(drive(wt_host_sink_update_sink(h), uc, c_new, SIZE_MAX, &err), WT_OK);
	assert_memory_equal(pb, c_new[0], 64);

	/* a failed update of b.weight only, then a full fetch: nothing stale */
	assert_int_equal(drive(wt_host_sink_update_sink(h), uc, c_new, 0, &err), WT_EIO);
	wt_manifest *ua = mk_sub((const int[2]){1, 0}, "a");
	assert_int_equal(drive(wt_host_sink_update_sink(h), ua, a_old, SIZE_MAX, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "'b.weight'"));
	assert_int_equal(drive(wt_host_sink_sink(h), full, a_old, SIZE_MAX, &err), WT_OK);
	assert_int_equal(drive(wt_host_sink_update_sink(h), ua, a_old, SIZE_MAX, &err), WT_OK);

	wt_manifest_free(ua);
	wt_manifest_free(uc);
	wt_manifest_free(ub);
	wt_manifest_free(full);
	wt_host_sink_destroy(h);
}

/* wt_client_fetch_update with no changed tensor after a failed update: the
 * update sink still sees the update (begin with no tensor) and refuses it, as
 * no server is asked (the endpoint is a closed port: never dialled). */
static void test_no_change_update_after_failed_update(void **state)
{
	(void)state;
	static const int both[2] = {1, 1};
	uint8_t a_old[2][64], b_new[2][64];
	tu_fill(a_old, sizeof(a_old), 21);
	tu_fill(b_new, sizeof(b_new), 22);
	wt_host_sink *h;
	wt_errbuf err;
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	const char *ep = "tcp://127.0.0.1:1";
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = &ep;
	o.n_endpoints = 1;
	wt_client *c;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_manifest *a = mk_sub(both, "a"), *b = mk_sub(both, "b");
	assert_int_equal(drive(wt_host_sink_sink(h), a, a_old, SIZE_MAX, &err), WT_OK);
	wt_update_report rep;

	/* nothing stale: a no-change update is a success of no tensor */
	assert_int_equal(
	    wt_client_fetch_update(c, a, a, wt_host_sink_update_sink(h), NULL, &rep, &err), WT_OK);
	assert_int_equal(rep.tensors_updated, 0);

	/* a -> b fails half-way through b.weight; then "update" a -> a (the
	 * revision went back): both tensors hold b's bytes, in part or whole */
	assert_int_equal(drive(wt_host_sink_update_sink(h), b, b_new, 1, &err), WT_EIO);
	assert_int_equal(
	    wt_client_fetch_update(c, a, a, wt_host_sink_update_sink(h), NULL, &rep, &err),
	    WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "holds bytes of an earlier update"));

	/* a full fetch clears them: the no-change update succeeds again */
	assert_int_equal(drive(wt_host_sink_sink(h), a, a_old, SIZE_MAX, &err), WT_OK);
	assert_int_equal(
	    wt_client_fetch_update(c, a, a, wt_host_sink_update_sink(h), NULL, &rep, &err), WT_OK);
	wt_manifest_free(b);
	wt_manifest_free(a);
	wt_client_close(c);
	wt_host_sink_destroy(h);
}

/* The same refusals from the CUDA sink's update sink (codes only: the bytes
 * are on the device). Runs where a GPU is; skipped elsewhere. */
static void test_cuda_update_after_failed_update(void **state)
{
	(void)state;
	static const int both[2] = {1, 1}, only_b[2] = {0, 1};
	uint8_t a_old[2][64], b_new[2][64], c_new[1][64];
	tu_fill(a_old, sizeof(a_old), 11);
	tu_fill(b_new, sizeof(b_new), 12);
	tu_fill(c_new, sizeof(c_new), 13);
	wt_cuda_sink *h;
	wt_errbuf err;
	if (wt_cuda_sink_create(&h, 0, &err) != WT_OK) {
		printf("no CUDA device: %s\n", err.msg);
		skip();
	}
	wt_manifest *full = mk_sub(both, "a"), *ub = mk_sub(both, "b"), *uc = mk_sub(only_b, "c");
	assert_int_equal(drive(wt_cuda_sink_sink(h), full, a_old, SIZE_MAX, &err), WT_OK);
	assert_int_equal(drive(wt_cuda_sink_update_sink(h), ub, b_new, 1, &err), WT_EIO);
	assert_int_equal(drive(wt_cuda_sink_update_sink(h), uc, c_new, SIZE_MAX, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "tensor 'a.weight' holds bytes of an earlier update"));
	assert_int_equal(drive(wt_cuda_sink_update_sink(h), ub, b_new, SIZE_MAX, &err), WT_OK);
	assert_int_equal(drive(wt_cuda_sink_update_sink(h), uc, c_new, SIZE_MAX, &err), WT_OK);
	assert_int_equal(drive(wt_cuda_sink_update_sink(h), uc, c_new, 0, &err), WT_EIO);
	assert_int_equal(drive(wt_cuda_sink_sink(h), full, a_old, SIZE_MAX, &err), WT_OK);
	assert_int_equal(drive(wt_cuda_sink_update_sink(h), uc, c_new, SIZE_MAX, &err), WT_OK);
	wt_manifest_free(uc);
	wt_manifest_free(ub);
	wt_manifest_free(full);
	wt_cuda_sink_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host_update_after_failed_update),
	    cmocka_unit_test(test_no_change_update_after_failed_update),
	    cmocka_unit_test(test_cuda_update_after_failed_update),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
