/*-------------------------------------------------------------------------
 *
 * service_worker.c
 *	  The GPU service's background worker: it initialises CUDA once (one
 *	  context per device, cuBLAS), then queues every session's requests,
 *	  admits them as GPU memory allows and runs each on an engine thread
 *	  of its own (service_thread.c).
 *
 * Only this file's main thread calls PostgreSQL.  Each device has a
 * budget (odp_gpu.gpu_memory_limit of the server's configuration, or 90%
 * of the memory free once the contexts exist: the rest is left to the
 * CUDA libraries' own allocations and to other programs).  A request
 * fits when the free part of the budget holds what it wishes for
 * (odp_call_memory_wish, capped at the budget); it then reserves that or
 * more, a share of the free memory that leaves room for the requests
 * behind it (the engine runs faster with room: fewer chunks and
 * blocks), capped at its session's odp_gpu.gpu_memory_limit, and runs
 * with that as its engine budget, so a request larger than the budget
 * runs in chunks as it would alone.  Requests are admitted in order of
 * submission: one that does not fit waits, and so do the later ones for
 * its device.  A request whose session lists several devices goes to the
 * one with the least work, or is split over all of them when they are
 * idle.  Every 100 ms, and whenever an engine thread ends, the loop also
 * looks for backends that died, whose requests it cancels.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include "miscadmin.h"
#include "odp_pearson.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "service/service.h"
#include "service/service_objects.h"
#include "service/service_shmem.h"
#include "service/service_staging.h"
#include "settings.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procsignal.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* How often the loop looks for dead backends without being woken. */
#define SERVICE_TICK_MS 100
/* The CPU engine's budget when odp_gpu.gpu_memory_limit is 0. */
#define SERVICE_CPU_BUDGET ((size_t) 1 << 40)

static volatile sig_atomic_t got_sigterm = false;
/* A device's context could not be rebuilt here: exit once nothing runs. */
static bool service_restart = false;
static pthread_t *service_threads;
/*
 * The backends' input segments mapped in place (shared_handle), each
 * with the number of slots' arrays that use it: a backend's next request
 * may name a segment its previous one, not yet released, still maps.
 */
typedef struct ServiceMapping
{
	uint32		handle;
	int			refs;
	dsm_segment *seg;
} ServiceMapping;

static ServiceMapping *service_mappings;
static int	service_nmappings;	/* capacity: nslots x ODP_CALL_MAX_ARRAYS */
/* Each device's free memory once its context existed, for its budget. */
static size_t service_free_memory[ODP_MAX_GPUS];

static void
ServiceSigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/* Sets the budgets from the devices' free memory and the settings. */
static void
ServiceBudgets(void)
{
	size_t		limit = (size_t) odp_gpu_memory_limit_mb * 1024 * 1024;

	for (int d = 0; d < OdpService->ndevices; d++)
	{
		OdpServiceDevice *dev = &OdpService->devices[d];

		if (limit > 0)
			dev->budget = limit;
		else if (OdpService->cpu_engine)
			dev->budget = SERVICE_CPU_BUDGET;
		else
			dev->budget = (size_t) (service_free_memory[d] * 0.90);
	}
}

/*
 * Page-locks the staging area for the GPUs, once for the service's life:
 * every input written there then copies at the bus's speed, and no call
 * locks its pages again.  Without it copies are pageable, and slower.
 */
static void
ServiceLockStaging(void)
{
	OdpContext	ctx;
	double		t0 = odp_now_ms();
	bool		locked;

	if (!OdpStagingConfigured())
		return;
	memset(&ctx, 0, sizeof(ctx));
	locked = odp_gpu_host_area(&ctx, OdpStagingBase(), OdpStagingBytes(), true) == ODP_OK;
	OdpStagingSetLocked(locked);
	if (locked)
		ereport(LOG,
				(errmsg("odp_gpu service: page-locked the staging area (%zu MB) in %.0f ms",
						OdpStagingBytes() >> 20, odp_now_ms() - t0)));
	else
		ereport(LOG,
				(errmsg("odp_gpu service: inputs copy to the GPU from pageable memory: %s",
						ctx.message)));
}

