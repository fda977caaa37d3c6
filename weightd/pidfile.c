/*
 * pidfile.c — the daemon's pid_file, held under an flock(2) for the daemon's
 * whole life: a second weightd given the same pid_file is refused at start
 * (it used to overwrite the running daemon's pid, then, when its own start
 * failed on the cache lock or the port, exit and leave its dead pid there for
 * `kill $(cat pid_file)` to miss or hit a reused pid). A file left by a daemon
 * that died (SIGKILL, power cut) holds no lock and is taken over.
 *
 * The file is opened O_NOFOLLOW (a symlink planted at the path is refused,
 * not followed to truncate what it names) and O_NONBLOCK (a FIFO is refused,
 * not waited on for a writer) and must be a regular file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "weightd/weightd.h"

int wd_pidfile_take(const char *path, long pid, int *fd_out, wt_errbuf *err)
{
	*fd_out = -1;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
	if (fd < 0)
		return wt_seterr(err, errno == ELOOP ? WT_ECONFIG : WT_EIO, "pid_file %s: %s%s",
		                 path, strerror(errno),
		                 errno == ELOOP ? " (a symbolic link: give the file itself)" : "");
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return wt_seterr(err, WT_ECONFIG,
		                 "pid_file %s is not a regular file; give a file path", path);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		char held[32] = "";
		ssize_t n = pread(fd, held, sizeof(held) - 1, 0);
		held[n > 0 ? n : 0] = '\0';
		held[strcspn(held, "\n")] = '\0';
		close(fd);
		if (e == EWOULDBLOCK)
			return wt_seterr(
			    err, WT_EBUSY,
			    "pid_file %s is held by a running weightd (pid %s); stop it, or "
			    "give this one its own pid_file (and cache_dir)",
			    path, held[0] ? held : "?");
		return wt_seterr(err, WT_EIO, "pid_file %s: lock: %s", path, strerror(e));
	}
	char text[32];
	int len = snprintf(text, sizeof(text), "%ld\n", pid);
	/* not durable: a pid file is meaningless after a power cut */
	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
		int e = errno;
		close(fd);
		return wt_seterr(err, WT_EIO, "pid_file %s: write: %s", path, strerror(e));
	}
	*fd_out = fd;
	return WT_OK;
}

void wd_pidfile_release(const char *path, int fd)
{
	if (fd < 0)
		return;
	unlink(path); /* while still locked: a new daemon cannot have taken it */
	close(fd);
}
