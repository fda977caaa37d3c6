/*
 * test_config_sweep.c — config.json is hostile input: every family's
 * wt-mkckpt fixture has each key of its config.json (top level and nested
 * objects: rope_scaling, text_config, vision_config, quantization_config, ...)
 * removed or replaced by an out-of-range or ill-typed value, and the result
 * is planned under several layouts and, when a plan is accepted, produced and
 * run through the reference forward pass (ref_verify: full vs sharded).
 *
 * What must hold for every mutation: no crash, no sanitizer report, no hang
 * (the suite's time limit), every refusal names its problem (a non-empty
 * message), and a configuration the planner accepts either verifies (the
 * sharded outputs equal the full model's) or is refused by the reference
 * with a message; never a WT_OK check whose outputs are not finite.
 *
 * The full sweep (every family x key x mutation, ~250 CPU-s) is
 * WT_SWEEP_EVERY=1 (WT_SWEEP_FAMILY=NAME: one family); the suite runs a fixed
 * 1-in-WT_SWEEP_EVERY sample (default 8, 32 under AddressSanitizer) chosen by
 * a hash of (family, key, mutation), and the reference pass on a 1-in-4
 * sample of what it plans.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "reference/ckpt.h"
#include "shardmap/shardmap.h"
#include "tests/util/testutil.h"

#define SEED 5u
#ifdef __SANITIZE_ADDRESS__
#define SWEEP_EVERY 32u /* the whole sweep takes ~250 CPU-s on the normal build */
#else
#define SWEEP_EVERY 8u
#endif
#define MAX_PATHS 256
#define MAX_DEPTH 4

static char *g_root;

typedef struct jpath {
	const char *k[MAX_DEPTH];
	int n;
} jpath;

typedef struct sweep {
	const char *fam;
	char *dir;
	char *orig; /* config.json as written */
	jpath paths[MAX_PATHS];
	size_t n_paths;
	unsigned every;
	unsigned tried, planned, verified, refused_ref, produced_fail;
	unsigned bad;
} sweep;

/* The mutations: NULL json = remove the key. */
enum {
	M_DEL,
	M_ZERO,
	M_NEG,
	M_ONE,
	M_THREE,
	M_BIG31,
	M_BIG62,
	M_HUGE,
	M_NHUGE,
	M_HALF,
	M_NHALF,
	M_STR,
	M_NULL,
	M_TRUE,
	M_ARR,
	M_OBJ,
	M_COUNT
};
static const char *const mut_name[M_COUNT] = {"removed", "0",     "-1",     "1",   "3",    "2^31",
                                              "2^62",    "1e300", "-1e300", "0.5", "-0.5", "\"x\"",
                                              "null",    "true",  "[]",     "{}"};

static json_t *mut_value(int m)
{
	switch (m) {
	case M_ZERO:
		return json_integer(0);
	case M_NEG:
		return json_integer(-1);
	case M_ONE:
		return json_integer(1);
	case M_THREE:
		return json_integer(3);
	case M_BIG31:
		return json_integer(INT64_C(1) << 31);
	case M_BIG62:
		return json_integer(INT64_C(1) << 62);
	case M_HUGE:
		return json_real(1e300);
	case M_NHUGE:
		return json_real(-1e300);
	case M_HALF:
		return json_real(0.5);
	case M_NHALF:
		return json_real(-0.5);
	case M_STR:
		return json_string("x");
	case M_NULL:
		return json_null();
	case M_TRUE:
		return json_true();
	case M_ARR:
		return json_array();
	case M_OBJ:
		return json_object();
	default:
		return NULL;
	}
}

/* Every key path of obj (depth-first), below prefix. */
static void collect(sweep *s, json_t *obj, jpath prefix)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v)
	{
		if (s->n_paths == MAX_PATHS || prefix.n == MAX_DEPTH)
			return;
		jpath p = prefix;
		p.k[p.n++] = key;
		s->paths[s->n_paths++] = p;
		if (json_is_object(v))
			collect(s, v, p);
	}
}

