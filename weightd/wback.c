/*
 * wback.c — a production's cache writes, behind serving (server_int.h
 * "write-behind"). The producer copies each chunk into a refcounted RAM
 * buffer (hashing as it copies), publishes it to cut-through readers and
 * queues it here; one writer thread per production puts the queued chunks
 * into the cache and commits the ranks, in the order they were queued. The
 * chunk bytes waiting in RAM, over every production, are bounded by
 * cfg->writeback_bytes: the producer waits for room (one buffer always fits).
 * So a cold layout is produced and served at the speed of the source and the
 * CPU, not of the disk, while the cache's durability order is unchanged.
 *
 * Buffers are kept for reuse when released (a pool per size in whole pages,
 * inside the same bound: bytes in use + bytes kept <= cap): fresh
 * memory is zeroed by the kernel as it is first touched, which cost a cold
 * production as much as its own copying (perf: clear_page 25% of the
 * producer's samples). A production needing room drops kept buffers first.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "weightd/server_int.h"

/* Chunk buffers are whole pages, and those of at least a huge page whole
 * huge pages, 2 MiB-aligned, so a kernel with transparent huge pages always
 * on may back them with huge pages. They are not advised MADV_HUGEPAGE: with
 * the usual defrag = madvise, a fault in an advised region compacts memory
 * in the faulting thread when no huge page is free, as when the page cache
 * holds the checkpoint being produced. bench_cold, first cold production of
 * a fresh daemon, 3 runs alternating: producer hash + copy 832-3259 ms and
 * cold fetch 1.41-2.41 s advised, 821-898 ms and 1.20-1.28 s not. Released
 * ones are kept for reuse in pool[k] (class_cap: pages below a huge page,
 * then huge pages), linked through their first bytes. */
#define WB_PAGE    4096u
#define WB_HUGE    (2u << 20)
#define WB_SMALL   ((int)(WB_HUGE / WB_PAGE) - 1) /* classes of 1..511 pages */
#define WB_N_HUGE  128                            /* then 1..128 huge pages (256 MiB) */
#define WB_CLASSES (WB_SMALL + WB_N_HUGE)

struct wd_wbudget {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	uint64_t cap;
	/* fields below guarded by lk */
	uint64_t used, peak;
	uint64_t kept;          /* bytes of the buffers in pool */
	uint64_t fresh, reused; /* buffers allocated, taken from pool */
	uint64_t prefaulted;    /* bytes faulted in by the prefault thread */
	void *pool[WB_CLASSES];
	bool stop; /* the prefault thread stops */
	pthread_t pf;
	bool pf_started;
};

struct wd_wbuf {
	_Atomic uint32_t refs;
	wd_wbudget *budget;
	size_t len;
	size_t cap;    /* bytes allocated (>= len): what the budget counts */
	uint8_t *data; /* owned */
};

/* Bytes a buffer of len bytes takes: whole pages, whole huge pages from
 * WB_HUGE on. */
static size_t buf_cap(size_t len)
{
	if (len <= WB_HUGE - WB_PAGE)
		return len ? (len + WB_PAGE - 1) / WB_PAGE * WB_PAGE : WB_PAGE;
	return (len + WB_HUGE - 1) / WB_HUGE * WB_HUGE;
}

static uint8_t *buf_alloc(size_t cap)
{
	if (cap < WB_HUGE)
		return aligned_alloc(WB_PAGE, cap);
	return aligned_alloc(WB_HUGE, cap);
}

typedef struct wb_item {
	struct wb_item *next;
	uint32_t rank;
	size_t ti, c;
	wd_wbuf *b; /* NULL: commit the rank */
} wb_item;

struct wd_wback {
	wd_server *s;
	wd_wback_fn fn;
	void *ctx;
	pthread_t th;
	pthread_mutex_t lk;
	pthread_cond_t cv;
	_Atomic bool failed; /* the writer's first error is in rv, err */
	/* fields below guarded by lk */
	wb_item *head, *tail;
	bool stop;  /* no more items: the writer leaves once the queue is empty */
	bool abort; /* drop what is queued */
	int rv;
	wt_errbuf err;
};

