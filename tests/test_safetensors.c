/* test_safetensors.c — the safetensors parser (every rejection) and writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "tests/util/testutil.h"

/* Parse a header given as text with data_len bytes of data after it. */
static int parse(const char *json, uint64_t data_len, st_file *f, wt_errbuf *err)
{
	size_t n = strlen(json);
	return st_parse_header(json, n, 8 + n + data_len, f, err);
}

/* Expect rejection `code` and a message containing `needle`. */
static void expect_reject(const char *json, uint64_t data_len, int code, const char *needle)
{
	st_file f;
	wt_errbuf err;
	wt_errclear(&err);
	int rv = parse(json, data_len, &f, &err);
	if (rv != code || strstr(err.msg, needle) == NULL)
		print_error("header %s\n -> %s: %s (want %s naming '%s')\n", json, wt_errname(rv),
		            err.msg, wt_errname(code), needle);
	assert_int_equal(rv, code);
	assert_non_null(strstr(err.msg, needle));
	assert_int_equal(f.n_tensors, 0); /* outputs only on success */
	assert_null(f.tensors);
}

static void test_parse_ok(void **state)
{
	(void)state;
	const char *h = "{\"b\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[4,28]},"
	                "\"__metadata__\":{\"format\":\"pt\"},"
	                "\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
	                "\"s\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[28,36]},"
	                "\"z\":{\"dtype\":\"U8\",\"shape\":[0,5],\"data_offsets\":[36,36]}}   ";
	st_file f;
	wt_errbuf err;
	assert_int_equal(parse(h, 36, &f, &err), WT_OK);
	assert_int_equal(f.n_tensors, 4);
	uint64_t base = 8 + strlen(h);
	assert_int_equal(f.data_off, base);
	assert_int_equal(f.file_bytes, base + 36);
	/* in data-offset order */
	assert_string_equal(f.tensors[0].name, "a");
	assert_int_equal(f.tensors[0].dtype, WT_BF16);
	assert_int_equal(f.tensors[0].off, base);
	assert_string_equal(f.tensors[1].name, "b");
	assert_int_equal(f.tensors[1].ndim, 2);
	assert_int_equal(f.tensors[1].shape[1], 3);
	assert_int_equal(f.tensors[1].nbytes, 24);
	assert_int_equal(f.tensors[1].off, base + 4);
	assert_string_equal(f.tensors[2].name, "s");
	assert_int_equal(f.tensors[2].ndim, 0);
	assert_int_equal(f.tensors[2].nbytes, 8);
	assert_int_equal(f.tensors[3].nbytes, 0);
	assert_ptr_equal(st_find(&f, "b"), &f.tensors[1]);
	assert_null(st_find(&f, "nope"));
	assert_int_equal(f.n_meta, 1);
	assert_string_equal(st_meta_get(&f, "format"), "pt");
	assert_null(st_meta_get(&f, "x"));
	st_file_free(&f);
	st_file_free(&f); /* idempotent */
	st_file_free(NULL);

	assert_int_equal(parse("{}", 0, &f, &err), WT_OK);
	assert_int_equal(f.n_tensors, 0);
	st_file_free(&f);
}

static void test_reject_header_length(void **state)
{
	(void)state;
	st_file f;
	wt_errbuf err;
	/* the cap: checked before the buffer is touched */
	assert_int_equal(
	    st_parse_header("{}", (size_t)ST_MAX_HEADER_BYTES + 1, 1ull << 40, &f, &err),
	    WT_ETOOBIG);
	uint8_t pre[8] = {0};
	uint64_t hl;
	uint64_t big = (uint64_t)ST_MAX_HEADER_BYTES + 1;
	for (int i = 0; i < 8; i++)
		pre[i] = (uint8_t)(big >> (8 * i));
	assert_int_equal(st_check_prefix(pre, 1ull << 40, &hl, &err), WT_ETOOBIG);
	assert_non_null(strstr(err.msg, "cap"));
	/* longer than the file */
	memset(pre, 0, sizeof(pre));
	pre[0] = 100;
	assert_int_equal(st_check_prefix(pre, 50, &hl, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "50 bytes"));
	assert_int_equal(st_check_prefix(pre, 108, &hl, &err), WT_OK);
	assert_int_equal(hl, 100);
	assert_int_equal(st_parse_header("{}", 2, 9, &f, &err), WT_ECORRUPT);
}

