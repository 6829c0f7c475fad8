/*-------------------------------------------------------------------------
 *
 * service_shmem.c
 *	  The GPU service's settings, its shared memory and its registration
 *	  as a background worker, all done while the library is preloaded.
 *
 * The service's state (its lock, devices and budgets) is in the server's
 * main shared memory.  The slots and their two rings each are in the
 * engine area, a memfd the postmaster makes at start, which the engine
 * process maps too (service_engine.h): odp_gpu.service_slots x 2 x
 * odp_gpu.service_ring_size (32 x 2 x 512 kB = 32 MB by default).  Inputs
 * are read into the staging area (service_staging.h) where it has room;
 * the others, and outputs of any size, stream through the rings in
 * pieces, so nothing depends on the size of /dev/shm.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "service/service.h"
#include "service/service_engine.h"
#include "service/service_shmem.h"
#include "service/service_staging.h"
#include "service/table_cache.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#define ODP_SERVICE_TRANCHE "odp_gpu_service"

OdpServiceShared *OdpService = NULL;
OdpEngineArea *OdpEngine = NULL;
/* The engine area's memfd, inherited from the postmaster. */
int			odp_engine_area_fd = -1;
int			odp_service_slots = 32;
int			odp_service_ring_kb = 512;
int			odp_service_engine = ODP_SERVICE_ENGINE_GPU;
int			odp_service_fault_test = ODP_FAULT_NONE;
int			odp_engine_timeout_s = 300;
bool		odp_service_inputs_in_place = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* "on" (and true, yes, 1) stays what it was when the setting was a boolean */
static const struct config_enum_entry service_fault_options[] = {
	{"off", ODP_FAULT_NONE, false},
	{"poison", ODP_FAULT_POISON, false},
	{"hang", ODP_FAULT_HANG, false},
	{"victim", ODP_FAULT_VICTIM, false},
	{"on", ODP_FAULT_POISON, true},
	{"true", ODP_FAULT_POISON, true},
	{"false", ODP_FAULT_NONE, true},
	{"yes", ODP_FAULT_POISON, true},
	{"no", ODP_FAULT_NONE, true},
	{"1", ODP_FAULT_POISON, true},
	{"0", ODP_FAULT_NONE, true},
	{NULL, 0, false}
};

static const struct config_enum_entry service_engine_options[] = {
	{"gpu", ODP_SERVICE_ENGINE_GPU, false},
	{"cpu", ODP_SERVICE_ENGINE_CPU, false},
	{NULL, 0, false}
};

static Size
ServiceRingBytes(void)
{
	return MAXALIGN(offsetof(OdpRing, data) + (Size) odp_service_ring_kb * 1024);
}

static Size
ServiceShmemSize(void)
{
	return MAXALIGN(sizeof(OdpServiceShared));
}

/* The engine area: its head, the slots, then two rings per slot. */
static Size
EngineHeadBytes(void)
{
	return MAXALIGN(add_size(offsetof(OdpEngineArea, slots),
							 mul_size(sizeof(OdpServiceSlot), odp_service_slots)));
}

static Size
EngineAreaBytes(void)
{
	Size		bytes = add_size(EngineHeadBytes(),
								 mul_size(ServiceRingBytes(), mul_size(2, odp_service_slots)));

	/* whole huge pages, so that it can be in them */
	return (bytes + ODP_HUGE_PAGE_BYTES - 1) & ~(ODP_HUGE_PAGE_BYTES - 1);
}

/*
 * Makes the engine area (the postmaster, once: a restart after a crash
 * keeps it, as it keeps the staging area), in huge pages where it can.
 * Without it the service cannot run: the server refuses to start.
 */
static void
EngineAreaMap(void)
{
	void	   *p = NULL;
	bool		huge;
	int			fd = OdpMemfdMap("odp_gpu engine area", EngineAreaBytes(), &p, &huge);

	if (fd < 0)
		ereport(FATAL,
				(errmsg("odp_gpu: could not make the GPU service's engine area of %zu MB: %m",
						EngineAreaBytes() >> 20),
				 errhint("Lower odp_gpu.service_slots or odp_gpu.service_ring_size.")));
	odp_engine_area_fd = fd;
	OdpEngine = p;
}

static void
ServiceShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(ServiceShmemSize());
	RequestNamedLWLockTranche(ODP_SERVICE_TRANCHE, 1);
	RequestAddinShmemSpace(OdpStagingShmemSize());
	OdpStagingRequestLock();
	RequestAddinShmemSpace(OdpTableCacheShmemSize());
	OdpTableCacheRequestLock();
}

