/*
 * test_objstore_version.c — what the http:// store takes as an object's version and bytes,
 * against tests/integration/objstore_server.py (test_objstore_fx.h): an object without
 * ETag or Last-Modified refused, a body with a Content-Encoding refused, a Last-Modified or
 * ETag answered in the second of the object's last write (which a same-size write in that
 * second would keep) asked again once WEIGHTD_HTTP_SETTLE_MS later, then WT_ECHANGED, an S3
 * ETag taken as it is. Moved from test_objstore.c (ranges, checkpoints, errors, reads).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "loader/curl_xfer.h"
#include "tests/test_objstore_fx.h"
#include "tests/util/testutil.h"

/*
 * A server that sends neither ETag nor Last-Modified gives weightd no way to
 * tell one version of an object from the next: a ranged read cannot be
 * checked against the version whose bytes the revision digest hashed. Before,
 * such a checkpoint opened with version "" everywhere: a same-size rewrite
 * after the open was read by production under the old revision and
 * ckpt_check passed (a shard of revision R holding bytes that are not R's).
 * Now every object without a validator is refused, naming it.
 */
static void test_no_validator(void **state)
{
	fx *f = *state;
	char *model = tu_path(f->dir, "model");
	char shard[64];
	tu_shard_name(shard, sizeof(shard), 1, 2);
	store *s = open_mode(f, "novalid/model");
	wt_errbuf err = {0};
	ckpt *c = NULL;
	int rv = ckpt_open(&c, s, &err);
	if (rv == WT_OK) { /* the old behaviour: show what it leads to */
		const ckpt_tensor *t = NULL;
		for (size_t i = 0; i < ckpt_n_tensors(c) && t == NULL; i++)
			if (strcmp(ckpt_tensor_at(c, i)->object, shard) == 0)
				t = ckpt_tensor_at(c, i);
		assert_non_null(t);
		size_t slen = 0;
		char *sp = tu_path(model, shard);
		char *sb = tu_read_file(sp, &slen);
		free(sp);
		assert_non_null(sb);
		uint8_t *before = malloc(t->nbytes), *after = malloc(t->nbytes);
		assert_int_equal(ckpt_read(c, t, 0, before, t->nbytes, &err), WT_OK);
		sb[t->off] ^= 0x5a; /* same size: the upload of another version */
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		int rr = ckpt_read(c, t, 0, after, t->nbytes, &err);
		int rc = ckpt_check(c, &err);
		fprintf(stderr, "revision %s: read %d, check %d, bytes %s\n", ckpt_revision(c), rr,
		        rc, memcmp(before, after, t->nbytes) == 0 ? "unchanged" : "CHANGED");
		sb[t->off] ^= 0x5a;
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		/* bytes of another version under the revision, and nothing noticed */
		assert_true(rr != WT_OK || rc != WT_OK || memcmp(before, after, t->nbytes) == 0);
		free(before);
		free(after);
		free(sb);
		ckpt_close(c);
	}
	assert_int_equal(rv, WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "config.json"));
	assert_non_null(strstr(err.msg, "ETag"));
	store_close(s);
	/* the store level says the same for any object */
	store_obj o;
	s = open_mode(f, "novalid");
	assert_int_equal(store_stat(s, "big.bin", &o, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "big.bin"));
	store_close(s);
	free(model);
}

/*
 * Last-Modified (no ETag) counts whole seconds: a same-size rewrite in the
 * second of the last write keeps it. A HEAD answered in that second (Date =
 * Last-Modified, the /lmnow/ server) pinned a version that the next write of
 * the same second would keep: production then read the new bytes under the
 * old revision and ckpt_check passed. Now such an object is not pinned
 * (WT_ECHANGED: opened at the next check, a second later); a Last-Modified
 * older than the reply's Date cannot be kept by a later write.
 */
/* What a checkpoint c opened under a version that a same-size write in the
 * same second keeps leads to: such a write (its mtime put back) is read under
 * c's revision, and ckpt_check passes. Fails the test when it happens. */
