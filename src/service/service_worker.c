/*-------------------------------------------------------------------------
 *
 * service_worker.c
 *	  The GPU service's background worker: it starts the engine process
 *	  (service_engine.h), which holds CUDA (one context per device,
 *	  cuBLAS), then queues every session's requests, admits them as GPU
 *	  memory allows and sends each to the engine process, which runs it on
 *	  one of its threads (service_thread.c), kept from request to request.
 *	  The worker itself never touches CUDA: what may crash runs outside
 *	  PostgreSQL's processes.
 *
 * When the engine process ends (a signal, an exit) or stops answering
 * (odp_gpu.engine_timeout: the watchdog kills it), the requests it ran
 * fail with a message that says so, the queued ones wait, and a new
 * engine process starts at once (at most one start a second).  Each device has a
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
#include <signal.h>

#include "miscadmin.h"
#include "odp_pearson.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "service/service.h"
#include "service/service_engine_proc.h"
#include "service/service_resident.h"
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
/* How long a stopping service waits for its engine process to exit. */
#define ENGINE_STOP_WAIT_MS 5000.0

static volatile sig_atomic_t got_sigterm = false;
/* A device's context could not be rebuilt: restart the engine when idle. */
static bool service_restart = false;
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
			dev->budget = (size_t) (OdpEngine->devices[d].free_memory * 0.90);
	}
}

/*
 * Takes the devices the engine process found (its READY): the shared
 * state odp_gpu_info() shows, the budgets (lock held).
 */
