/*
 * curl_opts.c — the WEIGHTD_HTTP_* environment settings of the curl-based
 * store backends, and URL path escaping (see curl_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/curl_int.h"

static int env_long(const char *name, long def, long lo, long hi, long *out, wt_errbuf *err)
{
	const char *v = getenv(name);
	*out = def;
	if (v == NULL || v[0] == '\0')
		return WT_OK;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || x < lo || x > hi)
		return wt_seterr(err, WT_EINVAL, "%s='%s': want an integer in [%ld, %ld]", name, v,
		                 lo, hi);
	*out = x;
	return WT_OK;
}

int curlu_opts_from_env(curlu_opts *o, wt_errbuf *err)
{
	memset(o, 0, sizeof(*o));
	long ct, ls, rt, bo, par, split, settle;
	int rv = env_long("WEIGHTD_HTTP_CONNECT_TIMEOUT_MS", 10000, 1, 600000, &ct, err);
	if (rv == WT_OK)
		rv = env_long("WEIGHTD_HTTP_LOW_SPEED_TIME_S", 30, 1, 3600, &ls, err);
	if (rv == WT_OK)
		rv = env_long("WEIGHTD_HTTP_RETRIES", 4, 0, 20, &rt, err);
	if (rv == WT_OK)
		rv = env_long("WEIGHTD_HTTP_BACKOFF_MS", 200, 0, 60000, &bo, err);
	if (rv == WT_OK)
		rv = env_long("WEIGHTD_HTTP_PARALLEL", 4, 1, CURLU_MAX_PARALLEL, &par, err);
	if (rv == WT_OK)
		rv = env_long("WEIGHTD_HTTP_SPLIT_BYTES", 8L << 20, CURLU_MIN_PART, 1L << 40,
		              &split, err);
	if (rv == WT_OK)
		rv = env_long("WEIGHTD_HTTP_SETTLE_MS", 1100, 0, 10000, &settle, err);
	if (rv != WT_OK)
		return rv;
	o->connect_timeout_ms = ct;
	o->low_speed_time_s = ls;
	o->max_retries = (int)rt;
	o->backoff_ms = bo;
	o->parallel = (int)par;
	o->split_bytes = (uint64_t)split;
	o->settle_ms = settle;
	const char *ca = getenv("WEIGHTD_HTTP_CA_BUNDLE");
	o->ca_bundle = ca != NULL && ca[0] != '\0' ? ca : NULL;
	return WT_OK;
}

char *curlu_escape(const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	if (n > (SIZE_MAX - 1) / 3)
		return NULL;
	char *o = malloc(3 * n + 1), *p = o;
	if (o == NULL)
		return NULL;
	for (const unsigned char *q = (const unsigned char *)s; *q != '\0'; q++) {
		unsigned char ch = *q;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
		    (keep_slash && ch == '/')) {
			*p++ = (char)ch;
		} else {
			*p++ = '%';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 15];
		}
	}
	*p = '\0';
	return o;
}
