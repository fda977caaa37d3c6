/*
 * bulk_listen.c — the bulk data plane's listener (docs/architecture.md 4.2; the streams
 * themselves: bulk.c): stream_listen's nng_stream_listener, accepting streams up to
 * max_connections (counted on their own, as pipes are), a pool job that frees the streams
 * that ended once no job of theirs is queued (their aios cannot be freed from their own
 * callbacks), the URL and ticket offered in HelloReply, and the orderly stop.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "weightd/bulk_int.h"

#include <nng/supplemental/tls/tls.h> /* after nng.h (server_int.h) */

static void reap_dead(wd_bulk *bk);

/* A pool job: free the streams that ended (not from their aios' callbacks). */
static void reap_work(wd_job *job)
{
	wd_bulk *bk = (wd_bulk *)((char *)job - offsetof(wd_bulk, reap_job));
	pthread_mutex_lock(&bk->lk);
	bk->reap_queued = false; /* a stream ending from now on queues it again */
	bool closing = bk->closing;
	pthread_mutex_unlock(&bk->lk);
	if (!closing) /* else wd_bulk_stop frees them all */
		reap_dead(bk);
	pthread_mutex_lock(&bk->lk);
	bk->reap_jobs--;
	pthread_cond_broadcast(&bk->cv);
	pthread_mutex_unlock(&bk->lk);
}

bool wd_bulk_reap_soon_locked(wd_bulk *bk)
{
	if (bk->reap_queued || bk->closing)
		return false;
	bk->reap_queued = true;
	bk->reap_jobs++;
	return true;
}

void wd_bulk_reap_submit(wd_bulk *bk)
{
	wd_pool_submit_lane(bk->srv->pool, WD_LANE_REQUEST, &bk->reap_job);
}

/* Free the streams that ended and have no job queued (from the accept
 * callback: another aio's). */
static void reap_dead(wd_bulk *bk)
{
	wd_bconn *dead = NULL;
	pthread_mutex_lock(&bk->lk);
	for (wd_bconn **p = &bk->conns; *p != NULL;) {
		wd_bconn *b = *p;
		if (b->dead && b->jobs == 0) {
			*p = b->next;
			b->next = dead;
			dead = b;
		} else {
			p = &b->next;
		}
	}
	pthread_mutex_unlock(&bk->lk);
	while (dead != NULL) {
		wd_bconn *b = dead;
		dead = b->next;
		wd_bconn_free(b);
	}
}

static void accept_cb(void *arg)
{
	wd_bulk *bk = arg;
	int nrv = nng_aio_result(bk->accept_aio);
	if (nrv != 0) {
		if (nrv != NNG_ECLOSED && nrv != NNG_ECANCELED)
			WT_LOG(WT_LOG_WARNING, "bulk stream: accept: %s", nng_strerror(nrv));
		pthread_mutex_lock(&bk->lk);
		bool closing = bk->closing;
		pthread_mutex_unlock(&bk->lk);
		if (!closing && nrv != NNG_ECLOSED)
			nng_stream_listener_accept(bk->l, bk->accept_aio);
		return;
	}
	reap_dead(bk);
	nng_stream *st = nng_aio_get_output(bk->accept_aio, 0);
	wd_bconn *b = wd_bconn_new(bk, st);
	if (b == NULL) {
		WT_LOG(WT_LOG_ERR, "bulk stream: out of memory for a connection");
		nng_stream_free(st);
		nng_stream_listener_accept(bk->l, bk->accept_aio);
		return;
	}
	pthread_mutex_lock(&bk->lk);
	uint64_t live = 0;
	for (const wd_bconn *o = bk->conns; o != NULL; o = o->next)
		live += !o->dead;
	bool closing = bk->closing;
	/* streams count against max_connections on their own, as pipes do */
	bool full = live >= bk->srv->cfg->max_connections;
	if (!closing && !full) {
		b->next = bk->conns;
		bk->conns = b;
	}
	pthread_mutex_unlock(&bk->lk);
	if (closing || full) {
		/* freed here, never listed: no operation ever started on it, and a
		 * refused stream must not hold its socket until a later accept */
		if (!closing)
			wd_auth_log_failure(bk->srv, "bulk stream: max_connections reached; "
			                             "connection closed (raise max_connections)");
		nng_stream_close(st);
		wd_bconn_free(b);
		if (!closing)
			nng_stream_listener_accept(bk->l, bk->accept_aio);
		return;
	}
	atomic_fetch_add(&bk->srv->bulk_streams, 1); /* taken: not refused above */
	wd_bconn_open(b);
	nng_stream_listener_accept(bk->l, bk->accept_aio);
}

