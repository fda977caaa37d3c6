/*
 * bench_fetch.c — libweights fetch against a real weightd, ratios against
 * baselines measured in the same run (docs/architecture.md section 6: numbers swing +-30%).
 *
 *   (a) cache-hit goodput to one client / raw loopback TCP copy of the same
 *       bytes over as many connections as the client uses          target >= 0.9
 *   (b) verified / unverified goodput (bench_client_set_verify: bench-only,
 *       not in libweights) >= 0.9
 *   (c) client peak RSS (`weightctl fetch`, file sink) for two shard sizes:
 *       RSS minus shard bytes, and RSS growth per shard byte     target ~0 (flat)
 *   (d) warm / cold fetch time (manifest + fetch; cold produces) target <= 0.1
 *   (e) the same as (a) and (b) over the bulk data plane (wt_client_opts.stream,
 *       weightd --stream-listen; docs/architecture.md 4.2), with 1 and with the
 *       client's connections, and client CPU seconds per GB for both paths
 *                                                                target >= 0.9, >= 0.95
 *   (f) into libweights' host sink over the stream: chunks received in place
 *       (wt_sink_ops recv_buf, libweights 1.3) / raw TCP, and / the same sink
 *       behind a 1.2 table (received into slot buffers, copied by write())
 *
 * Uses build/wt-mkckpt (llama, WT_BENCH_MB MiB, default 256) and build/weightd
 * next to this binary; WT_BENCH_WINDOW sets the window (default 8),
 * WT_BENCH_CONNS the client's connections (default 2). Goodputs are the best of
 * 3 runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/util/benchutil.h"
#include "client/client.h"
#include "common/common.h"
#include "weights/client.h"
#include "weights/engine.h"

static double secs(uint64_t t0)
{
	return (double)(common_now_ns() - t0) / 1e9;
}

/* ---- raw loopback TCP baseline: nbytes over n connections ---- */
typedef struct tcp_job {
	int fd;
	const char *src; /* sender: its part of the bytes */
	uint64_t nbytes;
	uint64_t got;
} tcp_job;

static void *tcp_sender(void *arg)
{
	tcp_job *j = arg;
	uint64_t done = 0;
	while (done < j->nbytes) {
		uint64_t left = j->nbytes - done;
		size_t n = left < (4u << 20) ? (size_t)left : (4u << 20);
		ssize_t w = send(j->fd, j->src + done, n, 0);
		if (w <= 0 && errno != EINTR)
			break;
		if (w > 0)
			done += (uint64_t)w;
	}
	close(j->fd);
	return NULL;
}

static void *tcp_receiver(void *arg)
{
	tcp_job *j = arg;
	size_t bufsz = 4u << 20;
	char *buf = malloc(bufsz);
	for (;;) {
		ssize_t r = buf != NULL ? recv(j->fd, buf, bufsz, 0) : 0;
		if (r > 0)
			j->got += (uint64_t)r;
		else if (r == 0 || errno != EINTR)
			break;
	}
	free(buf);
	close(j->fd);
	return NULL;
}

/* Bytes/s of moving nbytes of real data (a buffer of that size, in memory,
 * like the cached shard: not one small buffer that stays in the CPU cache) over
 * n loopback connections, a sender and a receiver thread each, the receiver
 * into a reused 4 MiB buffer; 0 on failure. */

