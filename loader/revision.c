/*
 * revision.c — content digests of source objects and the revision digest.
 *
 * An object's content digest is the XXH3-128 of all its bytes, read through
 * a pin and checked against the pin afterwards (an in-place write while
 * hashing is WT_ECHANGED). Each block of the object (store_block_bytes) is
 * hashed too and given to the pin, which then returns only bytes that match
 * (store_verify.c): the bytes production reads are the bytes hashed, even
 * when the store keeps a version over a rewrite. A ckpt_memo remembers digests by (store URI, key,
 * size, version): the file:// version includes ctime and the inode, so a rewrite never finds the
 * old entry.
 *
 * A digest that takes longer than ckpt_digest_progress_ns (30 s) logs how far
 * it got (NOTICE), so registering a large remote checkpoint is not silent.
 *
 * ckpt_objects_digest hashes several objects at once (CKPT_DIGEST_THREADS):
 * one object is read in order by one thread (a streaming hash), so the
 * objects of a sharded checkpoint are what runs in parallel; on a remote
 * store each thread's reads are ranged GETs of their own.
 *
 * Revision digest (README "Revision digest"): lowercase hex SHA-256 of
 *   "weightd-revision-2" NUL, then for each object in byte order of keys:
 *   key NUL size(decimal) NUL content-digest(32 hex) NUL
 * over config.json, the index (if any) and every safetensors file.
 */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/ckpt_int.h"

#define DIGEST_BLOCK (8u << 20)
#define HASH_PIECE   (128u << 10)
#define REV_TAG      "weightd-revision-2"

typedef struct dig_run {
	store_pin *const *pins;
	const uint64_t *heads;
	const wt_hash128 *head_digests;
	const char *uri;
	const ckpt_memo *memo;
	ckpt_progress *prog; /* may be NULL */
	wt_hash128 *out;
	int *rv;         /* per object, meaningful in state DIG_FAILED */
	uint8_t *state;  /* per object: dig_state */
	wt_errbuf *errs; /* per object */
	size_t n;
	_Atomic size_t next;
	_Atomic bool stop; /* an object failed: the others stop at their next block */
	/* progress: bytes hashed of total; a NOTICE line every log_ns (0: never) */
	uint64_t total, t0_ns, log_ns;
	_Atomic uint64_t done, next_log_ns, logged;
	pthread_mutex_t log_lk; /* one progress line at a time, in order */
} dig_run;

static _Atomic uint64_t g_log_ns = 30000000000ull; /* ckpt_digest_progress_ns */

void ckpt_digest_progress_ns(uint64_t ns)
{
	atomic_store(&g_log_ns, ns);
}

/* n more bytes hashed; the thread that finds the next log time passed logs. */
static void progress(dig_run *r, uint64_t n)
{
	atomic_fetch_add(&r->done, n);
	if (r->prog != NULL)
		atomic_fetch_add(&r->prog->done, n);
	if (r->log_ns == 0)
		return;
	uint64_t now = common_now_ns(), due = atomic_load(&r->next_log_ns);
	if (now < due || !atomic_compare_exchange_strong(&r->next_log_ns, &due, now + r->log_ns))
		return;
	pthread_mutex_lock(&r->log_lk);
	uint64_t done = atomic_load(&r->done); /* read under the lock: lines never go back */
	double s = (double)(now - r->t0_ns) / 1e9;
	atomic_fetch_add(&r->logged, 1);
	WT_LOG(WT_LOG_NOTICE,
	       "%s: content digest (revision): %.1f%% read, %.2f of %.2f GiB, %.2f GB/s, %.0f s "
	       "so far",
	       r->uri, r->total ? 100.0 * (double)done / (double)r->total : 100.0,
	       (double)done / 1073741824.0, (double)r->total / 1073741824.0,
	       s > 0 ? (double)done / 1e9 / s : 0.0, s);
	pthread_mutex_unlock(&r->log_lk);
}

/* Where the block digests of an object go as it is read in order. */
typedef struct blk_feed {
	common_hasher *h;
	uint64_t nbytes, next_end; /* next_end: end of the block being hashed */
	uint32_t bb;
	size_t idx;
	wt_hash128 *blocks;
} blk_feed;

/* Feed the next n bytes of the object (at off) to the block being hashed,
 * writing each block's digest as it ends. */
