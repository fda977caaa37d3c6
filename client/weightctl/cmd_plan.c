/* cmd_plan.c — `weightctl plan --model-dir DIR <layout> [--rank-only]`: print each rank's
 * runtime tensors (name, dtype, shape, bytes, role) and byte totals. */
#include <stdio.h>
#include <string.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/weightctl.h"

static const char *role_name(sm_role r)
{
	static const char *const names[] = {"weight", "scale", "bias", "input_scale"};
	return (unsigned)r < 4 ? names[r] : "?";
}

static void plan_usage(FILE *f)
{
	fprintf(f,
	        "usage: weightctl plan --model-dir DIR --tp-size T --tp-rank r [--ep-size P "
	        "--ep-rank e]\n"
	        "       [--quant none|fp8-tensor|fp8-channel|fp8-block|int8-channel|int4-group]\n"
	        "       [--dtype source|bf16|fp16|fp32] [--exclude PAT]... [--w13-order "
	        "gate_up|up_gate]\n"
	        "       [--vocab-pad N] [--group-size G] [--requant allow] [--rank-only] "
	        "[--name NAME]\n"
	        "       [--config-override JSON | --architecture CLASS]\n\n"
	        "Print every rank's runtime tensors (or only rank (r, e) with --rank-only).\n"
	        "NAME (default: the folder's basename) is the model name printed.\n"
	        "--config-override merges a JSON object over config.json before it is read\n"
	        "(vLLM's hf_overrides; the revision then names it too); --architecture CLASS\n"
	        "is {\"architectures\": [CLASS]}, e.g. DeepSeekMTPModel.\n"
	        "Exit 0 ok, 2 usage, 3 layout invalid (for this model), 1 other errors.\n");
}

static void print_rank(const sm_plan *p, uint32_t rank, uint32_t tp, uint64_t ck)
{
	size_t n = shardmap_rank_n_tensors(p, rank);
	uint64_t b = shardmap_rank_bytes(p, rank);
	printf("rank %u (tp_rank=%u,ep_rank=%u): %zu tensors, %llu bytes (%.4f of checkpoint)\n",
	       rank, rank % tp, rank / tp, n, (unsigned long long)b,
	       ck ? (double)b / (double)ck : 0.0);
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(p, rank, i);
		char sh[128];
		ctl_shape_text(t->shape, t->ndim, sh, sizeof(sh));
		printf("  %-60s %-8s %-22s %12llu %s%s\n", t->name, wt_dtype_name(t->dtype), sh,
		       (unsigned long long)t->nbytes, role_name(t->role),
		       t->requantized ? " requantized" : "");
	}
}

int ctl_plan_cmd(int argc, char **argv)
{
	ctl_layout_args a;
	int rc = ctl_parse_layout_args("plan", argc, argv, NULL, &a);
	if (rc != CTL_OK || a.help) {
		plan_usage(a.help && rc == CTL_OK ? stdout : stderr);
		ctl_layout_args_clear(&a);
		return rc;
	}
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	if ((rc = ctl_open_model("plan", a.model_dir, a.config_override, &s, &c)) != CTL_OK)
		goto out;
	if ((rc = ctl_plan("plan", c, &a.layout, &p)) != CTL_OK)
		goto out;
	char lay[1024], name[256];
	wt_layout_format(&a.layout, lay, sizeof(lay));
	if (a.name != NULL)
		snprintf(name, sizeof(name), "%s", a.name);
	else
		ctl_model_name(a.model_dir, name, sizeof(name));
	uint64_t ck = ckpt_total_bytes(c), total = 0;
	printf("model %s (family %s), revision %s\nlayout %s\ncheckpoint bytes %llu%s\n", name,
	       shardmap_family(p), ckpt_revision(c), lay, (unsigned long long)ck,
	       shardmap_tied_lm_head(p) ? ", lm_head tied" : "");
	for (size_t k = 0; k < shardmap_n_skipped(p); k++)
		printf("skipped %s\n", shardmap_skipped(p, k));
	uint32_t nr = shardmap_n_ranks(p);
	for (uint32_t r = 0; r < nr; r++) {
		total += shardmap_rank_bytes(p, r);
		if (!a.rank_only || r == wt_layout_rank_index(&a.layout))
			print_rank(p, r, a.layout.tp_size, ck);
	}
	printf("total %u ranks, %llu bytes (%.4f of checkpoint)\n", nr, (unsigned long long)total,
	       ck ? (double)total / (double)ck : 0.0);
out:
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	ctl_layout_args_clear(&a);
	return rc;
}
