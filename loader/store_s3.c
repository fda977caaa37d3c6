/*
 * store_s3.c — the s3:// backend: "s3://bucket/prefix"; key K is the object
 * "prefix/K" in the bucket.
 *
 * Environment (read once, at open):
 *   WEIGHTD_S3_ENDPOINT | AWS_ENDPOINT_URL_S3 | AWS_ENDPOINT_URL
 *       "http(s)://host[:port]" of an S3-compatible service; path-style
 *       addressing (ENDPOINT/bucket/key). Unset: AWS, virtual-hosted
 *       https://bucket.s3.REGION.amazonaws.com/key (path-style when the bucket
 *       name has a '.', which would break the TLS wildcard).
 *   AWS_REGION | AWS_DEFAULT_REGION   default us-east-1
 *   WEIGHTD_S3_MAX_KEYS               ListObjectsV2 page size, 1..1000 (1000)
 *   WEIGHTD_HTTP_CA_BUNDLE | AWS_CA_BUNDLE   PEM file of CAs for https endpoints
 *   AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY [+ AWS_SESSION_TOKEN]
 *       requests are signed by libcurl (CURLOPT_AWS_SIGV4 "aws:amz:REGION:s3");
 *       with neither set, requests are anonymous (public buckets).
 *
 *   stat = HEAD (version = ETag), read = ranged GET (curl_util.c),
 *   list = ListObjectsV2 pages (continuation tokens) parsed by s3_xml.c.
 * Any thread may call any function; curl handles come from the curlu pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/curl_int.h"
#include "loader/s3_int.h"
#include "loader/store_int.h"

#define S3_MAX_PAGE_BYTES   (64u * 1024u * 1024u)
#define S3_MAX_LIST_OBJECTS 10000000u
/* A listing ends with WT_ECORRUPT after this many truncated pages in a row
 * that list nothing (a server handing out new tokens forever), or when a
 * continuation token comes back (a cycle). */
#define S3_MAX_EMPTY_PAGES 100

typedef struct s3_store {
	char *obj_base; /* URL prefix of an object key, ends in '/'; immutable */
	char *list_url; /* bucket URL for ListObjectsV2, without a query */
	char *prefix;   /* "" or "dir/sub/" (ends in '/'); immutable */
	char *display;  /* "s3://bucket/prefix" for messages */
	long max_keys;  /* ListObjectsV2 page size, 1..1000 */
	curlu *cu;
} s3_store;

static void s3_close(void *impl)
{
	s3_store *ss = impl;
	if (ss == NULL)
		return;
	curlu_close(ss->cu);
	free(ss->obj_base);
	free(ss->list_url);
	free(ss->prefix);
	free(ss->display);
	free(ss);
}

/* malloc'd concatenation of up to 4 strings (NULLs skipped); NULL on ENOMEM. */
static char *cat4(const char *a, const char *b, const char *c, const char *d)
{
	const char *v[4] = {a, b, c, d};
	size_t n = 1;
	for (int i = 0; i < 4; i++)
		n += v[i] ? strlen(v[i]) : 0;
	char *o = malloc(n), *p = o;
	if (o == NULL)
		return NULL;
	for (int i = 0; i < 4; i++)
		if (v[i] != NULL) {
			size_t k = strlen(v[i]);
			memcpy(p, v[i], k);
			p += k;
		}
	*p = '\0';
	return o;
}

static char *key_url(const s3_store *ss, const char *key)
{
	char *full = cat4(ss->prefix, key, NULL, NULL);
	char *ek = full ? curlu_escape(full, true) : NULL;
	char *u = ek ? cat4(ss->obj_base, ek, NULL, NULL) : NULL;
	free(full);
	free(ek);
	return u;
}

static char *url_of(const void *st, const char *key)
{
	return key_url(st, key);
}

static int s3_stat(void *impl, const char *key, store_obj *out, wt_errbuf *err)
{
	return curlu_stat_key(((s3_store *)impl)->cu, url_of, impl, key, out, err);
}

static int s3_read(void *impl, const char *key, const char *version, uint64_t off, void *buf,
                   size_t len, size_t *got, wt_errbuf *err)
{
	return curlu_read_key(((s3_store *)impl)->cu, url_of, impl, key, version, off, buf, len,
	                      got, err);
}

