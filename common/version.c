/* version.c — wt_version(): the version of the libweights actually loaded. */
#include <stddef.h>

#include "weights/weights.h"

const char *wt_version(int *major, int *minor, int *patch)
{
	if (major != NULL)
		*major = WT_VERSION_MAJOR;
	if (minor != NULL)
		*minor = WT_VERSION_MINOR;
	if (patch != NULL)
		*patch = WT_VERSION_PATCH;
	return WT_VERSION_STRING;
}
