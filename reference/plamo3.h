/*
 * plamo3.h — PLaMo 3 (Plamo3ForCausalLM, remote code; ref_cfg.plamo3): its config and its names
 * as the decoder passes read them, the norms' load-time offsets added (plamo3.c).
 */
#ifndef WT_REFERENCE_PLAMO3_H
#define WT_REFERENCE_PLAMO3_H

#include <stdbool.h>
#include <stddef.h>

#include "reference/reference.h"

/* Does s hold PLaMo 3's own names (model.layers.layers.0.pre_mixer_norm.weight)? */
bool ref_plamo3_named(ref_set *s);
/* Add offset(name) to every 1-D tensor of out it is not 0 for (the norms' load-time offsets of
 * PLaMo 3 and PLaMo 2); another rank there is WT_ESHAPE. On error out is cleared. */
int ref_norm_offsets(ref_set *out, double (*offset)(const char *name), wt_errbuf *err);
/* in under Gemma 3's names (plamo3.c's table) into out, every norm plus its offset. */
int ref_plamo3_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);
/* rope_theta (absent: 1e6), rope_local_theta (1e4), window_size (2048), sliding_window_pattern
 * (8) into c, and the switches of the decoder (sandwich norms, q/k norms, fused q/k/v and
 * gate/up); values the reference cannot run are WT_EUNSUPPORTED naming the key. */
int ref_cfg_plamo3(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);

#endif