static void hash_blocks(blk_feed *f, uint64_t off, const char *p, size_t n)
{
	while (n > 0) {
		size_t k = f->next_end - off < n ? (size_t)(f->next_end - off) : n;
		common_hasher_update(f->h, p, k);
		off += k;
		p += k;
		n -= k;
		if (off == f->next_end) {
			f->blocks[f->idx++] = common_hasher_digest(f->h);
			common_hasher_reset(f->h);
			f->next_end = off + f->bb < f->nbytes ? off + f->bb : f->nbytes;
		}
	}
}

/* Read object p whole: its XXH3-128 into *out and each block's into blocks
 * (a head block of head bytes if head > 0, then blocks of bb). */
static int read_digest(dig_run *r, store_pin *p, uint64_t head, uint32_t bb, wt_hash128 *blocks,
                       wt_hash128 *out, bool *stopped, wt_errbuf *err)
{
	const store_obj *o = store_pin_obj(p);
	size_t blk = o->nbytes < DIGEST_BLOCK ? (size_t)o->nbytes : DIGEST_BLOCK;
	char *buf = malloc(blk ? blk : 1);
	common_hasher *h = common_hasher_new();
	uint64_t first = head > 0 ? head : bb;
	blk_feed bf = {.h = common_hasher_new(),
	               .nbytes = o->nbytes,
	               .next_end = first < o->nbytes ? first : o->nbytes,
	               .bb = bb,
	               .blocks = blocks};
	int rv = WT_OK;
	if (buf == NULL || h == NULL || bf.h == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "key '%s': out of memory for its digest", o->key);
	for (uint64_t off = 0; rv == WT_OK && off < o->nbytes; off += blk) {
		if (r->prog != NULL && atomic_load(&r->prog->cancel)) {
			rv = wt_seterr(err, WT_ECANCELED,
			               "key '%s': content digest canceled after %llu of %llu bytes",
			               o->key, (unsigned long long)off,
			               (unsigned long long)o->nbytes);
			break;
		}
		if (atomic_load(&r->stop)) {
			*stopped = true;
			rv = wt_seterr(err, WT_ECANCELED, "key '%s': digest stopped", o->key);
			break;
		}
		size_t n = o->nbytes - off < blk ? (size_t)(o->nbytes - off) : blk;
		rv = store_pin_read(p, off, buf, n, err);
		/* both hashes piece by piece, the second while the piece is in L2 */
		for (size_t k = 0; rv == WT_OK && k < n; k += HASH_PIECE) {
			size_t m = n - k < HASH_PIECE ? n - k : HASH_PIECE;
			common_hasher_update(h, buf + k, m);
			hash_blocks(&bf, off + k, buf + k, m);
		}
		if (rv == WT_OK)
			progress(r, n);
	}
	if (rv == WT_OK)
		rv = store_pin_check(p, err);
	if (rv == WT_OK)
		*out = common_hasher_digest(h);
	common_hasher_free(h);
	common_hasher_free(bf.h);
	free(buf);
	return rv;
}

/* XXH3-128 of every byte of object i, and of each of its blocks: the memo
 * first, then a full read through its pin and a store_pin_check; the memo
 * learns what was computed. The pin gets both (store_pin_set_digest, _blocks),
 * so every later read through it is checked. Stops at its next block once
 * r->stop is set: WT_ECANCELED and *stopped = true (a store's own
 * WT_ECANCELED leaves *stopped false). A canceled open (r->prog->cancel)
 * fails for itself: WT_ECANCELED, *stopped false. */
static int object_digest(dig_run *r, size_t i, bool *stopped)
{
	store_pin *p = r->pins[i];
	const ckpt_memo *memo = r->memo;
	wt_hash128 *out = &r->out[i];
	wt_errbuf *err = &r->errs[i];
	*stopped = false;
	const store_obj *o = store_pin_obj(p);
	uint64_t head = r->heads[i];
	uint32_t bb = store_block_bytes(o->nbytes);
	size_t nb = store_block_count(o->nbytes, head, bb);
	wt_hash128 *blocks = calloc(nb ? nb : 1, sizeof(*blocks));
	if (blocks == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory for %zu block digests",
		                 o->key, nb);
	bool memo_ok = memo != NULL && o->version != NULL && o->version[0] != '\0';
	bool known = memo_ok && memo->get(memo->ctx, r->uri, o, out, head, bb, blocks, nb);
	bool head_ok = nb > 0 && common_hash128_eq(blocks[0], r->head_digests[i]);
	if (known && !head_ok) {
		/* the header parsed is not the one remembered under this version: the
		 * object was rewritten by a store that kept the version; hash it again */
		if (memo->forget != NULL)
			memo->forget(memo->ctx, r->uri, o);
		known = false;
	}
	int rv = WT_OK;
	if (known) {
		if (r->prog != NULL) /* known: counts as read, so done reaches total */
			atomic_fetch_add(&r->prog->done, o->nbytes);
	} else if ((rv = read_digest(r, p, head, bb, blocks, out, stopped, err)) == WT_OK) {
		if (nb == 0 || !common_hash128_eq(blocks[0], r->head_digests[i]))
			rv = wt_seterr(err, WT_ECHANGED,
			               "key '%s': its header changed while the model was opened "
			               "(its version did not); open it again",
			               o->key);
		else if (memo_ok)
			memo->put(memo->ctx, r->uri, o, *out, head, bb, blocks, nb);
	}
	if (rv == WT_OK) {
		store_pin_set_digest(p, *out); /* what an unsure store_pin_check compares */
		rv = store_pin_set_blocks(p, head, bb, blocks, nb, err);
	}
	free(blocks);
	return rv;
}