static double tcp_goodput_cpu(uint64_t nbytes, size_t n, double *cpu_gb)
{
	enum { MAXC = 16 };
	char *src = malloc(nbytes ? nbytes : 1);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (src == NULL || n == 0 || n > MAXC || ls < 0 ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, MAXC) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &al) != 0) {
		free(src);
		return 0;
	}
	uint64_t st = 0x9e3779b97f4a7c15ull;
	for (uint64_t i = 0; i + 8 <= nbytes; i += 8) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(src + i, &st, 8);
	}
	tcp_job snd[MAXC], rcv[MAXC];
	pthread_t ts[MAXC], tr[MAXC];
	uint64_t off = 0;
	for (size_t i = 0; i < n; i++) {
		rcv[i] = (tcp_job){.fd = socket(AF_INET, SOCK_STREAM, 0)};
		if (connect(rcv[i].fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
			free(src);
			return 0;
		}
		uint64_t share = nbytes / n + (i == 0 ? nbytes % n : 0);
		snd[i] = (tcp_job){.fd = accept(ls, NULL, NULL), .src = src + off, .nbytes = share};
		off += share;
	}
	uint64_t t0 = common_now_ns();
	double c0 = bench_cpu_s();
	for (size_t i = 0; i < n; i++) {
		pthread_create(&tr[i], NULL, tcp_receiver, &rcv[i]);
		pthread_create(&ts[i], NULL, tcp_sender, &snd[i]);
	}
	uint64_t got = 0;
	for (size_t i = 0; i < n; i++) {
		pthread_join(tr[i], NULL);
		got += rcv[i].got;
	}
	double s = secs(t0);
	for (size_t i = 0; i < n; i++)
		pthread_join(ts[i], NULL);
	if (cpu_gb != NULL) /* the transfer only: the senders' and receivers' threads */
		*cpu_gb = nbytes > 0 ? (bench_cpu_s() - c0) / ((double)nbytes / 1e9) : 0;
	close(ls);
	free(src);
	return got == nbytes ? (double)nbytes / s : 0;
}

static double tcp_goodput(uint64_t nbytes, size_t n)
{
	return tcp_goodput_cpu(nbytes, n, NULL);
}

/* One manifest + fetch into sink (NULL: a counting sink, which keeps nothing). */
static int fetch_into(wt_client *c, const wt_layout *l, wt_sink *sink, double *gbps,
                      double *total_s, uint64_t *bytes)
{
	wt_manifest *m = NULL;
	wt_errbuf err;
	bench_count_sink cs;
	bench_count_sink_init(&cs);
	wt_fetch_stats st;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	uint64_t t0 = common_now_ns();
	int rv = wt_client_get_manifest(c, "llama", l, &m, &err);
	uint64_t t1 = common_now_ns();
	if (rv == WT_OK)
		rv = wt_client_fetch(c, m, sink != NULL ? sink : &cs.base, &fo, &err);
	if (rv != WT_OK) {
		fprintf(stderr, "bench_fetch: %s\n", err.msg);
		wt_manifest_free(m);
		return rv;
	}
	double fs = secs(t1);
	if (gbps != NULL)
		*gbps = (double)st.bytes / fs;
	if (total_s != NULL)
		*total_s = secs(t0);
	if (bytes != NULL)
		*bytes = st.bytes;
	wt_manifest_free(m);
	return WT_OK;
}

static int fetch_count(wt_client *c, const wt_layout *l, double *gbps, double *total_s,
                       uint64_t *bytes)
{
	return fetch_into(c, l, NULL, gbps, total_s, bytes);
}

static pid_t g_weightd = -1;   /* its CPU is measured beside the client's */
static double g_server_cpu_gb; /* weightd CPU s per GB over the last best_fetch_cpu */

/* Best goodput of 3 fetches into sink (NULL: counting); *cpu_gb (optional):
 * client CPU s per GB over all 3 (and g_server_cpu_gb weightd's). */
static double best_fetch_sink(wt_client *c, const wt_layout *l, wt_sink *sink, double *cpu_gb)
{
	double best = 0, g;
	uint64_t bytes = 0, b;
	double c0 = bench_cpu_s(), s0 = bench_proc_cpu_s(g_weightd);
	for (int i = 0; i < 3; i++)
		if (fetch_into(c, l, sink, &g, NULL, &b) == WT_OK) {
			bytes += b;
			if (g > best)
				best = g;
		}
	if (cpu_gb != NULL)
		*cpu_gb = bytes > 0 ? (bench_cpu_s() - c0) / ((double)bytes / 1e9) : 0;
	g_server_cpu_gb =
	    bytes > 0 ? (bench_proc_cpu_s(g_weightd) - s0) / ((double)bytes / 1e9) : 0;
	return best;
}

static double best_fetch_cpu(wt_client *c, const wt_layout *l, double *cpu_gb)
{
	return best_fetch_sink(c, l, NULL, cpu_gb);
}

