/*
 * file_sink.c — engine sink that streams a shard into one safetensors file.
 *
 * The header (tensors in manifest order, __metadata__ weightd.* in the order
 * `weightctl shard` writes them: format, model, revision, layout, rank) is written by
 * loader's st_writer at begin(); verified bytes then stream through write(2)
 * in order (the fetcher delivers in order), so memory does not grow with the
 * shard. Output goes through common_afile ("<path>.tmp.<pid>", renamed to path
 * at end(), fsync'ed first when do_fsync); abort() unlinks the temp file and
 * leaves path untouched.
 *
 * A manifest's strings are bytes (protobuf-c does not check UTF-8, nor does
 * client/manifest.c), but a safetensors header is UTF-8 JSON: begin() refuses a
 * tensor name or metadata value that is not UTF-8, naming it, before any file
 * is created. The sink also checks that the writes tile each tensor in order
 * (what the fetcher promises, engine.h), as the host sink does: the
 * safetensors writer counts only the bytes of the whole data section, so a
 * write past one tensor's end into the next would still give a file whose
 * header parses, with bytes in the wrong tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/common.h"
#include "loader/loader.h"
#include "weights/engine.h"
#include "weights/weights.h"

struct wt_file_sink {
	wt_sink base; /* first member: the fetcher calls through it */
	char *path;   /* owned */
	int do_fsync;
	common_afile af; /* af.fd is -1 when no fetch is in progress */
	st_writer *w;
	/* the fetch in progress (w != NULL): borrowed manifest, open tensor */
	const wt_manifest *m;
	size_t cur;       /* tensor between tensor_begin and tensor_end; SIZE_MAX if none */
	uint64_t written; /* bytes of tensor cur written */
	size_t next;      /* tensor expected at the next tensor_begin */
};

static wt_file_sink *file_of(wt_sink *s)
{
	return (wt_file_sink *)s;
}

static void f_abort(wt_sink *s)
{
	wt_file_sink *f = file_of(s);
	st_writer_abort(f->w);
	f->w = NULL;
	common_afile_abort(&f->af);
	f->m = NULL;
}

/* The name of tensor ti of the fetch in progress, for errors. */
static const char *tensor_name(const wt_file_sink *f, size_t ti)
{
	wt_tensor_info t;
	if (f->m == NULL || wt_manifest_tensor(f->m, ti, &t) != WT_OK)
		return "?";
	return t.name;
}

/* s goes into the header as a JSON string: it must be UTF-8 (else jansson
 * refuses it, which the writer could only report as out of memory). The
 * error shows s with bytes outside printable ASCII as \xNN. */
static int check_utf8(const char *s, const char *what, wt_errbuf *err)
{
	if (common_utf8_valid(s, strlen(s), false))
		return WT_OK;
	char shown[128];
	size_t k = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && k + 5 < sizeof(shown); p++)
		k += (size_t)snprintf(shown + k, sizeof(shown) - k,
		                      *p >= 0x20 && *p < 0x7f && *p != '\\' ? "%c" : "\\x%02x", *p);
	shown[k] = '\0';
	return wt_seterr(err, WT_ECORRUPT,
	                 "file sink: %s '%s' is not valid UTF-8, and a safetensors header is "
	                 "UTF-8 JSON; the server sent a broken manifest: fix its checkpoint, or "
	                 "fetch into the host sink",
	                 what, shown);
}

static int f_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	wt_file_sink *f = file_of(s);
	size_t n = wt_manifest_n_tensors(m);
	st_desc *d = calloc(n ? n : 1, sizeof(*d));
	if (d == NULL)
		return wt_seterr(err, WT_ENOMEM, "file sink: out of memory for %zu tensors", n);
	int rv = WT_OK;
	for (size_t i = 0; i < n; i++) {
		wt_tensor_info t;
		wt_manifest_tensor(m, i, &t);
		if (rv == WT_OK) {
			char what[64];
			snprintf(what, sizeof(what), "the name of tensor %zu", i);
			rv = check_utf8(t.name, what, err);
		}
		d[i].name = t.name;
		d[i].dtype = t.dtype;
		d[i].ndim = t.ndim;
		memcpy(d[i].shape, t.shape, sizeof(d[i].shape));
	}
	char fmt[16], rank[64];
	snprintf(fmt, sizeof(fmt), "%d", WT_FORMAT_VERSION);
	snprintf(rank, sizeof(rank), "tp_rank=%u,ep_rank=%u", wt_manifest_tp_rank(m),
	         wt_manifest_ep_rank(m));
	st_kv meta[] = {
	    {"weightd.format", fmt},
	    {"weightd.model", (char *)wt_manifest_model(m)},
	    {"weightd.revision", (char *)wt_manifest_revision(m)},
	    {"weightd.layout", (char *)wt_manifest_layout_text(m)},
	    {"weightd.rank", rank},
	};
	for (size_t i = 0; rv == WT_OK && i < sizeof(meta) / sizeof(meta[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "__metadata__ %s", meta[i].key);
		rv = check_utf8(meta[i].value, what, err);
	}
	/* A folder at path would fail only at the rename in end(), after the whole
	 * shard was fetched and written. */
	struct stat sb;
	if (rv == WT_OK && stat(f->path, &sb) == 0 && S_ISDIR(sb.st_mode))
		rv = wt_seterr(err, WT_EINVAL,
		               "file sink: output path '%s' is a folder; give the path of a "
		               "file in it (e.g. '%s%srank0.safetensors')",
		               f->path, f->path, f->path[strlen(f->path) - 1] == '/' ? "" : "/");
	if (rv != WT_OK) {
		free(d);
		return rv;
	}
	rv = common_afile_open(&f->af, f->path, f->do_fsync != 0, err);
	if (rv != WT_OK) {
		wt_errprefix(err, "file sink");
	} else {
		rv = st_writer_open(&f->w, d, n, meta, sizeof(meta) / sizeof(meta[0]),
		                    common_afile_write_cb, &f->af, err);
		if (rv != WT_OK) {
			wt_errprefix(err, "file sink '%s'", f->af.tmp);
			f_abort(s);
		} else {
			f->m = m;
			f->cur = SIZE_MAX;
			f->next = 0;
		}
	}
	free(d);
	return rv;
}

