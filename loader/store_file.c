/*
 * store_file.c — the file:// backend (and plain paths): a local folder as an
 * object store. Keys map to files below the root.
 *
 * Race-free resolution. Every object is opened by walking its path one
 * component at a time from a directory handle held since the store was
 * opened (openat with O_NOFOLLOW at each step), so what is read is what was
 * checked: swapping a file or folder for a symlink between a check and the
 * open cannot redirect the read. Symlinks met on the way are followed by
 * this walk, not by the kernel, and only while they stay inside the jail:
 *   - the store root itself, or
 *   - for a root inside a Hugging Face cache (".../models--ORG--NAME/snapshots/REV"),
 *     the models--ORG--NAME folder, so snapshot links into ../../blobs/ work.
 * An absolute link, or a ".." that would leave the jail, is WT_EPERM.
 *
 * Versions: "MTIME.CTIME.DEV.INO" (mtime and ctime in ns, dev in hex, inode).
 * ctime changes on every write and on any utimes() call, so a same-size
 * rewrite that puts the mtime back still gets a new version; a pin returns
 * only once the clock that stamps ctimes has left the tick of the file's
 * ctime (settle_ctime), so that holds for a write in the pin's tick too. A pin keeps the
 * file open: reads see the opened inode even if the name is replaced, and
 * pin_stat (fstat) reports an in-place write (and, once the file is
 * unlinked, an unsure ctime that store_pin_check settles by content).
 *
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
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "loader/store_int.h"

#define FILE_MAX_DEPTH 32 /* directory levels below the jail */
#define FILE_MAX_LINKS 40 /* symlinks followed in one resolution (the kernel's limit) */
#define HF_MODEL_DIR   "models--"

typedef struct file_store {
	char *root; /* realpath of the root, no trailing '/'; immutable */
	size_t root_len;
	char *jail;     /* the folder nothing may resolve outside of; immutable */
	char *root_rel; /* the root relative to the jail ("" when they are the same) */
	int jail_fd;    /* O_PATH handle on the jail, held while the store is open */
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

/* ---------------- race-free resolution ---------------- */

/* The walk's state: a stack of open directories from the jail down. */
typedef struct walker {
	const file_store *fs;
	const char *key; /* for messages */
	int fds[FILE_MAX_DEPTH + 1];
	int depth; /* fds[0] is fs->jail_fd (not ours to close) */
	int links;
	wt_errbuf *err;
} walker;

static void walker_pop_all(walker *w)
{
	while (w->depth > 0)
		close(w->fds[w->depth--]);
}

static int walk_escape(walker *w, const char *why)
{
	return wt_seterr(w->err, WT_EPERM,
	                 "key '%s' in '%s': %s outside the store root '%s'; refused — copy the "
	                 "file into the folder",
	                 w->key, w->fs->root, why, w->fs->jail);
}

/* Follow the symlink `name` in the current directory: the new path to walk is
 * its target followed by rest. *path is replaced (malloc'd). */
static int walk_link(walker *w, const char *name, const char *rest, char **path)
{
	if (++w->links > FILE_MAX_LINKS)
		return wt_seterr(w->err, WT_EINVAL, "key '%s': more than %d symlinks", w->key,
		                 FILE_MAX_LINKS);
	char target[PATH_MAX];
	ssize_t n = readlinkat(w->fds[w->depth], name, target, sizeof(target) - 1);
	if (n < 0) {
		int e = errno;
		return wt_seterr(w->err, errno_code(e), "key '%s': readlink '%s': %s", w->key, name,
		                 strerror(e));
	}
	target[n] = '\0';
	if (target[0] == '/')
		return walk_escape(w, "an absolute symlink points");
	size_t len = (size_t)n + 1 + strlen(rest) + 1;
	char *np = malloc(len);
	if (np == NULL)
		return wt_seterr(w->err, WT_ENOMEM, "key '%s': out of memory", w->key);
	snprintf(np, len, "%s%s%s", target, rest[0] ? "/" : "", rest);
	free(*path);
	*path = np;
	return WT_OK;
}

/* Step into directory `name` (no symlink: O_NOFOLLOW). */
static int walk_into(walker *w, const char *name)
{
	if (w->depth == FILE_MAX_DEPTH)
		return wt_seterr(w->err, WT_ETOOBIG, "key '%s': more than %d directory levels",
		                 w->key, FILE_MAX_DEPTH);
	int fd = openat(w->fds[w->depth], name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == ENOTDIR)
			return wt_seterr(w->err, WT_ECHANGED,
			                 "key '%s': '%s' changed into a symlink or file while it "
			                 "was opened",
			                 w->key, name);
		return wt_seterr(w->err, errno_code(e), "key '%s': '%s': %s", w->key, name,
		                 strerror(e));
	}
	w->fds[++w->depth] = fd;
	return WT_OK;
}

