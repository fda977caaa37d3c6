/*
 * client.h — libweights: fetch a rank's verified weight shard from weightd.
 *
 *     wt_client_opts o;
 *     wt_client_opts_init(&o);
 *     const char *eps[] = {"tcp://10.0.0.1:7070", "tcp://10.0.0.2:7070"};
 *     o.endpoints = eps; o.n_endpoints = 2;
 *     wt_client *c; wt_manifest *m; wt_errbuf err;
 *     wt_client_open(&c, &o, &err);
 *     wt_client_get_manifest(c, "llama-8b", &layout, &m, &err);   // layout holds the rank
 *     wt_client_fetch(c, m, sink, NULL, &err);                     // engine.h sinks
 *     wt_manifest_free(m);
 *     wt_client_close(c);
 *
 * Thread rules: a wt_client may be used from any thread, and several calls may
 * run at once on one client (each call uses its own nng contexts). A wt_manifest
 * is immutable after it is returned and may be read from any thread.
 *
 * Errors: every function returns WT_OK or a wt_err code and, when err is
 * non-NULL, a message naming the endpoint and the object (tensor, chunk).
 * Server-side errors keep the server's code (WT_ELAYOUT for a layout the model
 * cannot take, WT_ENOTFOUND for an unknown model).
 *
 * The library never prints: diagnostics go to the optional logger callback.
 */
#ifndef WEIGHTS_CLIENT_H
#define WEIGHTS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "weights/api.h"
#include "weights/dtype.h"
#include "weights/error.h"
#include "weights/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wt_client wt_client;     /* opaque */
typedef struct wt_manifest wt_manifest; /* opaque */
typedef struct wt_sink wt_sink;         /* engine.h */

/*
 * Manifest modes (wt_client_opts.mode). PARTITIONED: the layout as given; a model
 * the planner refuses is the planner's error. RAW: the checkpoint's own tensors,
 * unmodified, under their checkpoint names (layout->include names a subset; the
 * other layout members are ignored, every rank gets the same shard). AUTO:
 * partitioned, and when the server refuses the layout with WT_EUNSUPPORTED
 * (architecture or tensor the planner does not know) or WT_ELAYOUT (the layout does
 * not fit this model), raw instead; the choice and its reason are logged
 * (WT_CLIENT_LOG_WARNING) and given by wt_manifest_mode()/wt_manifest_mode_reason().
 */
typedef enum { WT_MODE_PARTITIONED = 0, WT_MODE_AUTO = 1, WT_MODE_RAW = 2 } wt_fetch_mode;

/* "partitioned", "auto", "raw"; NULL for an unknown value. */
WT_API const char *wt_fetch_mode_name(int mode);
/* Parse a mode name; WT_EINVAL (err lists the names) otherwise. */
WT_API int wt_fetch_mode_from_name(const char *name, int *out, wt_errbuf *err);

/* Syslog levels passed to the logger. */
enum {
	WT_CLIENT_LOG_ERR = 3,
	WT_CLIENT_LOG_WARNING = 4,
	WT_CLIENT_LOG_INFO = 6,
	WT_CLIENT_LOG_DEBUG = 7
};

/*
 * Logger callback. msg is borrowed for the duration of the call. It may be
 * called from the calling thread or from nng's I/O threads, possibly
 * concurrently: it must be thread-safe and must not call back into the client.
 */
typedef void (*wt_log_fn)(void *ctx, int level, const char *msg);

/*
 * Versioned option structs (wt_client_opts, wt_fetch_opts, wt_sink_ops): the
 * first member is struct_size, which the caller sets to sizeof(the struct) as
 * its header declares it — the *_init() functions do. Members are only ever
 * appended, so the library reads just the members that end within
 * struct_size and gives every later member its default: a program built
 * against an older header keeps working. A struct_size of 0, one larger than
 * this library knows (a newer header), or one that does not end on a member
 * is refused with WT_EVERSION before anything else happens.
 */
