/*
 * engine.h — engine sinks: where wt_client_fetch() puts verified shard bytes.
 *
 * A sink is a table of callbacks plus the engine's own state. An engine embeds
 * `wt_sink` as the FIRST member of its struct and recovers its struct from the
 * `wt_sink *` it is given:
 *
 *     typedef struct my_engine { wt_sink base; ...; } my_engine;
 *     static const wt_sink_ops my_ops = {.struct_size = sizeof(wt_sink_ops),
 *                                        .begin = ..., .write = ..., ...};
 *     e->base.ops = &my_ops;
 *     wt_client_fetch(c, m, &e->base, NULL, &err);
 *
 * Callback contract (the fetcher guarantees it; engines may rely on it):
 *  - All calls of one fetch come from the thread that called wt_client_fetch(),
 *    one at a time, never concurrently (recv_buf too; the bytes it is asked for
 *    are then written by the fetcher's receiver threads).
 *  - Order: begin(m) once; then for each tensor i = 0..n-1 in manifest (name)
 *    order: tensor_begin(i), write(i, off, ...) zero or more times with
 *    offsets strictly increasing and contiguous from 0 (they tile the tensor
 *    exactly), tensor_end(i); then end() once.
 *  - write() data has passed its chunk hash; it is borrowed for the duration of
 *    the call only (copy it), unless it is the sink's own memory that recv_buf
 *    offered for that chunk (then it is already in place). tensor_end(i) is
 *    called only after the whole
 *    tensor passed its XXH3-128; end() only after every tensor did. An engine
 *    that must expose only fully verified results publishes at tensor_end/end.
 *  - If begin fails, nothing else is called. If any later step fails (network,
 *    hash, an engine callback's own error, cancel), abort() is called exactly
 *    once and nothing after it; end() and abort() are never both called.
 *  - A callback returns WT_OK or a wt_err code with err set; the fetch then
 *    stops with that code.
 * The manifest pointer stays valid until end()/abort() returns.
 */
#ifndef WEIGHTS_ENGINE_H
#define WEIGHTS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "weights/api.h"
#include "weights/client.h"
#include "weights/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Versioned (see wt_client_opts in client.h): struct_size = sizeof(wt_sink_ops),
 * e.g. `static const wt_sink_ops my_ops = {.struct_size = sizeof(wt_sink_ops),
 * .begin = ...}` or wt_sink_ops_init() then the callbacks. Callbacks appended
 * in later versions will be optional: an older table simply lacks them.
 */
typedef struct wt_sink_ops {
	size_t struct_size;
	int (*begin)(wt_sink *s, const wt_manifest *m, wt_errbuf *err);
	int (*tensor_begin)(wt_sink *s, size_t tensor, wt_errbuf *err);
	int (*write)(wt_sink *s, size_t tensor, uint64_t off, const void *data, size_t len,
	             wt_errbuf *err);
	int (*tensor_end)(wt_sink *s, size_t tensor, wt_errbuf *err);
	int (*end)(wt_sink *s, wt_errbuf *err);
	void (*abort)(wt_sink *s); /* must not fail; undo partial output */
	/*
	 * Since 1.3, optional (NULL, or absent from an older table: every chunk
	 * goes through write() as before). Where the fetcher may receive bytes
	 * [off, off + len) of tensor `tensor` itself: a pointer to len writable
	 * bytes of the sink's own memory that are to hold them, or NULL for "send
	 * that chunk through write()". Called on the fetch thread after begin(),
	 * for any tensor in any order (before its tensor_begin too, and again for
	 * a chunk fetched once more); only the bulk stream (wt_client_opts.stream)
	 * asks. The fetcher's receiver threads then write the chunk's bytes there
	 * as they arrive, NOT YET VERIFIED; once they passed the chunk hash, the
	 * chunk goes through write() as always, with data equal to that pointer
	 * (nothing to copy: compare and skip the memcpy). A chunk that fails its
	 * hash or its stream leaves unverified bytes there, overwritten when it is
	 * fetched again: offer this only for memory nobody reads before
	 * tensor_end()/end() (never for tensors in use, such as an in-place
	 * update), and publish at tensor_end()/end() as the contract above says.
	 * Nothing is written there any more once end() or abort() is called.
	 */
	void *(*recv_buf)(wt_sink *s, size_t tensor, uint64_t off, size_t len);
} wt_sink_ops;

