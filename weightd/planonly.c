/*
 * planonly.c — ManifestRequest.plan_only (weightctl capabilities): plan the
 * layout against the model's current snapshot and answer with an empty
 * Manifest (no tensors, no chunks) or the planner's Error. Nothing is
 * produced, cached or asked of peers; planning reads no tensor bytes.
 */
#include "shardmap/shardmap.h"
#include "weightd/server_int.h"
#include "weights/weights.h"

nng_msg *wd_plan_only_reply(uint64_t id, const wd_mreq *m, wt_errbuf *err)
{
	sm_plan *plan = NULL;
	int rv = shardmap_plan(m->snap->ck, &m->layout, &plan, err);
	if (rv != WT_OK) {
		wt_errprefix(err, "model '%s' layout %s", m->model, m->layout_text);
		return NULL;
	}
	char *excl[WT_MAX_EXCLUDE];
	Weights__Layout lpb = WEIGHTS__LAYOUT__INIT;
	wire_layout_to_pb(&m->layout, &lpb, excl);
	Weights__Manifest mf = WEIGHTS__MANIFEST__INIT;
	mf.format_version = WT_FORMAT_VERSION;
	mf.model = m->model;
	mf.revision = m->snap->revision;
	mf.layout = &lpb;
	mf.layout_text = (char *)m->layout_text;
	mf.tp_rank = m->layout.tp_rank;
	mf.ep_rank = m->layout.ep_rank;
	mf.shard_id.data = (uint8_t *)m->id;
	mf.shard_id.len = sizeof(m->id);
	mf.checkpoint_bytes = ckpt_total_bytes(m->snap->ck);
	mf.tied_lm_head = shardmap_tied_lm_head(plan);
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = id;
	rp.body_case = WEIGHTS__REPLY__BODY_MANIFEST;
	rp.manifest = &mf;
	nng_msg *msg = wd_reply_msg(&rp);
	shardmap_plan_free(plan);
	if (msg == NULL)
		wt_seterr(err, WT_ENOMEM, "plan_only: out of memory");
	return msg;
}
