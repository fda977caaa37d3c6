/*
 * test_shardmap_oom.c — every allocation failure while planning or producing
 * returns an error with a message naming what was being allocated ("out of
 * memory for ..."), never a bare WT_ENOMEM, a crash or a success with missing
 * outputs.
 *
 * The test replaces malloc/calloc/realloc (forwarding to glibc's __libc_*) and
 * fails the n-th allocation of the planning (then the production) thread, for
 * every n until a run needs fewer allocations than n. Other threads (the
 * kernel pool) are never failed. Under AddressSanitizer, which owns malloc,
 * the test is skipped (exit 77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_shardmap_util.h"
#include "tests/util/oom.h"

#ifndef OOM_SKIP
static _Thread_local int armed;    /* count this thread's allocations */
static _Thread_local long fail_at; /* fail the fail_at-th (1-based) */
static _Thread_local long seen;

static int fail_now(void)
{
	return armed && ++seen == fail_at;
}

void *malloc(size_t n)
{
	return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t sz)
{
	return fail_now() ? NULL : __libc_calloc(n, sz);
}

void *realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __libc_realloc(p, n);
}

static void arm(long n)
{
	seen = 0;
	fail_at = n;
	armed = 1;
}

static long disarm(void)
{
	armed = 0;
	return seen;
}

static void lay(wt_layout *l, uint32_t tp, uint32_t ep, wt_quant q)
{
	wt_layout_init(l);
	l->tp_size = tp;
	l->ep_size = ep;
	l->quant = q;
}

/* An error must carry its code and a message; an ENOMEM one says so. */
static void check_failure(const char *what, long n, int rv, const wt_errbuf *err)
{
	if (err->msg[0] == '\0' || err->code != rv)
		fail_msg("%s: allocation %ld failed: rv %d with %s message (code %d)", what, n, rv,
		         err->msg[0] ? "a" : "no", err->code);
	/* "out of memory for X" / "out of memory reading N bytes": what, not just that */
	const char *oom = strstr(err->msg, "out of memory ");
	if (rv == WT_ENOMEM && (!oom || !oom[14]))
		fail_msg("%s: allocation %ld: ENOMEM message '%s' does not say what was allocated",
		         what, n, err->msg);
}

static int count_emit(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t n,
                      wt_errbuf *err)
{
	(void)rank;
	(void)ix;
	(void)bytes;
	(void)n;
	(void)err;
	(*(size_t *)ctx)++;
	return WT_OK;
}

static size_t total_outputs(const sm_plan *p)
{
	size_t t = 0;
	for (uint32_t r = 0; r < shardmap_n_ranks(p); r++)
		t += shardmap_rank_n_tensors(p, r);
	return t;
}

/* sm_produce_opts.stack_batch_bytes of the sweeps (1: expert stacks one expert at a time) */
static uint64_t g_batch;
/* the sweeps take parts (emit_part, 4 KiB): batched stacks are streamed (produce_batch.c) */
static bool g_parts;

/* A tensor's first part counts it (its parts come in order). */
static int count_part(void *ctx, uint32_t rank, size_t ix, uint64_t off, const void *bytes,
                      uint64_t n, wt_errbuf *err)
{
	(void)n;
	return off == 0 ? count_emit(ctx, rank, ix, bytes, n, err) : WT_OK;
}