typedef struct wt_client_opts {
	size_t struct_size;           /* sizeof(wt_client_opts); set by wt_client_opts_init() */
	const char *const *endpoints; /* "tcp://host:port", "ipc:///path", "tls+tcp://host:port";
	                                 copied */
	size_t n_endpoints;           /* >= 1 */
	uint32_t connect_timeout_ms;  /* dial + Hello of each connection; default 2000 */
	uint32_t request_timeout_ms;  /* one chunk/list/admin request; default 30000 */
	uint32_t manifest_timeout_ms; /* a manifest request may produce the shard; default 600000 */
	uint32_t window;              /* chunk requests in flight per fetch; default 8, max 256 */
	uint32_t connections;         /* connections per endpoint a fetch spreads its window
	                                 over (each its own socket and Hello); default 2, max 16 */
	uint32_t max_retries;         /* failed attempts per endpoint before failing over; def. 5 */
	uint32_t backoff_initial_ms;  /* first retry delay, doubled per attempt; default 100 */
	uint32_t backoff_max_ms;      /* retry delay ceiling; default 2000 */
	uint64_t max_message_bytes;   /* NNG_OPT_RECVMAXSZ of every socket; default 256 MiB */
	uint32_t hash_refetch;        /* chunk re-fetches after a hash mismatch before WT_EHASH:
	                                 0 (default: the first mismatch is the error) or 1 */
	const char *token;            /* optional auth token sent in Hello; copied; NULL = none */
	const char *client_id;        /* optional name in Hello; copied */
	wt_log_fn log;                /* optional; NULL = silent */
	void *log_ctx;
	int log_level; /* highest level passed to log; default WT_CLIENT_LOG_WARNING */
	/* Since 0.3: how long connection trouble (refused, reset, no Hello reply, timeouts)
	 * is retried with backoff, going round the endpoint list again, before WT_EUNAVAIL;
	 * counted from the first failure since the last progress. 0 = the default, 30000
	 * (rides out a daemon restart of a few seconds); 1 = a single pass (old behaviour).
	 * An error a server answered is asked again once a round only, and a spent budget
	 * returns it (its code and message); for admin requests it is returned at once. */
	uint32_t retry_budget_ms;
	/* Since 0.4: TLS for tls+tcp://HOST:PORT endpoints (nng's TLS, mbedTLS). The
	 * server's certificate is checked against tls_ca_file (PEM CAs; required for
	 * tls+tcp) and HOST (a DNS name in the certificate). tls_cert_key_file: PEM
	 * with this client's certificate and key, for servers that require one.
	 * Copied; NULL = none. */
	const char *tls_ca_file;
	const char *tls_cert_key_file;
	/* Since 0.5: what wt_client_get_manifest asks for (wt_fetch_mode; README "Raw
	 * serving"). Default WT_MODE_PARTITIONED (the behaviour before 0.5). */
	int mode;
	/* Since 1.1: cut-through (docs/client.md "Cut-through serving"). 1: a manifest request
	 * for a layout being produced is answered at once with a live manifest
	 * (wt_manifest_live() = 1, tensor hashes not known yet) and wt_client_fetch
	 * receives each chunk as soon as the server has produced it, with its hash;
	 * every chunk and tensor is still checked before the sink sees it. Default 0
	 * (wait until the layout is committed, as before 1.1). */
	int cut_through;
	/* Since 1.2: the bulk data plane (docs/client.md "Bulk data plane"). 1: when the server
	 * offers a bulk stream in Hello (weightd stream_listen), wt_client_fetch receives
	 * chunk bytes over a raw nng byte stream per connection instead of nng messages;
	 * every chunk and tensor is still checked. A server that offers none, a live
	 * manifest, or a stream that fails mid-fetch (logged) use messages. Default 0. */
	int stream;
} wt_client_opts;

/* Fill with the defaults above (no endpoints) and struct_size. */
WT_API void wt_client_opts_init(wt_client_opts *o);

/*
 * Create a client. Copies everything from opts; connects lazily (the first
 * request dials the chosen endpoint). WT_EINVAL for an empty endpoint list, an
 * URL that is not tcp://, ipc:// or tls+tcp:// (which needs tls_ca_file), or an
 * option out of range; WT_EVERSION for
 * a bad opts->struct_size (it must cover at least endpoints and n_endpoints).
 * On success the caller owns *out and frees it with wt_client_close().
 */
WT_API int wt_client_open(wt_client **out, const wt_client_opts *opts, wt_errbuf *err);

