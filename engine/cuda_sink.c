/*
 * cuda_sink.c — engine sink into the memory of one CUDA device (engine.h).
 *
 * Data path of one fetch:
 *
 *   write(chunk) --memcpy--> pinned staging buffer [cur] --cudaMemcpyAsync--> arena
 *                                                    (sink's stream, event[cur])
 *
 * The arena is one cudaMalloc per fetch; tensor i lives at a 256-byte aligned
 * offset in manifest order, so consecutive writes are contiguous in the arena
 * except for alignment padding. A staging buffer therefore holds the image of
 * one contiguous arena range [dst_off, dst_off + fill): writes are appended
 * (padding gaps zero-filled) until the buffer is full or a write does not
 * continue the range; then the buffer is sent with cudaMemcpyAsync, its event
 * recorded, and the next buffer (round robin) is filled — once its own previous
 * copy's event has completed. end() sends the last partial buffer, waits for the
 * stream and publishes the arena; until then (and after an abort) the sink
 * holds the previous successful fetch, or nothing.
 *
 * Every CUDA call is checked; a failure is WT_EDEVICE with cudaGetErrorString.
 * The runtime is loaded at run time by create() (engine/cudart.c: dlopen, so
 * libweights.so does not need libcudart to load; without it create() is
 * WT_EDEVICE "CUDA runtime not found"). Built only with WT_HAVE_CUDA (the
 * Makefile sets it when nvcc exists); the other build has the same API and
 * create() reports WT_EDEVICE.
 */
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "common/common.h"
#include "engine/cuda_sink_int.h"
#include "weights/engine.h"

#ifdef WT_HAVE_CUDA
#include <cuda_runtime.h>

#include "engine/cudart.h"

/* The runtime's functions: loaded by wt_cuda_sink_create (engine_cudart_load)
 * before any other function here can be reached, and never unloaded. */
static const engine_cudart *g_cudart;

static const engine_cudart *rt(void)
{
	return __atomic_load_n(&g_cudart, __ATOMIC_ACQUIRE);
}

typedef struct cs_tensor {
	char *name;      /* owned */
	uint64_t off;    /* in the arena; multiple of ENGINE_CUDA_ALIGN */
	uint64_t nbytes; /* tensor bytes */
	uint64_t written;
	size_t held; /* the next set of an update: its index in done */
	int stale;   /* done set: begun by an update that then failed (host_sink.c) */
} cs_tensor;

typedef struct cs_set {
	cs_tensor *t;   /* in manifest (name) order; owned */
	size_t n;       /* entries of t */
	uint8_t *arena; /* device memory (cudaMalloc), owned; NULL when 0 bytes */
	uint64_t arena_bytes;
} cs_set;

typedef struct cs_stage {
	uint8_t *host;    /* pinned (cudaHostAlloc), owned; NULL if not allocated */
	cudaEvent_t done; /* recorded after the last copy out of host; NULL if not created */
	int pending;      /* a copy out of host may still run: wait on done before refilling */
} cs_stage;

/* Thread rule: one fetch at a time; find/n_tensors not concurrently with a fetch. */
struct wt_cuda_sink {
	wt_sink base; /* first member: the fetcher calls through it */
	int device;
	cudaStream_t stream; /* owned; NULL if not created */
	cs_stage stage[ENGINE_CUDA_MAX_STAGE];
	unsigned n_stage;   /* allocated buffers; 0 after a failed set_staging */
	size_t stage_bytes; /* size of each */
	/* the buffer being filled: stage[cur].host holds arena [dst_off, dst_off + fill) */
	unsigned cur;
	size_t fill;
	uint64_t dst_off;
	cs_set done; /* last successful fetch */
	cs_set next; /* fetch in progress */
	const wt_manifest *m;
	uint64_t n_copies, n_waits;
	/* in-place update (wt_cuda_sink_update_sink): next.t lists the tensors being
	 * updated at their offsets in done's arena, and next.arena borrows it */
	wt_sink upd;
	int updating;
};

static int cuda_fail(wt_errbuf *err, int device, const char *what, cudaError_t e)
{
	(void)rt()->GetLastError(); /* clear the runtime's last-error slot (non-sticky errors) */
	return wt_seterr(err, WT_EDEVICE, "cuda sink (device %d): %s failed: %s (%s)", device, what,
	                 rt()->GetErrorString(e), rt()->GetErrorName(e));
}

