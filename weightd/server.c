/*
 * server.c — the nng rep0 socket, its contexts and the per-request state
 * machine (STYLE.md 11):
 *
 *   WD_RECV --message--> WD_WORK (pool thread) --reply--> WD_SEND --sent--> WD_RECV
 *                          |  \--park on a flight--> WD_WAIT --producer done--> WD_WORK
 *
 * nng callbacks only move messages and queue jobs; all blocking work (cache
 * reads, planning, production) runs on the bounded worker pool. Drain: stop
 * re-arming receives, cancel idle receives, wait (bounded) for busy requests.
 * No lock is held across nng_aio_wait/stop.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/protocol/reqrep0/rep.h>

#include "weightd/server_int.h"

static void req_cb(void *arg);

/* Receive the next request on r's context (no timeout: a context waits for
 * as long as nobody asks). */
static void req_recv(wd_req *r)
{
	nng_aio_set_timeout(r->aio, NNG_DURATION_INFINITE);
	nng_ctx_recv(r->ctx, r->aio);
}

/*
 * Send reply m (owned by nng once sent) on r's context. rep0 hands a reply to
 * its connection at once, or queues it behind the one the connection is
 * still writing; a peer that stopped reading (a stopped or hung client) kept
 * every reply it asked for queued, each holding a context and its bytes, for
 * as long as it stayed connected: with as many requests as contexts, no
 * other client was answered. So a reply not handed over within
 * send_timeout_ms ends with NNG_ETIMEDOUT and req_cb closes the connection
 * (close_stalled_pipe): nng lets go of what it queued there, and a client
 * that was only slow reconnects and asks again.
 */
static void req_send(wd_req *r, nng_msg *m)
{
	uint64_t ms = r->srv->cfg->send_timeout_ms; /* <= 3600000: fits nng_duration */
	nng_aio_set_timeout(r->aio, ms > 0 ? (nng_duration)ms : NNG_DURATION_INFINITE);
	nng_aio_set_msg(r->aio, m);
	nng_ctx_send(r->ctx, r->aio);
}

/* A reply on connection pipe_id waited send_timeout_ms: close it (no lock held:
 * the pipe callbacks take srv->lk). Every reply queued there times out at
 * about the same time, and nng may still accept a close of a closing pipe: so
 * logged and counted once for a run of timeouts on the same connection. */
static void close_stalled_pipe(wd_server *s, uint32_t pipe_id)
{
	nng_pipe p = NNG_PIPE_INITIALIZER;
	p.id = pipe_id;
	if (nng_pipe_close(p) != 0 || atomic_exchange(&s->stalled_last_pipe, pipe_id) == pipe_id)
		return;
	atomic_fetch_add(&s->stalled_closed, 1);
	WT_LOG(WT_LOG_WARNING,
	       "connection %u: a reply waited send_timeout_ms (%llu ms) behind replies its "
	       "client does not read (stopped or hung?): connection closed; raise "
	       "send_timeout_ms if clients are only slow",
	       pipe_id, (unsigned long long)s->cfg->send_timeout_ms);
}

static void req_work(wd_job *job)
{
	wd_req *r = (wd_req *)((char *)job - offsetof(wd_req, job));
	nng_msg *msg = nng_aio_get_msg(r->aio);
	nng_aio_set_msg(r->aio, NULL);
	wd_handle(r, msg);
}