/* Fail each allocation of shardmap_plan, then of shardmap_produce, in turn. */
static void sweep(const char *what, tm_model *m, const char *cfg, const wt_layout *l)
{
	char *dir = tu_mkdtemp("smoom");
	assert_int_equal(tm_write(m, dir, cfg), 0);
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *ok = NULL;
	wt_errbuf err = {0};
	assert_int_equal(tm_plan(dir, l, &s, &c, &ok, &err), WT_OK);
	long n, total = 0, enomem = 0;
	for (n = 1;; n++) {
		sm_plan *p = NULL;
		memset(&err, 0, sizeof(err));
		arm(n);
		int rv = shardmap_plan(c, l, &p, &err);
		total = disarm();
		if (rv == WT_OK) {
			assert_true(total < n);
			assert_int_equal(total_outputs(p), total_outputs(ok));
			shardmap_plan_free(p);
			break;
		}
		assert_null(p);
		check_failure(what, n, rv, &err);
		enomem += rv == WT_ENOMEM;
	}
	printf("%s: plan: %ld allocations, each failure reported (%ld ENOMEM)\n", what, n - 1,
	       enomem);
	size_t want = total_outputs(ok);
	for (n = 1, enomem = 0;; n++) {
		size_t emitted = 0;
		memset(&err, 0, sizeof(err));
		sm_produce_opts po = {.only_rank = -1,
		                      .threads = 1,
		                      .emit = count_emit,
		                      .emit_part = g_parts ? count_part : NULL,
		                      .part_bytes = 4096,
		                      .ctx = &emitted,
		                      .stack_batch_bytes = g_batch};
		arm(n);
		int rv = shardmap_produce_ex(c, ok, &po, &err);
		total = disarm();
		if (rv == WT_OK) {
			assert_true(total < n);
			assert_int_equal(emitted, want);
			break;
		}
		check_failure(what, n, rv, &err);
		enomem += rv == WT_ENOMEM;
	}
	printf("%s: produce: %ld allocations, each failure reported (%ld ENOMEM)\n", what, n - 1,
	       enomem);
	tm_close(s, c, ok);
	tu_rmrf(dir);
	free(dir);
}

/* Per-tensor FP8 merge with input scales (emit_prequant, emit_input_scale). */
static void test_oom_fp8_merge(void **state)
{
	(void)state;
	wt_layout l;
	lay(&l, 2, 1, WT_QUANT_FP8_TENSOR);
	tm_model *m = tm_llama_fp8(0x00e0001ull);
	sweep("llama_fp8 fp8-tensor tp 2", m, tm_llama_fp8_cfg, &l);
	tm_free(m);
}

/* FP8 block pass-through and EP expert stacks (block_scale_pieces); experts stored one
 * tensor each produced in batches (produce_batch.c). */
static void test_oom_fp8_block_ep(void **state)
{
	(void)state;
	char cfg[1024];
	wt_layout l;
	lay(&l, 1, 2, WT_QUANT_FP8_BLOCK);
	tm_model *m = tm_deepseek(0x00e0002ull, 1, cfg, sizeof(cfg));
	sweep("deepseek fp8-block ep 2", m, cfg, &l);
	/* experts stored one tensor each, a unit at a time in parts (sm_prod_units) */
	g_batch = 1;
	g_parts = true;
	lay(&l, 2, 1, WT_QUANT_NONE);
	sweep("deepseek none tp 2, experts in batches of parts", m, cfg, &l);
	lay(&l, 2, 1, WT_QUANT_INT8_CHANNEL);
	sweep("deepseek int8-channel tp 2, experts in batches of parts", m, cfg, &l);
	g_parts = false;
	g_batch = 0;
	tm_free(m);
}

/* Quantized by a scheme, TP inside the experts, exclusions (exclude.c). */
static void test_oom_quant_exclude(void **state)
{
	(void)state;
	wt_layout l;
	wt_errbuf err = {0};
	lay(&l, 2, 1, WT_QUANT_INT8_CHANNEL);
	assert_int_equal(wt_layout_add_exclude(&l, "re:.*o_proj", &err), WT_OK);
	assert_int_equal(wt_layout_add_exclude(&l, "model.layers.1.block_sparse_moe", &err), WT_OK);
	tm_model *m = tm_mixtral(0x00e0003ull);
	sweep("mixtral int8-channel tp 2 + exclusions", m, tm_mixtral_cfg, &l);
	tm_free(m);
	wt_layout_clear(&l);
}
/* fbgemm_fp8 (Llama 4 text, docs/format.md 4.7): FP8 Linears and expert stacks with F32
 * scales, dequantized (quant none: scales read, stacks transposed) and passed through
 * (fp8-channel: codes transposed, scales as columns; quant_f8.c). */
