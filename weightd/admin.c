/*
 * admin.c — AdminRequest ops for storage teams: STATS (cache + source reads +
 * productions + peer fills), EVICT (a model's shards of every layout, or
 * all; a name no longer served: its leftover shards; one with a layout is
 * refused; shards a reader has open stay, counted in AdminReply.bad),
 * VERIFY (re-hash the whole cache). WARM goes through manifest.c (it may
 * wait for a production), REGISTER/UNREGISTER through regreq.c. RECLAIM
 * gives back the disk space of blob files kept alive by a few live chunks
 * (cache_reclaim).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "weightd/server_int.h"

typedef struct id_list {
	uint8_t (*ids)[WD_SHARD_ID_BYTES];
	size_t n, cap;
	bool oom;
} id_list;

static void collect(void *ctx, const cache_shard_info *info)
{
	id_list *l = ctx;
	if (info->id_len != WD_SHARD_ID_BYTES)
		return; /* not one of ours */
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		void *v = realloc(l->ids, nc * WD_SHARD_ID_BYTES);
		if (v == NULL) {
			l->oom = true;
			return;
		}
		l->ids = v;
		l->cap = nc;
	}
	memcpy(l->ids[l->n++], info->id, WD_SHARD_ID_BYTES);
}

/* Does shard id belong to model (by its stored manifest's model name)? Not by
 * revision: two names served from the same bytes (a copied folder, a second
 * registration) share it, and their shards are each name's own. */
static bool shard_of(wd_server *s, const uint8_t *id, const char *model)
{
	cache_shard *sh; /* quiet: reading a manifest is no use of the shard (LRU) */
	if (cache_shard_open_quiet(s->cache, id, WD_SHARD_ID_BYTES, &sh, NULL) != WT_OK)
		return false;
	size_t len;
	const void *b = cache_shard_manifest(sh, &len);
	Weights__Manifest *mf = weights__manifest__unpack(NULL, len, b);
	bool yes = mf != NULL && strcmp(mf->model, model) == 0;
	weights__manifest__free_unpacked(mf, NULL);
	cache_shard_close(sh);
	return yes;
}

static nng_msg *evict(wd_server *s, uint64_t rid, const char *model)
{
	wd_snap *snap = NULL;
	wt_errbuf err;
	/* A name not served (any more): its leftover shards, by manifest model name. */
	bool unknown =
	    model[0] != '\0' && wd_models_get(s->models, model, false, &snap, &err) == WT_ENOTFOUND;
	id_list l = {0};
	cache_list(s->cache, collect, &l);
	if (l.oom) {
		free(l.ids);
		wd_snap_release(snap);
		return wd_reply_error(rid, WT_ENOMEM, "evict: out of memory listing shards");
	}
	uint64_t evicted = 0, busy = 0;
	cache_stats before, after;
	cache_stats_get(s->cache, &before);
	for (size_t i = 0; i < l.n; i++) {
		if (model[0] != '\0' && !shard_of(s, l.ids[i], model))
			continue;
		int rv = cache_evict(s->cache, l.ids[i], WD_SHARD_ID_BYTES, NULL);
		evicted += rv == WT_OK;
		busy += rv == WT_EBUSY;
	}
	cache_stats_get(s->cache, &after);
	free(l.ids);
	wd_snap_release(snap);
	if (unknown && evicted == 0 && busy == 0)
		return wd_reply_error(rid, WT_ENOTFOUND, err.msg);
	char text[400], rest[160] = "";
	if (busy > 0) /* a reader has them open: ar.bad, weightctl exits 4 */
		snprintf(rest, sizeof(rest),
		         "; %llu busy (being read) left cached: evict again when those reads end",
		         (unsigned long long)busy);
	snprintf(text, sizeof(text), "evicted %llu shards of %s%s", (unsigned long long)evicted,
	         model[0] ? model : "all models", rest);
	Weights__AdminReply ar = WEIGHTS__ADMIN_REPLY__INIT;
	ar.text = text;
	ar.shards = evicted;
	ar.bytes = before.bytes > after.bytes ? before.bytes - after.bytes : 0;
	ar.bad = busy;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = rid;
	rp.body_case = WEIGHTS__REPLY__BODY_ADMIN;
	rp.admin = &ar;
	WT_LOG(WT_LOG_NOTICE, "admin: %s", text);
	return wd_reply_msg(&rp);
}

