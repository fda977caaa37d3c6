/* cmd_shard.c — `weightctl shard --model-dir DIR <layout> --out FILE`: produce one rank
 * offline and write it as safetensors (tensors in name order, weightd.* metadata).
 * The header comes from the plan, so each tensor (or part of one: a batched expert
 * stack's) is written at its place as it is produced, not held until the end: the
 * command holds what the production does, not the rank's whole shard. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"

#define SHARD_PART_BYTES ((uint64_t)4 << 20) /* a batched stack's parts */

static int on_part(void *ctx, uint32_t rank, size_t ix, uint64_t off, const void *bytes, uint64_t n,
                   wt_errbuf *err)
{
	(void)rank;
	if (n > SIZE_MAX)
		return wt_seterr(err, WT_ETOOBIG, "tensor %zu: %llu bytes at once", ix,
		                 (unsigned long long)n);
	return st_writer_write_at(ctx, ix, off, bytes, (size_t)n, err);
}

static int on_tensor(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t nbytes,
                     wt_errbuf *err)
{
	return on_part(ctx, rank, ix, 0, bytes, nbytes, err);
}

/* The file and the message of its first failed write (the writer's callbacks
 * return a code alone; production threads write at once). */
typedef struct out_file {
	common_afile f;
	pthread_mutex_t lk;
	wt_errbuf io; /* lk */
} out_file;

static int out_failed(out_file *o, int rv, const wt_errbuf *e)
{
	pthread_mutex_lock(&o->lk);
	if (o->io.code == WT_OK)
		o->io = *e;
	pthread_mutex_unlock(&o->lk);
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

/* Produce rank of p into path (atomic: FILE.tmp.PID, then renamed) with meta, on
 * `threads` threads. */
static int write_rank(const char *path, ckpt *c, const sm_plan *p, uint32_t rank, unsigned threads,
                      const st_kv *meta, size_t n_meta, wt_errbuf *err)
{
	size_t n = shardmap_rank_n_tensors(p, rank);
	st_desc *descs = calloc(n ? n : 1, sizeof(st_desc));
	out_file *f = calloc(1, sizeof(*f));
	if (descs == NULL || f == NULL) {
		free(descs);
		free(f);
		return wt_seterr(err, WT_ENOMEM, "out of memory for %zu tensors", n);
	}
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(p, rank, i);
		descs[i].name = t->name;
		descs[i].dtype = t->dtype;
		descs[i].ndim = t->ndim;
		memcpy(descs[i].shape, t->shape, sizeof(t->shape));
	}
	pthread_mutex_init(&f->lk, NULL);
	st_writer *w = NULL;
	/* durable: a written shard is kept, not regenerated */
	int rv = common_afile_open(&f->f, path, true, err);
	if (rv == WT_OK)
		rv = st_writer_open_at(&w, descs, n, meta, n_meta, out_write, out_pwrite, f, err);
	if (rv == WT_OK) {
		sm_produce_opts o = {.only_rank = rank,
		                     .threads = threads,
		                     .emit = on_tensor,
		                     .emit_part = on_part,
		                     .part_bytes = SHARD_PART_BYTES,
		                     .ctx = w};
		rv = shardmap_produce_ex(c, p, &o, err);
	}
	if (rv == WT_OK) /* every byte read belongs to the revision written */
		rv = ckpt_check(c, err);
	if (rv == WT_OK) {
		rv = st_writer_close(w, err);
		w = NULL;
	}
	st_writer_abort(w);
	if (rv == WT_OK)
		rv = common_afile_commit(&f->f, err);
	if (rv != WT_OK && f->io.msg[0] != '\0' && f->io.code == rv)
		*err = f->io; /* what the file said ("No space left on device") */
	if (rv != WT_OK)
		common_afile_abort(&f->f); /* no-op once committed or never opened */
	pthread_mutex_destroy(&f->lk);
	free(f);
	free(descs);
	return rv;
}

#define SHARD_MAX_THREADS 16

static const ctl_flag shard_flags[] = {{"--threads", true, 0}};

static int shard_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	(void)flag;
	return ctl_remote_u32(cmd, "--threads", val, 1, SHARD_MAX_THREADS, ctx);
}