/* Close every connection and free. Calls in progress must have returned. NULL is a no-op.
 * Returns at once. Chunk requests a fetch left in flight (it failed over from a
 * stopped daemon, or ended in an error) keep their connections open until
 * they end, with their replies or at most request_timeout_ms after they were
 * left: a thread of libweights (named "wt:close", every signal blocked) waits
 * for them, then closes those connections and frees the rest; opts.log is not
 * called after this returns. A program may exit meanwhile; it must not unload
 * libweights (dlclose) before request_timeout_ms has passed. */
WT_API void wt_client_close(wt_client *c);

/* ---- models ---- */

typedef struct wt_model_info {
	char *name; /* all strings owned by the array, freed by wt_model_list_free(); each
	               as the server sent it with control bytes, DEL and bytes that are not
	               UTF-8 written as \n, \r, \t or \xNN (safe to print) */
	char *uri;
	char *revision;
	char *architecture;
	uint64_t checkpoint_bytes;
	uint32_t n_tensors;
	int available; /* 0: the model's folder failed validation; error says why */
	char *error;   /* "" when available */
	char *source;  /* "folder", "config", "registered"; "" from an older server */
} wt_model_info;

/* Models registered on the first reachable endpoint (in list order). On success
 * *out is an array of *n entries (possibly 0; then *out may be NULL) that the
 * caller frees with wt_model_list_free(). */
WT_API int wt_client_list_models(wt_client *c, wt_model_info **out, size_t *n, wt_errbuf *err);
WT_API void wt_model_list_free(wt_model_info *list, size_t n); /* NULL is a no-op */
/* Since 1.10: the configuration override entry i of a list from wt_client_list_models()
 * (list, n as it returned them) is served under: its canonical JSON object (escaped as the
 * other strings), "" for none or from a weightd older than 1.10; NULL when i >= n. Owned by
 * the list (wt_model_info itself cannot grow: callers index the array with its size). */
WT_API const char *wt_model_list_override(const wt_model_info *list, size_t n, size_t i);

/* ---- manifests ---- */

typedef enum {
	WT_ROLE_WEIGHT = 0,
	WT_ROLE_SCALE = 1,
	WT_ROLE_BIAS = 2,
	WT_ROLE_INPUT_SCALE = 3,
} wt_tensor_role;

/* "weight", "scale", "bias", "input_scale"; "unknown" otherwise. */
WT_API const char *wt_tensor_role_name(wt_tensor_role r);

typedef struct wt_tensor_info {
	const char *name; /* borrowed from the manifest; valid until wt_manifest_free() */
	wt_dtype dtype;
	int ndim;
	int64_t shape[WT_MAX_DIMS]; /* row-major, last dim contiguous */
	uint64_t nbytes;
	uint8_t hash[16]; /* XXH3-128 of the tensor bytes, big-endian */
	wt_tensor_role role;
	int requantized; /* 1 = pre-quantized source dequantized and requantized */
	size_t n_chunks;
} wt_tensor_info;

/*
 * Ask the endpoint chosen for this shard (rendezvous hashing, then fail-over
 * in that order) for the manifest of one rank: model name, layout (its
 * tp_rank/ep_rank select the rank). The server may produce the shard first
 * (up to manifest_timeout_ms). The manifest is validated completely: chunk
 * ranges must tile every tensor exactly, sizes must agree with dtype and
 * shape, names must be unique and sorted, sizes must not overflow — else
 * WT_ECORRUPT (a garbled message is WT_EPROTO). On success the caller owns *out
 * (wt_manifest_free()).
 */
WT_API int wt_client_get_manifest(wt_client *c, const char *model, const wt_layout *layout,
                                  wt_manifest **out, wt_errbuf *err);
WT_API void wt_manifest_free(wt_manifest *m); /* NULL is a no-op */

/*
 * Since 1.1: what one manifest request asks besides model and layout
 * (wt_client_get_manifest_opts). Versioned like wt_client_opts.
 */
