/*
 * client_int.h — private to client/: the client handle, endpoints, manifests
 * and the synchronous request helper shared by list/manifest/admin/fetch.
 */
#ifndef WT_CLIENT_CLIENT_INT_H
#define WT_CLIENT_CLIENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <nng/nng.h>

#include "client/client.h"
#include "proto/weights.pb-c.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/layout.h"

#define CLIENT_MAX_WINDOW    256u
#define CLIENT_MAX_CONNS     16u
#define CLIENT_MAX_ENDPOINTS 64u
/* REGISTER: the server answers within this while it opens the model */
#define CLIENT_REGISTER_POLL_MS 1000u
#define CLIENT_MAX_SHARD_ID     256u       /* bytes of an opaque shard id */
#define CLIENT_MAX_TENSORS      (1u << 22) /* tensors in one manifest */

/* Whether a socket has a connection now (pipe notifications; conn.c). */
typedef struct client_sockmon {
	_Atomic int pipes;           /* connected pipes */
	_Atomic uint64_t down_ns;    /* when the last pipe went away */
	_Atomic uint64_t adds;       /* connections made (nng reconnects on its own) */
	_Atomic uint64_t hello_adds; /* adds when this socket's last Hello was answered */
} client_sockmon;

typedef struct client_ep {
	char *url; /* owned; immutable after open */
	/* fields below guarded by wt_client.lk; n_socks, socks and mons change
	 * only by the thread that set busy (conn.c: ep_claim), which reads them
	 * without the lock */
	/* a thread opens or greets this endpoint's connections (c->lk released:
	 * dials and Hellos wait); others wait on c->cv */
	bool busy;
	size_t n_socks;                         /* connections open: socks[0..n_socks) */
	nng_socket socks[CLIENT_MAX_CONNS];     /* each one dialer, greeted (Hello) */
	client_sockmon *mons[CLIENT_MAX_CONNS]; /* socks[k]'s monitor; owned */
	uint64_t server_max_message_bytes;      /* from HelloReply; 0 = unknown */
	uint64_t server_max_chunk_bytes;
	char *stream_url;          /* HelloReply.stream_url (bulk data plane); owned; NULL = none */
	uint8_t stream_ticket[16]; /* HelloReply.stream_ticket */
	bool stream_live;          /* HelloReply.stream_live: live requests on the stream */
	/* bulk streams to stream_url, open with nothing in flight, that finished
	 * fetches left for the next ones (fetch_bulk.c); dropped when the offer
	 * changes (a restarted server) and at close */
	nng_stream *idle[CLIENT_MAX_CONNS];
	size_t n_idle;
} client_ep;

/* fetch_bulk.c: close endpoint ep's idle bulk streams (c->lk held, or no other
 * thread uses c). */
void client_bulk_drop_idle(wt_client *c, size_t ep);

/* A chunk request over messages (fetch_msg.c); one the fetch walked away from
 * stays on wt_client.left until it ends. */
typedef struct fetch_req fetch_req;

/* Free the left requests that ended; wait: first wait for the others (at most
 * their request timeouts, 5 s more for a completion nng lost; nothing is
 * canceled: closing a socket after a canceled receive hung nng_close under
 * ThreadSanitizer). Returns how many are still in flight. fetch_msg.c. */
size_t client_reqs_reap(wt_client *c, int wait);

/* wt_client_fetch, also stopped when *cancel (read atomically; may be NULL)
 * becomes non-zero: at the next chunk, retry or backoff, and within 100 ms
 * while it waits for a chunk (its requests are left in flight: fetch_msg.c);
 * WT_ECANCELED with the sink aborted. fetch.c; async.c's wt_fetch_cancel. */
int client_fetch(wt_client *c, const wt_manifest *m, wt_sink *sink, const wt_fetch_opts *o,
                 const int *cancel, wt_errbuf *err);

