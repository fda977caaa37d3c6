/* dl.c — a table of functions resolved from a library loaded at run time (common.h). */
#include <dlfcn.h>
#include <string.h>

#include "common/common.h"

const char *common_dl_bind(void *h, const common_dl_sym *syms, size_t n, void *table)
{
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(h, syms[i].name);
		if (f == NULL)
			return syms[i].name;
		/* POSIX: a data pointer from dlsym converts to the function pointer */
		memcpy((char *)table + syms[i].off, &f, sizeof(f));
	}
	return NULL;
}
