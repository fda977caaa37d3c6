/* test_store.c — object stores: the file:// backend, key checks, reads, listing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "tests/util/testutil.h"

#define SEED 4242u
#define BIG  100000u

typedef struct fx {
	char *dir;
	char *outside; /* a folder next to the root, for symlink escapes */
	uint8_t big[BIG];
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -1;
	f->dir = tu_mkdtemp("store");
	f->outside = tu_mkdtemp("outside");
	if (f->dir == NULL || f->outside == NULL)
		return -1;
	printf("seed %u\n", SEED);
	tu_fill(f->big, BIG, SEED);
	int rc = tu_write_file(f->dir, "z.bin", f->big, BIG);
	rc |= tu_write_file(f->dir, "a/b.txt", "hello", 5);
	rc |= tu_write_file(f->dir, "m/n/o.txt", "deep", 4);
	rc |= tu_write_file(f->dir, "m.txt", "", 0);
	rc |= tu_write_file(f->outside, "secret", "s3cr3t", 6);
	*state = f;
	return rc;
}

static int teardown(void **state)
{
	fx *f = *state;
	tu_rmrf(f->dir);
	tu_rmrf(f->outside);
	free(f->dir);
	free(f->outside);
	free(f);
	return 0;
}

static void test_open(void **state)
{
	fx *f = *state;
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, f->dir, &err), WT_OK);
	assert_string_equal(store_uri(s), f->dir);
	assert_int_equal(store_bytes_read(s), 0);
	store_close(s);
	char uri[600];
	snprintf(uri, sizeof(uri), "file://%s", f->dir);
	assert_int_equal(store_open(&s, uri, &err), WT_OK);
	store_obj o;
	assert_int_equal(store_stat(s, "a/b.txt", &o, &err), WT_OK);
	store_obj_clear(&o);
	store_close(s);
	store_close(NULL);

	assert_int_equal(store_open(&s, "/nonexistent/wt-store", &err), WT_ENOTFOUND);
	assert_null(s);
	char *file = tu_path(f->dir, "a/b.txt");
	assert_int_equal(store_open(&s, file, &err), WT_EINVAL);
	free(file);
	assert_int_equal(store_open(&s, "", &err), WT_EINVAL);
	assert_int_equal(store_open(&s, "gs://bucket/x", &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "gs"));
}

static void test_list(void **state)
{
	fx *f = *state;
	store *s;
	wt_errbuf err;
	store_list l;
	assert_int_equal(store_open(&s, f->dir, &err), WT_OK);
	assert_int_equal(store_list_objects(s, "", &l, &err), WT_OK);
	const char *want[] = {"a/b.txt", "m.txt", "m/n/o.txt", "z.bin"};
	assert_int_equal(l.n, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(l.objs[i].key, want[i]);
	assert_int_equal(l.objs[3].nbytes, BIG);
	assert_int_equal(l.objs[1].nbytes, 0);
	/* version = mtime.ctime (ns) . dev (hex) . inode */
	char *p = tu_path(f->dir, "z.bin");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	char ver[96];
	snprintf(ver, sizeof(ver), "%llu.%llu.%llx.%llu",
	         (unsigned long long)st.st_mtim.tv_sec * 1000000000ull +
	             (unsigned long long)st.st_mtim.tv_nsec,
	         (unsigned long long)st.st_ctim.tv_sec * 1000000000ull +
	             (unsigned long long)st.st_ctim.tv_nsec,
	         (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	assert_string_equal(l.objs[3].version, ver);
	store_list_free(&l);
	assert_int_equal(l.n, 0);
	store_list_free(&l);
	store_list_free(NULL);

	assert_int_equal(store_list_objects(s, "m/", &l, &err), WT_OK);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.objs[0].key, "m/n/o.txt");
	store_list_free(&l);
	assert_int_equal(store_list_objects(s, "m", &l, &err), WT_OK);
	assert_int_equal(l.n, 2);
	store_list_free(&l);
	assert_int_equal(store_list_objects(s, "../", &l, &err), WT_EPERM);

	/* touching changes the version */
	store_obj o1, o2;
	assert_int_equal(store_stat(s, "z.bin", &o1, &err), WT_OK);
	assert_string_equal(o1.key, "z.bin");
	assert_int_equal(o1.nbytes, BIG);
	assert_string_equal(o1.version, ver);
	assert_int_equal(tu_touch(p, 1000), 0);
	assert_int_equal(store_stat(s, "z.bin", &o2, &err), WT_OK);
	assert_string_not_equal(o1.version, o2.version);
	store_obj_clear(&o1);
	store_obj_clear(&o2);
	store_obj_clear(NULL);
	assert_int_equal(store_stat(s, "nope", &o1, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "nope"));
	assert_int_equal(store_stat(s, "m", &o1, &err), WT_ENOTFOUND); /* a folder */
	free(p);
	store_close(s);
}

static void test_read(void **state)
{
	fx *f = *state;
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, f->dir, &err), WT_OK);
	uint8_t buf[4096];
	assert_int_equal(store_read(s, "z.bin", 12345, buf, sizeof(buf), &err), WT_OK);
	assert_memory_equal(buf, f->big + 12345, sizeof(buf));
	assert_int_equal(store_bytes_read(s), sizeof(buf));
	assert_int_equal(store_read(s, "z.bin", 0, buf, 0, &err), WT_OK);
	/* short read: the last 10 bytes exist, 20 were asked for */
	assert_int_equal(store_read(s, "z.bin", BIG - 10, buf, 20, &err), WT_EIO);
	assert_non_null(strstr(err.msg, "'z.bin': short read: 10 of 20"));
	assert_int_equal(store_read(s, "z.bin", BIG + 5, buf, 1, &err), WT_EIO);
	assert_int_equal(store_read(s, "gone.bin", 0, buf, 1, &err), WT_ENOTFOUND);
	assert_int_equal(store_read(s, "z.bin", UINT64_MAX - 2, buf, 8, &err), WT_EOVERFLOW);

	char *all;
	size_t len;
	uint64_t before = store_bytes_read(s);
	assert_int_equal(store_read_all(s, "a/b.txt", 5, &all, &len, &err), WT_OK);
	assert_int_equal(len, 5);
	assert_string_equal(all, "hello");
	free(all);
	assert_int_equal(store_bytes_read(s), before + 5);
	assert_int_equal(store_read_all(s, "a/b.txt", 4, &all, &len, &err), WT_ETOOBIG);
	assert_null(all);
	assert_non_null(strstr(err.msg, "a/b.txt"));
	assert_int_equal(store_read_all(s, "m.txt", 4, &all, &len, &err), WT_OK);
	assert_int_equal(len, 0);
	assert_string_equal(all, "");
	free(all);
	store_close(s);
}

