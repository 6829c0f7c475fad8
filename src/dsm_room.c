/*-------------------------------------------------------------------------
 *
 * dsm_room.c
 *	  Room in /dev/shm for a dynamic shared memory segment (dsm_room.h).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/dsm_room.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/statvfs.h>

#include "dsm_room.h"
#include "storage/dsm_impl.h"

/* See dsm_room.h. */
bool
OdpDsmHasRoom(Size bytes, double margin)
{
	struct statvfs fs;

	if (dynamic_shared_memory_type != DSM_IMPL_POSIX)
		return true;
	if (statvfs("/dev/shm", &fs) != 0)
		return false;
	return (double) fs.f_bavail * (double) fs.f_frsize >= margin * (double) bytes;
}