/* Make h's device current for the caller's thread; *prev receives the old one. */
static int dev_enter(const wt_cuda_sink *h, int *prev, wt_errbuf *err)
{
	cudaError_t e = rt()->GetDevice(prev);
	if (e != cudaSuccess)
		return cuda_fail(err, h->device, "cudaGetDevice", e);
	if (*prev != h->device && (e = rt()->SetDevice(h->device)) != cudaSuccess)
		return cuda_fail(err, h->device, "cudaSetDevice", e);
	return WT_OK;
}

static void dev_leave(const wt_cuda_sink *h, int prev)
{
	if (prev != h->device)
		(void)rt()->SetDevice(prev);
}

/* Free a set's arena and table. The device must be current and no copy into the
 * arena may still run. */
static void set_free(cs_set *s)
{
	if (s->arena != NULL)
		(void)rt()->Free(s->arena);
	for (size_t i = 0; i < s->n; i++)
		free(s->t[i].name);
	free(s->t);
	memset(s, 0, sizeof(*s));
}

/* Wait for every copy on the stream; staging buffers become free. */
static int drain(wt_cuda_sink *h, wt_errbuf *err)
{
	cudaError_t e = rt()->StreamSynchronize(h->stream);
	for (unsigned i = 0; i < h->n_stage; i++)
		h->stage[i].pending = 0;
	h->fill = 0;
	h->cur = 0;
	if (e != cudaSuccess)
		return cuda_fail(err, h->device, "cudaStreamSynchronize", e);
	return WT_OK;
}

/* Drop the fetch in progress (abort, failed begin/end). Cannot fail. */
static void drop_next(wt_cuda_sink *h)
{
	int prev = h->device;
	int entered = dev_enter(h, &prev, NULL) == WT_OK;
	(void)drain(h, NULL);
	if (h->updating) /* an update's arena is done's: never freed here */
		h->next.arena = NULL;
	h->updating = 0;
	set_free(&h->next);
	if (entered)
		dev_leave(h, prev);
	h->m = NULL;
}

static void staging_free(wt_cuda_sink *h)
{
	for (unsigned i = 0; i < ENGINE_CUDA_MAX_STAGE; i++) {
		cs_stage *st = &h->stage[i];
		if (st->done != NULL)
			(void)rt()->EventDestroy(st->done);
		if (st->host != NULL)
			(void)rt()->FreeHost(st->host);
		memset(st, 0, sizeof(*st));
	}
	h->n_stage = 0;
	h->fill = 0;
	h->cur = 0;
}

/* Allocate n pinned buffers of bytes each, with their events. The device is current. */
static int staging_alloc(wt_cuda_sink *h, size_t bytes, unsigned n, wt_errbuf *err)
{
	for (unsigned i = 0; i < n; i++) {
		cs_stage *st = &h->stage[i];
		cudaError_t e = rt()->HostAlloc((void **)&st->host, bytes, cudaHostAllocDefault);
		if (e != cudaSuccess) {
			st->host = NULL;
			int code = e == cudaErrorMemoryAllocation ? WT_ENOMEM : WT_EDEVICE;
			(void)rt()->GetLastError();
			return wt_seterr(
			    err, code,
			    "cuda sink (device %d): cannot pin %u staging buffers of %zu "
			    "bytes: %s; free host memory or raise the locked-memory limit",
			    h->device, n, bytes, rt()->GetErrorString(e));
		}
		e = rt()->EventCreateWithFlags(&st->done, cudaEventDisableTiming);
		if (e != cudaSuccess) {
			st->done = NULL;
			return cuda_fail(err, h->device, "cudaEventCreateWithFlags", e);
		}
		h->n_stage = i + 1;
	}
	h->stage_bytes = bytes;
	return WT_OK;
}

static wt_cuda_sink *cuda_of(wt_sink *s)
{
	return (wt_cuda_sink *)s;
}

