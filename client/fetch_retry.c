/*
 * fetch_retry.c — what a failed chunk request leads to (fetch_int.h): a
 * re-fetch after a hash mismatch, the manifest asked again (a restarted
 * server, a shard evicted for a damaged chunk), a new Hello, new bulk
 * streams, a retry after a backoff, a fail-over to the next endpoint, or the
 * error; and the caller's stop (the progress callback) before each of them.
 */
#include <string.h>

#include "client/fetch_int.h"

/* WT_ECANCELED if the progress callback, asked again with the counts so far,
 * says stop: before every retry, backoff and fail-over, so a fetch stuck on a
 * server that does not answer stops within one request timeout, not after
 * all its retries (wt_fetch_cancel answers through it). */
static int stop_asked(const fetch *f, wt_errbuf *err)
{
	if (fetch_cancel_asked(f))
		return fetch_canceled_err(f, err);
	const wt_fetch_opts *o = f->o;
	if (o == NULL || o->progress == NULL ||
	    o->progress(o->progress_ctx, f->st->bytes, f->m->total_bytes) == 0)
		return WT_OK;
	return wt_seterr(err, WT_ECANCELED, "fetch canceled by the progress callback");
}

/* Sleep ms in slices of at most 100 ms, asking stop_asked between them. */
static int nap(const fetch *f, uint32_t ms, wt_errbuf *err)
{
	for (;;) {
		int rv = stop_asked(f, err);
		if (rv != WT_OK || ms == 0)
			return rv;
		uint32_t d = ms < 100 ? ms : 100;
		client_sleep_ms(d);
		ms -= d;
	}
}

/* f now talks to an endpoint that answered: the head chunk and those after it
 * are asked there (a fail-over, when it is another than `from`). */
static int adopt(fetch *f, fetch_loop *L, size_t from, const wt_errbuf *last, wt_errbuf *err)
{
	if (f->ep != from) {
		f->st->failovers++;
		client_log(f->c, WT_CLIENT_LOG_WARNING, "failing over to %s after: %s",
		           f->c->eps[f->ep].url, last->msg);
	}
	L->attempt = 0;
	L->refreshed = 0;
	return fetch_reissue(f, L->head, L->issued, err);
}

/*
 * Connect to the next endpoint in rendezvous order that answers; past the last
 * one, go round again (the only endpoint, too) while the retry budget lasts.
 */
int fetch_fail_over(fetch *f, fetch_loop *L, wt_errbuf *err)
{
	wt_errbuf last = {0};
	if (err != NULL)
		last = *err;
	/* what is still asked of this endpoint is asked again of the next: walk
	 * away from it (a stopped daemon would hold it request_timeout_ms) */
	fetch_bulk_close(f);
	fetch_msg_abandon(f);
	fetch_slots_reclaim(f);
	client_budget_start(&L->bud);
	size_t from = f->ep;
	for (;;) {
		while (++L->k_ep < f->c->n_eps) {
			int rv = stop_asked(f, err);
			if (rv == WT_OK)
				rv = fetch_use_endpoint(f, L->order[L->k_ep], err);
			if (rv == WT_ECANCELED)
				return rv;
			if (rv == WT_OK)
				return adopt(f, L, from, &last, err);
			if (!client_retryable(rv))
				return rv;
			if (err != NULL)
				last = *err;
			client_log(f->c, WT_CLIENT_LOG_WARNING, "%s", last.msg);
		}
		uint32_t ms = 0;
		if (!client_budget_next(f->c, &L->bud, &last, &ms))
			break;
		int rv = nap(f, ms, err);
		if (rv != WT_OK)
			return rv;
		L->k_ep = 0; /* another round: order[0] next */
		rv = fetch_use_endpoint(f, L->order[0], err);
		if (rv == WT_OK)
			return adopt(f, L, from, &last, err);
		if (!client_retryable(rv))
			return rv;
		if (err != NULL)
			last = *err;
	}
	return wt_seterr(err, WT_EUNAVAIL,
	                 "no endpoint could serve tensor '%s' chunk %zu (%zu "
	                 "tried, retry budget %u ms spent); last error: %s",
	                 fetch_tensor_name(f, L->head), fetch_chunk_in_tensor(f, L->head),
	                 f->c->n_eps, f->c->o.retry_budget_ms, last.msg);
}