static void test_reject_json(void **state)
{
	(void)state;
	expect_reject("{\"a\": ", 0, WT_ECORRUPT, "not valid JSON");
	expect_reject("[1, 2]", 0, WT_ECORRUPT, "not a JSON object");
	expect_reject("{\"w\": 3}", 0, WT_ECORRUPT, "tensor 'w'");
	expect_reject("{\"w\": {\"dtype\": 5, \"shape\": [1], \"data_offsets\": [0, 1]}}", 1,
	              WT_ECORRUPT, "tensor 'w'");
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"shape\": 1, \"data_offsets\": [0, 1]}}", 1,
	              WT_ECORRUPT, "tensor 'w'");
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"shape\": [1.0], \"data_offsets\": [0, 1]}}", 1,
	              WT_ECORRUPT, "tensor 'w': shape[0]");
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0]}}", 1,
	              WT_ECORRUPT, "tensor 'w': data_offsets");
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1], "
	              "\"extra\": 1}}",
	              1, WT_ECORRUPT, "unknown field 'extra'");
	expect_reject(
	    "{\"w\\u001b[2J\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1]}}", 1,
	    WT_ECORRUPT, "tensor 'w\\x1b[2J': its name holds a control character");
	expect_reject("{\"w\\n\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1]}}",
	              1, WT_ECORRUPT, "tensor 'w\\n': its name");
}

static void test_reject_metadata(void **state)
{
	(void)state;
	expect_reject("{\"__metadata__\": {\"format\": 1}}", 0, WT_ECORRUPT,
	              "__metadata__ 'format'");
	expect_reject("{\"__metadata__\": [\"x\"]}", 0, WT_ECORRUPT, "__metadata__");
}

static void test_reject_dtype(void **state)
{
	(void)state;
	expect_reject("{\"w\": {\"dtype\": \"F4\", \"shape\": [1], \"data_offsets\": [0, 1]}}", 1,
	              WT_EDTYPE, "tensor 'w': unknown dtype 'F4'");
	expect_reject("{\"w\": {\"dtype\": \"bf16\", \"shape\": [1], \"data_offsets\": [0, 2]}}", 2,
	              WT_EDTYPE, "tensor 'w'");
}

static void test_reject_dims(void **state)
{
	(void)state;
	expect_reject("{\"neg\": {\"dtype\": \"U8\", \"shape\": [2, -1], \"data_offsets\": [0, "
	              "0]}}",
	              0, WT_ESHAPE, "tensor 'neg': shape[1] = -1");
	expect_reject("{\"nine\": {\"dtype\": \"U8\", \"shape\": [1,1,1,1,1,1,1,1,1], "
	              "\"data_offsets\": [0, 1]}}",
	              1, WT_EUNSUPPORTED, "tensor 'nine'");
	/* element count overflows */
	expect_reject("{\"big\": {\"dtype\": \"U8\", \"shape\": [4294967296, 4294967296], "
	              "\"data_offsets\": [0, 1]}}",
	              1, WT_EOVERFLOW, "tensor 'big'");
	/* count fits, bytes do not */
	expect_reject("{\"big\": {\"dtype\": \"F64\", \"shape\": [4611686018427387904], "
	              "\"data_offsets\": [0, 1]}}",
	              1, WT_EOVERFLOW, "tensor 'big'");
}