static void same_second_write(const fx *f, ckpt *c)
{
	char *model = tu_path(f->dir, "model");
	char shard[64];
	tu_shard_name(shard, sizeof(shard), 1, 2);
	wt_errbuf err = {0};
	{
		const ckpt_tensor *t = NULL;
		for (size_t i = 0; i < ckpt_n_tensors(c) && t == NULL; i++)
			if (strcmp(ckpt_tensor_at(c, i)->object, shard) == 0)
				t = ckpt_tensor_at(c, i);
		assert_non_null(t);
		char *sp = tu_path(model, shard);
		struct stat st0;
		assert_int_equal(stat(sp, &st0), 0);
		size_t slen = 0;
		char *sb = tu_read_file(sp, &slen);
		assert_non_null(sb);
		uint8_t *before = malloc(t->nbytes), *after = malloc(t->nbytes);
		assert_int_equal(ckpt_read(c, t, 0, before, t->nbytes, &err), WT_OK);
		/* another write in the same second: same size, same Last-Modified */
		sb[t->off] ^= 0x5a;
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		struct timespec ts[2] = {st0.st_atim, st0.st_mtim};
		assert_int_equal(utimensat(AT_FDCWD, sp, ts, 0), 0);
		int rr = ckpt_read(c, t, 0, after, t->nbytes, &err);
		int rc = ckpt_check(c, &err);
		fprintf(stderr, "revision %s: read %d, check %d, bytes %s\n", ckpt_revision(c), rr,
		        rc, memcmp(before, after, t->nbytes) == 0 ? "unchanged" : "CHANGED");
		sb[t->off] ^= 0x5a;
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		assert_int_equal(utimensat(AT_FDCWD, sp, ts, 0), 0);
		assert_true(rr != WT_OK || rc != WT_OK || memcmp(before, after, t->nbytes) == 0);
		free(before);
		free(after);
		free(sb);
		free(sp);
	}
	free(model);
}

/* A checkpoint served by the /now_mode/ server (every reply answered in the
 * second of the object's last write) does not open: WT_ECHANGED naming
 * config.json and `word`; on the code before, what opening it leads to is
 * shown (same_second_write). Aged, the same objects open through
 * /settled_mode/. */
static void expect_unsettled(fx *f, const char *now_mode, const char *word,
                             const char *settled_mode)
{
	char uri[64];
	snprintf(uri, sizeof(uri), "%s/model", now_mode);
	setenv("WEIGHTD_HTTP_SETTLE_MS", "10", 1); /* it never settles: ask again soon */
	store *s = open_mode(f, uri);
	unsetenv("WEIGHTD_HTTP_SETTLE_MS");
	wt_errbuf err = {0};
	ckpt *c = NULL;
	int rv = ckpt_open(&c, s, &err);
	if (rv == WT_OK) { /* the old behaviour: show what it leads to */
		same_second_write(f, c);
		ckpt_close(c);
	}
	assert_int_equal(rv, WT_ECHANGED);
	assert_non_null(strstr(err.msg, "config.json"));
	assert_non_null(strstr(err.msg, word));
	assert_non_null(strstr(err.msg, "Last-Modified"));
	store_close(s);
	/* the same objects, answered a second or more after their last write */
	assert_int_equal(age_files(f), 0);
	snprintf(uri, sizeof(uri), "%s/model", settled_mode);
	s = open_mode(f, uri);
	assert_int_equal(ckpt_open(&c, s, &err), WT_OK);
	ckpt_close(c);
	store_close(s);
}

static void test_lastmod_second(void **state)
{
	expect_unsettled(*state, "lmnow", "Last-Modified", "noetag");
}

/*
 * An ETag may count whole seconds too: nginx's is the mtime's second and the
 * size, so a same-size rewrite in the second of the last write keeps it.
 * Before, any ETag was trusted: a HEAD answered in that second (the /etagnow/
 * server, Date = Last-Modified) pinned a version that the next write of the
 * second kept, and production read its bytes under the old revision with
 * ckpt_check passing. Now an http(s) reply is judged by its Last-Modified and
 * Date whatever its ETag (asked again once, WEIGHTD_HTTP_SETTLE_MS later,
 * then WT_ECHANGED); only S3's ETags, MD5s of the bytes, are exempt.
 */
