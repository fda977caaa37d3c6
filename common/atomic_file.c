/*
 * atomic_file.c — write a file so that readers see the old bytes or all the
 * new ones, never a part: the bytes go to "<path>.tmp.<pid>" in the same
 * folder, which is renamed over path once complete. A durable write also
 * fsyncs the file before the rename and the folder after it, so the new
 * file survives a power cut once the call returns. On any failure the temp
 * file is unlinked and path is untouched.
 *
 * The temp name is predictable, so it is created with O_EXCL (never through
 * a symlink planted there: a pid file in /tmp written by root would have
 * truncated the link's target) and locked (flock) while the write lasts:
 * what is found there already is a write of the same path in progress in
 * this process (locked: WT_EBUSY, where two writers used to share one file
 * and commit each other's bytes), or a leftover of a crash or a planted link
 * or file, removed once. A second writer that looks in the instant between
 * the first one's create and its lock would take its file for a leftover;
 * only writers of one path in one process race so.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

static int io_fail(const char *what, const char *path, int e, wt_errbuf *err)
{
	return wt_seterr(err, e == ENOSPC ? WT_ENOSPC : WT_EIO,
	                 "'%s': %s failed: %s; check that the folder is writable and has space",
	                 path, what, strerror(e));
}

/* Create f->tmp for this write alone (see the top of the file). */
static int create_tmp(common_afile *f, wt_errbuf *err)
{
	for (int attempt = 0;; attempt++) {
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f->fd >= 0) {
			(void)flock(f->fd,
			            LOCK_EX | LOCK_NB); /* a new inode: nobody else holds it */
			return WT_OK;
		}
		if (errno != EEXIST || attempt > 0)
			return io_fail("create", f->tmp, errno, err);
		struct stat st;
		if (lstat(f->tmp, &st) != 0)
			continue; /* gone meanwhile */
		if (S_ISREG(st.st_mode)) {
			int fd = open(f->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			bool busy =
			    fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
			if (fd >= 0)
				close(fd);
			if (busy)
				return wt_seterr(
				    err, WT_EBUSY,
				    "'%s': another write of '%s' is in progress in this "
				    "process; wait for it to end, or write another path",
				    f->tmp, f->path);
		} else if (!S_ISLNK(st.st_mode)) {
			return wt_seterr(err, WT_EIO,
			                 "'%s': create failed: something that is not a file (a "
			                 "folder?) is in the way; remove it",
			                 f->tmp); /* not ours to remove */
		}
		if (unlink(f->tmp) != 0 && errno != ENOENT)
			return io_fail("remove the leftover", f->tmp, errno, err);
	}
}

bool common_afile_tmp_path(const char *path, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s.tmp.%ld", path, (long)getpid());
	return n >= 0 && (size_t)n < cap;
}

int common_afile_open(common_afile *f, const char *path, bool durable, wt_errbuf *err)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->durable = durable;
	if (!common_afile_tmp_path(path, f->tmp, sizeof(f->tmp)) || strlen(path) >= sizeof(f->path))
		return wt_seterr(err, WT_EINVAL, "'%s': path too long; use a shorter one", path);
	memcpy(f->path, path, strlen(path) + 1);
	return create_tmp(f, err);
}

/* len bytes at the file position (positional false) or at offset `at`. */
static int put(common_afile *f, const void *data, size_t len, bool positional, uint64_t at,
               wt_errbuf *err)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = positional ? pwrite(f->fd, p, len, (off_t)at) : write(f->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return io_fail("write", f->tmp, w < 0 ? errno : EIO, err);
		p += w;
		len -= (size_t)w;
		at += (uint64_t)w;
	}
	return WT_OK;
}

int common_afile_write(common_afile *f, const void *data, size_t len, wt_errbuf *err)
{
	return put(f, data, len, false, 0, err);
}

int common_afile_pwrite(common_afile *f, const void *data, size_t len, uint64_t at, wt_errbuf *err)
{
	return put(f, data, len, true, at, err);
}

int common_afile_write_cb(void *ctx, const void *data, size_t len)
{
	wt_errbuf e;
	return common_afile_write(ctx, data, len, &e);
}

void common_afile_abort(common_afile *f)
{
	if (f->fd < 0)
		return;
	close(f->fd);
	f->fd = -1;
	unlink(f->tmp);
}

/* fsync the folder holding path (the rename is durable once this returns). */
static int sync_folder(const char *path, wt_errbuf *err)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return io_fail("open folder", dir, errno, err);
	int rv = fsync(dfd) == 0 ? WT_OK : io_fail("fsync folder", dir, errno, err);
	close(dfd);
	return rv;
}

int common_afile_commit(common_afile *f, wt_errbuf *err)
{
	int rv = WT_OK;
	if (f->durable && fsync(f->fd) != 0)
		rv = io_fail("fsync", f->tmp, errno, err);
	if (rv == WT_OK) {
		int c = close(f->fd);
		f->fd = -1;
		if (c != 0)
			rv = io_fail("close", f->tmp, errno, err);
	}
	if (rv == WT_OK && rename(f->tmp, f->path) != 0)
		rv = io_fail("rename", f->tmp, errno, err);
	if (rv != WT_OK) {
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		unlink(f->tmp);
		return rv;
	}
	/* The new file is in place: from here on nothing may report failure, or
	 * the caller would undo in memory what the file already says. A folder
	 * fsync that fails leaves the rename perhaps not durable: logged. */
	wt_errbuf serr;
	if (f->durable && sync_folder(f->path, &serr) != WT_OK)
		WT_LOG(WT_LOG_WARNING,
		       "%s; '%s' is replaced, but a crash now may bring back the old one", serr.msg,
		       f->path);
	return WT_OK;
}

int common_write_file_atomic(const char *path, const void *data, size_t len, bool durable,
                             wt_errbuf *err)
{
	common_afile *f = malloc(sizeof(*f));
	if (f == NULL)
		return wt_seterr(err, WT_ENOMEM, "'%s': out of memory", path);
	int rv = common_afile_open(f, path, durable, err);
	if (rv == WT_OK && (rv = common_afile_write(f, data, len, err)) == WT_OK)
		rv = common_afile_commit(f, err);
	else
		common_afile_abort(f);
	free(f);
	return rv;
}
