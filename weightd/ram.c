/*
 * ram.c — how much RAM this process may use: the machine's, or its cgroup's
 * memory limit (or an ancestor's) when that is lower (a container, a pod, a
 * systemd MemoryMax=). weightd refuses a writeback_prefault_bytes above half
 * of it (server.c): prefaulted memory is touched at once.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "weightd/server_int.h"

/* A memory limit in bytes from a cgroup file (v2 "max" or v1's huge number:
 * none), or 0. */
static uint64_t cgroup_limit(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1) /* "max": no limit */
		v = 0;
	fclose(f);
	return (uint64_t)v;
}

/* The lowest memory limit of the cgroup at rel (as /proc/self/cgroup names
 * it, "/a/b") under root and of its ancestors up to root; ram if none lower. */
static uint64_t cgroup_min(const char *root, const char *rel, const char *file, uint64_t ram)
{
	char dir[512];
	if (rel[0] != '/' || strstr(rel, "/..") != NULL ||
	    snprintf(dir, sizeof(dir), "%s%s", root, rel) >= (int)sizeof(dir))
		return ram;
	for (;;) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		uint64_t l = cgroup_limit(path);
		if (l > 0 && (ram == 0 || l < ram))
			ram = l;
		char *slash = strrchr(dir, '/');
		if (slash == NULL || (size_t)(slash - dir) < strlen(root))
			return ram;
		*slash = '\0';
	}
}

uint64_t wd_phys_ram(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

uint64_t wd_usable_ram(const char *proc_cgroup, const char *sys_cgroup, uint64_t ram)
{
	char v1root[512];
	snprintf(v1root, sizeof(v1root), "%s/memory", sys_cgroup);
	FILE *f = fopen(proc_cgroup, "r");
	char line[600];
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 == NULL)
			continue;
		*c1 = '\0'; /* line: the hierarchy id */
		*c2 = '\0';
		const char *ctrl = c1 + 1, *rel = c2 + 1;
		if (strcmp(line, "0") == 0 && ctrl[0] == '\0')
			ram = cgroup_min(sys_cgroup, rel, "memory.max", ram);
		else if (strstr(ctrl, "memory") != NULL)
			ram = cgroup_min(v1root, rel, "memory.limit_in_bytes", ram);
	}
	if (f != NULL)
		fclose(f);
	return ram;
}
