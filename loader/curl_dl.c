/* curl_dl.c — libcurl loaded on first use (see curl_dl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"
#include "loader/curl_dl.h"

curl_dl_api wt_curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_rc;
static wt_errbuf load_err; /* the failure, kept for every later caller */

static const common_dl_sym syms[] = {
#define CURL_DL_ENTRY(name) {"curl_" #name, offsetof(curl_dl_api, name)},
    CURL_DL_FUNCS(CURL_DL_ENTRY)
#undef CURL_DL_ENTRY
};

static void load(void)
{
	const char *lib = getenv("WEIGHTD_LIBCURL");
	const char *why = lib != NULL ? " (WEIGHTD_LIBCURL)" : "";
	if (lib == NULL || lib[0] == '\0') {
		lib = CURL_DL_SONAME;
		why = "";
	}
	/* never closed: libcurl keeps global state (curl_global_init) for the process */
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		load_rc =
		    wt_seterr(&load_err, WT_EUNSUPPORTED,
		              "http(s):// and s3:// sources need libcurl, which could not be "
		              "loaded from '%s'%s: %s; install it (Debian: apt-get install "
		              "libcurl4t64, or libcurl4 before trixie) or set WEIGHTD_LIBCURL "
		              "to a libcurl.so.4",
		              lib, why, e != NULL ? e : "unknown error");
		return;
	}
	curl_dl_api api;
	const char *missing = common_dl_bind(h, syms, sizeof(syms) / sizeof(syms[0]), &api);
	if (missing != NULL) {
		load_rc = wt_seterr(&load_err, WT_EUNSUPPORTED,
		                    "libcurl '%s'%s has no %s: not a libcurl, or one older than "
		                    "weightd was built with (%s); install a newer libcurl or unset "
		                    "WEIGHTD_LIBCURL",
		                    lib, why, missing, LIBCURL_VERSION);
		dlclose(h);
		return;
	}
	wt_curl = api;
	load_rc = WT_OK;
}

int curl_dl_load(wt_errbuf *err)
{
	pthread_once(&load_once, load);
	if (load_rc != WT_OK)
		return wt_seterr(err, load_rc, "%s", load_err.msg);
	return WT_OK;
}
