/* ct_int.h — loader-private: compressed-tensors quantization_config (ct_config.c). */
#ifndef WT_LOADER_CT_INT_H
#define WT_LOADER_CT_INT_H

#include <jansson.h>

#include "loader/loader.h"

/* Read the weight scheme of compressed-tensors quantization_config object q into c->quant and
 * c->quant_group. Unsupported schemes are WT_EUNSUPPORTED, malformed ones WT_ECORRUPT, both
 * naming the field. */
int ckpt_ct_parse_quant(json_t *q, ckpt_config *c, wt_errbuf *err);

#endif
