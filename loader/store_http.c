/*
 * store_http.c — the http:// and https:// backends: a folder on a web server
 * as a read-only object store. "http://host[:port]/prefix": key K is the URL
 * http://host:port/prefix/K (percent-encoded).
 *
 *   stat  = HEAD: Content-Length, version = ETag, else Last-Modified, else ""
 *   read  = GET with Range; only an exact 206 is accepted (curl_util.c)
 *   list  = HTTP cannot list a folder, so the listing is DERIVED from the
 *           Hugging Face model folder at the root: config.json,
 *           generation_config.json, model.safetensors, or
 *           model.safetensors.index.json plus every shard its weight_map names
 *           (each HEAD'ed; absent ones are left out). ckpt_open itself needs
 *           no listing. A root that holds none of those is WT_ENOTFOUND.
 *
 * Credentials never go in the URI (they would reach logs and messages): a
 * "user:password@" part is refused; use ~/.netrc, which libcurl reads.
 * Any thread may call any function; curl handles come from the curlu pool.
 */
#include "loader/curl_dl.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/curl_int.h"
#include "loader/store_int.h"

#define KEY_CONFIG "config.json"
#define KEY_GENCFG "generation_config.json"
#define KEY_SINGLE "model.safetensors"
#define KEY_INDEX  "model.safetensors.index.json"

typedef struct http_store {
	char *base; /* "scheme://authority/prefix/", always ends in '/'; immutable */
	curlu *cu;
	char **hosts; /* store_limit_redirects: where redirects may lead; owned */
	size_t n_hosts;
	bool limited;
} http_store;

static void http_close(void *impl)
{
	http_store *hs = impl;
	if (hs == NULL)
		return;
	curlu_close(hs->cu);
	for (size_t i = 0; i < hs->n_hosts; i++)
		free(hs->hosts[i]);
	free(hs->hosts);
	free(hs->base);
	free(hs);
}

/* base + escaped key; caller frees. NULL on ENOMEM. */
static char *key_url(const http_store *hs, const char *key)
{
	char *ek = curlu_escape(key, true);
	if (ek == NULL)
		return NULL;
	size_t n = strlen(hs->base) + strlen(ek) + 1;
	char *u = malloc(n);
	if (u != NULL)
		snprintf(u, n, "%s%s", hs->base, ek);
	free(ek);
	return u;
}

static char *url_of(const void *st, const char *key)
{
	return key_url(st, key);
}

static int http_stat(void *impl, const char *key, store_obj *out, wt_errbuf *err)
{
	return curlu_stat_key(((http_store *)impl)->cu, url_of, impl, key, out, err);
}

static int http_read(void *impl, const char *key, const char *version, uint64_t off, void *buf,
                     size_t len, size_t *got, wt_errbuf *err)
{
	return curlu_read_key(((http_store *)impl)->cu, url_of, impl, key, version, off, buf, len,
	                      got, err);
}

/* Append key to l if it exists (HEAD); a missing object is skipped. */
static int add_if_present(http_store *hs, const char *key, store_list *l, size_t *cap,
                          wt_errbuf *err)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->objs[i].key, key) == 0)
			return WT_OK;
	if (store_check_key(key, false, NULL) != WT_OK)
		return WT_OK; /* the generic layer would refuse it anyway */
	if (l->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 8;
		store_obj *no = realloc(l->objs, ncap * sizeof(*no));
		if (no == NULL)
			return wt_seterr(err, WT_ENOMEM, "out of memory listing '%s'", hs->base);
		l->objs = no;
		*cap = ncap;
	}
	store_obj o = {0};
	int rv = http_stat(hs, key, &o, err);
	if (rv == WT_ENOTFOUND) {
		store_obj_clear(&o);
		return WT_OK;
	}
	if (rv != WT_OK) {
		store_obj_clear(&o);
		return rv;
	}
	l->objs[l->n++] = o;
	return WT_OK;
}