static void test_reject_offsets(void **state)
{
	(void)state;
	/* end - begin != nbytes */
	expect_reject("{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}", 4,
	              WT_ESHAPE, "tensor 'w': data_offsets [0, 4] span 4 bytes");
	/* end < begin, negative begin */
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [4, 2]}}", 4,
	              WT_ECORRUPT, "tensor 'w'");
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [-1, 0]}}", 4,
	              WT_ECORRUPT, "tensor 'w'");
	/* beyond the data section (truncated file) */
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"shape\": [8], \"data_offsets\": [0, 8]}}", 7,
	              WT_ECORRUPT, "tensor 'w': data_offsets end 8 > data section size 7");
	/* overlap */
	expect_reject("{\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]},"
	              "\"b\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [2, 6]}}",
	              6, WT_ECORRUPT, "tensor 'b': data_offsets [2, 6] overlap tensor 'a'");
	/* zero-size tensor inside another */
	expect_reject("{\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]},"
	              "\"e\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [2, 2]}}",
	              4, WT_ECORRUPT, "overlap");
	/* hole between tensors, and at the start */
	expect_reject("{\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]},"
	              "\"b\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [6, 10]}}",
	              10, WT_ECORRUPT, "tensor 'b': hole of 2 bytes");
	expect_reject("{\"b\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [2, 6]}}", 6,
	              WT_ECORRUPT, "tensor 'b': hole of 2 bytes");
	/* file longer than the tensors */
	expect_reject("{\"last\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]}}",
	              5, WT_ECORRUPT, "last tensor 'last'");
}

static void test_reject_duplicate(void **state)
{
	(void)state;
	expect_reject("{\"dup.w\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1]},"
	              "\"dup.w\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [1, 2]}}",
	              2, WT_EDUP, "tensor 'dup.w'");
	expect_reject("{\"w\": {\"dtype\": \"U8\", \"dtype\": \"U8\", \"shape\": [1], "
	              "\"data_offsets\": [0, 1]}}",
	              1, WT_EDUP, "duplicate field 'dtype'");
	expect_reject("{\"q\\\"x\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1]},"
	              "\"q\\\"x\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [1, 2]}}",
	              2, WT_EDUP, "tensor 'q\"x'");
}

/* ---- writer ---- */

typedef struct membuf {
	uint8_t *p;
	size_t n, cap;
	int fail_after; /* calls left before returning WT_EIO; -1 = never */
} membuf;

static int mem_write(void *ctx, const void *data, size_t len)
{
	membuf *m = ctx;
	if (m->fail_after == 0)
		return WT_EIO;
	if (m->fail_after > 0)
		m->fail_after--;
	if (m->n + len > m->cap) {
		size_t nc = (m->n + len) * 2;
		uint8_t *np = realloc(m->p, nc);
		if (np == NULL)
			return WT_ENOMEM;
		m->p = np;
		m->cap = nc;
	}
	memcpy(m->p + m->n, data, len);
	m->n += len;
	return WT_OK;
}