/* Move the page's objects under the root into l, keys made relative. */
static int take_page(s3_store *ss, s3_page *pg, const char *url, store_list *l, size_t *cap,
                     wt_errbuf *err)
{
	size_t plen = strlen(ss->prefix);
	for (size_t i = 0; i < pg->n; i++) {
		store_obj *o = &pg->objs[i];
		if (strncmp(o->key, ss->prefix, plen) != 0)
			return wt_seterr(err, WT_ECORRUPT,
			                 "ListObjectsV2 reply from %s: key '%s' is outside the "
			                 "prefix '%s' asked for",
			                 url, o->key, ss->prefix);
		/* folder markers ("dir/") and keys the store could never read are skipped */
		if (store_check_key(o->key + plen, false, NULL) != WT_OK)
			continue;
		if (l->n == S3_MAX_LIST_OBJECTS)
			return wt_seterr(err, WT_ETOOBIG, "%s: more than %u objects; list a prefix",
			                 ss->display, S3_MAX_LIST_OBJECTS);
		if (l->n == *cap) {
			size_t ncap = *cap ? 2 * *cap : 64;
			store_obj *no = realloc(l->objs, ncap * sizeof(*no));
			if (no == NULL)
				return wt_seterr(err, WT_ENOMEM, "out of memory listing %s",
				                 ss->display);
			l->objs = no;
			*cap = ncap;
		}
		char *rel = strdup(o->key + plen);
		if (rel == NULL)
			return wt_seterr(err, WT_ENOMEM, "out of memory listing %s", ss->display);
		l->objs[l->n] = (store_obj){rel, o->nbytes, o->version};
		o->version = NULL;
		l->n++;
	}
	return WT_OK;
}

/* The ListObjectsV2 URL; query parameters in the sorted order SigV4 signs. */
static char *list_url(const s3_store *ss, const char *prefix, const char *token)
{
	char *full = cat4(ss->prefix, prefix, NULL, NULL);
	char *ep = full ? curlu_escape(full, false) : NULL;
	char *et = token ? curlu_escape(token, false) : NULL;
	char *u = NULL;
	if (ep != NULL && (token == NULL || et != NULL)) {
		char mid[64];
		snprintf(mid, sizeof(mid), "%slist-type=2&max-keys=%ld&prefix=", et ? "&" : "",
		         ss->max_keys);
		char *q = cat4(et ? "?continuation-token=" : "?", et ? et : "", mid, ep);
		u = q ? cat4(ss->list_url, q, NULL, NULL) : NULL;
		free(q);
	}
	free(full);
	free(ep);
	free(et);
	return u;
}

/* Has token been handed out before in this listing? Else remember it. */
static int token_seen(wt_hash128 **seen, size_t *n, size_t *cap, const char *token, bool *dup)
{
	wt_hash128 h = common_hash128(token, strlen(token));
	*dup = false;
	for (size_t i = 0; i < *n && !*dup; i++)
		*dup = memcmp(&(*seen)[i], &h, sizeof(h)) == 0;
	if (*dup)
		return WT_OK;
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		wt_hash128 *v = realloc(*seen, nc * sizeof(*v));
		if (v == NULL)
			return WT_ENOMEM;
		*seen = v;
		*cap = nc;
	}
	(*seen)[(*n)++] = h;
	return WT_OK;
}

