/*
 * faults.c — fault injection for tests: the only way to set wd_server.faults.
 * weightd/main.c never calls it, so the daemon binary does not link this file
 * (the static archive leaves unreferenced objects out) and has no flag for it.
 */
#include "weightd/server_int.h"

void wd_server_set_faults(wd_server *s, const wd_faults *f)
{
	atomic_store(&s->faults, f);
}