typedef struct wt_manifest_opts {
	size_t struct_size;   /* sizeof(wt_manifest_opts); set by wt_manifest_opts_init() */
	const char *revision; /* NULL or "" = the model's current revision; else only this
	                         revision (hex digest, wt_manifest_revision): a server that
	                         now serves another answers WT_ENOTFOUND. Lets every rank of
	                         a job load the revision its first rank saw. */
	int cache_only;       /* 1 = only a shard the server holds in its cache: never
	                         produced, never asked of its peers; WT_ENOTFOUND if it is not
	                         cached (weightd's peer fill asks this way). Default 0. */
} wt_manifest_opts;

/* Defaults (current revision, produce if needed) and struct_size. */
WT_API void wt_manifest_opts_init(wt_manifest_opts *o);

/*
 * Since 1.1: wt_client_get_manifest with request options (NULL = the defaults,
 * the same as wt_client_get_manifest). The options apply to every request the
 * client's mode makes (auto's raw fallback too). WT_EVERSION for a bad
 * opts->struct_size.
 */
WT_API int wt_client_get_manifest_opts(wt_client *c, const char *model, const wt_layout *layout,
                                       const wt_manifest_opts *opts, wt_manifest **out,
                                       wt_errbuf *err);

/*
 * Since 0.5: ask the server to plan `layout` for model without producing anything
 * (README "weightctl capabilities"): WT_OK when the planner takes it, else the
 * planner's error (WT_ELAYOUT, WT_EUNSUPPORTED, ...) with its message. The mode of
 * the client's options is not applied (layout->raw asks about the raw layout).
 */
WT_API int wt_client_check_layout(wt_client *c, const char *model, const wt_layout *layout,
                                  wt_errbuf *err);

/* Since 0.5: the mode the manifest was served in (WT_MODE_PARTITIONED or WT_MODE_RAW)
 * and why: "" when that mode was asked for, else (auto) the fallback's reason with
 * the server's message. Borrowed; valid until wt_manifest_free(). */
WT_API int wt_manifest_mode(const wt_manifest *m);
WT_API const char *wt_manifest_mode_reason(const wt_manifest *m);

/* Accessors. Strings are borrowed; valid until wt_manifest_free(). */
WT_API const char *wt_manifest_model(const wt_manifest *m);
WT_API const char *wt_manifest_revision(const wt_manifest *m);
WT_API const char *wt_manifest_layout_text(const wt_manifest *m); /* canonical, without rank */
WT_API uint32_t wt_manifest_tp_rank(const wt_manifest *m);
WT_API uint32_t wt_manifest_ep_rank(const wt_manifest *m);
WT_API uint32_t wt_manifest_format_version(const wt_manifest *m);
WT_API uint64_t wt_manifest_total_bytes(const wt_manifest *m); /* sum of tensor nbytes */
WT_API uint64_t wt_manifest_checkpoint_bytes(const wt_manifest *m);
WT_API size_t wt_manifest_n_chunks(const wt_manifest *m);
WT_API int wt_manifest_tied_lm_head(const wt_manifest *m);
/* Since 1.1: 1 for a live manifest (opts.cut_through; the layout was still being
 * produced): wt_tensor_info.hash is all zero, the hashes arrive with the chunks. */
WT_API int wt_manifest_live(const wt_manifest *m);
WT_API size_t wt_manifest_n_skipped(const wt_manifest *m);
WT_API const char *wt_manifest_skipped(const wt_manifest *m, size_t i); /* NULL if out of range */
WT_API size_t wt_manifest_n_tensors(const wt_manifest *m);
/* Tensor i (name order). WT_EINVAL if i is out of range. */
WT_API int wt_manifest_tensor(const wt_manifest *m, size_t i, wt_tensor_info *out);
/* Index of the tensor called name; WT_ENOTFOUND if absent. */
WT_API int wt_manifest_find(const wt_manifest *m, const char *name, size_t *idx);

/* 32 lowercase hex characters + NUL. */
WT_API void wt_hash_hex(const uint8_t hash[16], char out[33]);

/* ---- fetch ---- */

/*
 * Progress callback: called on the thread that called wt_client_fetch(), after
 * each verified chunk was handed to the sink, and (since 1.4) again with the
 * same counts when a request failed, before each retry, backoff slice (100
 * ms at most) and fail-over. Returning non-zero cancels the fetch
 * (wt_client_fetch returns WT_ECANCELED and the sink is aborted): a fetch
 * stuck on a server that does not answer stops within one
 * request_timeout_ms.
 */
