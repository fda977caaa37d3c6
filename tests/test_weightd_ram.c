/*
 * test_weightd_ram.c — the RAM weightd may use (weightd/ram.c), on made-up
 * /proc/self/cgroup files and cgroup trees: the lowest limit of the
 * process's own cgroup and its ancestors up to the root, cgroup v2 and v1,
 * and every file that says nothing useful ("max", garbage, missing, a path
 * with "/..", one too long) is no limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "tests/util/testutil.h"
#include "weightd/server_int.h"

#define GiB  (1ull << 30)
#define PHYS (64 * GiB)

typedef struct tree {
	char *root; /* temp dir */
	char *proc; /* root/cgroup: the made-up /proc/self/cgroup */
	char *sys;  /* root/sys: the made-up /sys/fs/cgroup */
} tree;

static void mkdirs(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0700);
			*p = '/';
		}
	mkdir(buf, 0700);
}

/* Write text to root/sys/rel/file (folders made). */
static void put(const tree *t, const char *rel, const char *file, const char *text)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s%s", t->sys, rel);
	mkdirs(dir);
	assert_int_equal(tu_write_file(dir, file, text, strlen(text)), 0);
}

static void cgroup_is(const tree *t, const char *text)
{
	assert_int_equal(tu_write_file(t->root, "cgroup", text, strlen(text)), 0);
}

static tree tree_new(void)
{
	tree t;
	t.root = tu_mkdtemp("wd-ram");
	t.proc = tu_path(t.root, "cgroup");
	t.sys = tu_path(t.root, "sys");
	mkdirs(t.sys);
	return t;
}

static void tree_free(tree *t)
{
	tu_rmrf(t->root);
	free(t->root);
	free(t->proc);
	free(t->sys);
}

static uint64_t ram(const tree *t, uint64_t phys)
{
	uint64_t r = wd_usable_ram(t->proc, t->sys, phys);
	printf("usable: %llu bytes\n", (unsigned long long)r);
	return r;
}

/* cgroup v2: the lowest memory.max on the way up wins; "max" is none. */
static void test_v2(void **state)
{
	(void)state;
	tree t = tree_new();
	cgroup_is(&t, "0::/a/b\n");
	put(&t, "/a/b", "memory.max", "max\n");
	put(&t, "/a", "memory.max", "1073741824\n");
	assert_int_equal(ram(&t, PHYS), GiB); /* an ancestor's limit */
	put(&t, "/a/b", "memory.max", "536870912\n");
	assert_int_equal(ram(&t, PHYS), GiB / 2); /* its own, lower */
	put(&t, "/a/b", "memory.max", "137438953472\n");
	put(&t, "/a", "memory.max", "max\n");
	assert_int_equal(ram(&t, PHYS), PHYS);   /* above the machine's: the machine's */
	assert_int_equal(ram(&t, 0), 128 * GiB); /* machine unknown: the limit */
	cgroup_is(&t, "0::/\n");                 /* the root cgroup: its own file only */
	put(&t, "", "memory.max", "4096\n");
	assert_int_equal(ram(&t, PHYS), 4096);
	tree_free(&t);
}

/* cgroup v1: the memory controller's line, under sys/memory. */
static void test_v1(void **state)
{
	(void)state;
	tree t = tree_new();
	cgroup_is(&t, "12:cpu,cpuacct:/x\n5:memory:/p/q\n1:name=systemd:/p/q\n");
	put(&t, "/x", "memory.max", "4096\n"); /* not the memory controller's */
	put(&t, "/memory/p/q", "memory.limit_in_bytes", "9223372036854771712\n");
	put(&t, "/memory", "memory.limit_in_bytes", "9223372036854771712\n");
	assert_int_equal(ram(&t, PHYS), PHYS); /* v1's "no limit" */
	put(&t, "/memory/p", "memory.limit_in_bytes", "2147483648\n");
	assert_int_equal(ram(&t, PHYS), 2 * GiB);
	tree_free(&t);
}

/* Nothing useful: no limit, never an error. */
static void test_nothing(void **state)
{
	(void)state;
	tree t = tree_new();
	assert_int_equal(ram(&t, PHYS), PHYS); /* no /proc file */
	put(&t, "", "memory.max", "4096\n");
	cgroup_is(&t, "0::/../..\n"); /* out of the tree: ignored */
	assert_int_equal(ram(&t, PHYS), PHYS);
	cgroup_is(&t, "garbage\n0:x\n::\n");
	assert_int_equal(ram(&t, PHYS), PHYS);
	char line[800] = "0::/";
	memset(line + 4, 'a', 700);
	line[704] = '\n';
	line[705] = '\0';
	cgroup_is(&t, line); /* too long for the path: ignored */
	assert_int_equal(ram(&t, PHYS), PHYS);
	cgroup_is(&t, "0::/g\n");
	put(&t, "/g", "memory.max", "lots\n");
	put(&t, "", "memory.max", "max\n");
	assert_int_equal(ram(&t, PHYS), PHYS);
	put(&t, "/g", "memory.max", "");
	assert_int_equal(ram(&t, PHYS), PHYS);
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v2),
	    cmocka_unit_test(test_v1),
	    cmocka_unit_test(test_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