struct wt_client {
	wt_client_opts o; /* copy; o.endpoints/token/client_id point at the copies below */
	char **urls;      /* n_eps owned strings */
	client_ep *eps;
	size_t n_eps;
	char *token;
	char *tls_ca, *tls_cert_key; /* TLS files (tls+tcp://); owned; NULL = none */
	char *client_id;
	pthread_mutex_t lk;       /* guards eps[*] (but url); never held across a network wait */
	pthread_cond_t cv;        /* with lk: an endpoint's busy went false */
	_Atomic uint64_t next_id; /* request ids: 64-bit, never reused */
	_Atomic int verify;       /* 1; nothing in libweights changes it: only bench_fetch
	                             (bench/util/noverify.c) turns it off to measure the checks */
	pthread_mutex_t req_lk;   /* fetch_msg.c: chunk requests' owners, left */
	pthread_cond_t req_cv;    /* with req_lk: a request ended or a callback left */
	fetch_req *left;          /* requests abandoned in flight (fetch_msg_abandon) */
	size_t n_left;
};

typedef struct client_chunk {
	uint8_t hash[16];
	uint64_t off; /* within the tensor */
	uint64_t nbytes;
	size_t tensor;
	int known; /* hash known (always, except in a live manifest) */
} client_chunk;

typedef struct client_tensor {
	char *name; /* owned */
	wt_dtype dtype;
	int ndim;
	int64_t shape[WT_MAX_DIMS];
	uint64_t nbytes;
	uint8_t hash[16];
	wt_tensor_role role;
	int requantized;
	int known;          /* hash known (always, except in a live manifest) */
	size_t first_chunk; /* into wt_manifest.chunks */
	size_t n_chunks;
} client_tensor;

struct wt_manifest {
	uint32_t format_version;
	char *model; /* as the server names it; owned */
	char *revision;
	char *layout_text;
	uint32_t tp_rank;
	uint32_t ep_rank;
	uint8_t *shard_id; /* owned */
	size_t shard_id_len;
	client_tensor *tensors; /* name order; owned */
	size_t n_tensors;
	client_chunk *chunks; /* tensor order, then offset order; owned */
	size_t n_chunks;
	uint64_t total_bytes;
	uint64_t checkpoint_bytes;
	uint64_t max_chunk_nbytes; /* largest chunk */
	int live; /* a live manifest (cut-through): chunks asked by index, hashes come with them */
	int tied_lm_head;
	char **skipped;
	size_t n_skipped;
	/* what was asked (to ask again when resuming) and where to route it */
	char *served_by; /* URL of the endpoint that sent it (a fetch starts there); owned */
	char *req_model;
	wt_layout req_layout;
	uint8_t route_key[16];
	/* mode.c: how it was chosen */
	int mode;          /* WT_MODE_PARTITIONED or WT_MODE_RAW */
	char *mode_reason; /* owned; "" when the mode was asked for */
	/* A subset of a shard (update.c): sub_map[i] = index of tensor i in the full
	 * manifest of sub_full_tensors tensors; NULL = the whole shard. Owned. */
	size_t *sub_map;
	size_t sub_full_tensors;
};

/* What one manifest request asks besides model and layout. */
typedef struct client_mreq {
	bool plan_only;        /* plan only: the reply has no tensors (check_layout) */
	bool cache_only;       /* wt_manifest_opts.cache_only */
	const char *revision;  /* wt_manifest_opts.revision; NULL = current */
	Weights__Reply **keep; /* not NULL: the decoded reply is handed back here
	                          (client_get_manifest_pb); else freed */
} client_mreq;

/* client.c: one manifest request, routed and failed over like wt_client_get_manifest. */
int client_get_manifest_once(wt_client *c, const char *model, const wt_layout *layout,
                             const client_mreq *q, wt_manifest **out, wt_errbuf *err);

/* mode.c: a manifest in the client's mode (auto, partitioned, raw) with q applied
 * to every request; model and layout checked by the caller. */
int client_get_manifest_mode(wt_client *c, const char *model, const wt_layout *layout,
                             const client_mreq *q, wt_manifest **out, wt_errbuf *err);

