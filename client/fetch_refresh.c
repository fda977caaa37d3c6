/*
 * fetch_refresh.c — the manifest asked again in the middle of a fetch (a
 * restarted server, an evicted or re-produced shard; fetch.c resume): it must
 * list exactly the chunks being fetched, or, for a live (cut-through)
 * manifest, agree with every hash learned so far.
 */
#include <stdlib.h>
#include <string.h>

#include "client/fetch_int.h"

/*
 * A live manifest asked again (the server restarted, or finished the shard long
 * ago): n must be of the same revision with the same tensors and chunk
 * boundaries, and every hash both know must agree. Then its hashes are adopted
 * (a committed n ends the live requests). 0 if it differs: nothing adopted.
 */
static int live_adopt(fetch *f, const wt_manifest *n)
{
	const wt_manifest *m = f->m;
	if (strcmp(n->revision, m->revision) != 0 || n->n_tensors != m->n_tensors ||
	    n->n_chunks != m->n_chunks)
		return 0;
	for (size_t i = 0; i < m->n_tensors; i++)
		if (strcmp(n->tensors[i].name, m->tensors[i].name) != 0 ||
		    n->tensors[i].nbytes != m->tensors[i].nbytes ||
		    (n->tensors[i].known && f->tknown[i] &&
		     memcmp(n->tensors[i].hash, f->thash[i], 16) != 0))
			return 0;
	for (size_t i = 0; i < m->n_chunks; i++)
		if (n->chunks[i].off != m->chunks[i].off ||
		    n->chunks[i].nbytes != m->chunks[i].nbytes ||
		    n->chunks[i].tensor != m->chunks[i].tensor ||
		    (n->chunks[i].known && f->cknown[i] &&
		     memcmp(n->chunks[i].hash, f->chash[i], 16) != 0))
			return 0;
	for (size_t i = 0; i < m->n_tensors; i++)
		if (n->tensors[i].known && !f->tknown[i]) {
			memcpy(f->thash[i], n->tensors[i].hash, 16);
			f->tknown[i] = 1;
		}
	for (size_t i = 0; i < m->n_chunks; i++)
		if (n->chunks[i].known && !f->cknown[i]) {
			memcpy(f->chash[i], n->chunks[i].hash, 16);
			f->cknown[i] = 1;
		}
	f->live = n->live;
	return 1;
}

/* Ask the current endpoint for the manifest again (it restarted or never saw the
 * shard); it must list exactly the same chunks. Adopts its shard id. */
int fetch_refresh_manifest(fetch *f, wt_errbuf *err)
{
	const wt_manifest *m = f->m;
	wt_manifest *n = NULL;
	int rv = client_request_manifest(f->c, f->ep, m->req_model, &m->req_layout, &n, err);
	if (rv != WT_OK)
		return rv;
	return fetch_refresh_adopt(f, n, err);
}

int fetch_refresh_adopt(fetch *f, wt_manifest *n, wt_errbuf *err)
{
	const wt_manifest *m = f->m;
	int rv = WT_OK;
	if (m->live ? !live_adopt(f, n) : !client_manifest_same(n, m)) {
		/* never mix bytes of two shards: the sink is aborted, the caller starts over */
		rv = wt_seterr(
		    err, WT_ECHANGED,
		    "endpoint %s: the shard changed while fetching (revision %s, now %s); "
		    "get the manifest again and restart the fetch",
		    f->c->eps[f->ep].url, m->revision, n->revision);
	} else {
		free(f->shard_id);
		f->shard_id = n->shard_id;
		f->shard_id_len = n->shard_id_len;
		n->shard_id = NULL;
	}
	wt_manifest_free(n);
	return rv;
}
