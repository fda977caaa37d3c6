/*
 * cmd_update.c — `weightctl fetch --update-from OLD --out NEW`: apply a
 * revision's delta to an existing rank file. OLD (a file `weightctl fetch` or
 * `weightctl shard` wrote for the same model, layout and rank) is checked
 * against the new manifest — every tensor with the same name, dtype and shape,
 * else a refusal: full reload needed — and each of its tensors is hashed
 * (XXH3-128); only the tensors whose hash differs from the manifest's are
 * fetched (wt_client_fetch_tensors). A merging sink hands the file sink the
 * whole new rank in manifest order: unchanged tensors from OLD (already
 * hash-checked), changed ones as they arrive verified. NEW is byte-identical
 * to a full fetch of the new revision.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/weightctl/ctl_update.h"
#include "common/common.h"
#include "loader/loader.h"

#define PIECE (8u << 20) /* bytes handed to the file sink per write from OLD */

typedef struct merge {
	wt_sink base; /* first: the fetch calls through it */
	wt_sink *out; /* the file sink, fed the whole rank */
	const wt_manifest *full;
	const uint8_t *old;      /* OLD mapped */
	const uint64_t *old_off; /* per full tensor: its offset in OLD */
	size_t *sub_to_full;
	size_t next; /* next full tensor to hand over */
	const unsigned char *sel;
} merge;

static merge *merge_of(wt_sink *s)
{
	return (merge *)s;
}