/*
 * An object answered in the second of its last write (an upload that has just
 * ended) is asked about again once, WEIGHTD_HTTP_SETTLE_MS (1100) later,
 * rather than failing the open: written at the start of a second, the first
 * HEAD comes in that second and the second HEAD a second later.
 */
static void test_settle(void **state)
{
	fx *f = *state;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	usleep((useconds_t)((1000000000 - ts.tv_nsec) / 1000 + 20000)); /* just past a second */
	char *big = tu_path(f->dir, "big.bin");
	struct timespec now[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_NOW}};
	assert_int_equal(utimensat(AT_FDCWD, big, now, 0), 0);
	store *s = open_mode(f, "counted");
	long h0 = server_count(f, "heads");
	store_obj o;
	wt_errbuf err = {0};
	int rv = store_stat(s, "big.bin", &o, &err);
	long heads = server_count(f, "heads") - h0;
	printf("stat in the second of the last write: %s after %ld HEADs\n", wt_errname(rv), heads);
	assert_int_equal(rv, WT_OK);
	assert_int_equal(o.nbytes, BIG_BYTES);
	assert_int_equal(heads, 2);
	store_obj_clear(&o);
	store_close(s);
	assert_int_equal(tu_touch(big, -10000000000ll), 0);
	free(big);
}

/* The same judgement on a bare HEAD reply: an S3 ETag (an MD5 of the bytes,
 * etag_is_content) is taken even in the second of the last write. */
static void test_stat_reply_etag(void **state)
{
	(void)state;
	xfer x = {.kind = X_HEAD, .status = 200, .clen = 10};
	snprintf(x.etag, sizeof(x.etag), "%s", "65f1a2b3-a");
	snprintf(x.lastmod, sizeof(x.lastmod), "%s", "Tue, 01 Dec 2026 10:00:00 GMT");
	snprintf(x.date, sizeof(x.date), "%s", "Tue, 01 Dec 2026 10:00:00 GMT");
	store_obj o = {0};
	wt_errbuf err = {0};
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", false, &o, &err), WT_ECHANGED);
	assert_non_null(strstr(err.msg, "65f1a2b3-a"));
	store_obj_clear(&o);
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", true, &o, &err), WT_OK);
	assert_string_equal(o.version, "65f1a2b3-a");
	store_obj_clear(&o);
	/* a second later, or with no Last-Modified to judge by: taken */
	snprintf(x.date, sizeof(x.date), "%s", "Tue, 01 Dec 2026 10:00:01 GMT");
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", false, &o, &err), WT_OK);
	store_obj_clear(&o);
	x.lastmod[0] = '\0';
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", false, &o, &err), WT_OK);
	store_obj_clear(&o);
}

static void test_etag_second(void **state)
{
	expect_unsettled(*state, "etagnow", "ETag", "ok");
}

/*
 * A reply whose body is encoded (Content-Encoding: gzip) does not hold the
 * object's bytes, even when its sizes and ranges are consistent (ranges of
 * the gzip'ed representation). Before, they were returned as the object's.
 */
static void test_content_encoding(void **state)
{
	fx *f = *state;
	store *s = open_mode(f, "gzip");
	wt_errbuf err = {0};
	store_obj o;
	int rv = store_stat(s, "big.bin", &o, &err);
	if (rv == WT_OK) {
		uint8_t *buf = malloc(o.nbytes);
		assert_non_null(buf);
		rv = store_read(s, "big.bin", 0, buf, (size_t)o.nbytes, &err);
		/* never bytes that are not the object's */
		assert_true(rv != WT_OK ||
		            (o.nbytes == BIG_BYTES && memcmp(buf, f->big, BIG_BYTES) == 0));
		free(buf);
		store_obj_clear(&o);
	}
	assert_int_equal(rv, WT_EIO);
	assert_non_null(strstr(err.msg, "big.bin"));
	assert_non_null(strstr(err.msg, "Content-Encoding: gzip"));
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_validator),    cmocka_unit_test(test_content_encoding),
	    cmocka_unit_test(test_lastmod_second),  cmocka_unit_test(test_etag_second),
	    cmocka_unit_test(test_stat_reply_etag), cmocka_unit_test(test_settle),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
