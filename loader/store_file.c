/*
 * store_file.c — the file:// backend (and plain paths): a local folder as an
 * object store. Keys map to files below the root; version = mtime in ns.
 *
 * Every access resolves the path with realpath() and refuses targets outside
 * the (resolved) root, so a symlink cannot leak files from elsewhere. Reads
 * are pread() on a per-call descriptor: no shared state, any thread.
 * Listing does not descend into symlinked directories.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "loader/store_int.h"

#define FILE_MAX_DEPTH 32

typedef struct file_store {
	char *root; /* realpath of the root, no trailing '/'; immutable */
	size_t root_len;
} file_store;

static int errno_code(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return WT_ENOTFOUND;
	case EACCES:
	case EPERM:
		return WT_EPERM;
	case ENOMEM:
		return WT_ENOMEM;
	default:
		return WT_EIO;
	}
}

/* Resolve root/key; refuse anything outside the root. *out is malloc'd. */
static int resolve(const file_store *fs, const char *key, char **out, wt_errbuf *err)
{
	*out = NULL;
	size_t n = fs->root_len + 1 + strlen(key) + 1;
	char *joined = malloc(n);
	if (joined == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	snprintf(joined, n, "%s/%s", fs->root, key);
	char *real = realpath(joined, NULL);
	int e = errno;
	free(joined);
	if (real == NULL)
		return wt_seterr(err, errno_code(e), "key '%s' in '%s': %s", key, fs->root,
		                 strerror(e));
	if (strncmp(real, fs->root, fs->root_len) != 0 ||
	    (real[fs->root_len] != '/' && fs->root_len > 1)) {
		wt_seterr(err, WT_EPERM,
		          "key '%s': resolves to '%s', outside the store root '%s' (symlink?); "
		          "refused — copy the file into the folder",
		          key, real, fs->root);
		free(real);
		return WT_EPERM;
	}
	*out = real;
	return WT_OK;
}

static int fill_obj(const char *key, const struct stat *st, store_obj *o, wt_errbuf *err)
{
	char ver[32];
	uint64_t ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
	snprintf(ver, sizeof(ver), "%llu", (unsigned long long)ns);
	o->key = strdup(key);
	o->version = strdup(ver);
	o->nbytes = (uint64_t)st->st_size;
	if (o->key == NULL || o->version == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	return WT_OK;
}

static int file_stat(void *impl, const char *key, store_obj *out, wt_errbuf *err)
{
	file_store *fs = impl;
	char *path;
	int rv = resolve(fs, key, &path, err);
	if (rv != WT_OK)
		return rv;
	struct stat st;
	if (stat(path, &st) != 0) {
		int e = errno;
		free(path);
		return wt_seterr(err, errno_code(e), "key '%s': %s", key, strerror(e));
	}
	free(path);
	if (!S_ISREG(st.st_mode))
		return wt_seterr(err, WT_ENOTFOUND, "key '%s': not a regular file", key);
	return fill_obj(key, &st, out, err);
}

static int file_read(void *impl, const char *key, uint64_t off, void *buf, size_t len, size_t *got,
                     wt_errbuf *err)
{
	file_store *fs = impl;
	*got = 0;
	char *path;
	int rv = resolve(fs, key, &path, err);
	if (rv != WT_OK)
		return rv;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int e = errno;
	free(path);
	if (fd < 0)
		return wt_seterr(err, errno_code(e), "key '%s': open: %s", key, strerror(e));
	size_t done = 0;
	while (done < len) {
		ssize_t k = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			e = errno;
			close(fd);
			return wt_seterr(err, WT_EIO, "key '%s': read at %llu: %s", key,
			                 (unsigned long long)(off + done), strerror(e));
		}
		if (k == 0)
			break;
		done += (size_t)k;
	}
	close(fd);
	*got = done;
	return WT_OK;
}

typedef struct walk {
	file_store *fs;
	store_list *out;
	size_t cap;
	wt_errbuf *err;
} walk;

static int walk_add(walk *w, const char *key, const struct stat *st)
{
	if (w->out->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 64;
		store_obj *o = realloc(w->out->objs, ncap * sizeof(*o));
		if (o == NULL)
			return wt_seterr(w->err, WT_ENOMEM, "out of memory listing '%s'",
			                 w->fs->root);
		w->out->objs = o;
		w->cap = ncap;
	}
	store_obj *o = &w->out->objs[w->out->n];
	memset(o, 0, sizeof(*o));
	w->out->n++;
	return fill_obj(key, st, o, w->err);
}

/* rel: key of the directory ("" = root). */
static int walk_dir(walk *w, const char *rel, int depth)
{
	if (depth > FILE_MAX_DEPTH)
		return wt_seterr(w->err, WT_ETOOBIG, "'%s/%s': more than %d directory levels",
		                 w->fs->root, rel, FILE_MAX_DEPTH);
	size_t n = w->fs->root_len + strlen(rel) + 2;
	char *dpath = malloc(n);
	if (dpath == NULL)
		return wt_seterr(w->err, WT_ENOMEM, "out of memory");
	snprintf(dpath, n, "%s%s%s", w->fs->root, rel[0] ? "/" : "", rel);
	DIR *d = opendir(dpath);
	int e = errno;
	free(dpath);
	if (d == NULL)
		return wt_seterr(w->err, errno_code(e), "listing '%s/%s': %s", w->fs->root, rel,
		                 strerror(e));
	int rv = WT_OK;
	struct dirent *de;
	while (rv == WT_OK && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		size_t kn = strlen(rel) + strlen(de->d_name) + 2;
		char *key = malloc(kn);
		if (key == NULL) {
			rv = wt_seterr(w->err, WT_ENOMEM, "out of memory");
			break;
		}
		snprintf(key, kn, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
		struct stat lst, st;
		if (fstatat(dirfd(d), de->d_name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
			e = errno;
			rv = wt_seterr(w->err, errno_code(e), "listing key '%s': %s", key,
			               strerror(e));
		} else if (S_ISDIR(lst.st_mode)) {
			rv = walk_dir(w, key, depth + 1);
		} else if (S_ISREG(lst.st_mode)) {
			rv = walk_add(w, key, &lst);
		} else if (S_ISLNK(lst.st_mode)) {
			char *real = NULL;
			rv = resolve(w->fs, key, &real, w->err);
			if (rv == WT_OK && stat(real, &st) != 0) {
				e = errno;
				rv = wt_seterr(w->err, errno_code(e), "listing key '%s': %s", key,
				               strerror(e));
			}
			if (rv == WT_OK && S_ISREG(st.st_mode))
				rv = walk_add(w, key, &st);
			free(real);
		}
		free(key);
	}
	closedir(d);
	return rv;
}

static int file_list(void *impl, const char *prefix, store_list *out, wt_errbuf *err)
{
	(void)prefix; /* the generic layer filters */
	walk w = {.fs = impl, .out = out, .err = err};
	return walk_dir(&w, "", 0);
}

static void file_close(void *impl)
{
	file_store *fs = impl;
	if (fs == NULL)
		return;
	free(fs->root);
	free(fs);
}

static const store_ops file_ops = {
    .list = file_list,
    .stat = file_stat,
    .read = file_read,
    .close = file_close,
};

int store_file_open(const char *path, const store_ops **ops, void **impl, wt_errbuf *err)
{
	if (path[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "file store: empty path");
	char *real = realpath(path, NULL);
	if (real == NULL) {
		int e = errno;
		return wt_seterr(err, errno_code(e), "store root '%s': %s", path, strerror(e));
	}
	struct stat st;
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		wt_seterr(err, WT_EINVAL, "store root '%s' is not a directory; give a model folder",
		          path);
		free(real);
		return WT_EINVAL;
	}
	file_store *fs = calloc(1, sizeof(*fs));
	if (fs == NULL) {
		free(real);
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	}
	fs->root = real;
	fs->root_len = strlen(real);
	*ops = &file_ops;
	*impl = fs;
	return WT_OK;
}
