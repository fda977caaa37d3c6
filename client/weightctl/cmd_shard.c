/* cmd_shard.c — `weightctl shard --model-dir DIR <layout> --out FILE`: produce one rank
 * offline and write it as safetensors (tensors in name order, weightd.* metadata);
 * with `--out-dir DIR` every rank of the layout in one pass over the checkpoint.
 * The header comes from the plan, so each tensor (or part of one: a batched expert
 * stack's) is written at its place as it is produced, not held until the end: the
 * command holds what the production does, not the ranks' whole shards. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"

#define SHARD_PART_BYTES  ((uint64_t)4 << 20) /* a batched stack's parts */
#define SHARD_MAX_THREADS 16

typedef struct outs outs;

/* One rank's file: its writer (NULL: the rank is not written). */
typedef struct out_file {
	common_afile f;
	st_writer *w;
	outs *all;
} out_file;

/* The files of one production, and the message of the first failed write (the
 * writers' callbacks return a code alone; production threads write at once). */
struct outs {
	out_file *f; /* [n] by rank */
	uint32_t n;
	pthread_mutex_t lk;
	wt_errbuf io; /* lk */
};

static int out_failed(out_file *o, int rv, const wt_errbuf *e)
{
	pthread_mutex_lock(&o->all->lk);
	if (o->all->io.code == WT_OK)
		o->all->io = *e;
	pthread_mutex_unlock(&o->all->lk);
	return rv;
}

static int out_write(void *ctx, const void *data, size_t len)
{
	wt_errbuf e;
	int rv = common_afile_write(&((out_file *)ctx)->f, data, len, &e);
	return rv == WT_OK ? rv : out_failed(ctx, rv, &e);
}

static int out_pwrite(void *ctx, const void *data, size_t len, uint64_t at)
{
	wt_errbuf e;
	int rv = common_afile_pwrite(&((out_file *)ctx)->f, data, len, at, &e);
	return rv == WT_OK ? rv : out_failed(ctx, rv, &e);
}

static int on_part(void *ctx, uint32_t rank, size_t ix, uint64_t off, const void *bytes, uint64_t n,
                   wt_errbuf *err)
{
	outs *o = ctx;
	if (rank >= o->n || o->f[rank].w == NULL)
		return wt_seterr(err, WT_EINVAL, "rank %u: produced, but not written", rank);
	if (n > SIZE_MAX)
		return wt_seterr(err, WT_ETOOBIG, "tensor %zu: %llu bytes at once", ix,
		                 (unsigned long long)n);
	return st_writer_write_at(o->f[rank].w, ix, off, bytes, (size_t)n, err);
}

static int on_tensor(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t nbytes,
                     wt_errbuf *err)
{
	return on_part(ctx, rank, ix, 0, bytes, nbytes, err);
}

/* What every rank's file says of the model (weightd.* metadata but the rank). */
typedef struct shard_meta {
	const char *model, *revision, *layout;
	uint32_t tp_size;
} shard_meta;

/* Open rank's file at path: its header from the plan. */
static int open_rank(out_file *f, const char *path, const sm_plan *p, uint32_t rank,
                     const shard_meta *sm, wt_errbuf *err)
{
	size_t n = shardmap_rank_n_tensors(p, rank);
	st_desc *descs = calloc(n ? n : 1, sizeof(st_desc));
	if (descs == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu tensors", n);
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(p, rank, i);
		descs[i].name = t->name;
		descs[i].dtype = t->dtype;
		descs[i].ndim = t->ndim;
		memcpy(descs[i].shape, t->shape, sizeof(t->shape));
	}
	char rk[64];
	snprintf(rk, sizeof(rk), "tp_rank=%u,ep_rank=%u", rank % sm->tp_size, rank / sm->tp_size);
	st_kv meta[] = {
	    {"weightd.format", "1"},
	    {"weightd.model", (char *)sm->model},
	    {"weightd.revision", (char *)sm->revision},
	    {"weightd.layout", (char *)sm->layout},
	    {"weightd.rank", rk},
	};
	/* durable: a written shard is kept, not regenerated */
	int rv = common_afile_open(&f->f, path, true, err);
	if (rv == WT_OK)
		rv = st_writer_open_at(&f->w, descs, n, meta, sizeof(meta) / sizeof(meta[0]),
		                       out_write, out_pwrite, f, err);
	free(descs);
	if (rv != WT_OK)
		wt_errprefix(err, "%s", path);
	return rv;
}

/* Produce the ranks of p whose paths[rank] are set (only >= 0: that rank alone; else
 * every rank, in one pass over the checkpoint) on `threads` threads, each into its
 * file (atomic: FILE.tmp.PID, renamed once every file is whole and the checkpoint's
 * bytes were its revision's). */