static double best_fetch(wt_client *c, const wt_layout *l)
{
	return best_fetch_cpu(c, l, NULL);
}

/* ---- (f): into host memory, received in place or copied by write() ---- */

/* A host sink behind a libweights 1.2 ops table (no recv_buf): every chunk
 * is received into the fetch's slot buffers and copied by write(). */
typedef struct copy_sink {
	wt_sink base;
	wt_sink *in;
} copy_sink;

static wt_sink *inner(wt_sink *s)
{
	return ((copy_sink *)s)->in;
}
static int cs_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	return inner(s)->ops->begin(inner(s), m, err);
}
static int cs_tensor_begin(wt_sink *s, size_t t, wt_errbuf *err)
{
	return inner(s)->ops->tensor_begin(inner(s), t, err);
}
static int cs_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t n, wt_errbuf *err)
{
	return inner(s)->ops->write(inner(s), t, off, d, n, err);
}
static int cs_tensor_end(wt_sink *s, size_t t, wt_errbuf *err)
{
	return inner(s)->ops->tensor_end(inner(s), t, err);
}
static int cs_end(wt_sink *s, wt_errbuf *err)
{
	return inner(s)->ops->end(inner(s), err);
}
static void cs_abort(wt_sink *s)
{
	inner(s)->ops->abort(inner(s));
}
static const wt_sink_ops copy_ops = {
    .struct_size = offsetof(wt_sink_ops, abort) + sizeof(copy_ops.abort),
    .begin = cs_begin,
    .tensor_begin = cs_tensor_begin,
    .write = cs_write,
    .tensor_end = cs_tensor_end,
    .end = cs_end,
    .abort = cs_abort,
};

typedef struct host_res {
	double direct, copied, msg, direct_gb, copied_gb;
} host_res;

/* (f): goodput into libweights' host sink over the stream (in place, and
 * copied), and over messages; client CPU per GB. */
static void host_bench(const wt_client_opts *base, wt_client *msg_client, const wt_layout *l,
                       host_res *r)
{
	wt_client_opts o = *base;
	o.stream = 1;
	wt_client *c = NULL;
	wt_host_sink *h = NULL;
	wt_errbuf err;
	memset(r, 0, sizeof(*r));
	if (wt_host_sink_create(&h, &err) != WT_OK || wt_client_open(&c, &o, &err) != WT_OK) {
		fprintf(stderr, "bench_fetch: %s\n", err.msg);
		wt_host_sink_destroy(h);
		return;
	}
	copy_sink cp = {.base = {.ops = &copy_ops}, .in = wt_host_sink_sink(h)};
	/* untimed first: the heap then holds two shards' worth of touched memory
	 * (the sink keeps the last fetch while it fills the next), so that neither
	 * variant pays for faulting fresh pages in; then alternate */
	for (int k = 0; k < 2; k++)
		(void)fetch_into(c, l, wt_host_sink_sink(h), NULL, NULL, NULL);
	for (int k = 0; k < 2; k++) {
		double gd, gc, cd, cc;
		gd = best_fetch_sink(c, l, wt_host_sink_sink(h), &cd);
		gc = best_fetch_sink(c, l, &cp.base, &cc);
		if (gd > r->direct)
			r->direct = gd, r->direct_gb = cd;
		if (gc > r->copied)
			r->copied = gc, r->copied_gb = cc;
	}
	r->msg = best_fetch_sink(msg_client, l, wt_host_sink_sink(h), NULL);
	wt_client_close(c);
	wt_host_sink_destroy(h);
}

typedef struct stream_res {
	double verified, unverified, verified1, cpu_gb, cpu_gb_msg, srv_gb, srv_gb_msg;
} stream_res;