/* FNV-1a over the case's names: the sample is the same on every run. */
static uint32_t case_hash(const char *fam, const jpath *p, int m)
{
	uint32_t h = 2166136261u;
	for (int i = -1; i <= p->n; i++) {
		const char *t = i < 0 ? fam : i < p->n ? p->k[i] : mut_name[m];
		for (; *t; t++)
			h = (h ^ (uint8_t)*t) * 16777619u;
		h = (h ^ '/') * 16777619u;
	}
	return h;
}

static char *mutate(const char *orig, const jpath *p, int m)
{
	json_error_t je;
	json_t *root = json_loads(orig, 0, &je);
	assert_non_null(root);
	json_t *parent = root;
	for (int i = 0; i + 1 < p->n; i++)
		parent = json_object_get(parent, p->k[i]);
	assert_non_null(parent);
	const char *leaf = p->k[p->n - 1];
	if (m == M_DEL)
		json_object_del(parent, leaf);
	else
		json_object_set_new(parent, leaf, mut_value(m));
	char *out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return out;
}

static void path_text(const jpath *p, char *buf, size_t cap)
{
	buf[0] = '\0';
	for (int i = 0; i < p->n; i++)
		snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? "." : "", p->k[i]);
}

/* An error must say what is wrong. */
static void check_refusal(sweep *s, const char *what, int rv, const wt_errbuf *err,
                          const char *where)
{
	if (rv != WT_OK && err->msg[0] == '\0') {
		print_error("%s: %s: %s refused (%s) with no message\n", s->fam, where, what,
		            wt_errname(rv));
		s->bad++;
	}
}

/* Plan layouts of the mutated folder; on the sampled ones run ref_verify. */
static void try_case(sweep *s, const jpath *p, int m, bool deep)
{
	static const struct {
		uint32_t tp, ep;
		wt_quant q;
	} lays[] = {{2, 1, WT_QUANT_NONE},
	            {1, 2, WT_QUANT_NONE},
	            {4, 1, WT_QUANT_INT4_GROUP},
	            {2, 1, WT_QUANT_FP8_BLOCK}};
	char where[512];
	path_text(p, where, sizeof(where));
	snprintf(where + strlen(where), sizeof(where) - strlen(where), " = %s", mut_name[m]);
	char *cfg = mutate(s->orig, p, m);
	assert_int_equal(tu_write_file(s->dir, "config.json", cfg, strlen(cfg)), 0);
	free(cfg);
	s->tried++;

	store *st = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	int rv = store_open(&st, s->dir, &err);
	assert_int_equal(rv, WT_OK);
	rv = ckpt_open(&c, st, &err);
	check_refusal(s, "open", rv, &err, where);
	int ok_lay = -1;
	for (size_t i = 0; rv == WT_OK && i < sizeof(lays) / sizeof(lays[0]); i++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[i].tp;
		l.ep_size = lays[i].ep;
		l.quant = lays[i].q;
		sm_plan *pl = NULL;
		wt_errbuf e2 = {0};
		int prv = shardmap_plan(c, &l, &pl, &e2);
		check_refusal(s, "plan", prv, &e2, where);
		shardmap_plan_free(pl);
		if (prv == WT_OK && ok_lay < 0)
			ok_lay = (int)i;
	}
	if (ok_lay >= 0)
		s->planned++;
	if (ok_lay >= 0 && deep) {
		static const int64_t toks[] = {1, 7, 3, 9};
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[ok_lay].tp;
		l.ep_size = lays[ok_lay].ep;
		l.quant = lays[ok_lay].q;
		ref_result res;
		memset(&res, 0, sizeof(res));
		wt_errbuf e3 = {0};
		int vrv = ref_verify(c, &l, toks, 4, NULL, NULL, &res, &e3);
		check_refusal(s, "verify-forward", vrv, &e3, where);
		if (vrv == WT_OK) {
			s->verified++;
			if (!res.pass || res.diff.nonfinite) {
				print_error(
				    "%s: %s: verify-forward ran but %s (diff %g, largest %g)\n",
				    s->fam, where,
				    res.diff.nonfinite ? "not finite" : "did not pass",
				    res.diff.max_abs_diff, res.diff.max_abs_ref);
				s->bad++;
			}
		} else if (strstr(e3.msg, "produc") != NULL) {
			s->produced_fail++;
			print_message("%s: %s: planned, production refused: %s\n", s->fam, where,
			              e3.msg);
		} else {
			s->refused_ref++;
		}
	}
	ckpt_close(c);
	store_close(st);
}

