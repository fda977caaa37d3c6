/* ctl_update.h — `weightctl fetch --update-from` (cmd_update.c). */
#ifndef WT_CTL_UPDATE_H
#define WT_CTL_UPDATE_H

#include "weights/client.h"
#include "weights/engine.h"

/*
 * Write the rank of manifest m into out (a file sink) from the rank file
 * old_path plus the tensors whose content changed, fetched from the server.
 * WT_ELAYOUT (nothing fetched) when old_path is not the same model, layout and
 * rank or a tensor's name, dtype or shape differs: full reload needed. rep is
 * filled (revision before = old_path's weightd.revision).
 */
int ctl_update_from(wt_client *c, const wt_manifest *m, const char *old_path, wt_sink *out,
                    const wt_fetch_opts *fo, wt_update_report *rep, wt_errbuf *err);

#endif
