/*-------------------------------------------------------------------------
 *
 * service_resident.h
 *	  The worker's side of the engine's copies of table cache arrays
 *	  (kernels/include/odp_resident.h): which copies the engine holds, on
 *	  which device, which running requests use them, and their place in
 *	  each device's budget.
 *
 * A request whose staged input lies in an array of a table cache entry
 * (service/table_cache.h) uses the engine's copy of that array on the
 * device it runs on; where there is none, the engine makes one as the
 * request starts, if the copies' share of that device's budget
 * (odp_gpu.table_cache_share) and the memory no running request reserved
 * allow.  A copy is an array of one entry of one generation, so it is
 * never a copy of anything else: a copy whose entry is gone (stale,
 * evicted, dropped) is freed once no running request uses it.  Copies
 * give way, least recently used first, to any request that would
 * otherwise wait for memory, and go with their device's context
 * (rebuilt) or the engine process (restarted).
 *
 * Every function but OdpResidentSweep and OdpResidentDevice runs with
 * the service's lock held, by the worker.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_resident.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_RESIDENT_H
#define ODP_SERVICE_RESIDENT_H

#include "service/service_shmem.h"

/* Bytes of a device's budget neither reserved nor held by copies. */
extern size_t OdpResidentUnreserved(const OdpServiceDevice *dev);

/*
 * The device, among the ncand indexes of cand, holding the most bytes of
 * copies the slot's request can use; -1 where none holds any.
 */
extern int	OdpResidentPreferred(const OdpServiceSlot *slot, const int *cand, int ncand);

/*
 * Frees copies on device d that no running request uses, least recently
 * used first, until need bytes of its budget are unreserved; whether any
 * went.
 */
extern bool OdpResidentEvict(int d, size_t need);

/*
 * Names, in a request admitted on devices dev[0 .. ndev), the copies it
 * uses, and on one device the copies the engine makes for it first.
 */
extern void OdpResidentAdmit(OdpServiceSlot *slot, const int *dev, int ndev);

/* What a finished request held: uses end, copies it made become ready. */
extern void OdpResidentRelease(OdpServiceSlot *slot);

/* Forgets the copies of device index d (-1: of every device). */
extern void OdpResidentForget(int d);

/* Frees the copies whose table cache entries are gone (lock not held). */
extern void OdpResidentSweep(void);

/*
 * The CUDA ordinal of the device holding a copy of table cache entry
 * (cache_slot, generation), -1 where none does (takes the lock).
 */
extern int	OdpResidentDevice(int cache_slot, uint64_t generation);

#endif							/* ODP_SERVICE_RESIDENT_H */
