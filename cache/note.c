/*
 * note.c — small named values kept beside the shards (meta column family,
 * keys 's' + name). weightd remembers the content digests of source objects
 * here, so a restart or a revalidation does not read a checkpoint again.
 * Notes are not shards: eviction, verify and reclaim leave them alone.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

#define NOTE_PREFIX 's'

static int note_key(const void *name, size_t name_len, char **out, size_t *len, wt_errbuf *err)
{
	if (name == NULL || name_len == 0 || name_len > CACHE_NOTE_NAME_MAX)
		return wt_seterr(err, WT_EINVAL, "cache note name of %zu bytes (1..%u allowed)",
		                 name_len, CACHE_NOTE_NAME_MAX);
	char *k = malloc(name_len + 1);
	if (k == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	k[0] = NOTE_PREFIX;
	memcpy(k + 1, name, name_len);
	*out = k;
	*len = name_len + 1;
	return WT_OK;
}

/* Put val under name, or delete name when val is NULL. */
static int note_write(cache *c, const void *name, size_t name_len, const void *val, size_t val_len,
                      wt_errbuf *err)
{
	char *k;
	size_t klen;
	int rv = note_key(name, name_len, &k, &klen, err);
	if (rv != WT_OK)
		return rv;
	char *e = NULL;
	if (val != NULL)
		rocksdb_put_cf(c->db, c->wo, c->cf[CACHE_CF_META], k, klen, val, val_len, &e);
	else
		rocksdb_delete_cf(c->db, c->wo, c->cf[CACHE_CF_META], k, klen, &e);
	free(k);
	return e != NULL ? cache_rocks_err(c, e, val ? "write a note" : "delete a note", err)
	                 : WT_OK;
}

int cache_note_put(cache *c, const void *name, size_t name_len, const void *val, size_t val_len,
                   wt_errbuf *err)
{
	if (val == NULL || val_len == 0 || val_len > CACHE_NOTE_VALUE_MAX)
		return wt_seterr(err, WT_EINVAL, "cache note value of %zu bytes (1..%u allowed)",
		                 val_len, CACHE_NOTE_VALUE_MAX);
	return note_write(c, name, name_len, val, val_len, err);
}

int cache_note_delete(cache *c, const void *name, size_t name_len, wt_errbuf *err)
{
	return note_write(c, name, name_len, NULL, 0, err);
}

int cache_note_get(cache *c, const void *name, size_t name_len, void *val, size_t cap,
                   size_t *val_len, wt_errbuf *err)
{
	*val_len = 0;
	char *k;
	size_t klen;
	int rv = note_key(name, name_len, &k, &klen, err);
	if (rv != WT_OK)
		return rv;
	char *e = NULL;
	size_t vlen = 0;
	char *v = rocksdb_get_cf(c->db, c->ro_meta, c->cf[CACHE_CF_META], k, klen, &vlen, &e);
	free(k);
	if (e != NULL)
		return cache_rocks_err(c, e, "read a note", err);
	if (v == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "no such cache note");
	if (vlen > cap) {
		rocksdb_free(v);
		return wt_seterr(err, WT_ETOOBIG, "cache note of %zu bytes > buffer of %zu", vlen,
		                 cap);
	}
	memcpy(val, v, vlen);
	rocksdb_free(v);
	*val_len = vlen;
	return WT_OK;
}
