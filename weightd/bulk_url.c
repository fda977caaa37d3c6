/*
 * bulk_url.c — the URL the bulk data plane is offered under (bulk.c,
 * HelloReply.stream_url): tcp port 0 resolved to the bound port, and a
 * wildcard host replaced, per client, by the local address that client's
 * connection reached.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "weightd/server_int.h"

size_t wd_bulk_tcp_prefix(const char *url)
{
	if (strncmp(url, "tcp://", 6) == 0)
		return 6;
	if (strncmp(url, "tls+tcp://", 10) == 0)
		return 10;
	return 0;
}

/* true for a tcp URL on the any-address: host 0.0.0.0, [::], "*" or empty. */
static bool wildcard_host(const char *url)
{
	static const char *const any[] = {"0.0.0.0:", "[::]:", "*:", ":"};
	size_t p = wd_bulk_tcp_prefix(url);
	for (size_t i = 0; p > 0 && i < sizeof(any) / sizeof(any[0]); i++)
		if (strncmp(url + p, any[i], strlen(any[i])) == 0)
			return true;
	return false;
}

void wd_bulk_advertised_url(nng_stream_listener *l, const char *url, char *out, size_t cap,
                            int *wild_port)
{
	size_t n = strlen(url);
	int port = 0;
	if (wd_bulk_tcp_prefix(url) > 0 &&
	    nng_stream_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port) == 0 &&
	    wildcard_host(url))
		*wild_port = port;
	if (wd_bulk_tcp_prefix(url) > 0 && n > 2 && strcmp(url + n - 2, ":0") == 0 && port > 0)
		snprintf(out, cap, "%.*s:%d", (int)(n - 2), url, port);
	else
		snprintf(out, cap, "%s", url);
}

bool wd_bulk_pipe_local_url(const char *scheme, uint32_t pipe_id, int port, char *out, size_t cap)
{
	nng_pipe p = NNG_PIPE_INITIALIZER;
	p.id = pipe_id;
	nng_sockaddr sa;
	if (nng_pipe_get_addr(p, NNG_OPT_LOCADDR, &sa) != 0)
		return false;
	char a[INET6_ADDRSTRLEN];
	if (sa.s_family == NNG_AF_INET &&
	    inet_ntop(AF_INET, &sa.s_in.sa_addr, a, sizeof(a)) != NULL) {
		snprintf(out, cap, "%s%s:%d", scheme, a, port);
		return true;
	}
	if (sa.s_family == NNG_AF_INET6 &&
	    inet_ntop(AF_INET6, sa.s_in6.sa_addr, a, sizeof(a)) != NULL) {
		snprintf(out, cap, "%s[%s]:%d", scheme, a, port);
		return true;
	}
	return false;
}
