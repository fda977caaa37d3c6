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
/* ram.c: the machine's RAM (0 when unknown), and the RAM this process may
 * use: ram, or its cgroup's memory limit (or an ancestor's) when lower. The
 * cgroup is read from proc_cgroup ("/proc/self/cgroup": v2 "0::/path", v1
 * "N:...memory...:/path") and its limits under sys_cgroup ("/sys/fs/cgroup":
 * v2 memory.max, v1 memory/.../memory.limit_in_bytes); a path with "/.." or
 * too long, "max", garbage or a missing file is no limit. */
uint64_t wd_phys_ram(void);
uint64_t wd_usable_ram(const char *proc_cgroup, const char *sys_cgroup, uint64_t ram);

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
	bool live_ok;    /* ManifestRequest.live_ok: a live manifest may answer (live.c) */
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
	struct wd_lreq { /* a live chunk request (live.c), kept while parked */
		uint8_t shard_id[WD_SHARD_ID_BYTES];
		uint64_t index, off, nbytes;
		struct wd_live_wait {
			struct wd_live_wait *next;
			uint64_t index; /* the chunk waited for */
			/* runs once, outside the lives lock, when the chunk is ready
			 * or the production ended */
			void (*fn)(struct wd_live_wait *w);
		} wait;
	} lc;
	Weights__Request *admin_rq;  /* REGISTER/UNREGISTER handed to the admin pool; owned */
	struct wd_wreq {             /* a parked Watch request (watch.c) */
		struct wd_req *next; /* in the watch list; guarded by the watch lock */
		char *model;         /* owned */
		char known[80];      /* known_revision */
		uint64_t deadline_ns;
	} w;
	struct wd_rgreq {              /* a REGISTER parked on its open (registry.c) */
		struct wd_req *next;   /* in srv->reg_parked; guarded by registry.c's lock */
		struct wd_regjob *job; /* holds one of its waiters */
		uint64_t deadline_ns;  /* UINT64_MAX: to the end (wait_ms 0) */
		nng_msg *reply;        /* built under the lock, sent after */
	} rg;
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
	/* flip a byte of the N-th chunk reply (1-based), after the cache verified it;
	 * 0 = never. Atomic: tests set it between fetches while workers read it (a
	 * kept bulk stream's reply read it before the bytes reached the test through
	 * a socket, which orders nothing for the compiler or ThreadSanitizer). */
	_Atomic uint64_t corrupt_chunk;
	/* Called by the producer when a rank's last tensor is in: before its source
	 * check, and before its commit (after the check; cut-through tests hold the
	 * commit back while a client reads). NULL = none. */
	void (*before_check)(void *ctx, uint32_t rank);
	void (*before_commit)(void *ctx, uint32_t rank);
	/* Called by a production's cache writer (wback.c) before each chunk put:
	 * tests hold the cache writes back while clients read; an error code
	 * fails the put with it. NULL = none. */
	int (*before_put)(void *ctx, uint32_t rank);
	/* Called by a production's cache writer once it recorded its first
	 * error (the producer sees it from then on). NULL = none. */
	void (*writer_failed)(void *ctx);
	/* Called by a REGISTER of uri after its reach check (step 1) and after
	 * its source check (step 2): tests swap the folder meanwhile. NULL = none. */
	void (*register_step)(void *ctx, const char *uri, int step);
	/* Called by wd_server_close after the drain, before the socket close: a
	 * test stands in for nng 1.5.2's close that never returns. NULL = none. */
	void (*before_socket_close)(void *ctx);
	void *ctx;
} wd_faults;

/* Admin threads: REGISTER's source check may wait register_timeout_ms on a
 * silent URL; others (an UNREGISTER, a local REGISTER) go on meanwhile. */