/*
 * Resolve root_rel/key beneath the jail and open the final component with
 * final_flags | O_NOFOLLOW (O_RDONLY for files, O_RDONLY | O_DIRECTORY for
 * folders). *fd is ours to close.
 */
static int open_beneath(const file_store *fs, const char *key, int final_flags, int *fd,
                        wt_errbuf *err)
{
	*fd = -1;
	walker w = {.fs = fs, .key = key, .err = err};
	w.fds[0] = fs->jail_fd;
	size_t n = strlen(fs->root_rel) + 1 + strlen(key) + 1;
	char *path = malloc(n);
	if (path == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	snprintf(path, n, "%s%s%s", fs->root_rel, fs->root_rel[0] && key[0] ? "/" : "", key);
	int rv = WT_OK;
	char *p = path; /* the unwalked rest of path */
	char name[NAME_MAX + 1];
	while (rv == WT_OK) {
		while (*p == '/')
			p++;
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		const char *rest = slash ? slash + 1 : "";
		while (*rest == '/')
			rest++;
		bool last = rest[0] == '\0';
		if (len > NAME_MAX) {
			rv = wt_seterr(err, WT_EINVAL, "key '%s': a path component is too long",
			               key);
			break;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		if (len == 0 || strcmp(name, ".") == 0) {
			if (last) { /* the folder itself (root_rel "" and key "") */
				int dfd = openat(w.fds[w.depth], ".", final_flags | O_CLOEXEC);
				if (dfd < 0)
					rv = wt_seterr(err, errno_code(errno), "'%s': %s", fs->root,
					               strerror(errno));
				*fd = dfd;
				break;
			}
			p = (char *)rest;
			continue;
		}
		if (strcmp(name, "..") == 0) {
			if (w.depth == 0) {
				rv = walk_escape(&w, "'..' resolves");
				break;
			}
			close(w.fds[w.depth--]);
			p = (char *)rest;
			if (last) {
				rv = wt_seterr(err, WT_EINVAL, "key '%s' names a folder", key);
				break;
			}
			continue;
		}
		struct stat lst;
		if (fstatat(w.fds[w.depth], name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
			int e = errno;
			rv = wt_seterr(err, errno_code(e), "key '%s' in '%s': %s", key, fs->root,
			               strerror(e));
			break;
		}
		if (S_ISLNK(lst.st_mode)) {
			char *restcopy = strdup(rest);
			if (restcopy == NULL) {
				rv = wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
				break;
			}
			rv = walk_link(&w, name, restcopy, &path);
			free(restcopy);
			p = path;
			continue;
		}
		if (!last) {
			rv = walk_into(&w, name);
			p = (char *)rest;
			continue;
		}
		int ffd = openat(w.fds[w.depth], name, final_flags | O_NOFOLLOW | O_CLOEXEC);
		if (ffd < 0) {
			int e = errno;
			rv = e == ELOOP
			         ? wt_seterr(err, WT_ECHANGED,
			                     "key '%s': changed into a symlink while it was "
			                     "opened",
			                     key)
			         : wt_seterr(err, errno_code(e), "key '%s' in '%s': open: %s", key,
			                     fs->root, strerror(e));
			break;
		}
		*fd = ffd;
		break;
	}
	walker_pop_all(&w);
	free(path);
	return rv;
}

/* Open key as a regular file (race-free); *st is what was opened. */
static int open_file(const file_store *fs, const char *key, int *fd, struct stat *st,
                     wt_errbuf *err)
{
	int rv = open_beneath(fs, key, O_RDONLY | O_NONBLOCK, fd, err);
	if (rv != WT_OK)
		return rv;
	if (fstat(*fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(*fd);
		*fd = -1;
		return wt_seterr(err, WT_ENOTFOUND, "key '%s': not a regular file", key);
	}
	return WT_OK;
}

/* ---------------- objects ---------------- */

static int fill_obj(const char *key, const struct stat *st, store_obj *o, wt_errbuf *err)
{
	char ver[96];
	uint64_t mns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
	uint64_t cns = (uint64_t)st->st_ctim.tv_sec * 1000000000ull + (uint64_t)st->st_ctim.tv_nsec;
	snprintf(ver, sizeof(ver), "%llu.%llu.%llx.%llu", (unsigned long long)mns,
	         (unsigned long long)cns, (unsigned long long)st->st_dev,
	         (unsigned long long)st->st_ino);
	o->key = strdup(key);
	o->version = strdup(ver);
	o->nbytes = (uint64_t)st->st_size;
	if (o->key == NULL || o->version == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	return WT_OK;
}

static int file_stat(void *impl, const char *key, store_obj *out, wt_errbuf *err)
{
	int fd;
	struct stat st;
	int rv = open_file(impl, key, &fd, &st, err);
	if (rv != WT_OK)
		return rv;
	close(fd);
	return fill_obj(key, &st, out, err);
}

static int pread_all(int fd, const char *key, uint64_t off, void *buf, size_t len, size_t *got,
                     wt_errbuf *err)
{
	size_t done = 0;
	*got = 0;
	while (done < len) {
		ssize_t k = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return wt_seterr(err, WT_EIO, "key '%s': read at %llu: %s", key,
			                 (unsigned long long)(off + done), strerror(errno));
		if (k == 0)
			break;
		done += (size_t)k;
	}
	*got = done;
	return WT_OK;
}

static int file_read(void *impl, const char *key, const char *version, uint64_t off, void *buf,
                     size_t len, size_t *got, wt_errbuf *err)
{
	*got = 0;
	int fd;
	struct stat st;
	int rv = open_file(impl, key, &fd, &st, err);
	if (rv != WT_OK)
		return rv;
	if (version != NULL) {
		store_obj o = {0};
		rv = fill_obj(key, &st, &o, err);
		if (rv == WT_OK && strcmp(o.version, version) != 0)
			rv = wt_seterr(err, WT_ECHANGED, "key '%s': version '%s', not '%s'", key,
			               o.version, version);
		store_obj_clear(&o);
	}
	if (rv == WT_OK)
		rv = pread_all(fd, key, off, buf, len, got, err);
	close(fd);
	return rv;
}

/* ---------------- pins: an open descriptor ---------------- */

typedef struct file_pin {
	int fd;
	struct stat st; /* at pin time */
} file_pin;

static int64_t ts_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/*
 * Return once the coarse clock has passed the pinned file's ctime. Kernels
 * without fine-grained file timestamps (before Linux 6.13, Debian 12's 6.1
 * among them) stamp a write's ctime with that clock, one tick (1-10 ms) at a
 * time: a same-size write in the tick of the pin, its mtime put back, would
 * keep the version, so neither the checks nor the digest memo could tell
 * it from the bytes pinned. A file last changed in the current tick waits
 * for the next one (and is looked at again: a write meanwhile is what gets
 * pinned); one still changing after FILE_SETTLE_TICKS ticks is WT_ECHANGED.
 * A ctime more than a second ahead (the clock was set back) is taken as it is.
 */
#define FILE_SETTLE_TICKS 8
static int settle_ctime(file_pin *p, const char *key, wt_errbuf *err)
{
	struct timespec res = {0, 0};
	if (clock_getres(CLOCK_REALTIME_COARSE, &res) != 0 || ts_ns(res) <= 0)
		res.tv_nsec = 10000000;
	for (int i = 0;; i++) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		int64_t ahead = ts_ns(p->st.st_ctim) - ts_ns(now);
		if (ahead < 0 || ahead > 1000000000)
			return WT_OK;
		if (i == FILE_SETTLE_TICKS)
			return wt_seterr(
			    err, WT_ECHANGED,
			    "key '%s': still being written (changed in each of %d clock "
			    "ticks while it was opened); it is read once the write has "
			    "finished",
			    key, FILE_SETTLE_TICKS);
		struct timespec d = {0, ahead + ts_ns(res) + 100000};
		if (d.tv_nsec >= 1000000000) {
			d.tv_sec = d.tv_nsec / 1000000000;
			d.tv_nsec %= 1000000000;
		}
		nanosleep(&d, NULL);
		if (fstat(p->fd, &p->st) != 0)
			return wt_seterr(err, WT_EIO, "key '%s': fstat: %s", key, strerror(errno));
	}
}

static int file_pin_open(void *impl, const char *key, void **h, store_obj *out, wt_errbuf *err)
{
	*h = NULL;
	file_pin *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	int rv = open_file(impl, key, &p->fd, &p->st, err);
	if (rv == WT_OK)
		rv = settle_ctime(p, key, err);
	if (rv == WT_OK)
		rv = fill_obj(key, &p->st, out, err);
	if (rv != WT_OK) {
		if (p->fd >= 0)
			close(p->fd);
		free(p);
		return rv;
	}
	*h = p;
	return WT_OK;
}

static int file_pin_read(void *h, const char *key, uint64_t off, void *buf, size_t len, size_t *got,
                         wt_errbuf *err)
{
	return pread_all(((file_pin *)h)->fd, key, off, buf, len, got, err);
}

/*
 * The pinned file's version now. Renaming another file over the name unlinks
 * the pinned one, which moves its ctime although its bytes stay as they were;
 * but a same-size write that put the mtime back, then an unlink, moves it
 * the same way. So an unlinked file with its size and mtime unchanged and its
 * ctime moved is *unsure: store.c compares its bytes with their digest.
 */
static int file_pin_stat(void *h, const char *key, store_obj *out, bool *unsure, wt_errbuf *err)
{
	file_pin *p = h;
	struct stat st;
	if (fstat(p->fd, &st) != 0)
		return wt_seterr(err, WT_EIO, "key '%s': fstat: %s", key, strerror(errno));
	*unsure = st.st_nlink == 0 && st.st_size == p->st.st_size &&
	          st.st_mtim.tv_sec == p->st.st_mtim.tv_sec &&
	          st.st_mtim.tv_nsec == p->st.st_mtim.tv_nsec &&
	          (st.st_ctim.tv_sec != p->st.st_ctim.tv_sec ||
	           st.st_ctim.tv_nsec != p->st.st_ctim.tv_nsec);
	return fill_obj(key, &st, out, err);
}

static void file_unpin(void *h)
{
	file_pin *p = h;
	if (p == NULL)
		return;
	close(p->fd);
	free(p);
}

/* ---------------- listing ---------------- */

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

/* A symlink entry: listed when it resolves (inside the jail) to a regular file. */
static int walk_link_entry(walk *w, const char *key)
{
	int fd;
	struct stat st;
	int rv = open_file(w->fs, key, &fd, &st, w->err);
	if (rv != WT_OK)
		return rv;
	close(fd);
	return walk_add(w, key, &st);
}

/* dfd: the open directory of key `rel` ("" = root); consumed. */
static int walk_dir(walk *w, int dfd, const char *rel, int depth)
{
	if (depth > FILE_MAX_DEPTH) {
		close(dfd);
		return wt_seterr(w->err, WT_ETOOBIG, "'%s/%s': more than %d directory levels",
		                 w->fs->root, rel, FILE_MAX_DEPTH);
	}
	DIR *d = fdopendir(dfd);
	if (d == NULL) {
		int e = errno;
		close(dfd);
		return wt_seterr(w->err, errno_code(e), "listing '%s/%s': %s", w->fs->root, rel,
		                 strerror(e));
	}
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
		struct stat lst;
		if (fstatat(dirfd(d), de->d_name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
			int e = errno;
			rv = wt_seterr(w->err, errno_code(e), "listing key '%s': %s", key,
			               strerror(e));
		} else if (S_ISDIR(lst.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				rv = wt_seterr(w->err, errno_code(errno), "listing '%s': %s", key,
				               strerror(errno));
			else
				rv = walk_dir(w, sub, key, depth + 1);
		} else if (S_ISREG(lst.st_mode)) {
			rv = walk_add(w, key, &lst);
		} else if (S_ISLNK(lst.st_mode)) {
			rv = walk_link_entry(w, key);
		}
		free(key);
	}
	closedir(d);
	return rv;
}

static int file_list(void *impl, const char *prefix, store_list *out, wt_errbuf *err)
{
	(void)prefix; /* the generic layer filters */
	file_store *fs = impl;
	walk w = {.fs = fs, .out = out, .err = err};
	int dfd;
	int rv = open_beneath(fs, "", O_RDONLY | O_DIRECTORY, &dfd, err);
	if (rv != WT_OK)
		return rv;
	return walk_dir(&w, dfd, "", 0);
}

static void file_close(void *impl)
{
	file_store *fs = impl;
	if (fs == NULL)
		return;
	if (fs->jail_fd >= 0)
		close(fs->jail_fd);
	free(fs->root);
	free(fs->jail);
	free(fs->root_rel);
	free(fs);
}

/* store_local_root: the jail's directory handle as the kernel names it, and
 * root_rel below it (walked under the jail's rules on every open). */
static int file_local_root(void *impl, char **out, wt_errbuf *err)
{
	const file_store *fs = impl;
	char link[64], at[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fs->jail_fd);
	ssize_t n = readlink(link, at, sizeof(at) - 1);
	if (n < 0)
		return wt_seterr(err, errno_code(errno), "store root '%s': where is it open? %s",
		                 fs->jail, strerror(errno));
	at[n] = '\0';
	size_t len = (size_t)n + 1 + strlen(fs->root_rel) + 1;
	if ((*out = malloc(len)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	snprintf(*out, len, "%s%s%s", at, fs->root_rel[0] ? "/" : "", fs->root_rel);
	return WT_OK;
}

static const store_ops file_ops = {
    .list = file_list,
    .stat = file_stat,
    .read = file_read,
    .close = file_close,
    .pin = file_pin_open,
    .pin_read = file_pin_read,
    .pin_stat = file_pin_stat,
    .unpin = file_unpin,
    .local_root = file_local_root,
};

/* The jail of root: its nearest "models--*" ancestor (a Hugging Face cache
 * model folder) if it has one, else root itself. */
static int set_jail(file_store *fs, wt_errbuf *err)
{
	const char *root = fs->root;
	size_t jail_len = fs->root_len;
	const char *p = root;
	while ((p = strstr(p, "/" HF_MODEL_DIR)) != NULL) {
		const char *end = strchr(p + 1, '/');
		size_t n = end ? (size_t)(end - root) : fs->root_len;
		if (end != NULL) /* an ancestor strictly above the root */
			jail_len = n;
		p++;
	}
	fs->jail = strndup(root, jail_len);
	fs->root_rel = strdup(jail_len < fs->root_len ? root + jail_len + 1 : "");
	if (fs->jail == NULL || fs->root_rel == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	fs->jail_fd = open(fs->jail, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->jail_fd < 0)
		return wt_seterr(err, errno_code(errno), "store root '%s': %s", fs->jail,
		                 strerror(errno));
	return WT_OK;
}

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
	fs->jail_fd = -1;
	fs->root = real;
	fs->root_len = strlen(real);
	int rv = set_jail(fs, err);
	if (rv != WT_OK) {
		file_close(fs);
		return rv;
	}
	*ops = &file_ops;
	*impl = fs;
	return WT_OK;
}
