/*
 * test_header_sweep.c — the safetensors headers are hostile input too: in
 * every family's wt-mkckpt fixture, each tensor's header entry is changed in
 * a way that keeps the file self-consistent (same byte size, so the loader's
 * own checks pass and the planner must judge): its shape transposed,
 * flattened, given a leading 1 or halved along dim 0 (doubling the next), its
 * dtype swapped for a same-width integer type, its name changed, or the
 * entry deleted (with the index's entry). Each goes through
 * test_sweep_util.h's checks (open, plan four layouts, the reference forward
 * pass on a sample of what is accepted).
 *
 * Beyond those checks: a shape or dtype change, or an unknown name, that some
 * layout accepts is a failure (SHARDS.md section 3: a tensor whose shape
 * disagrees with config.json, of a non-float dtype, or unknown is a plan-time
 * error). A deleted tensor that is accepted is counted and printed (biases and
 * a few tensors are optional in some families) and must still verify.
 * The full sweep is WT_SWEEP_EVERY=1.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "tests/test_sweep_util.h"

#define MAX_FILES 8

enum { H_TRANSPOSE, H_FLAT, H_LEAD1, H_HALF, H_INT, H_RENAME, H_DELETE, H_COUNT };
static const char *const h_name[H_COUNT] = {"transposed", "flattened", "leading 1", "halved",
                                            "int dtype",  "renamed",   "deleted"};

typedef struct stfile {
	char *rel;   /* file name in the folder */
	char *bytes; /* as written */
	size_t len;
	json_t *hdr;
	size_t data_off; /* 8 + header length */
} stfile;

typedef struct hsweep {
	sw_stats st;
	char *dir;
	stfile f[MAX_FILES];
	int nf;
	char *index;     /* model.safetensors.index.json as written, or NULL */
	json_t *dropped; /* names the unchanged fixture's plan skips (MTP layers, inv_freq) */
	unsigned deleted_ok, shape_ok, moot_ok;
	sw_batch batch; /* cases written, not yet checked */
} hsweep;

/* The tensors the plan of the unchanged fixture drops: whatever is done to
 * them, they are never read, so accepting the change is right. */
static void collect_dropped(hsweep *s)
{
	s->dropped = json_object();
	store *st = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	wt_errbuf err = {0};
	wt_layout l;
	wt_layout_init(&l);
	assert_int_equal(store_open(&st, s->dir, &err), WT_OK);
	if (ckpt_open(&c, st, &err) == WT_OK && shardmap_plan(c, &l, &p, &err) == WT_OK)
		for (size_t i = 0; i < shardmap_n_skipped(p); i++)
			json_object_set_new(s->dropped, shardmap_skipped(p, i), json_true());
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(st);
}

/* Elements of a header entry. */
static int64_t n_elems(json_t *e)
{
	json_t *shape = json_object_get(e, "shape");
	int64_t n = 1;
	for (size_t k = 0; k < json_array_size(shape); k++)
		n *= json_integer_value(json_array_get(shape, k));
	return n;
}

static void load_file(hsweep *s, const char *rel)
{
	char *p = tu_path(s->dir, rel);
	size_t len;
	char *b = tu_read_file(p, &len);
	free(p);
	assert_non_null(b);
	assert_true(len >= 8);
	uint64_t n = 0;
	for (int k = 7; k >= 0; k--)
		n = (n << 8) | (uint8_t)b[k];
	assert_true(n <= len - 8);
	json_error_t je;
	stfile *f = &s->f[s->nf++];
	f->rel = strdup(rel);
	f->bytes = b;
	f->len = len;
	f->data_off = 8 + (size_t)n;
	f->hdr = json_loadb(b + 8, (size_t)n, 0, &je);
	assert_non_null(f->hdr);
}

/* Every *.safetensors of the fixture, and its index. */
static void load_files(hsweep *s)
{
	DIR *d = opendir(s->dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n > 12 && strcmp(e->d_name + n - 12, ".safetensors") == 0) {
			assert_true(s->nf < MAX_FILES);
			load_file(s, e->d_name);
		}
	}
	closedir(d);
	assert_true(s->nf > 0);
	char *ip = tu_path(s->dir, "model.safetensors.index.json");
	size_t ilen;
	s->index = tu_read_file(ip, &ilen);
	free(ip);
}

