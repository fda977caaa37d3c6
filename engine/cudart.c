/*
 * cudart.c — dlopen of the CUDA runtime for the CUDA sink (cudart.h).
 */
#ifdef WT_HAVE_CUDA
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"
#include "engine/cudart.h"

/* libcudart's SONAME carries the major version: CUDART_VERSION 13000 -> .so.13 */
#define CUDART_MAJOR (CUDART_VERSION / 1000)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static engine_cudart g_rt;
static int g_loaded; /* under g_mu */

static const common_dl_sym g_syms[] = {
#define SYM(f)                                                                                     \
	{                                                                                          \
		"cuda" #f, offsetof(engine_cudart, f)                                              \
	}
    SYM(GetDeviceCount),
    SYM(GetDevice),
    SYM(SetDevice),
    SYM(GetLastError),
    SYM(GetErrorString),
    SYM(GetErrorName),
    SYM(MemGetInfo),
    SYM(Malloc),
    SYM(Free),
    SYM(HostAlloc),
    SYM(FreeHost),
    SYM(MemcpyAsync),
    SYM(StreamCreateWithFlags),
    SYM(StreamDestroy),
    SYM(StreamSynchronize),
    SYM(EventCreateWithFlags),
    SYM(EventDestroy),
    SYM(EventRecord),
    SYM(EventQuery),
    SYM(EventSynchronize),
#undef SYM
};

/* Fill g_rt from h; WT_EDEVICE naming the first missing function. */
static int resolve(void *h, const char *path, wt_errbuf *err)
{
	const char *missing = common_dl_bind(h, g_syms, sizeof(g_syms) / sizeof(g_syms[0]), &g_rt);
	if (missing != NULL)
		return wt_seterr(err, WT_EDEVICE,
		                 "CUDA runtime %s lacks %s: it is not a CUDA runtime of "
		                 "version %d or later; point %s at libcudart.so.%d",
		                 path, missing, CUDART_MAJOR, ENGINE_CUDART_ENV, CUDART_MAJOR);
	return WT_OK;
}

/* Open the first candidate that loads; *path (in paths) names it. */
static void *open_runtime(char paths[3][512], const char **path, char *why, size_t cap)
{
	const char *env = getenv(ENGINE_CUDART_ENV);
	size_t n = 0;
	if (env != NULL && env[0] != '\0') {
		snprintf(paths[n++], 512, "%s", env);
	} else {
		snprintf(paths[n++], 512, "libcudart.so.%d", CUDART_MAJOR);
#ifdef WT_CUDART_DIR
		snprintf(paths[n++], 512, "%s/libcudart.so.%d", WT_CUDART_DIR, CUDART_MAJOR);
#endif
		snprintf(paths[n++], 512, "libcudart.so");
	}
	why[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (h != NULL) {
			*path = paths[i];
			return h;
		}
		if (i == 0) { /* the first candidate's reason is the telling one */
			const char *e = dlerror();
			snprintf(why, cap, "%s", e ? e : paths[i]);
		}
	}
	return NULL;
}

const engine_cudart *engine_cudart_load(wt_errbuf *err)
{
	pthread_mutex_lock(&g_mu);
	if (g_loaded) {
		pthread_mutex_unlock(&g_mu);
		return &g_rt;
	}
	char why[600], paths[3][512];
	const char *path = NULL;
	void *h = open_runtime(paths, &path, why, sizeof(why));
	int rv;
	if (h == NULL)
		rv = wt_seterr(err, WT_EDEVICE,
		               "CUDA runtime not found: %s; install the CUDA %d runtime "
		               "(libcudart.so.%d) where the dynamic loader finds it "
		               "(LD_LIBRARY_PATH, ldconfig) or set %s to its path, or use "
		               "the host or file sink (no CUDA needed)",
		               why, CUDART_MAJOR, CUDART_MAJOR, ENGINE_CUDART_ENV);
	else if ((rv = resolve(h, path, err)) != WT_OK)
		dlclose(h);
	g_loaded = rv == WT_OK;
	pthread_mutex_unlock(&g_mu);
	return rv == WT_OK ? &g_rt : NULL;
}
#endif