/* Lay out the manifest's tensors in next (names, aligned offsets, arena bytes). */
static int plan_arena(wt_cuda_sink *h, const wt_manifest *m, wt_errbuf *err)
{
	size_t n = wt_manifest_n_tensors(m);
	h->next.t = calloc(n ? n : 1, sizeof(cs_tensor));
	if (h->next.t == NULL)
		return wt_seterr(err, WT_ENOMEM, "cuda sink: out of memory for %zu tensors", n);
	h->next.n = n;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		wt_tensor_info info;
		if (wt_manifest_tensor(m, i, &info) != WT_OK)
			return wt_seterr(err, WT_EINVAL,
			                 "cuda sink: manifest tensor %zu unreadable", i);
		cs_tensor *t = &h->next.t[i];
		if ((t->name = strdup(info.name)) == NULL)
			return wt_seterr(err, WT_ENOMEM, "cuda sink: out of memory for tensor '%s'",
			                 info.name);
		uint64_t padded;
		if (!wt_add_u64(info.nbytes, ENGINE_CUDA_ALIGN - 1, &padded) ||
		    !wt_add_u64(total, padded & ~(uint64_t)(ENGINE_CUDA_ALIGN - 1), &padded) ||
		    padded > SIZE_MAX)
			return wt_seterr(
			    err, WT_EOVERFLOW,
			    "cuda sink: tensor '%s' of %llu bytes at arena offset %llu: "
			    "arena size overflows",
			    info.name, (unsigned long long)info.nbytes, (unsigned long long)total);
		t->off = total;
		t->nbytes = info.nbytes;
		total = padded;
	}
	h->next.arena_bytes = total;
	return WT_OK;
}

static int c_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	wt_cuda_sink *h = cuda_of(s);
	int rv = WT_OK, prev = h->device;
	drop_next(h); /* nothing should be there: one fetch at a time */
	if (h->n_stage < 2)
		return wt_seterr(err, WT_EDEVICE,
		                 "cuda sink (device %d): no staging buffers (an earlier "
		                 "re-allocation failed); destroy and create the sink again",
		                 h->device);
	if ((rv = plan_arena(h, m, err)) != WT_OK) {
		set_free(&h->next);
		return rv;
	}
	uint64_t need = h->next.arena_bytes;
	if (need > 0) {
		if ((rv = dev_enter(h, &prev, err)) != WT_OK) {
			set_free(&h->next);
			return rv;
		}
		size_t free_b = 0, total_b = 0;
		cudaError_t e = rt()->MemGetInfo(&free_b, &total_b);
		if (e == cudaSuccess && need <= free_b)
			e = rt()->Malloc((void **)&h->next.arena, (size_t)need);
		else if (e == cudaSuccess)
			e = cudaErrorMemoryAllocation;
		if (e == cudaErrorMemoryAllocation) {
			(void)rt()->GetLastError();
			h->next.arena = NULL;
			rv = wt_seterr(
			    err, WT_ENOMEM,
			    "cuda sink (device %d): shard of %zu tensors needs %llu bytes of "
			    "device memory, %llu free of %llu (the previous fetch holds "
			    "%llu); free device memory, use a larger TP/EP size, or "
			    "use the host or file sink",
			    h->device, h->next.n, (unsigned long long)need,
			    (unsigned long long)free_b, (unsigned long long)total_b,
			    (unsigned long long)h->done.arena_bytes);
		} else if (e != cudaSuccess) {
			h->next.arena = NULL;
			rv = cuda_fail(err, h->device,
			               "cudaMemGetInfo/cudaMalloc of the tensor arena", e);
		}
		dev_leave(h, prev);
		if (rv != WT_OK) {
			set_free(&h->next);
			return rv;
		}
	}
	h->fill = 0;
	h->cur = 0;
	h->m = m;
	return WT_OK;
}

static int c_tensor_begin(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_cuda_sink *h = cuda_of(s);
	if (h->m == NULL || ti >= h->next.n)
		return wt_seterr(err, WT_EINVAL, "cuda sink: tensor %zu out of range", ti);
	h->next.t[ti].written = 0;
	return WT_OK;
}