/* Ask for the manifest again and resume (a restarted server, an evicted shard);
 * a server that went away again costs an attempt. */
static int resume(fetch *f, fetch_loop *L, wt_errbuf *err)
{
	/* A WT_ECORRUPT behind the head (replies come in any order) evicted the
	 * shard too: it counts as one more re-production, bounded as at the head. */
	wt_errbuf cerr = {0};
	if (fetch_slots_reclaim_corrupt(f, &f->slots[L->head % f->w], &cerr) > 0) {
		if (L->corrupt >= CLIENT_MANIFEST_REFRESH) {
			if (err != NULL) {
				*err = cerr;
				wt_errprefix(err,
				             "still corrupt after the server produced the shard %u "
				             "more times (check its disk; weightctl admin verify)",
				             L->corrupt);
			}
			return WT_ECORRUPT;
		}
		L->corrupt++;
	}
	int rv = fetch_refresh_manifest(f, err);
	if (rv == WT_OK)
		return fetch_reissue(f, L->head, L->issued, err);
	if (!client_retryable(rv))
		return rv;
	L->refreshed = 0;
	f->st->retries++;
	if (++L->attempt > f->c->o.max_retries)
		return fetch_fail_over(f, L, err);
	client_log(f->c, WT_CLIENT_LOG_WARNING, "%s; retry %u/%u", err ? err->msg : "", L->attempt,
	           f->c->o.max_retries);
	client_sleep_ms(client_backoff_ms(f->c, L->attempt - 1));
	return fetch_reissue(f, L->head, L->issued, err);
}

/* Streams kept from an earlier fetch were of a server instance that is gone
 * (fetch_bulk_stale): Hello again (its new ticket), open new ones and ask
 * again what was in flight; once a fetch. */
static int renew_streams(fetch *f, fetch_loop *L, wt_errbuf *err)
{
	L->renewed = 1;
	fetch_slots_reclaim(f);
	fetch_bulk_close(f);
	wt_errbuf herr;
	if (client_ep_rehello(f->c, f->ep, &herr) != WT_OK)
		client_log(f->c, WT_CLIENT_LOG_WARNING, "%s", herr.msg);
	/* the other kept streams may be as dead (a server that dropped them
	 * without a restart keeps its ticket): open new ones */
	pthread_mutex_lock(&f->c->lk);
	client_bulk_drop_idle(f->c, f->ep);
	pthread_mutex_unlock(&f->c->lk);
	fetch_bulk_open(f);
	return fetch_reissue(f, L->head, L->issued, err);
}

/* A chunk request timed out: whether its endpoint is stopped or hung (a Hello
 * on each connection unanswered within connect_timeout_ms), not just slow. A
 * stopped daemon keeps its connections up, so each of max_retries retries
 * waited request_timeout_ms again before the fail-over (32 fetches of a node
 * SIGSTOPped mid-fetch: 22 s with --timeout-ms 3000, 3 min by default). */
static bool stalled(fetch *f)
{
	wt_errbuf herr;
	if (client_ep_rehello(f->c, f->ep, &herr) == WT_OK)
		return false; /* alive: slow, the retries stand */
	client_log(f->c, WT_CLIENT_LOG_WARNING, "%s; failing over now", herr.msg);
	return true;
}

/* The head went quiet (fetch.c run): no byte on the fetch's bulk streams, or
 * no request over messages ended, for client_quiet_probe_ms. A stopped or hung
 * daemon keeps its connections up: the head used to wait request_timeout_ms
 * for it, and on the bulk stream a retry over messages as long again (62 s
 * with the defaults before the fail-over). The fail-over closes the streams
 * (every request on them ends at once) and walks away from the requests over
 * messages (fetch_msg_abandon). */
int fetch_probe_quiet(fetch *f, fetch_loop *L, wt_errbuf *err)
{
	if (!stalled(f))
		return WT_OK;
	if (fetch_bulk_on(f))
		wt_seterr(err, WT_EUNAVAIL,
		          "endpoint %s: no byte on its bulk streams for %u ms while chunk "
		          "requests waited, and no answer to a Hello",
		          f->c->eps[f->ep].url, client_quiet_probe_ms(f->c));
	else
		wt_seterr(err, WT_EUNAVAIL,
		          "endpoint %s: no chunk reply for %u ms while requests waited, and no "
		          "answer to a Hello",
		          f->c->eps[f->ep].url, client_quiet_probe_ms(f->c));
	f->st->retries++;
	return fetch_fail_over(f, L, err);
}

