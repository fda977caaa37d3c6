/*
 * store.c — the generic object-store layer: URI dispatch, key checks,
 * exact-length reads, whole-object reads, listing order and byte counting.
 * Backends (store_file.c, store_http.c, store_s3.c) implement store_ops in store_int.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/store_int.h"

#define PIN_RECHECK_BLOCK (8u << 20) /* reads of an unsure pin's digest check */

typedef int (*store_open_fn)(const char *rest, const store_ops **ops, void **impl, wt_errbuf *err);

/* One line per URI scheme. */
static const struct {
	const char *scheme; /* including "://" */
	store_open_fn open;
} schemes[] = {
    {"file://", store_file_open},
    {"http://", store_http_open},
    {"https://", store_https_open},
    {"s3://", store_s3_open},
};

int store_check_key(const char *key, bool allow_empty, wt_errbuf *err)
{
	if (key == NULL)
		return wt_seterr(err, WT_EINVAL, "object key is NULL");
	if (key[0] == '\0')
		return allow_empty ? WT_OK
		                   : wt_seterr(err, WT_EINVAL, "object key is empty; name a file");
	if (key[0] == '/')
		return wt_seterr(err, WT_EPERM,
		                 "key '%s': absolute paths are refused; keys are relative to the "
		                 "store root",
		                 key);
	const char *p = key;
	while (*p != '\0') {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return wt_seterr(err, WT_EPERM,
			                 "key '%s': '..' would escape the store root; refused",
			                 key);
		if (n == 0 || (n == 1 && p[0] == '.'))
			return wt_seterr(
			    err, WT_EINVAL,
			    "key '%s': empty or '.' path component; use a normalized key", key);
		if (slash == NULL)
			break;
		p = slash + 1;
		if (*p == '\0' && !allow_empty)
			return wt_seterr(err, WT_EINVAL, "key '%s': ends in '/'; name a file", key);
	}
	return WT_OK;
}

int store_open(store **out, const char *uri, wt_errbuf *err)
{
	*out = NULL;
	if (uri == NULL || uri[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "store URI is empty; give file:///dir or a path");
	store *s = calloc(1, sizeof(*s));
	if (s == NULL || (s->uri = strdup(uri)) == NULL) {
		free(s);
		return wt_seterr(err, WT_ENOMEM, "out of memory opening store '%s'", uri);
	}
	atomic_init(&s->bytes_read, 0);
	int rv = WT_EUNSUPPORTED;
	const char *sep = strstr(uri, "://");
	if (sep == NULL) {
		rv = store_file_open(uri, &s->ops, &s->impl, err);
	} else {
		size_t i;
		for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
			size_t n = strlen(schemes[i].scheme);
			if (strncmp(uri, schemes[i].scheme, n) == 0) {
				rv = schemes[i].open(uri + n, &s->ops, &s->impl, err);
				break;
			}
		}
		if (i == sizeof(schemes) / sizeof(schemes[0]))
			rv = wt_seterr(err, WT_EUNSUPPORTED,
			               "store '%s': URI scheme '%.*s' not supported; use file://, "
			               "s3://, http://, https:// or a path",
			               uri, (int)(sep - uri), uri);
	}
	if (rv != WT_OK) {
		store_close(s);
		return rv;
	}
	*out = s;
	return WT_OK;
}

void store_close(store *s)
{
	if (s == NULL)
		return;
	if (s->ops != NULL)
		s->ops->close(s->impl);
	free(s->uri);
	free(s);
}

const char *store_uri(const store *s)
{
	return s->uri;
}

size_t store_read_hint(const store *s)
{
	return s->ops->read_hint;
}

int store_limit_redirects(store *s, char *const *hosts, size_t n, wt_errbuf *err)
{
	return s->ops->limit_redirects != NULL ? s->ops->limit_redirects(s->impl, hosts, n, err)
	                                       : WT_OK;
}

int store_local_root(const store *s, char **out, wt_errbuf *err)
{
	*out = NULL;
	return s->ops->local_root != NULL ? s->ops->local_root(s->impl, out, err) : WT_OK;
}

void store_set_cancel(store *s, const _Atomic bool *cancel)
{
	if (s->ops->set_cancel != NULL)
		s->ops->set_cancel(s->impl, cancel);
}

static int obj_cmp(const void *a, const void *b)
{
	return strcmp(((const store_obj *)a)->key, ((const store_obj *)b)->key);
}