static int f_tensor_begin(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_file_sink *f = file_of(s);
	if (f->w == NULL || f->cur != SIZE_MAX || ti != f->next)
		return wt_seterr(err, WT_EINVAL,
		                 "file sink: tensor %zu begun out of order (expected tensor %zu%s)",
		                 ti, f->next,
		                 f->cur != SIZE_MAX ? ", after the open one ended" : "");
	f->cur = ti;
	f->written = 0;
	return WT_OK;
}

static int f_write(wt_sink *s, size_t ti, uint64_t off, const void *data, size_t len,
                   wt_errbuf *err)
{
	wt_file_sink *f = file_of(s);
	wt_tensor_info t;
	if (f->w == NULL || ti != f->cur || off != f->written ||
	    wt_manifest_tensor(f->m, ti, &t) != WT_OK || len > t.nbytes - off)
		return wt_seterr(err, WT_EINVAL,
		                 "file sink: tensor %zu '%s': write of %zu bytes at %llu out of "
		                 "order or past its end (tensor %s open, %llu bytes written)",
		                 ti, tensor_name(f, ti), len, (unsigned long long)off,
		                 f->cur == ti ? "is" : "not", (unsigned long long)f->written);
	int rv = st_writer_write(f->w, data, len, err);
	if (rv != WT_OK)
		return wt_errprefix(err, "file sink '%s': tensor %zu at %llu", f->af.tmp, ti,
		                    (unsigned long long)off);
	f->written += len;
	return WT_OK;
}

static int f_tensor_end(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_file_sink *f = file_of(s);
	wt_tensor_info t;
	if (f->w == NULL || ti != f->cur || wt_manifest_tensor(f->m, ti, &t) != WT_OK ||
	    f->written != t.nbytes)
		return wt_seterr(err, WT_EINVAL,
		                 "file sink: tensor %zu '%s' ended incomplete or not open (%llu "
		                 "bytes written)",
		                 ti, tensor_name(f, ti), (unsigned long long)f->written);
	f->cur = SIZE_MAX;
	f->next = ti + 1;
	return WT_OK;
}

static int f_end(wt_sink *s, wt_errbuf *err)
{
	wt_file_sink *f = file_of(s);
	int rv = st_writer_close(f->w, err);
	f->w = NULL;
	f->m = NULL;
	if (rv != WT_OK) {
		wt_errprefix(err, "file sink '%s'", f->af.tmp);
		f_abort(s);
		return rv;
	}
	if ((rv = common_afile_commit(&f->af, err)) != WT_OK)
		wt_errprefix(err, "file sink '%s'", f->path);
	return rv;
}

static const wt_sink_ops file_ops = {
    .struct_size = sizeof(wt_sink_ops),
    .begin = f_begin,
    .tensor_begin = f_tensor_begin,
    .write = f_write,
    .tensor_end = f_tensor_end,
    .end = f_end,
    .abort = f_abort,
};

int wt_file_sink_create(wt_file_sink **out, const char *path, int do_fsync, wt_errbuf *err)
{
	if (path == NULL || path[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "file sink: no output path");
	wt_file_sink *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return wt_seterr(err, WT_ENOMEM, "file sink: out of memory");
	f->base.ops = &file_ops;
	f->af.fd = -1;
	f->do_fsync = do_fsync;
	f->path = strdup(path);
	if (f->path == NULL) {
		wt_file_sink_destroy(f);
		return wt_seterr(err, WT_ENOMEM, "file sink: out of memory");
	}
	*out = f;
	return WT_OK;
}

wt_sink *wt_file_sink_sink(wt_file_sink *f)
{
	return &f->base;
}

void wt_file_sink_destroy(wt_file_sink *f)
{
	if (f == NULL)
		return;
	if (f->af.fd >= 0 || f->w != NULL)
		f_abort(&f->base);
	free(f->path);
	free(f);
}