int wd_wbudget_create(wd_wbudget **out, uint64_t cap)
{
	wd_wbudget *b = calloc(1, sizeof(*b));
	if (b == NULL)
		return WT_ENOMEM;
	pthread_mutex_init(&b->lk, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->cap = cap;
	*out = b;
	return WT_OK;
}

/* The pool class of a buffer of cap bytes (buf_cap), or -1: not kept. */
static int pool_class(size_t cap)
{
	if (cap < WB_HUGE)
		return (int)(cap / WB_PAGE) - 1;
	size_t k = cap / WB_HUGE;
	return k <= WB_N_HUGE ? WB_SMALL + (int)k - 1 : -1;
}

/* Bytes of the buffers of class k (increasing with k). */
static size_t class_cap(int k)
{
	return k < WB_SMALL ? (size_t)(k + 1) * WB_PAGE : (size_t)(k - WB_SMALL + 1) * WB_HUGE;
}

static void *pool_pop(wd_wbudget *g, int k)
{
	void *p = g->pool[k];
	if (p != NULL) {
		memcpy(&g->pool[k], p, sizeof(void *));
		g->kept -= class_cap(k);
	}
	return p;
}

/* Drop kept buffers (smallest first: the largest, chunk-sized with the default
 * chunk_bytes, prefaulted and most reused, stay longest) onto *drop until
 * used + kept fits g->cap or nothing is kept. Locked; the caller frees *drop
 * unlocked. */
static void pool_shrink(wd_wbudget *g, void **drop)
{
	for (int k = 0; k < WB_CLASSES && g->kept > 0 && g->used + g->kept > g->cap;) {
		void *p = pool_pop(g, k);
		if (p == NULL) {
			k++;
			continue;
		}
		memcpy(p, drop, sizeof(void *));
		*drop = p;
	}
}

static void free_list(void *p)
{
	while (p != NULL) {
		void *next;
		memcpy(&next, p, sizeof(void *));
		free(p);
		p = next;
	}
}

void wd_wbudget_destroy(wd_wbudget *b)
{
	if (b == NULL)
		return;
	if (b->pf_started) {
		pthread_mutex_lock(&b->lk);
		b->stop = true;
		pthread_mutex_unlock(&b->lk);
		pthread_join(b->pf, NULL);
	}
	WT_ASSERT(b->used == 0);
	for (int k = 0; k < WB_CLASSES; k++)
		free_list(b->pool[k]);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->lk);
	free(b);
}

void wd_wbudget_get(wd_wbudget *b, wd_wbudget_stats *out)
{
	pthread_mutex_lock(&b->lk);
	*out = (wd_wbudget_stats){.used = b->used,
	                          .peak = b->peak,
	                          .kept = b->kept,
	                          .fresh = b->fresh,
	                          .reused = b->reused,
	                          .prefaulted = b->prefaulted};
	pthread_mutex_unlock(&b->lk);
}

const uint8_t *wd_wbuf_data(const wd_wbuf *b, size_t *len)
{
	*len = b->len;
	return b->data;
}

void wd_wbuf_ref(wd_wbuf *b)
{
	atomic_fetch_add(&b->refs, 1);
}

/* Return cap bytes to the budget; data (may be NULL) is kept for reuse
 * when it fits beside what is in use, else freed. */
static void unreserve(wd_wbudget *g, size_t cap, uint8_t *data)
{
	int k = data != NULL ? pool_class(cap) : -1;
	pthread_mutex_lock(&g->lk);
	g->used -= cap;
	if (k >= 0 && g->used + g->kept + cap <= g->cap) {
		memcpy(data, &g->pool[k], sizeof(void *));
		g->pool[k] = data;
		g->kept += cap;
		data = NULL;
	}
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->lk);
	free(data);
}