int store_list_objects(store *s, const char *prefix, store_list *out, wt_errbuf *err)
{
	memset(out, 0, sizeof(*out));
	if (prefix == NULL)
		prefix = "";
	int rv = store_check_key(prefix, true, err);
	if (rv != WT_OK)
		return rv;
	store_list l = {0};
	if ((rv = s->ops->list(s->impl, prefix, &l, err)) != WT_OK) {
		store_list_free(&l);
		return rv;
	}
	size_t plen = strlen(prefix), k = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (strncmp(l.objs[i].key, prefix, plen) == 0)
			l.objs[k++] = l.objs[i];
		else
			store_obj_clear(&l.objs[i]);
	}
	l.n = k;
	if (l.n > 1)
		qsort(l.objs, l.n, sizeof(*l.objs), obj_cmp);
	*out = l;
	return WT_OK;
}

void store_list_free(store_list *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		store_obj_clear(&l->objs[i]);
	free(l->objs);
	l->objs = NULL;
	l->n = 0;
}

int store_stat(store *s, const char *key, store_obj *out, wt_errbuf *err)
{
	memset(out, 0, sizeof(*out));
	int rv = store_check_key(key, false, err);
	if (rv != WT_OK)
		return rv;
	store_obj o = {0};
	if ((rv = s->ops->stat(s->impl, key, &o, err)) != WT_OK) {
		store_obj_clear(&o);
		return rv;
	}
	*out = o;
	return WT_OK;
}

void store_obj_clear(store_obj *o)
{
	if (o == NULL)
		return;
	free(o->key);
	free(o->version);
	memset(o, 0, sizeof(*o));
}

/* Count got bytes; a read that came back short is WT_EIO naming the key. */
static int count_read(store *s, const char *key, uint64_t off, size_t len, size_t got,
                      wt_errbuf *err)
{
	atomic_fetch_add(&s->bytes_read, (uint64_t)got);
	if (got != len)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': short read: %zu of %zu bytes at offset %llu (object "
		                 "shorter than expected; changed while reading?)",
		                 key, got, len, (unsigned long long)off);
	return WT_OK;
}

int store_read(store *s, const char *key, uint64_t off, void *buf, size_t len, wt_errbuf *err)
{
	int rv = store_check_key(key, false, err);
	if (rv != WT_OK)
		return rv;
	uint64_t end;
	if (!wt_add_u64(off, len, &end) || end > (uint64_t)INT64_MAX)
		return wt_seterr(err, WT_EOVERFLOW, "key '%s': read of %zu bytes at %llu overflows",
		                 key, len, (unsigned long long)off);
	if (len == 0)
		return WT_OK;
	size_t got = 0;
	if ((rv = s->ops->read(s->impl, key, NULL, off, buf, len, &got, err)) != WT_OK)
		return rv;
	if ((rv = count_read(s, key, off, len, got, err)) == WT_OK)
		atomic_fetch_add(&s->bytes_asked, (uint64_t)len);
	return rv;
}

int store_read_all(store *s, const char *key, uint64_t max_bytes, char **out, size_t *len,
                   wt_errbuf *err)
{
	*out = NULL;
	*len = 0;
	store_pin *p = NULL;
	int rv = store_pin_open(s, key, &p, err);
	if (rv == WT_OK)
		rv = store_pin_read_all(p, max_bytes, out, len, err);
	store_pin_close(p);
	return rv;
}

/* ---------------- pins ---------------- */

struct store_pin {
	store *s;
	void *h;       /* the backend's handle (file://), or NULL: pinned by version */
	store_obj obj; /* at pin time */
	pthread_mutex_t lk;
	/* guarded by lk */
	bool have_digest;
	wt_hash128 digest;            /* of the bytes at pin time (store_pin_set_digest) */
	char *settled;                /* an unsure version whose bytes matched the digest */
	store_blocks *blocks;         /* set once (store_pin_set_blocks); reads check them */
	_Atomic bool rewrite_counted; /* in s->rewrites (store_rewrites_found) */
};

int store_pin_open(store *s, const char *key, store_pin **out, wt_errbuf *err)
{
	*out = NULL;
	int rv = store_check_key(key, false, err);
	if (rv != WT_OK)
		return rv;
	store_pin *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	pthread_mutex_init(&p->lk, NULL);
	p->s = s;
	if (s->ops->pin != NULL)
		rv = s->ops->pin(s->impl, key, &p->h, &p->obj, err);
	else
		rv = s->ops->stat(s->impl, key, &p->obj, err);
	if (rv != WT_OK) {
		store_pin_close(p);
		return rv;
	}
	*out = p;
	return WT_OK;
}