static int write_ranks(char *const *paths, ckpt *c, const sm_plan *p, int64_t only,
                       unsigned threads, const shard_meta *sm, wt_errbuf *err)
{
	outs o = {.n = shardmap_n_ranks(p)};
	if ((o.f = calloc(o.n, sizeof(*o.f))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %u ranks", o.n);
	pthread_mutex_init(&o.lk, NULL);
	int rv = WT_OK;
	for (uint32_t r = 0; r < o.n; r++) {
		o.f[r].f.fd = -1;
		o.f[r].all = &o;
		if (paths[r] != NULL && rv == WT_OK)
			rv = open_rank(&o.f[r], paths[r], p, r, sm, err);
	}
	if (rv == WT_OK) {
		sm_produce_opts po = {.only_rank = only,
		                      .threads = threads,
		                      .emit = on_tensor,
		                      .emit_part = on_part,
		                      .part_bytes = SHARD_PART_BYTES,
		                      .ctx = &o};
		rv = shardmap_produce_ex(c, p, &po, err);
	}
	if (rv == WT_OK) /* every byte read belongs to the revision written */
		rv = ckpt_check(c, err);
	for (uint32_t r = 0; r < o.n; r++) {
		if (o.f[r].w != NULL && rv == WT_OK &&
		    (rv = st_writer_close(o.f[r].w, err)) != WT_OK)
			wt_errprefix(err, "%s", paths[r]);
		else if (o.f[r].w != NULL && rv != WT_OK)
			st_writer_abort(o.f[r].w);
		o.f[r].w = NULL;
	}
	for (uint32_t r = 0; r < o.n && rv == WT_OK; r++)
		if (paths[r] != NULL && (rv = common_afile_commit(&o.f[r].f, err)) != WT_OK)
			wt_errprefix(err, "%s", paths[r]);
	if (rv != WT_OK && o.io.msg[0] != '\0' && o.io.code == rv)
		*err = o.io; /* what the file said ("No space left on device") */
	for (uint32_t r = 0; r < o.n; r++)
		common_afile_abort(&o.f[r].f); /* no-op once committed or never opened */
	pthread_mutex_destroy(&o.lk);
	free(o.f);
	return rv;
}

typedef struct shard_opts {
	uint32_t threads;
	const char *out_dir;
} shard_opts;

static const ctl_flag shard_flags[] = {{"--threads", true, 0}, {"--out-dir", true, 0}};

static int shard_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	shard_opts *so = ctx;
	if (strcmp(flag, "--out-dir") == 0) {
		so->out_dir = val;
		return 0;
	}
	return ctl_remote_u32(cmd, "--threads", val, 1, SHARD_MAX_THREADS, &so->threads);
}

/* The default --threads: the CPUs online, 4 at the most (each holds its own buffers). */
static uint32_t default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4 ? 4 : (uint32_t)n;
}

static void shard_usage(FILE *f)
{
	fprintf(f,
	        "usage: weightctl shard --model-dir DIR <layout flags as for plan> --out FILE\n"
	        "                       [--name NAME] [--threads N]\n"
	        "       weightctl shard --model-dir DIR <layout flags but the ranks> --out-dir "
	        "DIR\n"
	        "                       [--name NAME] [--threads N]\n\n"
	        "Write rank (tp_rank, ep_rank) of the layout as a safetensors file with\n"
	        "__metadata__ weightd.format/model/revision/layout/rank. --tp-rank is required\n"
	        "when --tp-size > 1, --ep-rank when --ep-size > 1. With --out-dir, every rank\n"
	        "of the layout in one pass over the checkpoint, as DIR/tpR-epE.safetensors\n"
	        "(DIR made if missing), each file what --out writes for that rank.\n"
	        "weightd.model is NAME (default: the folder's basename); use the name weightd\n"
	        "serves the model under to get the bytes `weightctl fetch --model NAME` writes.\n"
	        "Tensors are produced on --threads N threads (1..16; default: the CPUs\n"
	        "online, 4 at the most) and written at their place as they come.\n"
	        "Ctrl-C (SIGINT) or SIGTERM removes the partial FILE.tmp.PID files and exits\n"
	        "130 / 143. Exit 0 ok, 2 usage, 3 layout invalid (for this model),\n"
	        "1 other errors.\n");
}

