/*
 * test_cuda_sink.c — the CUDA device sink (engine/cuda_sink.c).
 *
 * Always: the no-device contract (create is WT_EDEVICE with a message naming the
 * cause and the fix; destroy(NULL)), and the host half of every fetch case below
 * against a real in-process weightd (so the fixtures and layouts are checked on
 * every machine). With a usable device (skipped with the reason otherwise):
 *  - fetches of several layouts (TP=2 ranks, fp8-channel, int4-group, a
 *    DeepSeek-V3 and a Mixtral EP=2 fixture with many small tensors) into a host
 *    sink and one reused CUDA sink, every device tensor copied back and compared
 *    byte for byte; staging buffers from 4 KiB (16 KiB chunks span several) to
 *    the 8 MiB default; each fetch replaces the previous one;
 *  - the sink driven directly with 3000 tiny tensors written in random pieces;
 *    then the first 40 updated in place through wt_cuda_sink_update_sink (same
 *    device addresses, the rest untouched; another size is WT_ELAYOUT);
 *    an arena that cannot fit (WT_ENOMEM naming needed and free bytes); a write
 *    out of order (WT_EINVAL) and abort;
 *  - a chunk corrupted in flight (weightd's test hook): WT_EHASH, nothing found,
 *    the device memory of the aborted arena returned; the previous results kept.
 * The runtime is loaded at run time (engine/cudart.c): with WT_CUDART naming
 * a missing library, or a library that is not a CUDA runtime, create is
 * WT_EDEVICE "CUDA runtime not found" / "lacks cuda..." (checked in a child
 * process each, as the loaded runtime is kept for the life of a process).
 * Random bytes come from tu_fill / a splitmix seed printed below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef WT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "client/client.h"
#include "engine/cuda_sink_int.h"
#include "kernels/kernels_cuda.h"
#include "tests/test_weightd_util.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/weights.h"

#define SEED 0xcda5eedu

static int have_device(void)
{
	return kern_cuda_available();
}

/* Print why the device half of a test is skipped; 1 if it is. */
static int skip_reason(void)
{
	if (have_device())
		return 0;
	wt_cuda_sink *h = NULL;
	wt_errbuf err;
	int rv = wt_cuda_sink_create(&h, 0, &err);
	printf("skipped (device part): %s (%s)\n", rv == WT_OK ? "?" : err.msg, wt_errname(rv));
	wt_cuda_sink_destroy(h);
	return 1;
}

static void test_no_device_contract(void **state)
{
	(void)state;
	wt_cuda_sink_destroy(NULL); /* no-op */
	wt_cuda_sink *h = NULL;
	wt_errbuf err;
	wt_errclear(&err);
	int rv = wt_cuda_sink_create(&h, 0, &err);
	if (!have_device()) {
		printf("create: %s\n", err.msg);
		assert_int_equal(rv, WT_EDEVICE);
		assert_int_equal(err.code, WT_EDEVICE);
		assert_null(h); /* outputs only on success */
		assert_non_null(strstr(err.msg, "use the host or file sink"));
		assert_true(strstr(err.msg, "no usable CUDA device") != NULL ||
		            strstr(err.msg, "build with nvcc") != NULL);
		/* no state left behind: the next call reports the same */
		assert_int_equal(wt_cuda_sink_create(&h, 1, &err), WT_EDEVICE);
		assert_null(h);
		return;
	}
	assert_int_equal(rv, WT_OK);
	assert_non_null(h);
	assert_int_equal(wt_cuda_sink_n_tensors(h), 0);
	void *p;
	uint64_t n;
	assert_int_equal(wt_cuda_sink_find(h, "model.norm.weight", &p, &n), WT_ENOTFOUND);
	assert_non_null(wt_cuda_sink_sink(h));
	wt_cuda_sink_destroy(h);
	h = NULL;
	assert_int_equal(wt_cuda_sink_create(&h, -1, &err), WT_EINVAL);
	assert_int_equal(wt_cuda_sink_create(&h, 4096, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "does not exist"));
	assert_null(h);
}

