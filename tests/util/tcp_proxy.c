/* tcp_proxy.c — the loopback TCP forwarder of the client tests (tcp_proxy.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "tests/util/tcp_proxy.h"

#define PROXY_MAX_CONNS 64

typedef struct proxy_pair {
	int client, server; /* -1 when unused */
} proxy_pair;

struct tcp_proxy {
	int target_port, port;
	int lfd;    /* listener, -1 while down; touched by the relay thread only */
	int ctl[2]; /* commands to the relay thread: 'd' down, 'u' up, 'q' quit */
	int ack[2]; /* one byte back when a command is done */
	proxy_pair pairs[PROXY_MAX_CONNS];
	int n_conns; /* read by tcp_proxy_n_conns */
	pthread_mutex_t lk;
	pthread_t th;
};

static int listen_port(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_target(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void pair_close(tcp_proxy *p, proxy_pair *q)
{
	if (q->client < 0)
		return;
	close(q->client);
	close(q->server);
	q->client = q->server = -1;
	pthread_mutex_lock(&p->lk);
	p->n_conns--;
	pthread_mutex_unlock(&p->lk);
}

static void accept_one(tcp_proxy *p)
{
	int c = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	int one = 1;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int s = connect_target(p->target_port);
	for (int i = 0; s >= 0 && i < PROXY_MAX_CONNS; i++)
		if (p->pairs[i].client < 0) {
			p->pairs[i] = (proxy_pair){.client = c, .server = s};
			pthread_mutex_lock(&p->lk);
			p->n_conns++;
			pthread_mutex_unlock(&p->lk);
			return;
		}
	close(c); /* no server, or no room: the client sees its connection end */
	if (s >= 0)
		close(s);
}

/* Move what is readable on from to to; false when the pair is done. */
static bool relay(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		off += w;
	}
	return true;
}

/* A command from the ctl pipe; false to quit. */
static bool command(tcp_proxy *p)
{
	char cmd;
	if (read(p->ctl[0], &cmd, 1) != 1)
		return false;
	if (cmd == 'd' || cmd == 'q') {
		if (p->lfd >= 0)
			close(p->lfd);
		p->lfd = -1;
		for (int i = 0; i < PROXY_MAX_CONNS; i++)
			pair_close(p, &p->pairs[i]);
	} else if (cmd == 'u') {
		for (int i = 0; i < 200 && p->lfd < 0; i++)
			if ((p->lfd = listen_port(p->port)) < 0)
				usleep(10000); /* a connect racing the port: retry */
	}
	char ok = p->lfd >= 0 || cmd != 'u' ? 'k' : 'e';
	if (write(p->ack[1], &ok, 1) != 1)
		return false;
	return cmd != 'q';
}

static void *relay_main(void *arg)
{
	tcp_proxy *p = arg;
	for (;;) {
		struct pollfd fds[2 + 2 * PROXY_MAX_CONNS];
		int ix[2 + 2 * PROXY_MAX_CONNS];
		nfds_t n = 0;
		fds[n++] = (struct pollfd){.fd = p->ctl[0], .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = p->lfd, .events = POLLIN}; /* -1: ignored */
		for (int i = 0; i < PROXY_MAX_CONNS; i++)
			if (p->pairs[i].client >= 0) {
				ix[n] = i;
				fds[n++] =
				    (struct pollfd){.fd = p->pairs[i].client, .events = POLLIN};
				ix[n] = i;
				fds[n++] =
				    (struct pollfd){.fd = p->pairs[i].server, .events = POLLIN};
			}
		if (poll(fds, n, -1) < 0)
			continue;
		if (fds[0].revents && !command(p))
			return NULL;
		if (fds[0].revents)
			continue; /* the fds may have changed */
		if (fds[1].revents & POLLIN)
			accept_one(p);
		for (nfds_t k = 2; k < n; k++) {
			proxy_pair *q = &p->pairs[ix[k]];
			if (fds[k].revents == 0 || q->client < 0)
				continue;
			bool from_client = fds[k].fd == q->client;
			if (!relay(fds[k].fd, from_client ? q->server : q->client))
				pair_close(p, q);
		}
	}
}

static void send_command(tcp_proxy *p, char cmd)
{
	char ok = 0;
	assert_int_equal(write(p->ctl[1], &cmd, 1), 1);
	assert_int_equal(read(p->ack[0], &ok, 1), 1);
	assert_int_equal(ok, 'k');
}

tcp_proxy *tcp_proxy_start(int target_port)
{
	tcp_proxy *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->target_port = target_port;
	for (int i = 0; i < PROXY_MAX_CONNS; i++)
		p->pairs[i].client = p->pairs[i].server = -1;
	pthread_mutex_init(&p->lk, NULL);
	assert_int_equal(pipe2(p->ctl, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p->ack, O_CLOEXEC), 0);
	p->lfd = listen_port(0);
	assert_true(p->lfd >= 0);
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&a, &al), 0);
	p->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&p->th, NULL, relay_main, p), 0);
	return p;
}

int tcp_proxy_port(const tcp_proxy *p)
{
	return p->port;
}

void tcp_proxy_down(tcp_proxy *p)
{
	send_command(p, 'd');
}

void tcp_proxy_up(tcp_proxy *p)
{
	send_command(p, 'u');
}

int tcp_proxy_n_conns(tcp_proxy *p)
{
	pthread_mutex_lock(&p->lk);
	int n = p->n_conns;
	pthread_mutex_unlock(&p->lk);
	return n;
}

void tcp_proxy_stop(tcp_proxy *p)
{
	send_command(p, 'q');
	pthread_join(p->th, NULL);
	close(p->ctl[0]);
	close(p->ctl[1]);
	close(p->ack[0]);
	close(p->ack[1]);
	pthread_mutex_destroy(&p->lk);
	free(p);
}