static void verify_cb(void *ctx, cache_bad_kind kind, const void *id, size_t id_len)
{
	(void)ctx;
	char hex[2 * 32 + 1] = "";
	const uint8_t *b = id;
	for (size_t i = 0; i < id_len && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	WT_LOG(WT_LOG_WARNING, "verify: bad %s %s (evicted)",
	       kind == CACHE_BAD_CHUNK ? "chunk" : "manifest", hex);
}

/* STATS: the cache's counters and the server's, with a line of text. */
static void stats_reply(wd_server *s, Weights__AdminReply *ar, char *text, size_t cap)
{
	cache_stats st;
	cache_stats_get(s->cache, &st);
	ar->bytes = st.bytes;
	ar->shards = st.shards;
	ar->chunks = st.chunks;
	ar->max_bytes = st.max_bytes;
	ar->hits = st.hits;
	ar->misses = st.misses;
	ar->evictions = st.evictions;
	ar->corruptions = st.corruptions;
	ar->bad = st.corruptions;
	ar->source_bytes_read = wd_models_source_bytes(s->models);
	ar->source_rewrites = wd_models_source_rewrites(s->models);
	ar->productions = atomic_load(&s->productions);
	ar->chunk_replies = atomic_load(&s->chunk_replies);
	ar->chunk_bytes_out = atomic_load(&s->chunk_bytes_out);
	ar->requests = atomic_load(&s->requests);
	ar->flight_waits = atomic_load(&s->flight_waits);
	ar->peer_fills = atomic_load(&s->peer_fills);
	ar->peer_bytes = atomic_load(&s->peer_bytes);
	ar->memory_bytes = st.mem_used;
	ar->memory_capacity = st.mem_capacity;
	ar->disk_bytes = st.disk_bytes;
	snprintf(text, cap,
	         "cache %llu/%llu bytes (%llu on disk), %llu shards, %llu chunks, RAM tier "
	         "%llu/%llu bytes; "
	         "%llu source bytes read, "
	         "%llu productions, %llu peer fills (%llu bytes), %llu chunk replies, "
	         "%llu source objects found rewritten",
	         (unsigned long long)st.bytes, (unsigned long long)st.max_bytes,
	         (unsigned long long)st.disk_bytes, (unsigned long long)st.shards,
	         (unsigned long long)st.chunks, (unsigned long long)st.mem_used,
	         (unsigned long long)st.mem_capacity, (unsigned long long)ar->source_bytes_read,
	         (unsigned long long)ar->productions, (unsigned long long)ar->peer_fills,
	         (unsigned long long)ar->peer_bytes, (unsigned long long)ar->chunk_replies,
	         (unsigned long long)ar->source_rewrites);
	ar->text = text;
}

nng_msg *wd_admin_reply(wd_server *s, uint64_t rid, const Weights__AdminRequest *a)
{
	Weights__AdminReply ar = WEIGHTS__ADMIN_REPLY__INIT;
	char text[1200];
	cache_stats st;
	wt_errbuf err;
	switch (a->op) {
	case WEIGHTS__ADMIN_REQUEST__OP__OP_STATS:
		stats_reply(s, &ar, text, sizeof(text));
		break;
	case WEIGHTS__ADMIN_REQUEST__OP__OP_EVICT:
		if (a->layout != NULL) /* it would read as "this layout only" */
			return wd_reply_error(
			    rid, WT_EINVAL,
			    "evict drops a model's cached shards of every layout; "
			    "send it without a layout (only WARM takes one)");
		return evict(s, rid, a->model ? a->model : "");
	case WEIGHTS__ADMIN_REQUEST__OP__OP_VERIFY: {
		uint64_t bad = 0;
		cache_stats_get(s->cache, &st);
		int rv = cache_verify_all(s->cache, verify_cb, NULL, &bad, &err);
		if (rv != WT_OK)
			return wd_reply_error(rid, rv, err.msg);
		snprintf(text, sizeof(text), "verified %llu chunks in %llu shards: %llu bad",
		         (unsigned long long)st.chunks, (unsigned long long)st.shards,
		         (unsigned long long)bad);
		ar.text = text;
		ar.bad = bad;
		ar.shards = st.shards;
		ar.chunks = st.chunks;
		ar.bytes = st.bytes;
		WT_LOG(WT_LOG_NOTICE, "admin: %s", text);
		break;
	}
	case WEIGHTS__ADMIN_REQUEST__OP__OP_RECLAIM: {
		cache_reclaim_stats rs;
		int rv = cache_reclaim(s->cache, &rs, &err);
		if (rv != WT_OK)
			return wd_reply_error(rid, rv, err.msg);
		snprintf(text, sizeof(text),
		         "reclaim: %llu -> %llu bytes on disk (%llu live chunk bytes); %s, %llu "
		         "bytes rewritten, %.0f ms",
		         (unsigned long long)rs.disk_before, (unsigned long long)rs.disk_after,
		         (unsigned long long)rs.live_bytes,
		         rs.relocated ? "live chunks relocated" : "dead files dropped only",
		         (unsigned long long)rs.rewritten_bytes, (double)rs.elapsed_ns / 1e6);
		ar.text = text;
		ar.bytes = rs.live_bytes;
		ar.disk_bytes = rs.disk_after;
		ar.disk_bytes_before = rs.disk_before;
		ar.rewritten_bytes = rs.rewritten_bytes;
		WT_LOG(WT_LOG_NOTICE, "admin: %s", text);
		break;
	}
	case WEIGHTS__ADMIN_REQUEST__OP__OP_REGISTER:
	case WEIGHTS__ADMIN_REQUEST__OP__OP_UNREGISTER: /* request.c: regreq.c, admin thread */
		return wd_reply_error(rid, WT_EINVAL,
		                      "admin: REGISTER and UNREGISTER are requests of their own "
		                      "(regreq.c), not answered here");
	default:
		snprintf(text, sizeof(text),
		         "admin op %d is unknown; use STATS, WARM, EVICT, VERIFY, REGISTER, "
		         "UNREGISTER or RECLAIM",
		         (int)a->op);
		return wd_reply_error(rid, WT_EPROTO, text);
	}
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = rid;
	rp.body_case = WEIGHTS__REPLY__BODY_ADMIN;
	rp.admin = &ar;
	return wd_reply_msg(&rp);
}
