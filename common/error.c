/* error.c — wt_err strings and the error buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "weights/error.h"

static const struct {
	const char *name;
	const char *text;
} err_table[WT_ERR_COUNT_] = {
    [WT_OK] = {"WT_OK", "success"},
    [WT_ENOMEM] = {"WT_ENOMEM", "out of memory"},
    [WT_EINVAL] = {"WT_EINVAL", "invalid argument"},
    [WT_ENOTFOUND] = {"WT_ENOTFOUND", "not found"},
    [WT_ECORRUPT] = {"WT_ECORRUPT", "corrupt or malformed data"},
    [WT_EHASH] = {"WT_EHASH", "integrity hash mismatch"},
    [WT_ETOOBIG] = {"WT_ETOOBIG", "too big"},
    [WT_EUNSUPPORTED] = {"WT_EUNSUPPORTED", "not supported"},
    [WT_EIO] = {"WT_EIO", "I/O error"},
    [WT_EOVERFLOW] = {"WT_EOVERFLOW", "size arithmetic overflow"},
    [WT_EDUP] = {"WT_EDUP", "duplicate"},
    [WT_EDTYPE] = {"WT_EDTYPE", "bad dtype"},
    [WT_ESHAPE] = {"WT_ESHAPE", "shape mismatch"},
    [WT_ELAYOUT] = {"WT_ELAYOUT", "layout invalid for this model"},
    [WT_ENONFINITE] = {"WT_ENONFINITE", "NaN or Inf in tensor"},
    [WT_EPROTO] = {"WT_EPROTO", "protocol error"},
    [WT_ETIMEDOUT] = {"WT_ETIMEDOUT", "timed out"},
    [WT_ECLOSED] = {"WT_ECLOSED", "closed"},
    [WT_EBUSY] = {"WT_EBUSY", "busy"},
    [WT_EEXIST] = {"WT_EEXIST", "already exists"},
    [WT_EPERM] = {"WT_EPERM", "permission denied"},
    [WT_ECONFIG] = {"WT_ECONFIG", "configuration error"},
    [WT_ENOSPC] = {"WT_ENOSPC", "cache budget exceeded"},
    [WT_EVERSION] = {"WT_EVERSION", "version mismatch"},
    [WT_ECANCELED] = {"WT_ECANCELED", "canceled"},
    [WT_EUNAVAIL] = {"WT_EUNAVAIL", "no server available"},
    [WT_EDEVICE] = {"WT_EDEVICE", "device error"},
    [WT_ECHANGED] = {"WT_ECHANGED", "source changed while read"},
};

const char *wt_strerror(int err)
{
	if (err < 0 || err >= WT_ERR_COUNT_ || err_table[err].text == NULL)
		return "unknown error";
	return err_table[err].text;
}

const char *wt_errname(int err)
{
	if (err < 0 || err >= WT_ERR_COUNT_ || err_table[err].name == NULL)
		return "WT_E?";
	return err_table[err].name;
}

/* A message cut at the buffer's end may end inside a UTF-8 sequence (a
 * server's or a file's text): the length of s[0, n) without that partial
 * character, so the message stays valid UTF-8 for whoever decodes it. */
static size_t utf8_whole(const char *s, size_t n)
{
	size_t i = n, cont = 0;
	while (i > 0 && cont < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--, cont++;
	if (i == 0)
		return n;
	unsigned char lead = (unsigned char)s[i - 1];
	size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	return need > 1 && cont + 1 < need ? i - 1 : n;
}

int wt_seterr(wt_errbuf *err, int code, const char *fmt, ...)
{
	if (err == NULL)
		return code;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(err->msg))
		err->msg[utf8_whole(err->msg, sizeof(err->msg) - 1)] = '\0';
	return code;
}

int wt_errprefix(wt_errbuf *err, const char *fmt, ...)
{
	if (err == NULL)
		return WT_OK;
	char head[WT_ERRMSG_MAX];
	char old[WT_ERRMSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	int n = snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old);
	if (n >= (int)sizeof(err->msg)) /* truncated: mark it */
		memcpy(err->msg + utf8_whole(err->msg, sizeof(err->msg) - 4), "...", 4);
	return err->code;
}

void wt_errclear(wt_errbuf *err)
{
	if (err == NULL)
		return;
	err->code = WT_OK;
	err->msg[0] = '\0';
}
