/*
 * metrics.c — the operator's HTTP endpoint (libmicrohttpd, its own thread):
 *   GET /metrics   Prometheus text format 0.0.4: the STATS counters, cache
 *                  gauges, connections, and latency histograms of manifest
 *                  and chunk requests and of productions
 *   GET /healthz   200 "ok" while the process runs
 *   GET /readyz    200 "ready" once the cache is open and weightd listens;
 *                  503 "draining" after SIGTERM
 * Off unless metrics_listen = http://HOST:PORT is set. Only GET and HEAD;
 * connections are capped and time out, so a scraper cannot hold the daemon.
 *
 * Histograms are fixed buckets of atomic counters (no lock on the request
 * path): wd_hist_observe() is a few relaxed increments.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "weightd/server_int.h"

#define METRICS_MAX_CONNS    16u
#define METRICS_TIMEOUT_S    10u
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Upper bounds of the buckets, in seconds (the +Inf bucket is implicit). */
static const double bucket_s[WD_HIST_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

void wd_hist_observe(wd_hist *h, uint64_t ns)
{
	double s = (double)ns / 1e9;
	size_t i = 0;
	while (i < WD_HIST_BUCKETS && s > bucket_s[i])
		i++;
	atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
}

/* ---------------- the text ---------------- */

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
	        (unsigned long long)v);
}

static void gauge(FILE *f, const char *name, const char *help, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n%s %llu\n", name, help, name, name,
	        (unsigned long long)v);
}

/* One histogram series; label is "" or `kind="chunk"`. Buckets are cumulative. */
static void hist_series(FILE *f, const char *name, const char *label, const wd_hist *h)
{
	uint64_t cum = 0;
	const char *sep = label[0] ? "," : "";
	for (size_t i = 0; i <= WD_HIST_BUCKETS; i++) {
		cum += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
		if (i < WD_HIST_BUCKETS)
			fprintf(f, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, label, sep, bucket_s[i],
			        (unsigned long long)cum);
		else
			fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, label, sep,
			        (unsigned long long)cum);
	}
	double sum = (double)atomic_load_explicit(&h->sum_ns, memory_order_relaxed) / 1e9;
	fprintf(f, "%s_sum%s%s%s %.9f\n%s_count%s%s%s %llu\n", name, label[0] ? "{" : "", label,
	        label[0] ? "}" : "", sum, name, label[0] ? "{" : "", label, label[0] ? "}" : "",
	        (unsigned long long)cum);
}

