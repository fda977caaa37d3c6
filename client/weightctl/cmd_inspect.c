/* cmd_inspect.c — `weightctl inspect [--model-dir] DIR|URI`: validate a model folder
 * (the loader's checks, then the planner's against the architecture's family at TP 1,
 * the checks every layout needs), print its summary. */
#include <stdio.h>
#include <string.h>

#include "client/weightctl/ctl_opt.h"
#include "client/weightctl/weightctl.h"
#include "loader/loader.h"
#include "shardmap/shardmap.h"

static void inspect_usage(FILE *f)
{
	fprintf(f, "usage: weightctl inspect [--model-dir] "
	           "DIR|file:///DIR|s3://BUCKET/PREFIX|http(s)://HOST/PREFIX\n\n"
	           "Validate a Hugging Face safetensors model folder (config.json +\n"
	           "model.safetensors or model.safetensors.index.json + shards) and the\n"
	           "checkpoint against its architecture's family (every tensor mapped or\n"
	           "skipped, shapes and dtypes as config.json implies: the plan of the TP 1\n"
	           "layout), and print its summary. Exit 0 if valid, 1 if not (reason on\n"
	           "stderr), 2 on usage.\n");
}

static const char *quant_name(ckpt_quant_kind q)
{
	switch (q) {
	case CKPT_QUANT_FP8_BLOCK:
		return "fp8-block";
	case CKPT_QUANT_FP8_TENSOR:
		return "fp8-tensor";
	case CKPT_QUANT_CT_INT8:
		return "compressed-tensors int8-channel";
	case CKPT_QUANT_CT_INT4:
		return "compressed-tensors int4-group";
	case CKPT_QUANT_MXFP4:
		return "mxfp4 (dequantized: no layout keeps it)";
	case CKPT_QUANT_FBGEMM_FP8:
		return "fbgemm_fp8 per-channel (fp8-channel passes it through)";
	case CKPT_QUANT_CT_FP8:
		return "compressed-tensors fp8-channel (fp8-channel passes it through)";
	default:
		return "none";
	}
}

static void print_summary(const char *dir, const ckpt *c, const sm_plan *p)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	uint64_t bytes[WT_DTYPE_COUNT_] = {0};
	size_t count[WT_DTYPE_COUNT_] = {0};
	size_t n = ckpt_n_tensors(c);
	for (size_t i = 0; i < n; i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		bytes[t->dtype] += t->nbytes;
		count[t->dtype]++;
	}
	printf("model:         %s\n", dir);
	printf("architecture:  %s\n", cfg->architecture);
	printf("model_type:    %s\n", cfg->model_type[0] ? cfg->model_type : "(none)");
	printf("family:        %s\n", shardmap_family(p));
	printf("config:        layers=%lld hidden=%lld heads=%lld kv_heads=%lld head_dim=%lld "
	       "vocab=%lld experts=%lld\n",
	       (long long)cfg->num_hidden_layers, (long long)cfg->hidden_size,
	       (long long)cfg->num_attention_heads, (long long)cfg->num_key_value_heads,
	       (long long)cfg->head_dim, (long long)cfg->vocab_size, (long long)cfg->num_experts);
	printf("tensors:       %zu\n", n);
	for (int d = 1; d < WT_DTYPE_COUNT_; d++)
		if (count[d] > 0)
			printf("bytes %-8s %llu (%zu tensors)\n", wt_dtype_name((wt_dtype)d),
			       (unsigned long long)bytes[d], count[d]);
	printf("total bytes:   %llu\n", (unsigned long long)ckpt_total_bytes(c));
	printf("revision:      %s\n", ckpt_revision(c));
	if (cfg->quant == CKPT_QUANT_FP8_BLOCK)
		printf("quantization:  fp8-block %lldx%lld", (long long)cfg->quant_block[0],
		       (long long)cfg->quant_block[1]);
	else if (cfg->quant == CKPT_QUANT_CT_INT4 && shardmap_ct_keepable(cfg))
		printf("quantization:  %s group %lld%s", quant_name(cfg->quant),
		       (long long)cfg->quant_group,
		       cfg->quant_int4_i8 ? " (int-quantized: codes one per I8)" : "");
	else if ((cfg->quant == CKPT_QUANT_CT_INT8 || cfg->quant == CKPT_QUANT_CT_INT4) &&
	         !shardmap_ct_keepable(cfg)) {
		char d[160];
		shardmap_ct_describe(cfg, d, sizeof(d));
		printf("quantization:  compressed-tensors %s (dequantized: no layout keeps it)", d);
	} else if (cfg->quant == CKPT_QUANT_CT_INT8 && cfg->quant_pack8)
		printf("quantization:  %s (pack-quantized: 4 codes per I32)",
		       quant_name(cfg->quant));
	else
		printf("quantization:  %s", quant_name(cfg->quant));
	if (cfg->n_quant_ignore + cfg->n_quant_keep > 0)
		printf(" (%zu modules not converted)", cfg->n_quant_ignore + cfg->n_quant_keep);
	printf("\n");
	size_t ns = shardmap_n_skipped(p);
	printf("skipped:       %zu", ns);
	for (size_t k = 0; k < ns && k < 3; k++)
		printf("%s%s", k ? ", " : " (", shardmap_skipped(p, k));
	printf("%s\n", ns > 3 ? ", ...)" : ns > 0 ? ")" : "");
	printf("status:        valid\n");
}