int wd_bulk_start(wd_server *s, wt_errbuf *err)
{
	const char *url = s->cfg->stream_listen;
	if (url == NULL || url[0] == '\0')
		return WT_OK;
	bool tls = strncmp(url, "tls+tcp://", 10) == 0;
	if (wd_bulk_tcp_prefix(url) == 0 && strncmp(url, "ipc://", 6) != 0)
		return wt_seterr(err, WT_ECONFIG,
		                 "stream_listen %s: only tcp://HOST:PORT, tls+tcp://HOST:PORT and "
		                 "ipc:///path are supported; or leave it empty",
		                 url);
	nng_tls_config *t = NULL;
	char what[600];
	snprintf(what, sizeof(what), "stream_listen %s", url);
	if (tls && wd_tls_server_config(s->cfg, what, &t, err) != WT_OK)
		return err->code;
	if (strlen(url) >= sizeof(s->bulk->url) - 8) {
		if (t != NULL)
			nng_tls_config_free(t);
		return wt_seterr(err, WT_ECONFIG, "stream_listen %.64s...: URL too long", url);
	}
	wd_bulk *bk = calloc(1, sizeof(*bk));
	if (bk == NULL) {
		if (t != NULL)
			nng_tls_config_free(t);
		return wt_seterr(err, WT_ENOMEM, "stream_listen: out of memory");
	}
	bk->srv = s;
	bk->reap_job.fn = reap_work;
	pthread_mutex_init(&bk->lk, NULL);
	pthread_cond_init(&bk->cv, NULL);
	s->bulk = bk; /* wd_bulk_stop frees it, also half-built */
	int rv = getrandom(bk->ticket, sizeof(bk->ticket), 0) == (ssize_t)sizeof(bk->ticket)
	             ? 0
	             : NNG_EINTERNAL;
	if (rv != 0) {
		if (t != NULL)
			nng_tls_config_free(t);
		return wt_seterr(err, WT_EIO, "stream_listen: getrandom failed for the ticket");
	}
	rv = nng_stream_listener_alloc(&bk->l, url);
	if (rv == 0 && t != NULL) /* the same TLS configuration as tls+tcp:// listen URLs */
		rv = nng_stream_listener_set_ptr(bk->l, NNG_OPT_TLS_CONFIG, t);
	if (t != NULL)
		nng_tls_config_free(t); /* the listener holds its own reference */
	if (rv == 0)
		rv = nng_stream_listener_listen(bk->l);
	if (rv == 0)
		rv = nng_aio_alloc(&bk->accept_aio, accept_cb, bk);
	if (rv != 0)
		return wt_seterr(err, rv == NNG_EADDRINUSE ? WT_EBUSY : WT_ECONFIG,
		                 "stream_listen %s: %s; check the URL and that no other process "
		                 "uses it",
		                 url, nng_strerror(rv));
	wd_bulk_advertised_url(bk->l, url, bk->url, sizeof(bk->url), &bk->wild_port);
	nng_stream_listener_accept(bk->l, bk->accept_aio);
	WT_LOG(WT_LOG_INFO, "bulk data plane on %s", bk->url);
	return WT_OK;
}

bool wd_bulk_offer(const wd_server *s, uint32_t pipe_id, char *url, size_t cap,
                   const uint8_t **ticket)
{
	const wd_bulk *bk = s->bulk;
	if (bk == NULL || bk->l == NULL)
		return false;
	const char *scheme = strncmp(bk->url, "tls+", 4) == 0 ? "tls+tcp://" : "tcp://";
	if (bk->wild_port == 0 || !wd_bulk_pipe_local_url(scheme, pipe_id, bk->wild_port, url, cap))
		snprintf(url, cap, "%s", bk->url);
	*ticket = bk->ticket;
	return true;
}

size_t wd_bulk_held(wd_server *s)
{
	wd_bulk *bk = s->bulk;
	size_t n = 0;
	if (bk == NULL)
		return 0;
	pthread_mutex_lock(&bk->lk);
	for (const wd_bconn *b = bk->conns; b != NULL; b = b->next)
		n++;
	pthread_mutex_unlock(&bk->lk);
	return n;
}

void wd_bulk_stop(wd_server *s)
{
	wd_bulk *bk = s->bulk;
	if (bk == NULL)
		return;
	pthread_mutex_lock(&bk->lk);
	bk->closing = true;
	for (wd_bconn *b = bk->conns; b != NULL; b = b->next)
		nng_stream_close(b->st);
	pthread_mutex_unlock(&bk->lk);
	if (bk->l != NULL)
		nng_stream_listener_close(bk->l);
	if (bk->accept_aio != NULL)
		nng_aio_stop(bk->accept_aio);
	/* queued requests finish their cache read (or skip it), then nothing
	 * new starts: closing is set */
	pthread_mutex_lock(&bk->lk);
	for (wd_bconn *b = bk->conns; b != NULL; b = b->next)
		while (b->jobs > 0)
			pthread_cond_wait(&bk->cv, &bk->lk);
	while (bk->reap_jobs > 0) /* closing: it frees nothing now */
		pthread_cond_wait(&bk->cv, &bk->lk);
	wd_bconn *list = bk->conns;
	bk->conns = NULL;
	pthread_mutex_unlock(&bk->lk);
	while (list != NULL) {
		wd_bconn *b = list;
		list = b->next;
		wd_bconn_free(b);
	}
	nng_aio_free(bk->accept_aio);
	nng_stream_listener_free(bk->l);
	pthread_cond_destroy(&bk->cv);
	pthread_mutex_destroy(&bk->lk);
	free(bk);
	s->bulk = NULL;
}
