/*
 * cmd_fetch.c — `weightctl fetch`: fetch one rank's shard from weightd into a
 * safetensors file, verified (byte-identical to `weightctl shard`), with
 * --out-dir DIR every rank of the layout (the files `weightctl shard --out-dir`
 * writes), or with --cuda-device N into the memory of a CUDA device (engine.h's
 * CUDA sink).
 */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/ctl_update.h"
#include "client/weightctl/weightctl.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/weights.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: weightctl fetch --endpoint URL [--endpoint URL...] --model NAME\n"
	        "                       [layout flags] (--out FILE | --out-dir DIR |\n"
	        "                       --cuda-device N)\n"
	        "                       [--window N] [--connections N] [--quiet]\n"
	        "                       [--timeout-ms N] [--connect-timeout-ms N] [--retries N]\n"
	        "                       [--retry-budget-ms N] [--token-file F] [--verbose]\n"
	        "                       [--cut-through] (a layout being produced: its chunks\n"
	        "                       as they are produced, not after the commit)\n"
	        "                       [--stream] (chunk bytes on the server's bulk stream when\n"
	        "                       it offers one; else messages)\n"
	        "                       [--tls-ca-file F [--tls-cert-key-file F]] (tls+tcp://)\n"
	        "                       [--update-from OLD] (with --out: fetch only the tensors\n"
	        "                       that differ from rank file OLD; prints the update report)\n"
	        "token: --token-file F, or WEIGHTCTL_TOKEN, or --token T (shows in ps)\n"
	        "layout flags: --tp-size T --tp-rank r --ep-size P --ep-rank e --quant Q\n"
	        "  --dtype D --exclude PAT --w13-order O --vocab-pad N --group-size G\n"
	        "  --requant allow|deny (as `weightctl shard`)\n"
	        "Every chunk and tensor is checked against its XXH3-128; FILE appears only\n"
	        "when all of it verified. --out-dir DIR (no --tp-rank / --ep-rank): every rank\n"
	        "of the layout, one after another on one connection, as DIR/tpR-epE.safetensors\n"
	        "(DIR made if missing), each file what --out writes for that rank, all of one\n"
	        "revision (a model that changed on the server mid-way: the files written are\n"
	        "removed and the layout fetched again, twice at most); a failure stops at the\n"
	        "rank it names. --cuda-device N fetches into device N's memory\n"
	        "instead (pinned staging, one arena) and prints a summary line unless --quiet.\n"
	        "Connection trouble is retried for --retry-budget-ms (default 30000) before\n"
	        "failing; a shard that changed on the server is fetched again from the start.\n"
	        "Ctrl-C (SIGINT) or SIGTERM during the fetch stops it within 0.1 s and removes\n"
	        "the partial file (a second one exits at once).\n"
	        "Exit: 0 ok, 2 usage, 3 layout invalid, 130/143 interrupted (SIGINT/SIGTERM),\n"
	        "1 other (no usable CUDA device too).\n");
}

typedef struct progress {
	uint64_t t0_ns;
	uint64_t last_ns;
	int tty;
} progress;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void show(const progress *p, uint64_t done, uint64_t total, int final)
{
	double s = (double)(now_ns() - p->t0_ns) / 1e9;
	double mbs = s > 0 ? (double)done / 1e6 / s : 0;
	double eta = mbs > 0 ? (double)(total - done) / 1e6 / mbs : 0;
	fprintf(stderr, "\r%.1f / %.1f MiB  %.1f MB/s  ETA %.0fs   %s", (double)done / 1048576.0,
	        (double)total / 1048576.0, mbs, eta, final ? "\n" : "");
}

static int on_progress(void *ctx, uint64_t done, uint64_t total)
{
	progress *p = ctx;
	uint64_t t = now_ns();
	if (t - p->last_ns >= 200000000ull) { /* 5 updates a second */
		p->last_ns = t;
		show(p, done, total, 0);
	}
	return 0;
}

typedef struct fetch_args {
	int quiet;
	const char *out;         /* borrowed from argv */
	const char *out_dir;     /* --out-dir DIR: every rank */
	const char *update_from; /* --update-from OLD */
	int cuda;                /* --cuda-device given */
	uint32_t cuda_device;
} fetch_args;