static void write_metrics(wd_server *s, FILE *f)
{
	counter(f, "weightd_requests_total", "Requests received.", atomic_load(&s->requests));
	counter(f, "weightd_productions_total", "Layouts produced from the object store.",
	        atomic_load(&s->productions));
	counter(f, "weightd_production_output_bytes_total", "Shard bytes produced.",
	        atomic_load(&s->m.production_bytes));
	counter(f, "weightd_source_bytes_read_total", "Object-store bytes read, all models.",
	        wd_models_source_bytes(s->models));
	counter(f, "weightd_source_rewrites_total",
	        "Source objects found rewritten under an unchanged version: bytes that no "
	        "longer matched the revision's block digests (hashed again, produced at the "
	        "new revision).",
	        wd_models_source_rewrites(s->models));
	counter(f, "weightd_flight_waits_total",
	        "Requests that waited on a production already running.",
	        atomic_load(&s->flight_waits));
	counter(f, "weightd_chunk_replies_total", "Chunk replies sent.",
	        atomic_load(&s->chunk_replies));
	counter(f, "weightd_chunk_bytes_total", "Chunk bytes sent.",
	        atomic_load(&s->chunk_bytes_out));
	counter(f, "weightd_bulk_replies_total",
	        "Chunk replies sent on bulk streams (also in weightd_chunk_replies_total).",
	        atomic_load(&s->bulk_replies));
	counter(f, "weightd_bulk_streams_total",
	        "Bulk streams accepted (a client keeps its streams open between fetches).",
	        atomic_load(&s->bulk_streams));
	counter(f, "weightd_stalled_closed_total",
	        "Connections and bulk streams closed because a reply waited send_timeout_ms "
	        "(a client that stopped reading).",
	        atomic_load(&s->stalled_closed));
	wd_wbudget_stats wb;
	wd_wbudget_get(s->wbudget, &wb);
	gauge(f, "weightd_writeback_bytes",
	      "Produced chunk bytes in RAM, not yet written to the cache (writeback_bytes).",
	      wb.used);
	gauge(f, "weightd_writeback_peak_bytes", "Highest weightd_writeback_bytes so far.",
	      wb.peak);
	gauge(f, "weightd_writeback_kept_bytes",
	      "Released write-behind buffers kept for reuse (within writeback_bytes).", wb.kept);
	gauge(f, "weightd_writeback_prefaulted_bytes",
	      "Write-behind RAM faulted in at start (writeback_prefault_bytes).", wb.prefaulted);
	counter(f, "weightd_writeback_buffers_reused_total",
	        "Write-behind buffers taken from those kept instead of fresh memory.", wb.reused);
	counter(f, "weightd_peer_fills_total", "Layouts filled from a peer of the cache tier.",
	        atomic_load(&s->peer_fills));
	counter(f, "weightd_peer_bytes_total", "Bytes filled from peers.",
	        atomic_load(&s->peer_bytes));
	cache_stats cs;
	cache_stats_get(s->cache, &cs);
	gauge(f, "weightd_cache_bytes", "Distinct chunk bytes held.", cs.bytes);
	gauge(f, "weightd_cache_max_bytes", "Cache budget (cache_max_bytes).", cs.max_bytes);
	gauge(f, "weightd_cache_shards", "Committed shards.", cs.shards);
	gauge(f, "weightd_cache_chunks", "Distinct chunks held.", cs.chunks);
	gauge(f, "weightd_cache_disk_bytes", "Cache files on disk.", cs.disk_bytes);
	gauge(f, "weightd_cache_memory_bytes", "RAM tier bytes held.", cs.mem_used);
	counter(f, "weightd_cache_chunk_reads_total",
	        "Chunk reads from the cache, all hashed "
	        "but those counted in weightd_cache_memory_reads_total.",
	        cs.chunk_reads);
	counter(f, "weightd_cache_memory_reads_total",
	        "Chunk reads served from a RAM copy hashed on an earlier read, not hashed again.",
	        cs.ram_reads);
	counter(f, "weightd_cache_hits_total", "Shard lookups that found the shard.", cs.hits);
	counter(f, "weightd_cache_misses_total", "Shard lookups that missed.", cs.misses);
	counter(f, "weightd_cache_evictions_total", "Shards evicted (budget, admin, corruption).",
	        cs.evictions);
	counter(f, "weightd_cache_corruptions_total", "Chunks or records that failed their hash.",
	        cs.corruptions);
	counter(f, "weightd_cache_reclaims_total", "Disk reclaim runs.", cs.reclaims);
	gauge(f, "weightd_connections", "Connected clients (nng pipes).", wd_server_n_pipes(s));
	gauge(f, "weightd_productions_running", "Layouts being produced now.",
	      wd_flights_active(s->flights));
	uint64_t ms[WD_MODEL_N_STATES];
	wd_models_count(s->models, ms);
	fprintf(f,
	        "# HELP weightd_models Models by state: available (served), unavailable (does "
	        "not open; retried at each revalidation), opening (its first open running), "
	        "registering (an admin REGISTER opening it).\n"
	        "# TYPE weightd_models gauge\n"
	        "weightd_models{state=\"available\"} %llu\n"
	        "weightd_models{state=\"unavailable\"} %llu\n"
	        "weightd_models{state=\"opening\"} %llu\n"
	        "weightd_models{state=\"registering\"} %llu\n",
	        (unsigned long long)ms[WD_MODEL_AVAILABLE],
	        (unsigned long long)ms[WD_MODEL_UNAVAILABLE],
	        (unsigned long long)ms[WD_MODEL_OPENING],
	        (unsigned long long)ms[WD_MODEL_REGISTERING]);
	fprintf(f, "# HELP weightd_request_seconds Time from a request's arrival to its reply.\n"
	           "# TYPE weightd_request_seconds histogram\n");
	hist_series(f, "weightd_request_seconds", "kind=\"manifest\"", &s->m.manifest);
	hist_series(f, "weightd_request_seconds", "kind=\"chunk\"", &s->m.chunk);
	fprintf(f, "# HELP weightd_production_seconds Time to produce every rank of a layout.\n"
	           "# TYPE weightd_production_seconds histogram\n");
	hist_series(f, "weightd_production_seconds", "", &s->m.production);
}