/* The head slot failed: decide between re-fetch, retry, resume, fail-over, error. */
int fetch_handle_failure(fetch *f, fetch_loop *L, fetch_slot *s, wt_errbuf *err)
{
	int rv = stop_asked(f, err);
	if (rv != WT_OK)
		return rv;
	rv = s->rv;
	if (err != NULL)
		*err = s->err;
	size_t ci = L->head;
	if (rv == WT_EHASH) {
		if (f->c->o.hash_refetch == 0 || (L->refetched[ci / 8] & (1u << (ci % 8))))
			return rv; /* second mismatch: the error stands */
		L->refetched[ci / 8] |= (uint8_t)(1u << (ci % 8));
		f->st->refetches++;
		client_log(f->c, WT_CLIENT_LOG_WARNING, "%s; fetching it once more", s->err.msg);
		return fetch_slot_issue(f, s, ci, err);
	}
	if (rv == WT_ENOTFOUND && (!L->refreshed || L->corrupt != L->corrupt_at_refresh)) {
		/* a restarted server (or a peer) that does not know the shard yet; or
		 * one that evicted it again for a damaged chunk behind the head */
		L->refreshed = 1;
		L->corrupt_at_refresh = L->corrupt;
		f->st->reconnects++;
		client_log(f->c, WT_CLIENT_LOG_WARNING, "%s; asking for the manifest again",
		           s->err.msg);
		return resume(f, L, err);
	}
	if (rv == WT_ECORRUPT ||
	    (f->live && (rv == WT_EIO || rv == WT_ENOSPC || rv == WT_ENOMEM))) {
		/* the server found the chunk damaged on its disk and evicted the shard,
		 * or the production being read failed on the server's side (its cache
		 * write, memory); asking for the manifest makes it produce the shard
		 * again */
		if (L->corrupt >= CLIENT_MANIFEST_REFRESH) {
			if (err != NULL && rv == WT_ECORRUPT)
				wt_errprefix(err,
				             "still corrupt after the server produced the shard %u "
				             "more times (check its disk; weightctl admin verify)",
				             L->corrupt);
			else if (err != NULL)
				wt_errprefix(err, "the server's production failed %u more times",
				             L->corrupt);
			return rv;
		}
		L->corrupt++;
		f->st->reconnects++;
		client_log(f->c, WT_CLIENT_LOG_WARNING,
		           "%s; asking for the manifest again so the shard is produced again",
		           s->err.msg);
		return resume(f, L, err);
	}
	if (rv == WT_EPERM && f->c->token[0] != '\0' && !L->rehello) {
		/* the token is checked per connection: a reconnect needs a new Hello */
		L->rehello = 1;
		fetch_slots_reclaim(f);
		if ((rv = client_ep_rehello(f->c, f->ep, err)) != WT_OK)
			return rv;
		return fetch_reissue(f, L->head, L->issued, err);
	}
	if (!client_retryable(rv))
		return rv;
	if (rv == WT_EUNAVAIL && !L->renewed && fetch_bulk_stale(f))
		return renew_streams(f, L, err);
	if (rv == WT_EUNAVAIL && s->lost) {
		/* every connection gone and not back (slot_wait): a retry on this
		 * endpoint would wait out request_timeout_ms again; the next one in
		 * rendezvous order takes over now (the only one: after a backoff,
		 * within the retry budget) */
		f->st->retries++;
		return fetch_fail_over(f, L, err);
	}
	if (rv == WT_ETIMEDOUT && f->c->n_eps > 1 && stalled(f)) {
		f->st->retries++;
		return fetch_fail_over(f, L, err);
	}
	f->st->retries++;
	if (++L->attempt > f->c->o.max_retries)
		return fetch_fail_over(f, L, err);
	uint32_t ms = client_backoff_ms(f->c, L->attempt - 1);
	client_log(f->c, WT_CLIENT_LOG_WARNING, "%s; retry %u/%u in %u ms", s->err.msg, L->attempt,
	           f->c->o.max_retries, ms);
	if ((rv = nap(f, ms, err)) != WT_OK)
		return rv;
	return fetch_slot_issue(f, s, ci, err);
}
