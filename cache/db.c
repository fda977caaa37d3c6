/* db.c — RocksDB plumbing: options per column family, open/close, error translation, keys. */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

static const char *const cf_names[4] = CACHE_CF_NAMES;

int cache_rocks_err(cache *c, char *errstr, const char *what, wt_errbuf *err)
{
	int code = WT_EIO;
	const char *s = errstr != NULL ? errstr : "unknown RocksDB error";
	const char *fix = "check the disk and the directory permissions";
	/* "Corruption" first: its usual text, "block checksum mismatch", holds
	 * "lock"; the lock file's errors name it: "While lock file: DIR/LOCK: ...",
	 * "lock hold by current process" */
	if (strncmp(s, "Corruption", 10) == 0) {
		code = WT_ECORRUPT;
		fix = "the cache files are damaged; delete the cache dir (it is rebuilt)";
	} else if (strstr(s, "/LOCK") != NULL || strstr(s, "lock file") != NULL ||
	           strstr(s, "lock hold") != NULL) {
		code = WT_EBUSY;
		fix = "the cache dir is open elsewhere (another process or handle); stop it or "
		      "use another cache dir";
	} else if (strstr(s, "No space") != NULL) {
		code = WT_ENOSPC;
		fix = "free disk space or lower cache max_bytes";
	} else if (strncmp(s, "Invalid argument", 16) == 0) {
		code = WT_EINVAL;
		fix = "the cache dir holds a different database; use an empty dir";
	} else if (strncmp(s, "Not implemented", 15) == 0) {
		code = WT_EUNSUPPORTED;
		fix = "this RocksDB build lacks the feature";
	}
	wt_seterr(err, code, "cache '%s': %s failed (rocksdb: %.200s); %s",
	          c != NULL && c->dir != NULL ? c->dir : "?", what, s, fix);
	free(errstr);
	return code;
}

uint8_t *cache_key_manifest(const void *id, size_t id_len, size_t *len)
{
	uint8_t *k = malloc(id_len + 1);
	if (k == NULL)
		return NULL;
	k[0] = CACHE_FORMAT;
	memcpy(k + 1, id, id_len);
	*len = id_len + 1;
	return k;
}

uint8_t *cache_key_meta(char tag, const void *id, size_t id_len, size_t *len)
{
	uint8_t *k = malloc(id_len + 1);
	if (k == NULL)
		return NULL;
	k[0] = (uint8_t)tag;
	memcpy(k + 1, id, id_len);
	*len = id_len + 1;
	return k;
}

static rocksdb_options_t *chunk_cf_options(cache *c)
{
	rocksdb_options_t *o = rocksdb_options_create();
	if (o == NULL)
		return NULL;
	rocksdb_options_set_compression(o, rocksdb_no_compression);
	rocksdb_options_set_write_buffer_size(o, 64u << 20);
	rocksdb_options_set_max_write_buffer_number(o, 3);
	if (c->opts.store == CACHE_STORE_BLOB) {
		rocksdb_options_set_enable_blob_files(o, 1);
		rocksdb_options_set_min_blob_size(o, 0);
		rocksdb_options_set_blob_file_size(o, c->opts.blob_file_bytes);
		rocksdb_options_set_blob_compression_type(o, rocksdb_no_compression);
		/* No blob GC: it relocates live blobs in every compaction (perf: half of
		 * all bytes written); a blob file is deleted once all its chunks are.
		 * cache_reclaim switches it on for one compaction when that pays. */
		rocksdb_options_set_enable_blob_gc(o, 0);
		if (c->blob_cache != NULL) {
			rocksdb_options_set_blob_cache(o, c->blob_cache);
			rocksdb_options_set_prepopulate_blob_cache(
			    o, rocksdb_prepopulate_blob_flush_only);
		}
	} else {
		rocksdb_options_set_target_file_size_base(o, 256u << 20);
	}
	rocksdb_options_set_block_based_table_factory(o, c->bbo);
	return o;
}

/* Shards of the RAM tier (log2), so that each holds CACHE_MEM_SHARD_CHUNKS
 * chunks of chunk_bytes at least. RocksDB's default splits the capacity into
 * up to 64 LRU shards by key hash, each with capacity / 64 of it: a value
 * larger than its shard is evicted as soon as it is released, so with 16 MiB
 * chunks a 1 GiB tier held nothing (and with 4 MiB ones at most 3 per shard). */
int cache_mem_shard_bits(uint64_t mem_bytes, uint32_t chunk_bytes)
{
	int bits = 0;
	uint64_t per = (uint64_t)chunk_bytes * CACHE_MEM_SHARD_CHUNKS;
	while (bits < 6 && (mem_bytes >> (bits + 1)) >= per)
		bits++;
	return bits;
}

static rocksdb_cache_t *blob_cache_create(uint64_t mem_bytes, uint32_t chunk_bytes)
{
	rocksdb_lru_cache_options_t *lo = rocksdb_lru_cache_options_create();
	if (lo == NULL)
		return NULL;
	rocksdb_lru_cache_options_set_capacity(lo, (size_t)mem_bytes);
	rocksdb_lru_cache_options_set_num_shard_bits(lo,
	                                             cache_mem_shard_bits(mem_bytes, chunk_bytes));
	rocksdb_cache_t *bc = rocksdb_cache_create_lru_opts(lo);
	rocksdb_lru_cache_options_destroy(lo);
	return bc;
}