/*
 * Initialises the devices of odp_gpu.devices (every one of the host by
 * default): a context on each, cuBLAS, the budgets.  With no usable GPU
 * the service runs with no device and says why.
 */
static void
ServiceInitDevices(void)
{
	OdpContext	ctx;
	int			count = 0,
				driver = 0,
				runtime = 0;
	int			ids[ODP_DEVICES_MAX];
	int			listed;
	int			n = 0;

	OdpService->cpu_engine = odp_service_engine == ODP_SERVICE_ENGINE_CPU;
	OdpService->why[0] = '\0';
	OdpService->driver_version = OdpService->runtime_version = 0;
	if (OdpService->cpu_engine)
	{
		OdpServiceDevice *dev = &OdpService->devices[0];

		memset(dev, 0, sizeof(*dev));
		dev->ordinal = 0;
		strlcpy(dev->name, "CPU engine (odp_gpu.service_engine = cpu)", sizeof(dev->name));
		OdpService->ndevices = 1;
		OdpService->blas_ready = true;
		ServiceBudgets();
		return;
	}
	memset(&ctx, 0, sizeof(ctx));
	if (odp_gpu_probe(&ctx, &count, &driver, &runtime) != ODP_OK)
	{
		strlcpy(OdpService->why, ctx.message[0] ? ctx.message : "no usable GPU",
				sizeof(OdpService->why));
		OdpService->ndevices = 0;
		return;
	}
	OdpService->driver_version = driver;
	OdpService->runtime_version = runtime;
	listed = OdpDeviceList(ids);
	if (listed < 0)
	{
		listed = Min(count, ODP_MAX_GPUS);
		for (int i = 0; i < listed; i++)
			ids[i] = i;
	}
	for (int i = 0; i < listed; i++)
	{
		OdpGpuInfo info;
		bool		seen = false;

		for (int j = 0; j < n; j++)
			seen |= OdpService->devices[j].ordinal == ids[i];
		if (seen)
			continue;
		memset(&ctx, 0, sizeof(ctx));
		if (ids[i] >= count || odp_gpu_device_info(&ctx, ids[i], &info) != ODP_OK)
		{
			ereport(LOG,
					(errmsg("odp_gpu service: device %d is not usable: %s", ids[i],
							ctx.message[0] ? ctx.message : "no such device")));
			continue;
		}
		memset(&OdpService->devices[n], 0, sizeof(OdpServiceDevice));
		OdpService->devices[n].ordinal = ids[i];
		strlcpy(OdpService->devices[n].name, info.name, ODP_SERVICE_NAME_LEN);
		OdpService->devices[n].cc_major = info.cc_major;
		OdpService->devices[n].cc_minor = info.cc_minor;
		OdpService->devices[n].multiprocessors = info.multiprocessors;
		OdpService->devices[n].total_memory = info.total_memory;
		service_free_memory[n] = info.free_memory;
		n++;
	}
	OdpService->ndevices = n;
	if (n == 0)
	{
		strlcpy(OdpService->why, "none of the devices of odp_gpu.devices is usable",
				sizeof(OdpService->why));
		return;
	}
	ServiceLockStaging();
	memset(&ctx, 0, sizeof(ctx));
	ctx.gpu_id = OdpService->devices[0].ordinal;
	OdpService->blas_ready = odp_gpu_pearson_available(&ctx) == ODP_OK;
	if (!OdpService->blas_ready)
		ereport(LOG,
				(errmsg("odp_gpu service: cuBLAS is not usable, correlations compute on the CPU: %s",
						ctx.message)));
	ServiceBudgets();
}