void wd_req_reply(wd_req *r, nng_msg *m)
{
	wd_server *s = r->srv;
	if (m == NULL) {
		/* Out of memory building any reply: the client times out; recycle. */
		WT_LOG(WT_LOG_ERR, "request %llu: no memory for the reply",
		       (unsigned long long)r->id);
		pthread_mutex_lock(&s->lk);
		s->busy--;
		bool drain = s->draining;
		r->state = drain ? WD_IDLE : WD_RECV;
		s->idle += drain;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->lk);
		if (!drain)
			req_recv(r);
		return;
	}
	uint64_t took = common_now_ns() - r->t0_ns;
	if (r->kind != NULL && strcmp(r->kind, "chunk") == 0)
		wd_hist_observe(&s->m.chunk, took);
	else if (r->kind != NULL && strcmp(r->kind, "manifest") == 0)
		wd_hist_observe(&s->m.manifest, took);
	if (common_log_level() >= WT_LOG_DEBUG)
		WT_LOG(WT_LOG_DEBUG, "request %llu %s: %zu reply bytes in %llu us",
		       (unsigned long long)r->id, r->kind ? r->kind : "?", nng_msg_len(m),
		       (unsigned long long)((common_now_ns() - r->t0_ns) / 1000));
	pthread_mutex_lock(&s->lk);
	r->state = WD_SEND;
	pthread_mutex_unlock(&s->lk);
	req_send(r, m);
}

static void req_cb(void *arg)
{
	wd_req *r = arg;
	wd_server *s = r->srv;
	int rv = nng_aio_result(r->aio);
	pthread_mutex_lock(&s->lk);
	switch (r->state) {
	case WD_RECV:
		if (rv == 0 && s->draining) {
			/* A request that arrives once the drain has begun gets a quick
			 * WT_ECANCELED (the client fails over) instead of new work. */
			nng_msg *in = nng_aio_get_msg(r->aio);
			nng_msg *out = wd_reply_error(
			    0, WT_ECANCELED, "server is shutting down; use another weightd");
			r->pipe_id = (uint32_t)nng_pipe_id(nng_msg_get_pipe(in)); /* req_send's */
			nng_msg_free(in);
			nng_aio_set_msg(r->aio, NULL);
			if (out != NULL) {
				r->state = WD_SEND;
				s->busy++;
				pthread_mutex_unlock(&s->lk);
				req_send(r, out);
				return;
			}
			rv = NNG_ENOMEM;
		}
		if (rv != 0) {
			/* Canceled (drain), closed, or a transport error: re-arm unless
			 * stopping. */
			if (s->draining || rv == NNG_ECLOSED) {
				r->state = WD_IDLE;
				s->idle++;
				pthread_cond_broadcast(&s->cv);
				pthread_mutex_unlock(&s->lk);
				return;
			}
			pthread_mutex_unlock(&s->lk);
			req_recv(r);
			return;
		}
		r->state = WD_WORK;
		s->busy++;
		pthread_mutex_unlock(&s->lk);
		r->job.fn = req_work;
		wd_pool_submit(s->pool, &r->job);
		return;
	case WD_SEND: {
		if (rv != 0) { /* not sent: the message is still ours */
			nng_msg *m = nng_aio_get_msg(r->aio);
			if (m != NULL)
				nng_msg_free(m);
		}
		nng_aio_set_msg(r->aio, NULL);      /* sent: nng owns it */
		bool stalled = rv == NNG_ETIMEDOUT; /* send_timeout_ms (req_send) */
		uint32_t pipe_id = r->pipe_id;
		s->busy--;
		pthread_cond_broadcast(&s->cv);
		if (s->draining || rv == NNG_ECLOSED) {
			r->state = WD_IDLE;
			s->idle++;
			pthread_mutex_unlock(&s->lk);
			if (stalled)
				close_stalled_pipe(s, pipe_id);
			return;
		}
		r->state = WD_RECV;
		pthread_mutex_unlock(&s->lk);
		if (stalled)
			close_stalled_pipe(s, pipe_id);
		req_recv(r);
		return;
	}
	default:
		pthread_mutex_unlock(&s->lk);
		WT_ASSERT(!"aio completion in a state without an aio operation");
	}
}