/* Put f with header h (data unchanged) into case c. */
static void write_file(const sw_case *c, const stfile *f, json_t *h)
{
	char *js = json_dumps(h, JSON_COMPACT);
	size_t n = strlen(js), dlen = f->len - f->data_off;
	char *out = malloc(8 + n + dlen);
	for (int k = 0; k < 8; k++)
		out[k] = (char)((uint64_t)n >> (8 * k));
	memcpy(out + 8, js, n);
	memcpy(out + 8 + n, f->bytes + f->data_off, dlen);
	sw_case_put(c, f->rel, out, 8 + n + dlen);
	free(out);
	free(js);
}

/* Put the index with `name` renamed to `to` (NULL: removed) into case c. */
static void write_index(const hsweep *s, const sw_case *c, const char *name, const char *to)
{
	if (s->index == NULL)
		return;
	json_error_t je;
	json_t *ix = json_loads(s->index, 0, &je);
	assert_non_null(ix);
	json_t *wm = json_object_get(ix, "weight_map");
	json_t *file = json_object_get(wm, name);
	if (file != NULL && to != NULL)
		json_object_set(wm, to, file);
	json_object_del(wm, name);
	char *js = json_dumps(ix, JSON_INDENT(2));
	sw_case_put(c, "model.safetensors.index.json", js, strlen(js));
	free(js);
	json_decref(ix);
}

static const char *int_dtype(const char *dt)
{
	if (!strcmp(dt, "BF16") || !strcmp(dt, "F16"))
		return "I16";
	if (!strcmp(dt, "F32"))
		return "I32";
	if (!strcmp(dt, "F8_E4M3"))
		return "I8";
	return NULL; /* already an integer (packed codes, zero points, ids) */
}

/* Apply mutation m to entry e (a copy) of tensor `name`; false when it does not apply. */
static bool mutate_entry(json_t *e, int m)
{
	json_t *shape = json_object_get(e, "shape");
	size_t nd = json_array_size(shape);
	int64_t d[8] = {0};
	for (size_t k = 0; k < nd && k < 8; k++)
		d[k] = json_integer_value(json_array_get(shape, k));
	json_t *ns = NULL;
	switch (m) {
	case H_TRANSPOSE:
		if (nd != 2 || d[0] == d[1])
			return false;
		ns = json_pack("[II]", (json_int_t)d[1], (json_int_t)d[0]);
		break;
	case H_FLAT: {
		if (nd < 2)
			return false;
		int64_t p = 1;
		for (size_t k = 0; k < nd; k++)
			p *= d[k];
		ns = json_pack("[I]", (json_int_t)p);
		break;
	}
	case H_LEAD1:
		if (nd >= 8)
			return false;
		ns = json_array();
		json_array_append_new(ns, json_integer(1));
		for (size_t k = 0; k < nd; k++)
			json_array_append_new(ns, json_integer(d[k]));
		break;
	case H_HALF:
		if (nd < 1 || d[0] < 2 || d[0] % 2 != 0)
			return false;
		ns = json_array();
		json_array_append_new(ns, json_integer(d[0] / 2));
		json_array_append_new(ns, json_integer(nd > 1 ? d[1] * 2 : 2));
		for (size_t k = 2; k < nd; k++)
			json_array_append_new(ns, json_integer(d[k]));
		break;
	case H_INT: {
		const char *to = int_dtype(json_string_value(json_object_get(e, "dtype")));
		if (to == NULL)
			return false;
		json_object_set_new(e, "dtype", json_string(to));
		return true;
	}
	default:
		return false;
	}
	json_object_set_new(e, "shape", ns);
	return true;
}

/* What case c (tensor c->name of file c->file changed as c->kind) being accepted or not means. */
static void judge(void *ctx, const sw_case *c, bool ok)
{
	hsweep *s = ctx;
	int m = c->kind;
	/* a dropped tensor is never read; a scalar scale or a weight_shape vector
	 * ([] / [1] / [1, 1], [2] / [1, 2]) holds the same values whatever its rank */
	bool moot = json_object_get(s->dropped, c->name) != NULL ||
	            (m != H_INT && m != H_RENAME &&
	             n_elems(json_object_get(s->f[c->file].hdr, c->name)) <= 2);
	if (ok && moot) {
		s->moot_ok++;
	} else if (ok && m == H_DELETE) {
		s->deleted_ok++;
		print_message("%s: %s: accepted\n", s->st.fam, c->where);
	} else if (ok) {
		s->shape_ok++;
		s->st.bad++;
		print_error("%s: %s: accepted by a layout; the planner must refuse it\n", s->st.fam,
		            c->where);
	}
}