static int s3_list(void *impl, const char *prefix, store_list *out, wt_errbuf *err)
{
	s3_store *ss = impl;
	size_t cap = 0, n_seen = 0, cap_seen = 0, empty = 0;
	wt_hash128 *seen = NULL; /* hashes of the tokens handed out so far */
	char *token = NULL;
	int rv = WT_OK;
	do {
		char *url = list_url(ss, prefix, token);
		char *body = NULL;
		size_t len = 0;
		s3_page pg = {0};
		if (url == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "out of memory listing %s", ss->display);
		if (rv == WT_OK)
			rv = curlu_get(ss->cu, url, ss->display, S3_MAX_PAGE_BYTES, &body, &len,
			               err);
		if (rv == WT_OK)
			rv = s3_parse_list(body, len, url, &pg, err);
		size_t before = out->n;
		if (rv == WT_OK)
			rv = take_page(ss, &pg, url, out, &cap, err);
		bool dup = false;
		if (rv == WT_OK && pg.truncated &&
		    token_seen(&seen, &n_seen, &cap_seen, pg.next_token, &dup) != WT_OK)
			rv = wt_seterr(err, WT_ENOMEM, "out of memory listing %s", ss->display);
		empty = out->n == before ? empty + 1 : 0;
		if (rv == WT_OK && pg.truncated && dup)
			rv = wt_seterr(err, WT_ECORRUPT,
			               "ListObjectsV2 reply from %s repeats its continuation token "
			               "(one it gave before); the listing would never end",
			               url);
		else if (rv == WT_OK && pg.truncated && empty >= S3_MAX_EMPTY_PAGES)
			rv = wt_seterr(err, WT_ECORRUPT,
			               "ListObjectsV2 replies from %s: %d truncated pages in a row "
			               "listed nothing; the listing would never end (check the "
			               "endpoint: it is not behaving as S3 does)",
			               url, S3_MAX_EMPTY_PAGES);
		free(token);
		token = NULL;
		if (rv == WT_OK && pg.truncated) {
			token = pg.next_token;
			pg.next_token = NULL;
		}
		s3_page_clear(&pg);
		free(body);
		free(url);
	} while (rv == WT_OK && token != NULL);
	free(token);
	free(seen);
	return rv;
}

static void s3_set_cancel(void *impl, const _Atomic bool *cancel)
{
	curlu_set_cancel(((s3_store *)impl)->cu, cancel);
}

static const store_ops s3_ops = {
    .list = s3_list,
    .stat = s3_stat,
    .read = s3_read,
    .close = s3_close,
    .read_hint = STORE_REMOTE_READ_HINT,
    .set_cancel = s3_set_cancel,
};

static const char *env_first(const char *a, const char *b, const char *c)
{
	const char *names[3] = {a, b, c};
	for (int i = 0; i < 3; i++) {
		const char *v = names[i] ? getenv(names[i]) : NULL;
		if (v != NULL && v[0] != '\0')
			return v;
	}
	return NULL;
}

static bool bucket_ok(const char *b, size_t n)
{
	if (n < 3 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = b[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		      ch == '-'))
			return false;
	}
	return true;
}