static void
ServiceShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	OdpStagingShmemInit(ShmemInitStruct("odp_gpu staging", OdpStagingShmemSize(), &found),
						found);
	OdpTableCacheShmemInit(ShmemInitStruct("odp_gpu table cache", OdpTableCacheShmemSize(),
										   &found),
						   found);
	if (!IsUnderPostmaster && OdpEngine == NULL)
		EngineAreaMap();
	OdpService = ShmemInitStruct("odp_gpu service", ServiceShmemSize(), &found);
	if (!found)
	{
		char	   *rings = (char *) OdpEngine + EngineHeadBytes();

		memset(OdpService, 0, ServiceShmemSize());
		memset(OdpEngine, 0, EngineHeadBytes());
		OdpEngine->layout = ODP_ENGINE_LAYOUT;
		OdpEngine->pg_base = (uint64) (uintptr_t) OdpEngine;
		OdpEngine->bytes = EngineAreaBytes();
		OdpEngine->nslots = odp_service_slots;
		OdpService->lock = &(GetNamedLWLockTranche(ODP_SERVICE_TRANCHE))->lock;
		ConditionVariableInit(&OdpService->slot_freed);
		ConditionVariableInit(&OdpService->state_changed);
		OdpService->state = ODP_SERVICE_DOWN;
		OdpService->nslots = odp_service_slots;
		OdpService->slots = OdpEngine->slots;
		for (int i = 0; i < odp_service_slots; i++)
		{
			OdpServiceSlot *slot = &OdpService->slots[i];

			slot->in = (OdpRing *) (rings + (Size) (2 * i) * ServiceRingBytes());
			slot->out = (OdpRing *) (rings + (Size) (2 * i + 1) * ServiceRingBytes());
			odp_ring_init(slot->in, (uint32_t) odp_service_ring_kb * 1024);
			odp_ring_init(slot->out, (uint32_t) odp_service_ring_kb * 1024);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* See service.h. */
void
OdpServiceDefineSettings(void)
{
	/*
	 * The sizes of the shared area are fixed at server start:
	 * PGC_POSTMASTER.  The server refuses to define such a setting anywhere
	 * but while preloading (a FATAL error), so a backend that loads the
	 * library itself defines them PGC_INTERNAL: SHOW gives their defaults
	 * and nobody can set them, which is all they mean without the service.
	 */
	GucContext	fixed = process_shared_preload_libraries_in_progress ?
		PGC_POSTMASTER : PGC_INTERNAL;

	DefineCustomEnumVariable("odp_gpu.service_engine",
							 "Path the GPU service computes on: gpu, or cpu to test the service without a GPU.",
							 "cpu runs the engine's CPU path inside the service, with the service's "
							 "queue, budget and streams; it exists for tests on machines without a GPU.",
							 &odp_service_engine, ODP_SERVICE_ENGINE_GPU, service_engine_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	/*
	 * Off by default: on the 2-core test machine (2026-11-25) reading 10^6
	 * x 16 real[] into dynamic shared memory took 360 ms against 235 ms
	 * into the backend's memory plus 10 ms through the rings (no huge
	 * pages for shared memory), so the copy is the cheaper way there.
	 */
	DefineCustomBoolVariable("odp_gpu.service_inputs_in_place",
							 "Reads inputs into dynamic shared memory, where the GPU service uses them in place.",
							 "off streams every input to the service through its rings, which measured "
							 "faster than reading into shared memory.",
							 &odp_service_inputs_in_place, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("odp_gpu.service_fault_test",
							 "Makes the GPU service's engine fail this session's GPU calls on purpose, for tests.",
							 "poison (or on) poisons the device's context before the call: the call fails, the "
							 "service rebuilds the context (or restarts its engine process) and queued calls "
							 "run.  hang makes the call never move again, as a kernel that never returns "
							 "would: the watchdog (odp_gpu.engine_timeout) kills and restarts the engine process.  "
							 "victim fails the call as a fault of another call on any device fails it, "
							 "unless the call runs alone: the backend runs it again, alone.",
							 &odp_service_fault_test, ODP_FAULT_NONE, service_fault_options,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("odp_gpu.engine_timeout",
							"How long a request in the GPU service's engine process may go without moving before the process is killed and restarted.",
							"The engine shows it moves between bounded pieces of work and while it streams; a "
							"kernel or driver call stuck longer than this fails every request of the engine "
							"process, which restarts.  0 turns the watchdog off.",
							&odp_engine_timeout_s, 300, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("odp_gpu.service_slots",
							"Requests the GPU service holds at once (running or queued).",
							"A backend whose call finds every slot taken waits for one. "
							"Each slot takes two rings of odp_gpu.service_ring_size of shared memory.",
							&odp_service_slots, 32, 1, 1024,
							fixed, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("odp_gpu.service_ring_size",
							"Size of each ring a request's inputs and outputs stream through.",
							"Inputs and outputs of any size pass through it in pieces.",
							&odp_service_ring_kb, 512, 64, 1024 * 1024,
							fixed, GUC_UNIT_KB, NULL, NULL, NULL);
	OdpStagingDefineSetting(fixed);
	OdpTableCacheDefineSettings(fixed);
}

/* See service.h. */
void
OdpServiceRegister(void)
{
	BackgroundWorker worker;

	OdpStagingCreate();
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ServiceShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ServiceShmemStartup;

	memset(&worker, 0, sizeof(worker));
	/* a connection (to no database) puts the service in pg_stat_activity */
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "odp_gpu");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "OdpServiceMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "odp_gpu service");
	snprintf(worker.bgw_type, BGW_MAXLEN, "odp_gpu service");
	RegisterBackgroundWorker(&worker);
}

/* See service.h. */
bool
OdpServiceConfigured(void)
{
	return OdpService != NULL;
}

const char *
OdpServiceStateName(int state)
{
	switch ((OdpServiceState) state)
	{
		case ODP_SERVICE_DOWN:
			return "down";
		case ODP_SERVICE_STARTING:
			return "starting";
		case ODP_SERVICE_READY:
			return "ready";
		case ODP_SERVICE_STOPPING:
			return "stopping";
	}
	return "unknown";
}

const char *
OdpSlotStateName(int state)
{
	switch ((OdpSlotState) state)
	{
		case ODP_SLOT_FREE:
			return "free";
		case ODP_SLOT_FILLING:
		case ODP_SLOT_SUBMITTED:
		case ODP_SLOT_QUEUED:
			return "queued";
		case ODP_SLOT_RUNNING:
			return "running";
		case ODP_SLOT_DONE:
			return "sending";
	}
	return "unknown";
}
