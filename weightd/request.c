/*
 * request.c — parse a request, check it, and dispatch by kind: Hello,
 * ListModels, Manifest, Chunk, Admin, Watch (watch.c). Every malformed request gets an Error
 * reply (WT_EPROTO, WT_ETOOBIG, ...) and the daemon keeps serving.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weightd/server_int.h"
#include "weights/weights.h"

nng_msg *wd_reply_msg(const Weights__Reply *rp)
{
	size_t n = wire_framed_size(&rp->base);
	nng_msg *m;
	if (nng_msg_alloc(&m, n) != 0)
		return NULL;
	if (wire_frame(&rp->base, nng_msg_body(m), n) != n) {
		nng_msg_free(m);
		return NULL;
	}
	return m;
}

nng_msg *wd_reply_error(uint64_t id, int code, const char *msg)
{
	/* a client refuses a reply whose strings are not UTF-8 (proto/wire_check.c):
	 * a message that quotes a request's text cut at a byte count must not turn
	 * the error into WT_EPROTO there */
	char *text = strdup(msg);
	if (text != NULL)
		common_utf8_scrub(text);
	Weights__Error e = WEIGHTS__ERROR__INIT;
	e.code = (uint32_t)code;
	e.message = text != NULL ? text : (char *)wt_strerror(code);
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = id;
	rp.body_case = WEIGHTS__REPLY__BODY_ERROR;
	rp.error = &e;
	WT_LOG(WT_LOG_DEBUG, "request %llu: %s: %s", (unsigned long long)id, wt_errname(code),
	       e.message);
	nng_msg *m = wd_reply_msg(&rp);
	free(text);
	return m;
}

static nng_msg *hello_reply(wd_req *r, const Weights__Hello *h)
{
	wd_server *s = r->srv;
	if (h->protocol_version != WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION) {
		char msg[200];
		snprintf(msg, sizeof(msg),
		         "protocol version %u is not supported; this server speaks version %d",
		         h->protocol_version, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION);
		return wd_reply_error(r->id, WT_EVERSION, msg);
	}
	int role = WD_ROLE_NONE;
	int rv = wd_auth_hello(s->cfg, h->token, &role);
	/* Every Hello sets the role: a wrong token de-authenticates the connection. */
	wd_server_pipe_set_role(s, r->pipe_id, role);
	if (rv != WT_OK) {
		char what[200];
		snprintf(what, sizeof(what),
		         "hello from '%.64s' (connection %u): bad or missing token",
		         h->client_id ? h->client_id : "", r->pipe_id);
		wd_auth_log_failure(s, what);
		return wd_reply_error(r->id, WT_EPERM,
		                      "bad or missing token; pass the server's auth_token (or "
		                      "admin_token for admin operations)");
	}
	Weights__HelloReply hr = WEIGHTS__HELLO_REPLY__INIT;
	hr.protocol_version = WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION;
	hr.server_id = s->server_id;
	hr.server_version = WT_VERSION_STRING; /* one release number: weightd, libweights */
	hr.max_message_bytes = s->cfg->max_request_bytes;
	hr.max_chunk_bytes = s->cfg->chunk_bytes;
	hr.cut_through = true;
	char surl[600];
	const uint8_t *ticket;
	/* only after the token check above */
	if (wd_bulk_offer(s, r->pipe_id, surl, sizeof(surl), &ticket)) {
		hr.stream_url = (char *)surl;
		hr.stream_ticket.data = (uint8_t *)ticket;
		hr.stream_ticket.len = 16;
		hr.stream_live = true; /* live (cut-through) requests too (bulk.c) */
	}
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = r->id;
	rp.body_case = WEIGHTS__REPLY__BODY_HELLO;
	rp.hello = &hr;
	return wd_reply_msg(&rp);
}

static nng_msg *list_reply(wd_req *r)
{
	wd_server *s = r->srv;
	wd_model_info *info = NULL;
	size_t n = 0;
	if (wd_models_list(s->models, &info, &n) != WT_OK)
		return wd_reply_error(r->id, WT_ENOMEM, "out of memory listing models");
	Weights__ModelInfo *mi = calloc(n ? n : 1, sizeof(*mi));
	Weights__ModelInfo **mp = calloc(n ? n : 1, sizeof(*mp));
	nng_msg *m = NULL;
	if (mi == NULL || mp == NULL) {
		m = wd_reply_error(r->id, WT_ENOMEM, "out of memory listing models");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		Weights__ModelInfo init = WEIGHTS__MODEL_INFO__INIT;
		mi[i] = init;
		mi[i].name = (char *)info[i].name;
		mi[i].uri = (char *)info[i].uri;
		mi[i].config_override = (char *)(info[i].override ? info[i].override : "");
		mi[i].available = info[i].available;
		mi[i].source = (char *)wd_model_source_name(info[i].source);
		mi[i].opening = info[i].opening || info[i].pending;
		mi[i].registering = info[i].pending;
		mi[i].open_read = info[i].open_read;
		mi[i].open_total = info[i].open_total;
		if (info[i].snap != NULL) {
			const ckpt *ck = info[i].snap->ck;
			mi[i].revision = info[i].snap->revision;
			mi[i].architecture = ckpt_get_config(ck)->architecture;
			mi[i].checkpoint_bytes = ckpt_total_bytes(ck);
			mi[i].n_tensors = (uint32_t)ckpt_n_tensors(ck);
		} else {
			mi[i].error = info[i].error;
		}
		mp[i] = &mi[i];
	}
	Weights__ModelList ml = WEIGHTS__MODEL_LIST__INIT;
	ml.n_models = n;
	ml.models = mp;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = r->id;
	rp.body_case = WEIGHTS__REPLY__BODY_MODELS;
	rp.models = &ml;
	m = wd_reply_msg(&rp);
out:
	wd_models_list_free(info, n);
	free(mp);
	free(mi);
	return m;
}