/* Set the URLs from bucket + environment. */
static int set_urls(s3_store *ss, const char *bucket, const char *region, wt_errbuf *err)
{
	const char *ep =
	    env_first("WEIGHTD_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
	char *host = NULL;
	if (ep != NULL) {
		if (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0)
			return wt_seterr(
			    err, WT_EINVAL,
			    "S3 endpoint '%s' (WEIGHTD_S3_ENDPOINT / AWS_ENDPOINT_URL): "
			    "want http://host[:port] or https://host[:port]",
			    ep);
		size_t n = strlen(ep);
		while (n > 0 && ep[n - 1] == '/')
			n--;
		host = strndup(ep, n);
		ss->list_url = host ? cat4(host, "/", bucket, NULL) : NULL;
	} else if (strchr(bucket, '.') != NULL) {
		host = cat4("https://s3.", region, ".amazonaws.com", NULL);
		ss->list_url = host ? cat4(host, "/", bucket, NULL) : NULL;
	} else {
		host = cat4("https://", bucket, ".s3.", region);
		ss->list_url = host ? cat4(host, ".amazonaws.com/", NULL, NULL) : NULL;
		free(host);
		host = NULL;
		ss->obj_base = ss->list_url ? strdup(ss->list_url) : NULL;
	}
	if (host != NULL && ss->list_url != NULL)
		ss->obj_base = cat4(ss->list_url, "/", NULL, NULL);
	free(host);
	if (ss->list_url == NULL || ss->obj_base == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory opening %s", ss->display);
	return WT_OK;
}

/* Credentials and the client. */
static int open_client(s3_store *ss, const char *region, wt_errbuf *err)
{
	const char *id = getenv("AWS_ACCESS_KEY_ID");
	const char *secret = getenv("AWS_SECRET_ACCESS_KEY");
	const char *token = getenv("AWS_SESSION_TOKEN");
	bool have_id = id != NULL && id[0] != '\0', have_secret = secret != NULL && secret[0];
	if (have_id != have_secret)
		return wt_seterr(err, WT_EINVAL,
		                 "%s: %s is set but %s is not; set both (or neither, for a public "
		                 "bucket)",
		                 ss->display,
		                 have_id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
		                 have_id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	if (have_id && strchr(id, ':') != NULL)
		return wt_seterr(err, WT_EINVAL, "%s: AWS_ACCESS_KEY_ID contains ':'", ss->display);
	curlu_opts o;
	int rv = curlu_opts_from_env(&o, err);
	if (rv != WT_OK)
		return rv;
	const char *ca = getenv("AWS_CA_BUNDLE");
	if (o.ca_bundle == NULL && ca != NULL && ca[0] != '\0')
		o.ca_bundle = ca;
	char *sigv4 = cat4("aws:amz:", region, ":s3", NULL);
	char *userpwd = have_id ? cat4(id, ":", secret, NULL) : NULL;
	if (sigv4 == NULL || (have_id && userpwd == NULL))
		rv = wt_seterr(err, WT_ENOMEM, "out of memory opening %s", ss->display);
	o.sigv4 = have_id ? sigv4 : NULL;
	o.userpwd = userpwd;
	o.session_token = have_id && token != NULL && token[0] ? token : NULL;
	o.etag_is_content = true; /* S3 ETags are MD5s of the bytes (or of the parts') */
	o.perm_hint = "check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, "
	              "AWS_REGION and the bucket policy";
	if (rv == WT_OK)
		rv = curlu_open(&ss->cu, &o, err);
	if (userpwd != NULL) {
		volatile char *p = userpwd;
		while (*p != '\0')
			*p++ = '\0';
	}
	free(userpwd);
	free(sigv4);
	return rv;
}

int store_s3_open(const char *rest, const store_ops **ops, void **impl, wt_errbuf *err)
{
	const char *slash = strchr(rest, '/');
	size_t blen = slash ? (size_t)(slash - rest) : strlen(rest);
	if (!bucket_ok(rest, blen))
		return wt_seterr(err, WT_EINVAL,
		                 "s3://%s: bucket '%.*s' is not a valid S3 bucket name (3-63 of "
		                 "a-z 0-9 . -); use s3://bucket/prefix",
		                 rest, (int)blen, rest);
	const char *p = slash ? slash + 1 : "";
	size_t plen = strlen(p);
	while (plen > 0 && p[plen - 1] == '/')
		plen--;
	s3_store *ss = calloc(1, sizeof(*ss));
	char *bucket = strndup(rest, blen);
	if (ss == NULL || bucket == NULL) {
		free(ss);
		free(bucket);
		return wt_seterr(err, WT_ENOMEM, "out of memory opening s3://%s", rest);
	}
	int rv = WT_OK;
	ss->display = cat4("s3://", rest, NULL, NULL);
	ss->prefix = calloc(1, plen + 2); /* "dir/sub" + '/' */
	if (ss->display == NULL || ss->prefix == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "out of memory opening s3://%s", rest);
	if (rv == WT_OK && plen > 0) {
		memcpy(ss->prefix, p, plen);
		rv = store_check_key(ss->prefix, false, err);
		if (rv != WT_OK)
			wt_errprefix(err, "s3://%s: prefix", rest);
		ss->prefix[plen] = '/';
	}
	const char *region = env_first("AWS_REGION", "AWS_DEFAULT_REGION", NULL);
	if (region == NULL)
		region = "us-east-1";
	if (rv == WT_OK && strpbrk(region, ":/@ ") != NULL)
		rv = wt_seterr(err, WT_EINVAL, "AWS_REGION '%s' is not a region name", region);
	const char *mk = getenv("WEIGHTD_S3_MAX_KEYS");
	char *end = NULL;
	ss->max_keys = mk && mk[0] ? strtol(mk, &end, 10) : 1000;
	if (rv == WT_OK && (ss->max_keys < 1 || ss->max_keys > 1000 || (end && *end)))
		rv = wt_seterr(err, WT_EINVAL, "WEIGHTD_S3_MAX_KEYS='%s': want 1..1000", mk);
	if (rv == WT_OK)
		rv = set_urls(ss, bucket, region, err);
	if (rv == WT_OK)
		rv = open_client(ss, region, err);
	free(bucket);
	if (rv != WT_OK) {
		s3_close(ss);
		return rv;
	}
	*ops = &s3_ops;
	*impl = ss;
	return WT_OK;
}
