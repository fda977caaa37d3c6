/*
 * revision.c — content digests of source objects and the revision digest.
 *
 * An object's content digest is the XXH3-128 of all its bytes, read through
 * a pin (so the bytes hashed are the bytes production will read) and checked
 * against the pin afterwards (an in-place write while hashing is
 * WT_ECHANGED). A ckpt_memo remembers digests by (store URI, key, size,
 * version): the file:// version includes ctime and the inode, so a rewrite
 * never finds the old entry.
 *
 * Revision digest (README "Revision digest"): lowercase hex SHA-256 of
 *   "weightd-revision-2" NUL, then for each object in byte order of keys:
 *   key NUL size(decimal) NUL content-digest(32 hex) NUL
 * over config.json, the index (if any) and every safetensors file.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/ckpt_int.h"

#define DIGEST_BLOCK (8u << 20)
#define REV_TAG      "weightd-revision-2"

int ckpt_object_digest(store_pin *p, const char *uri, const ckpt_memo *memo, wt_hash128 *out,
                       wt_errbuf *err)
{
	const store_obj *o = store_pin_obj(p);
	bool memo_ok = memo != NULL && o->version != NULL && o->version[0] != '\0';
	if (memo_ok && memo->get(memo->ctx, uri, o, out))
		return WT_OK;
	size_t blk = o->nbytes < DIGEST_BLOCK ? (size_t)o->nbytes : DIGEST_BLOCK;
	char *buf = malloc(blk ? blk : 1);
	common_hasher *h = common_hasher_new();
	int rv = WT_OK;
	if (buf == NULL || h == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "key '%s': out of memory for its digest", o->key);
	for (uint64_t off = 0; rv == WT_OK && off < o->nbytes; off += blk) {
		size_t n = o->nbytes - off < blk ? (size_t)(o->nbytes - off) : blk;
		rv = store_pin_read(p, off, buf, n, err);
		if (rv == WT_OK)
			common_hasher_update(h, buf, n);
	}
	if (rv == WT_OK)
		rv = store_pin_check(p, err);
	if (rv == WT_OK) {
		*out = common_hasher_digest(h);
		if (memo_ok)
			memo->put(memo->ctx, uri, o, *out);
	}
	common_hasher_free(h);
	free(buf);
	return rv;
}

static int rev_cmp(const void *a, const void *b)
{
	return strcmp(((const ckpt_rev_obj *)a)->key, ((const ckpt_rev_obj *)b)->key);
}

int ckpt_revision_compute(ckpt_rev_obj *objs, size_t n, char out[65], wt_errbuf *err)
{
	qsort(objs, n, sizeof(*objs), rev_cmp);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (md == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for SHA-256");
	int ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	ok = ok && EVP_DigestUpdate(md, REV_TAG, sizeof(REV_TAG));
	for (size_t i = 0; i < n; i++) {
		char size[24], hex[WT_HASH_HEX_LEN + 1];
		int k = snprintf(size, sizeof(size), "%llu", (unsigned long long)objs[i].nbytes);
		common_hash128_hex(objs[i].digest, hex);
		ok = ok && EVP_DigestUpdate(md, objs[i].key, strlen(objs[i].key) + 1);
		ok = ok && EVP_DigestUpdate(md, size, (size_t)k + 1);
		ok = ok && EVP_DigestUpdate(md, hex, sizeof(hex));
	}
	unsigned char dig[32];
	unsigned int dlen = 0;
	ok = ok && EVP_DigestFinal_ex(md, dig, &dlen);
	EVP_MD_CTX_free(md);
	if (!ok || dlen != 32)
		return wt_seterr(err, WT_EIO, "SHA-256 of the revision failed (OpenSSL)");
	for (unsigned int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
	return WT_OK;
}
