/*
 * replay.c — main() for the fuzz targets without libFuzzer: run the target
 * once over every regular file named on the command line or found (not
 * recursively) in a folder named there. Files are taken in name order so a
 * failure names the same input on every run.
 *
 *   build/tests/fuzz/fuzz_safetensors tests/fuzz/corpus/fuzz_safetensors
 *
 * Exit 0 when every input ran (a crash or sanitizer report ends the process
 * first, after the "replay: FILE" line that names the input), 2 on a usage or
 * I/O error, 1 when no input was found (an empty corpus tests nothing).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return 2;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	int bad = buf == NULL || ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		fprintf(stderr, "replay: %s: cannot read\n", path);
		return 2;
	}
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	/* an exact-size copy, so ASan sees a read past the input */
	uint8_t *exact = malloc(len ? len : 1);
	if (exact == NULL) {
		free(buf);
		return 2;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *n_run)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rv = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (nn == NULL) {
				rv = 2;
				break;
			}
			names = nn;
		}
		size_t pl = strlen(dir) + strlen(de->d_name) + 2;
		if ((names[n] = malloc(pl)) == NULL) {
			rv = 2;
			break;
		}
		snprintf(names[n], pl, "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (rv == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			rv = run_file(names[i]);
			(*n_run)++;
		}
		free(names[i]);
	}
	free(names);
	return rv;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	size_t n_run = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 2;
		}
		int rv;
		if (S_ISDIR(st.st_mode))
			rv = run_dir(argv[i], &n_run);
		else {
			rv = run_file(argv[i]);
			n_run++;
		}
		if (rv != 0)
			return rv;
	}
	if (n_run == 0) {
		fprintf(stderr, "replay: no input found\n");
		return 1;
	}
	fprintf(stderr, "replay: %zu inputs ok\n", n_run);
	return 0;
}
