/*-------------------------------------------------------------------------
 *
 * service_objects.h
 *	  State the GPU service keeps for a session between its calls: the
 *	  SolvingSet node states of a sharded table's node functions and of a
 *	  coordinator's own shards, each with the rows it was built over.
 *
 * Plain C under a mutex: the engine threads add and use objects, the
 * main thread frees those of sessions that ended.  An object belongs to
 * the backend (pid) that created it; another backend's handle finds
 * nothing.  An object in use by a call is freed when that call ends.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_objects.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_OBJECTS_H
#define ODP_SERVICE_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "odp_distributed.h"

#define ODP_SERVICE_OBJECT_ARRAYS 4

/*
 * Keeps node (and the arrays it reads, freed with it) for owner; returns
 * its handle (> 0), or 0 when out of memory (the caller frees them).
 */
extern int64_t odp_service_object_add(int owner, int device, OdpSsNode *node,
									  void **arrays, int narrays);

/* The owner's node of a handle, marked in use; NULL when there is none. */
extern OdpSsNode *odp_service_object_use(int owner, int64_t handle, int *device);

/* Ends a use; frees the object if it was dropped meanwhile. */
extern void odp_service_object_done(int64_t handle);

/* Drops the owner's object (freed now, or when its use ends). */
extern void odp_service_object_drop(int owner, int64_t handle);

/* Drops every object whose owner is_dead says ended; returns how many. */
extern int	odp_service_objects_reap(bool (*is_dead) (int owner));

#endif							/* ODP_SERVICE_OBJECTS_H */
