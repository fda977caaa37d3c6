/*
 * server_int.h — private to weightd/ (and its unit tests): the server's
 * internals: requests and their states, pipes and roles, the peer tier,
 * metrics, struct wd_server, and the request handlers of server.c,
 * request.c, manifest.c, chunk.c, admin.c, registry.c, produce.c, peer.c.
 * The services it uses (pool, flights, models, ...) are in weightd_int.h.
 */
#ifndef WT_WEIGHTD_SERVER_INT_H
#define WT_WEIGHTD_SERVER_INT_H

#include <nng/nng.h>
#include <stdatomic.h>

#include "cache/cache.h"
#include "proto/wire.h"
#include "weightd/weightd_int.h"

/* srcmemo.c: a ckpt_memo that keeps source-object digests as notes in cache c. */
void wd_srcmemo_init(ckpt_memo *memo, cache *c);

/* ===================== peer tier (peer.c) ===================== */

#define WD_MAX_PEERS 64 /* the client's endpoint ceiling */

typedef struct wd_peers wd_peers;

/*
 * The other nodes of the cache tier (cfg->peer, less this node's own listen
 * URLs): one libweights client each, connected lazily. *out = NULL when no
 * peer remains. WT_ECONFIG naming the URL for a bad one or too many. A
 * workers = 1 node keeps no peer (logged): answering peers needs a free worker.
 * On success the caller owns *out (wd_peers_close()).
 */
int wd_peers_open(wd_peers **out, const wd_config *cfg, const char *server_id, wt_errbuf *err);
void wd_peers_close(wd_peers *p); /* NULL-safe; no fill may be running */

/*
 * Fill every rank of layout l (model at snap's revision) into the cache from
 * a peer, trying them in rendezvous order of (model, layout without rank).
 * Called by the leader of the layout's flight. Each rank is asked cache-only at
 * snap->revision; a peer missing a rank, at another revision, down, or sending
 * bad bytes is skipped. Ranks already committed are kept. WT_OK when every rank
 * is committed; otherwise an error (WT_ENOTFOUND when no peer is configured,
 * WT_EBUSY when every spare worker is already filling) and the caller produces
 * from the object store. Never leaves an uncommitted writer behind.
 */
int wd_peer_fill(wd_server *s, const char *model, wd_snap *snap, const wt_layout *l,
                 const char *layout_text, wt_errbuf *err);

/* Request states (STYLE.md 11). */
enum { WD_IDLE = 0, WD_RECV, WD_WORK, WD_WAIT, WD_SEND };

/* A manifest (or admin WARM) request in progress: survives a park on a flight. */
typedef struct wd_mreq {
	bool warm;       /* admin WARM: reply AdminReply, not the Manifest */
	bool cache_only; /* ManifestRequest.cache_only: a miss is WT_ENOTFOUND, nothing more */
	wd_snap *snap;   /* reference */
	char *model;     /* owned */
	wt_layout layout;
	uint32_t rank;
	char layout_text[WD_LAYOUT_TEXT_MAX];
	uint8_t id[WD_SHARD_ID_BYTES];
	wt_hash128 key;
	int tries;
	int changes; /* productions that found the source changed */
	int flight_rv;
	wt_errbuf flight_err;
} wd_mreq;

typedef struct wd_req {
	wd_server *srv;
	int state; /* guarded by srv->lk */
	nng_ctx ctx;
	nng_aio *aio;
	wd_job job;
	wd_flight_waiter waiter;
	/* fields below belong to whoever runs the request now (one thread) */
	uint64_t id; /* Request.id, echoed */
	uint32_t pipe_id;
	uint64_t t0_ns;
	const char *kind; /* for the debug log line */
	wd_mreq m;
	Weights__Request *admin_rq;  /* REGISTER/UNREGISTER handed to the admin pool; owned */
	struct wd_wreq {             /* a parked Watch request (watch.c) */
		struct wd_req *next; /* in the watch list; guarded by the watch lock */
		char *model;         /* owned */
		char known[80];      /* known_revision */
		uint64_t deadline_ns;
	} w;
} wd_req;