void wd_wbuf_unref(wd_wbuf *b)
{
	if (b == NULL || atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	unreserve(b->budget, b->cap, b->data);
	free(b);
}

/* The writer yields the CPU to serving and producing: on Linux a thread has
 * its own nice value (setpriority on its thread id). Best effort. */
#define WB_NICE 10

static void *writer_main(void *arg)
{
	wd_wback *wb = arg;
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), WB_NICE);
	(void)pthread_setname_np(pthread_self(), "wd:writeback");
	pthread_mutex_lock(&wb->lk);
	for (;;) {
		while (wb->head == NULL && !wb->stop)
			pthread_cond_wait(&wb->cv, &wb->lk);
		wb_item *it = wb->head;
		if (it == NULL)
			break; /* stopped and drained */
		wb->head = it->next;
		if (wb->head == NULL)
			wb->tail = NULL;
		bool run = wb->rv == WT_OK && !wb->abort;
		pthread_mutex_unlock(&wb->lk);
		wt_errbuf err;
		int rv = run ? wb->fn(wb->ctx, it->rank, it->ti, it->c, it->b, &err) : WT_OK;
		wd_wbuf_unref(it->b);
		free(it);
		pthread_mutex_lock(&wb->lk);
		if (rv != WT_OK && wb->rv == WT_OK) {
			wb->rv = rv;
			wb->err = err;
			atomic_store(&wb->failed, true);
			/* a producer waiting for room learns of it */
			wd_wbudget *g = wb->s->wbudget;
			pthread_mutex_lock(&g->lk);
			pthread_cond_broadcast(&g->cv);
			pthread_mutex_unlock(&g->lk);
			const wd_faults *f = atomic_load(&wb->s->faults);
			if (f != NULL && f->writer_failed != NULL)
				f->writer_failed(f->ctx);
		}
	}
	pthread_mutex_unlock(&wb->lk);
	return NULL;
}

/* Fault in buffers of the chunk class (cap) into the pool, up to `want`
 * bytes or what fits beside the buffers in use, at nice 19. */
typedef struct pf_arg {
	wd_wbudget *g;
	size_t cap;
	uint64_t want;
} pf_arg;

static void *prefault_main(void *arg)
{
	pf_arg a = *(pf_arg *)arg;
	free(arg);
	wd_wbudget *g = a.g;
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	(void)pthread_setname_np(pthread_self(), "wd:prefault");
	int k = pool_class(a.cap);
	for (;;) {
		pthread_mutex_lock(&g->lk);
		bool go = !g->stop && g->prefaulted + a.cap <= a.want &&
		          g->used + g->kept + a.cap <= g->cap;
		pthread_mutex_unlock(&g->lk);
		uint8_t *p = go ? buf_alloc(a.cap) : NULL;
		if (p == NULL)
			break;
		/* every page faulted in now, not by a producer: one write per page
		 * does it (the kernel zeroes the page), no need to write them all */
		for (size_t off = 0; off < a.cap; off += WB_PAGE)
			p[off] = 0;
		pthread_mutex_lock(&g->lk);
		go = !g->stop && g->used + g->kept + a.cap <= g->cap;
		if (go) {
			memcpy(p, &g->pool[k], sizeof(void *));
			g->pool[k] = p;
			g->kept += a.cap;
			g->prefaulted += a.cap;
		}
		pthread_mutex_unlock(&g->lk);
		if (!go) {
			free(p);
			break;
		}
	}
	return NULL;
}

int wd_wbudget_prefault(wd_wbudget *g, size_t chunk_bytes, uint64_t bytes)
{
	size_t cap = buf_cap(chunk_bytes);
	if (bytes == 0 || pool_class(cap) < 0 || g->pf_started)
		return WT_OK; /* nothing asked, or chunks past the largest class */
	pf_arg *a = malloc(sizeof(*a));
	if (a == NULL)
		return WT_ENOMEM;
	*a = (pf_arg){g, cap, bytes};
	if (pthread_create(&g->pf, NULL, prefault_main, a) != 0) {
		free(a);
		return WT_ENOMEM;
	}
	g->pf_started = true;
	return WT_OK;
}