/* Child mode (main: argv[1] == "--create-sink"): wt_cuda_sink_create(device 0)
 * in a fresh process, its code then its message on stdout. */
static int child_create(void)
{
	wt_cuda_sink *h = NULL;
	wt_errbuf err;
	wt_errclear(&err);
	int rv = wt_cuda_sink_create(&h, 0, &err);
	if (rv != WT_OK && h != NULL)
		rv = 1000; /* outputs only on success */
	wt_cuda_sink_destroy(h);
	printf("%d %s", rv, rv == WT_OK ? "" : err.msg);
	return 0;
}

/* Run this binary in child mode with WT_CUDART=cudart (a fresh process: the
 * runtime a process loaded is kept); its result code, and its message in msg. */
static int create_in_child(const char *cudart, char *msg, size_t cap)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		setenv("WT_CUDART", cudart, 1);
		execl("/proc/self/exe", "test_cuda_sink", "--create-sink", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char buf[1200];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof(buf) - 1 && (r = read(fd[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	close(fd[0]);
	buf[got] = '\0';
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char *end = NULL;
	long rv = strtol(buf, &end, 10);
	assert_true(end != buf);
	snprintf(msg, cap, "%s", *end == ' ' ? end + 1 : end);
	return (int)rv;
}

/* libweights loads the CUDA runtime with dlopen: a missing one is a clear
 * WT_EDEVICE naming the library and the fix, a wrong one names the missing
 * function; and the real one (the default search) is found when present. */
static void test_runtime_not_found(void **state)
{
	(void)state;
#ifndef WT_HAVE_CUDA
	skip();
#else
	char msg[1024];
	int rv = create_in_child("/nonexistent/wt-test/libcudart.so.99", msg, sizeof(msg));
	printf("missing runtime: %s\n", msg);
	assert_int_equal(rv, WT_EDEVICE);
	assert_non_null(strstr(msg, "CUDA runtime not found"));
	assert_non_null(strstr(msg, "/nonexistent/wt-test/libcudart.so.99"));
	assert_non_null(strstr(msg, "WT_CUDART"));
	assert_non_null(strstr(msg, "use the host or file sink"));
	rv = create_in_child("libm.so.6", msg, sizeof(msg));
	printf("not a runtime: %s\n", msg);
	assert_int_equal(rv, WT_EDEVICE);
	assert_non_null(strstr(msg, "CUDA runtime libm.so.6 lacks cuda"));
	/* empty = the default search, which finds the toolkit's runtime here */
	rv = create_in_child("", msg, sizeof(msg));
	printf("default search: %s (%s)\n", wt_errname(rv), msg);
	assert_null(strstr(msg, "CUDA runtime not found"));
	assert_int_equal(rv, have_device() ? WT_OK : WT_EDEVICE);
#endif
}

/* ---- fetch helpers ---- */

static wt_client *open_client(const char *url)
{
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {url};
	o.endpoints = eps;
	o.n_endpoints = 1;
	o.window = 4;
	wt_client *c = NULL;
	wt_errbuf err;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		fail_msg("wt_client_open: %s", err.msg);
	return c;
}

typedef struct fx_case {
	const char *model;
	uint32_t tp, tp_rank, ep, ep_rank;
	wt_quant quant;
	size_t stage_bytes; /* 0: the sink's default */
	unsigned n_stage;
} fx_case;

static wt_manifest *get_manifest(wt_client *c, const fx_case *k)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = k->tp;
	l.tp_rank = k->tp_rank;
	l.ep_size = k->ep;
	l.ep_rank = k->ep_rank;
	l.quant = k->quant;
	wt_manifest *m = NULL;
	wt_errbuf err;
	int rv = wt_client_get_manifest(c, k->model, &l, &m, &err);
	if (rv != WT_OK)
		fail_msg("manifest %s tp %u/%u ep %u/%u quant %s: %s", k->model, k->tp_rank, k->tp,
		         k->ep_rank, k->ep, wt_quant_name(k->quant), err.msg);
	return m;
}

static void fetch_ok(wt_client *c, const wt_manifest *m, wt_sink *s, const char *what)
{
	wt_errbuf err;
	int rv = wt_client_fetch(c, m, s, NULL, &err);
	if (rv != WT_OK)
		fail_msg("fetch into the %s sink: %s (%s)", what, err.msg, wt_errname(rv));
}

#ifdef WT_HAVE_CUDA
static uint64_t arena_bytes_of(const wt_manifest *m)
{
	uint64_t s = 0;
	for (size_t i = 0; i < wt_manifest_n_tensors(m); i++) {
		wt_tensor_info t;
		assert_int_equal(wt_manifest_tensor(m, i, &t), WT_OK);
		s += (t.nbytes + ENGINE_CUDA_ALIGN - 1) / ENGINE_CUDA_ALIGN * ENGINE_CUDA_ALIGN;
	}
	return s;
}

/* Copy every device tensor back and compare with the host sink's bytes. */
static void compare_sinks(const wt_manifest *m, const wt_host_sink *hs, const wt_cuda_sink *cs)
{
	size_t n = wt_manifest_n_tensors(m);
	assert_int_equal(wt_host_sink_n_tensors(hs), n);
	assert_int_equal(wt_cuda_sink_n_tensors(cs), n);
	for (size_t i = 0; i < n; i++) {
		wt_tensor_info t;
		assert_int_equal(wt_manifest_tensor(m, i, &t), WT_OK);
		const void *hp;
		void *dp = NULL;
		uint64_t hn, dn;
		assert_int_equal(wt_host_sink_find(hs, t.name, &hp, &hn), WT_OK);
		assert_int_equal(wt_cuda_sink_find(cs, t.name, &dp, &dn), WT_OK);
		assert_int_equal(hn, t.nbytes);
		assert_int_equal(dn, t.nbytes);
		if (dn == 0) {
			assert_null(dp);
			continue;
		}
		assert_int_equal((uintptr_t)dp % ENGINE_CUDA_ALIGN, 0);
		uint8_t *back = malloc((size_t)dn);
		assert_non_null(back);
		cudaError_t e = cudaMemcpy(back, dp, (size_t)dn, cudaMemcpyDeviceToHost);
		if (e != cudaSuccess)
			fail_msg("cudaMemcpy of '%s': %s", t.name, cudaGetErrorString(e));
		if (memcmp(back, hp, (size_t)dn) != 0)
			fail_msg("tensor '%s' (%llu bytes): device copy differs from the host sink",
			         t.name, (unsigned long long)dn);
		free(back);
	}
}

static size_t device_free_bytes(void)
{
	size_t fr = 0, tot = 0;
	assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
	return fr;
}

/* Names of the previous fetch that the current manifest lacks are gone. */
static void check_replaced(const wt_cuda_sink *cs, const wt_manifest *prev, const wt_manifest *cur)
{
	size_t gone = 0;
	for (size_t i = 0; prev != NULL && i < wt_manifest_n_tensors(prev); i++) {
		wt_tensor_info t;
		size_t idx;
		void *p;
		uint64_t n;
		assert_int_equal(wt_manifest_tensor(prev, i, &t), WT_OK);
		if (wt_manifest_find(cur, t.name, &idx) == WT_OK)
			continue;
		assert_int_equal(wt_cuda_sink_find(cs, t.name, &p, &n), WT_ENOTFOUND);
		gone++;
	}
	if (gone > 0)
		printf("  %zu tensors of the previous fetch no longer found\n", gone);
}
#endif

/* The in-process daemon: tw llama8 (models/llama: random bit patterns, so only
 * unquantized layouts) plus wt-mkckpt fixtures (finite values: quantizable). */
static tw_env *start_env(const char *tag)
{
	tw_env *e = tw_env_new(tag, SEED);
	const char *b = getenv("WT_BUILD");
	static const char *fams[] = {"llama", "deepseek_v3", "mixtral"};
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		char cmd[2048];
		snprintf(cmd, sizeof(cmd),
		         "%s/wt-mkckpt --family %s --out %s/fx-%s --seed 5 >/dev/null",
		         b ? b : "build", fams[i], e->models, fams[i]);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(tw_start(e), WT_OK);
	return e;
}

static const fx_case fetch_cases[] = {
    {"llama", 1, 0, 1, 0, WT_QUANT_NONE, 0, 0},               /* default 2 x 8 MiB */
    {"llama", 2, 0, 1, 0, WT_QUANT_NONE, 4096, 2},            /* 16 KiB chunks > 4 KiB buffers */
    {"llama", 2, 1, 1, 0, WT_QUANT_NONE, 4096, 3},            /* three buffers */
    {"fx-llama", 1, 0, 1, 0, WT_QUANT_FP8_CHANNEL, 65536, 2}, /* + scale tensors */
    {"fx-llama", 2, 1, 1, 0, WT_QUANT_INT4_GROUP, 65536, 3},  /* packed int4 + scales */
    {"fx-deepseek_v3", 2, 1, 1, 0, WT_QUANT_NONE, 8192, 2},   /* many small tensors */
    {"fx-mixtral", 1, 0, 2, 1, WT_QUANT_NONE, 1u << 20, 2},   /* EP=2, experts */
    {"llama", 1, 0, 1, 0, WT_QUANT_NONE, 8u << 20, 2},        /* back to the default size */
};

static void test_fetch_matches_host(void **state)
{
	(void)state;
	printf("seed 0x%x\n", SEED);
	tw_env *e = start_env("cuda-sink");
	wt_client *c = open_client(e->url);
	int dev = have_device();
	wt_cuda_sink *cs = NULL;
	wt_errbuf err;
	if (dev && wt_cuda_sink_create(&cs, 0, &err) != WT_OK)
		fail_msg("create: %s", err.msg);
	wt_manifest *prev = NULL;
	for (size_t k = 0; k < sizeof(fetch_cases) / sizeof(fetch_cases[0]); k++) {
		const fx_case *fc = &fetch_cases[k];
		wt_manifest *m = get_manifest(c, fc);
		wt_host_sink *hs;
		assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
		fetch_ok(c, m, wt_host_sink_sink(hs), "host");
		assert_int_equal(wt_host_sink_n_tensors(hs), wt_manifest_n_tensors(m));
		printf(
		    "%s tp %u/%u ep %u/%u %s: %zu tensors, %llu bytes, %zu chunks, staging %zu x "
		    "%u\n",
		    fc->model, fc->tp_rank, fc->tp, fc->ep_rank, fc->ep, wt_quant_name(fc->quant),
		    wt_manifest_n_tensors(m), (unsigned long long)wt_manifest_total_bytes(m),
		    wt_manifest_n_chunks(m), fc->stage_bytes, fc->n_stage);
#ifdef WT_HAVE_CUDA
		if (dev) {
			if (fc->stage_bytes != 0 &&
			    engine_cuda_sink_set_staging(cs, fc->stage_bytes, fc->n_stage, &err) !=
			        WT_OK)
				fail_msg("set_staging: %s", err.msg);
			engine_cuda_stats s0, s1;
			engine_cuda_sink_stats(cs, &s0);
			fetch_ok(c, m, wt_cuda_sink_sink(cs), "cuda");
			engine_cuda_sink_stats(cs, &s1);
			compare_sinks(m, hs, cs);
			check_replaced(cs, prev, m);
			uint64_t copies = s1.copies - s0.copies;
			size_t sb = fc->stage_bytes ? fc->stage_bytes : ENGINE_CUDA_STAGE_BYTES;
			printf("  cuda: %llu copies, %llu waits, arena %llu bytes\n",
			       (unsigned long long)copies,
			       (unsigned long long)(s1.waits - s0.waits),
			       (unsigned long long)s1.arena_bytes);
			assert_int_equal(s1.arena_bytes, arena_bytes_of(m));
			/* one copy carries at most sb bytes; every tensor byte is copied */
			assert_true(copies >= (wt_manifest_total_bytes(m) + sb - 1) / sb);
			if (fc->stage_bytes == 4096) /* buffers were reused many times */
				assert_true(copies > 4 * fc->n_stage);
		}
#endif
		wt_host_sink_destroy(hs);
		wt_manifest_free(prev);
		prev = m;
	}
	wt_manifest_free(prev);
	wt_cuda_sink_destroy(cs);
	wt_client_close(c);
	tw_env_free(e);
	if (skip_reason())
		skip();
}

/* ---- the sink driven directly ---- */

#define N_SMALL 3000

typedef struct synth {
	Weights__Manifest pb;
	Weights__TensorEntry *te;
	Weights__TensorEntry **tp;
	Weights__ChunkRef *cr;
	Weights__ChunkRef **cp;
	int64_t *shape;
	char (*names)[32];
	uint8_t hash[16];
} synth;

/* A manifest of n U8 tensors of the given sizes, one chunk each (none if empty). */
static wt_manifest *synth_manifest(synth *x, size_t n, const uint64_t *sizes)
{
	memset(x, 0, sizeof(*x));
	weights__manifest__init(&x->pb);
	x->te = calloc(n, sizeof(*x->te));
	x->tp = calloc(n, sizeof(*x->tp));
	x->cr = calloc(n, sizeof(*x->cr));
	x->cp = calloc(n, sizeof(*x->cp));
	x->shape = calloc(n, sizeof(*x->shape));
	x->names = calloc(n, sizeof(*x->names));
	assert_true(x->te && x->tp && x->cr && x->cp && x->shape && x->names);
	x->pb.format_version = WT_FORMAT_VERSION;
	x->pb.model = "synth";
	x->pb.revision = "r";
	x->pb.layout_text = "tp=1";
	x->pb.shard_id.data = (uint8_t *)"id";
	x->pb.shard_id.len = 2;
	for (size_t i = 0; i < n; i++) {
		weights__tensor_entry__init(&x->te[i]);
		x->tp[i] = &x->te[i];
		snprintf(x->names[i], sizeof(x->names[i]), "t%05zu", i);
		x->te[i].name = x->names[i];
		x->te[i].dtype = WT_U8;
		x->shape[i] = (int64_t)sizes[i];
		x->te[i].shape = &x->shape[i];
		x->te[i].n_shape = 1;
		x->te[i].nbytes = sizes[i];
		x->te[i].hash.data = x->hash;
		x->te[i].hash.len = 16;
		weights__chunk_ref__init(&x->cr[i]);
		x->cp[i] = &x->cr[i];
		x->cr[i].hash.data = x->hash;
		x->cr[i].hash.len = 16;
		x->cr[i].nbytes = sizes[i];
		x->te[i].chunks = &x->cp[i];
		x->te[i].n_chunks = sizes[i] > 0;
		x->pb.total_bytes += sizes[i];
	}
	x->pb.tensors = x->tp;
	x->pb.n_tensors = n;
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	if (client_manifest_from_pb(&x->pb, UINT64_MAX, "synth", &l, &m, &err) != WT_OK)
		fail_msg("synthetic manifest: %s", err.msg);
	return m;
}

static void synth_free(synth *x)
{
	free(x->te);
	free(x->tp);
	free(x->cr);
	free(x->cp);
	free(x->shape);
	free(x->names);
}

#ifdef WT_HAVE_CUDA
/* The in-place update sink: the first K tensors get new bytes through
 * wt_cuda_sink_update_sink at their old device addresses, the others keep
 * theirs; a tensor of another size is refused before anything moves. */
static void check_update(wt_cuda_sink *cs, synth *x, const uint64_t *sizes, const uint64_t *offs,
                         uint8_t *src, uint64_t total)
{
	enum { K = 40 };
	void *before[K];
	uint64_t n;
	for (size_t i = 0; i < K; i++)
		assert_int_equal(wt_cuda_sink_find(cs, x->names[i], &before[i], &n), WT_OK);
	uint8_t *fresh = malloc(total);
	assert_non_null(fresh);
	tu_fill(fresh, total, SEED + 1);
	synth sub;
	wt_manifest *ms = synth_manifest(&sub, K, sizes); /* t00000..: the first K */
	wt_sink *u = wt_cuda_sink_update_sink(cs);
	wt_errbuf err;
	assert_int_equal(u->ops->begin(u, ms, &err), WT_OK);
	for (size_t i = 0; i < K; i++) {
		assert_int_equal(u->ops->tensor_begin(u, i, &err), WT_OK);
		if (sizes[i] > 0)
			assert_int_equal(u->ops->write(u, i, 0, fresh + offs[i], sizes[i], &err),
			                 WT_OK);
		assert_int_equal(u->ops->tensor_end(u, i, &err), WT_OK);
	}
	assert_int_equal(u->ops->end(u, &err), WT_OK);
	memcpy(src, fresh, offs[K]); /* what the device must hold now */
	uint8_t *back = malloc(4096);
	for (size_t i = 0; i < N_SMALL; i++) {
		void *p;
		assert_int_equal(wt_cuda_sink_find(cs, x->names[i], &p, &n), WT_OK);
		if (i < K)
			assert_ptr_equal(p, before[i]); /* in place */
		if (n == 0)
			continue;
		assert_int_equal(cudaMemcpy(back, p, (size_t)n, cudaMemcpyDeviceToHost),
		                 cudaSuccess);
		if (memcmp(back, src + offs[i], (size_t)n) != 0)
			fail_msg("after update: tensor %s differs", x->names[i]);
	}
	free(back);
	wt_manifest_free(ms);
	synth_free(&sub);
	/* another size: WT_ELAYOUT, full reload needed */
	uint64_t other = sizes[0] + 1;
	ms = synth_manifest(&sub, 1, &other);
	assert_int_equal(u->ops->begin(u, ms, &err), WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "full reload needed"));
	wt_manifest_free(ms);
	synth_free(&sub);
	free(fresh);
}
#endif

static void test_direct_small_tensors(void **state)
{
	(void)state;
	uint64_t rng = SEED;
	printf("seed 0x%x\n", SEED);
	uint64_t *sizes = calloc(N_SMALL, sizeof(*sizes)), total = 0;
	uint64_t *offs = calloc(N_SMALL, sizeof(*offs));
	assert_true(sizes && offs);
	for (size_t i = 0; i < N_SMALL; i++) {
		uint64_t r = tu_splitmix64(&rng);
		sizes[i] = r % 13 == 0 ? 0 : 1 + r % 700; /* some empty tensors */
		offs[i] = total;
		total += sizes[i];
	}
	uint8_t *src = malloc(total);
	assert_non_null(src);
	tu_fill(src, total, SEED);
	synth x, big;
	wt_manifest *m = synth_manifest(&x, N_SMALL, sizes);
	uint64_t huge = 1ull << 50; /* 1 PiB: no device has it */
	wt_manifest *mb = synth_manifest(&big, 1, &huge);
	if (skip_reason()) {
		wt_manifest_free(mb);
		synth_free(&big);
		wt_manifest_free(m);
		synth_free(&x);
		free(src);
		free(sizes);
		free(offs);
		skip();
	}
#ifdef WT_HAVE_CUDA
	wt_cuda_sink *cs;
	wt_errbuf err;
	assert_int_equal(wt_cuda_sink_create(&cs, 0, &err), WT_OK);
	assert_int_equal(engine_cuda_sink_set_staging(cs, 4096, 2, &err), WT_OK);
	wt_sink *s = wt_cuda_sink_sink(cs);
	/* every tensor written in random pieces of 1..300 bytes */
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	for (size_t i = 0; i < N_SMALL; i++) {
		assert_int_equal(s->ops->tensor_begin(s, i, &err), WT_OK);
		for (uint64_t off = 0; off < sizes[i];) {
			uint64_t len = 1 + tu_splitmix64(&rng) % 300;
			len = len < sizes[i] - off ? len : sizes[i] - off;
			if (s->ops->write(s, i, off, src + offs[i] + off, (size_t)len, &err) !=
			    WT_OK)
				fail_msg("write: %s", err.msg);
			off += len;
		}
		assert_int_equal(s->ops->tensor_end(s, i, &err), WT_OK);
		if (i == 10) { /* nothing published before end() */
			void *p;
			uint64_t n;
			assert_int_equal(wt_cuda_sink_find(cs, "t00000", &p, &n), WT_ENOTFOUND);
		}
	}
	assert_int_equal(s->ops->end(s, &err), WT_OK);
	assert_int_equal(wt_cuda_sink_n_tensors(cs), N_SMALL);
	engine_cuda_stats st;
	engine_cuda_sink_stats(cs, &st);
	printf("%d tensors, %llu bytes: %llu copies, %llu waits, arena %llu\n", N_SMALL,
	       (unsigned long long)total, (unsigned long long)st.copies,
	       (unsigned long long)st.waits, (unsigned long long)st.arena_bytes);
	assert_int_equal(st.arena_bytes, arena_bytes_of(m));
	/* small tensors share staging buffers: far fewer copies than tensors */
	assert_true(st.copies < N_SMALL / 4);
	assert_true(st.copies >= (total + 4095) / 4096);
	uint8_t *back = malloc(4096);
	for (size_t i = 0; i < N_SMALL; i++) {
		void *p;
		uint64_t n;
		assert_int_equal(wt_cuda_sink_find(cs, x.names[i], &p, &n), WT_OK);
		assert_int_equal(n, sizes[i]);
		if (n == 0) {
			assert_null(p);
			continue;
		}
		assert_int_equal(cudaMemcpy(back, p, (size_t)n, cudaMemcpyDeviceToHost),
		                 cudaSuccess);
		if (memcmp(back, src + offs[i], (size_t)n) != 0)
			fail_msg("tensor %s (%llu bytes) differs", x.names[i],
			         (unsigned long long)n);
	}
	free(back);
	check_update(cs, &x, sizes, offs, src, total);
	/* a write out of order is WT_EINVAL; abort keeps the published fetch */
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	assert_int_equal(s->ops->tensor_begin(s, 1, &err), WT_OK);
	assert_int_equal(s->ops->write(s, 1, 1, src, 1, &err), WT_EINVAL);
	s->ops->abort(s);
	assert_int_equal(wt_cuda_sink_n_tensors(cs), N_SMALL);
	/* an arena that cannot fit: WT_ENOMEM naming needed and free bytes */
	assert_int_equal(s->ops->begin(s, mb, &err), WT_ENOMEM);
	printf("too big: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "needs 1125899906842624 bytes"));
	assert_non_null(strstr(err.msg, "free"));
	assert_int_equal(wt_cuda_sink_n_tensors(cs), N_SMALL); /* begin failed: nothing changed */
	wt_cuda_sink_destroy(cs);
#endif
	wt_manifest_free(mb);
	synth_free(&big);
	wt_manifest_free(m);
	synth_free(&x);
	free(src);
	free(sizes);
	free(offs);
}

/* ---- a fetch that fails mid-way ---- */

static void test_corrupt_midway(void **state)
{
	(void)state;
	if (skip_reason())
		skip();
#ifdef WT_HAVE_CUDA
	tw_env *e = tw_env_new("cuda-corrupt", SEED);
	const fx_case tp1 = {"llama", 1, 0, 1, 0, WT_QUANT_NONE, 0, 0};
	const fx_case tp2 = {"llama", 2, 0, 1, 0, WT_QUANT_NONE, 0, 0};
	assert_int_equal(tw_start(e), WT_OK);
	wt_client *c = open_client(e->url);
	wt_manifest *m1 = get_manifest(c, &tp1);
	wt_host_sink *hs;
	wt_cuda_sink *good, *fresh;
	wt_errbuf err;
	assert_int_equal(wt_host_sink_create(&hs, NULL), WT_OK);
	assert_int_equal(wt_cuda_sink_create(&good, 0, &err), WT_OK);
	assert_int_equal(wt_cuda_sink_create(&fresh, 0, &err), WT_OK);
	assert_int_equal(engine_cuda_sink_set_staging(fresh, 4096, 2, &err), WT_OK);
	fetch_ok(c, m1, wt_host_sink_sink(hs), "host");
	fetch_ok(c, m1, wt_cuda_sink_sink(good), "cuda");
	compare_sinks(m1, hs, good);
	/* restart with the hook: the 5th chunk reply of the new daemon is corrupted */
	wt_client_close(c);
	tw_stop(e);
	e->faults.corrupt_chunk = 5;
	assert_int_equal(tw_start(e), WT_OK);
	c = open_client(e->url);
	wt_manifest *m2 = get_manifest(c, &tp2);
	size_t free0 = device_free_bytes();
	int rv = wt_client_fetch(c, m2, wt_cuda_sink_sink(fresh), NULL, &err);
	printf("corrupt: %s\n", err.msg);
	assert_int_equal(rv, WT_EHASH);
	assert_int_equal(wt_cuda_sink_n_tensors(fresh), 0);
	void *p;
	uint64_t n;
	assert_int_equal(wt_cuda_sink_find(fresh, "model.norm.weight", &p, &n), WT_ENOTFOUND);
	size_t free1 = device_free_bytes();
	printf("device free bytes before %zu, after the aborted fetch %zu\n", free0, free1);
	assert_int_equal(free1, free0); /* the aborted arena was returned */
	/* the hook fired once: the same sink now fetches tp2 fine */
	wt_host_sink *hs2;
	assert_int_equal(wt_host_sink_create(&hs2, NULL), WT_OK);
	fetch_ok(c, m2, wt_host_sink_sink(hs2), "host");
	fetch_ok(c, m2, wt_cuda_sink_sink(fresh), "cuda");
	compare_sinks(m2, hs2, fresh);
	/* a failing fetch into a sink with results keeps them (the old daemon's cache) */
	wt_client_close(c);
	tw_stop(e);
	e->faults.corrupt_chunk = 2;
	assert_int_equal(tw_start(e), WT_OK);
	c = open_client(e->url);
	wt_manifest *m3 = get_manifest(c, &tp2);
	assert_int_equal(wt_client_fetch(c, m3, wt_cuda_sink_sink(good), NULL, &err), WT_EHASH);
	compare_sinks(m1, hs, good); /* still the tp1 results, intact */
	wt_manifest_free(m3);
	wt_host_sink_destroy(hs2);
	wt_manifest_free(m2);
	wt_cuda_sink_destroy(fresh);
	wt_cuda_sink_destroy(good);
	wt_host_sink_destroy(hs);
	wt_manifest_free(m1);
	wt_client_close(c);
	tw_env_free(e);
#endif
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--create-sink") == 0)
		return child_create();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_device_contract), cmocka_unit_test(test_runtime_not_found),
	    cmocka_unit_test(test_fetch_matches_host), cmocka_unit_test(test_direct_small_tensors),
	    cmocka_unit_test(test_corrupt_midway),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