/* (e): the bulk stream with the client's connections, then with one. */
static void stream_bench(const wt_client_opts *base, wt_client *msg_client, const wt_layout *l,
                         stream_res *r)
{
	wt_client_opts o = *base;
	wt_client *c = NULL;
	wt_errbuf err;
	memset(r, 0, sizeof(*r));
	best_fetch_cpu(msg_client, l, &r->cpu_gb_msg);
	r->srv_gb_msg = g_server_cpu_gb;
	o.stream = 1;
	if (wt_client_open(&c, &o, &err) == WT_OK) {
		r->verified = best_fetch_cpu(c, l, &r->cpu_gb);
		r->srv_gb = g_server_cpu_gb;
		bench_client_set_verify(c, 0);
		r->unverified = best_fetch(c, l);
	}
	wt_client_close(c);
	c = NULL;
	o.connections = 1;
	if (wt_client_open(&c, &o, &err) == WT_OK)
		r->verified1 = best_fetch(c, l);
	wt_client_close(c);
}

/* (c): peak RSS of `weightctl fetch` for one tp size, in KiB; shard bytes out. */
static long rss_of_fetch(const char *url, const char *tp, uint64_t *shard_bytes)
{
	char bin[4200], out[4200];
	snprintf(bin, sizeof(bin), "%s/weightctl", bench_build());
	snprintf(out, sizeof(out), "%s/rss-%s.safetensors", bench_tmp(), tp);
	char *argv[] = {bin,         "fetch",    "--endpoint", (char *)url, "--model", "llama",
	                "--tp-size", (char *)tp, "--out",      out,         "--quiet", NULL};
	long rss = -1;
	if (bench_run(argv, &rss) != 0)
		return -1;
	struct stat st;
	*shard_bytes = stat(out, &st) == 0 ? (uint64_t)st.st_size : 0;
	unlink(out);
	return rss;
}

/* This process's resident KiB now (/proc/self/status VmRSS); -1 if unknown. */
static long self_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return kb;
}

/* (c), run first: a forked child's peak RSS starts at this process's RSS (the
 * pages it shares until exec count), so it is only meaningful while this
 * process is small; tp 4 and 2 (the fetches below use tp 1, cold first). */
static void rss_bench(const char *url)
{
	uint64_t s2 = 0, s4 = 0;
	long self = self_rss_kb();
	long r4 = rss_of_fetch(url, "4", &s4), r2 = rss_of_fetch(url, "2", &s2);
	if (r2 <= 0 || r4 <= 0)
		return;
	printf("(c) weightctl fetch peak RSS: %.1f MiB for a %.1f MiB shard (RSS - shard = %.1f "
	       "MiB), %.1f MiB for a %.1f MiB shard (RSS - shard = %.1f MiB); this bench's own "
	       "RSS at the fork %.1f MiB\n",
	       r4 / 1024.0, s4 / 1048576.0, r4 / 1024.0 - s4 / 1048576.0, r2 / 1024.0,
	       s2 / 1048576.0, r2 / 1024.0 - s2 / 1048576.0, self / 1024.0);
	printf("    RSS growth / shard growth = %.3f (target ~0: flat)\n",
	       s2 > s4 ? (double)(r2 - r4) * 1024.0 / (double)(s2 - s4) : 0.0);
}