static int make_options(cache *c)
{
	c->bbo = rocksdb_block_based_options_create();
	c->dbo = rocksdb_options_create();
	if (c->bbo == NULL || c->dbo == NULL)
		return WT_ENOMEM;
	if (c->opts.store == CACHE_STORE_BLOB && c->opts.mem_bytes > 0 &&
	    (c->blob_cache = blob_cache_create(c->opts.mem_bytes, c->opts.chunk_bytes)) == NULL)
		return WT_ENOMEM;
	rocksdb_block_based_options_set_checksum(c->bbo, 4 /* kXXH3 */);
	rocksdb_block_based_options_set_block_size(c->bbo, 16u << 10);
	if (c->opts.background_low_cpu) {
		/* flushes (HIGH pool) and compactions (LOW pool): nice 19 */
		if ((c->env = rocksdb_create_default_env()) == NULL)
			return WT_ENOMEM;
		rocksdb_env_lower_high_priority_thread_pool_cpu_priority(c->env);
		rocksdb_env_lower_thread_pool_cpu_priority(c->env);
		rocksdb_options_set_env(c->dbo, c->env);
	}
	rocksdb_options_set_create_if_missing(c->dbo, 1);
	rocksdb_options_set_create_missing_column_families(c->dbo, 1);
	rocksdb_options_set_paranoid_checks(c->dbo, 1);
	rocksdb_options_set_allow_mmap_reads(c->dbo, c->opts.mmap_reads ? 1 : 0);
	rocksdb_options_set_max_background_jobs(c->dbo, 2);
	rocksdb_options_set_max_total_wal_size(c->dbo, 256u << 20);
	rocksdb_options_set_keep_log_file_num(c->dbo, 2);
	rocksdb_options_set_info_log_level(c->dbo, 2 /* warn */);
	for (int i = 0; i < 4; i++) {
		if (i == CACHE_CF_CHUNKS) {
			c->cfo[i] = chunk_cf_options(c);
		} else {
			c->cfo[i] = rocksdb_options_create();
			if (c->cfo[i] != NULL) {
				rocksdb_options_set_block_based_table_factory(c->cfo[i], c->bbo);
				rocksdb_options_set_write_buffer_size(c->cfo[i], 4u << 20);
			}
		}
		if (c->cfo[i] == NULL)
			return WT_ENOMEM;
	}
	c->wo_sync = rocksdb_writeoptions_create();
	c->wo = rocksdb_writeoptions_create();
	c->wo_chunk = rocksdb_writeoptions_create();
	c->ro = rocksdb_readoptions_create();
	c->ro_meta = rocksdb_readoptions_create();
	c->fo = rocksdb_flushoptions_create();
	if (!c->wo_sync || !c->wo || !c->wo_chunk || !c->ro || !c->ro_meta || !c->fo)
		return WT_ENOMEM;
	rocksdb_writeoptions_set_sync(c->wo_sync, 1);
	if (!c->opts.chunk_wal)
		rocksdb_writeoptions_disable_WAL(c->wo_chunk, 1);
	rocksdb_readoptions_set_verify_checksums(c->ro, c->opts.rocks_verify ? 1 : 0);
	/* Read misses do not fill the blob cache: freshly produced chunks enter it at
	 * flush (prepopulate), and a scan larger than it would only churn it (bench
	 * _cache, 2 GiB through 1 GiB: get 2.5 GB/s with fills, 4.8 without). */
	rocksdb_readoptions_set_fill_cache(c->ro, 0);
	rocksdb_readoptions_set_verify_checksums(c->ro_meta, 1);
	rocksdb_flushoptions_set_wait(c->fo, 1);
	return WT_OK;
}

int cache_db_open(cache *c, wt_errbuf *err)
{
	if (make_options(c) != WT_OK)
		return wt_seterr(err, WT_ENOMEM, "cache '%s': out of memory creating options",
		                 c->dir);
	char *e = NULL;
	c->db = rocksdb_open_column_families(c->dbo, c->dir, 4, cf_names,
	                                     (const rocksdb_options_t *const *)c->cfo, c->cf, &e);
	if (e != NULL) {
		c->db = NULL;
		memset(c->cf, 0, sizeof(c->cf));
		return cache_rocks_err(c, e, "open", err);
	}
	return WT_OK;
}

void cache_db_close(cache *c)
{
	for (int i = 0; i < 4; i++) {
		if (c->cf[i] != NULL)
			rocksdb_column_family_handle_destroy(c->cf[i]);
		c->cf[i] = NULL;
	}
	if (c->db != NULL)
		rocksdb_close(c->db);
	c->db = NULL;
	for (int i = 0; i < 4; i++) {
		if (c->cfo[i] != NULL)
			rocksdb_options_destroy(c->cfo[i]);
		c->cfo[i] = NULL;
	}
	if (c->dbo != NULL)
		rocksdb_options_destroy(c->dbo);
	if (c->env != NULL)
		rocksdb_env_destroy(c->env); /* the wrapper: the default Env stays */
	c->env = NULL;
	if (c->bbo != NULL)
		rocksdb_block_based_options_destroy(c->bbo);
	if (c->blob_cache != NULL)
		rocksdb_cache_destroy(c->blob_cache);
	c->blob_cache = NULL;
	if (c->wo_sync != NULL)
		rocksdb_writeoptions_destroy(c->wo_sync);
	if (c->wo != NULL)
		rocksdb_writeoptions_destroy(c->wo);
	if (c->wo_chunk != NULL)
		rocksdb_writeoptions_destroy(c->wo_chunk);
	if (c->ro != NULL)
		rocksdb_readoptions_destroy(c->ro);
	if (c->ro_meta != NULL)
		rocksdb_readoptions_destroy(c->ro_meta);
	if (c->fo != NULL)
		rocksdb_flushoptions_destroy(c->fo);
	c->dbo = NULL;
	c->bbo = NULL;
	c->wo_sync = c->wo = c->wo_chunk = NULL;
	c->ro = c->ro_meta = NULL;
	c->fo = NULL;
}