void store_pin_close(store_pin *p)
{
	if (p == NULL)
		return;
	if (p->h != NULL)
		p->s->ops->unpin(p->h);
	store_obj_clear(&p->obj);
	store_blocks_free(p->blocks);
	free(p->settled);
	pthread_mutex_destroy(&p->lk);
	free(p);
}

void store_pin_set_digest(store_pin *p, wt_hash128 digest)
{
	pthread_mutex_lock(&p->lk);
	p->digest = digest;
	p->have_digest = true;
	pthread_mutex_unlock(&p->lk);
}

int store_pin_set_blocks(store_pin *p, uint64_t head, uint32_t block_bytes,
                         const wt_hash128 *blocks, size_t n, wt_errbuf *err)
{
	store_blocks *b = NULL;
	int rv = store_blocks_new(&b, p->obj.nbytes, head, block_bytes, blocks, n, err);
	if (rv != WT_OK)
		return wt_errprefix(err, "key '%s'", p->obj.key);
	pthread_mutex_lock(&p->lk);
	bool first = p->blocks == NULL;
	if (first)
		p->blocks = b;
	pthread_mutex_unlock(&p->lk);
	if (first)
		return WT_OK;
	store_blocks_free(b);
	return wt_seterr(err, WT_EINVAL, "key '%s': its block digests were given already",
	                 p->obj.key);
}

bool store_pin_content_changed(const store_pin *p)
{
	pthread_mutex_lock(&((store_pin *)p)->lk);
	bool changed = store_blocks_mismatch(p->blocks);
	pthread_mutex_unlock(&((store_pin *)p)->lk);
	return changed;
}

static int pin_read_raw(store_pin *p, uint64_t off, void *buf, size_t len, wt_errbuf *err);

/* Do the pinned bytes still hash to the digest? (an unsure version) */
static int pin_recheck(store_pin *p, const char *now, wt_errbuf *err)
{
	const char *key = p->obj.key;
	pthread_mutex_lock(&p->lk);
	bool have = p->have_digest, settled = p->settled && strcmp(p->settled, now) == 0;
	wt_hash128 want = p->digest;
	pthread_mutex_unlock(&p->lk);
	if (settled)
		return WT_OK;
	if (!have)
		return wt_seterr(err, WT_ECHANGED,
		                 "key '%s' was replaced or removed, and its version moved from "
		                 "'%s' to '%s' with no digest to tell whether it was written "
		                 "first; what was read from it is discarded",
		                 key, p->obj.version, now);
	size_t blk = p->obj.nbytes < PIN_RECHECK_BLOCK ? (size_t)p->obj.nbytes : PIN_RECHECK_BLOCK;
	char *buf = malloc(blk ? blk : 1);
	common_hasher *h = common_hasher_new();
	int rv = buf && h ? WT_OK : wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	for (uint64_t off = 0; rv == WT_OK && off < p->obj.nbytes; off += blk) {
		size_t n = p->obj.nbytes - off < blk ? (size_t)(p->obj.nbytes - off) : blk;
		rv = pin_read_raw(p, off, buf, n, err);
		if (rv == WT_OK)
			common_hasher_update(h, buf, n);
	}
	if (rv == WT_OK) {
		wt_hash128 got = common_hasher_digest(h);
		if (memcmp(&got, &want, sizeof(got)) != 0)
			rv = wt_seterr(err, WT_ECHANGED,
			               "key '%s' was written in place (same size, mtime put back) "
			               "and then replaced or removed while it was read: its bytes "
			               "no longer match their digest; what was read from it is "
			               "discarded",
			               key);
	}
	common_hasher_free(h);
	free(buf);
	if (rv == WT_OK) {
		char *v = strdup(now);
		pthread_mutex_lock(&p->lk);
		if (v != NULL) { /* checked once per version (else again next time) */
			free(p->settled);
			p->settled = v;
			v = NULL;
		}
		pthread_mutex_unlock(&p->lk);
		free(v);
	}
	return rv;
}

const store_obj *store_pin_obj(const store_pin *p)
{
	return &p->obj;
}

static int pin_read_raw(store_pin *p, uint64_t off, void *buf, size_t len, wt_errbuf *err)
{
	const char *key = p->obj.key;
	uint64_t end;
	if (!wt_add_u64(off, len, &end) || end > (uint64_t)INT64_MAX)
		return wt_seterr(err, WT_EOVERFLOW, "key '%s': read of %zu bytes at %llu overflows",
		                 key, len, (unsigned long long)off);
	if (len == 0)
		return WT_OK;
	size_t got = 0;
	int rv = p->h != NULL
	             ? p->s->ops->pin_read(p->h, key, off, buf, len, &got, err)
	             : p->s->ops->read(p->s->impl, key, p->obj.version, off, buf, len, &got, err);
	if (rv != WT_OK)
		return rv;
	return count_read(p->s, key, off, len, got, err);
}

