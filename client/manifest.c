/*
 * manifest.c — a rank's manifest: complete validation of what the server sent,
 * and the public accessors.
 *
 * Checks, in order (any failure is WT_ECORRUPT naming the tensor or chunk,
 * except where noted):
 *   format_version == 1                               else WT_EVERSION
 *   shard_id 1..CLIENT_MAX_SHARD_ID bytes; model, revision, layout_text present,
 *     without control characters
 *   tensors <= CLIENT_MAX_TENSORS; names non-empty, without control characters,
 *     strictly increasing (name order, hence unique)
 *   dtype a known code; role a known value; 0 <= ndim <= WT_MAX_DIMS; dims >= 0
 *   product(shape) * dtype size fits 64 bits and == nbytes
 *   hash 16 bytes
 *   chunks: hash 16 bytes; nbytes > 0; offset + nbytes fits 64 bits; first at
 *     0, each starting where the previous ended (no hole, no overlap), the last
 *     ending at nbytes; a tensor of 0 bytes has no chunk
 *   chunk nbytes <= max_chunk_bytes                   else WT_ETOOBIG
 *   sum of nbytes fits 64 bits and == total_bytes
 */
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "client/client_int.h"
#include "common/common.h"
#include "weights/weights.h"

/* TensorEntry.role is converted to wt_tensor_role by a cast: the codes are one
 * (FROZEN, docs/format.md section 6.1); the last one bounds the range check. */
_Static_assert((int)WT_ROLE_WEIGHT == (int)WEIGHTS__TENSOR_ROLE__ROLE_WEIGHT, "role codes");
_Static_assert((int)WT_ROLE_SCALE == (int)WEIGHTS__TENSOR_ROLE__ROLE_SCALE, "role codes");
_Static_assert((int)WT_ROLE_BIAS == (int)WEIGHTS__TENSOR_ROLE__ROLE_BIAS, "role codes");
_Static_assert((int)WT_ROLE_INPUT_SCALE == (int)WEIGHTS__TENSOR_ROLE__ROLE_INPUT_SCALE,
               "role codes");

static char *dup_str(const char *s)
{
	return strdup(s != NULL ? s : "");
}

void wt_manifest_free(wt_manifest *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n_tensors; i++)
		free(m->tensors[i].name);
	free(m->tensors);
	free(m->chunks);
	for (size_t i = 0; i < m->n_skipped; i++)
		free(m->skipped[i]);
	free(m->skipped);
	free(m->model);
	free(m->revision);
	free(m->layout_text);
	free(m->shard_id);
	free(m->req_model);
	free(m->served_by);
	free(m->sub_map);
	wt_layout_clear(&m->req_layout);
	free(m->mode_reason);
	free(m);
}

static int check_chunks(const Weights__TensorEntry *te, uint64_t max_chunk, wt_manifest *m,
                        size_t ti, wt_errbuf *err)
{
	client_tensor *t = &m->tensors[ti];
	uint64_t pos = 0;
	t->first_chunk = m->n_chunks;
	t->n_chunks = te->n_chunks;
	for (size_t k = 0; k < te->n_chunks; k++) {
		const Weights__ChunkRef *cr = te->chunks[k];
		uint64_t end;
		if (cr->hash.len != 16 && !(m->live && cr->hash.len == 0))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "manifest: tensor '%s' chunk %zu: hash of %zu bytes, expected 16",
			    t->name, k, cr->hash.len);
		if (cr->nbytes == 0)
			return wt_seterr(err, WT_ECORRUPT,
			                 "manifest: tensor '%s' chunk %zu is empty", t->name, k);
		if (!wt_add_u64(cr->offset, cr->nbytes, &end))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "manifest: tensor '%s' chunk %zu: offset %llu + nbytes %llu "
			    "overflows",
			    t->name, k, (unsigned long long)cr->offset,
			    (unsigned long long)cr->nbytes);
		if (cr->offset != pos)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "manifest: tensor '%s' chunk %zu starts at %llu, expected %llu "
			    "(%s)",
			    t->name, k, (unsigned long long)cr->offset, (unsigned long long)pos,
			    cr->offset < pos ? "overlaps the previous chunk" : "leaves a hole");
		if (end > t->nbytes)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "manifest: tensor '%s' chunk %zu ends at %llu past the tensor's "
			    "%llu bytes",
			    t->name, k, (unsigned long long)end, (unsigned long long)t->nbytes);
		if (cr->nbytes > max_chunk)
			return wt_seterr(
			    err, WT_ETOOBIG,
			    "manifest: tensor '%s' chunk %zu has %llu bytes, over this "
			    "client's limit %llu; raise max_message_bytes",
			    t->name, k, (unsigned long long)cr->nbytes,
			    (unsigned long long)max_chunk);
		client_chunk *c = &m->chunks[m->n_chunks++];
		c->known = cr->hash.len == 16;
		if (c->known)
			memcpy(c->hash, cr->hash.data, 16);
		c->off = cr->offset;
		c->nbytes = cr->nbytes;
		c->tensor = ti;
		if (cr->nbytes > m->max_chunk_nbytes)
			m->max_chunk_nbytes = cr->nbytes;
		pos = end;
	}
	if (pos != t->nbytes)
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: tensor '%s': chunks cover %llu of its %llu bytes",
		                 t->name, (unsigned long long)pos, (unsigned long long)t->nbytes);
	return WT_OK;
}