/* Send the buffer being filled to the device and move to the next one. */
static int flush(wt_cuda_sink *h, wt_errbuf *err)
{
	if (h->fill == 0)
		return WT_OK;
	cs_stage *st = &h->stage[h->cur];
	cudaError_t e = rt()->MemcpyAsync(h->next.arena + h->dst_off, st->host, h->fill,
	                                  cudaMemcpyHostToDevice, h->stream);
	if (e != cudaSuccess)
		return cuda_fail(err, h->device, "cudaMemcpyAsync into the tensor arena", e);
	st->pending = 1; /* set before the record: a failed record still waits in drain() */
	if ((e = rt()->EventRecord(st->done, h->stream)) != cudaSuccess)
		return cuda_fail(err, h->device, "cudaEventRecord", e);
	h->n_copies++;
	h->cur = (h->cur + 1) % h->n_stage;
	h->fill = 0;
	return WT_OK;
}

/* Make stage[cur] free to fill: wait for its previous copy. */
static int acquire(wt_cuda_sink *h, wt_errbuf *err)
{
	cs_stage *st = &h->stage[h->cur];
	if (!st->pending)
		return WT_OK;
	cudaError_t e = rt()->EventQuery(st->done);
	if (e == cudaErrorNotReady) {
		h->n_waits++;
		e = rt()->EventSynchronize(st->done);
	}
	if (e != cudaSuccess)
		return cuda_fail(err, h->device,
		                 "waiting for a staging copy (cudaEventSynchronize)", e);
	st->pending = 0;
	return WT_OK;
}

static int c_write(wt_sink *s, size_t ti, uint64_t off, const void *data, size_t len,
                   wt_errbuf *err)
{
	wt_cuda_sink *h = cuda_of(s);
	cs_tensor *t = h->m != NULL && ti < h->next.n ? &h->next.t[ti] : NULL;
	if (t == NULL || off != t->written || len > t->nbytes - off)
		return wt_seterr(
		    err, WT_EINVAL,
		    "cuda sink: tensor %zu: write of %zu bytes at %llu out of order or "
		    "past its end",
		    ti, len, (unsigned long long)off);
	const uint8_t *src = data;
	uint64_t dst = t->off + off; /* arena offset; t->off + t->nbytes <= arena_bytes */
	int rv;
	while (len > 0) {
		if (h->fill > 0) { /* continue the buffer's range if dst follows it */
			uint64_t end = h->dst_off + h->fill;
			uint64_t gap = dst - end;
			if (dst < end || gap >= ENGINE_CUDA_ALIGN ||
			    gap >= h->stage_bytes - h->fill) {
				if ((rv = flush(h, err)) != WT_OK)
					return rv;
			} else if (gap > 0) {
				memset(h->stage[h->cur].host + h->fill, 0, (size_t)gap);
				h->fill += (size_t)gap;
			}
		}
		if (h->fill == 0) {
			if ((rv = acquire(h, err)) != WT_OK)
				return rv;
			h->dst_off = dst;
		}
		size_t room = h->stage_bytes - h->fill;
		size_t n = len < room ? len : room;
		memcpy(h->stage[h->cur].host + h->fill, src, n);
		h->fill += n;
		src += n;
		dst += n;
		len -= n;
		t->written += n;
		if (h->fill == h->stage_bytes && (rv = flush(h, err)) != WT_OK)
			return rv;
	}
	return WT_OK;
}

static int c_tensor_end(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_cuda_sink *h = cuda_of(s);
	cs_tensor *t = h->m != NULL && ti < h->next.n ? &h->next.t[ti] : NULL;
	if (t == NULL || t->written != t->nbytes)
		return wt_seterr(err, WT_EINVAL, "cuda sink: tensor %zu ended incomplete", ti);
	return WT_OK;
}

static int c_end(wt_sink *s, wt_errbuf *err)
{
	wt_cuda_sink *h = cuda_of(s);
	int rv = WT_OK, prev = h->device;
	if (h->m == NULL)
		return wt_seterr(err, WT_EINVAL, "cuda sink: end without begin");
	for (size_t i = 0; i < h->next.n && rv == WT_OK; i++)
		if (h->next.t[i].written != h->next.t[i].nbytes)
			rv = wt_seterr(err, WT_EINVAL, "cuda sink: tensor '%s' incomplete at end",
			               h->next.t[i].name);
	if (rv == WT_OK)
		rv = flush(h, err);
	if (rv == WT_OK)
		rv = drain(h, err); /* every byte is on the device */
	if (rv != WT_OK) {
		drop_next(h); /* end() failing means no abort() follows */
		return rv;
	}
	if ((rv = dev_enter(h, &prev, err)) != WT_OK) {
		drop_next(h);
		return rv;
	}
	set_free(&h->done);
	dev_leave(h, prev);
	h->done = h->next;
	memset(&h->next, 0, sizeof(h->next));
	h->m = NULL;
	return WT_OK;
}

