/*
 * bench_cache.c — cache/ chunk put and get throughput divided by plain sequential
 * file write and read of the same bytes, measured in the same run, same folder.
 *
 *   build/bench/bench_cache [--total-mb N] [--shard-mb N] [--dir PATH] [--matrix]
 *
 * Put: cache_put_chunk of 4 MiB chunks (hashing included), a cache_commit_shard
 * every --shard-mb (flush + synced manifest). Its baseline writes the same bytes
 * to a file in 4 MiB write() calls with an fdatasync every --shard-mb: the same
 * durability point. Get: cache_read_chunk (verified copy into a reused buffer)
 * and cache_chunk_view (verified zero-copy); baseline: read() of the file into a
 * reused 4 MiB buffer, page cache warm. --matrix also runs the alternative
 * storage choices (SST values, chunks through the WAL, RocksDB read checksums).
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/util/benchutil.h"
#include "cache/cache.h"
#include "common/common.h"

#define CHUNK (4u << 20)
#define SRC   (64u << 20)

typedef struct bench {
	uint64_t total;
	uint64_t shard;
	const char *dir;
	uint8_t *src; /* SRC bytes of pseudo-random data */
	uint8_t *buf; /* CHUNK reused */
} bench;

static double now_s(void)
{
	return (double)common_now_ns() / 1e9;
}

/* Chunk i: a window of src, its first 8 bytes replaced by i so every chunk is distinct. */
static const uint8_t *chunk_at(bench *b, uint64_t i)
{
	uint64_t off = (i * 1048573u) % (SRC - CHUNK);
	memcpy(b->buf, b->src + off, CHUNK);
	memcpy(b->buf, &i, sizeof(i));
	return b->buf;
}

static void file_path(const bench *b, char *path, size_t n)
{
	snprintf(path, n, "%s/baseline.bin", b->dir);
}

/* Append chunks [i0, i1) to fd and fdatasync: the file side of one shard. */
static int file_write_shard(bench *b, int fd, uint64_t i0, uint64_t i1)
{
	for (uint64_t i = i0; i < i1; i++) /* chunk_at's memcpy is charged to both sides */
		if (write(fd, chunk_at(b, i), CHUNK) != (ssize_t)CHUNK)
			return -1;
	return fdatasync(fd);
}

/* Sequential read into a reused 4 MiB buffer; best of two passes (page cache warm). */
static double file_read(bench *b)
{
	char path[4096];
	file_path(b, path, sizeof(path));
	double best = -1;
	for (int pass = 0; pass < 2; pass++) {
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		double t0 = now_s();
		while (read(fd, b->buf, CHUNK) > 0)
			;
		double t1 = now_s();
		close(fd);
		double g = (double)b->total / (t1 - t0) / 1e9;
		if (g > best)
			best = g;
	}
	return best;
}

typedef struct result {
	double fw, put, fr, get, view; /* fw, fr: the file baselines measured next to them */
} result;

