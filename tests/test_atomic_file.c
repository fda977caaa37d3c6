/* common_afile / common_write_file_atomic: all or nothing, temp file cleaned up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "tests/util/testutil.h"

static void expect_file(const char *path, const char *text)
{
	size_t len = 0;
	char *got = tu_read_file(path, &len);
	assert_non_null(got);
	assert_int_equal(len, strlen(text));
	assert_memory_equal(got, text, len);
	free(got);
}

static char *tmp_of(const char *path)
{
	size_t n = strlen(path) + 32;
	char *t = malloc(n);
	assert_non_null(t);
	snprintf(t, n, "%s.tmp.%ld", path, (long)getpid());
	return t;
}

static void test_whole_file(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("afile");
	char *path = tu_path(dir, "f");
	char *tmp = tmp_of(path);
	wt_errbuf err;
	for (int durable = 0; durable < 2; durable++) {
		assert_int_equal(common_write_file_atomic(path, "one\n", 4, durable, &err), WT_OK);
		expect_file(path, "one\n");
		assert_int_equal(common_write_file_atomic(path, "two!\n", 5, durable, &err), WT_OK);
		expect_file(path, "two!\n");
		assert_int_not_equal(access(tmp, F_OK), 0);
	}
	/* the temp path cannot be created: error naming it, old file intact */
	assert_int_equal(mkdir(tmp, 0755), 0);
	assert_int_equal(common_write_file_atomic(path, "three\n", 6, true, &err), WT_EIO);
	assert_non_null(strstr(err.msg, tmp));
	expect_file(path, "two!\n");
	assert_int_equal(rmdir(tmp), 0);
	/* the target is a folder: rename fails, the temp file is removed */
	char *sub = tu_path(dir, "d");
	assert_int_equal(mkdir(sub, 0755), 0);
	char *subtmp = tmp_of(sub);
	assert_int_equal(common_write_file_atomic(sub, "x", 1, false, &err), WT_EIO);
	assert_non_null(strstr(err.msg, "rename"));
	assert_int_not_equal(access(subtmp, F_OK), 0);
	/* a folder that does not exist */
	char *missing = tu_path(dir, "no/such/file");
	assert_int_equal(common_write_file_atomic(missing, "x", 1, true, &err), WT_EIO);
	free(missing);
	free(subtmp);
	free(sub);
	free(tmp);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

static void test_streaming(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("afile-s");
	char *path = tu_path(dir, "s");
	char *tmp = tmp_of(path);
	wt_errbuf err;
	assert_int_equal(common_write_file_atomic(path, "old", 3, false, &err), WT_OK);
	common_afile f;
	assert_int_equal(common_afile_open(&f, path, true, &err), WT_OK);
	assert_int_equal(common_afile_write(&f, "ne", 2, &err), WT_OK);
	assert_int_equal(common_afile_write_cb(&f, "w", 1), WT_OK);
	expect_file(path, "old"); /* nothing visible before commit */
	assert_int_equal(access(tmp, F_OK), 0);
	common_afile_abort(&f);
	expect_file(path, "old");
	assert_int_not_equal(access(tmp, F_OK), 0);
	common_afile_abort(&f); /* twice: no-op */
	assert_int_equal(common_afile_open(&f, path, false, &err), WT_OK);
	assert_int_equal(common_afile_write(&f, "new", 3, &err), WT_OK);
	assert_int_equal(common_afile_commit(&f, &err), WT_OK);
	common_afile_abort(&f); /* after commit: no-op, the file stays */
	expect_file(path, "new");
	assert_int_not_equal(access(tmp, F_OK), 0);
	free(tmp);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

/* The temp name is predictable: a symlink planted there is not followed (its
 * target keeps its bytes), a leftover file is replaced, and a second write of
 * the same path while one is in progress is WT_EBUSY, not a shared file. */
static void test_temp_name_taken(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("afile-t");
	char *path = tu_path(dir, "p");
	char *tmp = tmp_of(path);
	char *victim = tu_path(dir, "victim");
	wt_errbuf err;
	assert_int_equal(tu_write_file(dir, "victim", "precious", 8), 0);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(common_write_file_atomic(path, "pid\n", 4, false, &err), WT_OK);
	expect_file(victim, "precious");
	expect_file(path, "pid\n");
	assert_int_not_equal(access(tmp, F_OK), 0);
	/* a crash's leftover */
	assert_int_equal(tu_write_file(dir, "p.tmp.x", "", 0), 0);
	char *left = tu_path(dir, "p.tmp.x");
	assert_int_equal(rename(left, tmp), 0);
	assert_int_equal(common_write_file_atomic(path, "two\n", 4, false, &err), WT_OK);
	expect_file(path, "two\n");
	/* two writers of one path */
	common_afile a, b;
	assert_int_equal(common_afile_open(&a, path, false, &err), WT_OK);
	assert_int_equal(common_afile_write(&a, "AAAA", 4, &err), WT_OK);
	assert_int_equal(common_afile_open(&b, path, false, &err), WT_EBUSY);
	printf("second writer: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "in progress"));
	assert_int_equal(common_afile_write(&a, "\n", 1, &err), WT_OK);
	assert_int_equal(common_afile_commit(&a, &err), WT_OK);
	expect_file(path, "AAAA\n");
	free(left);
	free(victim);
	free(tmp);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole_file),
	    cmocka_unit_test(test_streaming),
	    cmocka_unit_test(test_temp_name_taken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