static const ctl_flag fetch_flags[] = {
    {"--quiet", false, 'q'},    {"--out", true, 0},         {"--out-dir", true, 0},
    {"--update-from", true, 0}, {"--cuda-device", true, 0},
};

static int fetch_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	fetch_args *fa = ctx;
	if (strcmp(flag, "--quiet") == 0)
		fa->quiet = 1;
	else if (strcmp(flag, "--out") == 0)
		fa->out = val;
	else if (strcmp(flag, "--out-dir") == 0)
		fa->out_dir = val;
	else if (strcmp(flag, "--update-from") == 0)
		fa->update_from = val;
	else { /* --cuda-device */
		fa->cuda = 1;
		return ctl_remote_u32(cmd, flag, val, 0, 1023, &fa->cuda_device);
	}
	return 0;
}

/* The tensors and bytes the CUDA sink holds after a fetch of m. */
static void cuda_summary(const wt_cuda_sink *cs, const wt_manifest *m, uint32_t dev)
{
	uint64_t bytes = 0;
	size_t found = 0;
	for (size_t i = 0; i < wt_manifest_n_tensors(m); i++) {
		wt_tensor_info t;
		void *p;
		uint64_t n;
		if (wt_manifest_tensor(m, i, &t) == WT_OK &&
		    wt_cuda_sink_find(cs, t.name, &p, &n) == WT_OK) {
			bytes += n;
			found++;
		}
	}
	printf("weightctl fetch: %s rank tp=%u ep=%u: %zu tensors, %llu bytes on cuda device %u\n",
	       wt_manifest_model(m), wt_manifest_tp_rank(m), wt_manifest_ep_rank(m), found,
	       (unsigned long long)bytes, dev);
}

/* --update-from: the delta against the old rank file, and the report. */
static int update(wt_client *c, const wt_manifest *m, const fetch_args *fa, wt_sink *sink,
                  const wt_fetch_opts *fo, wt_errbuf *err)
{
	wt_update_report rep;
	int rv = ctl_update_from(c, m, fa->update_from, sink, fo, &rep, err);
	if (rv == WT_OK && !fa->quiet)
		printf("weightctl fetch: update %.12s -> %.12s rank tp=%u ep=%u: %llu of %llu "
		       "tensors, %llu of %llu bytes fetched in %.1f ms\n",
		       rep.revision_before, rep.revision_after, rep.tp_rank, rep.ep_rank,
		       (unsigned long long)rep.tensors_updated,
		       (unsigned long long)rep.tensors_total, (unsigned long long)rep.bytes_updated,
		       (unsigned long long)rep.bytes_total, (double)rep.elapsed_us / 1000.0);
	return rv;
}

/* The flags that must go together, and the layout. CTL_OK or the exit code. */
static int check_args(const fetch_args *fa, const ctl_remote *r)
{
	if (fa->update_from != NULL && fa->out == NULL) {
		fprintf(stderr, "weightctl fetch: --update-from OLD needs --out NEW\n");
		return CTL_USAGE;
	}
	if (r->model == NULL || (fa->out != NULL) + (fa->out_dir != NULL) + fa->cuda != 1) {
		fprintf(stderr,
		        "weightctl fetch: --model NAME and one of --out FILE, --out-dir DIR "
		        "or --cuda-device N are required\n");
		usage(stderr);
		return CTL_USAGE;
	}
	if (fa->out_dir != NULL && (r->tp_rank_given || r->ep_rank_given)) {
		fprintf(stderr,
		        "weightctl fetch: --out-dir fetches every rank; drop --%s-rank, or fetch "
		        "that rank alone with --out FILE\n",
		        r->tp_rank_given ? "tp" : "ep");
		return CTL_USAGE;
	}
	wt_errbuf err;
	int rv = wt_layout_check(&r->layout, &err);
	if (rv != WT_OK) {
		ctl_remote_perror("fetch", rv, &err);
		return CTL_LAYOUT;
	}
	return CTL_OK;
}