static void c_abort(wt_sink *s)
{
	drop_next(cuda_of(s));
}

static const wt_sink_ops cuda_ops = {
    .struct_size = sizeof(wt_sink_ops),
    .begin = c_begin,
    .tensor_begin = c_tensor_begin,
    .write = c_write,
    .tensor_end = c_tensor_end,
    .end = c_end,
    .abort = c_abort,
};

/* ---- in-place update: changed tensors written into the published arena ---- */

static wt_cuda_sink *upd_of(wt_sink *s)
{
	return (wt_cuda_sink *)((char *)s - offsetof(wt_cuda_sink, upd));
}

/* Every tensor of m must be held with the same size before any byte moves. */
static int u_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	wt_cuda_sink *h = upd_of(s);
	drop_next(h);
	size_t n = wt_manifest_n_tensors(m);
	if ((h->next.t = calloc(n ? n : 1, sizeof(cs_tensor))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "cuda sink update: out of memory");
	h->next.n = n;
	for (size_t i = 0; i < n; i++) {
		wt_tensor_info info;
		size_t k = SIZE_MAX;
		int rv = wt_manifest_tensor(m, i, &info);
		if (rv == WT_OK &&
		    (common_find_name(h->done.t, h->done.n, sizeof(cs_tensor),
		                      offsetof(cs_tensor, name), info.name, &k) != WT_OK ||
		     h->done.t[k].nbytes != info.nbytes))
			rv = wt_seterr(
			    err, WT_ELAYOUT,
			    "cuda sink update: tensor '%s' (%llu bytes) is %s in the held "
			    "rank; layout or shapes changed: full reload needed",
			    info.name, (unsigned long long)info.nbytes,
			    k < h->done.n ? "of another size" : "not");
		if (rv == WT_OK && (h->next.t[i].name = strdup(info.name)) == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "cuda sink update: out of memory");
		if (rv != WT_OK) {
			set_free(&h->next);
			return rv;
		}
		h->next.t[i].off = h->done.t[k].off;
		h->next.t[i].nbytes = info.nbytes;
		h->next.t[i].held = k;
	}
	/* A stale tensor (an earlier update began it and failed) must be rewritten
	 * by this one, else success would be reported over a mix of revisions;
	 * both sets are in name order. */
	for (size_t k = 0, i = 0; k < h->done.n; k++) {
		while (i < n && h->next.t[i].held < k)
			i++;
		if (h->done.t[k].stale && (i == n || h->next.t[i].held != k)) {
			set_free(&h->next);
			return wt_seterr(
			    err, WT_ELAYOUT,
			    "cuda sink update to revision %.12s: tensor '%s' holds bytes of an "
			    "earlier update that failed, and this update does not rewrite it; "
			    "fetch the rank in full (or select that tensor too)",
			    wt_manifest_revision(m), h->done.t[k].name);
		}
	}
	h->next.arena = h->done.arena;
	h->next.arena_bytes = h->done.arena_bytes;
	h->updating = 1;
	h->fill = 0;
	h->cur = 0;
	h->m = m;
	return WT_OK;
}

static int u_tensor_begin(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_cuda_sink *h = upd_of(s);
	int rv = c_tensor_begin(&h->base, ti, err);
	if (rv == WT_OK)
		h->done.t[h->next.t[ti].held].stale = 1; /* until this update ends well */
	return rv;
}

static int u_write(wt_sink *s, size_t ti, uint64_t off, const void *data, size_t len,
                   wt_errbuf *err)
{
	return c_write(&upd_of(s)->base, ti, off, data, len, err);
}

static int u_tensor_end(wt_sink *s, size_t ti, wt_errbuf *err)
{
	return c_tensor_end(&upd_of(s)->base, ti, err);
}

