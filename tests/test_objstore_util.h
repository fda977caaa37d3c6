/*
 * test_objstore_util.h — helpers for the object-store tests: start a python3
 * helper (tests/integration/objstore_*.py) with pipes on its stdin/stdout,
 * read its first line, talk to it, stop it. Header-only (static functions),
 * included by tests/test_objstore*.c and test_weightd_auth.c.
 */
#ifndef WT_TEST_OBJSTORE_UTIL_H
#define WT_TEST_OBJSTORE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct os_helper {
	pid_t pid;
	int to_fd;   /* its stdin */
	int from_fd; /* its stdout */
	char line[512];
} os_helper;

/* Path of tests/integration/<name>, found next to this source file. Caller frees. */
static char *os_script(const char *name)
{
	const char *here = __FILE__; /* ".../tests/test_objstore_util.h" */
	const char *slash = strrchr(here, '/');
	size_t dlen = slash ? (size_t)(slash - here) : 0;
	size_t n = dlen + strlen(name) + 32;
	char *p = malloc(n);
	if (p != NULL)
		snprintf(p, n, "%.*s%sintegration/%s", (int)dlen, here, dlen ? "/" : "", name);
	return p;
}

/* Read one line from the helper (timeout_ms), without the newline. 0 on success. */
static int os_readline(os_helper *h, int timeout_ms)
{
	size_t k = 0;
	while (k + 1 < sizeof(h->line)) {
		struct pollfd pf = {h->from_fd, POLLIN, 0};
		int r = poll(&pf, 1, timeout_ms);
		if (r <= 0)
			return -1;
		char ch;
		ssize_t got = read(h->from_fd, &ch, 1);
		if (got <= 0)
			return -1;
		if (ch == '\n')
			break;
		h->line[k++] = ch;
	}
	h->line[k] = '\0';
	return 0;
}

/* Start `python3 script args...` (argv NULL-terminated, argv[0] = script path)
 * and wait for its first line. 0 on success. */
static int os_start(os_helper *h, char *const argv[], int timeout_ms)
{
	int in[2], out[2];
	memset(h, 0, sizeof(*h));
	h->pid = -1;
	if (pipe(in) != 0 || pipe(out) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		char *args[16];
		int n = 0;
		args[n++] = "python3";
		for (int i = 0; argv[i] != NULL && n < 15; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		execvp("python3", args);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fcntl(in[1], F_SETFD, FD_CLOEXEC);
	fcntl(out[0], F_SETFD, FD_CLOEXEC);
	h->pid = pid;
	h->to_fd = in[1];
	h->from_fd = out[0];
	signal(SIGPIPE, SIG_IGN);
	return os_readline(h, timeout_ms);
}

/* Send a command line and read the reply line. 0 on success. */
__attribute__((unused)) static int os_cmd(os_helper *h, const char *cmd, int timeout_ms)
{
	size_t n = strlen(cmd);
	if (write(h->to_fd, cmd, n) != (ssize_t)n || write(h->to_fd, "\n", 1) != 1)
		return -1;
	return os_readline(h, timeout_ms);
}

/* Close its stdin (it exits), then SIGTERM if it lingers, and reap it. */
static void os_stop(os_helper *h)
{
	if (h->pid <= 0)
		return;
	close(h->to_fd);
	for (int i = 0; i < 50; i++) {
		if (waitpid(h->pid, NULL, WNOHANG) == h->pid) {
			h->pid = -1;
			break;
		}
		usleep(20000);
	}
	if (h->pid > 0) {
		kill(h->pid, SIGTERM);
		waitpid(h->pid, NULL, 0);
		h->pid = -1;
	}
	close(h->from_fd);
}

#endif
