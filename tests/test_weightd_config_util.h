/* test_weightd_config_util.h — the temp folder and config-file writer that
 * tests/test_weightd_config.c and tests/test_weightd_config_hostile.c share
 * (include after cmocka.h). */
#ifndef WT_TEST_WEIGHTD_CONFIG_UTIL_H
#define WT_TEST_WEIGHTD_CONFIG_UTIL_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[] = "/tmp/wdcfgXXXXXX";

static __attribute__((unused)) int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static __attribute__((unused)) int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write text to tmpdir/name; returns the path (static buffer). */
static __attribute__((unused)) const char *write_conf(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#endif
