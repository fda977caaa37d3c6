/*
 * cudart.h — the CUDA runtime functions the CUDA sink uses, loaded at run time
 * (engine/cudart.c, dlopen) so that libweights.so has no link-time dependency
 * on libcudart: a host without the CUDA runtime still loads the library, and
 * only wt_cuda_sink_create fails there ("CUDA runtime not found: ...").
 *
 * Only with WT_HAVE_CUDA (the types come from the toolkit's cuda_runtime.h at
 * build time; nothing of the toolkit is needed at run time but the runtime).
 */
#ifndef WT_ENGINE_CUDART_H
#define WT_ENGINE_CUDART_H

#ifdef WT_HAVE_CUDA
#include <cuda_runtime.h>

#include "weights/error.h"

/* The environment variable naming the runtime to load (a path or a file name);
 * unset: libcudart.so.<major of the build's CUDART_VERSION> from the loader's
 * search path, then the build's CUDA lib64 directory, then libcudart.so. */
#define ENGINE_CUDART_ENV "WT_CUDART"

/* One pointer per function, named after the function without its "cuda". */
typedef struct engine_cudart {
	__typeof__(cudaGetDeviceCount) *GetDeviceCount;
	__typeof__(cudaGetDevice) *GetDevice;
	__typeof__(cudaSetDevice) *SetDevice;
	__typeof__(cudaGetLastError) *GetLastError;
	__typeof__(cudaGetErrorString) *GetErrorString;
	__typeof__(cudaGetErrorName) *GetErrorName;
	__typeof__(cudaMemGetInfo) *MemGetInfo;
	__typeof__(cudaMalloc) *Malloc;
	__typeof__(cudaFree) *Free;
	__typeof__(cudaHostAlloc) *HostAlloc;
	__typeof__(cudaFreeHost) *FreeHost;
	__typeof__(cudaMemcpyAsync) *MemcpyAsync;
	__typeof__(cudaStreamCreateWithFlags) *StreamCreateWithFlags;
	__typeof__(cudaStreamDestroy) *StreamDestroy;
	__typeof__(cudaStreamSynchronize) *StreamSynchronize;
	__typeof__(cudaEventCreateWithFlags) *EventCreateWithFlags;
	__typeof__(cudaEventDestroy) *EventDestroy;
	__typeof__(cudaEventRecord) *EventRecord;
	__typeof__(cudaEventQuery) *EventQuery;
	__typeof__(cudaEventSynchronize) *EventSynchronize;
} engine_cudart;

/*
 * Load the runtime once per process (thread-safe) and return its table, or
 * NULL with WT_EDEVICE in err: "CUDA runtime not found: <dlerror>; ..." when no
 * candidate can be opened, "CUDA runtime <path> lacks <function>" when one
 * opens but is not a CUDA runtime. A failure is not remembered (a later call
 * tries again, e.g. after WT_CUDART changed); a success is kept for the life
 * of the process (the runtime is never unloaded).
 */
const engine_cudart *engine_cudart_load(wt_errbuf *err);

#endif
#endif