static const char *kind_name(Weights__Request__BodyCase c)
{
	switch (c) {
	case WEIGHTS__REQUEST__BODY_HELLO:
		return "hello";
	case WEIGHTS__REQUEST__BODY_LIST_MODELS:
		return "list_models";
	case WEIGHTS__REQUEST__BODY_MANIFEST:
		return "manifest";
	case WEIGHTS__REQUEST__BODY_CHUNK:
		return "chunk";
	case WEIGHTS__REQUEST__BODY_ADMIN:
		return "admin";
	case WEIGHTS__REQUEST__BODY_WATCH:
		return "watch";
	default:
		return "unknown";
	}
}

/* REGISTER / UNREGISTER, on the admin pool's thread; replies itself (a
 * REGISTER maybe later: r must not be touched after the call). */
static void admin_work(wd_job *job)
{
	wd_req *r = (wd_req *)((char *)job - offsetof(wd_req, job));
	Weights__Request *rq = r->admin_rq;
	r->admin_rq = NULL;
	wd_register_request(r, rq->admin);
	wire_request_free(rq);
}

void wd_handle(wd_req *r, nng_msg *msg)
{
	wd_server *s = r->srv;
	atomic_fetch_add(&s->requests, 1);
	r->t0_ns = common_now_ns();
	r->id = 0;
	r->kind = "garbled";
	r->pipe_id = (uint32_t)nng_pipe_id(nng_msg_get_pipe(msg));
	size_t len = nng_msg_len(msg);
	char emsg[300];
	if (len > s->cfg->max_request_bytes) {
		nng_msg_free(msg);
		snprintf(emsg, sizeof(emsg),
		         "request of %zu bytes is over max_request_bytes %llu; requests are small "
		         "control messages",
		         len, (unsigned long long)s->cfg->max_request_bytes);
		wd_req_reply(r, wd_reply_error(0, WT_ETOOBIG, emsg));
		return;
	}
	Weights__Request *rq = NULL;
	wt_errbuf err;
	int rv = wire_parse_request(nng_msg_body(msg), len, s->cfg->max_request_bytes, &rq, &err);
	nng_msg_free(msg);
	if (rv != WT_OK) {
		wd_req_reply(r, wd_reply_error(0, rv, err.msg));
		return;
	}
	r->id = rq->id;
	r->kind = kind_name(rq->body_case);
	nng_msg *reply = NULL;
	const char *why = wd_auth_check(s->cfg, wd_server_pipe_role(s, r->pipe_id), rq);
	if (why != NULL) {
		reply = wd_reply_error(r->id, WT_EPERM, why);
		goto done;
	}
	switch (rq->body_case) {
	case WEIGHTS__REQUEST__BODY_HELLO:
		reply = hello_reply(r, rq->hello);
		break;
	case WEIGHTS__REQUEST__BODY_LIST_MODELS:
		reply = list_reply(r);
		break;
	case WEIGHTS__REQUEST__BODY_MANIFEST:
		wd_manifest_start(r, rq->manifest); /* replies itself, maybe later */
		wire_request_free(rq);
		return;
	case WEIGHTS__REQUEST__BODY_CHUNK:
		if (rq->chunk->live) {
			wd_live_chunk_start(r, rq->chunk); /* replies itself, maybe later */
			wire_request_free(rq);
			return;
		}
		reply = wd_chunk_reply(s, r->id, rq->chunk);
		break;
	case WEIGHTS__REQUEST__BODY_WATCH:
		wd_watch_request(r, rq->watch); /* replies itself, maybe later (watch.c) */
		wire_request_free(rq);
		return;
	case WEIGHTS__REQUEST__BODY_ADMIN:
		if (rq->admin->op == WEIGHTS__ADMIN_REQUEST__OP__OP_WARM) {
			wd_warm_start(r, rq->admin);
			wire_request_free(rq);
			return;
		}
		if (rq->admin->op == WEIGHTS__ADMIN_REQUEST__OP__OP_REGISTER ||
		    rq->admin->op == WEIGHTS__ADMIN_REQUEST__OP__OP_UNREGISTER) {
			/* The source check may wait on a slow URL: run it on the admin
			 * thread so the data workers keep serving. */
			r->admin_rq = rq;
			r->job.fn = admin_work;
			wd_pool_submit(s->admin_pool, &r->job);
			return;
		}
		reply = wd_admin_reply(s, r->id, rq->admin);
		break;
	default:
		reply =
		    wd_reply_error(r->id, WT_EPROTO,
		                   "request has no known body (hello, list_models, manifest, "
		                   "chunk, admin, watch); this server speaks protocol version 1");
		break;
	}
done:
	wire_request_free(rq);
	wd_req_reply(r, reply);
}
