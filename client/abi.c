/*
 * abi.c — versioned structs handed in by callers (client.h: wt_client_opts,
 * wt_fetch_opts, wt_manifest_opts; engine.h: wt_sink_ops). Their first member is struct_size,
 * members are only ever appended, so a caller built against an older header
 * declares a smaller size: the library copies the members that end within it
 * over its own defaults and never reads past it.
 *
 * The sizes a caller may declare are the ends of the members, listed per
 * struct below: append the end of every new member (docs/client.md, "ABI rules").
 */
#include <stddef.h>
#include <string.h>

#include "client/client_int.h"
#include "weights/engine.h"
#include "weights/weights.h"

/* Where member m of T ends. */
#define END(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))

/* The oldest accepted layout ends at n_endpoints: endpoints are required. */
static const size_t client_opts_ends[] = {
    END(wt_client_opts, n_endpoints),
    END(wt_client_opts, connect_timeout_ms),
    END(wt_client_opts, request_timeout_ms),
    END(wt_client_opts, manifest_timeout_ms),
    END(wt_client_opts, window),
    END(wt_client_opts, connections),
    END(wt_client_opts, max_retries),
    END(wt_client_opts, backoff_initial_ms),
    END(wt_client_opts, backoff_max_ms),
    END(wt_client_opts, max_message_bytes),
    END(wt_client_opts, hash_refetch),
    END(wt_client_opts, token),
    END(wt_client_opts, client_id),
    END(wt_client_opts, log),
    END(wt_client_opts, log_ctx),
    END(wt_client_opts, log_level),
    END(wt_client_opts, retry_budget_ms),
    offsetof(wt_client_opts, tls_ca_file), /* 0.3's sizeof: retry_budget_ms + padding */
    END(wt_client_opts, tls_ca_file),
    END(wt_client_opts, tls_cert_key_file),
    END(wt_client_opts, mode),
    END(wt_client_opts, cut_through),
    END(wt_client_opts, stream),
    sizeof(wt_client_opts),
};

/* Every fetch option is optional. */
static const size_t fetch_opts_ends[] = {
    END(wt_fetch_opts, struct_size), END(wt_fetch_opts, progress), END(wt_fetch_opts, progress_ctx),
    END(wt_fetch_opts, stats),       END(wt_fetch_opts, cancel),   sizeof(wt_fetch_opts),
};

/* Every manifest option is optional. */
static const size_t manifest_opts_ends[] = {
    END(wt_manifest_opts, struct_size),
    END(wt_manifest_opts, revision),
    END(wt_manifest_opts, cache_only),
    sizeof(wt_manifest_opts),
};

/* The six callbacks of the first versioned table are required; recv_buf (1.3) is not. */
static const size_t sink_ops_ends[] = {
    END(wt_sink_ops, abort),
    END(wt_sink_ops, recv_buf),
    sizeof(wt_sink_ops),
};

#define N_ENDS(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Copy src (its struct_size first) over dst (dst_size bytes of defaults).
 * what names the struct; its init function is "<what>_init".
 */
static int struct_in(void *dst, size_t dst_size, const void *src, const size_t *ends, size_t n_ends,
                     const char *what, wt_errbuf *err)
{
	size_t size;
	memcpy(&size, src, sizeof(size));
	size_t i = 0;
	while (i < n_ends && ends[i] != size)
		i++;
	if (size == 0)
		return wt_seterr(err, WT_EVERSION,
		                 "%s.struct_size is 0: fill the struct with %s_init() (or set "
		                 "struct_size = sizeof(%s)) before passing it",
		                 what, what, what);
	if (size > dst_size)
		return wt_seterr(err, WT_EVERSION,
		                 "%s.struct_size %zu is larger than libweights %s knows (%zu): the "
		                 "program was built against newer headers; run it with the "
		                 "libweights it was built against or a newer one",
		                 what, size, WT_VERSION_STRING, dst_size);
	if (i == n_ends)
		return wt_seterr(err, WT_EVERSION,
		                 "%s.struct_size %zu is not the size of any %s layout (%zu..%zu, "
		                 "ending on a member): the struct is uninitialised or corrupt; "
		                 "fill it with %s_init() first",
		                 what, size, what, ends[0], dst_size, what);
	memcpy(dst, src, size);
	memcpy(dst, &dst_size, sizeof(dst_size)); /* the copy is complete now */
	return WT_OK;
}

int client_opts_in(wt_client_opts *dst, const wt_client_opts *src, wt_errbuf *err)
{
	wt_client_opts_init(dst);
	if (src == NULL)
		return wt_seterr(err, WT_EINVAL, "client: opts is NULL; pass a wt_client_opts");
	return struct_in(dst, sizeof(*dst), src, client_opts_ends, N_ENDS(client_opts_ends),
	                 "wt_client_opts", err);
}

int client_fetch_opts_in(wt_fetch_opts *dst, const wt_fetch_opts *src, wt_errbuf *err)
{
	wt_fetch_opts_init(dst);
	if (src == NULL)
		return WT_OK;
	return struct_in(dst, sizeof(*dst), src, fetch_opts_ends, N_ENDS(fetch_opts_ends),
	                 "wt_fetch_opts", err);
}

int client_manifest_opts_in(wt_manifest_opts *dst, const wt_manifest_opts *src, wt_errbuf *err)
{
	wt_manifest_opts_init(dst);
	if (src == NULL)
		return WT_OK;
	return struct_in(dst, sizeof(*dst), src, manifest_opts_ends, N_ENDS(manifest_opts_ends),
	                 "wt_manifest_opts", err);
}

int client_sink_ops_in(wt_sink_ops *dst, const wt_sink *sink, wt_errbuf *err)
{
	wt_sink_ops_init(dst);
	if (sink == NULL || sink->ops == NULL)
		return wt_seterr(err, WT_EINVAL, "fetch: a sink with an ops table is required");
	int rv = struct_in(dst, sizeof(*dst), sink->ops, sink_ops_ends, N_ENDS(sink_ops_ends),
	                   "wt_sink_ops", err);
	if (rv != WT_OK)
		return rv;
	const char *missing = dst->begin == NULL          ? "begin"
	                      : dst->tensor_begin == NULL ? "tensor_begin"
	                      : dst->write == NULL        ? "write"
	                      : dst->tensor_end == NULL   ? "tensor_end"
	                      : dst->end == NULL          ? "end"
	                      : dst->abort == NULL        ? "abort"
	                                                  : NULL;
	if (missing != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "sink: wt_sink_ops.%s is NULL; every callback of the table is "
		                 "required",
		                 missing);
	return WT_OK;
}

void wt_fetch_opts_init(wt_fetch_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
}

void wt_manifest_opts_init(wt_manifest_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
}

void wt_sink_ops_init(wt_sink_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->struct_size = sizeof(*ops);
}
