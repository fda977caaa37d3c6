/*
 * test_config_sweep.c — config.json is hostile input: every family's
 * wt-mkckpt fixture has each key of its config.json (top level and nested
 * objects: rope_scaling, text_config, vision_config, quantization_config, ...)
 * removed or replaced by an out-of-range or ill-typed value, and the result
 * goes through test_sweep_util.h's checks (open, plan four layouts, the
 * reference forward pass on a 1-in-4 sample of what is accepted). The full
 * sweep (every family x key x mutation, ~250 CPU-s) is WT_SWEEP_EVERY=1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "tests/test_sweep_util.h"

#define MAX_PATHS 256
#define MAX_DEPTH 4

typedef struct jpath {
	const char *k[MAX_DEPTH];
	int n;
} jpath;

typedef struct sweep {
	sw_stats st;
	char *dir;
	char *orig; /* config.json as written */
	jpath paths[MAX_PATHS];
	size_t n_paths;
	sw_batch batch; /* cases written, not yet checked */
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
	M_MAX63,
	M_MIN63,
	M_TINY,
	M_HALF,
	M_NHALF,
	M_STR,
	M_NULL,
	M_TRUE,
	M_ARR,
	M_OBJ,
	M_COUNT
};
static const char *const mut_name[M_COUNT] = {
    "removed", "0",      "-1",  "1",    "3",     "2^31", "2^62", "1e300", "-1e300", "2^63-1",
    "-2^63",   "1e-300", "0.5", "-0.5", "\"x\"", "null", "true", "[]",    "{}"};

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
	case M_MAX63:
		return json_integer(INT64_MAX);
	case M_MIN63:
		return json_integer(INT64_MIN);
	case M_TINY:
		return json_real(1e-300);
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

static uint32_t case_hash(const char *fam, const jpath *p, int m)
{
	const char *parts[MAX_DEPTH + 3] = {fam};
	int n = 1;
	for (int i = 0; i < p->n; i++)
		parts[n++] = p->k[i];
	parts[n++] = mut_name[m];
	parts[n] = NULL;
	return sw_hash(parts);
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

static unsigned n_tried, n_planned; /* over every family swept */

/* Case (p, m) into s->batch (checked when the batch is full or the family done). */
static void add_case(sweep *s, const jpath *p, int m, bool deep)
{
	char where[512];
	path_text(p, where, sizeof(where));
	snprintf(where + strlen(where), sizeof(where) - strlen(where), " = %s", mut_name[m]);
	if (s->batch.n == SW_BATCH)
		sw_batch_run(&s->st, &s->batch, NULL, NULL);
	const sw_case *c = sw_case_new(&s->batch, deep, where);
	char *cfg = mutate(s->orig, p, m);
	sw_case_put(c, "config.json", cfg, strlen(cfg));
	free(cfg);
}

static unsigned run_family(const char *fam)
{
	sweep s;
	memset(&s, 0, sizeof(s));
	s.st.fam = fam;
	s.st.every = sw_every();
	s.dir = sw_gen(sw_root, fam);
	s.batch.src = s.dir;
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
			if (h % s.st.every != 0)
				continue;
			add_case(&s, &s.paths[i], m, (h / s.st.every) % 4 == 0 || s.st.every == 1);
		}
	sw_batch_run(&s.st, &s.batch, NULL, NULL);
	n_tried += s.st.tried;
	n_planned += s.st.planned;
	print_message("%-22s %3zu keys, %4u cases: %4u planned, %3u verified, %3u refused by the "
	              "reference, %u bad\n",
	              fam, s.n_paths, s.st.tried, s.st.planned, s.st.verified, s.st.refused_ref,
	              s.st.bad);
	json_decref(root); /* the paths point into it */
	free(s.orig);
	tu_rmrf(s.dir);
	free(s.dir);
	return s.st.bad;
}

static void test_sweep(void **state)
{
	(void)state;
	sw_run_families(run_family);
	/* about half the mutated configs are refused (49% of the default sample, 50% of 1 in
	 * 64): far fewer means the cases did not reach the loader */
	if (n_tried >= 20 && n_tried - n_planned < n_tried / 5)
		fail_msg("%u of %u mutated configs refused: were they written?",
		         n_tried - n_planned, n_tried);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_sweep)};
	return cmocka_run_group_tests(tests, sw_setup, sw_teardown);
}