/* Whether a backend's process is gone. */
static bool
ServicePidDead(int pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

static bool
ServiceBackendDead(const OdpServiceSlot *slot)
{
	return ServicePidDead(slot->backend_pid);
}

/* Cancels a request: its thread stops at its next poll. */
static void
ServiceCancel(OdpServiceSlot *slot, bool abandon)
{
	atomic_store(&slot->cancel, 1);
	if (abandon)
		atomic_store(&slot->abandoned, 1);
	odp_ring_wake(slot->in);
	odp_ring_wake(slot->out);
}

/* Frees a slot (lock held) and tells the backends waiting for one. */
static void
ServiceFree(OdpServiceSlot *slot)
{
	slot->state = ODP_SLOT_FREE;
	ConditionVariableBroadcast(&OdpService->slot_freed);
}

/* The index of the service's device with a CUDA ordinal, or -1. */
static int
ServiceDeviceIndex(int ordinal)
{
	if (OdpService->cpu_engine)
		return 0;
	for (int d = 0; d < OdpService->ndevices; d++)
		if (OdpService->devices[d].ordinal == ordinal)
			return d;
	return -1;
}

/*
 * The service's devices a request may use (indexes, distinct), from its
 * session's device list; returns how many (0: none of them is held).
 */
static int
ServiceCandidates(const OdpServiceSlot *slot, int *cand)
{
	const OdpContext *s = &slot->settings;
	int			n = 0;

	if (s->gpu_count == ODP_GPUS_ALL)
	{
		for (int d = 0; d < OdpService->ndevices; d++)
			cand[n++] = d;
		return n;
	}
	for (int i = 0; i < (s->gpu_count == 0 ? 1 : s->gpu_count); i++)
	{
		int			d = ServiceDeviceIndex(s->gpu_count == 0 ? s->gpu_id : s->gpu_ids[i]);
		bool		seen = false;

		if (d < 0)
			continue;
		for (int j = 0; j < n; j++)
			seen |= cand[j] == d;
		if (!seen)
			cand[n++] = d;
	}
	return n;
}

/* Unmaps the slot's input segments (their last user detaches them). */
static void
ServiceUnmapInputs(int i)
{
	OdpServiceSlot *slot = &OdpService->slots[i];

	for (int a = 0; a < ODP_CALL_MAX_ARRAYS; a++)
	{
		if (slot->mapped[a] == NULL)
			continue;
		slot->mapped[a] = NULL;
		if (slot->staged[a])
		{
			OdpStagingRelease(slot->shared_offset[a]);
			continue;
		}
		for (int m = 0; m < service_nmappings; m++)
		{
			ServiceMapping *map = &service_mappings[m];

			if (map->refs == 0 || map->handle != slot->shared_handle[a])
				continue;
			if (--map->refs == 0)
				dsm_detach(map->seg);
			break;
		}
	}
}

/*
 * Maps the backend's input segments of slot i where the engine reads
 * them; false (nothing mapped) when one is gone, as when its backend
 * gave the request up meanwhile.
 */
static bool
ServiceMapInputs(int i)
{
	OdpServiceSlot *slot = &OdpService->slots[i];
	OdpCallArray arrays[ODP_CALL_MAX_ARRAYS];
	int			n = odp_call_inputs(&slot->call, arrays);
	volatile bool ok = true;

	PG_TRY();
	{
		for (int a = 0; a < ODP_CALL_MAX_ARRAYS && ok; a++)
		{
			ServiceMapping *map = NULL;
			ServiceMapping *free_entry = NULL;

			if (slot->staged[a])
			{
				/* held until the request ends, even if its backend goes */
				ok = a < n && OdpStagingAcquire(slot->shared_offset[a], arrays[a].bytes,
												slot->backend_pid);
				if (ok)
					slot->mapped[a] = OdpStagingBase() + slot->shared_offset[a];
				continue;
			}
			if (slot->shared_handle[a] == 0)
				continue;
			for (int m = 0; m < service_nmappings && map == NULL; m++)
			{
				if (service_mappings[m].refs > 0 &&
					service_mappings[m].handle == slot->shared_handle[a])
					map = &service_mappings[m];
				else if (service_mappings[m].refs == 0 && free_entry == NULL)
					free_entry = &service_mappings[m];
			}
			if (map == NULL && free_entry != NULL)
			{
				dsm_segment *seg = dsm_attach(slot->shared_handle[a]);

				if (seg != NULL)
				{
					map = free_entry;
					map->handle = slot->shared_handle[a];
					map->seg = seg;
					map->refs = 0;
				}
			}
			if (map == NULL)
				ok = false;
			else
			{
				map->refs++;
				slot->mapped[a] = (char *) dsm_segment_address(map->seg) +
					slot->shared_offset[a];
			}
		}
	}
	PG_CATCH();
	{
		FlushErrorState();
		ok = false;
	}
	PG_END_TRY();
	if (!ok)
		ServiceUnmapInputs(i);
	return ok;
}

/* Starts the slot's engine thread with every signal blocked in it. */
static bool
ServiceStartThread(int i)
{
	sigset_t	all,
				old;
	int			rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&service_threads[i], NULL, odp_service_thread_main,
						&OdpService->slots[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		ereport(LOG,
				(errmsg("odp_gpu service: could not start an engine thread: %s",
						strerror(rc))));
	return rc == 0;
}

/*
 * Admits the slot on the given devices with reserve bytes on each
 * (lock held), or refuses it with message when ndev is 0; split runs it
 * over the session's device list (repeats included) or, for all, over
 * the given devices.
 */
static void
ServiceAdmit(int i, const int *dev, int ndev, size_t reserve, bool split,
			 const char *message)
{
	OdpServiceSlot *slot = &OdpService->slots[i];
	OdpContext *ctx = &slot->run;

	*ctx = slot->settings;
	ctx->device = OdpService->cpu_engine ? ODP_DEVICE_CPU : ODP_DEVICE_GPU;
	ctx->message[0] = '\0';
	if (message != NULL)
		strlcpy(ctx->message, message, sizeof(ctx->message));
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	ctx->gpu_memory_limit = reserve;
	if (split && slot->settings.gpu_count > 1)
		;						/* the session's own list, repeats included */
	else if (ndev == 1)
	{
		ctx->gpu_id = OdpService->devices[dev[0]].ordinal;
		ctx->gpu_count = 0;
	}
	else if (ndev > 1)
	{
		ctx->gpu_count = ndev;
		for (int j = 0; j < ndev; j++)
			ctx->gpu_ids[j] = OdpService->devices[dev[j]].ordinal;
	}
	slot->ndevices = ndev;
	for (int j = 0; j < ndev; j++)
	{
		slot->devices[j] = OdpService->devices[dev[j]].ordinal;
		OdpService->devices[dev[j]].reserved += reserve;
		OdpService->devices[dev[j]].running++;
	}
	slot->reserved = reserve;
	slot->started_ms = odp_now_ms();
	slot->run_generation = OdpService->generation;
	atomic_store(&slot->progress_done, 0);
	atomic_store(&slot->gpu_fault, 0);
	slot->state = ODP_SLOT_RUNNING;
	if (message == NULL && !ServiceMapInputs(i))
		strlcpy(ctx->message, "the odp_gpu service could not map the call's inputs",
				sizeof(ctx->message));
	if (!ServiceStartThread(i))
	{
		/* no thread: as if it ended at once, with an error for the backend */
		atomic_store(&slot->finished, 1);
		ServiceCancel(slot, true);
	}
}

/* Releases what a finished request held (lock held). */
static void
ServiceRelease(int i)
{
	OdpServiceSlot *slot = &OdpService->slots[i];

	pthread_join(service_threads[i], NULL);
	ServiceUnmapInputs(i);
	for (int j = 0; j < slot->ndevices; j++)
	{
		int			d = ServiceDeviceIndex(slot->devices[j]);

		if (d < 0)
			continue;
		if (atomic_load(&slot->gpu_fault) && !OdpService->cpu_engine)
			OdpService->devices[d].needs_check = true;
		OdpService->devices[d].reserved -= slot->reserved;
		OdpService->devices[d].running--;
	}
	/* ndevices stays: the activity view shows where it ran while it sends */
	slot->reserved = 0;
	slot->state = ODP_SLOT_DONE;
}

/* Orders slot indexes by ticket (insertion sort: a few dozen slots). */
static void
ServiceSortByTicket(int *idx, int n)
{
	for (int a = 1; a < n; a++)
	{
		int			v = idx[a];
		int			b = a - 1;

		while (b >= 0 && OdpService->slots[idx[b]].ticket > OdpService->slots[v].ticket)
		{
			idx[b + 1] = idx[b];
			b--;
		}
		idx[b + 1] = v;
	}
}

/*
 * What a request reserves on a device now, or 0 when it does not fit:
 * at least its wish (capped at the budget), and more where memory is
 * free, since the engine runs faster with room (fewer chunks and
 * blocks): a share of the free memory that leaves room for the requests
 * behind it.
 */
static size_t
ServiceShare(const OdpServiceDevice *dev, size_t wish, int behind)
{
	size_t		unreserved = dev->budget - dev->reserved;
	size_t		need = Min(wish, dev->budget);

	if (unreserved < need)
		return 0;
	return Max(need, unreserved / (size_t) (2 + behind));
}

/* Admits queued requests in order of submission as memory allows. */
static void
ServiceAdmitQueued(void)
{
	int		   *queued = palloc(sizeof(int) * OdpService->nslots);
	int			nq = 0;
	bool		blocked[ODP_MAX_GPUS] = {0};
	int			ahead[ODP_MAX_GPUS] = {0};

	for (int i = 0; i < OdpService->nslots; i++)
		if (OdpService->slots[i].state == ODP_SLOT_QUEUED)
			queued[nq++] = i;
	ServiceSortByTicket(queued, nq);
	for (int d = 0; d < OdpService->ndevices; d++)
	{
		OdpService->devices[d].queued = 0;
		blocked[d] = OdpService->devices[d].needs_check || service_restart;
	}
	for (int q = 0; q < nq; q++)
	{
		int			i = queued[q];
		OdpServiceSlot *slot = &OdpService->slots[i];
		int			cand[ODP_MAX_GPUS];
		int			ncand = ServiceCandidates(slot, cand);
		size_t		wish = odp_call_memory_wish(&slot->call);
		size_t		cap = slot->settings.gpu_memory_limit;
		bool		idle = true;
		int			best = -1;

		if (ncand == 0)
		{
			ServiceAdmit(i, NULL, 0, 0, false,
						 "none of the devices this session's odp_gpu.device_id or odp_gpu.devices "
						 "names is one the odp_gpu service holds (see odp_gpu_info())");
			continue;
		}
		for (int c = 0; c < ncand; c++)
			idle &= OdpService->devices[cand[c]].running == 0 && !blocked[cand[c]] &&
				ahead[cand[c]] == 0;
		if ((ncand > 1 || slot->settings.gpu_count > 1) && idle)
		{
			/* alone on the session's devices: split over all of them */
			size_t		reserve = SIZE_MAX;

			for (int c = 0; c < ncand; c++)
				reserve = Min(reserve, ServiceShare(&OdpService->devices[cand[c]], wish,
													nq - q - 1));
			if (cap > 0)
				reserve = Min(reserve, cap);
			if (reserve > 0)
			{
				ServiceAdmit(i, cand, ncand, reserve, true, NULL);
				continue;
			}
		}
		for (int c = 0; c < ncand; c++)
		{
			int			d = cand[c];
			int			load = OdpService->devices[d].running + ahead[d];

			if (blocked[d])
				continue;
			if (best < 0 || load < OdpService->devices[best].running + ahead[best])
				best = d;
		}
		if (best < 0)
		{
			/* every device it may use has an earlier request waiting */
			OdpService->devices[cand[0]].queued++;
			continue;
		}
		{
			OdpServiceDevice *dev = &OdpService->devices[best];
			size_t		reserve = ServiceShare(dev, wish, nq - q - 1);

			if (cap > 0 && reserve > 0)
				reserve = Min(reserve, cap);
			if (reserve > 0)
			{
				ServiceAdmit(i, &best, 1, reserve, false, NULL);
				continue;
			}
			blocked[best] = true;
			ahead[best]++;
			dev->queued++;
		}
	}
	pfree(queued);
}

/*
 * Checks the devices on which a call failed with a CUDA error, once no
 * call runs on them, and rebuilds a poisoned context (lock held on entry
 * and exit, released while CUDA works).  Until then nothing is admitted
 * there: a poisoned context would fail every call.
 */
static void
ServiceRecoverDevices(void)
{
	for (int d = 0; d < OdpService->ndevices; d++)
	{
		OdpServiceDevice *dev = &OdpService->devices[d];
		OdpContext	ctx;
		OdpStatus	status;
		bool		rebuilt = false;
		int			ordinal = dev->ordinal;

		if (!dev->needs_check || dev->running > 0)
			continue;
		LWLockRelease(OdpService->lock);
		memset(&ctx, 0, sizeof(ctx));
		status = odp_gpu_device_recover(&ctx, ordinal, &rebuilt);
		LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
		if (status != ODP_OK)
		{
			/*
			 * Some drivers give a device back only to a new process: the
			 * service restarts once nothing runs; the queued requests
			 * wait for the new one (ServiceResetSlots).
			 */
			ereport(LOG,
					(errmsg("odp_gpu service: restarting to rebuild the context of device %d: %s",
							ordinal, ctx.message)));
			service_restart = true;
		}
		else if (rebuilt)
		{
			ereport(LOG,
					(errmsg("odp_gpu service: rebuilt the context of device %d after a fault",
							ordinal)));
		}
		dev->needs_check = false;
	}
}

/* One pass over the slots (lock held): intake, reaping, deaths, admission. */
static void
ServiceSchedule(void)
{
	for (int i = 0; i < OdpService->nslots; i++)
	{
		OdpServiceSlot *slot = &OdpService->slots[i];

		switch ((OdpSlotState) slot->state)
		{
			case ODP_SLOT_FREE:
			case ODP_SLOT_FILLING:
				break;
			case ODP_SLOT_SUBMITTED:
				if (atomic_load(&slot->abandoned))
					ServiceFree(slot);
				else
					slot->state = ODP_SLOT_QUEUED;
				break;
			case ODP_SLOT_QUEUED:
				if (atomic_load(&slot->cancel) || atomic_load(&slot->abandoned) ||
					ServiceBackendDead(slot))
					ServiceFree(slot);
				break;
			case ODP_SLOT_RUNNING:
				if (atomic_load(&slot->finished))
					ServiceRelease(i);
				else if (!atomic_load(&slot->abandoned) && ServiceBackendDead(slot))
					ServiceCancel(slot, true);
				break;
			case ODP_SLOT_DONE:
				break;
		}
		if (slot->state == ODP_SLOT_DONE &&
			(atomic_load(&slot->backend_done) || atomic_load(&slot->abandoned) ||
			 ServiceBackendDead(slot)))
			ServiceFree(slot);
	}
	ServiceRecoverDevices();
	ServiceAdmitQueued();
}

/*
 * Frees the node states backends dropped, and at most once a second
 * those of sessions that ended (outside the lock: freeing device memory
 * waits for the device).
 */
static void
ServiceReapObjects(void)
{
	static double last = 0.0;
	double		now = odp_now_ms();
	int			owners[ODP_SERVICE_DROPS];
	int64_t		handles[ODP_SERVICE_DROPS];
	int			n;

	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	n = OdpService->ndrops;
	for (int i = 0; i < n; i++)
	{
		owners[i] = OdpService->drops[i].owner;
		handles[i] = OdpService->drops[i].handle;
	}
	OdpService->ndrops = 0;
	LWLockRelease(OdpService->lock);
	for (int i = 0; i < n; i++)
		odp_service_object_drop(owners[i], handles[i]);
	if (now - last < 1000.0)
		return;
	last = now;
	(void) odp_service_objects_reap(ServicePidDead);
}

/*
 * Takes over the slots at start.  Queued requests stay queued: their
 * inputs wait in their rings, and they run in this generation.  Requests
 * an earlier run started have no thread here; their backends see that
 * the generation that ran them is gone and give up on them.
 */
static void
ServiceResetSlots(void)
{
	for (int i = 0; i < OdpService->nslots; i++)
	{
		OdpServiceSlot *slot = &OdpService->slots[i];

		if (slot->state == ODP_SLOT_FREE || slot->state == ODP_SLOT_FILLING ||
			slot->state == ODP_SLOT_SUBMITTED || slot->state == ODP_SLOT_QUEUED)
			continue;
		ServiceCancel(slot, true);
		ServiceFree(slot);
	}
	for (int d = 0; d < ODP_MAX_GPUS; d++)
	{
		OdpService->devices[d].reserved = 0;
		OdpService->devices[d].running = 0;
		OdpService->devices[d].queued = 0;
	}
}

/* Whether no request runs (the lock not held: a momentary answer). */
static bool
ServiceIdle(void)
{
	for (int i = 0; i < OdpService->nslots; i++)
		if (OdpService->slots[i].state == ODP_SLOT_RUNNING)
			return false;
	return true;
}

/* Cancels every running request and waits for its thread, then exits. */
static void
ServiceStop(void)
{
	atomic_store(&odp_service_stopping, 1);
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	OdpService->state = ODP_SERVICE_STOPPING;
	for (int i = 0; i < OdpService->nslots; i++)
		if (OdpService->slots[i].state == ODP_SLOT_RUNNING)
			ServiceCancel(&OdpService->slots[i], false);
	LWLockRelease(OdpService->lock);

	/*
	 * The threads stop at the engine's next poll; joined before exiting,
	 * so that no thread runs while the process tears CUDA down.
	 */
	for (int i = 0; i < OdpService->nslots; i++)
		if (OdpService->slots[i].state == ODP_SLOT_RUNNING)
			pthread_join(service_threads[i], NULL);
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	for (int i = 0; i < OdpService->nslots; i++)
		if (OdpService->slots[i].state == ODP_SLOT_RUNNING)
		{
			atomic_store(&OdpService->slots[i].abandoned, 1);
			ServiceFree(&OdpService->slots[i]);
		}
	OdpService->state = ODP_SERVICE_DOWN;
	OdpService->pid = 0;
	LWLockRelease(OdpService->lock);
	ConditionVariableBroadcast(&OdpService->state_changed);
}

/* See service.h. */
void
OdpServiceMain(Datum arg)
{
	pqsignal(SIGTERM, ServiceSigterm);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* no database: only so that pg_stat_activity shows the service */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	/*
	 * Every request's inputs and the engine's host buffers are allocated
	 * and freed by a fresh engine thread.  By default glibc gives each
	 * thread an arena of its own and maps every large block anew, so each
	 * call paid its page faults again: a 54 MB correlation took twice as
	 * long as in a backend (measured on the H100 host).  One arena, no
	 * mapping per block and freed memory kept up to 1 GB make the
	 * service's buffers as warm as a backend's.
	 */
	(void) mallopt(M_ARENA_MAX, 1);
	(void) mallopt(M_MMAP_MAX, 0);
	(void) mallopt(M_TRIM_THRESHOLD, 1 << 30);
	if (OdpService == NULL)
		proc_exit(0);			/* not preloaded: nothing to serve */
	service_threads = MemoryContextAllocZero(TopMemoryContext,
											 sizeof(pthread_t) * OdpService->nslots);
	service_nmappings = OdpService->nslots * ODP_CALL_MAX_ARRAYS;
	service_mappings = MemoryContextAllocZero(TopMemoryContext,
											  sizeof(ServiceMapping) * service_nmappings);

	/* what a service before this one was reading, nothing reads now */
	OdpStagingResetReaders();
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	ServiceResetSlots();
	OdpService->state = ODP_SERVICE_STARTING;
	OdpService->pid = MyProcPid;
	OdpService->procno = MyProc->pgprocno;
	OdpService->generation++;
	OdpService->started_at = GetCurrentTimestamp();
	LWLockRelease(OdpService->lock);
	ConditionVariableBroadcast(&OdpService->state_changed);

	/* CUDA is initialised here, outside the lock: it takes a while */
	ServiceInitDevices();

	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	OdpService->state = ODP_SERVICE_READY;
	LWLockRelease(OdpService->lock);
	ConditionVariableBroadcast(&OdpService->state_changed);
	ereport(LOG,
			(errmsg("odp_gpu service ready: %d device%s%s%s", OdpService->ndevices,
					OdpService->ndevices == 1 ? "" : "s",
					OdpService->why[0] ? ", " : "", OdpService->why)));

	while (!got_sigterm && !(service_restart && ServiceIdle()))
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 SERVICE_TICK_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);

		/*
		 * Connected, the service takes part in the server's barriers
		 * (DROP DATABASE waits for every process to absorb one): absorb
		 * them here, the only interrupt it takes from PostgreSQL.
		 */
		if (ProcSignalBarrierPending)
			ProcessProcSignalBarrier();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
			ServiceBudgets();
			LWLockRelease(OdpService->lock);
		}
		LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
		ServiceSchedule();
		LWLockRelease(OdpService->lock);
		ServiceReapObjects();
	}
	ServiceStop();
	proc_exit(1);				/* 1: the postmaster restarts the worker */
}