static int run_cache(bench *b, const cache_opts *o, result *res)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/cache-%d-%d-%d-%d", b->dir, (int)o->store, o->chunk_wal,
	         o->rocks_verify, o->mmap_reads);
	wt_errbuf err;
	cache *c = NULL;
	if (cache_open(&c, path, o, &err) != WT_OK) {
		fprintf(stderr, "bench_cache: %s\n", err.msg);
		return -1;
	}
	uint64_t n = b->total / CHUNK, per = b->shard / CHUNK;
	wt_hash128 *hs = malloc(n * sizeof(*hs));
	cache_writer *w = NULL;
	int rv = WT_OK;
	/* Shard by shard, alternately to the baseline file and to the cache, so both
	 * sides see the same disk (its speed drifts a lot on shared machines). */
	char fpath[4096];
	file_path(b, fpath, sizeof(fpath));
	int fd = open(fpath, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	double t_file = 0, t_cache = 0;
	for (uint64_t i0 = 0; i0 < n && rv == WT_OK && fd >= 0; i0 += per) {
		uint64_t i1 = i0 + per < n ? i0 + per : n;
		double t0 = now_s();
		if (file_write_shard(b, fd, i0, i1) != 0) {
			close(fd);
			fd = -1;
			break;
		}
		double t1 = now_s();
		char id[32];
		snprintf(id, sizeof(id), "shard-%llu", (unsigned long long)(i0 / per));
		rv = cache_begin_shard(c, id, strlen(id), &w, &err);
		for (uint64_t i = i0; i < i1 && rv == WT_OK; i++)
			rv = cache_put_chunk(w, chunk_at(b, i), CHUNK, &hs[i], &err);
		if (rv == WT_OK)
			rv = cache_commit_shard(w, "manifest", 8, &err);
		else
			cache_abort_shard(w);
		w = NULL;
		double t2 = now_s();
		t_file += t1 - t0;
		t_cache += t2 - t1;
	}
	if (fd < 0) {
		free(hs);
		cache_close(c);
		return -1;
	}
	close(fd);
	res->fw = (double)b->total / t_file / 1e9;
	res->put = (double)b->total / t_cache / 1e9;
	res->fr = file_read(b);
	double t0, t1;
	for (int pass = 0; pass < 2 && rv == WT_OK; pass++) { /* best of two, warm */
		t0 = now_s();
		for (uint64_t i = 0; i < n && rv == WT_OK; i++) {
			size_t got;
			rv = cache_read_chunk(c, hs[i], b->buf, CHUNK, &got, &err);
		}
		t1 = now_s();
		double g = (double)b->total / (t1 - t0) / 1e9;
		if (g > res->get)
			res->get = g;
	}
	t0 = now_s();
	for (uint64_t i = 0; i < n && rv == WT_OK; i++) {
		cache_view *v = NULL;
		rv = cache_chunk_view(c, hs[i], &v, &err);
		cache_view_release(v);
	}
	t1 = now_s();
	res->view = (double)b->total / (t1 - t0) / 1e9;
	if (rv != WT_OK)
		fprintf(stderr, "bench_cache: %s\n", err.msg);
	free(hs);
	cache_close(c);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_cache: could not remove %s\n", path);
	return rv == WT_OK ? 0 : -1;
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: bench_cache [--total-mb N] [--shard-mb N] [--dir PATH] [--matrix | --config "
	    "KEY]\n");
}

/* The store configurations measured: the default first (the only one without --matrix). */
typedef struct bcfg {
	const char *key, *name;
	cache_store_kind store;
	bool wal, verify, mmap;
	uint64_t mem;
} bcfg;
static const bcfg cfgs[] = {
    {"blob-mmap", "blob files, mmap reads, chunks without WAL + flush, 1 GiB RAM cache (default)",
     CACHE_STORE_BLOB, false, false, true, CACHE_MEM_BYTES_DEF},
    {"blob-mmap-noram", "blob files, mmap reads, chunks without WAL + flush, no RAM cache",
     CACHE_STORE_BLOB, false, false, true, 0},
    {"sst-mmap", "SST values, mmap reads", CACHE_STORE_SST, false, false, true, 0},
    {"blob", "blob files, pread", CACHE_STORE_BLOB, false, false, false, 0},
    {"blob-verify", "blob files, pread, rocksdb read checksums on", CACHE_STORE_BLOB, false, true,
     false, 0},
    {"blob-wal", "blob files, pread, chunks through the WAL", CACHE_STORE_BLOB, true, false, false,
     0},
    {"sst", "SST values, pread", CACHE_STORE_SST, false, false, false, 0},
    {"sst-verify", "SST values, pread, rocksdb read checksums on", CACHE_STORE_SST, false, true,
     false, 0},
    {"sst-mmap-wal", "SST values, mmap reads, chunks through the WAL", CACHE_STORE_SST, true, false,
     true, 0},
};
#define N_CFGS (sizeof(cfgs) / sizeof(cfgs[0]))

/* The options into b, the configurations to run into [*first, *end): 0, or 2 with the usage
 * printed. */