/* Role of a connection (auth.c): set by its latest Hello. */
enum { WD_ROLE_NONE = 0, WD_ROLE_DATA = 1, WD_ROLE_ADMIN = 2 };

typedef struct wd_pipe {
	uint32_t id;
	int role;          /* WD_ROLE_*, from the latest Hello */
	uint64_t added_ns; /* connect time (hello_timeout_ms) */
} wd_pipe;

/* ===================== metrics (metrics.c) ===================== */

#define WD_HIST_BUCKETS 16 /* plus +Inf */

/* A latency histogram: fixed buckets (metrics.c), atomic, lock-free. */
typedef struct wd_hist {
	_Atomic uint64_t bucket[WD_HIST_BUCKETS + 1];
	_Atomic uint64_t sum_ns;
} wd_hist;

void wd_hist_observe(wd_hist *h, uint64_t ns);

typedef struct wd_metrics {
	wd_hist manifest, chunk, production;
	_Atomic uint64_t production_bytes; /* shard bytes produced */
} wd_metrics;

struct MHD_Daemon;
/* Serve /metrics, /healthz, /readyz on cfg->metrics_listen (nothing when
 * unset). WT_ECONFIG for a bad URL, WT_EIO when it cannot listen. */
int wd_metrics_start(wd_server *s, wt_errbuf *err);
void wd_metrics_stop(wd_server *s); /* idempotent */

/* ===================== fault injection (faults.c) ===================== */

/* Faults the tests inject into a running server. weightd's main never sets
 * them and has no flag for them; faults.c (the only setter) is linked into
 * test programs only (tests/, tests/tools/wt-faultyd). */
typedef struct wd_faults {
	uint64_t corrupt_chunk; /* flip a byte of the N-th chunk reply (1-based), after the
	                           cache verified it; 0 = never */
} wd_faults;

struct wd_server {
	const wd_config *cfg; /* borrowed; outlives the server */
	nng_socket sock;
	bool sock_open;
	nng_listener *lst;
	char **urls;
	size_t n_urls;
	wd_req *reqs;
	size_t n_reqs;
	wd_pool *pool;
	wd_models *models;
	cache *cache;
	wd_flights *flights;
	wd_peers *peers; /* NULL when no peer is configured */
	ckpt_memo memo;  /* source digests remembered in the cache */
	char server_id[128];
	pthread_mutex_t lk;
	pthread_cond_t cv;
	/* fields below guarded by lk */
	bool draining;
	size_t busy;    /* requests past WD_RECV (work, wait, send) */
	size_t idle;    /* contexts parked for good in WD_IDLE (drain) */
	wd_pipe *pipes; /* connected pipes (pipes.c) */
	size_t n_pipes, cap_pipes;
	uint64_t capped_log_ns;     /* last "connection refused" log line */
	nng_aio *reap_aio;          /* hello_timeout_ms sweep (server.c) */
	wd_pool *admin_pool;        /* REGISTER / UNREGISTER: never on the data workers */
	pthread_mutex_t authlog_lk; /* guards the three fields below */
	uint64_t authlog_t0_ns, authlog_n, authlog_suppressed;
	/* counters (atomic) */
	_Atomic bool cancel; /* drain deadline passed: productions stop */
	_Atomic uint64_t requests, productions, chunk_replies, chunk_bytes_out, flight_waits;
	_Atomic uint64_t peer_fills, peer_bytes;
	wd_metrics m;
	const wd_faults *_Atomic faults; /* tests only (faults.c); NULL in weightd */
	struct MHD_Daemon *metrics;      /* NULL unless metrics_listen is set */
	uint16_t metrics_port;           /* bound port (metrics_listen port 0 resolved) */
	struct wd_watches *watches;      /* parked Watch requests (watch.c) */
};

/* Install f (borrowed; outlives the server) before clients connect. */
void wd_server_set_faults(wd_server *s, const wd_faults *f);

/* planonly.c: ManifestRequest.plan_only: an empty Manifest when layout m->layout plans
 * for the snapshot, else NULL with the planner's error in err. */
nng_msg *wd_plan_only_reply(uint64_t id, const wd_mreq *m, wt_errbuf *err);

