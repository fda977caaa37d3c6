/*
 * test_mistral_util.h — what test_mistral_native.c and test_mistral_large3.c share: fixtures
 * written by $WT_BUILD/wt-mkckpt --family MX_FAMILY (seed GEN_SEED) in one format each under
 * g_root, and a "side" (one fixture folder planned and produced for one layout) whose ranks
 * the two tests compare tensor by tensor. Include after test_shardmap_util.h with MX_FAMILY
 * and GEN_SEED defined.
 */
#ifndef WT_TEST_MISTRAL_UTIL_H
#define WT_TEST_MISTRAL_UTIL_H

#include <sys/wait.h>

static char *g_root;

/* wt-mkckpt --family MX_FAMILY --format FORMAT into g_root/NAME; its exit status. */
static int gen(const char *name, const char *format)
{
	char *bin = tu_mkckpt();
	char *dir = tu_path(g_root, name);
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
	         "'%s' --family %s --out '%s' --seed %u --format %s >/dev/null 2>&1", bin,
	         MX_FAMILY, dir, GEN_SEED, format);
	free(bin);
	free(dir);
	int st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

static int teardown(void **state)
{
	(void)state;
	if (g_root != NULL)
		tu_rmrf(g_root);
	free(g_root);
	return 0;
}

typedef struct side {
	char *dir;
	store *s;
	ckpt *c;
	sm_plan *p;
	tm_prod *pr;
} side;

static void side_open(side *x, const char *name, const wt_layout *l)
{
	memset(x, 0, sizeof(*x));
	x->dir = tu_path(g_root, name);
	wt_errbuf err = {0};
	int rv = tm_plan(x->dir, l, &x->s, &x->c, &x->p, &err);
	if (rv != WT_OK)
		fail_msg("%s: %s", name, err.msg);
	x->pr = tm_produce(x->c, x->p, -1, &rv, &err);
	if (rv != WT_OK)
		fail_msg("%s: produce: %s", name, err.msg);
}

static void side_close(side *x)
{
	tm_prod_free(x->pr);
	tm_close(x->s, x->c, x->p);
	free(x->dir);
}

/* Rank r's tensor i of a and b: the same name, dtype, shape and bytes? */
static bool same_tensor(const side *a, const side *b, uint32_t r, size_t i)
{
	const sm_out_info *ia = shardmap_rank_tensor(a->p, r, i);
	const sm_out_info *ib = shardmap_rank_tensor(b->p, r, i);
	return strcmp(ia->name, ib->name) == 0 && ia->dtype == ib->dtype && ia->ndim == ib->ndim &&
	       memcmp(ia->shape, ib->shape, sizeof(ia->shape)) == 0 &&
	       a->pr->len[r][i] == b->pr->len[r][i] &&
	       memcmp(a->pr->b[r][i], b->pr->b[r][i], (size_t)a->pr->len[r][i]) == 0;
}

#endif
