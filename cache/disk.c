/*
 * disk.c — room on the cache's file system before a shard is written.
 *
 * RocksDB must never meet a full disk: the Debian build has assertions on,
 * and a write after a failed one aborts the process
 * (WritableFileWriter::AssertFalseAndGetStatusForPrevError); a release build
 * would instead stop every later write with a background error until a
 * restart. So weightd asks here first and fails the production cleanly
 * (WT_ENOSPC) when the free space would fall below the reserve; cached
 * shards keep being served, and productions succeed again as soon as space
 * exists. Another process filling the disk between this check and the writes
 * is still possible: keep the cache on its own file system.
 */
#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>

#include "cache/cache_int.h"

int cache_disk_room(cache *c, uint64_t need, wt_errbuf *err)
{
	struct statvfs st;
	if (statvfs(c->dir, &st) != 0)
		return wt_seterr(err, WT_EIO, "cache '%s': statvfs: %s", c->dir, strerror(errno));
	uint64_t avail = (uint64_t)st.f_bavail * (uint64_t)st.f_frsize;
	uint64_t want = need + CACHE_DISK_RESERVE;
	if (want < need || avail < want)
		return wt_seterr(err, WT_ENOSPC,
		                 "cache '%s': %llu bytes free on its disk, the shards need %llu "
		                 "plus a reserve of %llu for RocksDB; free disk space (admin evict "
		                 "or reclaim) or lower cache_max_bytes below the disk's size",
		                 c->dir, (unsigned long long)avail, (unsigned long long)need,
		                 (unsigned long long)CACHE_DISK_RESERVE);
	return WT_OK;
}