/* The usage errors of shard's flags: CTL_USAGE after a message, else CTL_OK. */
static int check_flags(const ctl_layout_args *a, const shard_opts *so)
{
	const wt_layout *l = &a->layout;
	if ((a->out == NULL) == (so->out_dir == NULL)) {
		fprintf(stderr, "weightctl shard: %s\n",
		        a->out ? "--out FILE (one rank) or --out-dir DIR (every rank), not both"
		               : "--out FILE is required (or --out-dir DIR for every rank)");
		return CTL_USAGE;
	}
	if (so->out_dir != NULL && (a->tp_rank_set || a->ep_rank_set)) {
		fprintf(stderr,
		        "weightctl shard: --out-dir writes every rank; drop --%s-rank, or "
		        "write that rank alone with --out FILE\n",
		        a->tp_rank_set ? "tp" : "ep");
		return CTL_USAGE;
	}
	/* one rank is written: never guess which */
	if (a->out != NULL && l->tp_size > 1 && !a->tp_rank_set) {
		fprintf(stderr,
		        "weightctl shard: --tp-size %u writes one rank: --tp-rank R (0..%u) "
		        "is required (or --out-dir DIR for every rank)\n",
		        l->tp_size, l->tp_size - 1);
		return CTL_USAGE;
	}
	if (a->out != NULL && l->ep_size > 1 && !a->ep_rank_set) {
		fprintf(stderr,
		        "weightctl shard: --ep-size %u writes one rank: --ep-rank E (0..%u) "
		        "is required (or --out-dir DIR for every rank)\n",
		        l->ep_size, l->ep_size - 1);
		return CTL_USAGE;
	}
	return CTL_OK;
}

/* paths[rank] for the ranks written (--out: one; --out-dir: every rank), malloc'd. */
static int out_paths(const ctl_layout_args *a, const shard_opts *so, uint32_t n_ranks, char ***out)
{
	char **paths = calloc(n_ranks, sizeof(char *));
	if (paths == NULL)
		return -1;
	*out = paths;
	if (so->out_dir == NULL) {
		paths[wt_layout_rank_index(&a->layout)] = strdup(a->out);
		return paths[wt_layout_rank_index(&a->layout)] ? 0 : -1;
	}
	for (uint32_t r = 0; r < n_ranks; r++)
		if ((paths[r] = ctl_rank_path(so->out_dir, a->layout.tp_size, r)) == NULL)
			return -1;
	return 0;
}

int ctl_shard_cmd(int argc, char **argv)
{
	ctl_layout_args a;
	shard_opts so = {.threads = default_threads()};
	ctl_flagset own = CTL_FLAGSET(shard_flags, shard_flag, &so);
	int rc = ctl_parse_layout_args("shard", argc, argv, &own, &a);
	if (rc == CTL_OK && !a.help)
		rc = check_flags(&a, &so);
	if (rc != CTL_OK || a.help) {
		shard_usage(a.help && rc == CTL_OK ? stdout : stderr);
		ctl_layout_args_clear(&a);
		return rc;
	}
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	char **paths = NULL;
	uint32_t n_ranks = a.layout.tp_size * a.layout.ep_size;
	wt_errbuf err = {0};
	if (so.out_dir != NULL && (rc = ctl_make_out_dir("shard", so.out_dir)) != CTL_OK)
		goto out;
	rc = CTL_ERR;
	if (out_paths(&a, &so, n_ranks, &paths) != 0) {
		fprintf(stderr, "weightctl shard: out of memory\n");
		goto out;
	}
	/* too long: the write refuses it */
	(void)ctl_remove_tmps_on_stop("shard", (const char *const *)paths, n_ranks);
	if ((rc = ctl_open_model("shard", a.model_dir, a.config_override, &s, &c)) != CTL_OK)
		goto out;
	if ((rc = ctl_plan("shard", c, &a.layout, &p)) != CTL_OK)
		goto out;
	char lay[1024], name[256];
	wt_layout_format(&a.layout, lay, sizeof(lay));
	if (a.name != NULL)
		snprintf(name, sizeof(name), "%s", a.name);
	else
		ctl_model_name(a.model_dir, name, sizeof(name));
	shard_meta sm = {name, ckpt_revision(c), lay, a.layout.tp_size};
	int64_t only = so.out_dir ? -1 : (int64_t)wt_layout_rank_index(&a.layout);
	int rv = write_ranks(paths, c, p, only, so.threads, &sm, &err);
	rc = rv == WT_OK ? CTL_OK : CTL_ERR;
	if (rv != WT_OK)
		fprintf(stderr, "weightctl shard: %s (%s)\n", err.msg, wt_errname(rv));
out:
	for (uint32_t r = 0; paths != NULL && r < n_ranks; r++)
		free(paths[r]);
	free(paths);
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	ctl_layout_args_clear(&a);
	return rc;
}
