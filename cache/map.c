/* map.c — chained hash tables of the in-memory index (chunks by hash, shards by id). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

static size_t chunk_slot(wt_hash128 h, size_t nb)
{
	return (size_t)((h.lo ^ (h.hi * 0x9e3779b97f4a7c15ull)) & (nb - 1));
}

cache_chunk_ent *cache_chunk_find(const cache_chunk_map *m, wt_hash128 h)
{
	if (m->nb == 0)
		return NULL;
	for (cache_chunk_ent *e = m->b[chunk_slot(h, m->nb)]; e != NULL; e = e->next)
		if (common_hash128_eq(e->hash, h))
			return e;
	return NULL;
}

/*
 * Both maps are chained hash tables whose entries link through their own
 * `next` member: one rehash serves both, told where `next` sits and how an
 * entry picks its slot among nb (a power of two).
 */
typedef size_t (*slot_fn)(const void *ent, size_t nb);

static void **next_of(void *ent, size_t next_off)
{
	return (void **)((char *)ent + next_off);
}

static int grow(void ***buckets, size_t *nbuckets, size_t next_off, slot_fn slot)
{
	size_t nb = *nbuckets ? *nbuckets * 2 : 64;
	void **b = calloc(nb, sizeof(*b));
	if (b == NULL)
		return WT_ENOMEM;
	for (size_t i = 0; i < *nbuckets; i++) {
		void *e = (*buckets)[i];
		while (e != NULL) {
			void *n = *next_of(e, next_off);
			size_t s = slot(e, nb);
			*next_of(e, next_off) = b[s];
			b[s] = e;
			e = n;
		}
	}
	free(*buckets);
	*buckets = b;
	*nbuckets = nb;
	return WT_OK;
}

static size_t chunk_ent_slot(const void *ent, size_t nb)
{
	return chunk_slot(((const cache_chunk_ent *)ent)->hash, nb);
}

static int chunk_grow(cache_chunk_map *m)
{
	return grow((void ***)&m->b, &m->nb, offsetof(cache_chunk_ent, next), chunk_ent_slot);
}

int cache_chunk_insert(cache_chunk_map *m, cache_chunk_ent *e)
{
	if (m->count >= m->nb) {
		int rv = chunk_grow(m);
		if (rv != WT_OK)
			return rv;
	}
	size_t s = chunk_slot(e->hash, m->nb);
	e->next = m->b[s];
	m->b[s] = e;
	m->count++;
	return WT_OK;
}

cache_chunk_ent *cache_chunk_remove(cache_chunk_map *m, wt_hash128 h)
{
	if (m->nb == 0)
		return NULL;
	cache_chunk_ent **pp = &m->b[chunk_slot(h, m->nb)];
	for (; *pp != NULL; pp = &(*pp)->next) {
		cache_chunk_ent *e = *pp;
		if (common_hash128_eq(e->hash, h)) {
			*pp = e->next;
			m->count--;
			return e;
		}
	}
	return NULL;
}

void cache_chunk_map_free(cache_chunk_map *m)
{
	for (size_t i = 0; i < m->nb; i++) {
		cache_chunk_ent *e = m->b[i];
		while (e != NULL) {
			cache_chunk_ent *n = e->next;
			free(e);
			e = n;
		}
	}
	free(m->b);
	memset(m, 0, sizeof(*m));
}

uint64_t cache_id_hash(const void *id, size_t len)
{
	return common_hash128(id, len).lo;
}

cache_shard_ent *cache_shard_find(const cache_shard_map *m, const void *id, size_t len)
{
	if (m->nb == 0)
		return NULL;
	uint64_t h = cache_id_hash(id, len);
	for (cache_shard_ent *e = m->b[h & (m->nb - 1)]; e != NULL; e = e->next)
		if (e->id_hash == h && e->id_len == len && memcmp(e->id, id, len) == 0)
			return e;
	return NULL;
}

static size_t shard_ent_slot(const void *ent, size_t nb)
{
	return (size_t)(((const cache_shard_ent *)ent)->id_hash & (nb - 1));
}

static int shard_grow(cache_shard_map *m)
{
	return grow((void ***)&m->b, &m->nb, offsetof(cache_shard_ent, next), shard_ent_slot);
}

int cache_shard_insert(cache_shard_map *m, cache_shard_ent *e)
{
	if (m->count >= m->nb) {
		int rv = shard_grow(m);
		if (rv != WT_OK)
			return rv;
	}
	e->id_hash = cache_id_hash(e->id, e->id_len);
	size_t s = e->id_hash & (m->nb - 1);
	e->next = m->b[s];
	m->b[s] = e;
	m->count++;
	return WT_OK;
}

void cache_shard_unlink(cache_shard_map *m, cache_shard_ent *e)
{
	if (m->nb == 0)
		return;
	cache_shard_ent **pp = &m->b[e->id_hash & (m->nb - 1)];
	for (; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			e->next = NULL;
			m->count--;
			return;
		}
	}
}

void cache_shard_ent_free(cache_shard_ent *e)
{
	if (e == NULL)
		return;
	free(e->id);
	free(e->chunks);
	free(e);
}

void cache_shard_map_free(cache_shard_map *m)
{
	for (size_t i = 0; i < m->nb; i++) {
		cache_shard_ent *e = m->b[i];
		while (e != NULL) {
			cache_shard_ent *n = e->next;
			cache_shard_ent_free(e);
			e = n;
		}
	}
	free(m->b);
	memset(m, 0, sizeof(*m));
}