/* update.c: does full (a manifest asked again) list the same tensors and
 * chunks as m (a whole shard or a subset of one)? */
int client_manifest_same(const wt_manifest *full, const wt_manifest *m);

/* Log through the user's callback (cheap when off). */
void client_log(const wt_client *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* nng error -> wt_err (WT_ETIMEDOUT, WT_EUNAVAIL for connection trouble, ...). */
int client_nng_err(int nng_rv);

/* 1 if an error of this code is worth retrying (timeouts, disconnects, busy). */
int client_retryable(int code);

/* Frame a Request into a new nng message (owned by the caller). */
int client_frame(const Weights__Request *req, nng_msg **out, wt_errbuf *err);

/*
 * Socket `conn` (< o.connections) of endpoint ep; every socket is one connection.
 * Sockets 0..conn are opened, dialed (synchronously, connect_timeout_ms) and
 * greeted (Hello) on first use; later reconnects happen in the background.
 * Control requests use socket 0; a fetch spreads its window over all of them.
 * Connection refused -> WT_EUNAVAIL naming the URL. *sock stays valid until
 * wt_client_close().
 */
int client_ep_socket(wt_client *c, size_t ep, size_t conn, nng_socket *sock, wt_errbuf *err);

/*
 * Up to `want` (>= 1) connections of endpoint ep into socks[0..*n), and their
 * monitors into mons[0..*n) (borrowed: valid until wt_client_close): opened,
 * dialed and greeted on first use like client_ep_socket. When connection 0
 * works but a later one cannot be opened (slow or dropped Hello, refused),
 * the fetch goes on with fewer: *n < want and a warning is logged. An error
 * only when not even one connection works.
 */
int client_ep_sockets(wt_client *c, size_t ep, size_t want, nng_socket *socks,
                      client_sockmon **mons, size_t *n, wt_errbuf *err);

/* dial.c: dial s to url within timeout_ms (WT_EUNAVAIL naming url if not). On
 * failure s is closed and mon freed, now or by the dial thread once nng's own
 * dial returns; on success both stay the caller's. */
int client_dial_bounded(const wt_client *c, nng_socket s, client_sockmon *mon, const char *url,
                        uint32_t timeout_ms, wt_errbuf *err);

/* True when m's socket has had no connection for connect_timeout_ms + 1 s:
 * the daemon died (or its host went away) and nng's dialer cannot reconnect;
 * a request queued on it would wait for its whole timeout. */
bool client_sockmon_lost(const wt_client *c, const client_sockmon *m);

/* Greet endpoint ep again on each open socket: a token is checked per connection,
 * and a connection may have been re-established since the first Hello. */
int client_ep_rehello(wt_client *c, size_t ep, wt_errbuf *err);

/*
 * Parse a reply message: framing, id echo, and the body kind `want`. A server
 * Error reply returns its code with "endpoint URL: <server message>", and sets
 * *answered (optional) to tell it from a failure on the way. On success *out
 * must be freed with wire_reply_free(); *tail points into msg (borrowed).
 */
int client_parse_reply(const wt_client *c, size_t ep, nng_msg *msg, uint64_t id,
                       Weights__Reply__BodyCase want, Weights__Reply **out, const uint8_t **tail,
                       size_t *tail_len, bool *answered, wt_errbuf *err);

/*
 * One synchronous request/reply on endpoint ep (req->id is set here). On
 * success *out holds the decoded reply of kind want (wire_reply_free()). An
 * error the server answered sets *answered (optional; see client_parse_reply).
 */
int client_call(wt_client *c, size_t ep, Weights__Request *req, uint32_t timeout_ms,
                Weights__Reply__BodyCase want, Weights__Reply **out, bool *answered,
                wt_errbuf *err);

/* Ask endpoint ep for the manifest of model/layout (rank inside layout). */
int client_request_manifest(wt_client *c, size_t ep, const char *model, const wt_layout *layout,
                            wt_manifest **out, wt_errbuf *err);

/*
 * Versioned caller structs (abi.c): dst gets the library's defaults, then the
 * caller's members that end within its struct_size. WT_EVERSION for a
 * struct_size of 0, larger than this library's, or not on a member end.
 * client_fetch_opts_in accepts src NULL (all defaults); client_sink_ops_in
 * also requires every callback (WT_EINVAL naming the NULL one).
 */
int client_opts_in(wt_client_opts *dst, const wt_client_opts *src, wt_errbuf *err);
int client_fetch_opts_in(wt_fetch_opts *dst, const wt_fetch_opts *src, wt_errbuf *err);
int client_sink_ops_in(wt_sink_ops *dst, const wt_sink *sink, wt_errbuf *err);
/* src NULL = the defaults. */
int client_manifest_opts_in(wt_manifest_opts *dst, const wt_manifest_opts *src, wt_errbuf *err);

/* Backoff before attempt n (0-based): initial * 2^n, capped. */
uint32_t client_backoff_ms(const wt_client *c, uint32_t attempt);

void client_sleep_ms(uint32_t ms);

/* How long a wait sees nothing from its endpoint (a manifest's reply, the
 * bytes of a fetch's bulk streams) before it asks with a Hello whether the
 * daemon is alive, and how long that Hello may take: connect_timeout_ms, at
 * least 1 s. A stopped or hung daemon keeps its connections up, so only its
 * silence tells. */
uint32_t client_quiet_probe_ms(const wt_client *c);

/* ---- retry budget (retry.c) ---- */

#define CLIENT_RETRY_BUDGET_MS  30000u /* default of wt_client_opts.retry_budget_ms */
#define CLIENT_MANIFEST_REFRESH 2u     /* manifests asked again per fetch after WT_ECORRUPT */

uint64_t client_now_ms(void); /* monotonic */

/* One operation's retry budget: t0_ms is the first failure (0 = none yet). */
typedef struct client_budget {
	uint64_t t0_ms;
	uint32_t passes;
} client_budget;

/* Start the clock at the first failure (no-op if running). */
void client_budget_start(client_budget *b);

/* After every endpoint failed: 1 if the budget (o.retry_budget_ms since b's
 * first failure) allows another round, with the backoff to sleep first in
 * *ms, else 0. err is the last failure, for the log. */
int client_budget_next(const wt_client *c, client_budget *b, const wt_errbuf *err, uint32_t *ms);
/* client_budget_next, the backoff slept. */
int client_budget_again(const wt_client *c, client_budget *b, const wt_errbuf *err);

/* One attempt of an operation on endpoint ep; *answered is set (it starts
 * false) when the error returned is the server's own Error reply. */
typedef int (*client_ep_fn)(wt_client *c, size_t ep, void *arg, bool *answered, wt_errbuf *err);

/* client_each_ep flags: an error the server answered (other than WT_EBUSY)
 * is the result, at once. For admin requests: the server did the work and
 * it failed there (a registration it could not save); asking again, or
 * asking another node (another registry), is not what the caller asked. */
#define CLIENT_ANSWER_FINAL 1u

/* A timeout in ms as nng's duration (an int32: a cast of 2^31 ms or more gave
 * a negative one, which expires at once): capped at INT32_MAX (24.8 days). */
nng_duration client_duration(uint64_t ms);

/*
 * Run fn on the endpoints in `order` (NULL = list order) until one succeeds:
 * per endpoint up to max_retries retries with backoff, except that WT_EUNAVAIL
 * (connect phase) and an error the server answered (it already retried its
 * source) move on at once; after a round where all failed, another round
 * while the retry budget lasts (a source outage may end). A non-retryable
 * error returns at once. WT_EBUSY is retried as the server asks.
 * *used (optional) gets the endpoint that succeeded. Budget spent: the last
 * error an endpoint answered, with its code and message, or WT_EUNAVAIL when
 * none answered.
 */
int client_each_ep(wt_client *c, const size_t *order, unsigned flags, client_ep_fn fn, void *arg,
                   size_t *used, wt_errbuf *err);

#endif
