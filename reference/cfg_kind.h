/*
 * cfg_kind.h — the reference's family table (cfg_kind.c), internal to reference/.
 */
#ifndef WT_REFERENCE_CFG_KIND_H
#define WT_REFERENCE_CFG_KIND_H

#include "reference/reference_int.h"

/* The planner's family -> c's kind and the family switches (qk_norm, gemma, the FAM_*
 * switches of cfg_fam.c and the others); WT_EUNSUPPORTED naming arch and family when the
 * reference has no forward pass for it. */
int ref_kind_of(const char *family, const char *arch, ref_cfg *c, wt_errbuf *err);

#endif
