/*-------------------------------------------------------------------------
 *
 * service_views.c
 *	  What the GPU service is doing, for SQL: odp_gpu_activity() (the view
 *	  odp_gpu_activity: one row per request the service holds), the
 *	  service's state and devices for odp_gpu_info() (gpu_info.c), and
 *	  its staging area: odp_gpu_staging().
 *
 * Both copy what they need from the shared state under the lock in
 * shared mode, then build their rows after releasing it: a query on the
 * view never holds up the service's loop for longer than a copy of the
 * slots' headers.  Neither touches CUDA.
 *
 * A request's details (its function and rows) are shown to its session's
 * user, to roles with that user's privileges and to members of
 * pg_read_all_stats, as pg_stat_activity shows a query; other users see
 * that the request exists, where it runs and for how long.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_views.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "service/service.h"
#include "service/service_shmem.h"
#include "service/service_staging.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_gpu_activity);

#define ACTIVITY_COLS 12

/* One request as copied from its slot under the lock. */
typedef struct ActivityEntry
{
	int			pid;
	Oid			database;
	Oid			userid;
	char		function[ODP_SLOT_FUNCTION_LEN];
	int			state;			/* OdpSlotState */
	int			device;			/* -1: none yet */
	int64		rows;
	int64		reserved;
	double		submitted_ms;
	double		started_ms;
	int64		progress_done;
} ActivityEntry;

/* A name column's value, or NULL (*isnull) for a NULL string. */
static Datum
ActivityName(const char *s, bool *isnull)
{
	NameData   *name;

	*isnull = s == NULL;
	if (s == NULL)
		return (Datum) 0;
	name = palloc(sizeof(NameData));
	namestrcpy(name, s);
	return NameGetDatum(name);
}

/*
 * Copies the requests of the slots not free into entries (room for every
 * slot); returns how many.  A slot being filled is left out: its backend
 * writes it without the lock until it submits it.
 */
static int
ActivityCopy(ActivityEntry *entries)
{
	int			n = 0;

	LWLockAcquire(OdpService->lock, LW_SHARED);
	for (int i = 0; i < OdpService->nslots; i++)
	{
		OdpServiceSlot *slot = &OdpService->slots[i];
		ActivityEntry *e = &entries[n];
		bool		started;

		if (slot->state == ODP_SLOT_FREE || slot->state == ODP_SLOT_FILLING)
			continue;
		started = slot->state == ODP_SLOT_RUNNING || slot->state == ODP_SLOT_DONE;
		e->pid = slot->backend_pid;
		e->database = (Oid) slot->database;
		e->userid = (Oid) slot->userid;
		strlcpy(e->function, slot->function, sizeof(e->function));
		e->state = slot->state;
		e->device = started && slot->ndevices > 0 ? slot->devices[0] : -1;
		e->rows = odp_call_rows(&slot->call);
		e->reserved = started ? (int64) slot->reserved : 0;
		e->submitted_ms = slot->submitted_ms;
		e->started_ms = started ? slot->started_ms : 0.0;
		e->progress_done = started ? atomic_load(&slot->progress_done) : -1;
		n++;
	}
	LWLockRelease(OdpService->lock);
	return n;
}

/*
 * odp_gpu_activity() -> one row per request the GPU service holds, queued
 * or running; no rows when the library was not preloaded.  Columns: pid,
 * database, usename, function, device, state, rows, gpu_memory,
 * queued_ms, running_ms, progress_done, progress_total.
 */