int main(int argc, char **argv)
{
	(void)argc;
	/* as weightctl fetch does (docs/client.md): reuse chunk buffers */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	const char *mb = NULL;
	if (bench_init(argv[0], "fetch") != 0)
		return 1;
	char url[512];
	int rc = 1;
	pid_t wd = -1;
	wt_client *c = NULL;
	if ((wd = bench_fixture_and_weightd("bench_fetch", url, sizeof(url), &mb)) < 0)
		goto out;
	g_weightd = wd;
	wt_client_opts o;
	const char *eps[] = {url};
	bench_client_opts(&o, eps);
	wt_errbuf err;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		goto out;
	wt_layout l;
	wt_layout_init(&l);
	double cold_s, warm_s, g;
	uint64_t bytes;
	printf("fixture: llama %s MiB, weightd %s, window %u, connections %u\n", mb, url, o.window,
	       o.connections);
	rss_bench(url);
	if (fetch_count(c, &l, &g, &cold_s, &bytes) != WT_OK ||
	    fetch_count(c, &l, &g, &warm_s, NULL) != WT_OK)
		goto out;
	double verified = best_fetch(c, &l);
	bench_client_set_verify(c, 0);
	double unverified = best_fetch(c, &l);
	bench_client_set_verify(c, 1);
	size_t conns = o.connections < o.window ? o.connections : o.window;
	double raw_cpu_gb = 0;
	double raw = tcp_goodput_cpu(bytes, conns, &raw_cpu_gb);
	/* the same with one connection, a client of its own */
	wt_client *c1 = NULL;
	double verified1 = 0, raw1 = 0;
	if (conns > 1) {
		o.connections = 1;
		if (wt_client_open(&c1, &o, &err) == WT_OK)
			verified1 = best_fetch(c1, &l);
		wt_client_close(c1);
		raw1 = tcp_goodput(bytes, 1);
	}
	printf("shard bytes: %llu\n", (unsigned long long)bytes);
	printf("(a) cache-hit goodput %.2f GB/s / raw loopback TCP (%zu conn) %.2f GB/s = %.2f "
	       "(target >= 0.9)\n",
	       verified / 1e9, conns, raw / 1e9, raw > 0 ? verified / raw : 0);
	if (conns > 1)
		printf("    with 1 connection: %.2f GB/s / raw loopback TCP (1 conn) %.2f GB/s = "
		       "%.2f\n",
		       verified1 / 1e9, raw1 / 1e9, raw1 > 0 ? verified1 / raw1 : 0);
	printf("(b) verified %.2f GB/s / unverified %.2f GB/s = %.2f (target >= 0.9)\n",
	       verified / 1e9, unverified / 1e9, unverified > 0 ? verified / unverified : 0);
	stream_res sr;
	o.connections = (uint32_t)conns;
	stream_bench(&o, c, &l, &sr);
	if (raw1 == 0)
		raw1 = raw;
	printf("(e) bulk stream: cache-hit goodput %.2f GB/s / raw loopback TCP (%zu conn) %.2f "
	       "GB/s = %.2f (target >= 0.9)\n",
	       sr.verified / 1e9, conns, raw / 1e9, raw > 0 ? sr.verified / raw : 0);
	printf("    with 1 connection: %.2f GB/s / raw loopback TCP (1 conn) %.2f GB/s = %.2f\n",
	       sr.verified1 / 1e9, raw1 / 1e9, raw1 > 0 ? sr.verified1 / raw1 : 0);
	printf("    verified %.2f GB/s / unverified %.2f GB/s = %.2f (target >= 0.95)\n",
	       sr.verified / 1e9, sr.unverified / 1e9,
	       sr.unverified > 0 ? sr.verified / sr.unverified : 0);
	printf("    client CPU: %.2f s/GB over the stream, %.2f s/GB over messages\n", sr.cpu_gb,
	       sr.cpu_gb_msg);
	printf(
	    "    CPU per GB, both ends: stream %.2f (client %.2f + weightd %.2f), messages %.2f, "
	    "raw loopback TCP (%zu conn, sender + receiver) %.2f\n",
	    sr.cpu_gb + sr.srv_gb, sr.cpu_gb, sr.srv_gb, sr.cpu_gb_msg + sr.srv_gb_msg, conns,
	    raw_cpu_gb);
	host_res hr;
	host_bench(&o, c, &l, &hr);
	printf("(f) into host memory (wt_host_sink), bulk stream: received in place %.2f GB/s / "
	       "raw loopback TCP (%zu conn) = %.2f; copied by write() (a 1.2 sink) %.2f GB/s; "
	       "in place / copied = %.2f; over messages %.2f GB/s\n",
	       hr.direct / 1e9, conns, raw > 0 ? hr.direct / raw : 0, hr.copied / 1e9,
	       hr.copied > 0 ? hr.direct / hr.copied : 0, hr.msg / 1e9);
	printf("    client CPU: %.2f s/GB in place, %.2f s/GB copied\n", hr.direct_gb,
	       hr.copied_gb);
	printf("(d) warm %.3f s / cold %.3f s = %.3f (target <= 0.1)\n", warm_s, cold_s,
	       warm_s / cold_s);
	rc = 0;
out:
	wt_client_close(c);
	bench_finish(wd);
	return rc;
}