typedef int (*wt_progress_fn)(void *ctx, uint64_t bytes_done, uint64_t bytes_total);

typedef struct wt_fetch_stats {
	uint64_t bytes;      /* verified bytes handed to the sink */
	uint64_t chunks;     /* verified chunks */
	uint32_t retries;    /* chunk requests sent again (timeouts, disconnects) */
	uint32_t refetches;  /* chunks fetched again after a hash mismatch */
	uint32_t failovers;  /* switches to the next endpoint */
	uint32_t reconnects; /* manifests requested again to resume (server restarted) */
	char endpoint[256];  /* the endpoint that served the last chunk */
} wt_fetch_stats;

typedef struct wt_fetch_opts {
	size_t struct_size;      /* sizeof(wt_fetch_opts); set by wt_fetch_opts_init() */
	wt_progress_fn progress; /* optional */
	void *progress_ctx;
	wt_fetch_stats *stats; /* optional out; filled on success and on failure */
	/* Since 1.8, optional: a flag the fetch reads atomically (an int that
	 * another thread sets non-zero with __atomic_store_n or a C11 atomic
	 * store; it must outlive the call). Once set, the fetch ends with
	 * WT_ECANCELED and the sink aborted (never begun when set before the
	 * call): at the next verified chunk, before any retry, backoff or
	 * fail-over, and within about 100 ms while it waits for a chunk, also
	 * from a server that stopped answering (its requests in flight are left
	 * to end on their own). wt_client_fetch_update passes it on. The
	 * synchronous counterpart of wt_fetch_cancel (async.h). */
	const int *cancel;
} wt_fetch_opts;

/* Zero every option (no progress callback, no stats, no cancel flag) and set struct_size. */
WT_API void wt_fetch_opts_init(wt_fetch_opts *o);

/*
 * Fetch every chunk of the manifest's rank into sink.
 *
 * Up to `window` chunk requests are in flight; each reply is checked against
 * its chunk hash and every tensor against its XXH3-128 before the sink sees
 * it: the sink receives only verified bytes, in manifest order, each byte
 * once (engine.h). A timeout or disconnect is retried with exponential backoff
 * and resumes after the last verified chunk (a restarted server is asked for
 * the manifest again; one that lists other chunks is WT_ECHANGED with the sink
 * aborted: get the manifest again and fetch anew); after max_retries failed
 * attempts the next endpoint (rendezvous order) takes over, and past the last
 * one the list is tried again while retry_budget_ms lasts. A chunk the server
 * found damaged on its disk (WT_ECORRUPT) makes it produce the shard again (the
 * manifest is asked again, at most twice a fetch). A chunk whose hash
 * does not match is WT_EHASH naming the tensor, chunk and endpoint (with
 * opts.hash_refetch = 1 it is fetched once more first; never a retry loop). When all endpoints
 * fail: WT_EUNAVAIL.
 *
 * Sink calls: begin once; then per tensor tensor_begin, write..., tensor_end;
 * then end — or abort once, on any failure after begin. The sink is borrowed.
 * opts may be NULL. WT_EVERSION, before the sink is called, for a bad
 * opts->struct_size or sink->ops->struct_size (see wt_client_opts).
 */
WT_API int wt_client_fetch(wt_client *c, const wt_manifest *m, wt_sink *sink,
                           const wt_fetch_opts *opts, wt_errbuf *err);

/* ---- online updates (since 0.5) ---- */

/*
 * The current revision of model (first reachable endpoint, list order), or wait
 * for the next one: when known_revision is non-empty and equal to the server's
 * current revision, the server holds the request until the revision changes or
 * timeout_ms passes (the server caps it at 60000; 0 = answer at once). It
 * re-checks the model's source every revalidate_ms meanwhile. out_revision gets
 * the current revision (64 hex digits + NUL); *changed = 1 when it differs from
 * known_revision. WT_EBUSY when the server already holds max_watchers watches.
 * A reply whose revision is not 64 lowercase hex digits, or whose changed flag
 * contradicts known_revision (changed=1 for the known revision, 0 for
 * another), is WT_EPROTO; out_revision and *changed are then untouched.
 */