/* Hand the unchanged tensors [g->next, upto) from OLD to the file sink. */
static int emit_old(merge *g, size_t upto, wt_errbuf *err)
{
	const wt_sink_ops *o = g->out->ops;
	for (; g->next < upto; g->next++) {
		size_t k = g->next;
		wt_tensor_info t;
		wt_manifest_tensor(g->full, k, &t);
		int rv = o->tensor_begin(g->out, k, err);
		for (uint64_t off = 0; rv == WT_OK && off < t.nbytes; off += PIECE) {
			size_t len = t.nbytes - off < PIECE ? (size_t)(t.nbytes - off) : PIECE;
			rv = o->write(g->out, k, off, g->old + g->old_off[k] + off, len, err);
		}
		if (rv == WT_OK)
			rv = o->tensor_end(g->out, k, err);
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

static int m_begin(wt_sink *s, const wt_manifest *sub, wt_errbuf *err)
{
	merge *g = merge_of(s);
	size_t n = wt_manifest_n_tensors(g->full), j = 0;
	free(g->sub_to_full);
	if ((g->sub_to_full = calloc(n ? n : 1, sizeof(size_t))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "update: out of memory");
	for (size_t i = 0; i < n; i++)
		if (g->sel[i])
			g->sub_to_full[j++] = i;
	if (j != wt_manifest_n_tensors(sub))
		return wt_seterr(err, WT_EINVAL, "update: %zu tensors selected, %zu fetched", j,
		                 wt_manifest_n_tensors(sub));
	g->next = 0;
	return g->out->ops->begin(g->out, g->full, err);
}

static int m_tensor_begin(wt_sink *s, size_t ti, wt_errbuf *err)
{
	merge *g = merge_of(s);
	size_t k = g->sub_to_full[ti];
	int rv = emit_old(g, k, err);
	return rv == WT_OK ? g->out->ops->tensor_begin(g->out, k, err) : rv;
}

static int m_write(wt_sink *s, size_t ti, uint64_t off, const void *data, size_t len,
                   wt_errbuf *err)
{
	merge *g = merge_of(s);
	return g->out->ops->write(g->out, g->sub_to_full[ti], off, data, len, err);
}

static int m_tensor_end(wt_sink *s, size_t ti, wt_errbuf *err)
{
	merge *g = merge_of(s);
	g->next = g->sub_to_full[ti] + 1;
	return g->out->ops->tensor_end(g->out, g->sub_to_full[ti], err);
}

static int m_end(wt_sink *s, wt_errbuf *err)
{
	merge *g = merge_of(s);
	int rv = emit_old(g, wt_manifest_n_tensors(g->full), err);
	if (rv != WT_OK) {
		g->out->ops->abort(g->out);
		return rv;
	}
	return g->out->ops->end(g->out, err);
}

static void m_abort(wt_sink *s)
{
	merge *g = merge_of(s);
	g->out->ops->abort(g->out);
}

static const wt_sink_ops merge_ops = {
    .struct_size = sizeof(wt_sink_ops),
    .begin = m_begin,
    .tensor_begin = m_tensor_begin,
    .write = m_write,
    .tensor_end = m_tensor_end,
    .end = m_end,
    .abort = m_abort,
};

static int refuse(wt_errbuf *err, const char *path, const char *what)
{
	return wt_seterr(err, WT_ELAYOUT,
	                 "--update-from %s: %s; layout or shapes changed: full reload needed "
	                 "(fetch without --update-from)",
	                 path, what);
}

/* OLD must be a rank file of m's model, layout and rank with the same tensors. */
static int check_old(const st_file *f, const wt_manifest *m, const char *path, wt_errbuf *err)
{
	char what[700], rank[64];
	const char *mm = st_meta_get(f, "weightd.model"), *ml = st_meta_get(f, "weightd.layout");
	const char *mr = st_meta_get(f, "weightd.rank");
	snprintf(rank, sizeof(rank), "tp_rank=%u,ep_rank=%u", wt_manifest_tp_rank(m),
	         wt_manifest_ep_rank(m));
	if (mm == NULL || ml == NULL || mr == NULL || strcmp(mm, wt_manifest_model(m)) != 0 ||
	    strcmp(ml, wt_manifest_layout_text(m)) != 0 || strcmp(mr, rank) != 0) {
		snprintf(what, sizeof(what),
		         "it holds model '%s' layout '%s' rank '%s', not '%s' '%s' '%s'",
		         mm ? mm : "?", ml ? ml : "?", mr ? mr : "?", wt_manifest_model(m),
		         wt_manifest_layout_text(m), rank);
		return refuse(err, path, what);
	}
	if (f->n_tensors != wt_manifest_n_tensors(m)) {
		snprintf(what, sizeof(what), "it holds %zu tensors, the new revision %zu",
		         f->n_tensors, wt_manifest_n_tensors(m));
		return refuse(err, path, what);
	}
	for (size_t i = 0; i < wt_manifest_n_tensors(m); i++) {
		wt_tensor_info t;
		wt_manifest_tensor(m, i, &t);
		const st_tensor *o = st_find(f, t.name);
		int same = o != NULL && o->dtype == t.dtype && o->ndim == t.ndim;
		for (int d = 0; same && d < t.ndim; d++)
			same = o->shape[d] == t.shape[d];
		if (!same) {
			snprintf(what, sizeof(what), "tensor '%s' is %s in the new revision",
			         t.name, o == NULL ? "new" : "of another dtype or shape");
			return refuse(err, path, what);
		}
	}
	return WT_OK;
}

/* Map OLD and parse its header. */
static int map_old(const char *path, uint8_t **map, size_t *len, st_file *f, wt_errbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size < 8) {
		if (fd >= 0)
			close(fd);
		return wt_seterr(err, WT_EIO,
		                 "--update-from %s: cannot read it (or not a "
		                 "safetensors file); pass a rank file weightctl fetch wrote",
		                 path);
	}
	*len = (size_t)sb.st_size;
	void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return wt_seterr(err, WT_EIO, "--update-from %s: mmap failed", path);
	*map = p;
	uint64_t hl;
	int rv = st_check_prefix(p, *len, &hl, err);
	if (rv == WT_OK)
		rv = st_parse_header((const char *)p + 8, (size_t)hl, *len, f, err);
	if (rv != WT_OK)
		wt_errprefix(err, "--update-from %s", path);
	return rv;
}

int ctl_update_from(wt_client *c, const wt_manifest *m, const char *old_path, wt_sink *out,
                    const wt_fetch_opts *fo, wt_update_report *rep, wt_errbuf *err)
{
	uint64_t t0 = common_now_ns();
	size_t n = wt_manifest_n_tensors(m), len = 0;
	uint8_t *map = NULL;
	st_file f;
	memset(&f, 0, sizeof(f));
	unsigned char *sel = calloc(n ? n : 1, 1);
	uint64_t *offs = calloc(n ? n : 1, sizeof(uint64_t));
	merge g = {.base = {.ops = &merge_ops}, .out = out, .full = m, .sel = sel};
	int rv = sel && offs ? WT_OK : wt_seterr(err, WT_ENOMEM, "update: out of memory");
	if (rv == WT_OK)
		rv = map_old(old_path, &map, &len, &f, err);
	if (rv == WT_OK)
		rv = check_old(&f, m, old_path, err);
	memset(rep, 0, sizeof(*rep));
	const char *before = rv == WT_OK ? st_meta_get(&f, "weightd.revision") : NULL;
	snprintf(rep->revision_before, sizeof(rep->revision_before), "%s", before ? before : "");
	snprintf(rep->revision_after, sizeof(rep->revision_after), "%s", wt_manifest_revision(m));
	rep->tp_rank = wt_manifest_tp_rank(m);
	rep->ep_rank = wt_manifest_ep_rank(m);
	rep->tensors_total = n;
	rep->bytes_total = wt_manifest_total_bytes(m);
	for (size_t i = 0; rv == WT_OK && i < n; i++) {
		wt_tensor_info t;
		wt_manifest_tensor(m, i, &t);
		const st_tensor *o = st_find(&f, t.name);
		offs[i] = o->off;
		uint8_t h[16];
		common_hash128_to_bytes(common_hash128(map + o->off, (size_t)o->nbytes), h);
		sel[i] = memcmp(h, t.hash, 16) != 0;
		rep->tensors_updated += sel[i];
	}
	g.old = map;
	g.old_off = offs;
	wt_fetch_stats st;
	wt_fetch_opts o = *fo;
	memset(&st, 0, sizeof(st));
	o.stats = &st;
	if (rv == WT_OK)
		rv = wt_client_fetch_tensors(c, m, sel, &g.base, &o, err);
	rep->bytes_updated = st.bytes;
	rep->elapsed_us = (common_now_ns() - t0) / 1000;
	free(g.sub_to_full);
	st_file_free(&f);
	if (map != NULL)
		munmap(map, len);
	free(offs);
	free(sel);
	return rv;
}