int wd_wback_start(wd_server *s, wd_wback_fn fn, void *ctx, wd_wback **out, wt_errbuf *err)
{
	*out = NULL;
	wd_wback *wb = calloc(1, sizeof(*wb));
	if (wb == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for the cache writer");
	wb->s = s;
	wb->fn = fn;
	wb->ctx = ctx;
	pthread_mutex_init(&wb->lk, NULL);
	pthread_cond_init(&wb->cv, NULL);
	int e = pthread_create(&wb->th, NULL, writer_main, wb);
	if (e != 0) {
		pthread_cond_destroy(&wb->cv);
		pthread_mutex_destroy(&wb->lk);
		free(wb);
		return wt_seterr(err, WT_ENOMEM, "cannot start the cache writer thread (error %d)",
		                 e);
	}
	*out = wb;
	return WT_OK;
}

/* The writer's error (copied to err), or WT_OK. */
int wd_wback_error(wd_wback *wb, wt_errbuf *err)
{
	if (!atomic_load(&wb->failed))
		return WT_OK;
	pthread_mutex_lock(&wb->lk);
	int rv = wb->rv;
	if (err != NULL)
		*err = wb->err;
	pthread_mutex_unlock(&wb->lk);
	return rv;
}

/* Wait on g (locked) until len more bytes fit, the writer failed or the server
 * cancels productions; true = reserved. One buffer always fits, so a budget
 * below a chunk still makes progress. */
static bool reserve_locked(wd_wback *wb, wd_wbudget *g, size_t len)
{
	for (;;) {
		if (atomic_load(&wb->failed) || atomic_load(&wb->s->cancel))
			return false;
		if (g->used == 0 || g->used + len <= g->cap)
			break;
		/* s->cancel is not signalled: look again */
		struct timespec dl = common_timespec_in(CLOCK_REALTIME, 100);
		pthread_cond_timedwait(&g->cv, &g->lk, &dl);
	}
	g->used += len;
	if (g->used > g->peak)
		g->peak = g->used;
	return true;
}

int wd_wback_alloc(wd_wback *wb, size_t len, wd_wbuf **out, wt_errbuf *err)
{
	*out = NULL;
	wd_wbudget *g = wb->s->wbudget;
	size_t cap = buf_cap(len);
	int k = pool_class(cap);
	uint8_t *data = NULL;
	void *drop = NULL;
	pthread_mutex_lock(&g->lk);
	bool ok = reserve_locked(wb, g, cap);
	/* a kept buffer of this size, else of up to twice it (in use + kept
	 * stays the same: the bigger one moves from kept to in use) */
	for (int j = k; ok && j >= 0 && j < WB_CLASSES && class_cap(j) <= 2 * cap && data == NULL;
	     j++)
		if ((data = pool_pop(g, j)) != NULL && j != k) {
			g->used += class_cap(j) - cap;
			g->peak = g->used > g->peak ? g->used : g->peak;
			cap = class_cap(j);
		}
	if (ok && data == NULL)
		pool_shrink(g, &drop); /* room for a fresh one inside the bound */
	if (ok)
		(*(data != NULL ? &g->reused : &g->fresh))++;
	pthread_mutex_unlock(&g->lk);
	free_list(drop);
	if (!ok) {
		int rv = wd_wback_error(wb, err);
		return rv != WT_OK ? rv
		                   : wt_seterr(err, WT_ECANCELED, "production canceled (shutdown)");
	}
	wd_wbuf *b = malloc(sizeof(*b));
	if (data == NULL && b != NULL)
		data = buf_alloc(cap);
	if (b == NULL || data == NULL) {
		free(b);
		unreserve(g, cap, data);
		return wt_seterr(err, WT_ENOMEM, "out of memory for a %zu-byte chunk", len);
	}
	b->data = data;
	atomic_init(&b->refs, 1);
	b->budget = g;
	b->len = len;
	b->cap = cap;
	*out = b;
	return WT_OK;
}

int wd_wback_push(wd_wback *wb, uint32_t rank, size_t ti, size_t c, wd_wbuf *b, wt_errbuf *err)
{
	wb_item *it = malloc(sizeof(*it));
	if (it == NULL) {
		wd_wbuf_unref(b);
		return wt_seterr(err, WT_ENOMEM, "out of memory queueing a cache write");
	}
	*it = (wb_item){.rank = rank, .ti = ti, .c = c, .b = b};
	pthread_mutex_lock(&wb->lk);
	WT_ASSERT(!wb->stop);
	if (wb->tail != NULL)
		wb->tail->next = it;
	else
		wb->head = it;
	wb->tail = it;
	pthread_cond_signal(&wb->cv);
	pthread_mutex_unlock(&wb->lk);
	return wd_wback_error(wb, err);
}

int wd_wback_finish(wd_wback *wb, bool abort, wt_errbuf *err)
{
	if (wb == NULL)
		return WT_OK;
	pthread_mutex_lock(&wb->lk);
	wb->stop = true;
	wb->abort = wb->abort || abort;
	pthread_cond_signal(&wb->cv);
	pthread_mutex_unlock(&wb->lk);
	pthread_join(wb->th, NULL);
	int rv = wb->rv;
	if (rv != WT_OK && err != NULL)
		*err = wb->err;
	pthread_cond_destroy(&wb->cv);
	pthread_mutex_destroy(&wb->lk);
	free(wb);
	return rv;
}