WT_API int wt_client_watch(wt_client *c, const char *model, const char *known_revision,
                           uint32_t timeout_ms, char out_revision[65], int *changed,
                           wt_errbuf *err);

/*
 * Tensors of new_m whose bytes differ from old_m (two manifests of the same
 * model, layout and rank, usually two revisions): same name, dtype and shape,
 * another XXH3-128. changed (optional) gets wt_manifest_n_tensors(new_m) flags
 * (1 = changed); *n_changed and *bytes (optional) the count and the sum of
 * their nbytes. WT_ELAYOUT when an in-place update is impossible — another
 * layout or rank, a tensor added, removed, or with another dtype or shape —
 * with a message naming the first such tensor and saying that a full reload
 * (wt_client_fetch of new_m into a fresh sink) is needed.
 */
WT_API int wt_manifest_delta(const wt_manifest *old_m, const wt_manifest *new_m,
                             unsigned char *changed, size_t *n_changed, uint64_t *bytes,
                             wt_errbuf *err);

/*
 * Fetch only the tensors i of m with select[i] != 0 (select has
 * wt_manifest_n_tensors(m) entries), verified exactly like wt_client_fetch.
 * The sink's begin() receives a manifest holding just those tensors (same
 * model, revision, layout and rank; tensor indices are into it).
 */
WT_API int wt_client_fetch_tensors(wt_client *c, const wt_manifest *m, const unsigned char *select,
                                   wt_sink *sink, const wt_fetch_opts *opts, wt_errbuf *err);

/* What an update moved (per rank). */
typedef struct wt_update_report {
	char revision_before[65]; /* old manifest's revision */
	char revision_after[65];  /* new manifest's revision */
	uint32_t tp_rank, ep_rank;
	uint64_t tensors_total;   /* tensors of the rank */
	uint64_t tensors_updated; /* changed tensors fetched */
	uint64_t bytes_total;     /* bytes of the rank */
	uint64_t bytes_updated;   /* verified bytes fetched: the changed tensors' bytes */
	uint64_t elapsed_us;      /* delta + fetch */
} wt_update_report;

/*
 * Update a sink that holds old_m's rank to new_m: wt_manifest_delta, then
 * wt_client_fetch_tensors of the changed tensors only. When none
 * changed the sink still sees an update of no tensor (begin with a manifest of
 * zero tensors, then end; no server is asked), so an update sink can refuse
 * tensors an earlier failed update left stale. The sink must write the tensors it is
 * given into what it already holds (wt_host_sink_update_sink(); the Python
 * update_into); a plain host or file sink would keep only the changed tensors.
 * report (optional) is filled on success and on WT_ELAYOUT (a refusal: full
 * reload needed; nothing fetched; refused by the delta, the sink is not called),
 * and on any other failure once the arguments were accepted: then
 * tensors_updated is 0 and bytes_updated the verified bytes the sink was given
 * before the failure (an update sink wrote them in place; weights.hpp's
 * UpdateError carries this report).
 */
WT_API int wt_client_fetch_update(wt_client *c, const wt_manifest *old_m, const wt_manifest *new_m,
                                  wt_sink *sink, const wt_fetch_opts *opts,
                                  wt_update_report *report, wt_errbuf *err);

/* ---- admin (storage teams) ---- */

typedef enum {
	WT_ADMIN_STATS = 1,
	WT_ADMIN_WARM = 2,
	WT_ADMIN_EVICT = 3,
	WT_ADMIN_VERIFY = 4,
	WT_ADMIN_REGISTER = 5,   /* wt_client_register() (it needs a URI) */
	WT_ADMIN_UNREGISTER = 6, /* model required; also wt_client_unregister() */
	WT_ADMIN_RECLAIM = 7,    /* give back disk space held by dead chunks (no model) */
} wt_admin_op;

typedef struct wt_admin_result {
	char *text; /* server's human-readable result; owned, freed by wt_admin_result_clear();
	               its control bytes but '\n' escaped as \xNN (safe to print) */
	uint64_t bytes;
	uint64_t shards;
	uint64_t chunks;
	uint64_t bad;         /* verify: chunks whose bytes do not match their hash;
	                         evict: shards left cached because a reader had them
	                         open (busy: evict again later; 0 = all dropped) */
	uint64_t disk_bytes;  /* stats: cache files on disk; reclaim: after the run */
	uint64_t disk_before; /* reclaim: cache files on disk before the run */
	uint64_t rewritten;   /* reclaim: live chunk bytes rewritten */
} wt_admin_result;