static void
ServiceTakeDevices(void)
{
	OdpService->cpu_engine = OdpEngine->cpu_engine;
	strlcpy(OdpService->why, OdpEngine->why, sizeof(OdpService->why));
	OdpService->driver_version = OdpEngine->driver_version;
	OdpService->runtime_version = OdpEngine->runtime_version;
	OdpService->blas_ready = OdpEngine->blas_ready;
	OdpService->knn_cost = OdpEngine->knn_cost;
	OdpService->ndevices = Min(OdpEngine->ndevices, ODP_MAX_GPUS);
	for (int d = 0; d < OdpService->ndevices; d++)
	{
		OdpServiceDevice *dev = &OdpService->devices[d];
		const OdpEngineDevice *found = &OdpEngine->devices[d];

		memset(dev, 0, sizeof(*dev));
		dev->ordinal = found->ordinal;
		strlcpy(dev->name, found->name, sizeof(dev->name));
		dev->cc_major = found->cc_major;
		dev->cc_minor = found->cc_minor;
		dev->multiprocessors = found->multiprocessors;
		dev->total_memory = found->total_memory;
	}
	OdpStagingSetLocked(OdpEngine->staging_locked);
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

/*
 * Frees a slot (lock held) and wakes one backend waiting for one: waking
 * them all for each slot made every waiter scan the slots under the lock
 * (128 clients over 32 slots served fewer queries than 32 clients).  A
 * waiter that leaves without the slot leaves it to the others' next look,
 * within their tick.
 */
static void
ServiceFree(OdpServiceSlot *slot)
{
	slot->state = ODP_SLOT_FREE;
	ConditionVariableSignal(&OdpService->slot_freed);
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

/* Hands the slot to the engine process; false when it is gone. */
static bool
ServiceSendRun(int i)
{
	OdpEngineMsg msg;

	memset(&msg, 0, sizeof(msg));
	msg.kind = ODP_ENGINE_RUN;
	msg.slot = i;
	atomic_store(&OdpService->slots[i].beat_ms, (int64_t) odp_now_ms());
	return OdpService->engine_ready && OdpEngineProcSend(&msg);
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
	OdpResidentAdmit(slot, dev, ndev);
	slot->started_ms = odp_now_ms();
	slot->run_generation = OdpService->generation;
	atomic_store(&slot->progress_done, 0);
	atomic_store(&slot->gpu_fault, 0);
	slot->state = ODP_SLOT_RUNNING;
	if (message == NULL && !ServiceMapInputs(i))
		strlcpy(ctx->message, "the odp_gpu service could not map the call's inputs",
				sizeof(ctx->message));
	if (!ServiceSendRun(i))
	{
		/* the engine process is going: the backend hears it from its end */
		strlcpy(slot->lost, "the odp_gpu engine process ended before this call could start; "
				"the service restarts it (odp_gpu_info() shows it)", sizeof(slot->lost));
		atomic_store(&slot->finished, 1);
		ServiceCancel(slot, false);
	}
}

/* Releases what a finished request held (lock held). */
static void
ServiceRelease(int i)
{
	OdpServiceSlot *slot = &OdpService->slots[i];

	ServiceUnmapInputs(i);
	OdpResidentRelease(slot);
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
	size_t		unreserved = OdpResidentUnreserved(dev);
	size_t		need = Min(wish, dev->budget);

	if (unreserved < need)
		return 0;
	return Max(need, unreserved / (size_t) (2 + behind));
}

/*
 * A second run after a GPU fault (slot->alone) goes alone, once all else
 * has ended: a call that faults again then harms no other, and the calls
 * its first fault failed get their answers.  Of the nq queued requests
 * (by ticket), how many admission may consider: none while a second run
 * runs, or while one waits for the running requests and the devices'
 * checks to end; only the first second run (moved to queued[0]) once
 * nothing runs and no device waits for its check; else all.
 */
static int
ServiceAloneFirst(int *queued, int nq)
{
	bool		running = false;

	for (int i = 0; i < OdpService->nslots; i++)
		if (OdpService->slots[i].state == ODP_SLOT_RUNNING && OdpService->slots[i].alone)
			return 0;
	/*
	 * The fault that failed a first run may have come from another
	 * device, and where a fault poisons the whole process, a device
	 * checked before that one's context is rebuilt still fails.
	 */
	for (int d = 0; d < OdpService->ndevices; d++)
		running |= OdpService->devices[d].running > 0 || OdpService->devices[d].needs_check ||
			OdpService->devices[d].checking;
	for (int q = 0; q < nq; q++)
	{
		if (!OdpService->slots[queued[q]].alone)
			continue;
		if (running)
			return 0;
		queued[0] = queued[q];
		return 1;
	}
	return nq;
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
		blocked[d] = OdpService->devices[d].needs_check || service_restart ||
			!OdpService->engine_ready;
	}
	nq = ServiceAloneFirst(queued, nq);
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
		if ((ncand > 1 || slot->settings.gpu_count > 1) && idle &&
			odp_call_one_device_ms(&slot->call) >= slot->settings.split_min_ms)
		{
			/* alone on the session's devices, and worth it: split over all of them */
			size_t		reserve = SIZE_MAX;

			for (int c = 0; c < ncand; c++)
			{
				/* table cache copies give way before a request waits */
				(void) OdpResidentEvict(cand[c], Min(wish, OdpService->devices[cand[c]].budget));
				reserve = Min(reserve, ServiceShare(&OdpService->devices[cand[c]], wish,
													nq - q - 1));
			}
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
		{
			/* the device that holds its cached inputs, where it has room */
			int			held = OdpResidentPreferred(slot, cand, ncand);

			if (held >= 0 && !blocked[held] &&
				ServiceShare(&OdpService->devices[held], wish, nq - q - 1) > 0)
				best = held;
		}
		if (best < 0)
		{
			/* every device it may use has an earlier request waiting */
			OdpService->devices[cand[0]].queued++;
			continue;
		}
		{
			OdpServiceDevice *dev = &OdpService->devices[best];
			size_t		reserve;

			/* table cache copies give way before a request waits */
			(void) OdpResidentEvict(best, Min(wish, dev->budget));
			reserve = ServiceShare(dev, wish, nq - q - 1);

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
 * Asks the engine process to check the devices on which a call failed
 * with a CUDA error, once no call runs on them (lock held); it rebuilds a
 * poisoned context and answers RECOVERED (ServiceRecovered).  Until then
 * nothing is admitted there: a poisoned context would fail every call.
 */
static void
ServiceRecoverDevices(void)
{
	for (int d = 0; d < OdpService->ndevices; d++)
	{
		OdpServiceDevice *dev = &OdpService->devices[d];
		OdpEngineMsg msg;

		if (!dev->needs_check || dev->checking || dev->running > 0 ||
			!OdpService->engine_ready)
			continue;
		memset(&msg, 0, sizeof(msg));
		msg.kind = ODP_ENGINE_RECOVER;
		msg.ordinal = dev->ordinal;
		dev->checking = OdpEngineProcSend(&msg);
	}
}

/* The engine process's answer to RECOVER (lock held). */
static void
ServiceRecovered(const OdpEngineMsg *msg)
{
	int			d = ServiceDeviceIndex(msg->ordinal);

	if (d < 0)
		return;
	if (msg->status != ODP_OK)
	{
		/*
		 * Some drivers give a device back only to a new process: the
		 * engine process restarts once nothing runs; the queued requests
		 * wait for the new one.
		 */
		ereport(LOG,
				(errmsg("odp_gpu service: restarting the engine process to rebuild the context of device %d: %s",
						msg->ordinal, msg->message)));
		service_restart = true;
	}
	if (msg->status != ODP_OK || msg->rebuilt)
		OdpResidentForget(d);	/* its context's memory went with it */
	if (msg->status == ODP_OK && msg->rebuilt)
		ereport(LOG,
				(errmsg("odp_gpu service: rebuilt the context of device %d after a fault",
						msg->ordinal)));
	OdpService->devices[d].needs_check = false;
	OdpService->devices[d].checking = false;
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
 * Hands the node states backends dropped to the engine process, which
 * frees them (and, by itself, those of sessions that ended).
 */
static void
ServiceDropObjects(void)
{
	OdpEngineMsg msgs[ODP_SERVICE_DROPS];
	int			n;

	if (!OdpService->engine_ready)
		return;
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	n = OdpService->ndrops;
	for (int i = 0; i < n; i++)
	{
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].kind = ODP_ENGINE_DROP;
		msgs[i].owner = OdpService->drops[i].owner;
		msgs[i].handle = OdpService->drops[i].handle;
	}
	OdpService->ndrops = 0;
	LWLockRelease(OdpService->lock);
	for (int i = 0; i < n; i++)
		(void) OdpEngineProcSend(&msgs[i]);
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

/* The engine process's READY: its devices, and the service ready. */
static void
ServiceEngineReady(void)
{
	bool		first;
	double		started_ms;

	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	/* a new engine process holds no copies */
	OdpResidentForget(-1);
	ServiceTakeDevices();
	OdpService->engine_ready = true;
	first = OdpService->state == ODP_SERVICE_STARTING;
	if (first)
		OdpService->state = ODP_SERVICE_READY;
	LWLockRelease(OdpService->lock);
	ConditionVariableBroadcast(&OdpService->state_changed);
	started_ms = OdpEngineReady();
	if (OdpEngine->notes[0] != '\0')
		ereport(LOG, (errmsg("odp_gpu service: %s", OdpEngine->notes)));
	if (OdpEngine->staging_locked)
		ereport(LOG,
				(errmsg("odp_gpu service: page-locked the staging area (%zu MB) in %.0f ms",
						OdpStagingBytes() >> 20, OdpEngine->staging_lock_ms)));
	ereport(LOG,
			(errmsg("odp_gpu service %s: %d device%s%s%s (engine process pid %d, started in %.0f ms)",
					first ? "ready" : "has a new engine process",
					OdpService->ndevices, OdpService->ndevices == 1 ? "" : "s",
					OdpService->why[0] ? ", " : "", OdpService->why,
					OdpEngineProcPid(), started_ms)));
}


/* Takes the engine process's messages. */
static void
ServiceEngineMessages(void)
{
	OdpEngineMsg msg;

	while (OdpEngineProcReceive(&msg))
	{
		switch ((OdpEngineMsgKind) msg.kind)
		{
			case ODP_ENGINE_READY:
				ServiceEngineReady();
				break;
			case ODP_ENGINE_RECOVERED:
				LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
				ServiceRecovered(&msg);
				LWLockRelease(OdpService->lock);
				break;
			default:
				/* DONE: the slot says it finished; the schedule reaps it */
				break;
		}
	}
}

/*
 * Cancels every running request, stops the engine process (killing it
 * when it does not exit in time), then frees the slots it ran.
 */
static void
ServiceStop(void)
{
	OdpEngineMsg msg;
	char		why[ODP_SERVICE_WHY_LEN];
	double		t0 = odp_now_ms();

	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	OdpService->state = ODP_SERVICE_STOPPING;
	LWLockRelease(OdpService->lock);

	/*
	 * The engine process cancels its threads itself, so that each knows it
	 * is the service stopping, not its backend, and says so; they stop at
	 * the engine's next poll, and the process exits after them.
	 */
	memset(&msg, 0, sizeof(msg));
	msg.kind = ODP_ENGINE_STOP;
	(void) OdpEngineProcSend(&msg);
	while (OdpEngineProcPid() != 0 && !OdpEngineProcReap(false, why, sizeof(why)))
	{
		if (odp_now_ms() - t0 > ENGINE_STOP_WAIT_MS)
		{
			OdpEngineProcKill();
			(void) OdpEngineProcReap(true, why, sizeof(why));
			break;
		}
		pg_usleep(1000);
	}
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	for (int i = 0; i < OdpService->nslots; i++)
		if (OdpService->slots[i].state == ODP_SLOT_RUNNING)
		{
			atomic_store(&OdpService->slots[i].abandoned, 1);
			ServiceFree(&OdpService->slots[i]);
		}
	OdpService->state = ODP_SERVICE_DOWN;
	OdpService->pid = 0;
	OdpService->engine_pid = 0;
	OdpService->engine_ready = false;
	LWLockRelease(OdpService->lock);
	ConditionVariableBroadcast(&OdpService->state_changed);
}

/*
 * The loop's wait: its latch, the postmaster's death and the engine
 * process's socket (made anew when the socket changes).
 */
static int
ServiceWait(WaitEventSet **set, int *set_sock)
{
	int			sock = OdpEngineProcSocket();
	WaitEvent	event;

	if (*set == NULL || sock != *set_sock)
	{
		if (*set != NULL)
			FreeWaitEventSet(*set);
		*set = CreateWaitEventSet(TopMemoryContext, 3);
		AddWaitEventToSet(*set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		AddWaitEventToSet(*set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
		if (sock >= 0)
			AddWaitEventToSet(*set, WL_SOCKET_READABLE, sock, NULL, NULL);
		*set_sock = sock;
	}
	return WaitEventSetWait(*set, SERVICE_TICK_MS, &event, 1, PG_WAIT_EXTENSION);
}

/* See service.h. */
void
OdpServiceMain(Datum arg)
{
	WaitEventSet *set = NULL;
	int			set_sock = -1;
	double		last_sweep_ms = 0.0;

	pqsignal(SIGTERM, ServiceSigterm);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* no database: only so that pg_stat_activity shows the service */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	if (OdpService == NULL)
		proc_exit(0);			/* not preloaded: nothing to serve */
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
	OdpService->engine_ready = false;
	OdpService->engine_pid = 0;
	LWLockRelease(OdpService->lock);
	ConditionVariableBroadcast(&OdpService->state_changed);

	/* CUDA starts in the engine process, which says READY when done */
	OdpEngineStart();
	while (!got_sigterm)
	{
		(void) ServiceWait(&set, &set_sock);
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
		ServiceEngineMessages();
		OdpEngineWatch();
		if (service_restart && ServiceIdle())
		{
			OdpEngineRestart("was restarted to rebuild a device's context");
			service_restart = false;
		}
		LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
		ServiceSchedule();
		LWLockRelease(OdpService->lock);
		ServiceDropObjects();
		/* copies of gone entries: once a tick, not at every request */
		if (odp_now_ms() - last_sweep_ms >= SERVICE_TICK_MS)
		{
			OdpResidentSweep();
			last_sweep_ms = odp_now_ms();
		}
	}
	ServiceStop();
	proc_exit(1);				/* 1: the postmaster restarts the worker */
}