/* server.c: send reply m (ownership passes) for r and recycle r. */
void wd_req_reply(wd_req *r, nng_msg *m);
/* server.c: role of a connected pipe (WD_ROLE_NONE if unknown), and setting it. */
int wd_server_pipe_role(wd_server *s, uint32_t pipe_id);
void wd_server_pipe_set_role(wd_server *s, uint32_t pipe_id, int role);

/* pipes.c: pipe table, max_connections, hello_timeout_ms sweep. start: the
 * notify callbacks and the sweep (before listening); stop: the sweep (NULL-safe). */
int wd_pipes_start(wd_server *s, wt_errbuf *err);
void wd_pipes_stop(wd_server *s);
void wd_pipes_cb(nng_pipe p, nng_pipe_ev ev, void *arg);
/* Close every connected pipe. */
void wd_pipes_close_all(wd_server *s);
/* Connections open now (tests). */
size_t wd_server_n_pipes(wd_server *s);

/* auth.c: the role a Hello token proves (*role), WT_OK or WT_EPERM (then *role
 * is WD_ROLE_NONE). Constant time in the token's content. */
int wd_auth_hello(const wd_config *cfg, const char *token, int *role);
/* auth.c: NULL if a connection of `role` may send rq, else why not (static text). */
const char *wd_auth_check(const wd_config *cfg, int role, const Weights__Request *rq);
/* auth.c: log an auth failure ("what" names it), at most a few a second. */
void wd_auth_log_failure(wd_server *s, const char *what);

/* request.c: run a received request on a pool thread (consumes msg). */
void wd_handle(wd_req *r, nng_msg *msg);
/* request.c: frame a Reply into a new message (NULL on ENOMEM). */
nng_msg *wd_reply_msg(const Weights__Reply *rp);
/* request.c: an Error reply; never NULL unless out of memory. */
nng_msg *wd_reply_error(uint64_t id, int code, const char *msg);

/* manifest.c: Manifest requests and admin WARM (may park r on a flight). */
void wd_manifest_start(wd_req *r, const Weights__ManifestRequest *mr);
void wd_warm_start(wd_req *r, const Weights__AdminRequest *ar);

/* watch.c: Watch requests. start: the watch thread and the models' revision
 * notification; stop: answer every parked watch (current revision) and join
 * the thread; later watches are answered at once (NULL-safe, idempotent);
 * free: after stop. request: answer now or park r (no thread held). */
int wd_watch_start(wd_server *s, wt_errbuf *err);
void wd_watch_stop(wd_server *s);
void wd_watch_free(wd_server *s);
void wd_watch_request(wd_req *r, const Weights__WatchRequest *wr);
size_t wd_watch_parked(wd_server *s); /* tests */

/* produce.c: produce every rank of layout l into the cache in one pass. */
int wd_produce(wd_server *s, const char *model, wd_snap *snap, const wt_layout *l,
               const char *layout_text, wt_errbuf *err);

/* record.c: the cached-manifest record a shard is committed with. */
typedef struct wd_chunk {
	wt_hash128 hash;
	uint64_t nbytes;
} wd_chunk;
/* Tensor i's chunks as this node stored them (*n of them). */
typedef const wd_chunk *(*wd_chunks_fn)(void *ctx, size_t i, size_t *n);
/* Pack mf with format_version WT_FORMAT_VERSION, model `model` and tensor i's
 * chunk list from chunks_of (offsets consecutive from 0), then commit it as
 * w's manifest. mf is restored before returning. Consumes w (aborted on error). */
int wd_record_commit(cache_writer *w, Weights__Manifest *mf, const char *model,
                     wd_chunks_fn chunks_of, void *ctx, wt_errbuf *err);

/* chunk.c / admin.c: build the reply (never NULL unless out of memory). */
nng_msg *wd_chunk_reply(wd_server *s, uint64_t id, const Weights__ChunkRequest *c);
nng_msg *wd_admin_reply(wd_server *s, uint64_t id, const Weights__AdminRequest *a);
/* registry.c: admin REGISTER / UNREGISTER. */
nng_msg *wd_register_reply(wd_server *s, uint64_t id, const Weights__AdminRequest *a);

#endif
