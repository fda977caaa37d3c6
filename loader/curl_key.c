/*
 * curl_key.c — stat and ranged read of a key of an object store whose keys
 * map to URLs (store_http.c, store_s3.c): the store's url_of builds the URL,
 * curlu_stat / curlu_read do the request.
 */
#include <stdlib.h>

#include "loader/curl_int.h"

int curlu_stat_key(curlu *c, curlu_url_fn url_of, const void *st, const char *key, store_obj *out,
                   wt_errbuf *err)
{
	char *url = url_of(st, key);
	if (url == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	int rv = curlu_stat(c, url, key, out, err);
	free(url);
	return rv;
}

int curlu_read_key(curlu *c, curlu_url_fn url_of, const void *st, const char *key,
                   const char *version, uint64_t off, void *buf, size_t len, size_t *got,
                   wt_errbuf *err)
{
	*got = 0;
	char *url = url_of(st, key);
	if (url == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	int rv = curlu_read(c, url, key, version, off, buf, len, got, err);
	free(url);
	return rv;
}
