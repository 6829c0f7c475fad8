/*-------------------------------------------------------------------------
 *
 * table_cache_sql.c
 *	  The table cache for SQL: odp_gpu_table_cache() (the view
 *	  odp_gpu_table_cache) and odp_gpu_table_cache_drop().
 *
 * The view shows the entries of this database's relations that the caller
 * may read (SELECT on the table or on some column), as the read itself
 * requires: an entry names a table and its columns, and its rows and hits
 * tell how it is used.  Entries of other databases are not shown (their
 * relations cannot be named here).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/table_cache_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "service/service_resident.h"
#include "service/table_cache.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_gpu_table_cache);
PG_FUNCTION_INFO_V1(odp_gpu_table_cache_drop);

#define CACHE_COLS 9

/* Whether the caller may read relid, a relation that exists. */
static bool
CacheMayRead(Oid relid)
{
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return false;
	return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck_all(relid, GetUserId(), ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
}

/* The names of an entry's columns (the id's first), as text[]. */
static Datum
CacheColumns(const OdpCacheInfo *e)
{
	Datum	   *names = palloc(sizeof(Datum) * Max(e->ncolumns, 1));
	int			n = 0;

	for (int i = 0; i < e->ncolumns; i++)
	{
		char	   *name = get_attname(e->relid, e->columns[i], true);

		if (name != NULL)
			names[n++] = CStringGetTextDatum(name);
	}
	return PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * odp_gpu_table_cache() -> one row per entry of a relation of this
 * database the caller may read: database, relation, columns, rows, bytes,
 * device (the GPU whose engine holds a copy of it, the CPU engine's 0;
 * NULL: the staging area only), hits, built_at, last_used_at.
 */
Datum
odp_gpu_table_cache(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpCacheInfo *entries = palloc(sizeof(OdpCacheInfo) * ODP_CACHE_ENTRIES);
	int			n;
	char	   *datname = get_database_name(MyDatabaseId);

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == CACHE_COLS);
	n = OdpTableCacheList(entries);
	for (int i = 0; i < n; i++)
	{
		const OdpCacheInfo *e = &entries[i];
		Datum		values[CACHE_COLS];
		bool		nulls[CACHE_COLS] = {false};
		int			device;

		if (e->database != MyDatabaseId || !CacheMayRead(e->relid))
			continue;
		device = OdpResidentDevice(e->slot, e->generation);
		values[0] = CStringGetDatum(datname);
		values[0] = DirectFunctionCall1(namein, values[0]);
		values[1] = ObjectIdGetDatum(e->relid);
		values[2] = CacheColumns(e);
		values[3] = Int64GetDatum(e->rows);
		values[4] = Int64GetDatum(e->bytes);
		nulls[5] = device < 0;
		values[5] = Int32GetDatum(device);
		values[6] = Int64GetDatum(e->hits);
		values[7] = TimestampTzGetDatum(e->built_at);
		values[8] = TimestampTzGetDatum(e->last_used_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * odp_gpu_table_cache_drop(relation regclass DEFAULT NULL) -> the entries
 * dropped: of the relation, whose owner (or a superuser) the caller must
 * be; or, for NULL, of every relation of this database the caller owns,
 * and for a superuser every entry of every database.  Entries in use stay
 * until their calls end, but no call finds them again.
 */
Datum
odp_gpu_table_cache_drop(PG_FUNCTION_ARGS)
{
	OdpCacheInfo *entries;
	int64		dropped = 0;
	int			n;

	if (!PG_ARGISNULL(0))
	{
		Oid			relid = PG_GETARG_OID(0);

		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation with OID %u does not exist", relid)));
		if (!pg_class_ownercheck(relid, GetUserId()))
			aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(relid)),
						   get_rel_name(relid));
		PG_RETURN_INT64(OdpTableCacheDrop(relid));
	}
	if (superuser())
		PG_RETURN_INT64(OdpTableCacheDrop(InvalidOid));
	entries = palloc(sizeof(OdpCacheInfo) * ODP_CACHE_ENTRIES);
	n = OdpTableCacheList(entries);
	for (int i = 0; i < n; i++)
	{
		bool		seen = false;

		if (entries[i].database != MyDatabaseId ||
			!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(entries[i].relid)) ||
			!pg_class_ownercheck(entries[i].relid, GetUserId()))
			continue;
		for (int j = 0; j < i && !seen; j++)
			seen = entries[j].database == MyDatabaseId && entries[j].relid == entries[i].relid;
		if (!seen)
			dropped += OdpTableCacheDrop(entries[i].relid);
	}
	PG_RETURN_INT64(dropped);
}