static void test_roundtrip_every_dtype(void **state)
{
	(void)state;
	const uint64_t seed = 20261129;
	printf("seed %llu\n", (unsigned long long)seed);
	st_desc d[WT_DTYPE_COUNT_ + 1];
	void *data[WT_DTYPE_COUNT_ + 1];
	char names[WT_DTYPE_COUNT_ + 1][32];
	size_t n = 0;
	for (int dt = 1; dt < WT_DTYPE_COUNT_; dt++, n++) {
		snprintf(names[n], sizeof(names[n]), "t.%s", wt_dtype_name((wt_dtype)dt));
		d[n] = (st_desc){
		    .name = names[n], .dtype = (wt_dtype)dt, .ndim = 2, .shape = {3, (int64_t)dt}};
		if (dt == WT_I64)
			d[n].ndim = 0; /* scalar */
		data[n] = malloc(tu_desc_nbytes(&d[n]));
		assert_non_null(data[n]);
		tu_fill(data[n], tu_desc_nbytes(&d[n]), seed + n);
	}
	snprintf(names[n], sizeof(names[n]), "empty");
	d[n] = (st_desc){.name = names[n], .dtype = WT_F32, .ndim = 1, .shape = {0}};
	data[n++] = NULL;
	st_kv meta[] = {{"format", "pt"}, {"weightd.note", "x y"}};

	char *dir = tu_mkdtemp("st");
	assert_non_null(dir);
	char *path = tu_path(dir, "m.safetensors");
	wt_errbuf err;
	assert_int_equal(st_write_path(path, d, (const void *const *)data, n, meta, 2, &err),
	                 WT_OK);

	size_t flen;
	char *raw = tu_read_file(path, &flen);
	assert_non_null(raw);
	uint64_t hl = 0;
	for (int i = 7; i >= 0; i--)
		hl = (hl << 8) | (uint8_t)raw[i];
	assert_int_equal(hl % 8, 0); /* HF pads the header to a multiple of 8 */
	assert_true(raw[8 + hl - 1] == ' ' || raw[8 + hl - 1] == '}');
	free(raw);

	store *s;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	st_file f;
	assert_int_equal(st_read_file(s, "m.safetensors", &f, &err), WT_OK);
	assert_int_equal(f.n_tensors, n);
	assert_int_equal(f.file_bytes, flen);
	assert_string_equal(st_meta_get(&f, "weightd.note"), "x y");
	for (size_t i = 0; i < n; i++) {
		const st_tensor *t = st_find(&f, d[i].name);
		assert_non_null(t);
		assert_int_equal(t->dtype, d[i].dtype);
		assert_int_equal(t->ndim, d[i].ndim);
		assert_memory_equal(t->shape, d[i].shape, sizeof(int64_t) * (size_t)d[i].ndim);
		assert_int_equal(t->nbytes, tu_desc_nbytes(&d[i]));
		if (t->nbytes == 0)
			continue;
		void *back = malloc(t->nbytes);
		assert_int_equal(store_read(s, "m.safetensors", t->off, back, t->nbytes, &err),
		                 WT_OK);
		assert_memory_equal(back, data[i], t->nbytes);
		free(back);
	}
	/* declared order = offset order */
	for (size_t i = 0; i < n; i++)
		assert_string_equal(f.tensors[i].name, d[i].name);
	st_file_free(&f);
	store_close(s);
	for (size_t i = 0; i < n; i++)
		free(data[i]);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

static void test_writer_counts(void **state)
{
	(void)state;
	st_desc d[] = {{"a", WT_F32, 1, {4}}, {"b", WT_U8, 2, {2, 3}}};
	membuf m = {.fail_after = -1};
	st_writer *w;
	wt_errbuf err;
	uint8_t buf[32] = {0};
	assert_int_equal(st_writer_open(&w, d, 2, NULL, 0, mem_write, &m, &err), WT_OK);
	size_t hdr = m.n;
	/* any split */
	assert_int_equal(st_writer_write(w, buf, 10, &err), WT_OK);
	assert_int_equal(st_writer_write(w, buf, 0, &err), WT_OK);
	assert_int_equal(st_writer_write(w, buf, 13, &err), WT_EINVAL); /* 12 left of 22 */
	assert_non_null(strstr(err.msg, "exceeds"));
	assert_int_equal(st_writer_write(w, buf, 12, &err), WT_OK);
	assert_int_equal(st_writer_write(w, buf, 1, &err), WT_EINVAL); /* over-write */
	assert_int_equal(st_writer_close(w, &err), WT_OK);
	assert_int_equal(m.n, hdr + 22);
	st_file f;
	assert_int_equal(st_parse_header((char *)m.p + 8, hdr - 8, m.n, &f, &err), WT_OK);
	assert_int_equal(f.n_tensors, 2);
	st_file_free(&f);

	/* under-write names the tensor it stopped in */
	m.n = 0;
	assert_int_equal(st_writer_open(&w, d, 2, NULL, 0, mem_write, &m, &err), WT_OK);
	assert_int_equal(st_writer_write(w, buf, 18, &err), WT_OK);
	assert_int_equal(st_writer_close(w, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "tensor 'b': only 2 of 6 bytes"));
	assert_int_equal(st_writer_close(NULL, &err), WT_OK);
	st_writer_abort(NULL);

	/* the callback's error is returned */
	m.n = 0;
	m.fail_after = 1;
	assert_int_equal(st_writer_open(&w, d, 2, NULL, 0, mem_write, &m, &err), WT_OK);
	assert_int_equal(st_writer_write(w, buf, 4, &err), WT_EIO);
	assert_non_null(strstr(err.msg, "tensor 'a'"));
	st_writer_abort(w);
	m.fail_after = 0;
	assert_int_equal(st_writer_open(&w, d, 2, NULL, 0, mem_write, &m, &err), WT_EIO);
	assert_null(w);
	free(m.p);
}

/* Positional: the bytes at `at` (the membuf grows; n is the end written so far). */
static int mem_pwrite(void *ctx, const void *data, size_t len, uint64_t at)
{
	membuf *m = ctx;
	if (m->fail_after == 0)
		return WT_EIO;
	if (m->fail_after > 0)
		m->fail_after--;
	if (at + len > m->cap) {
		size_t nc = (size_t)(at + len) * 2;
		uint8_t *np = realloc(m->p, nc);
		if (np == NULL)
			return WT_ENOMEM;
		memset(np + m->cap, 0xee, nc - m->cap);
		m->p = np;
		m->cap = nc;
	}
	memcpy(m->p + at, data, len);
	m->n = at + len > m->n ? (size_t)(at + len) : m->n;
	return WT_OK;
}

/* st_writer_open_at: tensors written in another order, in parts, give the bytes a
 * sequential writer gives; a part out of order, past a tensor's end or to a tensor
 * that does not exist, a sequential write, and a tensor left short are refused
 * naming it; the callback's error is returned. */
static void test_writer_at(void **state)
{
	(void)state;
	st_desc d[] = {{"a", WT_F32, 1, {4}}, {"b", WT_U8, 2, {2, 3}}, {"c", WT_BF16, 1, {5}}};
	uint8_t a[16], b[6], c[10];
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i + 1);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(0x40 + i);
	for (size_t i = 0; i < sizeof(c); i++)
		c[i] = (uint8_t)(0x80 + i);
	membuf seq = {.fail_after = -1}, pos = {.fail_after = -1};
	st_writer *w;
	wt_errbuf err;
	assert_int_equal(st_writer_open(&w, d, 3, NULL, 0, mem_write, &seq, &err), WT_OK);
	assert_int_equal(st_writer_write(w, a, 16, &err), WT_OK);
	assert_int_equal(st_writer_write(w, b, 6, &err), WT_OK);
	assert_int_equal(st_writer_write(w, c, 10, &err), WT_OK);
	assert_int_equal(st_writer_close(w, &err), WT_OK);

	assert_int_equal(st_writer_open_at(&w, d, 3, NULL, 0, mem_write, mem_pwrite, &pos, &err),
	                 WT_OK);
	assert_int_equal(st_writer_write(w, a, 16, &err), WT_EINVAL); /* sequential */
	assert_int_equal(st_writer_write_at(w, 2, 0, c, 4, &err), WT_OK);
	assert_int_equal(st_writer_write_at(w, 2, 6, c + 6, 4, &err), WT_EINVAL); /* a gap */
	assert_non_null(strstr(err.msg, "tensor 'c': 4 bytes at 6, of 10 (4 written so far)"));
	assert_int_equal(st_writer_write_at(w, 0, 0, a, 17, &err), WT_EINVAL); /* past its end */
	assert_non_null(strstr(err.msg, "tensor 'a'"));
	assert_int_equal(st_writer_write_at(w, 3, 0, a, 1, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "no such tensor"));
	assert_int_equal(st_writer_write_at(w, 1, 0, b, 6, &err), WT_OK);
	assert_int_equal(st_writer_write_at(w, 2, 4, c + 4, 6, &err), WT_OK);
	assert_int_equal(st_writer_write_at(w, 0, 0, a, 10, &err), WT_OK);
	assert_int_equal(st_writer_write_at(w, 0, 10, a + 10, 6, &err), WT_OK);
	assert_int_equal(st_writer_close(w, &err), WT_OK);
	assert_int_equal(pos.n, seq.n);
	assert_memory_equal(pos.p, seq.p, seq.n);

	/* a tensor left short is named, whichever it is */
	pos.n = 0;
	assert_int_equal(st_writer_open_at(&w, d, 3, NULL, 0, mem_write, mem_pwrite, &pos, &err),
	                 WT_OK);
	assert_int_equal(st_writer_write_at(w, 0, 0, a, 16, &err), WT_OK);
	assert_int_equal(st_writer_write_at(w, 2, 0, c, 10, &err), WT_OK);
	assert_int_equal(st_writer_write_at(w, 1, 0, b, 5, &err), WT_OK);
	assert_int_equal(st_writer_close(w, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "tensor 'b': only 5 of 6 bytes"));

	/* the callback's error is returned */
	pos.fail_after = 1;
	assert_int_equal(st_writer_open_at(&w, d, 3, NULL, 0, mem_write, mem_pwrite, &pos, &err),
	                 WT_OK);
	assert_int_equal(st_writer_write_at(w, 1, 0, b, 6, &err), WT_EIO);
	assert_non_null(strstr(err.msg, "tensor 'b'"));
	st_writer_abort(w);
	free(seq.p);
	free(pos.p);
}