/* SIGINT / SIGTERM. During a fetch (g_fetching): set the fetch's cancel flag
 * (wt_fetch_opts.cancel), so that it ends within 100 ms, also on a server that
 * stopped answering, and the sink aborts (the file sink removes its temporary
 * file, which a plain kill left behind, as large as what had come); ctl_fetch
 * then exits 128 + the signal. Before or after it (no temporary file), or a
 * second signal: exit at once. Only async-signal-safe calls; any thread may
 * run it. A signal ignored when weightctl started stays ignored. */
static int g_stop;                          /* the cancel flag, read atomically */
static volatile sig_atomic_t g_fetching;    /* a fetch or update is running */
static volatile sig_atomic_t g_stop_signal; /* the signal that set g_stop */

static void on_stop_signal(int sig)
{
	if (!g_fetching || g_stop_signal != 0)
		_exit(128 + sig);
	g_stop_signal = sig;
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
}

/* 128 + the signal when rv is the fetch's answer to one (the message said
 * here), else CTL_OK. */
static int interrupted(int rv, const wt_errbuf *err)
{
	int sig = g_stop_signal;
	if (rv != WT_ECANCELED || sig == 0)
		return CTL_OK;
	fprintf(stderr, "weightctl fetch: interrupted by %s: %s; nothing written\n",
	        sig == SIGINT ? "SIGINT" : "SIGTERM", err->msg);
	return 128 + sig;
}

/* The fetch (--update-from: the update) with SIGINT / SIGTERM caught; a shard
 * that changed under the fetch (sink aborted, nothing mixed) is fetched again
 * from the start, twice at most (*m is then the new manifest). */
static int run_fetch(wt_client *c, const char *model, const wt_layout *l, wt_manifest **m,
                     const fetch_args *fa, wt_sink *sink, const wt_fetch_opts *fo, wt_errbuf *err)
{
	ctl_catch_stop_signals(on_stop_signal);
	g_fetching = 1;
	int rv;
	if (fa->update_from != NULL) {
		rv = update(c, *m, fa, sink, fo, err);
	} else {
		rv = wt_client_fetch(c, *m, sink, fo, err);
		for (int again = 0; rv == WT_ECHANGED && again < 2; again++) {
			fprintf(stderr, "weightctl fetch: %s; fetching it again\n", err->msg);
			wt_manifest_free(*m);
			*m = NULL;
			if ((rv = wt_client_get_manifest(c, model, l, m, err)) == WT_OK)
				rv = wt_client_fetch(c, *m, sink, fo, err);
		}
	}
	g_fetching = 0;
	return rv;
}

/* A fetch's options: progress on a TTY unless quiet (into *p), stats into *st, the cancel
 * flag SIGINT / SIGTERM set. */
static void fetch_opts(wt_fetch_opts *fo, progress *p, wt_fetch_stats *st, int quiet)
{
	*p = (progress){.t0_ns = now_ns(), .last_ns = 0, .tty = !quiet && isatty(2)};
	wt_fetch_opts_init(fo);
	fo->progress = p->tty ? on_progress : NULL;
	fo->progress_ctx = p;
	fo->stats = st;
	fo->cancel = &g_stop;
}

/* What fetch_rank did: the file written, the revision not the layout's. */
typedef struct rank_fetch {
	const char *path;
	uint32_t k;     /* the rank's index, tp fastest */
	char rev[160];  /* the layout's revision: its first rank's */
	char seen[160]; /* changed: the revision this rank's manifest named */
	bool wrote;     /* path holds this run's rank file */
	bool changed;   /* the rank's manifest is of another revision */
} rank_fetch;

/* Rank rf->k of the layout into rf->path (DIR made at the first rank, once its manifest
 * came: a refused layout leaves nothing). CTL_OK or the exit code. */