#define WD_ADMIN_THREADS 4

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
	struct wd_lives *lives; /* shards being produced, served cut-through (live.c) */
	wd_peers *peers;        /* NULL when no peer is configured */
	ckpt_memo memo;         /* source digests remembered in the cache */
	char server_id[WD_SERVER_ID_MAX + 1];
	pthread_mutex_t lk;
	pthread_cond_t cv;
	bool drained;      /* wd_server_drain ran (its count: drain_left); the closing thread's */
	size_t drain_left; /* requests it abandoned at the drain's deadline */
	/* fields below guarded by lk */
	bool start_stopped; /* wd_server_stop_start: the start ends, WT_ECANCELED */
	bool draining;
	size_t busy;    /* requests past WD_RECV (work, wait, send) */
	size_t idle;    /* contexts parked for good in WD_IDLE (drain) */
	wd_pipe *pipes; /* connected pipes (pipes.c) */
	size_t n_pipes, cap_pipes;
	uint64_t capped_log_ns; /* last "connection refused" log line */
	nng_aio *reap_aio;      /* hello_timeout_ms sweep (server.c) */
	wd_pool *admin_pool;    /* REGISTER / UNREGISTER: never on the data workers */
	/* registry.c's (under its lock): registrations opening or ended, and the
	 * REGISTER requests parked on them, answered by reg_thread */
	struct wd_regjob *regjobs;
	wd_req *reg_parked;
	pthread_cond_t reg_wake; /* CLOCK_MONOTONIC */
	pthread_t reg_thread;
	bool reg_started, reg_stop;
	pthread_mutex_t authlog_lk; /* guards the three fields below */
	uint64_t authlog_t0_ns, authlog_n, authlog_suppressed;
	/* counters (atomic) */
	_Atomic bool cancel; /* drain deadline passed: productions stop */
	_Atomic uint64_t requests, productions, chunk_replies, chunk_bytes_out, flight_waits;
	_Atomic uint64_t peer_fills, peer_bytes;
	_Atomic uint64_t
	    bulk_replies; /* chunk replies sent on bulk streams (also in chunk_replies) */
	_Atomic uint64_t bulk_streams;      /* bulk streams accepted (clients keep theirs open) */
	_Atomic uint64_t stalled_closed;    /* connections and streams ended by send_timeout_ms */
	_Atomic uint32_t stalled_last_pipe; /* the connection close_stalled_pipe counted last */
	wd_metrics m;
	const wd_faults *_Atomic faults; /* tests only (faults.c); NULL in weightd */
	struct MHD_Daemon *metrics;      /* NULL unless metrics_listen is set */
	uint16_t metrics_port;           /* bound port (metrics_listen port 0 resolved) */
	struct wd_watches *watches;      /* parked Watch requests (watch.c) */
	struct wd_bulk *bulk;       /* bulk data plane (bulk.c); NULL when stream_listen is off */
	struct wd_wbudget *wbudget; /* RAM of chunks not yet in the cache (wback.c) */
};

/* server.c: the TLS configuration of tls+tcp:// listeners and of a tls+tcp://
 * stream_listen: tls_cert_key_file, and with tls_ca_file client certificates
 * required. WT_ECONFIG naming `what` and the files; *out (caller frees with
 * nng_tls_config_free) on success. */
typedef struct nng_tls_config nng_tls_config;
int wd_tls_server_config(const wd_config *cfg, const char *what, nng_tls_config **out,
                         wt_errbuf *err);

/* Install f (borrowed; outlives the server) before clients connect. */
void wd_server_set_faults(wd_server *s, const wd_faults *f);

/* planonly.c: ManifestRequest.plan_only: an empty Manifest when layout m->layout plans
 * for the snapshot, else NULL with the planner's error in err. */
nng_msg *wd_plan_only_reply(uint64_t id, const wd_mreq *m, wt_errbuf *err);

/* server.c: send reply m (ownership passes) for r and recycle r. */
void wd_req_reply(wd_req *r, nng_msg *m);
/* server.c: park r (state WD_WAIT: a production's leader and its waiters, a
 * REGISTER, a Watch) if that still leaves a quarter of the contexts to
 * requests that do not wait (a Hello, a listing, a cache hit): parked
 * requests hold their nng context, and with every context parked nothing
 * else is received. false (r unchanged) when there is no room; *waiting:
 * how many park now. Takes s->lk. */
bool wd_req_park(wd_server *s, wd_req *r, size_t *waiting);
/* The WT_EBUSY text for a request refused for want of room to park. */
void wd_park_full_msg(const wd_server *s, size_t waiting, char *buf, size_t cap);
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

