/*
 * test_client_update.c — online updates without a server: wt_manifest_delta
 * (changed tensors and bytes; refusals naming the tensor: full reload needed)
 * and the host sink's in-place update sink (fixture: tests/util/manifest_fixture.h).
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
#include "common/common.h"
#include "tests/util/testutil.h"
#include "client/client_int.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/weights.h"

#include "tests/util/manifest_fixture.h"

static wt_manifest *mk(mf *x)
{
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	assert_int_equal(client_manifest_from_pb(&x->m, 1 << 20, "m", &l, &m, &err), WT_OK);
	return m;
}

static void test_delta(void **state)
{
	(void)state;
	mf a, b;
	mf_init(&a);
	mf_init(&b);
	b.hash[1][3] ^= 1; /* b.weight's content changed */
	wt_manifest *o = mk(&a), *n = mk(&b);
	unsigned char ch[2] = {9, 9};
	size_t cnt = 0;
	uint64_t bytes = 0;
	wt_errbuf err;
	assert_int_equal(wt_manifest_delta(o, n, ch, &cnt, &bytes, &err), WT_OK);
	assert_int_equal(ch[0], 0);
	assert_int_equal(ch[1], 1);
	assert_int_equal(cnt, 1);
	assert_int_equal(bytes, 64);
	assert_int_equal(wt_manifest_delta(o, o, ch, &cnt, &bytes, &err), WT_OK);
	assert_int_equal(cnt, 0);
	assert_int_equal(bytes, 0);
	wt_manifest_free(n);

	/* same bytes, another shape: refused, naming the tensor */
	mf_init(&b);
	b.shape[1][0] = 8;
	b.shape[1][1] = 4;
	n = mk(&b);
	assert_int_equal(wt_manifest_delta(o, n, ch, &cnt, &bytes, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "tensor 'b.weight' changed from BF16 [4,8] to BF16 [8,4]"));
	assert_non_null(strstr(err.msg, "full reload needed"));
	wt_manifest_free(n);

	/* a tensor renamed (b gone, c new) */
	mf_init(&b);
	b.te[1].name = "c.weight";
	n = mk(&b);
	assert_int_equal(wt_manifest_delta(o, n, NULL, NULL, NULL, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "'b.weight' is gone"));
	wt_manifest_free(n);

	/* another rank */
	mf_init(&b);
	b.m.tp_rank = 1;
	n = mk(&b);
	assert_int_equal(wt_manifest_delta(o, n, NULL, NULL, NULL, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "another model, layout or rank"));
	wt_manifest_free(n);
	wt_manifest_free(o);
}

/* Drive a sink through one whole manifest: tensor i's bytes are data[i]. */
static int feed(wt_sink *s, const wt_manifest *m, uint8_t data[][64], wt_errbuf *err)
{
	int rv = s->ops->begin(s, m, err);
	for (size_t i = 0; rv == WT_OK && i < wt_manifest_n_tensors(m); i++) {
		rv = s->ops->tensor_begin(s, i, err);
		if (rv == WT_OK)
			rv = s->ops->write(s, i, 0, data[i], 64, err);
		if (rv == WT_OK)
			rv = s->ops->tensor_end(s, i, err);
	}
	if (rv == WT_OK)
		return s->ops->end(s, err);
	if (rv != WT_OK && s->ops->abort != NULL)
		s->ops->abort(s);
	return rv;
}

static void test_host_update_sink(void **state)
{
	(void)state;
	mf a, sub;
	mf_init(&a);
	wt_manifest *full = mk(&a);
	uint8_t old[2][64], neu[1][64];
	tu_fill(old[0], 64, 1);
	tu_fill(old[1], 64, 2);
	tu_fill(neu[0], 64, 3);
	wt_host_sink *h;
	wt_errbuf err;
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	assert_int_equal(feed(wt_host_sink_sink(h), full, old, &err), WT_OK);
	const void *pa, *pb, *qa, *qb;
	uint64_t n;
	assert_int_equal(wt_host_sink_find(h, "a.weight", &pa, &n), WT_OK);
	assert_int_equal(wt_host_sink_find(h, "b.weight", &pb, &n), WT_OK);

	/* an update of b only: written in place, a untouched */
	mf_init(&sub);
	sub.tp[0] = &sub.te[1];
	sub.m.n_tensors = 1;
	sub.m.total_bytes = 64;
	wt_manifest *m = mk(&sub);
	assert_int_equal(feed(wt_host_sink_update_sink(h), m, neu, &err), WT_OK);
	assert_int_equal(wt_host_sink_find(h, "a.weight", &qa, &n), WT_OK);
	assert_int_equal(wt_host_sink_find(h, "b.weight", &qb, &n), WT_OK);
	assert_ptr_equal(qa, pa);
	assert_ptr_equal(qb, pb);
	assert_memory_equal(qa, old[0], 64);
	assert_memory_equal(qb, neu[0], 64);
	assert_int_equal(wt_host_sink_n_tensors(h), 2);
	wt_manifest_free(m);

	/* a tensor the sink does not hold: refused before any byte moves */
	mf_init(&sub);
	sub.te[1].name = "c.weight";
	sub.tp[0] = &sub.te[1];
	sub.m.n_tensors = 1;
	sub.m.total_bytes = 64;
	m = mk(&sub);
	assert_int_equal(feed(wt_host_sink_update_sink(h), m, old, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "'c.weight'"));
	assert_non_null(strstr(err.msg, "full reload needed"));
	assert_memory_equal(qb, neu[0], 64);
	wt_manifest_free(m);
	wt_manifest_free(full);
	wt_host_sink_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_delta),
	    cmocka_unit_test(test_host_update_sink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