static int fetch_rank(wt_client *c, const ctl_remote *r, const fetch_args *fa, rank_fetch *rf)
{
	wt_layout l = r->layout; /* a shallow copy: only the ranks change */
	l.tp_rank = rf->k % l.tp_size;
	l.ep_rank = rf->k / l.tp_size;
	wt_manifest *m = NULL;
	wt_file_sink *fs = NULL;
	wt_errbuf err;
	int code = CTL_OK, rv = wt_client_get_manifest(c, r->model, &l, &m, &err);
	if (rv != WT_OK) {
		code = ctl_plan_exit(rv, true);
		goto fail;
	}
	snprintf(rf->seen, sizeof(rf->seen), "%s", wt_manifest_revision(m));
	if (rf->rev[0] != '\0' && strcmp(rf->rev, rf->seen) != 0) {
		rf->changed = true;
		goto done;
	}
	snprintf(rf->rev, sizeof(rf->rev), "%s", wt_manifest_revision(m));
	if (rf->k == 0 && (code = ctl_make_out_dir("fetch", fa->out_dir)) != CTL_OK)
		goto done;
	if ((rv = wt_file_sink_create(&fs, rf->path, 1, &err)) != WT_OK) {
		code = ctl_remote_exit(rv);
		goto fail;
	}
	progress p;
	wt_fetch_stats st;
	wt_fetch_opts fo;
	fetch_opts(&fo, &p, &st, fa->quiet);
	rv = run_fetch(c, r->model, &l, &m, fa, wt_file_sink_sink(fs), &fo, &err);
	if (p.tty && m != NULL)
		show(&p, st.bytes, wt_manifest_total_bytes(m), 1);
	if (rv != WT_OK) {
		if ((code = interrupted(rv, &err)) != CTL_OK)
			goto done;
		code = ctl_remote_exit(rv);
		goto fail;
	}
	rf->wrote = true;
	snprintf(rf->seen, sizeof(rf->seen), "%s", wt_manifest_revision(m));
	rf->changed = strcmp(rf->rev, rf->seen) != 0; /* re-fetched after a change */
	if (r->verbose)
		fprintf(stderr,
		        "weightctl fetch: %s: %zu tensors, %llu bytes, %llu chunks from %s\n",
		        rf->path, wt_manifest_n_tensors(m), (unsigned long long)st.bytes,
		        (unsigned long long)st.chunks, st.endpoint);
	goto done;
fail:
	wt_errprefix(&err, "rank tp=%u ep=%u", l.tp_rank, l.ep_rank);
	ctl_remote_perror("fetch", rv, &err);
done:
	wt_file_sink_destroy(fs);
	wt_manifest_free(m);
	return code;
}

/* --out-dir: every rank of the layout, tp fastest, on one client. The files are of one
 * revision: when a rank's manifest names another revision than the first rank's (the model
 * changed on the server mid-way), the files this pass wrote are removed and the layout is
 * fetched again from its first rank, twice at most. A failure stops at its rank (named);
 * the files before it stay, each whole and verified. CTL_OK or the exit code. */
static int fetch_dir(wt_client *c, const ctl_remote *r, const fetch_args *fa)
{
	uint32_t n = r->layout.tp_size * r->layout.ep_size;
	char **paths = calloc(n, sizeof(char *));
	int code = paths == NULL ? CTL_ERR : CTL_OK;
	for (uint32_t k = 0; code == CTL_OK && k < n; k++)
		if ((paths[k] = ctl_rank_path(fa->out_dir, r->layout.tp_size, k)) == NULL)
			code = CTL_ERR;
	if (code != CTL_OK)
		fprintf(stderr, "weightctl fetch: out of memory\n");
	for (int pass = 0; code == CTL_OK; pass++) {
		rank_fetch rf = {.rev = ""};
		uint32_t wrote = 0;
		for (uint32_t k = 0; k < n && code == CTL_OK && !rf.changed; k++) {
			rf.path = paths[k];
			rf.k = k;
			rf.wrote = false;
			code = fetch_rank(c, r, fa, &rf);
			wrote += rf.wrote;
		}
		if (!rf.changed)
			break;
		for (uint32_t k = 0; k < wrote; k++)
			(void)unlink(paths[k]);
		fprintf(
		    stderr,
		    "weightctl fetch: model %s changed on the server during the fetch "
		    "(revision %.12s at rank tp=0 ep=0, %.12s at rank tp=%u ep=%u)%s\n",
		    r->model, rf.rev, rf.seen, rf.k % r->layout.tp_size, rf.k / r->layout.tp_size,
		    pass < 2 ? "; the files written are removed and every rank fetched again"
		             : "; giving up after three passes, no rank file left: run it again");
		if (pass == 2)
			code = CTL_ERR;
	}
	for (uint32_t k = 0; paths != NULL && k < n; k++)
		free(paths[k]);
	free(paths);
	return code;
}