/* ===================== write-behind (wback.c) ===================== */

/*
 * A production puts its chunks into the cache on a writer thread of its own,
 * behind the producer: each chunk waits in a refcounted RAM buffer (wd_wbuf)
 * that cut-through readers are served from until the writer has put it. The
 * RAM held by every production's waiting chunks is bounded by
 * cfg->writeback_bytes (wd_wbudget, one per server). The cache's durability
 * order is unchanged: chunks, then each rank's commit, in the order queued.
 */
typedef struct wd_wbudget wd_wbudget;
typedef struct wd_wbuf wd_wbuf;
typedef struct wd_wback wd_wback;

int wd_wbudget_create(wd_wbudget **out, uint64_t cap); /* WT_ENOMEM */
void wd_wbudget_destroy(wd_wbudget *b);                /* NULL-safe; no buffer left */
typedef struct wd_wbudget_stats {
	uint64_t used, peak; /* bytes of buffers in use: now, highest */
	uint64_t kept;       /* bytes of released buffers kept for reuse */
	uint64_t fresh;      /* buffers allocated so far */
	uint64_t reused;     /* buffers taken from those kept so far */
	uint64_t prefaulted; /* bytes faulted in at start (wd_wbudget_prefault) */
} wd_wbudget_stats;
void wd_wbudget_get(wd_wbudget *b, wd_wbudget_stats *out);
/* Fault in up to `bytes` of chunk_bytes buffers into the kept ones, within the
 * budget, on a thread of its own at nice 19 (writeback_prefault_bytes); 0 or
 * chunks past 256 MiB: nothing. WT_ENOMEM when no thread starts. */
int wd_wbudget_prefault(wd_wbudget *b, size_t chunk_bytes, uint64_t bytes);

const uint8_t *wd_wbuf_data(const wd_wbuf *b, size_t *len);
void wd_wbuf_ref(wd_wbuf *b);
void wd_wbuf_unref(wd_wbuf *b); /* NULL-safe; the last one frees it and returns its bytes */

/* The writer runs fn for each queued item, in order, until one fails: a chunk
 * (b: its buffer, borrowed) or, with b NULL, the commit of `rank`. */
typedef int (*wd_wback_fn)(void *ctx, uint32_t rank, size_t ti, size_t c, wd_wbuf *b,
                           wt_errbuf *err);
int wd_wback_start(wd_server *s, wd_wback_fn fn, void *ctx, wd_wback **out, wt_errbuf *err);
/* A buffer of len bytes (one reference) once the budget has room; the writer's
 * error if it failed, WT_ECANCELED when productions are canceled, WT_ENOMEM. */
int wd_wback_alloc(wd_wback *wb, size_t len, wd_wbuf **out, wt_errbuf *err);
/* Queue chunk c of tensor ti of `rank` (consumes the caller's reference of b),
 * or the rank's commit (b NULL); returns the writer's error if it failed. */
int wd_wback_push(wd_wback *wb, uint32_t rank, size_t ti, size_t c, wd_wbuf *b, wt_errbuf *err);
/* The writer's first error so far (copied to err), or WT_OK. */
int wd_wback_error(wd_wback *wb, wt_errbuf *err);
/* Run what is queued (abort: drop it), stop the writer, free wb: the writer's
 * first error, or WT_OK. NULL-safe. */
int wd_wback_finish(wd_wback *wb, bool abort, wt_errbuf *err);

/* ===================== cut-through serving (live.c) ===================== */

/*
 * A shard being produced is served while it is produced: its live manifest (no
 * hashes) as soon as the plan is known, each chunk once it is stored in the
 * cache (not yet durable) with its hash, and the tensor hash with a tensor's
 * last chunk. The rank's last chunk is held back until the rank passed its
 * source check (ckpt_check), so a client can never finish on bytes of a
 * production that fails with WT_ECHANGED; it gets that error instead. A few
 * finished entries are kept so that clients still reading by index finish
 * after the commit. Lock order: wd_lives.lk, then srv->lk.
 */