static void test_writer_rejects(void **state)
{
	(void)state;
	membuf m = {.fail_after = -1};
	st_writer *w;
	wt_errbuf err;
	st_desc dup[] = {{"a", WT_F32, 1, {4}}, {"a", WT_U8, 1, {2}}};
	assert_int_equal(st_writer_open(&w, dup, 2, NULL, 0, mem_write, &m, &err), WT_EDUP);
	assert_non_null(strstr(err.msg, "tensor 'a'"));
	st_desc neg[] = {{"n", WT_F32, 2, {4, -2}}};
	assert_int_equal(st_writer_open(&w, neg, 1, NULL, 0, mem_write, &m, &err), WT_ESHAPE);
	st_desc bad[] = {{"x", WT_DTYPE_INVALID, 1, {4}}};
	assert_int_equal(st_writer_open(&w, bad, 1, NULL, 0, mem_write, &m, &err), WT_EDTYPE);
	st_desc ovf[] = {{"o", WT_F64, 2, {INT64_MAX, 4}}};
	assert_int_equal(st_writer_open(&w, ovf, 1, NULL, 0, mem_write, &m, &err), WT_EOVERFLOW);
	st_desc res[] = {{"__metadata__", WT_F32, 0, {0}}};
	assert_int_equal(st_writer_open(&w, res, 1, NULL, 0, mem_write, &m, &err), WT_EINVAL);
	st_kv kv[] = {{"k", "1"}, {"k", "2"}};
	st_desc ok[] = {{"a", WT_F32, 1, {1}}};
	assert_int_equal(st_writer_open(&w, ok, 1, kv, 2, mem_write, &m, &err), WT_EDUP);
	/* not UTF-8: said so, not "out of memory" (jansson refuses such strings) */
	st_desc latin[] = {{"caf\xe9", WT_F32, 1, {1}}};
	assert_int_equal(st_writer_open(&w, latin, 1, NULL, 0, mem_write, &m, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "tensor 0: name is not valid UTF-8"));
	st_kv kv8[] = {{"k", "\xff"}};
	assert_int_equal(st_writer_open(&w, ok, 1, kv8, 1, mem_write, &m, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "__metadata__ entry 0"));
	assert_int_equal(m.n, 0); /* nothing written on a rejected open */
	assert_null(w);

	/* st_write_path leaves nothing behind on failure */
	char *dir = tu_mkdtemp("stw");
	char *path = tu_path(dir, "x.safetensors");
	const void *data[] = {NULL};
	assert_int_equal(st_write_path(path, ok, data, 1, NULL, 0, &err), WT_EINVAL);
	store *s;
	store_list l;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	assert_int_equal(store_list_objects(s, "", &l, &err), WT_OK);
	assert_int_equal(l.n, 0);
	store_list_free(&l);
	store_close(s);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

static void test_read_file_errors(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("str");
	wt_errbuf err;
	/* shorter than the length prefix */
	assert_int_equal(tu_write_file(dir, "tiny.safetensors", "abc", 3), 0);
	/* header length beyond the file */
	uint8_t trunc[16] = {200};
	assert_int_equal(tu_write_file(dir, "trunc.safetensors", trunc, sizeof(trunc)), 0);
	/* header length over the cap */
	uint8_t capped[16] = {0, 0, 0, 0, 1};
	assert_int_equal(tu_write_file(dir, "cap.safetensors", capped, sizeof(capped)), 0);
	/* a valid header whose data was cut off */
	const char *h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
	uint8_t cut[128] = {(uint8_t)strlen(h)};
	memcpy(cut + 8, h, strlen(h));
	assert_int_equal(tu_write_file(dir, "cut.safetensors", cut, 8 + strlen(h) + 12), 0);

	store *s;
	st_file f;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	assert_int_equal(st_read_file(s, "tiny.safetensors", &f, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "tiny.safetensors"));
	assert_int_equal(st_read_file(s, "trunc.safetensors", &f, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "trunc.safetensors"));
	assert_int_equal(st_read_file(s, "cap.safetensors", &f, &err), WT_ETOOBIG);
	assert_int_equal(st_read_file(s, "cut.safetensors", &f, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "'cut.safetensors': tensor 'w'"));
	assert_int_equal(st_read_file(s, "absent.safetensors", &f, &err), WT_ENOTFOUND);
	store_close(s);
	tu_rmrf(dir);
	free(dir);
}

/* Random byte mutations of a valid header: never a crash, and whatever is
 * accepted still tiles the data section. */
static void test_mutations(void **state)
{
	(void)state;
	const char *h = "{\"__metadata__\":{\"k\":\"v\"},"
	                "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
	                "\"b\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[24,32]}}";
	size_t n = strlen(h);
	char *buf = malloc(n);
	uint64_t x = 99; /* seed */
	printf("seed %llu\n", (unsigned long long)x);
	const char alphabet[] = "{}[]\",:0123456789-eE. abF8_UI\\";
	int accepted = 0;
	for (int iter = 0; iter < 20000; iter++) {
		memcpy(buf, h, n);
		int edits = 1 + iter % 3;
		for (int k = 0; k < edits; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			buf[(x >> 33) % n] = alphabet[(x >> 20) % (sizeof(alphabet) - 1)];
		}
		uint64_t data_len = 28 + (x >> 60); /* 28..43 */
		st_file f;
		wt_errbuf err;
		int rv = st_parse_header(buf, n, 8 + n + data_len, &f, &err);
		if (rv != WT_OK) {
			assert_true(rv > WT_OK && rv < WT_ERR_COUNT_);
			assert_true(err.msg[0] != '\0');
			continue;
		}
		accepted++;
		uint64_t pos = f.data_off;
		for (size_t i = 0; i < f.n_tensors; i++) {
			assert_int_equal(f.tensors[i].off, pos);
			pos += f.tensors[i].nbytes;
		}
		assert_int_equal(pos, f.file_bytes);
		st_file_free(&f);
	}
	printf("accepted %d of 20000 mutations\n", accepted);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_ok),
	    cmocka_unit_test(test_reject_header_length),
	    cmocka_unit_test(test_reject_json),
	    cmocka_unit_test(test_reject_metadata),
	    cmocka_unit_test(test_reject_dtype),
	    cmocka_unit_test(test_reject_dims),
	    cmocka_unit_test(test_reject_offsets),
	    cmocka_unit_test(test_reject_duplicate),
	    cmocka_unit_test(test_roundtrip_every_dtype),
	    cmocka_unit_test(test_writer_counts),
	    cmocka_unit_test(test_writer_at),
	    cmocka_unit_test(test_writer_rejects),
	    cmocka_unit_test(test_read_file_errors),
	    cmocka_unit_test(test_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