int ctl_fetch(int argc, char **argv)
{
	fetch_args fa = {0};
	ctl_remote r;
	int code = CTL_OK;
	wt_client *c = NULL;
	wt_manifest *m = NULL;
	wt_file_sink *fs = NULL;
	wt_cuda_sink *cs = NULL;
	wt_sink *sink = NULL;
	wt_errbuf err;
	ctl_remote_init(&r);
	/* Chunk messages (window x chunk bytes) are allocated and freed all the time: keep
	 * them on the heap, reused, instead of fresh mmaps that fault in every page (and
	 * glibc's moving mmap threshold that makes RSS creep with the shard size). */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	int help = 0;
	ctl_flagset own = CTL_FLAGSET(fetch_flags, fetch_flag, &fa);
	code = ctl_remote_parse(&r, "fetch", argc, argv, &own, NULL, 0, NULL, usage, &help);
	if (code != CTL_OK || help)
		goto done;
	if ((code = check_args(&fa, &r)) != CTL_OK)
		goto done;
	int rv;
	/* the device first: a machine without one fails before asking for the shard */
	if (fa.cuda && (rv = wt_cuda_sink_create(&cs, (int)fa.cuda_device, &err)) != WT_OK) {
		ctl_remote_perror("fetch", rv, &err);
		code = ctl_remote_exit(rv);
		goto done;
	}
	if ((code = ctl_remote_open(&r, "fetch", &c)) != CTL_OK)
		goto done;
	if (fa.out_dir != NULL) {
		code = fetch_dir(c, &r, &fa);
		goto done;
	}
	if ((rv = wt_client_get_manifest(c, r.model, &r.layout, &m, &err)) != WT_OK) {
		/* the daemon's plan-time refusals exit as `weightctl shard` does */
		ctl_remote_perror("fetch", rv, &err);
		code = ctl_plan_exit(rv, true);
		goto done;
	}
	if (!fa.cuda && (rv = wt_file_sink_create(&fs, fa.out, 1, &err)) != WT_OK) {
		ctl_remote_perror("fetch", rv, &err);
		code = ctl_remote_exit(rv);
		goto done;
	}
	sink = fa.cuda ? wt_cuda_sink_sink(cs) : wt_file_sink_sink(fs);
	progress p;
	wt_fetch_stats st;
	wt_fetch_opts fo;
	fetch_opts(&fo, &p, &st, fa.quiet);
	rv = run_fetch(c, r.model, &r.layout, &m, &fa, sink, &fo, &err);
	if (fa.update_from != NULL) {
		if (rv != WT_OK && (code = interrupted(rv, &err)) == CTL_OK) {
			ctl_remote_perror("fetch", rv, &err);
			code = ctl_remote_exit(rv);
		}
		goto done;
	}
	if (p.tty && m != NULL)
		show(&p, st.bytes, wt_manifest_total_bytes(m), 1);
	if (rv != WT_OK && (code = interrupted(rv, &err)) != CTL_OK)
		goto done;
	if (rv != WT_OK) {
		ctl_remote_perror("fetch", rv, &err);
		code = ctl_remote_exit(rv);
		goto done;
	}
	if (r.verbose)
		fprintf(stderr,
		        "weightctl fetch: %s: %zu tensors, %llu bytes, %llu chunks from %s "
		        "(retries %u, re-fetches %u, fail-overs %u, resumes %u)%s\n",
		        fa.cuda ? "cuda device" : fa.out, wt_manifest_n_tensors(m),
		        (unsigned long long)st.bytes, (unsigned long long)st.chunks, st.endpoint,
		        st.retries, st.refetches, st.failovers, st.reconnects,
		        wt_manifest_live(m) ? ", cut-through (live manifest)" : "");
	if (fa.cuda && !fa.quiet)
		cuda_summary(cs, m, fa.cuda_device);
done:
	wt_cuda_sink_destroy(cs);
	wt_file_sink_destroy(fs);
	wt_manifest_free(m);
	wt_client_close(c);
	ctl_remote_clear(&r);
	return code;
}
