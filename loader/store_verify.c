/*
 * store_verify.c — reads of a pinned object checked against its block digests.
 *
 * The content digest (revision.c) hashes each block of an object beside the
 * whole: an optional head block (a safetensors file's header: its digest is
 * compared with the header that was parsed), then blocks of store_block_bytes()
 * (1 MiB; larger for objects over 64 GiB, so an object has at most
 * STORE_MAX_BLOCKS of them). Given them (store_pin_set_blocks),
 * a read returns only bytes whose blocks matched, whatever the object's
 * version says: a server that keeps its ETag or Last-Modified over a
 * rewrite, an mtime put back, a write to an unlinked file between a read and
 * its check. The revision then names the bytes production reads, not only
 * the bytes the digest pass read.
 *
 * The blocks a read covers whole are read straight into the caller's buffer
 * and hashed there. A block it covers in part (at most two per read) is read
 * whole into a buffer of its own, checked, copied from, and kept in a small
 * process-wide cache (VCACHE_BYTES) for the neighbouring read, which usually
 * wants the rest of it. Cached blocks are only ever blocks that matched.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/store_int.h"

#define BLOCK_MIN    (1u << 20)
#define VCACHE_SLOTS 16
#define VCACHE_BYTES (16u << 20) /* verified partial blocks kept, all stores */

struct store_blocks {
	uint64_t id; /* cache key: unique for the life of the process */
	uint64_t nbytes;
	uint64_t head; /* > 0: block 0 is [0, head), then blocks of bb from head */
	uint32_t bb;   /* block bytes */
	size_t n;
	wt_hash128 *d;
	_Atomic bool mismatch;
};

static struct vslot {
	uint64_t id; /* 0: empty */
	size_t idx, len;
	uint8_t *buf; /* NULL while filling */
	uint64_t used;
	bool filling; /* one reader is reading and checking it; others wait */
} g_slots[VCACHE_SLOTS];
static pthread_mutex_t g_vlk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_vcv = PTHREAD_COND_INITIALIZER; /* a fill ended */
static uint64_t g_tick, g_bytes; /* under g_vlk; g_bytes counts filling slots too */
static _Atomic uint64_t g_next_id = 1;

uint32_t store_block_bytes(uint64_t nbytes)
{
	uint64_t bb = BLOCK_MIN;
	while (nbytes / bb + (nbytes % bb != 0) > STORE_MAX_BLOCKS && bb < (1ull << 31))
		bb <<= 1;
	return (uint32_t)bb;
}

size_t store_block_count(uint64_t nbytes, uint64_t head, uint32_t block_bytes)
{
	if (head > nbytes)
		return 0;
	uint64_t rest = nbytes - head;
	return (head > 0) + (size_t)(rest / block_bytes + (rest % block_bytes != 0));
}

