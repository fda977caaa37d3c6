/*
 * store_hosts.c — host lists as weightd's register_hosts writes them
 * ("HOST[:PORT]", "[V6]:PORT"; no port = any port; the host compared without
 * regard to case), matched against a URL's authority. One matcher for the
 * REGISTER check of a URI (weightd/regpolicy.c) and for the redirects of a
 * store limited to those hosts (store_limit_redirects), so the two cannot
 * read a host differently.
 */
#include <string.h>
#include <strings.h>

#include "loader/loader.h"

void store_split_hostport(const char *a, size_t n, const char **host, size_t *hlen,
                          const char **port, size_t *plen)
{
	const char *colon = NULL;
	if (n > 0 && a[0] == '[') {
		const char *rb = memchr(a, ']', n);
		if (rb != NULL && (size_t)(rb - a) + 1 < n && rb[1] == ':')
			colon = rb + 1;
	} else {
		colon = memchr(a, ':', n);
	}
	*host = a;
	*hlen = colon ? (size_t)(colon - a) : n;
	*port = colon ? colon + 1 : "";
	*plen = colon ? n - *hlen - 1 : 0;
}

bool store_host_listed(char *const *hosts, size_t n, const char *host, size_t hlen,
                       const char *port, size_t plen)
{
	for (size_t i = 0; hlen > 0 && i < n; i++) {
		const char *eh, *ep;
		size_t ehl, epl;
		store_split_hostport(hosts[i], strlen(hosts[i]), &eh, &ehl, &ep, &epl);
		if (ehl == hlen && strncasecmp(eh, host, hlen) == 0 &&
		    (epl == 0 || (epl == plen && memcmp(ep, port, plen) == 0)))
			return true;
	}
	return false;
}