static int parse_args(int argc, char **argv, bench *b, size_t *first, size_t *end)
{
	bool matrix = false;
	const char *only = NULL;
	static const struct option opts[] = {
	    {"total-mb", required_argument, NULL, 0}, {"shard-mb", required_argument, NULL, 0},
	    {"dir", required_argument, NULL, 0},      {"config", required_argument, NULL, 0},
	    {"matrix", no_argument, NULL, 0},         {NULL, 0, NULL, 0}};
	char msg[256];
	const char *v;
	uint64_t mb;
	optind = 0;
	for (int k; (k = common_opt_next(argc, argv, opts, &v, msg, sizeof(msg))) != -1;) {
		if (k == -2 || ((k == 0 || k == 1) && bench_u64(opts[k].name, v, &mb) != 0)) {
			if (k == -2)
				fprintf(stderr, "bench_cache: %s\n", msg);
			usage();
			return 2;
		}
		if (k == 0)
			b->total = mb << 20;
		else if (k == 1)
			b->shard = mb << 20;
		else if (k == 2)
			b->dir = v;
		else if (k == 3)
			only = v;
		else
			matrix = true;
	}
	if (optind < argc) {
		fprintf(stderr, "bench_cache: unexpected argument '%s'\n", argv[optind]);
		usage();
		return 2;
	}
	b->total = b->total / CHUNK * CHUNK;
	b->shard = b->shard / CHUNK * CHUNK;
	if (b->total == 0 || b->shard == 0) {
		usage();
		return 2;
	}
	*first = 0;
	*end = matrix ? N_CFGS : 1;
	if (only != NULL) {
		for (*first = 0; *first < N_CFGS && strcmp(cfgs[*first].key, only) != 0; ++*first)
			;
		if (*first == N_CFGS) {
			fprintf(stderr, "bench_cache: unknown --config '%s'\n", only);
			return 2;
		}
		*end = *first + 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	bench b = {.total = 2048ull << 20, .shard = 256ull << 20, .dir = NULL};
	size_t first, end;
	if (parse_args(argc, argv, &b, &first, &end) != 0)
		return 2;
	char tmpl[] = "/tmp/wt-bench-cache-XXXXXX";
	char *made = NULL;
	if (b.dir == NULL) {
		made = mkdtemp(tmpl);
		if (made == NULL)
			return 1;
		b.dir = made;
	}
	b.src = malloc(SRC);
	b.buf = malloc(CHUNK);
	if (b.src == NULL || b.buf == NULL)
		return 1;
	uint64_t s = 0x1234;
	for (size_t i = 0; i < SRC / 8; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(b.src + 8 * i, &s, 8);
	}
	printf("bench_cache: %llu MiB in 4 MiB chunks, commit every %llu MiB, dir %s\n",
	       (unsigned long long)(b.total >> 20), (unsigned long long)(b.shard >> 20), b.dir);
	cache_opts o;
	cache_opts_init(&o);
	cache_tune_malloc(o.chunk_bytes);
	o.max_bytes = b.total * 2;
	int rc = 0;
	for (size_t i = first; i < end; i++) {
		o.store = cfgs[i].store;
		o.chunk_wal = cfgs[i].wal;
		o.rocks_verify = cfgs[i].verify;
		o.mmap_reads = cfgs[i].mmap;
		o.mem_bytes = cfgs[i].mem;
		result r = {0};
		if (run_cache(&b, &o, &r) != 0) {
			rc = 1;
			continue;
		}
		if (r.fw <= 0 || r.fr <= 0) {
			perror("bench_cache: baseline file");
			rc = 1;
			continue;
		}
		printf("%s\n  put %.2f GB/s / file write %.2f = %.2f;  get %.2f GB/s / file read "
		       "%.2f = %.2f;  view %.2f GB/s = %.2f\n",
		       cfgs[i].name, r.put, r.fw, r.put / r.fw, r.get, r.fr, r.get / r.fr, r.view,
		       r.view / r.fr);
	}
	char path[4096];
	file_path(&b, path, sizeof(path));
	unlink(path);
	free(b.src);
	free(b.buf);
	if (made != NULL)
		rmdir(made);
	return rc;
}