/* Send the last buffer, wait for every copy; done (same arena) now holds the update. */
static int u_end(wt_sink *s, wt_errbuf *err)
{
	wt_cuda_sink *h = upd_of(s);
	if (h->m == NULL || !h->updating)
		return wt_seterr(err, WT_EINVAL, "cuda sink update: end without begin");
	int rv = WT_OK;
	for (size_t i = 0; i < h->next.n && rv == WT_OK; i++)
		if (h->next.t[i].written != h->next.t[i].nbytes)
			rv = wt_seterr(err, WT_EINVAL,
			               "cuda sink update: tensor '%s' incomplete at end",
			               h->next.t[i].name);
	if (rv == WT_OK)
		rv = flush(h, err);
	for (size_t i = 0; rv == WT_OK && i < h->next.n; i++)
		h->done.t[h->next.t[i].held].stale = 0;
	drop_next(h); /* drains: every byte is on the device; keeps the arena */
	return rv;
}

static void u_abort(wt_sink *s)
{
	drop_next(upd_of(s));
}

static const wt_sink_ops cuda_upd_ops = {
    .struct_size = sizeof(wt_sink_ops),
    .begin = u_begin,
    .tensor_begin = u_tensor_begin,
    .write = u_write,
    .tensor_end = u_tensor_end,
    .end = u_end,
    .abort = u_abort,
};

wt_sink *wt_cuda_sink_update_sink(wt_cuda_sink *h)
{
	return &h->upd;
}

/* Any error of device discovery means "no usable device" (docs/architecture.md section 6). */
static int no_device(wt_errbuf *err, int device, const char *what, cudaError_t e)
{
	(void)rt()->GetLastError();
	return wt_seterr(err, WT_EDEVICE,
	                 "cuda sink: no usable CUDA device %d (%s: %s); run on a machine with "
	                 "an NVIDIA GPU and driver, or use the host or file sink",
	                 device, what, rt()->GetErrorString(e));
}

int wt_cuda_sink_create(wt_cuda_sink **out, int device, wt_errbuf *err)
{
	if (device < 0)
		return wt_seterr(err, WT_EINVAL, "cuda sink: device %d: must be >= 0", device);
	const engine_cudart *loaded = engine_cudart_load(err);
	if (loaded == NULL)
		return WT_EDEVICE;
	__atomic_store_n(&g_cudart, loaded, __ATOMIC_RELEASE);
	int count = 0, prev = 0;
	cudaError_t e = rt()->GetDeviceCount(&count);
	if (e != cudaSuccess)
		return no_device(err, device, "cudaGetDeviceCount", e);
	if (count <= 0)
		return no_device(err, device, "cudaGetDeviceCount", cudaErrorNoDevice);
	if (device >= count)
		return wt_seterr(err, WT_EINVAL,
		                 "cuda sink: device %d does not exist: this machine has %d CUDA "
		                 "device%s (0..%d)",
		                 device, count, count == 1 ? "" : "s", count - 1);
	if ((e = rt()->GetDevice(&prev)) != cudaSuccess)
		return no_device(err, device, "cudaGetDevice", e);
	if ((e = rt()->SetDevice(device)) != cudaSuccess)
		return no_device(err, device, "cudaSetDevice", e);
	wt_cuda_sink *h = calloc(1, sizeof(*h));
	int rv = WT_OK;
	if (h == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "cuda sink: out of memory");
		goto out;
	}
	h->base.ops = &cuda_ops;
	h->upd.ops = &cuda_upd_ops;
	h->device = device;
	if ((e = rt()->StreamCreateWithFlags(&h->stream, cudaStreamNonBlocking)) != cudaSuccess) {
		h->stream = NULL;
		rv = cuda_fail(err, device, "cudaStreamCreateWithFlags", e);
		goto out;
	}
	rv = staging_alloc(h, ENGINE_CUDA_STAGE_BYTES, ENGINE_CUDA_N_STAGE, err);
out:
	if (prev != device)
		(void)rt()->SetDevice(prev);
	if (rv != WT_OK) {
		wt_cuda_sink_destroy(h);
		return rv;
	}
	*out = h;
	return WT_OK;
}

wt_sink *wt_cuda_sink_sink(wt_cuda_sink *h)
{
	return &h->base;
}