typedef struct wd_lives wd_lives;
typedef struct wd_live wd_live;

#define WD_LIVE_KEEP 64 /* finished entries kept for clients still reading them */

int wd_lives_create(wd_lives **out);
void wd_lives_destroy(wd_lives *t); /* NULL-safe; nothing parked, nothing producing */

/* Producer: register rank shard `id` of layout `key` with its packed live
 * manifest (mf, copied) and each tensor's chunk count. *out = NULL (logged)
 * when out of memory: the rank is then served only once committed. */
void wd_live_open(wd_lives *t, wt_hash128 key, const uint8_t *id, const void *mf, size_t mf_len,
                  const size_t *n_chunks_of, size_t n_tensors, wd_live **out);
/* Producer: tensor ti's hash is h. NULL-safe. */
void wd_live_tensor(wd_lives *t, wd_live *l, size_t ti, wt_hash128 h);
/* Producer: chunk c of tensor ti is ready with hash h, its bytes in b (a
 * reference is taken; readers are served from it) or, b NULL, in the cache. */
void wd_live_chunk(wd_lives *t, wd_live *l, size_t ti, size_t c, wt_hash128 h, wd_wbuf *b);
/* Cache writer: chunk c of tensor ti is in the cache now: its buffer is let go
 * (later readers read the cache). NULL-safe. */
void wd_live_stored(wd_lives *t, wd_live *l, size_t ti, size_t c);
/* Producer: the rank passed its source check: release its last chunk. NULL-safe. */
void wd_live_seal(wd_lives *t, wd_live *l);
/* Producer: the rank is finished (rv WT_OK: committed) or failed (rv, err);
 * parked chunk requests resume. NULL-safe. */
void wd_live_end(wd_lives *t, wd_live *l, int rv, const wt_errbuf *err);
/* Producer: every rank of layout `key` is registered; parked manifest requests resume. */
void wd_lives_ready(wd_lives *t, wt_hash128 key);
/* The flight of layout `key` ended with rv: parked manifest requests resume with it. */
void wd_lives_layout_done(wd_lives *t, wt_hash128 key, int rv, const wt_errbuf *err);
/* Manifest request r (live_ok): true if shard r->m.id is being produced (then
 * *reply is its live manifest, or NULL when out of memory); else r->waiter is
 * parked until wd_lives_ready/_layout_done of r->m.key, and false. */
bool wd_lives_manifest(wd_lives *t, wd_req *r, bool park, nng_msg **reply);
/* request.c: a ChunkRequest with live set (replies itself, maybe later). */
void wd_live_chunk_start(wd_req *r, const Weights__ChunkRequest *c);
/* A live chunk ready to send: its hash, the tensor's (tensor's last chunk),
 * its size, and its bytes in buf (a reference) or, buf NULL, in the cache. */
typedef struct wd_live_ref {
	wt_hash128 h;
	uint8_t th[16];
	bool has_th;
	uint64_t clen;
	wd_wbuf *buf;
} wd_live_ref;
typedef struct wd_live_wait wd_live_wait;
/* Chunk `index` of live shard `id` (bulk.c, live.c): WT_OK with *out; 1 when
 * it is not ready yet: park is queued (park->index set) and park->fn runs
 * once it is, or the production ends (park NULL: 2 instead, nothing queued);
 * else an error code with its text in msg (WT_ENOTFOUND: not produced here,
 * ask the manifest again). */
int wd_live_lookup(wd_lives *t, const uint8_t *id, size_t id_len, uint64_t index,
                   wd_live_wait *park, wd_live_ref *out, char *msg, size_t cap);
/* Entries now (tests): producing and all. */
size_t wd_lives_producing(wd_lives *t, size_t *all);

/* ===================== bulk data plane (bulk.c) ===================== */

typedef struct wd_bulk wd_bulk;

/* Listen on cfg->stream_listen (nothing when empty): WT_ECONFIG naming the URL
 * for an unsupported or bad one, WT_EBUSY when it is in use. On failure the
 * half-built state is left in s->bulk for wd_bulk_stop. */