/* The default --threads: the CPUs online, 4 at the most (each holds its own buffers). */
static uint32_t default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4 ? 4 : (uint32_t)n;
}

static void shard_usage(FILE *f)
{
	fprintf(f, "usage: weightctl shard --model-dir DIR <layout flags as for plan> --out FILE\n"
	           "                       [--name NAME] [--threads N]\n\n"
	           "Write rank (tp_rank, ep_rank) of the layout as a safetensors file with\n"
	           "__metadata__ weightd.format/model/revision/layout/rank. --tp-rank is required\n"
	           "when --tp-size > 1, --ep-rank when --ep-size > 1. weightd.model is NAME\n"
	           "(default: the folder's basename); use the name weightd serves the model\n"
	           "under to get the bytes `weightctl fetch --model NAME` writes.\n"
	           "Tensors are produced on --threads N threads (1..16; default: the CPUs\n"
	           "online, 4 at the most) and written at their place as they come.\n"
	           "Ctrl-C (SIGINT) or SIGTERM removes the partial FILE.tmp.PID and exits\n"
	           "130 / 143. Exit 0 ok, 2 usage, 3 layout invalid (for this model),\n"
	           "1 other errors.\n");
}

int ctl_shard_cmd(int argc, char **argv)
{
	ctl_layout_args a;
	uint32_t threads = default_threads();
	ctl_flagset own = CTL_FLAGSET(shard_flags, shard_flag, &threads);
	int rc = ctl_parse_layout_args("shard", argc, argv, &own, &a);
	if (rc == CTL_OK && !a.help && !a.out) {
		fprintf(stderr, "weightctl shard: --out FILE is required\n");
		rc = CTL_USAGE;
	}
	/* one rank is written: never guess which */
	if (rc == CTL_OK && !a.help && a.layout.tp_size > 1 && !a.tp_rank_set) {
		fprintf(stderr,
		        "weightctl shard: --tp-size %u writes one rank: --tp-rank R (0..%u) "
		        "is required\n",
		        a.layout.tp_size, a.layout.tp_size - 1);
		rc = CTL_USAGE;
	}
	if (rc == CTL_OK && !a.help && a.layout.ep_size > 1 && !a.ep_rank_set) {
		fprintf(stderr,
		        "weightctl shard: --ep-size %u writes one rank: --ep-rank E (0..%u) "
		        "is required\n",
		        a.layout.ep_size, a.layout.ep_size - 1);
		rc = CTL_USAGE;
	}
	if (rc != CTL_OK || a.help) {
		shard_usage(a.help && rc == CTL_OK ? stdout : stderr);
		ctl_layout_args_clear(&a);
		return rc;
	}
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	wt_errbuf err = {0};
	(void)ctl_remove_tmp_on_stop("shard", a.out); /* too long: the write refuses it */
	if ((rc = ctl_open_model("shard", a.model_dir, &s, &c)) != CTL_OK)
		goto out;
	if ((rc = ctl_plan("shard", c, &a.layout, &p)) != CTL_OK)
		goto out;
	char lay[1024], name[256], rk[64];
	wt_layout_format(&a.layout, lay, sizeof(lay));
	if (a.name != NULL)
		snprintf(name, sizeof(name), "%s", a.name);
	else
		ctl_model_name(a.model_dir, name, sizeof(name));
	snprintf(rk, sizeof(rk), "tp_rank=%u,ep_rank=%u", a.layout.tp_rank, a.layout.ep_rank);
	st_kv meta[] = {
	    {"weightd.format", "1"},
	    {"weightd.model", name},
	    {"weightd.revision", (char *)ckpt_revision(c)},
	    {"weightd.layout", lay},
	    {"weightd.rank", rk},
	};
	int rv = write_rank(a.out, c, p, wt_layout_rank_index(&a.layout), threads, meta,
	                    sizeof(meta) / sizeof(meta[0]), &err);
	rc = rv == WT_OK ? CTL_OK : CTL_ERR;
	if (rv != WT_OK)
		fprintf(stderr, "weightctl shard: %s: %s (%s)\n", a.out, err.msg, wt_errname(rv));
out:
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	ctl_layout_args_clear(&a);
	return rc;
}