struct wt_sink {
	const wt_sink_ops *ops; /* the six callbacks through abort non-NULL (else WT_EINVAL) */
};

/* Zero every callback and set struct_size; then set the six required callbacks
 * (recv_buf is optional). */
WT_API void wt_sink_ops_init(wt_sink_ops *ops);

/* ---- host memory: one buffer per tensor, found by name ---- */

typedef struct wt_host_sink wt_host_sink; /* opaque; one fetch at a time */

/* Create an empty host sink. Caller owns *out (wt_host_sink_destroy()). */
WT_API int wt_host_sink_create(wt_host_sink **out, wt_errbuf *err);
/* The sink to pass to wt_client_fetch(). Borrowed; valid until destroy. */
WT_API wt_sink *wt_host_sink_sink(wt_host_sink *h);
/*
 * The bytes of a tensor of the last successful fetch. *data is borrowed and valid
 * until the next fetch into this sink or destroy; do not free. WT_ENOTFOUND if no
 * successful fetch holds that name. Between begin and end nothing is found:
 * results appear only once every tensor is verified.
 */
WT_API int wt_host_sink_find(const wt_host_sink *h, const char *name, const void **data,
                             uint64_t *nbytes);
/* Number of tensors held (0 before the first successful fetch). */
WT_API size_t wt_host_sink_n_tensors(const wt_host_sink *h);
WT_API void wt_host_sink_destroy(wt_host_sink *h); /* NULL is a no-op */
/*
 * Since 0.5: a sink over the same host sink for wt_client_fetch_update() (or
 * wt_client_fetch_tensors()): it writes each tensor it is given into the
 * buffer the last successful fetch holds under that name, in place (the
 * pointers wt_host_sink_find gave stay valid); the other tensors keep their
 * bytes. begin() refuses (WT_ELAYOUT, nothing written) a tensor the sink does
 * not hold or holds with another size. Bytes are written as they are verified
 * chunk by chunk: after a failed update the changed tensors may hold partial
 * bytes (run the update again, or a full fetch). Each tensor a failed update
 * began stays stale until an update rewrites it: a later update that does not
 * (say, to a revision that reverted it) is refused at begin() with WT_ELAYOUT
 * naming it, never a success over a mix of revisions (an update with no
 * changed tensor too: wt_client_fetch_update calls begin with no tensor);
 * after a failure use a full fetch or an update that selects the stale
 * tensors. Both sinks check the callback
 * order: a write out of order or past its tensor's end, a tensor ended short,
 * or end() before every tensor was complete is WT_EINVAL (a full fetch then
 * publishes nothing). Borrowed; valid until destroy.
 */
WT_API wt_sink *wt_host_sink_update_sink(wt_host_sink *h);

/* ---- safetensors file ---- */

typedef struct wt_file_sink wt_file_sink; /* opaque; one fetch at a time */

/*
 * A sink that writes the shard as one standard safetensors file at path: the
 * manifest's tensors in manifest (name) order, with __metadata__
 * weightd.format="1", weightd.model, weightd.revision, weightd.layout (the
 * manifest's layout text) and weightd.rank="tp_rank=R,ep_rank=E". Data streams
 * to "<path>.tmp.<pid>" and is renamed to path only after every tensor was
 * verified (and fsync'ed when do_fsync); on abort the temp file is removed and
 * path is untouched. Memory use does not grow with the shard size.
 * begin() refuses (WT_ECORRUPT, naming it; no file created) a tensor name or a
 * manifest model/revision/layout text that is not UTF-8, which a safetensors
 * header (UTF-8 JSON) cannot hold, and (WT_EINVAL) a path that is a folder.
 * Like the host sink it checks the callback
 * order: a write out of order or past its tensor's end, or a tensor ended
 * short, is WT_EINVAL naming the tensor. path is copied. Caller owns *out (wt_file_sink_destroy()).
 */
