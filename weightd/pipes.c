/*
 * pipes.c — the server's table of connected pipes (nng connections): the role
 * each one proved in Hello, the connection cap and the Hello deadline.
 *
 * - max_connections: a pipe over the cap is closed in NNG_PIPE_EV_ADD_PRE,
 *   before any request of it is read (logged at most once a second).
 * - hello_timeout_ms (when auth_token is set): a sweep every
 *   min(hello_timeout_ms / 2, 1 s) closes the pipes that have not proved a
 *   role that long after connecting, so idle unauthenticated connections do
 *   not hold a slot (and the receive buffer nng keeps for each) for ever.
 *
 * Entries are added in ADD_PRE and removed in REM_POST, under srv->lk.
 */
#include <stdlib.h>

#include "weightd/server_int.h"

static wd_pipe *pipe_find(wd_server *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_pipes; i++)
		if (s->pipes[i].id == id)
			return &s->pipes[i];
	return NULL;
}

int wd_server_pipe_role(wd_server *s, uint32_t pipe_id)
{
	pthread_mutex_lock(&s->lk);
	wd_pipe *p = pipe_find(s, pipe_id);
	int role = p != NULL ? p->role : WD_ROLE_NONE;
	pthread_mutex_unlock(&s->lk);
	return role;
}

void wd_server_pipe_set_role(wd_server *s, uint32_t pipe_id, int role)
{
	pthread_mutex_lock(&s->lk);
	wd_pipe *p = pipe_find(s, pipe_id);
	if (p != NULL)
		p->role = role;
	pthread_mutex_unlock(&s->lk);
}

/* Make room for one more entry; false on ENOMEM. Under s->lk. */
static bool pipes_grow(wd_server *s)
{
	if (s->n_pipes < s->cap_pipes)
		return true;
	size_t nc = s->cap_pipes ? s->cap_pipes * 2 : 16;
	wd_pipe *v = realloc(s->pipes, nc * sizeof(*v));
	if (v == NULL)
		return false;
	s->pipes = v;
	s->cap_pipes = nc;
	return true;
}

void wd_pipes_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	wd_server *s = arg;
	uint32_t id = (uint32_t)nng_pipe_id(p);
	pthread_mutex_lock(&s->lk);
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		bool full = s->n_pipes >= s->cfg->max_connections;
		if (s->draining || full || !pipes_grow(s)) {
			uint64_t now = common_now_ns();
			bool log = full && now - s->capped_log_ns >= 1000000000ull;
			if (log)
				s->capped_log_ns = now;
			size_t n = s->n_pipes;
			pthread_mutex_unlock(&s->lk);
			if (log)
				WT_LOG(WT_LOG_WARNING,
				       "connection refused: %zu connections open, max_connections "
				       "%llu (logged at most once a second)",
				       n, (unsigned long long)s->cfg->max_connections);
			nng_pipe_close(p); /* draining, over the cap, or untrackable */
			return;
		}
		s->pipes[s->n_pipes++] =
		    (wd_pipe){.id = id, .role = WD_ROLE_NONE, .added_ns = common_now_ns()};
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		wd_pipe *e = pipe_find(s, id);
		if (e != NULL)
			*e = s->pipes[--s->n_pipes];
	}
	pthread_mutex_unlock(&s->lk);
}

size_t wd_server_n_pipes(wd_server *s)
{
	pthread_mutex_lock(&s->lk);
	size_t n = s->n_pipes;
	pthread_mutex_unlock(&s->lk);
	return n;
}

/* Ids of the pipes that match (all, or unauthenticated since before cutoff_ns). */
static uint32_t *pipes_collect(wd_server *s, bool all, uint64_t cutoff_ns, size_t *n_out)
{
	pthread_mutex_lock(&s->lk);
	uint32_t *ids = s->n_pipes ? malloc(s->n_pipes * sizeof(*ids)) : NULL;
	size_t n = 0;
	for (size_t i = 0; ids != NULL && i < s->n_pipes; i++)
		if (all || (s->pipes[i].role == WD_ROLE_NONE && s->pipes[i].added_ns < cutoff_ns))
			ids[n++] = s->pipes[i].id;
	pthread_mutex_unlock(&s->lk);
	*n_out = n;
	return ids;
}

static void pipes_close_ids(const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		nng_pipe p = NNG_PIPE_INITIALIZER;
		p.id = ids[i];
		nng_pipe_close(p);
	}
}

void wd_pipes_close_all(wd_server *s)
{
	size_t n;
	uint32_t *ids = pipes_collect(s, true, 0, &n);
	pipes_close_ids(ids, n);
	free(ids);
}

static nng_duration sweep_ms(const wd_config *cfg)
{
	uint64_t t = wd_cfg_live(&cfg->hello_timeout_ms) / 2;
	return (nng_duration)(t == 0 || t > 1000 ? 1000 : t < 10 ? 10 : t);
}

static void sweep_cb(void *arg)
{
	wd_server *s = arg;
	if (nng_aio_result(s->reap_aio) != 0)
		return; /* stopped (close) */
	uint64_t to = wd_cfg_live(&s->cfg->hello_timeout_ms);
	uint64_t now = common_now_ns();
	if (to > 0 && now > to * 1000000ull) {
		size_t n;
		uint32_t *ids = pipes_collect(s, false, now - to * 1000000ull, &n);
		if (n > 0)
			WT_LOG(WT_LOG_INFO, "closing %zu connections without Hello for %llu ms", n,
			       (unsigned long long)to);
		pipes_close_ids(ids, n);
		free(ids);
	}
	nng_sleep_aio(sweep_ms(s->cfg), s->reap_aio);
}

int wd_pipes_start(wd_server *s, wt_errbuf *err)
{
	int rv;
	if ((rv = nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_PRE, wd_pipes_cb, s)) != 0 ||
	    (rv = nng_pipe_notify(s->sock, NNG_PIPE_EV_REM_POST, wd_pipes_cb, s)) != 0)
		return wt_seterr(err, WT_EIO, "nng pipe notify: %s", nng_strerror(rv));
	if (s->cfg->auth_token[0] == '\0')
		return WT_OK; /* data needs no Hello: nothing to sweep */
	if ((rv = nng_aio_alloc(&s->reap_aio, sweep_cb, s)) != 0)
		return wt_seterr(err, WT_ENOMEM, "hello sweep: %s", nng_strerror(rv));
	nng_sleep_aio(sweep_ms(s->cfg), s->reap_aio);
	return WT_OK;
}

void wd_pipes_stop(wd_server *s)
{
	if (s->reap_aio != NULL) {
		nng_aio_stop(s->reap_aio);
		nng_aio_free(s->reap_aio);
		s->reap_aio = NULL;
	}
}
