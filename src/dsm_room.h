/*-------------------------------------------------------------------------
 *
 * dsm_room.h
 *	  Whether a dynamic shared memory segment of a given size can be had
 *	  without filling /dev/shm: a POSIX segment lives there, and a small
 *	  /dev/shm (as in many containers) fills, failing the next process that
 *	  needs one with a bus error rather than an error.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/dsm_room.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DSM_ROOM_H
#define ODP_DSM_ROOM_H

#include "postgres.h"

/*
 * Whether a segment of bytes leaves room in /dev/shm: margin times bytes
 * free there, where segments are POSIX ones; always where they are not
 * (they then come from elsewhere).
 */
extern bool OdpDsmHasRoom(Size bytes, double margin);

#endif							/* ODP_DSM_ROOM_H */
