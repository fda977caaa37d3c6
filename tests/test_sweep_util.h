/*
 * test_sweep_util.h — what the hostile-checkpoint sweeps share
 * (test_config_sweep.c, test_header_sweep.c): every wt-mkckpt family's fixture
 * in a temporary folder, a fixed sample of the cases by a hash of their names,
 * and one case's checks: open the folder, plan four layouts, and on sampled
 * accepted ones run the reference forward pass (ref_verify: plan, produce,
 * full vs sharded).
 *
 * What must hold for every case: no crash, no sanitizer report, no hang (the
 * suite's time limit), every refusal names its problem (a non-empty message),
 * and a check that runs passes with finite outputs.
 *
 * WT_SWEEP_EVERY=N runs 1 case in N (1: all; default 16, 64 under
 * AddressSanitizer), WT_SWEEP_FAMILY=NAME one family. Include after cmocka.h.
 */
#ifndef WT_TEST_SWEEP_UTIL_H
#define WT_TEST_SWEEP_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reference/ckpt.h"
#include "shardmap/shardmap.h"
#include "tests/util/testutil.h"

#define SW_SEED 5u
#ifdef __SANITIZE_ADDRESS__
#define SW_EVERY 64u
#else
#define SW_EVERY 16u
#endif
#define SW_MAX_FAMS 256

typedef struct sw_stats {
	const char *fam;
	unsigned every;
	unsigned tried, planned, verified, refused_ref;
	unsigned bad;
} sw_stats;

/* The fixture families (`wt-mkckpt --family list`) into fams; their count. */
static __attribute__((unused)) int sw_families(char fams[SW_MAX_FAMS][64])
{
	char *bin = tu_mkckpt();
	char cmd[2100];
	snprintf(cmd, sizeof(cmd), "'%.2000s' --family list", bin);
	free(bin);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	int n = 0;
	char line[64];
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0')
			continue;
		/* a family past the table would be swept by no test: fail instead */
		assert_true(n < SW_MAX_FAMS);
		snprintf(fams[n++], 64, "%s", line);
	}
	assert_int_equal(pclose(f), 0);
	assert_true(n > 20);
	return n;
}

/* wt-mkckpt --family fam into root/fam; the folder (caller frees). */
static __attribute__((unused)) char *sw_gen(const char *root, const char *fam)
{
	char *dir = tu_path(root, fam);
	char *bin = tu_mkckpt();
	char cmd[2200];
	snprintf(cmd, sizeof(cmd),
	         "'%.1000s' --family %.64s --out '%.1000s' --seed %u >/dev/null 2>&1", bin, fam,
	         dir, SW_SEED);
	free(bin);
	assert_int_equal(system(cmd), 0);
	return dir;
}

static __attribute__((unused)) bool sw_family_wanted(const char *fam)
{
	const char *only = getenv("WT_SWEEP_FAMILY");
	return only == NULL || *only == '\0' || strcmp(only, fam) == 0;
}

static __attribute__((unused)) unsigned sw_every(void)
{
	const char *ev = getenv("WT_SWEEP_EVERY");
	unsigned e = ev != NULL && *ev ? (unsigned)strtoul(ev, NULL, 10) : SW_EVERY;
	return e == 0 ? 1 : e;
}

/* FNV-1a over parts (NULL-terminated): the sample is the same on every run. */
static __attribute__((unused)) uint32_t sw_hash(const char *const *parts)
{
	uint32_t h = 2166136261u;
	for (; *parts != NULL; parts++) {
		for (const char *t = *parts; *t; t++)
			h = (h ^ (uint8_t)*t) * 16777619u;
		h = (h ^ '/') * 16777619u;
	}
	return h;
}

/* An error must say what is wrong. */
static __attribute__((unused)) void sw_check_refusal(sw_stats *s, const char *what, int rv,
                                                     const wt_errbuf *err, const char *where)
{
	if (rv != WT_OK && err->msg[0] == '\0') {
		print_error("%s: %s: %s refused (%s) with no message\n", s->fam, where, what,
		            wt_errname(rv));
		s->bad++;
	}
}

static const struct {
	uint32_t tp, ep;
	wt_quant q;
} sw_lays[] = {{2, 1, WT_QUANT_NONE},
               {1, 2, WT_QUANT_NONE},
               {4, 1, WT_QUANT_INT4_GROUP},
               {2, 1, WT_QUANT_FP8_BLOCK}};

static __attribute__((unused)) void sw_layout(wt_layout *l, int i)
{
	wt_layout_init(l);
	l->tp_size = sw_lays[i].tp;
	l->ep_size = sw_lays[i].ep;
	l->quant = sw_lays[i].q;
}

/* ref_verify on layout `lay` of c: a check that runs must pass, finite. */
static __attribute__((unused)) void sw_verify(sw_stats *s, const ckpt *c, int lay,
                                              const char *where)
{
	static const int64_t toks[] = {1, 7, 3, 9};
	wt_layout l;
	sw_layout(&l, lay);
	ref_result res;
	memset(&res, 0, sizeof(res));
	wt_errbuf err = {0};
	int rv = ref_verify(c, &l, toks, 4, NULL, NULL, &res, &err);
	sw_check_refusal(s, "verify-forward", rv, &err, where);
	if (rv != WT_OK) {
		s->refused_ref++;
		return;
	}
	s->verified++;
	if (!res.pass || res.diff.nonfinite) {
		print_error("%s: %s: verify-forward ran but %s (diff %g, largest %g)\n", s->fam,
		            where, res.diff.nonfinite ? "not finite" : "did not pass",
		            res.diff.max_abs_diff, res.diff.max_abs_ref);
		s->bad++;
	}
}