int wt_cuda_sink_find(const wt_cuda_sink *h, const char *name, void **dev_ptr, uint64_t *nbytes)
{
	size_t i; /* manifest order is name order */
	if (common_find_name(h->done.t, h->done.n, sizeof(cs_tensor), offsetof(cs_tensor, name),
	                     name, &i) != WT_OK)
		return WT_ENOTFOUND;
	const cs_tensor *t = &h->done.t[i];
	*dev_ptr = t->nbytes > 0 ? h->done.arena + t->off : NULL;
	*nbytes = t->nbytes;
	return WT_OK;
}

size_t wt_cuda_sink_n_tensors(const wt_cuda_sink *h)
{
	return h->done.n;
}

void wt_cuda_sink_destroy(wt_cuda_sink *h)
{
	if (h == NULL)
		return;
	int prev = h->device;
	int entered = dev_enter(h, &prev, NULL) == WT_OK;
	if (h->stream != NULL)
		(void)drain(h, NULL);
	set_free(&h->next);
	set_free(&h->done);
	staging_free(h);
	if (h->stream != NULL)
		(void)rt()->StreamDestroy(h->stream);
	if (entered)
		dev_leave(h, prev);
	free(h);
}

int engine_cuda_sink_set_staging(wt_cuda_sink *h, size_t buf_bytes, unsigned n_bufs, wt_errbuf *err)
{
	if (n_bufs < 2 || n_bufs > ENGINE_CUDA_MAX_STAGE || buf_bytes < 4096 ||
	    buf_bytes > ((size_t)1 << 30))
		return wt_seterr(err, WT_EINVAL,
		                 "cuda sink: %u staging buffers of %zu bytes: want 2..%u buffers "
		                 "of 4 KiB..1 GiB",
		                 n_bufs, buf_bytes, ENGINE_CUDA_MAX_STAGE);
	if (h->m != NULL)
		return wt_seterr(err, WT_EBUSY, "cuda sink: staging changed during a fetch");
	int prev = h->device, rv;
	if ((rv = dev_enter(h, &prev, err)) != WT_OK)
		return rv;
	if ((rv = drain(h, err)) == WT_OK) {
		staging_free(h);
		if ((rv = staging_alloc(h, buf_bytes, n_bufs, err)) != WT_OK)
			staging_free(h);
	}
	dev_leave(h, prev);
	return rv;
}

void engine_cuda_sink_stats(const wt_cuda_sink *h, engine_cuda_stats *out)
{
	out->copies = h->n_copies;
	out->waits = h->n_waits;
	out->arena_bytes = h->done.arena_bytes;
}

#else /* no WT_HAVE_CUDA: the API exists, there is never a sink */

struct wt_cuda_sink {
	wt_sink base;
};

int wt_cuda_sink_create(wt_cuda_sink **out, int device, wt_errbuf *err)
{
	(void)out;
	return wt_seterr(err, WT_EDEVICE,
	                 "cuda sink: device %d: this build has no CUDA support (nvcc was not "
	                 "found when it was built); build with nvcc (CUDA toolkit on PATH or "
	                 "NVCC=/path/to/nvcc), or use the host or file sink",
	                 device);
}

wt_sink *wt_cuda_sink_sink(wt_cuda_sink *h)
{
	return h != NULL ? &h->base : NULL;
}

wt_sink *wt_cuda_sink_update_sink(wt_cuda_sink *h)
{
	return h != NULL ? &h->base : NULL;
}

int wt_cuda_sink_find(const wt_cuda_sink *h, const char *name, void **dev_ptr, uint64_t *nbytes)
{
	(void)h, (void)name, (void)dev_ptr, (void)nbytes;
	return WT_ENOTFOUND;
}

size_t wt_cuda_sink_n_tensors(const wt_cuda_sink *h)
{
	(void)h;
	return 0;
}

void wt_cuda_sink_destroy(wt_cuda_sink *h)
{
	free(h);
}

int engine_cuda_sink_set_staging(wt_cuda_sink *h, size_t buf_bytes, unsigned n_bufs, wt_errbuf *err)
{
	(void)h, (void)buf_bytes, (void)n_bufs;
	return wt_seterr(err, WT_EDEVICE, "cuda sink: this build has no CUDA support");
}

void engine_cuda_sink_stats(const wt_cuda_sink *h, engine_cuda_stats *out)
{
	(void)h;
	memset(out, 0, sizeof(*out));
}
#endif