static int check_tensor(const Weights__TensorEntry *te, const char *prev, uint64_t max_chunk,
                        wt_manifest *m, size_t ti, wt_errbuf *err)
{
	client_tensor *t = &m->tensors[ti];
	if (te->name == NULL || te->name[0] == '\0')
		return wt_seterr(err, WT_ECORRUPT, "manifest: tensor %zu has no name", ti);
	if (common_text_has_control(te->name)) { /* non-ASCII is fine, control bytes are not */
		char shown[WT_ERRMSG_MAX / 2];
		common_text_escape(te->name, shown, sizeof(shown), false);
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: tensor %zu's name '%s' holds a control character (a "
		                 "sink would write it into a file or a terminal)",
		                 ti, shown);
	}
	if ((t->name = strdup(te->name)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "manifest: out of memory");
	if (prev != NULL && strcmp(prev, t->name) >= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: tensor '%s' follows '%s': names must be unique and in "
		                 "name order",
		                 t->name, prev);
	if (te->dtype == WT_DTYPE_INVALID || te->dtype >= WT_DTYPE_COUNT_)
		return wt_seterr(err, WT_ECORRUPT, "manifest: tensor '%s': unknown dtype code %u",
		                 t->name, te->dtype);
	if ((unsigned)te->role > WT_ROLE_INPUT_SCALE)
		return wt_seterr(err, WT_ECORRUPT, "manifest: tensor '%s': unknown role %d",
		                 t->name, (int)te->role);
	if (te->n_shape > WT_MAX_DIMS)
		return wt_seterr(err, WT_ECORRUPT, "manifest: tensor '%s' has %zu dims (max %d)",
		                 t->name, te->n_shape, WT_MAX_DIMS);
	if (te->hash.len != 16 && !(m->live && te->hash.len == 0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: tensor '%s': hash of %zu bytes, expected 16", t->name,
		                 te->hash.len);
	uint64_t n = wt_dtype_size((wt_dtype)te->dtype);
	for (size_t d = 0; d < te->n_shape; d++) {
		if (te->shape[d] < 0)
			return wt_seterr(err, WT_ECORRUPT, "manifest: tensor '%s': dim %zu is %lld",
			                 t->name, d, (long long)te->shape[d]);
		if (!wt_mul_u64(n, (uint64_t)te->shape[d], &n))
			return wt_seterr(err, WT_ECORRUPT,
			                 "manifest: tensor '%s': shape overflows 64-bit sizes",
			                 t->name);
		t->shape[d] = te->shape[d];
	}
	if (n != te->nbytes)
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: tensor '%s': nbytes %llu, but dtype %s and its shape "
		                 "make %llu",
		                 t->name, (unsigned long long)te->nbytes,
		                 wt_dtype_name((wt_dtype)te->dtype), (unsigned long long)n);
	t->dtype = (wt_dtype)te->dtype;
	t->ndim = (int)te->n_shape;
	t->nbytes = te->nbytes;
	t->known = te->hash.len == 16;
	if (t->known)
		memcpy(t->hash, te->hash.data, 16);
	t->role = (wt_tensor_role)te->role;
	t->requantized = te->requantized;
	return check_chunks(te, max_chunk, m, ti, err);
}

