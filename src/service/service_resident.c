/*-------------------------------------------------------------------------
 *
 * service_resident.c
 *	  The worker's book of the engine's copies of table cache arrays
 *	  (service_resident.h says what it keeps and why).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_resident.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "service/service_engine_proc.h"
#include "service/service_resident.h"
#include "service/table_cache.h"
#include "storage/lwlock.h"

/* See service_resident.h. */
size_t
OdpResidentUnreserved(const OdpServiceDevice *dev)
{
	size_t		held = dev->reserved + dev->resident;

	return held >= dev->budget ? 0 : dev->budget - held;
}

/* The copy of the slot's input a, or NULL where the engine holds none. */
static OdpServiceResident *
ResidentOf(const OdpServiceSlot *slot, int a)
{
	for (int r = 0; r < ODP_SERVICE_RESIDENT; r++)
	{
		OdpServiceResident *c = &OdpService->resident[r];

		if (c->tag != 0 && c->cache_slot == slot->cache_slot[a] &&
			c->cache_generation == slot->cache_generation[a] &&
			c->offset == slot->cache_offset[a])
			return c;
	}
	return NULL;
}

static OdpServiceResident *
ResidentByTag(uint64_t tag)
{
	for (int r = 0; r < ODP_SERVICE_RESIDENT; r++)
		if (OdpService->resident[r].tag == tag)
			return &OdpService->resident[r];
	return NULL;
}

/* Frees a copy no running request uses, telling the engine. */
static void
ResidentFree(OdpServiceResident *c, bool tell)
{
	OdpEngineMsg msg;

	Assert(c->uses == 0);
	if (tell)
	{
		memset(&msg, 0, sizeof(msg));
		msg.kind = ODP_ENGINE_EVICT;
		msg.handle = (int64_t) c->tag;
		/* an engine process that is gone took its copies with it */
		(void) OdpEngineProcSend(&msg);
	}
	OdpService->devices[c->device].resident -= c->bytes;
	memset(c, 0, sizeof(*c));
}

/* See service_resident.h. */
int
OdpResidentPreferred(const OdpServiceSlot *slot, const int *cand, int ncand)
{
	uint64_t	held[ODP_MAX_GPUS] = {0};
	int			best = -1;

	for (int a = 0; a < ODP_CALL_MAX_ARRAYS; a++)
	{
		OdpServiceResident *c;

		if (slot->cache_generation[a] == 0 || (c = ResidentOf(slot, a)) == NULL || !c->ready)
			continue;
		held[c->device] += c->bytes;
	}
	for (int i = 0; i < ncand; i++)
		if (held[cand[i]] > 0 && (best < 0 || held[cand[i]] > held[best]))
			best = cand[i];
	return best;
}

/* Frees the least recently used copy on device d no request uses; whether one went. */
static bool
ResidentEvictOne(int d)
{
	OdpServiceResident *lru = NULL;

	for (int r = 0; r < ODP_SERVICE_RESIDENT; r++)
	{
		OdpServiceResident *c = &OdpService->resident[r];

		if (c->tag != 0 && c->device == d && c->ready && c->uses == 0 &&
			(lru == NULL || c->last_used_ms < lru->last_used_ms))
			lru = c;
	}
	if (lru != NULL)
		ResidentFree(lru, true);
	return lru != NULL;
}

/* See service_resident.h. */
bool
OdpResidentEvict(int d, size_t need)
{
	bool		any = false;

	while (OdpResidentUnreserved(&OdpService->devices[d]) < need && ResidentEvictOne(d))
		any = true;
	return any;
}

/*
 * A new copy of the slot's input a on device d for the engine to make,
 * or NULL where the copies' share of the budget, or the memory running
 * requests left, has no room for it even after older copies went.
 */
static OdpServiceResident *
ResidentNew(const OdpServiceSlot *slot, int a, int d)
{
	OdpServiceDevice *dev = &OdpService->devices[d];
	size_t		bytes = slot->cache_bytes[a];
	size_t		cap = (size_t) (odp_table_cache_share * (double) dev->budget);
	OdpServiceResident *c = NULL;

	if (bytes == 0 || bytes > cap)
		return NULL;
	/* older copies give way to the share first, then to the room */
	while (dev->resident + bytes > cap)
		if (!ResidentEvictOne(d))
			return NULL;
	(void) OdpResidentEvict(d, bytes);
	if (OdpResidentUnreserved(dev) < bytes)
		return NULL;
	for (int r = 0; r < ODP_SERVICE_RESIDENT && c == NULL; r++)
		if (OdpService->resident[r].tag == 0)
			c = &OdpService->resident[r];
	if (c == NULL)
		return NULL;
	c->tag = ++OdpService->next_resident_tag;
	c->cache_slot = slot->cache_slot[a];
	c->cache_generation = slot->cache_generation[a];
	c->offset = slot->cache_offset[a];
	c->bytes = bytes;
	c->device = d;
	c->uses = 0;
	c->ready = false;
	dev->resident += bytes;
	return c;
}