static int pin_read_thunk(void *p, uint64_t off, void *buf, size_t len, wt_errbuf *err)
{
	return pin_read_raw(p, off, buf, len, err);
}

/*
 * A pin with block digests returns only bytes that match them, whatever its
 * version says (store_verify.c). A pin held by a handle (file://) is also
 * checked after each read, for a clearer error: a same-size
 * write that puts the mtime back, then a write back and a rename over the
 * name (A-B-A), leaves bytes that match the digest by the next
 * store_pin_check, although this read returned others. Checked here, the
 * write is seen while it is there (the linked file's ctime moved, or an
 * unlinked file's bytes no longer match). A remote pin's reads are checked
 * against its version by the backend, reply by reply.
 */
int store_pin_read(store_pin *p, uint64_t off, void *buf, size_t len, wt_errbuf *err)
{
	pthread_mutex_lock(&p->lk);
	store_blocks *b = p->blocks; /* set once: stays until the pin closes */
	pthread_mutex_unlock(&p->lk);
	int rv = b != NULL ? store_blocks_read(b, p->obj.key, off, buf, len, pin_read_thunk, p, err)
	                   : pin_read_raw(p, off, buf, len, err);
	if (rv == WT_OK && len > 0 && p->h != NULL)
		rv = store_pin_check(p, err);
	if (rv == WT_OK)
		atomic_fetch_add(&p->s->bytes_asked, (uint64_t)len);
	else if (rv == WT_ECHANGED && store_blocks_mismatch(b) &&
	         !atomic_exchange(&p->rewrite_counted, true))
		atomic_fetch_add(&p->s->rewrites, 1);
	return rv;
}

int store_pin_check(store_pin *p, wt_errbuf *err)
{
	const char *key = p->obj.key;
	store_obj now = {0};
	bool unsure = false;
	int rv = p->h != NULL ? p->s->ops->pin_stat(p->h, key, &now, &unsure, err)
	                      : p->s->ops->stat(p->s->impl, key, &now, err);
	pthread_mutex_lock(&p->lk);
	bool blocks = p->blocks != NULL;
	pthread_mutex_unlock(&p->lk);
	/* with block digests every byte returned was checked: nothing to settle */
	if (rv == WT_OK && unsure && now.nbytes == p->obj.nbytes && now.version != NULL)
		rv = blocks ? WT_OK : pin_recheck(p, now.version, err);
	else if (rv == WT_OK && (now.nbytes != p->obj.nbytes || now.version == NULL ||
	                         strcmp(now.version, p->obj.version) != 0))
		rv = wt_seterr(err, WT_ECHANGED,
		               "key '%s' changed while it was read (size %llu -> %llu, version "
		               "'%s' -> '%s'); what was read from it is discarded",
		               key, (unsigned long long)p->obj.nbytes,
		               (unsigned long long)now.nbytes, p->obj.version,
		               now.version ? now.version : "");
	else if (rv == WT_ENOTFOUND)
		rv = wt_seterr(err, WT_ECHANGED,
		               "key '%s' was removed while it was read; what was read from it is "
		               "discarded",
		               key);
	store_obj_clear(&now);
	return rv;
}

int store_pin_read_all(store_pin *p, uint64_t max_bytes, char **out, size_t *len, wt_errbuf *err)
{
	*out = NULL;
	*len = 0;
	uint64_t n = p->obj.nbytes;
	if (n > max_bytes || n >= SIZE_MAX)
		return wt_seterr(err, WT_ETOOBIG, "key '%s': %llu bytes > limit of %llu bytes",
		                 p->obj.key, (unsigned long long)n, (unsigned long long)max_bytes);
	char *buf = malloc((size_t)n + 1);
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory for %llu bytes",
		                 p->obj.key, (unsigned long long)n);
	int rv = store_pin_read(p, 0, buf, (size_t)n, err);
	if (rv == WT_OK)
		rv = store_pin_check(p, err);
	if (rv != WT_OK) {
		free(buf);
		return rv;
	}
	buf[n] = '\0';
	*out = buf;
	*len = (size_t)n;
	return WT_OK;
}

uint64_t store_bytes_read(const store *s)
{
	return atomic_load(&((store *)s)->bytes_read);
}

uint64_t store_bytes_asked(const store *s)
{
	return atomic_load(&((store *)s)->bytes_asked);
}

uint64_t store_rewrites_found(const store *s)
{
	return atomic_load(&((store *)s)->rewrites);
}