static int fill(const Weights__Manifest *pb, uint64_t max_chunk, wt_manifest *m, wt_errbuf *err)
{
	if (pb->format_version != WT_FORMAT_VERSION)
		return wt_seterr(err, WT_EVERSION,
		                 "manifest: format version %u, this client reads %d; upgrade the "
		                 "client",
		                 pb->format_version, WT_FORMAT_VERSION);
	if (pb->shard_id.len == 0 || pb->shard_id.len > CLIENT_MAX_SHARD_ID)
		return wt_seterr(err, WT_ECORRUPT, "manifest: shard id of %zu bytes (1..%u)",
		                 pb->shard_id.len, CLIENT_MAX_SHARD_ID);
	if (pb->model == NULL || pb->model[0] == '\0' || pb->revision == NULL ||
	    pb->layout_text == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: model, revision or layout text missing");
	if (common_text_has_control(pb->model) || common_text_has_control(pb->revision) ||
	    common_text_has_control(pb->layout_text))
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: its model, revision or layout text holds a control "
		                 "character");
	if (pb->n_tensors > CLIENT_MAX_TENSORS)
		return wt_seterr(err, WT_ECORRUPT, "manifest: %zu tensors (max %u)", pb->n_tensors,
		                 CLIENT_MAX_TENSORS);
	m->format_version = pb->format_version;
	m->live = pb->live;
	m->tp_rank = pb->tp_rank;
	m->ep_rank = pb->ep_rank;
	m->checkpoint_bytes = pb->checkpoint_bytes;
	m->tied_lm_head = pb->tied_lm_head;
	if ((m->model = dup_str(pb->model)) == NULL ||
	    (m->revision = dup_str(pb->revision)) == NULL ||
	    (m->layout_text = dup_str(pb->layout_text)) == NULL ||
	    (m->shard_id = malloc(pb->shard_id.len)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "manifest: out of memory");
	memcpy(m->shard_id, pb->shard_id.data, pb->shard_id.len);
	m->shard_id_len = pb->shard_id.len;
	size_t n_chunks = 0;
	for (size_t i = 0; i < pb->n_tensors; i++) {
		if (pb->tensors[i] == NULL || pb->tensors[i]->n_chunks > SIZE_MAX / 2 - n_chunks)
			return wt_seterr(err, WT_ECORRUPT, "manifest: tensor %zu is malformed", i);
		n_chunks += pb->tensors[i]->n_chunks;
	}
	m->tensors = calloc(pb->n_tensors ? pb->n_tensors : 1, sizeof(*m->tensors));
	m->chunks = calloc(n_chunks ? n_chunks : 1, sizeof(*m->chunks));
	if (m->tensors == NULL || m->chunks == NULL)
		return wt_seterr(err, WT_ENOMEM,
		                 "manifest: out of memory for %zu tensors, %zu chunks",
		                 pb->n_tensors, n_chunks);
	uint64_t total = 0;
	for (size_t i = 0; i < pb->n_tensors; i++) {
		m->n_tensors = i + 1;
		int rv = check_tensor(pb->tensors[i], i ? m->tensors[i - 1].name : NULL, max_chunk,
		                      m, i, err);
		if (rv != WT_OK)
			return rv;
		if (!wt_add_u64(total, m->tensors[i].nbytes, &total))
			return wt_seterr(err, WT_ECORRUPT,
			                 "manifest: total bytes overflow 64 bits");
	}
	if (total != pb->total_bytes)
		return wt_seterr(err, WT_ECORRUPT,
		                 "manifest: total_bytes %llu, but the tensors add up to %llu",
		                 (unsigned long long)pb->total_bytes, (unsigned long long)total);
	m->total_bytes = total;
	if (pb->n_skipped) {
		if ((m->skipped = calloc(pb->n_skipped, sizeof(char *))) == NULL)
			return wt_seterr(err, WT_ENOMEM, "manifest: out of memory");
		for (size_t i = 0; i < pb->n_skipped; i++, m->n_skipped++)
			if ((m->skipped[i] = dup_str(pb->skipped[i])) == NULL)
				return wt_seterr(err, WT_ENOMEM, "manifest: out of memory");
	}
	return WT_OK;
}

int client_manifest_from_pb(const Weights__Manifest *pb, uint64_t max_chunk_bytes,
                            const char *model, const wt_layout *layout, wt_manifest **out,
                            wt_errbuf *err)
{
	wt_manifest *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return wt_seterr(err, WT_ENOMEM, "manifest: out of memory");
	wt_layout_init(&m->req_layout);
	int rv = fill(pb, max_chunk_bytes, m, err);
	if (rv == WT_OK && (m->req_model = dup_str(model)) == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "manifest: out of memory");
	if (rv == WT_OK)
		rv = wt_layout_copy(&m->req_layout, layout);
	if (rv != WT_OK) {
		wt_manifest_free(m);
		return rv;
	}
	client_route_key(model, layout, m->route_key);
	*out = m;
	return WT_OK;
}

/* ---- accessors ---- */

const char *wt_manifest_model(const wt_manifest *m)
{
	return m->model;
}
const char *wt_manifest_revision(const wt_manifest *m)
{
	return m->revision;
}
const char *wt_manifest_layout_text(const wt_manifest *m)
{
	return m->layout_text;
}
uint32_t wt_manifest_tp_rank(const wt_manifest *m)
{
	return m->tp_rank;
}
uint32_t wt_manifest_ep_rank(const wt_manifest *m)
{
	return m->ep_rank;
}
uint32_t wt_manifest_format_version(const wt_manifest *m)
{
	return m->format_version;
}
uint64_t wt_manifest_total_bytes(const wt_manifest *m)
{
	return m->total_bytes;
}
uint64_t wt_manifest_checkpoint_bytes(const wt_manifest *m)
{
	return m->checkpoint_bytes;
}
size_t wt_manifest_n_chunks(const wt_manifest *m)
{
	return m->n_chunks;
}
int wt_manifest_tied_lm_head(const wt_manifest *m)
{
	return m->tied_lm_head;
}

int wt_manifest_live(const wt_manifest *m)
{
	return m->live;
}
size_t wt_manifest_n_skipped(const wt_manifest *m)
{
	return m->n_skipped;
}
const char *wt_manifest_skipped(const wt_manifest *m, size_t i)
{
	return i < m->n_skipped ? m->skipped[i] : NULL;
}
size_t wt_manifest_n_tensors(const wt_manifest *m)
{
	return m->n_tensors;
}

int wt_manifest_tensor(const wt_manifest *m, size_t i, wt_tensor_info *out)
{
	if (i >= m->n_tensors)
		return WT_EINVAL;
	const client_tensor *t = &m->tensors[i];
	memset(out, 0, sizeof(*out));
	out->name = t->name;
	out->dtype = t->dtype;
	out->ndim = t->ndim;
	memcpy(out->shape, t->shape, sizeof(out->shape));
	out->nbytes = t->nbytes;
	memcpy(out->hash, t->hash, 16);
	out->role = t->role;
	out->requantized = t->requantized;
	out->n_chunks = t->n_chunks;
	return WT_OK;
}

int client_manifest_chunk(const wt_manifest *m, size_t t, size_t k, uint64_t *off, uint64_t *nbytes,
                          uint8_t hash[16])
{
	if (t >= m->n_tensors || k >= m->tensors[t].n_chunks)
		return WT_EINVAL;
	const client_chunk *ch = &m->chunks[m->tensors[t].first_chunk + k];
	*off = ch->off;
	*nbytes = ch->nbytes;
	memcpy(hash, ch->hash, 16);
	return WT_OK;
}

int wt_manifest_find(const wt_manifest *m, const char *name, size_t *idx)
{
	/* names are sorted: binary search */
	return common_find_name(m->tensors, m->n_tensors, sizeof(client_tensor),
	                        offsetof(client_tensor, name), name, idx);
}

const char *wt_tensor_role_name(wt_tensor_role r)
{
	switch (r) {
	case WT_ROLE_WEIGHT:
		return "weight";
	case WT_ROLE_SCALE:
		return "scale";
	case WT_ROLE_BIAS:
		return "bias";
	case WT_ROLE_INPUT_SCALE:
		return "input_scale";
	}
	return "unknown";
}

void wt_hash_hex(const uint8_t hash[16], char out[33])
{
	common_hash128_hex(common_hash128_from_bytes(hash), out);
}