/* What became of an object. Kept apart from its wt_err code: codes are
 * positive, and a store may itself answer WT_ECANCELED. */
typedef enum { DIG_TODO = 0, DIG_OK, DIG_FAILED, DIG_STOPPED } dig_state;

static void *dig_main(void *arg)
{
	dig_run *r = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&r->next, 1);
		if (i >= r->n || atomic_load(&r->stop))
			break;
		bool stopped;
		r->rv[i] = object_digest(r, i, &stopped);
		r->state[i] = r->rv[i] == WT_OK ? DIG_OK : stopped ? DIG_STOPPED : DIG_FAILED;
		if (r->state[i] == DIG_FAILED)
			atomic_store(&r->stop, true);
	}
	return NULL;
}

int ckpt_objects_digest(const ckpt_digest_in *in, wt_hash128 *out, wt_errbuf *err)
{
	store_pin *const *pins = in->pins;
	size_t n = in->n;
	const char *uri = in->uri;
	ckpt_progress *prog = in->prog;
	dig_run r = {.pins = pins,
	             .heads = in->heads,
	             .head_digests = in->head_digests,
	             .uri = uri,
	             .memo = in->memo,
	             .prog = prog,
	             .out = out,
	             .n = n};
	for (size_t i = 0; i < n; i++)
		r.total += store_pin_obj(pins[i])->nbytes;
	if (prog != NULL)
		atomic_store(&prog->total, r.total);
	r.t0_ns = common_now_ns();
	r.log_ns = atomic_load(&g_log_ns);
	atomic_store(&r.next_log_ns, r.t0_ns + r.log_ns);
	r.rv = malloc((n ? n : 1) * sizeof(*r.rv));
	r.errs = malloc((n ? n : 1) * sizeof(*r.errs));
	r.state = calloc(n ? n : 1, sizeof(*r.state)); /* DIG_TODO */
	if (r.rv == NULL || r.errs == NULL || r.state == NULL) {
		free(r.rv);
		free(r.errs);
		free(r.state);
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu object digests", n);
	}
	pthread_mutex_init(&r.log_lk, NULL);
	pthread_t th[CKPT_DIGEST_THREADS];
	unsigned started = 0;
	/* the caller is one of the threads; one that cannot start leaves its share */
	while (started + 1 < CKPT_DIGEST_THREADS && started + 1 < n &&
	       pthread_create(&th[started], NULL, dig_main, &r) == 0)
		started++;
	dig_main(&r);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	/* the first object that failed for itself (not stopped by another) */
	int rv = WT_OK;
	for (size_t i = 0; i < n && rv == WT_OK; i++)
		if (r.state[i] == DIG_FAILED) {
			rv = r.rv[i];
			if (err != NULL)
				*err = r.errs[i];
		}
	/* every object has its digest, or one failed: never a digest left unset */
	for (size_t i = 0; i < n && rv == WT_OK; i++)
		if (r.state[i] != DIG_OK)
			rv = wt_seterr(err, WT_EIO, "key '%s': its digest was not computed",
			               store_pin_obj(pins[i])->key);
	if (atomic_load(&r.logged) > 0) { /* it was long enough to report on */
		double s = (double)(common_now_ns() - r.t0_ns) / 1e9;
		uint64_t done = atomic_load(&r.done);
		WT_LOG(WT_LOG_NOTICE,
		       "%s: content digest (revision) %s: %.2f GiB read in %.1f s, %.2f GB/s", uri,
		       rv == WT_OK ? "done" : "failed", (double)done / 1073741824.0, s,
		       s > 0 ? (double)done / 1e9 / s : 0.0);
	}
	pthread_mutex_destroy(&r.log_lk);
	free(r.rv);
	free(r.errs);
	free(r.state);
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