static unsigned run_family(const char *fam)
{
	sweep s;
	memset(&s, 0, sizeof(s));
	s.fam = fam;
	const char *ev = getenv("WT_SWEEP_EVERY");
	s.every = ev != NULL && *ev ? (unsigned)strtoul(ev, NULL, 10) : SWEEP_EVERY;
	if (s.every == 0)
		s.every = 1;
	s.dir = tu_path(g_root, fam);
	const char *b = getenv("WT_BUILD");
	char *bin = tu_path(b != NULL && *b ? b : "build", "wt-mkckpt");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
	         "'%.1000s' --family %.64s --out '%.1000s' --seed %u >/dev/null 2>&1", bin, fam,
	         s.dir, SEED);
	free(bin);
	assert_int_equal(system(cmd), 0);
	char *cpath = tu_path(s.dir, "config.json");
	size_t len;
	s.orig = tu_read_file(cpath, &len);
	free(cpath);
	assert_non_null(s.orig);
	json_error_t je;
	json_t *root = json_loads(s.orig, 0, &je);
	assert_non_null(root);
	collect(&s, root, (jpath){.n = 0});
	for (size_t i = 0; i < s.n_paths; i++)
		for (int m = 0; m < M_COUNT; m++) {
			uint32_t h = case_hash(fam, &s.paths[i], m);
			if (h % s.every != 0)
				continue;
			try_case(&s, &s.paths[i], m, (h / s.every) % 4 == 0 || s.every == 1);
		}
	print_message("%-22s %3zu keys, %4u cases: %4u planned, %3u verified, %3u refused by the "
	              "reference, %u refused at production, %u bad\n",
	              fam, s.n_paths, s.tried, s.planned, s.verified, s.refused_ref,
	              s.produced_fail, s.bad);
	unsigned bad = s.bad;
	json_decref(root); /* the paths point into it */
	free(s.orig);
	tu_rmrf(s.dir);
	free(s.dir);
	return bad;
}

static void test_sweep(void **state)
{
	(void)state;
	FILE *f;
	char cmd[4200];
	const char *b = getenv("WT_BUILD");
	char *bin = tu_path(b != NULL && *b ? b : "build", "wt-mkckpt");
	snprintf(cmd, sizeof(cmd), "'%.2000s' --family list", bin);
	free(bin);
	assert_non_null(f = popen(cmd, "r"));
	char fams[64][64];
	int n = 0;
	while (n < 64 && fgets(fams[n], sizeof(fams[n]), f) != NULL) {
		fams[n][strcspn(fams[n], "\r\n")] = '\0';
		if (fams[n][0] != '\0')
			n++;
	}
	assert_int_equal(pclose(f), 0);
	assert_true(n > 20);
	const char *only = getenv("WT_SWEEP_FAMILY");
	unsigned bad = 0;
	for (int i = 0; i < n; i++)
		if (only == NULL || strcmp(only, fams[i]) == 0)
			bad += run_family(fams[i]);
	assert_int_equal(bad, 0);
}

static int setup(void **state)
{
	(void)state;
	g_root = tu_mkdtemp("cfgsweep");
	return g_root == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmrf(g_root);
	free(g_root);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_sweep)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