static void test_traversal(void **state)
{
	fx *f = *state;
	store *s;
	wt_errbuf err;
	store_obj o;
	uint8_t buf[8];
	char *link = tu_path(f->dir, "escape");
	char *target = tu_path(f->outside, "secret");
	assert_int_equal(symlink(target, link), 0);
	char *inlink = tu_path(f->dir, "alias.txt");
	assert_int_equal(symlink("a/b.txt", inlink), 0);
	assert_int_equal(store_open(&s, f->dir, &err), WT_OK);

	const char *bad[] = {"../secret", "a/../../x", "..", "/etc/passwd", "a/.."};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(store_stat(s, bad[i], &o, &err), WT_EPERM);
		assert_int_equal(store_read(s, bad[i], 0, buf, 1, &err), WT_EPERM);
	}
	assert_int_equal(store_stat(s, "a//b.txt", &o, &err), WT_EINVAL);
	assert_int_equal(store_stat(s, "./a/b.txt", &o, &err), WT_EINVAL);
	assert_int_equal(store_stat(s, "", &o, &err), WT_EINVAL);
	/* symlink resolving outside the root */
	assert_int_equal(store_stat(s, "escape", &o, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "outside the store root"));
	assert_int_equal(store_read(s, "escape", 0, buf, 6, &err), WT_EPERM);
	assert_int_equal(store_bytes_read(s), 0);
	store_list l;
	assert_int_equal(store_list_objects(s, "", &l, &err), WT_EPERM);
	assert_non_null(strstr(err.msg, "escape"));
	/* a symlink inside the root is fine */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(store_read(s, "alias.txt", 0, buf, 5, &err), WT_OK);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(store_list_objects(s, "al", &l, &err), WT_OK);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.objs[0].nbytes, 5);
	store_list_free(&l);
	assert_int_equal(unlink(inlink), 0);
	store_close(s);
	free(link);
	free(target);
	free(inlink);
}

typedef struct reader {
	store *s;
	const uint8_t *ref;
	uint64_t seed;
	uint64_t bytes;
	int bad;
} reader;

static void *read_loop(void *arg)
{
	reader *r = arg;
	uint8_t buf[3000];
	uint64_t x = r->seed;
	for (int i = 0; i < 200; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		size_t len = (size_t)(x >> 40) % sizeof(buf) + 1;
		uint64_t off = (x >> 17) % (BIG - len);
		wt_errbuf err;
		if (store_read(r->s, "z.bin", off, buf, len, &err) != WT_OK ||
		    memcmp(buf, r->ref + off, len) != 0)
			r->bad++;
		r->bytes += len;
	}
	return NULL;
}

static void test_threads(void **state)
{
	fx *f = *state;
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, f->dir, &err), WT_OK);
	pthread_t th[4];
	reader r[4];
	for (int i = 0; i < 4; i++) {
		r[i] = (reader){.s = s, .ref = f->big, .seed = SEED + (uint64_t)i};
		assert_int_equal(pthread_create(&th[i], NULL, read_loop, &r[i]), 0);
	}
	uint64_t total = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].bad, 0);
		total += r[i].bytes;
	}
	assert_int_equal(store_bytes_read(s), total);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_open, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_traversal, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
