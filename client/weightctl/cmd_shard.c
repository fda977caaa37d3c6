/* cmd_shard.c — `weightctl shard --model-dir DIR <layout> --out FILE`: produce one rank
 * offline and write it as safetensors (tensors in name order, weightd.* metadata). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/weightctl.h"

typedef struct collect {
	void **data; /* per tensor (name order); owned copies */
	size_t n;
} collect;

static int on_tensor(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t nbytes,
                     wt_errbuf *err)
{
	(void)rank;
	collect *cl = ctx;
	if (ix >= cl->n || cl->data[ix])
		return wt_seterr(err, WT_EINVAL, "tensor %zu emitted twice or out of range", ix);
	cl->data[ix] = malloc(nbytes ? nbytes : 1);
	if (!cl->data[ix])
		return wt_seterr(err, WT_ENOMEM, "out of memory holding %llu bytes",
		                 (unsigned long long)nbytes);
	memcpy(cl->data[ix], bytes, nbytes);
	return WT_OK;
}

static void shard_usage(FILE *f)
{
	fprintf(f, "usage: weightctl shard --model-dir DIR <layout flags as for plan> --out FILE\n"
	           "                       [--name NAME]\n\n"
	           "Write rank (tp_rank, ep_rank) of the layout as a safetensors file with\n"
	           "__metadata__ weightd.format/model/revision/layout/rank. --tp-rank is required\n"
	           "when --tp-size > 1, --ep-rank when --ep-size > 1. weightd.model is NAME\n"
	           "(default: the folder's basename); use the name weightd serves the model\n"
	           "under to get the bytes `weightctl fetch --model NAME` writes.\n"
	           "Ctrl-C (SIGINT) or SIGTERM removes the partial FILE.tmp.PID and exits\n"
	           "130 / 143. Exit 0 ok, 2 usage, 3 layout invalid (for this model),\n"
	           "1 other errors.\n");
}

int ctl_shard_cmd(int argc, char **argv)
{
	ctl_layout_args a;
	int rc = ctl_parse_layout_args("shard", argc, argv, NULL, &a);
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
	collect cl = {0};
	st_desc *descs = NULL;
	wt_errbuf err = {0};
	(void)ctl_remove_tmp_on_stop("shard", a.out); /* too long: the write refuses it */
	if ((rc = ctl_open_model("shard", a.model_dir, &s, &c)) != CTL_OK)
		goto out;
	if ((rc = ctl_plan("shard", c, &a.layout, &p)) != CTL_OK)
		goto out;
	uint32_t rank = wt_layout_rank_index(&a.layout);
	cl.n = shardmap_rank_n_tensors(p, rank);
	cl.data = calloc(cl.n ? cl.n : 1, sizeof(void *));
	descs = calloc(cl.n ? cl.n : 1, sizeof(st_desc));
	rc = CTL_ERR;
	if (!cl.data || !descs) {
		fprintf(stderr, "weightctl shard: out of memory\n");
		goto out;
	}
	int rv = shardmap_produce(c, p, rank, on_tensor, &cl, &err);
	if (rv == WT_OK) /* every byte read belongs to the revision written below */
		rv = ckpt_check(c, &err);
	if (rv != WT_OK) {
		fprintf(stderr, "weightctl shard: %s (%s)\n", err.msg, wt_errname(rv));
		goto out;
	}
	for (size_t i = 0; i < cl.n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(p, rank, i);
		descs[i].name = t->name;
		descs[i].dtype = t->dtype;
		descs[i].ndim = t->ndim;
		memcpy(descs[i].shape, t->shape, sizeof(t->shape));
	}
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
	rv = st_write_path(a.out, descs, (const void *const *)cl.data, cl.n, meta,
	                   sizeof(meta) / sizeof(meta[0]), &err);
	if (rv != WT_OK) {
		fprintf(stderr, "weightctl shard: %s: %s (%s)\n", a.out, err.msg, wt_errname(rv));
		goto out;
	}
	rc = CTL_OK;
out:
	for (size_t i = 0; i < cl.n && cl.data; i++)
		free(cl.data[i]);
	free(cl.data);
	free(descs);
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	ctl_layout_args_clear(&a);
	return rc;
}