static const char fbgemm_cfg[] =
    "{\"architectures\":[\"Llama4ForCausalLM\"],\"model_type\":\"llama4_text\","
    "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32,"
    "\"vocab_size\":1003,\"num_hidden_layers\":2,\"intermediate_size\":64,"
    "\"num_local_experts\":4,\"interleave_moe_layer_step\":2,\"intermediate_size_mlp\":192,"
    "\"quantization_config\":{\"quant_method\":\"fbgemm_fp8\",\"modules_to_not_convert\":"
    "[\"shared_expert\"]}}";

static void fp8_with_scale(tm_model *m, const char *name, int nd, int64_t a, int64_t b, int64_t c,
                           int64_t sa, int64_t sb, int64_t sc)
{
	char s[256];
	tm_add(m, name, WT_F8_E4M3, nd, a, b, c);
	snprintf(s, sizeof(s), "%s_scale", name);
	tm_add(m, s, WT_F32, nd, sa, sb, sc);
	tm_abs(m, s);
}

static void test_oom_fbgemm(void **state)
{
	(void)state;
	tm_model *m = tm_new(0x00e0004ull, WT_BF16);
	tm_top(m, 1003, 256, 1);
	for (int i = 0; i < 2; i++)
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
	const char *ff = "model.layers.0.feed_forward.";
	char b[128];
	snprintf(b, sizeof(b), "%sgate_proj.weight", ff);
	fp8_with_scale(m, b, 2, 192, 256, 0, 192, 1, 0);
	snprintf(b, sizeof(b), "%sup_proj.weight", ff);
	fp8_with_scale(m, b, 2, 192, 256, 0, 192, 1, 0);
	snprintf(b, sizeof(b), "%sdown_proj.weight", ff);
	fp8_with_scale(m, b, 2, 256, 192, 0, 256, 1, 0);
	tm_add2(m, "model.layers.1.feed_forward.router.weight", 4, 256);
	tm_mlp(m, 1, "feed_forward.shared_expert.", 64, 256);
	fp8_with_scale(m, "model.layers.1.feed_forward.experts.gate_up_proj", 3, 4, 256, 128, 4, 1,
	               128);
	fp8_with_scale(m, "model.layers.1.feed_forward.experts.down_proj", 3, 4, 64, 256, 4, 256,
	               1);
	wt_layout l;
	lay(&l, 2, 1, WT_QUANT_NONE);
	sweep("fbgemm_fp8 none tp 2", m, fbgemm_cfg, &l);
	lay(&l, 2, 2, WT_QUANT_FP8_CHANNEL);
	sweep("fbgemm_fp8 fp8-channel tp 2 ep 2", m, fbgemm_cfg, &l);
	/* the stacks in batches of one expert (produce_stack.c) */
	g_batch = 1;
	lay(&l, 2, 1, WT_QUANT_INT8_CHANNEL);
	sweep("fbgemm_fp8 int8-channel tp 2, stacks batched", m, fbgemm_cfg, &l);
	lay(&l, 2, 1, WT_QUANT_FP8_CHANNEL);
	sweep("fbgemm_fp8 fp8-channel tp 2, stacks batched", m, fbgemm_cfg, &l);
	/* ... and streamed in parts (produce_batch.c): plain and quantized outputs */
	g_parts = true;
	lay(&l, 2, 1, WT_QUANT_NONE);
	sweep("fbgemm_fp8 none tp 2, stacks batched in parts", m, fbgemm_cfg, &l);
	lay(&l, 2, 1, WT_QUANT_INT8_CHANNEL);
	sweep("fbgemm_fp8 int8-channel tp 2, stacks batched in parts", m, fbgemm_cfg, &l);
	g_parts = false;
	g_batch = 0;
	tm_free(m);
}
#endif

int main(void)
{
#ifdef OOM_SKIP
	printf("test_shardmap_oom: skipped under AddressSanitizer (it replaces malloc)\n");
	return 77;
#else
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_oom_fp8_merge),
	    cmocka_unit_test(test_oom_fp8_block_ep),
	    cmocka_unit_test(test_oom_fbgemm),
	    cmocka_unit_test(test_oom_quant_exclude),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
