/*-------------------------------------------------------------------------
 *
 * backend_staging.h
 *	  A backend's own staging area, where odp_gpu is not preloaded: host
 *	  memory the backend keeps for its session, page-locked for the GPUs by
 *	  its first GPU call, that the input layer and its parallel workers
 *	  read inputs into.
 *
 * Without the GPU service each backend copies its inputs to the GPU
 * itself.  From memory that is not page-locked the copy goes through the
 * driver's bounce buffers at a sixth of the bus's speed; locking an input's
 * pages for one call and unlocking them after costs more than the copy
 * saves.  Calls on the CPU path read into it as well: a fresh buffer costs
 * a fault per page on every call, where the area's pages stay mapped in
 * the session (on a 2-core machine a serial read of 300,000 x 16 real[]
 * took 59 ms into fresh memory and 23 ms into the area; PostgreSQL's own
 * scan 30).  The area is one dynamic shared memory segment (its parallel
 * workers map it), made when a call first wants it and remade larger,
 * between calls, when a call wanted more, up to
 * odp_gpu.backend_staging_size.  Inputs are extents of it, freed with their
 * memory context (shared_buffers.c); the segment stays for the next call.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/backend_staging.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_BACKEND_STAGING_H
#define ODP_BACKEND_STAGING_H

#include "postgres.h"

#include "storage/dsm.h"

/* odp_gpu.backend_staging_size, in MB (0: no area). */
extern int	odp_backend_staging_mb;

extern void OdpBackendStagingDefineSetting(void);

/*
 * Whether this backend's inputs may go to its own area: no GPU service
 * and a setting that allows one.
 */
extern bool OdpBackendStagingWanted(void);

/* The call will want about bytes: the size to make the area at least. */
extern void OdpBackendStagingExpect(Size bytes);

/* An extent of bytes, or NULL where the area has no room for it now. */
extern void *OdpBackendStagingAlloc(Size bytes);

/* Grows or trims the extent at p in place; false where it cannot grow. */
extern bool OdpBackendStagingResize(void *p, Size bytes);

extern void OdpBackendStagingFree(void *p);

/* Where bytes at ptr lie in the area: its segment's handle and offset. */
extern bool OdpBackendStagingFind(const void *ptr, Size bytes, dsm_handle *handle,
								  Size *offset);

#endif							/* ODP_BACKEND_STAGING_H */