int wd_bulk_start(wd_server *s, wt_errbuf *err);
/* Close the listener and every stream; waits for requests in service (they run
 * on the request lane: call before the pool is destroyed). NULL-safe, idempotent. */
void wd_bulk_stop(wd_server *s);
/* Streams the server holds now, open or ended but not yet freed (tests). */
size_t wd_bulk_held(wd_server *s);

/* bulk_url.c. Length of the scheme prefix of a tcp:// or tls+tcp:// URL; 0
 * for others. */
size_t wd_bulk_tcp_prefix(const char *url);
/* The URL clients dial for listener l listening on url, into out: tcp port 0
 * resolved to the bound port; *wild_port set to that port when the host is a
 * wildcard (0.0.0.0, [::], *, empty), which wd_bulk_pipe_local_url replaces
 * per client. */
void wd_bulk_advertised_url(nng_stream_listener *l, const char *url, char *out, size_t cap,
                            int *wild_port);
/* SCHEME://ADDR:port for the local address of pipe pipe_id (the address its
 * client dialed); false when unknown (not tcp). */
bool wd_bulk_pipe_local_url(const char *scheme, uint32_t pipe_id, int port, char *out, size_t cap);
/* true with the URL to dial (into url, cap bytes) and the 16-byte ticket
 * (borrowed; valid until wd_bulk_stop) when the bulk data plane is on. A
 * stream_listen on a wildcard host (0.0.0.0, [::]) is offered as the local
 * address that connection pipe_id reached, with the bound port. */
bool wd_bulk_offer(const wd_server *s, uint32_t pipe_id, char *url, size_t cap,
                   const uint8_t **ticket);

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
/* The packing of wd_record_commit without the commit: *buf (malloc'd, caller
 * frees) of *len bytes, or NULL when out of memory. With mf->live the chunk
 * refs carry no hash (a live manifest). */
uint8_t *wd_record_pack(Weights__Manifest *mf, const char *model, wd_chunks_fn chunks_of, void *ctx,
                        size_t *len);

/* chunk.c / admin.c: build the reply (never NULL unless out of memory). */
nng_msg *wd_chunk_reply(wd_server *s, uint64_t id, const Weights__ChunkRequest *c);
/* chunk.c: reply with bytes [off, off + n) (n 0 = to the end) of chunk h of clen
 * bytes, from mem (clen bytes this process hashed itself: a write-behind
 * buffer) or, mem NULL, from the cache (re-hashed); tensor_hash (16 bytes) or
 * NULL goes into the reply. */
nng_msg *wd_chunk_send(wd_server *s, uint64_t id, wt_hash128 h, uint64_t clen, uint64_t off,
                       uint64_t n, const uint8_t *tensor_hash, const uint8_t *mem);
nng_msg *wd_admin_reply(wd_server *s, uint64_t id, const Weights__AdminRequest *a);
/* registry.c: admin REGISTER / UNREGISTER, on the admin thread; replies
 * itself, maybe later: a REGISTER opens the model on a thread of its own (a
 * regjob) and its reply waits parked (no thread held) up to its wait_ms (0:
 * to the end); see registry.c. */
void wd_register_request(wd_req *r, const Weights__AdminRequest *a);
/* Start the thread that answers parked REGISTER requests (server open). */
int wd_registry_start(wd_server *s, wt_errbuf *err);
/* Shutdown, first: parked REGISTER requests are answered now (WT_ECANCELED:
 * not saved), new ones at once; the thread ends. May run after a failed
 * start. */
void wd_registry_stop_waits(wd_server *s);
/*
 * Unregister a registered model (one being registered too: its open is
 * canceled) and rewrite the file. WT_ENOTFOUND for an unknown name, WT_EPERM
 * for a folder/config model (the message says how to remove it). Cached
 * shards stay (admin EVICT drops them). *uri_out gets the URI it had (strdup;
 * caller frees).
 */
int wd_registry_unregister(wd_server *s, const char *name, char **uri_out, wt_errbuf *err);
/* Shutdown, after wd_models_cancel_opens, wd_registry_stop_waits and the
 * admin pool: wait for every registration's thread and free them. */
void wd_registry_stop(wd_server *s);

#endif