Datum
odp_gpu_activity(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ActivityEntry *entries;
	int			n;
	double		now;
	bool		read_all;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == ACTIVITY_COLS);
	if (OdpService == NULL)
		return (Datum) 0;

	entries = palloc(sizeof(ActivityEntry) * OdpService->nslots);
	n = ActivityCopy(entries);
	now = odp_now_ms();
	read_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	for (int i = 0; i < n; i++)
	{
		ActivityEntry *e = &entries[i];
		Datum		values[ACTIVITY_COLS];
		bool		nulls[ACTIVITY_COLS];
		bool		started = e->state == ODP_SLOT_RUNNING || e->state == ODP_SLOT_DONE;
		bool		visible = read_all || has_privs_of_role(GetUserId(), e->userid);
		char	   *datname = OidIsValid(e->database) ? get_database_name(e->database) : NULL;
		char	   *usename = OidIsValid(e->userid) ? GetUserNameFromId(e->userid, true) : NULL;

		memset(nulls, false, sizeof(nulls));
		values[0] = Int32GetDatum(e->pid);
		values[1] = ActivityName(datname, &nulls[1]);
		values[2] = ActivityName(usename, &nulls[2]);
		nulls[3] = !visible;
		values[3] = visible ? CStringGetTextDatum(e->function) : (Datum) 0;
		nulls[4] = e->device < 0;
		values[4] = Int32GetDatum(e->device);
		values[5] = CStringGetTextDatum(OdpSlotStateName(e->state));
		nulls[6] = !visible;
		values[6] = Int64GetDatum(e->rows);
		values[7] = Int64GetDatum(e->reserved);
		values[8] = Float8GetDatum((started ? e->started_ms : now) - e->submitted_ms);
		nulls[9] = !started;
		values[9] = Float8GetDatum(now - e->started_ms);
		nulls[10] = e->progress_done < 0;
		values[10] = Int64GetDatum(e->progress_done);
		/* the engine counts its steps but knows no total of them */
		nulls[11] = true;
		values[11] = (Datum) 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* See service.h. */
bool
OdpServiceGetInfo(OdpServiceInfo *info)
{
	memset(info, 0, sizeof(*info));
	if (OdpService == NULL)
		return false;
	LWLockAcquire(OdpService->lock, LW_SHARED);
	info->state = OdpServiceStateName(OdpService->state);
	info->ready = OdpService->state == ODP_SERVICE_READY;
	info->pid = OdpService->pid;
	info->started_at = (TimestampTz) OdpService->started_at;
	info->cpu_engine = OdpService->cpu_engine;
	strlcpy(info->why, OdpService->why, sizeof(info->why));
	info->driver_version = OdpService->driver_version;
	info->runtime_version = OdpService->runtime_version;
	info->waiting_for_slot = OdpService->waiting_for_slot;
	info->engine_pid = OdpService->engine_pid;
	info->engine_started_at = (TimestampTz) OdpService->engine_started_at;
	info->engine_restarts = OdpService->engine_restarts;
	strlcpy(info->engine_last_exit, OdpService->engine_last_exit,
			sizeof(info->engine_last_exit));

	/*
	 * The devices of a service that is not ready are those of its last
	 * start, or none yet: they say nothing about the next one.
	 */
	info->ndevices = info->ready ? OdpService->ndevices : 0;
	for (int d = 0; d < info->ndevices; d++)
	{
		const OdpServiceDevice *dev = &OdpService->devices[d];
		OdpServiceDeviceInfo *out = &info->devices[d];

		out->ordinal = dev->ordinal;
		strlcpy(out->name, dev->name, sizeof(out->name));
		out->cc_major = dev->cc_major;
		out->cc_minor = dev->cc_minor;
		out->multiprocessors = dev->multiprocessors;
		out->total_memory = (int64) dev->total_memory;
		out->budget = (int64) dev->budget;
		out->reserved = (int64) dev->reserved;
		out->running = dev->running;
		out->queued = dev->queued;
	}
	LWLockRelease(OdpService->lock);
	return true;
}

PG_FUNCTION_INFO_V1(odp_gpu_staging);

/* The staging area's state (service_staging.h), one record. */
Datum
odp_gpu_staging(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	OdpStagingInfo info;
	Datum		values[7];
	bool		nulls[7] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	OdpStagingGetInfo(&info);
	values[0] = Int64GetDatum(info.size);
	values[1] = Int64GetDatum(info.used);
	values[2] = Int64GetDatum(info.largest_free);
	values[3] = Int32GetDatum(info.extents);
	values[4] = Int64GetDatum(info.misses);
	values[5] = BoolGetDatum(info.locked);
	values[6] = BoolGetDatum(info.huge_pages);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