void wd_server_reconfigure(wd_server *s)
{
	wd_models_set_revalidate(s->models, wd_cfg_live(&s->cfg->revalidate_ms));
	size_t added = 0;
	wt_errbuf err;
	if (wd_models_rescan(s->models, s->cfg, &added, &err) != WT_OK)
		WT_LOG(WT_LOG_WARNING, "rescan: %s", err.msg);
	else if (added > 0)
		WT_LOG(WT_LOG_NOTICE, "rescan of %s: %zu new models", s->cfg->models_dir, added);
}

const char *wd_server_url(const wd_server *s, size_t i)
{
	return i < s->n_urls ? s->urls[i] : NULL;
}

int wd_tls_server_config(const wd_config *cfg, const char *url, nng_tls_config **out,
                         wt_errbuf *err)
{
	*out = NULL;
	if (cfg->tls_cert_key_file[0] == '\0')
		return wt_seterr(err, WT_ECONFIG,
		                 "%s: tls+tcp:// needs tls_cert_key_file (a PEM file with the "
		                 "server's certificate and key)",
		                 url);
	nng_tls_config *t = NULL;
	int rv = nng_tls_config_alloc(&t, NNG_TLS_MODE_SERVER);
	if (rv == 0)
		rv = nng_tls_config_cert_key_file(t, cfg->tls_cert_key_file, NULL);
	if (rv == 0 && cfg->tls_ca_file[0] != '\0')
		rv = nng_tls_config_ca_file(t, cfg->tls_ca_file);
	if (rv == 0 && cfg->tls_ca_file[0] != '\0')
		rv = nng_tls_config_auth_mode(t, NNG_TLS_AUTH_MODE_REQUIRED);
	if (rv != 0) {
		if (t != NULL)
			nng_tls_config_free(t);
		return wt_seterr(err, WT_ECONFIG,
		                 "%s: %s; check tls_cert_key_file '%s' (PEM certificate + key) and "
		                 "tls_ca_file '%s'",
		                 url, nng_strerror(rv), cfg->tls_cert_key_file, cfg->tls_ca_file);
	}
	*out = t;
	return WT_OK;
}

/* nng_listen; a tls+tcp:// listener gets the server's TLS configuration. */
static int listen_url(wd_server *s, const char *url, nng_listener *l, wt_errbuf *err)
{
	if (strncmp(url, "tls+tcp://", 10) != 0)
		return nng_listen(s->sock, url, l, 0);
	char what[600];
	snprintf(what, sizeof(what), "listen %s", url);
	nng_tls_config *t;
	if (wd_tls_server_config(s->cfg, what, &t, err) != WT_OK)
		return NNG_EINVAL;
	int rv = nng_listener_create(l, s->sock, url);
	if (rv == 0)
		rv = nng_listener_set_ptr(*l, NNG_OPT_TLS_CONFIG, t);
	if (rv == 0)
		rv = nng_listener_start(*l, 0);
	nng_tls_config_free(t); /* the listener holds its own reference */
	if (rv != 0)
		wt_seterr(err, WT_ECONFIG, "listen %s: %s", url, nng_strerror(rv));
	return rv;
}

static int listen_one(wd_server *s, size_t i, const char *url, wt_errbuf *err)
{
	wt_errclear(err);
	int rv = listen_url(s, url, &s->lst[i], err);
	if (rv != 0 && err != NULL && err->code != WT_OK)
		return err->code;
	if (rv != 0)
		return wt_seterr(err, rv == NNG_EADDRINUSE ? WT_EBUSY : WT_ECONFIG,
		                 "listen %s: %s; check the URL (tcp://HOST:PORT, ipc:///path) and "
		                 "that no other process uses it",
		                 url, nng_strerror(rv));
	/* Resolve tcp port 0 to the bound port so the readiness line is usable. */
	size_t n = strlen(url);
	int port = 0;
	bool tcp = strncmp(url, "tcp://", 6) == 0 || strncmp(url, "tls+tcp://", 10) == 0;
	if (tcp && n > 2 && strcmp(url + n - 2, ":0") == 0 &&
	    nng_listener_get_int(s->lst[i], NNG_OPT_TCP_BOUND_PORT, &port) == 0) {
		char buf[512];
		snprintf(buf, sizeof(buf), "%.*s:%d", (int)(n - 2), url, port);
		s->urls[i] = strdup(buf);
	} else {
		s->urls[i] = strdup(url);
	}
	if (s->urls[i] == NULL)
		return wt_seterr(err, WT_ENOMEM, "listen %s: out of memory", url);
	return WT_OK;
}