int store_blocks_new(store_blocks **out, uint64_t nbytes, uint64_t head, uint32_t block_bytes,
                     const wt_hash128 *d, size_t n, wt_errbuf *err)
{
	*out = NULL;
	if (block_bytes == 0 || head > nbytes || n != store_block_count(nbytes, head, block_bytes))
		return wt_seterr(err, WT_EINVAL,
		                 "%zu block digests of %u bytes after a %llu-byte head do not "
		                 "describe an object of %llu bytes",
		                 n, block_bytes, (unsigned long long)head,
		                 (unsigned long long)nbytes);
	store_blocks *b = calloc(1, sizeof(*b));
	if (b != NULL && n > 0 && (b->d = malloc(n * sizeof(*d))) == NULL) {
		free(b);
		b = NULL;
	}
	if (b == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu block digests", n);
	if (n > 0)
		memcpy(b->d, d, n * sizeof(*d));
	b->id = atomic_fetch_add(&g_next_id, 1);
	b->nbytes = nbytes;
	b->head = head;
	b->bb = block_bytes;
	b->n = n;
	*out = b;
	return WT_OK;
}

void store_blocks_free(store_blocks *b)
{
	if (b == NULL)
		return;
	uint8_t *drop[VCACHE_SLOTS];
	int nd = 0;
	pthread_mutex_lock(&g_vlk);
	for (int i = 0; i < VCACHE_SLOTS; i++)
		if (g_slots[i].id == b->id) {
			drop[nd++] = g_slots[i].buf;
			g_bytes -= g_slots[i].len;
			memset(&g_slots[i], 0, sizeof(g_slots[i]));
		}
	pthread_mutex_unlock(&g_vlk);
	for (int i = 0; i < nd; i++)
		free(drop[i]);
	free(b->d);
	free(b);
}

bool store_blocks_mismatch(const store_blocks *b)
{
	return b != NULL && atomic_load(&((store_blocks *)b)->mismatch);
}

/* Under g_vlk: the slot of block idx of b, or -1. */
static int slot_find(const store_blocks *b, size_t idx)
{
	for (int i = 0; i < VCACHE_SLOTS; i++)
		if (g_slots[i].id == b->id && g_slots[i].idx == idx)
			return i;
	return -1;
}

/* Under g_vlk: a slot marked filling for block idx (len bytes), evicting the
 * least recently used ready blocks (their buffers into drop[*nd]); -1 when
 * every slot is filling or the block is larger than the whole cache. */
static int slot_claim(const store_blocks *b, size_t idx, size_t len, uint8_t **drop, int *nd)
{
	if (len > VCACHE_BYTES)
		return -1;
	for (;;) {
		int empty = -1, victim = -1;
		for (int i = 0; i < VCACHE_SLOTS; i++) {
			if (g_slots[i].id == 0)
				empty = empty < 0 ? i : empty;
			else if (!g_slots[i].filling &&
			         (victim < 0 || g_slots[i].used < g_slots[victim].used))
				victim = i;
		}
		if (empty >= 0 && g_bytes + len <= VCACHE_BYTES) {
			g_slots[empty] = (struct vslot){b->id, idx, len, NULL, ++g_tick, true};
			g_bytes += len;
			return empty;
		}
		if (victim < 0)
			return -1;
		drop[(*nd)++] = g_slots[victim].buf;
		g_bytes -= g_slots[victim].len;
		memset(&g_slots[victim], 0, sizeof(g_slots[victim]));
	}
}

/* Start and end of block k, and the block that holds byte off. */
static uint64_t blk_start(const store_blocks *b, size_t k)
{
	if (b->head == 0)
		return (uint64_t)k * b->bb;
	return k == 0 ? 0 : b->head + ((uint64_t)k - 1) * b->bb;
}

static uint64_t blk_end(const store_blocks *b, size_t k)
{
	uint64_t e = b->head > 0 && k == 0 ? b->head : blk_start(b, k) + b->bb;
	return e < b->nbytes ? e : b->nbytes;
}

static size_t blk_of(const store_blocks *b, uint64_t off)
{
	if (b->head == 0)
		return (size_t)(off / b->bb);
	return off < b->head ? 0 : 1 + (size_t)((off - b->head) / b->bb);
}

static int check_block(store_blocks *b, const char *key, size_t idx, const void *p, size_t len,
                       wt_errbuf *err)
{
	if (common_hash128_eq(common_hash128(p, len), b->d[idx]))
		return WT_OK;
	atomic_store(&b->mismatch, true);
	uint64_t start = blk_start(b, idx);
	return wt_seterr(err, WT_ECHANGED,
	                 "key '%s': bytes [%llu, %llu) (block %zu of %zu) no longer match the "
	                 "content digest taken for the revision: the object was rewritten "
	                 "although its version did not change (a server that keeps its ETag or "
	                 "Last-Modified, or an mtime put back); what was read from it is "
	                 "discarded and its digest is taken again",
	                 key, (unsigned long long)start, (unsigned long long)(start + len), idx,
	                 b->n);
}

/*
 * Bytes [from, from + n) of block idx, which the read covers in part: from
 * the cache, else read whole and checked. Readers that want a block another
 * reader is filling wait for it, so a block that several threads need at
 * once (neighbouring parts of a tensor) is read from the store once.
 */
static int read_part(store_blocks *b, const char *key, size_t idx, size_t from, void *dst, size_t n,
                     store_raw_read_fn raw, void *ctx, wt_errbuf *err)
{
	uint64_t start = blk_start(b, idx);
	size_t len = (size_t)(blk_end(b, idx) - start);
	uint8_t *drop[VCACHE_SLOTS];
	int nd = 0, s;
	pthread_mutex_lock(&g_vlk);
	while ((s = slot_find(b, idx)) >= 0 && g_slots[s].filling)
		pthread_cond_wait(&g_vcv, &g_vlk);
	if (s >= 0) {
		memcpy(dst, g_slots[s].buf + from, n);
		g_slots[s].used = ++g_tick;
		pthread_mutex_unlock(&g_vlk);
		return WT_OK;
	}
	s = slot_claim(b, idx, len, drop, &nd); /* -1: read it without caching */
	pthread_mutex_unlock(&g_vlk);
	for (int i = 0; i < nd; i++)
		free(drop[i]);
	uint8_t *blk = malloc(len);
	int rv = blk != NULL ? raw(ctx, start, blk, len, err)
	                     : wt_seterr(err, WT_ENOMEM,
	                                 "key '%s': out of memory for a %zu-byte block", key, len);
	if (rv == WT_OK)
		rv = check_block(b, key, idx, blk, len, err);
	if (rv == WT_OK)
		memcpy(dst, blk + from, n);
	if (s >= 0) { /* only this reader changes a filling slot */
		pthread_mutex_lock(&g_vlk);
		if (rv == WT_OK) {
			g_slots[s].buf = blk;
			g_slots[s].filling = false;
			blk = NULL;
		} else {
			g_bytes -= len;
			memset(&g_slots[s], 0, sizeof(g_slots[s]));
		}
		pthread_cond_broadcast(&g_vcv);
		pthread_mutex_unlock(&g_vlk);
	}
	free(blk);
	return rv;
}

int store_blocks_read(store_blocks *b, const char *key, uint64_t off, void *buf, size_t len,
                      store_raw_read_fn raw, void *ctx, wt_errbuf *err)
{
	uint64_t end;
	if (!wt_add_u64(off, len, &end) || end > b->nbytes)
		return wt_seterr(
		    err, WT_EIO,
		    "key '%s': read of %zu bytes at %llu is beyond the pinned object's "
		    "%llu bytes",
		    key, len, (unsigned long long)off, (unsigned long long)b->nbytes);
	if (len == 0)
		return WT_OK;
	uint8_t *out = buf;
	size_t i = blk_of(b, off), last = blk_of(b, end - 1);
	int rv = WT_OK;
	while (rv == WT_OK && i <= last) {
		uint64_t bs = blk_start(b, i), be = blk_end(b, i);
		if (bs < off || be > end) { /* covered in part */
			uint64_t from = bs < off ? off : bs, to = be < end ? be : end;
			rv = read_part(b, key, i, (size_t)(from - bs), out + (from - off),
			               (size_t)(to - from), raw, ctx, err);
			i++;
			continue;
		}
		size_t j = i; /* blocks i..j are covered whole: one read, hashed in place */
		while (j < last && blk_end(b, j + 1) <= end)
			j++;
		rv = raw(ctx, bs, out + (bs - off), (size_t)(blk_end(b, j) - bs), err);
		for (size_t k = i; rv == WT_OK && k <= j; k++) {
			uint64_t ks = blk_start(b, k);
			rv = check_block(b, key, k, out + (ks - off), (size_t)(blk_end(b, k) - ks),
			                 err);
		}
		i = j + 1;
	}
	return rv;
}