/* Add every file named by the index's weight_map. */
static int add_shards(http_store *hs, store_list *l, size_t *cap, wt_errbuf *err)
{
	char *url = key_url(hs, KEY_INDEX), *text = NULL;
	size_t len = 0;
	if (url == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	int rv = curlu_get(hs->cu, url, KEY_INDEX, CKPT_MAX_JSON_BYTES, &text, &len, err);
	free(url);
	if (rv != WT_OK)
		return rv;
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je);
	free(text);
	json_t *wm = json_object_get(root, "weight_map");
	if (root == NULL || !json_is_object(wm)) {
		json_decref(root);
		return wt_seterr(err, WT_ECORRUPT,
		                 "%s" KEY_INDEX ": not JSON with a \"weight_map\" object; cannot "
		                 "derive the listing",
		                 hs->base);
	}
	const char *name;
	json_t *v;
	json_object_foreach(wm, name, v)
	{
		if (rv == WT_OK && json_is_string(v))
			rv = add_if_present(hs, json_string_value(v), l, cap, err);
	}
	json_decref(root);
	return rv;
}

static int http_list(void *impl, const char *prefix, store_list *out, wt_errbuf *err)
{
	http_store *hs = impl;
	(void)prefix; /* the generic layer filters */
	size_t cap = 0;
	static const char *const fixed[] = {KEY_CONFIG, KEY_GENCFG, KEY_SINGLE, KEY_INDEX};
	int rv = WT_OK;
	for (size_t i = 0; rv == WT_OK && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		rv = add_if_present(hs, fixed[i], out, &cap, err);
	bool have_index = false, have_model = false;
	for (size_t i = 0; i < out->n; i++) {
		have_index |= strcmp(out->objs[i].key, KEY_INDEX) == 0;
		have_model |= strcmp(out->objs[i].key, KEY_CONFIG) == 0 ||
		              strcmp(out->objs[i].key, KEY_SINGLE) == 0;
	}
	if (rv == WT_OK && have_index)
		rv = add_shards(hs, out, &cap, err);
	if (rv == WT_OK && !have_index && !have_model)
		rv = wt_seterr(err, WT_ENOTFOUND,
		               "%s: HTTP cannot list folders, and no " KEY_CONFIG ", " KEY_SINGLE
		               " or " KEY_INDEX " is there to derive a listing from; point the "
		               "URI at a Hugging Face model folder",
		               hs->base);
	return rv;
}

static void http_set_cancel(void *impl, const _Atomic bool *cancel)
{
	curlu_set_cancel(((http_store *)impl)->cu, cancel);
}

/* curlu_redirect_fn of a limited store: url's scheme http(s), no user name,
 * its host and port (the scheme's default when absent) in hs->hosts. */
static int redirect_ok(void *ctx, const char *url, wt_errbuf *err)
{
	const http_store *hs = ctx;
	CURLU *u = wt_curl.url();
	char *scheme = NULL, *user = NULL, *host = NULL, *port = NULL;
	if (u == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory checking a redirect");
	int rv = WT_OK;
	if (wt_curl.url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    wt_curl.url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    wt_curl.url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    wt_curl.url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
		rv = wt_seterr(err, WT_EPERM, "redirected to %.300s, not an http(s) URL here", url);
	else if (wt_curl.url_get(u, CURLUPART_USER, &user, 0) != CURLUE_NO_USER)
		rv = wt_seterr(err, WT_EPERM,
		               "redirected to %.300s, a URL with a user name: not followed "
		               "(credentials come from ~/.netrc)",
		               url);
	else if (!store_host_listed(hs->hosts, hs->n_hosts, host, strlen(host), port, strlen(port)))
		rv = wt_seterr(err, WT_EPERM,
		               "redirected to %.300s, whose host %.100s port %.10s is not in this "
		               "model's register_hosts (a registered model's redirects stay on "
		               "those hosts); add HOST[:PORT] to register_hosts in the daemon's "
		               "configuration if it is trusted",
		               url, host, port);
	wt_curl.free(scheme);
	wt_curl.free(user);
	wt_curl.free(host);
	wt_curl.free(port);
	wt_curl.url_cleanup(u);
	return rv;
}

static int http_limit_redirects(void *impl, char *const *hosts, size_t n, wt_errbuf *err)
{
	http_store *hs = impl;
	if (hs->limited)
		return wt_seterr(err, WT_EINVAL, "%s: redirects are limited already", hs->base);
	hs->limited = true; /* limited from here on: a list cut short allows fewer */
	curlu_set_redirect_check(hs->cu, redirect_ok, hs);
	if ((hs->hosts = calloc(n ? n : 1, sizeof(*hs->hosts))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory limiting %s's redirects", hs->base);
	for (; hs->n_hosts < n; hs->n_hosts++)
		if ((hs->hosts[hs->n_hosts] = strdup(hosts[hs->n_hosts])) == NULL)
			return wt_seterr(err, WT_ENOMEM, "out of memory limiting %s's redirects",
			                 hs->base);
	return WT_OK;
}

static const store_ops http_ops = {
    .list = http_list,
    .stat = http_stat,
    .read = http_read,
    .close = http_close,
    .read_hint = STORE_REMOTE_READ_HINT,
    .set_cancel = http_set_cancel,
    .limit_redirects = http_limit_redirects,
};

static int open_scheme(const char *scheme, const char *rest, const store_ops **ops, void **impl,
                       wt_errbuf *err)
{
	const char *slash = strchr(rest, '/');
	size_t alen = slash ? (size_t)(slash - rest) : strlen(rest);
	if (alen == 0)
		return wt_seterr(err, WT_EINVAL, "%s://%s: no host; use %s://host[:port]/prefix",
		                 scheme, rest, scheme);
	if (memchr(rest, '@', alen) != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "%s:// URI with 'user:password@': credentials in a URI end up in "
		                 "logs; put them in ~/.netrc instead",
		                 scheme);
	if (strpbrk(rest, "?# ") != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "%s://%s: a query, fragment or space is not allowed in a store "
		                 "URI; give host[:port]/prefix",
		                 scheme, rest);
	const char *prefix = slash ? slash + 1 : "";
	while (*prefix == '/')
		prefix++;
	size_t plen = strlen(prefix);
	while (plen > 0 && prefix[plen - 1] == '/')
		plen--;
	http_store *hs = calloc(1, sizeof(*hs));
	size_t n = strlen(scheme) + 3 + alen + 1 + plen + 2;
	if (hs == NULL || (hs->base = malloc(n)) == NULL) {
		free(hs);
		return wt_seterr(err, WT_ENOMEM, "out of memory opening %s://%s", scheme, rest);
	}
	snprintf(hs->base, n, "%s://%.*s/%.*s%s", scheme, (int)alen, rest, (int)plen, prefix,
	         plen ? "/" : "");
	curlu_opts o;
	int rv = curlu_opts_from_env(&o, err);
	o.follow_redirects = true;
	o.https_only = strcmp(scheme, "https") == 0;
	o.netrc = true;
	o.perm_hint = "check the server's access rules (credentials come from ~/.netrc)";
	if (rv == WT_OK)
		rv = curlu_open(&hs->cu, &o, err);
	if (rv != WT_OK) {
		http_close(hs);
		return rv;
	}
	*ops = &http_ops;
	*impl = hs;
	return WT_OK;
}

int store_http_open(const char *rest, const store_ops **ops, void **impl, wt_errbuf *err)
{
	return open_scheme("http", rest, ops, impl, err);
}

int store_https_open(const char *rest, const store_ops **ops, void **impl, wt_errbuf *err)
{
	return open_scheme("https", rest, ops, impl, err);
}