/*
 * One case: open dir, plan every layout of sw_lays; with `deep`, ref_verify
 * the first accepted one. Returns whether any layout was accepted (the open
 * and every plan refused: false).
 */
static __attribute__((unused)) bool sw_try(sw_stats *s, const char *dir, bool deep,
                                           const char *where)
{
	s->tried++;
	store *st = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	assert_int_equal(store_open(&st, dir, &err), WT_OK);
	/* the content digests only where the reference reads the tensors (deep): a case planned
	 * only reads no tensor byte, and what it changed is config.json or a header */
	int rv = deep ? ckpt_open(&c, st, &err) : ckpt_open_quick(&c, st, &err);
	sw_check_refusal(s, "open", rv, &err, where);
	int ok_lay = -1;
	for (int i = 0; rv == WT_OK && i < (int)(sizeof(sw_lays) / sizeof(sw_lays[0])); i++) {
		wt_layout l;
		sw_layout(&l, i);
		sm_plan *pl = NULL;
		wt_errbuf e2 = {0};
		int prv = shardmap_plan(c, &l, &pl, &e2);
		sw_check_refusal(s, "plan", prv, &e2, where);
		shardmap_plan_free(pl);
		if (prv == WT_OK && ok_lay < 0)
			ok_lay = i;
	}
	if (ok_lay >= 0)
		s->planned++;
	if (ok_lay >= 0 && deep)
		sw_verify(s, c, ok_lay, where);
	ckpt_close(c);
	store_close(st);
	return ok_lay >= 0;
}

/*
 * Cases in batches. The file store, opening a file changed in the current tick of the
 * coarse clock, waits for the next tick (loader/store_file.c, settle_ctime: 4-10 ms), so a
 * case written and opened at once paid that wait every time (45 s of test_config_sweep's 66
 * on the plain build). A batch's cases are folders of hard links to the family's files with
 * the case's own files put in (sw_case_put replaces a link, it never writes through one);
 * they are opened once all are written, so the wait is paid about once a batch.
 */
#define SW_BATCH 32

typedef struct sw_case {
	char *dir;
	char where[512];
	bool deep;
	int kind, file; /* the caller's: what the case changed */
	char name[320];
} sw_case;

typedef struct sw_batch {
	const char *src; /* the family's folder */
	sw_case c[SW_BATCH];
	int n;
	unsigned seq;
} sw_batch;

/* A new case of b (not full: sw_batch_run empties it) in a folder of hard links to every
 * file of b->src. */
static __attribute__((unused)) sw_case *sw_case_new(sw_batch *b, bool deep, const char *where)
{
	assert_true(b->n < SW_BATCH);
	sw_case *c = &b->c[b->n++];
	memset(c, 0, sizeof(*c));
	char leaf[64];
	snprintf(leaf, sizeof(leaf), ".case%u", b->seq++);
	size_t len = strlen(b->src) + strlen(leaf) + 1;
	c->dir = malloc(len);
	assert_non_null(c->dir);
	snprintf(c->dir, len, "%s%s", b->src, leaf);
	assert_int_equal(mkdir(c->dir, 0700), 0);
	DIR *d = opendir(b->src);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *from = tu_path(b->src, e->d_name), *to = tu_path(c->dir, e->d_name);
		assert_int_equal(link(from, to), 0);
		free(from);
		free(to);
	}
	closedir(d);
	c->deep = deep;
	snprintf(c->where, sizeof(c->where), "%s", where);
	return c;
}

/* Put rel into case c with these bytes (the link to the family's file removed first). */
static __attribute__((unused)) void sw_case_put(const sw_case *c, const char *rel, const void *data,
                                                size_t len)
{
	char *p = tu_path(c->dir, rel);
	assert_true(unlink(p) == 0 || errno == ENOENT);
	free(p);
	assert_int_equal(tu_write_file(c->dir, rel, data, len), 0);
}

/* sw_try every case of b, then after(ctx, case, accepted) when given; then the folders are
 * removed (after all: removing a link changes the shared files' ctime) and b emptied. */
static __attribute__((unused)) void
sw_batch_run(sw_stats *s, sw_batch *b, void (*after)(void *, const sw_case *, bool), void *ctx)
{
	for (int i = 0; i < b->n; i++) {
		bool ok = sw_try(s, b->c[i].dir, b->c[i].deep, b->c[i].where);
		if (after != NULL)
			after(ctx, &b->c[i], ok);
	}
	for (int i = 0; i < b->n; i++) {
		tu_rmrf(b->c[i].dir);
		free(b->c[i].dir);
	}
	b->n = 0;
}

static char *sw_root; /* the fixtures' temporary folder (sw_setup) */

/* run(fam) for every wanted family (its failures); the test fails if any. */
static __attribute__((unused)) void sw_run_families(unsigned (*run)(const char *fam))
{
	char fams[SW_MAX_FAMS][64];
	int n = sw_families(fams);
	unsigned bad = 0;
	int swept = 0;
	for (int i = 0; i < n; i++)
		if (sw_family_wanted(fams[i])) {
			bad += run(fams[i]);
			swept++;
		}
	if (swept == 0)
		fail_msg("WT_SWEEP_FAMILY=%s names no wt-mkckpt family (wt-mkckpt --family list)",
		         getenv("WT_SWEEP_FAMILY"));
	assert_int_equal(bad, 0);
}

static __attribute__((unused)) int sw_setup(void **state)
{
	(void)state;
	sw_root = tu_mkdtemp("sweep");
	return sw_root == NULL ? -1 : 0;
}

static __attribute__((unused)) int sw_teardown(void **state)
{
	(void)state;
	tu_rmrf(sw_root);
	free(sw_root);
	return 0;
}

#endif
