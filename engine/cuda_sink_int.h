/*
 * cuda_sink_int.h — knobs and counters of the CUDA sink (engine/cuda_sink.c) for
 * tests and benchmarks; not part of the public API (include/weights/engine.h).
 */
#ifndef WT_ENGINE_CUDA_SINK_INT_H
#define WT_ENGINE_CUDA_SINK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "weights/engine.h"

#define ENGINE_CUDA_ALIGN       256u       /* arena offset alignment of every tensor */
#define ENGINE_CUDA_STAGE_BYTES (8u << 20) /* default staging buffer size */
#define ENGINE_CUDA_N_STAGE     2u         /* default staging buffer count */
#define ENGINE_CUDA_MAX_STAGE   8u

/*
 * Replace the staging buffers by n_bufs (2..ENGINE_CUDA_MAX_STAGE) pinned buffers
 * of buf_bytes (4 KiB..1 GiB) each. Only between fetches. WT_EINVAL out of range,
 * WT_EDEVICE/WT_ENOMEM if the allocation fails (the sink then has no staging
 * buffers and every later fetch fails at begin with WT_EDEVICE).
 */
int engine_cuda_sink_set_staging(wt_cuda_sink *h, size_t buf_bytes, unsigned n_bufs,
                                 wt_errbuf *err);

typedef struct engine_cuda_stats {
	uint64_t copies;      /* cudaMemcpyAsync calls out of staging (all fetches) */
	uint64_t waits;       /* times a staging buffer was still being copied when needed */
	uint64_t arena_bytes; /* device bytes of the published arena (alignment included) */
} engine_cuda_stats;

/* Counters since create. */
void engine_cuda_sink_stats(const wt_cuda_sink *h, engine_cuda_stats *out);

#endif