/* See service_resident.h. */
void
OdpResidentAdmit(OdpServiceSlot *slot, const int *dev, int ndev)
{
	for (int a = 0; a < ODP_CALL_MAX_ARRAYS; a++)
	{
		OdpServiceResident *c;
		bool		on = false;

		slot->resident_tag[a] = 0;
		slot->resident_make[a] = false;
		atomic_store(&slot->resident_made[a], 0);
		if (slot->cache_generation[a] == 0 || ndev == 0)
			continue;
		c = ResidentOf(slot, a);
		if (c != NULL && c->ready)
		{
			for (int j = 0; j < ndev; j++)
				on |= c->device == dev[j];
		}
		else if (c != NULL)
		{
			/* being made: by an earlier input of this request (a self join) */
			for (int b = 0; b < a; b++)
				on |= slot->resident_make[b] && slot->resident_tag[b] == c->tag;
		}
		else if (ndev == 1 && (c = ResidentNew(slot, a, dev[0])) != NULL)
			slot->resident_make[a] = on = true;
		if (!on)
			continue;
		slot->resident_tag[a] = c->tag;
		c->uses++;
		c->last_used_ms = odp_now_ms();
	}
}

/* See service_resident.h. */
void
OdpResidentRelease(OdpServiceSlot *slot)
{
	for (int a = 0; a < ODP_CALL_MAX_ARRAYS; a++)
	{
		OdpServiceResident *c;

		if (slot->resident_tag[a] == 0)
			continue;
		c = ResidentByTag(slot->resident_tag[a]);
		slot->resident_tag[a] = 0;
		if (c == NULL)
			continue;			/* forgotten with its device */
		c->uses--;
		if (slot->resident_make[a] && atomic_load(&slot->resident_made[a]))
			c->ready = true;
		/* not made: the engine holds nothing to free */
		if (!c->ready && c->uses == 0)
			ResidentFree(c, false);
	}
}

/* See service_resident.h. */
void
OdpResidentForget(int d)
{
	for (int r = 0; r < ODP_SERVICE_RESIDENT; r++)
	{
		OdpServiceResident *c = &OdpService->resident[r];

		if (c->tag == 0 || (d >= 0 && c->device != d))
			continue;
		/* running requests that name it find no copy at their release */
		OdpService->devices[c->device].resident -= c->bytes;
		memset(c, 0, sizeof(*c));
	}
}

/* See service_resident.h. */
void
OdpResidentSweep(void)
{
	struct
	{
		uint64_t	tag;
		int32_t		cache_slot;
		uint64_t	cache_generation;
	}			idle[ODP_SERVICE_RESIDENT];
	int			n = 0;

	LWLockAcquire(OdpService->lock, LW_SHARED);
	for (int r = 0; r < ODP_SERVICE_RESIDENT; r++)
	{
		OdpServiceResident *c = &OdpService->resident[r];

		if (c->tag != 0 && c->ready && c->uses == 0)
		{
			idle[n].tag = c->tag;
			idle[n].cache_slot = c->cache_slot;
			idle[n].cache_generation = c->cache_generation;
			n++;
		}
	}
	LWLockRelease(OdpService->lock);

	/* the cache's lock is never taken under the service's */
	for (int i = 0; i < n; i++)
		if (OdpTableCacheLive(idle[i].cache_slot, idle[i].cache_generation))
			idle[i].tag = 0;
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
	{
		OdpServiceResident *c = idle[i].tag != 0 ? ResidentByTag(idle[i].tag) : NULL;

		if (c != NULL && c->uses == 0)
			ResidentFree(c, true);
	}
	LWLockRelease(OdpService->lock);
}

/* See service_resident.h. */
int
OdpResidentDevice(int cache_slot, uint64_t generation)
{
	int			ordinal = -1;

	if (OdpService == NULL)
		return -1;
	LWLockAcquire(OdpService->lock, LW_SHARED);
	/* a lost engine process took its copies; its successor forgets them at READY */
	for (int r = 0; r < ODP_SERVICE_RESIDENT && ordinal < 0 && OdpService->engine_ready; r++)
	{
		OdpServiceResident *c = &OdpService->resident[r];

		if (c->tag != 0 && c->ready && c->cache_slot == cache_slot &&
			c->cache_generation == generation)
			ordinal = OdpService->devices[c->device].ordinal;
	}
	LWLockRelease(OdpService->lock);
	return ordinal;
}