static int open_socket(wd_server *s, wt_errbuf *err)
{
	const wd_config *cfg = s->cfg;
	int rv = nng_rep0_open(&s->sock);
	if (rv != 0)
		return wt_seterr(err, WT_EIO, "nng rep0 socket: %s", nng_strerror(rv));
	s->sock_open = true;
	/* nng drops messages over this silently (docs/architecture.md section 6): allow twice the
	 * request limit so a modestly oversized request still gets a WT_ETOOBIG reply. */
	uint64_t maxsz = cfg->max_request_bytes * 2;
	if ((rv = nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, (size_t)maxsz)) != 0)
		return wt_seterr(err, WT_EIO, "nng recv-size-max %llu: %s",
		                 (unsigned long long)maxsz, nng_strerror(rv));
	if ((rv = wd_pipes_start(s, err)) != WT_OK)
		return rv;
	s->reqs = calloc(cfg->contexts, sizeof(*s->reqs));
	if (s->reqs != NULL)
		s->n_reqs = s->idle = cfg->contexts; /* idle until armed below */
	s->lst = calloc(cfg->listen.n, sizeof(*s->lst));
	s->urls = calloc(cfg->listen.n, sizeof(*s->urls));
	if (s->reqs == NULL || s->lst == NULL || s->urls == NULL)
		return wt_seterr(err, WT_ENOMEM, "server: out of memory");
	for (size_t i = 0; i < s->n_reqs; i++) {
		wd_req *r = &s->reqs[i];
		r->srv = s;
		wt_layout_init(&r->m.layout);
		if ((rv = nng_aio_alloc(&r->aio, req_cb, r)) != 0 ||
		    (rv = nng_ctx_open(&r->ctx, s->sock)) != 0)
			return wt_seterr(err, WT_EIO, "nng context %zu: %s", i, nng_strerror(rv));
	}
	if (cfg->listen.n == 0)
		return wt_seterr(err, WT_ECONFIG, "no listen URL; set listen or --listen");
	for (size_t i = 0; i < cfg->listen.n; i++) {
		if ((rv = listen_one(s, i, cfg->listen.v[i], err)) != WT_OK)
			return rv;
		s->n_urls = i + 1;
	}
	for (size_t i = 0; i < s->n_reqs; i++) {
		pthread_mutex_lock(&s->lk);
		s->reqs[i].state = WD_RECV;
		s->idle--;
		pthread_mutex_unlock(&s->lk);
		req_recv(&s->reqs[i]);
	}
	return WT_OK;
}

int wd_server_open(wd_server **out, const wd_config *cfg, wt_errbuf *err)
{
	wd_server *s;
	int rv = wd_server_create(&s, cfg, err);
	if (rv != WT_OK)
		return rv;
	if ((rv = wd_server_start(s, err)) != WT_OK) {
		wd_server_close(s);
		return rv;
	}
	*out = s;
	return WT_OK;
}

void wd_server_stop_start(wd_server *s)
{
	pthread_mutex_lock(&s->lk);
	s->start_stopped = true;
	wd_models *m = s->models; /* freed only by wd_server_close, after start */
	pthread_mutex_unlock(&s->lk);
	if (m != NULL)
		wd_models_cancel_opens(m);
}

