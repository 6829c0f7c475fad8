/*-------------------------------------------------------------------------
 *
 * service_shmem.c
 *	  The GPU service's settings, its shared memory and its registration
 *	  as a background worker, all done while the library is preloaded.
 *
 * The shared area is the slots' headers followed by two rings per slot,
 * in the server's main shared memory: odp_gpu.service_slots x 2 x
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
#include "service/service_shmem.h"
#include "service/service_staging.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#define ODP_SERVICE_TRANCHE "odp_gpu_service"

OdpServiceShared *OdpService = NULL;
int			odp_service_slots = 32;
int			odp_service_ring_kb = 512;
int			odp_service_engine = ODP_SERVICE_ENGINE_GPU;
bool		odp_service_fault_test = false;
bool		odp_service_inputs_in_place = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

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
ServiceHeaderBytes(void)
{
	return MAXALIGN(add_size(offsetof(OdpServiceShared, slots),
							 mul_size(sizeof(OdpServiceSlot), odp_service_slots)));
}

static Size
ServiceShmemSize(void)
{
	return add_size(ServiceHeaderBytes(),
					mul_size(ServiceRingBytes(), mul_size(2, odp_service_slots)));
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
	OdpService = ShmemInitStruct("odp_gpu service", ServiceShmemSize(), &found);
	if (!found)
	{
		char	   *rings = (char *) OdpService + ServiceHeaderBytes();

		memset(OdpService, 0, ServiceHeaderBytes());
		OdpService->lock = &(GetNamedLWLockTranche(ODP_SERVICE_TRANCHE))->lock;
		ConditionVariableInit(&OdpService->slot_freed);
		ConditionVariableInit(&OdpService->state_changed);
		OdpService->state = ODP_SERVICE_DOWN;
		OdpService->nslots = odp_service_slots;
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
	DefineCustomBoolVariable("odp_gpu.service_fault_test",
							 "Makes the GPU service poison the device's context before this session's GPU calls.",
							 "For tests of the service's recovery from a CUDA fault: the call fails, the "
							 "service rebuilds the context (or restarts) and queued calls run.",
							 &odp_service_fault_test, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
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