WT_API int wt_file_sink_create(wt_file_sink **out, const char *path, int do_fsync, wt_errbuf *err);
/* The sink to pass to wt_client_fetch(). Borrowed; valid until destroy. */
WT_API wt_sink *wt_file_sink_sink(wt_file_sink *f);
/* Destroy; a fetch in progress must have ended. NULL is a no-op. */
WT_API void wt_file_sink_destroy(wt_file_sink *f);

/* ---- CUDA device: one device arena per fetch, pinned double-buffered staging ---- */

typedef struct wt_cuda_sink wt_cuda_sink; /* opaque; one fetch at a time */

/*
 * A sink that puts the shard into the memory of CUDA device `device`.
 *
 * begin() allocates one device arena (cudaMalloc) holding every tensor of the
 * manifest, each at a 256-byte aligned offset; if it does not fit, WT_ENOMEM
 * naming the bytes needed and cudaMemGetInfo's free bytes. write() copies the
 * borrowed chunk bytes into pinned host staging buffers (cudaHostAlloc, two of
 * 8 MiB, allocated at create and reused by every fetch) and issues
 * cudaMemcpyAsync on the sink's own stream, one event per buffer: a buffer is
 * refilled only after its previous copy completed, so receiving and hashing
 * the next chunks overlaps the DMA of the last ones. end() waits for the
 * stream and publishes; abort() frees the new arena. A second fetch replaces
 * the first at its end() (both arenas exist during that fetch).
 *
 * WT_EDEVICE, with a message naming the cause and the fix (use the host or
 * file sink; build with nvcc), when the build has no CUDA (nvcc was not found),
 * when the machine has no usable device (any error of cudaGetDeviceCount or
 * cudaSetDevice), and for every failing CUDA call later (cudaGetErrorString in
 * the message). WT_EINVAL for a device index < 0 or >= the device count.
 *
 * Callbacks change the calling thread's current device only for their own
 * duration (it is restored). Caller owns *out (wt_cuda_sink_destroy()).
 */
WT_API int wt_cuda_sink_create(wt_cuda_sink **out, int device, wt_errbuf *err);
/* The sink to pass to wt_client_fetch(). Borrowed; valid until destroy. */
WT_API wt_sink *wt_cuda_sink_sink(wt_cuda_sink *h);
/*
 * The device copy of a tensor of the last successful fetch: *dev_ptr is a
 * device pointer on the sink's device (256-byte aligned; NULL for a 0-byte
 * tensor), borrowed and valid until the next successful fetch into this sink
 * or destroy; do not cudaFree it. WT_ENOTFOUND if no successful fetch holds
 * that name. Between begin and end nothing new is found: results appear only
 * once every tensor is verified and its copy to the device completed. Must not
 * run concurrently with a fetch into the same sink.
 */
WT_API int wt_cuda_sink_find(const wt_cuda_sink *h, const char *name, void **dev_ptr,
                             uint64_t *nbytes);
/* Number of tensors held (0 before the first successful fetch). */
WT_API size_t wt_cuda_sink_n_tensors(const wt_cuda_sink *h);
/*
 * Since 1.1: the in-place update sink of a CUDA sink, as wt_host_sink_update_sink
 * (for wt_client_fetch_update / wt_client_fetch_tensors): each tensor it is
 * given is written into the device memory the last successful fetch holds
 * under that name (the pointers wt_cuda_sink_find gave stay valid), through the
 * same staging buffers and stream; end() returns once every byte is on the
 * device. begin() refuses (WT_ELAYOUT "full reload needed", nothing written) a
 * tensor not held or held with another size. After a failed update the changed
 * tensors may hold partial bytes, and they stay stale as in the host update
 * sink: a later update that does not rewrite them is refused at begin()
 * (WT_ELAYOUT naming one). Borrowed; valid until destroy.
 */
WT_API wt_sink *wt_cuda_sink_update_sink(wt_cuda_sink *h);
/* Free the arenas, staging buffers, events and stream; a fetch in progress must
 * have ended. NULL is a no-op. */
WT_API void wt_cuda_sink_destroy(wt_cuda_sink *h);

#ifdef __cplusplus
}
#endif

#endif