int wd_server_create(wd_server **out, const wd_config *cfg, wt_errbuf *err)
{
	int rv = wd_config_check(cfg, err); /* before anything is opened */
	if (rv != WT_OK)
		return rv;
	/* prefaulted RAM is touched at once, not as layouts need it: more than
	 * half of the machine's would be the OOM killer's, not a slow start
	 * (checked first: a bad value is said before any model is read) */
	uint64_t ram = wd_usable_ram("/proc/self/cgroup", "/sys/fs/cgroup", wd_phys_ram());
	uint64_t pf = cfg->writeback_prefault_bytes < cfg->writeback_bytes
	                  ? cfg->writeback_prefault_bytes
	                  : cfg->writeback_bytes;
	if (ram > 0 && pf > ram / 2)
		return wt_seterr(
		    err, WT_EINVAL,
		    "writeback_prefault_bytes: %llu bytes (within writeback_bytes) is more "
		    "than half of the %llu bytes of RAM this process may use (the machine's, or "
		    "its cgroup's memory limit); lower it",
		    (unsigned long long)pf, (unsigned long long)ram);
	wd_server *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return wt_seterr(err, WT_ENOMEM, "server: out of memory");
	s->cfg = cfg;
	pthread_mutex_init(&s->lk, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_mutex_init(&s->authlog_lk, NULL);
	if (cfg->server_id[0] != '\0') {
		snprintf(s->server_id, sizeof(s->server_id), "%s", cfg->server_id);
	} else {
		char host[64] = "localhost";
		gethostname(host, sizeof(host) - 1);
		host[sizeof(host) - 1] = '\0';
		snprintf(s->server_id, sizeof(s->server_id), "%s:%ld", host, (long)getpid());
	}
	*out = s;
	return WT_OK;
}

int wd_server_start(wd_server *s, wt_errbuf *err)
{
	const wd_config *cfg = s->cfg;
	cache_opts co;
	cache_opts_init(&co);
	co.max_bytes = cfg->cache_max_bytes;
	co.mem_bytes = cfg->cache_memory_bytes;
	co.rehash_memory_hits = cfg->cache_rehash_memory_hits != 0;
	co.reclaim_ratio = (double)cfg->cache_reclaim_ratio / 100.0;
	co.chunk_bytes = (uint32_t)cfg->chunk_bytes;
	int rv = cache_open(&s->cache, cfg->cache_dir, &co, err);
	if (rv != WT_OK) {
		wt_errprefix(err, "cache_dir %s", cfg->cache_dir);
		return rv;
	}
	wd_srcmemo_init(&s->memo, s->cache);
	wd_models *m;
	if ((rv = wd_models_add_all(&m, cfg, &s->memo, err)) != WT_OK)
		return rv;
	/* published first: a stop during the opens reaches them */
	pthread_mutex_lock(&s->lk);
	s->models = m;
	bool stop = s->start_stopped;
	pthread_mutex_unlock(&s->lk);
	if (stop)
		wd_models_cancel_opens(m);
	wd_models_open_listed(m);
	pthread_mutex_lock(&s->lk);
	stop = s->start_stopped;
	pthread_mutex_unlock(&s->lk);
	if (stop)
		return wt_seterr(err, WT_ECANCELED,
		                 "start-up stopped by a signal while the models opened");
	if (wd_flights_create(&s->flights) != WT_OK || wd_lives_create(&s->lives) != WT_OK ||
	    wd_wbudget_create(&s->wbudget, cfg->writeback_bytes) != WT_OK ||
	    wd_wbudget_prefault(s->wbudget, (size_t)cfg->chunk_bytes,
	                        cfg->writeback_prefault_bytes) != WT_OK) {
		return wt_seterr(err, WT_ENOMEM, "server: out of memory");
	}
	unsigned lanes[2] = {(unsigned)cfg->workers, (unsigned)cfg->producers};
	if ((rv = wd_pool_create_lanes(&s->pool, lanes, 2, err)) != WT_OK ||
	    (rv = wd_pool_create(&s->admin_pool, WD_ADMIN_THREADS, err)) != WT_OK)
		return rv;
	if ((rv = wd_peers_open(&s->peers, cfg, s->server_id, err)) != WT_OK)
		return rv;
	if ((rv = wd_watch_start(s, err)) != WT_OK || (rv = wd_registry_start(s, err)) != WT_OK)
		return rv;
	/* the bulk listener first: a Hello answered as soon as the socket listens
	 * reads the stream URL it offers (test_client_stall under TSan saw the
	 * URL written while a worker read it) */
	if ((rv = wd_bulk_start(s, err)) != WT_OK)
		return rv;
	if ((rv = open_socket(s, err)) != WT_OK)
		return rv;
	return wd_metrics_start(s, err);
}

/* Wait until every context is idle (no receive armed, no request in work,
 * waiting or sending) or timeout_ms passes. Returns the requests still busy. */
static size_t drain_wait(wd_server *s, uint64_t timeout_ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	uint64_t ns = (uint64_t)dl.tv_nsec + timeout_ms * 1000000ull;
	dl.tv_sec += (time_t)(ns / 1000000000ull);
	dl.tv_nsec = (long)(ns % 1000000000ull);
	pthread_mutex_lock(&s->lk);
	while (s->idle < s->n_reqs) {
		if (pthread_cond_timedwait(&s->cv, &s->lk, &dl) != 0)
			break;
	}
	size_t left = s->busy;
	pthread_mutex_unlock(&s->lk);
	return left;
}

bool wd_req_park(wd_server *s, wd_req *r, size_t *waiting)
{
	pthread_mutex_lock(&s->lk);
	size_t n = 0;
	for (size_t i = 0; i < s->n_reqs; i++)
		n += s->reqs[i].state == WD_WAIT;
	bool room = n + s->n_reqs / 4 < s->n_reqs; /* under 4 contexts: no reserve */
	if (room)
		r->state = WD_WAIT;
	pthread_mutex_unlock(&s->lk);
	*waiting = n;
	return room;
}

void wd_park_full_msg(const wd_server *s, size_t waiting, char *buf, size_t cap)
{
	snprintf(buf, cap,
	         "%zu requests already wait here (productions, registrations, watches) and the "
	         "other %zu of the %zu contexts are kept for requests that do not wait; retry "
	         "later, or raise contexts",
	         waiting, s->n_reqs - waiting, s->n_reqs);
}

void wd_server_cancel_opens(wd_server *s)
{
	if (s != NULL && s->models != NULL)
		wd_models_cancel_opens(s->models);
}

size_t wd_server_drain(wd_server *s)
{
	if (s == NULL)
		return 0;
	if (s->drained)
		return s->drain_left;
	size_t left = 0;
	wd_metrics_stop(s); /* before anything it reads goes away */
	/* opens in progress (a registration, a new revision) end at their next
	 * block: requests keep the snapshots they have */
	if (s->models != NULL) /* NULL: a start that failed before the models */
		wd_models_cancel_opens(s->models);
	if (s->sock_open) {
		/* 1. stop accepting: new connections are refused (pipe_cb), receives are
		 * not re-armed. (Listeners stay open until nng_close: closing them first
		 * can stall nng 1.5.2's socket close.) */
		/* Cancel only pending receives (under the lock, so a request cannot move
		 * to WD_SEND meanwhile; nng completes a canceled aio on its own thread). */
		pthread_mutex_lock(&s->lk);
		s->draining = true;
		for (size_t i = 0; i < s->n_reqs; i++)
			if (s->reqs[i].state == WD_RECV)
				nng_aio_cancel(s->reqs[i].aio);
		pthread_mutex_unlock(&s->lk);
		wd_watch_stop(s);          /* parked watches get the current revision now */
		wd_registry_stop_waits(s); /* parked REGISTERs: how far their open got */
		/* 2. let in-flight requests finish, bounded */
		uint64_t drain_ms = wd_cfg_live(&s->cfg->drain_timeout_ms);
		left = drain_wait(s, drain_ms);
		if (left > 0)
			WT_LOG(WT_LOG_WARNING,
			       "drain: %zu requests still running after %llu ms; canceling them",
			       left, (unsigned long long)drain_ms);
		pthread_mutex_lock(&s->lk);
		size_t armed = s->n_reqs - s->idle - s->busy; /* canceled, not completed */
		pthread_mutex_unlock(&s->lk);
		if (armed > 0)
			WT_LOG(WT_LOG_WARNING,
			       "drain: %zu canceled receives not completed after %llu ms (nng); "
			       "closing the socket anyway",
			       armed, (unsigned long long)drain_ms);
	}
	/* productions still running (for those requests, or behind cut-through
	 * replies already sent) stop at their next tensor, and a read of a slow
	 * http/s3 source in flight ends now: nothing is served after this */
	atomic_store(&s->cancel, true);
	if (s->models != NULL)
		wd_models_abort_reads(s->models);
	/* 3. run out the pool: every job (and every waiter it wakes) replies on the
	 * still-open socket; nothing calls into nng concurrently with nng_close. */
	wd_bulk_stop(s); /* its requests in service run on the pool */
	wd_pool_destroy(s->pool);
	wd_pool_destroy(s->admin_pool); /* after the data pool: its jobs may queue here */
	s->pool = s->admin_pool = NULL;
	wd_registry_stop(s); /* after the admin pool: its jobs wait on these */
	wd_pipes_stop(s);
	if (s->sock_open)
		drain_wait(s, 1000); /* replies being sent to slow peers: a last moment */
	/* 4. close what is ours, before the socket: an nng callback from here on
	 * only answers "shutting down" or recycles a context after a send, and
	 * nng 1.5.2's socket close can wait forever (stopbound.c), so the cache is
	 * closed, not only crash-safe, whatever that close does */
	wd_watch_free(s);
	wd_flights_destroy(s->flights);
	wd_lives_destroy(s->lives); /* before the budget: entries may hold buffers */
	wd_wbudget_destroy(s->wbudget);
	wd_peers_close(s->peers);
	wd_models_close(s->models);
	cache_close(s->cache);
	s->flights = NULL;
	s->lives = NULL;
	s->wbudget = NULL;
	s->peers = NULL;
	s->models = NULL;
	s->cache = NULL;
	s->drained = true;
	s->drain_left = left;
	return left;
}

size_t wd_server_close(wd_server *s)
{
	if (s == NULL)
		return 0;
	size_t left = wd_server_drain(s);
	const wd_faults *f = atomic_load(&s->faults);
	if (f != NULL && f->before_socket_close != NULL)
		f->before_socket_close(f->ctx);
	if (s->sock_open) {
		/* 5. close: what is still pending completes with NNG_ECLOSED. Stop every
		 * context's aio and close the contexts first, then the socket. */
		for (size_t i = 0; i < s->n_reqs; i++) {
			if (s->reqs[i].aio == NULL)
				break; /* contexts past a failed set-up were never opened */
			nng_aio_stop(s->reqs[i].aio);
			nng_ctx_close(s->reqs[i].ctx);
		}
		wd_pipes_close_all(s);
		nng_close(s->sock);
	}
	/* 6. wait for every aio callback, then free */
	for (size_t i = 0; i < s->n_reqs; i++) {
		wd_req *r = &s->reqs[i];
		if (r->aio != NULL) {
			nng_aio_stop(r->aio);
			nng_msg *m = nng_aio_get_msg(r->aio);
			if (m != NULL)
				nng_msg_free(m);
			nng_aio_free(r->aio);
		}
		wt_layout_clear(&r->m.layout);
	}
	for (size_t i = 0; i < s->n_urls; i++)
		free(s->urls[i]);
	free(s->urls);
	free(s->lst);
	free(s->reqs);
	free(s->pipes);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->lk);
	pthread_mutex_destroy(&s->authlog_lk);
	free(s);
	return left;
}