/* The TP 1 plan: the family's checks every layout needs (section 3 of docs/format.md). */
static int validate(const ckpt *c, sm_plan **p, wt_errbuf *err)
{
	wt_layout l;
	wt_layout_init(&l);
	int rv = shardmap_plan(c, &l, p, err);
	wt_layout_clear(&l);
	return rv;
}

static const ctl_flag inspect_flags[] = {{"--model-dir", true, 0}};

static int inspect_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	(void)flag;
	const char **dir = ctx;
	if (*dir != NULL) {
		fprintf(stderr, "weightctl %s: one model folder at a time\n", cmd);
		return -1;
	}
	*dir = val;
	return 0;
}

/* The folder: --model-dir DIR or DIR. CTL_OK (dir NULL with help) or CTL_USAGE. */
static int inspect_args(int argc, char **argv, const char **dir)
{
	*dir = NULL;
	ctl_flagset set = CTL_FLAGSET(inspect_flags, inspect_flag, dir);
	char *pos[1];
	size_t n_pos = 0;
	int help = 0;
	int rc = ctl_getopt("inspect", argc, argv, &set, 1, pos, 1, &n_pos, &help);
	if (rc == CTL_OK && help) {
		inspect_usage(stdout);
		*dir = NULL;
		return CTL_OK;
	}
	if (rc == CTL_OK && n_pos == 1 && (rc = inspect_flag(dir, "inspect", NULL, pos[0])) != 0)
		rc = CTL_USAGE;
	if (rc == CTL_OK && *dir == NULL) {
		fprintf(stderr, "weightctl inspect: --model-dir DIR is required\n");
		rc = CTL_USAGE;
	}
	if (rc != CTL_OK)
		inspect_usage(stderr);
	return rc;
}

int ctl_inspect(int argc, char **argv)
{
	const char *dir;
	int rc = inspect_args(argc, argv, &dir);
	if (rc != CTL_OK || dir == NULL)
		return rc;
	wt_errbuf err;
	wt_errclear(&err);
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	int rv = store_open(&s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&c, s, &err);
	if (rv == WT_OK)
		rv = validate(c, &p, &err);
	if (rv == WT_OK)
		print_summary(dir, c, p);
	else
		fprintf(stderr, "weightctl inspect: %s: %s\n", wt_errname(rv), err.msg);
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	return rv == WT_OK ? CTL_OK : CTL_ERR;
}
