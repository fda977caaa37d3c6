/*
 * teleflm.h — Tele-FLM's reference piece (teleflm.c; c->teleflm): its muP multipliers.
 */
#ifndef WT_REF_TELEFLM_H
#define WT_REF_TELEFLM_H

#include <stddef.h>

#include "reference/reference.h"

/* With use_mup true, c's embedding scale input_mult and logit multiplier output_mult /
 * mup_scale_factor (vLLM's teleflm.py); with use_mup false neither. */
int ref_cfg_teleflm(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);

#endif