/*
 * Run an admin operation on the first reachable endpoint (in list order).
 * model may be NULL (all models) and layout NULL (every cached layout) where the
 * server allows it. On success the caller clears *out with wt_admin_result_clear().
 */
WT_API int wt_client_admin(wt_client *c, wt_admin_op op, const char *model, const wt_layout *layout,
                           wt_admin_result *out, wt_errbuf *err);
WT_API void wt_admin_result_clear(wt_admin_result *r); /* NULL is a no-op */

/*
 * Register model -> uri (file:///dir, s3://bucket/prefix, http(s)://) on the
 * first reachable endpoint. The server checks the source, then opens the
 * checkpoint (reading every byte of a new revision: minutes for a large
 * remote one) and keeps the registration across restarts (a file in its
 * cache_dir); the call returns when that open has ended, with the loader's
 * error if it failed (then nothing is registered). The same name with the
 * same URI again is a no-op success (or waits for that registration);
 * another URI, or a name from the server's models folder or configuration, is
 * WT_EEXIST. On success the caller clears *out with wt_admin_result_clear()
 * (out->bytes = checkpoint bytes).
 */
WT_API int wt_client_register(wt_client *c, const char *model, const char *uri,
                              wt_admin_result *out, wt_errbuf *err);

/* Since 1.4: how far the server's open of a model being registered got:
 * read of total bytes read for its revision (total 0 until known). Return 0
 * to go on waiting; anything else stops waiting: the call returns
 * WT_ECANCELED while the registration goes on in the server. */
typedef int (*wt_register_progress_fn)(void *ctx, uint64_t read, uint64_t total);

/*
 * Since 1.4: wt_client_register that calls progress(ctx, ...) (may be NULL)
 * about once a second while the server opens the model. The server answers
 * each request within a second (a server older than 1.4 only at the end:
 * then progress is never called), so no request is left waiting for
 * minutes. If the endpoint restarts meanwhile the registration is lost
 * (it was not saved): WT_ENOTFOUND or WT_ECANCELED says to register again.
 * If the server reads no byte of it for manifest_timeout_ms, WT_ETIMEDOUT
 * (the registration goes on in the server).
 */
WT_API int wt_client_register_progress(wt_client *c, const char *model, const char *uri,
                                       wt_register_progress_fn progress, void *ctx,
                                       wt_admin_result *out, wt_errbuf *err);

/*
 * Since 1.9: wt_client_register_progress of a model opened under a configuration
 * override (vLLM's hf_overrides): config_override is one JSON object merged over the
 * checkpoint's config.json before the server reads it (objects into objects, any other
 * value replacing the key's), e.g. {"architectures": ["DeepSeekMTPModel"]} to serve the
 * MTP draft a DeepSeek-V3 checkpoint holds, or a release whose config.json names another
 * class than the one it is served as. NULL or "": wt_client_register_progress. The
 * override is part of the registration (the same name with another override is
 * WT_EEXIST) and of the model's revision (docs/format.md "Configuration override"). Not
 * one non-empty JSON object (at most 64 KiB): WT_EINVAL from the server naming the fix.
 * A weightd older than 1.9 refuses it (WT_EINVAL, the message says to upgrade).
 */
WT_API int wt_client_register_override(wt_client *c, const char *model, const char *uri,
                                       const char *config_override,
                                       wt_register_progress_fn progress, void *ctx,
                                       wt_admin_result *out, wt_errbuf *err);

/*
 * Remove a model added by wt_client_register() on the first reachable
 * endpoint (also from its file). WT_ENOTFOUND for an unknown name, WT_EPERM
 * for a model from the server's models folder or configuration (the message
 * says how to remove it). Its cached shards stay: WT_ADMIN_EVICT drops them.
 * On success the caller clears *out with wt_admin_result_clear().
 */
WT_API int wt_client_unregister(wt_client *c, const char *model, wt_admin_result *out,
                                wt_errbuf *err);

#ifdef __cplusplus
}
#endif

#endif