/* ---------------- HTTP ---------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, size_t len,
                             const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	enum MHD_Result rv = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rv;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	char *body = strdup(text);
	return body ? reply(c, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

static bool is_ready(wd_server *s)
{
	pthread_mutex_lock(&s->lk);
	bool ready = s->cache != NULL && s->n_urls > 0 && !s->draining;
	pthread_mutex_unlock(&s->lk);
	return ready;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_len, void **state)
{
	(void)version;
	(void)upload;
	wd_server *s = cls;
	if (*state == NULL) { /* first call: headers only; answer on the next */
		*state = (void *)1;
		return MHD_YES;
	}
	if (*upload_len != 0) { /* a body: consume it, answer once it has all come */
		*upload_len = 0;
		*state = (void *)2;
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
	if (*state == (void *)2)
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "no request body expected\n");
	if (strcmp(url, "/healthz") == 0)
		return reply_text(c, MHD_HTTP_OK, "ok\n");
	if (strcmp(url, "/readyz") == 0)
		return is_ready(s) ? reply_text(c, MHD_HTTP_OK, "ready\n")
		                   : reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "draining\n");
	if (strcmp(url, "/metrics") != 0)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "try /metrics, /healthz or /readyz\n");
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (f == NULL)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	write_metrics(s, f);
	if (fclose(f) != 0) {
		free(body);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return reply(c, MHD_HTTP_OK, body, len, METRICS_CONTENT_TYPE);
}

/* "http://HOST:PORT" -> a socket address (HOST: an IPv4/IPv6 literal, [v6], or a name). */
static int parse_listen(const char *url, struct sockaddr_storage *ss, wt_errbuf *err)
{
	const char *bad = "metrics_listen '%s': give http://HOST:PORT (e.g. http://127.0.0.1:9450)";
	if (strncmp(url, "http://", 7) != 0)
		return wt_seterr(err, WT_ECONFIG, bad, url);
	const char *h = url + 7, *colon;
	char host[256];
	if (h[0] == '[') {
		const char *end = strchr(h, ']');
		if (end == NULL || end[1] != ':' || (size_t)(end - h - 1) >= sizeof(host))
			return wt_seterr(err, WT_ECONFIG, bad, url);
		snprintf(host, sizeof(host), "%.*s", (int)(end - h - 1), h + 1);
		colon = end + 1;
	} else {
		colon = strrchr(h, ':');
		if (colon == NULL || colon == h || (size_t)(colon - h) >= sizeof(host))
			return wt_seterr(err, WT_ECONFIG, bad, url);
		snprintf(host, sizeof(host), "%.*s", (int)(colon - h), h);
	}
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || (*end != '\0' && strcmp(end, "/") != 0) || port < 0 || port > 65535)
		return wt_seterr(err, WT_ECONFIG, bad, url);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	int g = getaddrinfo(host, NULL, &hints, &ai);
	if (g != 0 || ai == NULL)
		return wt_seterr(err, WT_ECONFIG, "metrics_listen '%s': host '%s': %s", url, host,
		                 gai_strerror(g));
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	return WT_OK;
}

int wd_metrics_check_url(const char *url, wt_errbuf *err)
{
	struct sockaddr_storage ss;
	return url[0] == '\0' ? WT_OK : parse_listen(url, &ss, err);
}

int wd_metrics_start(wd_server *s, wt_errbuf *err)
{
	const char *url = s->cfg->metrics_listen;
	if (url == NULL || url[0] == '\0')
		return WT_OK;
	struct sockaddr_storage ss;
	int rv = parse_listen(url, &ss, err);
	if (rv != WT_OK)
		return rv;
	/* epoll (MHD_USE_AUTO): select() cannot watch a socket whose fd is 1024 or
	 * more, and a daemon holding a thousand connections has such fds; its
	 * health probes then went unanswered */
	unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->metrics =
	    MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
	                     (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, METRICS_MAX_CONNS,
	                     MHD_OPTION_PER_IP_CONNECTION_LIMIT, METRICS_MAX_CONNS / 2,
	                     MHD_OPTION_CONNECTION_TIMEOUT, METRICS_TIMEOUT_S, MHD_OPTION_END);
	if (s->metrics == NULL)
		return wt_seterr(err, WT_EIO,
		                 "metrics_listen '%s': cannot listen (address in use or not "
		                 "local?)",
		                 url);
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->metrics, MHD_DAEMON_INFO_BIND_PORT);
	s->metrics_port = di != NULL ? di->port : 0;
	return WT_OK;
}

void wd_metrics_stop(wd_server *s)
{
	if (s->metrics != NULL)
		MHD_stop_daemon(s->metrics);
	s->metrics = NULL;
}

unsigned wd_server_metrics_port(const wd_server *s)
{
	return s->metrics != NULL ? s->metrics_port : 0;
}