/* Tensor `name` of file fi changed as m: a case of s->batch (none when m does not apply). */
static void try_tensor(hsweep *s, int fi, const char *name, int m)
{
	const stfile *f = &s->f[fi];
	json_t *h = json_deep_copy(f->hdr);
	char where[400], renamed[300];
	snprintf(where, sizeof(where), "%.256s %s", name, h_name[m]);
	snprintf(renamed, sizeof(renamed), "%.256s_x", name);
	if (m == H_DELETE || m == H_RENAME) {
		json_t *e = json_incref(json_object_get(h, name));
		json_object_del(h, name);
		if (m == H_RENAME)
			json_object_set(h, renamed, e);
		json_decref(e);
	} else if (!mutate_entry(json_object_get(h, name), m)) {
		json_decref(h);
		return;
	}
	if (s->batch.n == SW_BATCH)
		sw_batch_run(&s->st, &s->batch, judge, s);
	uint32_t hv = sw_hash((const char *const[]){s->st.fam, name, h_name[m], NULL});
	sw_case *c = sw_case_new(&s->batch, (hv / s->st.every) % 4 == 0 || s->st.every == 1, where);
	c->kind = m;
	c->file = fi;
	assert_true(strlen(name) < sizeof(c->name));
	snprintf(c->name, sizeof(c->name), "%s", name);
	if (m == H_DELETE || m == H_RENAME)
		write_index(s, c, name, m == H_RENAME ? renamed : NULL);
	write_file(c, f, h);
	json_decref(h);
}

/* The control: refused, the sweep's refusals would prove nothing. */
static void control_judge(void *ctx, const sw_case *c, bool ok)
{
	hsweep *s = ctx;
	(void)c;
	if (!ok) {
		print_error("%s: the fixture with its headers rewritten is refused\n", s->st.fam);
		s->st.bad++;
	}
}

static unsigned run_family(const char *fam)
{
	hsweep s;
	memset(&s, 0, sizeof(s));
	s.st.fam = fam;
	s.st.every = sw_every();
	s.dir = sw_gen(sw_root, fam);
	s.batch.src = s.dir;
	load_files(&s);
	collect_dropped(&s);
	/* control: every header rewritten as this test writes it (compact JSON)
	 * must still be accepted, or the refusals below would prove nothing */
	const sw_case *ctl = sw_case_new(&s.batch, false, "headers rewritten unchanged");
	for (int i = 0; i < s.nf; i++)
		write_file(ctl, &s.f[i], s.f[i].hdr);
	sw_batch_run(&s.st, &s.batch, control_judge, &s);
	for (int i = 0; i < s.nf; i++) {
		const char *name;
		json_t *v;
		json_t *keys = json_object();
		json_object_foreach(s.f[i].hdr, name, v)
		{
			if (strcmp(name, "__metadata__") != 0)
				json_object_set_new(keys, name, json_true());
		}
		json_object_foreach(keys, name, v)
		{
			for (int m = 0; m < H_COUNT; m++) {
				uint32_t hv =
				    sw_hash((const char *const[]){fam, name, h_name[m], NULL});
				if (hv % s.st.every == 0)
					try_tensor(&s, i, name, m);
			}
		}
		sw_batch_run(&s.st, &s.batch, judge, &s); /* before keys, the names' owner, goes */
		json_decref(keys);
	}
	print_message("%-22s %4u cases: %4u accepted (%u deletions, %u dropped or 1-2 element "
	              "tensors), %3u verified, %u bad\n",
	              fam, s.st.tried, s.st.planned, s.deleted_ok, s.moot_ok, s.st.verified,
	              s.st.bad);
	for (int i = 0; i < s.nf; i++) {
		free(s.f[i].rel);
		free(s.f[i].bytes);
		json_decref(s.f[i].hdr);
	}
	free(s.index);
	json_decref(s.dropped);
	tu_rmrf(s.dir);
	free(s.dir);
	return s.st.bad;
}

static void test_header_sweep(void **state)
{
	(void)state;
	sw_run_families(run_family);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_header_sweep)};
	return cmocka_run_group_tests(tests, sw_setup, sw_teardown);
}
