/*-------------------------------------------------------------------------
 *
 * input_reader.c
 *	  Reads a table, view or query into a dense matrix plus ids: float32
 *	  or float64 for the distance analytics, as the features are stored
 *	  (input.h), float64 (with flags of missing values
 *	  where the caller accepts them) for the correlations, or the bounds of
 *	  regions for the matching.  The entry points OdpReadInput and
 *	  OdpResolveSource.
 *
 * Phases of OdpReadInput, and the file that does each:
 *
 * 1. Classify the source (input_source.c): a query, or the name of a
 *	  relation, parsed as regclass parses it; text that is neither is
 *	  rejected before any catalog access.
 *
 * 2. Resolve the columns (input_columns.c; input_regions.c for regions).
 *	  For a relation: open it with AccessShareLock (held to the end of the
 *	  transaction), reject unsupported relkinds and other sessions'
 *	  temporary tables, and check SELECT on the table or on every column
 *	  used, before any row is read.  For a query: run it read-only
 *	  through SPI with the caller's rights and use its result descriptor.
 *	  The id column and the features are then matched by exact name, with
 *	  defaults (OdpResolvePlan).
 *
 * 3. Read the rows (here).  A plain heap-like table without row-level
 *	  security in effect and without inheritance children is read by a
 *	  direct table scan under the active snapshot, deforming only the
 *	  attributes used: by the backend and parallel workers where
 *	  PostgreSQL would give its scan workers (input_parallel.c), else by
 *	  the backend alone.  Everything else (views, partitioned and foreign
 *	  tables, materialized views, tables under RLS, queries) runs as a
 *	  query through SPI, planned as any query (with parallel workers where
 *	  the planner chooses them), whose rows are decoded as the executor
 *	  hands them over, so that a large input never exists twice in memory;
 *	  for relations the query is generated from quote_identifier'd names
 *	  only.  Each row is decoded into the buffers (input_decode.c,
 *	  input_regions.c) in a row context reset every batch.
 *
 * 4. Finish (input_buffer.c): sort the rows by id if they did not come
 *	  in order, reject duplicate ids, trim the buffers.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_reader.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "executor/spi.h"
#include "tcop/dest.h"
#include "executor/tuptable.h"
#include "input/input_internal.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "storage/shm_toc.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

/* ---- resolving a source ---- */

/*
 * Resolves the id column and the features (or regions) of the source
 * whose columns are cols (of a relation if is_relation, whose
 * single-column primary key is pk_attnum; else of a query) into *plan.
 * desc words the errors.
 */
static void
OdpResolvePlan(const OdpColumn *cols, int ncols, bool is_relation,
			   AttrNumber pk_attnum, const OdpInputSpec *spec,
			   const char *desc, OdpColumnPlan *plan)
{
	const OdpColumn *id;

	memset(plan, 0, sizeof(*plan));
	id = OdpResolveIdColumn(cols, ncols, is_relation, pk_attnum, spec, desc);
	plan->id = *id;
	if (spec->values == ODP_VALUES_REGIONS)
		OdpResolveRegionColumns(cols, ncols, id, spec, desc, plan);
	else
		OdpResolveFeatureColumns(cols, ncols, id, spec, desc, plan);
	plan->maxpos = id->pos;
	for (int i = 0; i < plan->nfeatures; i++)
		plan->maxpos = Max(plan->maxpos, plan->features[i].pos);
}

/*
 * Checks the caller's privileges on rel and on the columns used if
 * check_privileges, and resolves its columns into *plan.  Sets *desc for
 * messages.  Shared by the reader, OdpResolveSource and the parallel
 * workers, so that all check and resolve alike.
 */
static void
OdpResolveRelation(Relation rel, const OdpInputSpec *spec,
				   bool check_privileges, OdpColumnPlan *plan, char **desc)
{
	OdpColumn  *cols;
	int			ncols;

	if (check_privileges)
		OdpCheckAnyPrivilege(rel);
	*desc = OdpRelationDesc(rel);
	cols = OdpDescribeColumns(RelationGetDescr(rel), true, &ncols);
	OdpResolvePlan(cols, ncols, true, OdpPrimaryKeyColumn(rel), spec, *desc,
				   plan);
	if (check_privileges)
		OdpCheckColumnPrivileges(rel, plan);
}

/*
 * Opens the relation source names (locked until the end of the
 * transaction: close it with NoLock) and resolves it (OdpResolveRelation).
 */
static Relation
OdpResolveRelationSource(const char *source, const OdpInputSpec *spec,
						 bool check_privileges, OdpColumnPlan *plan,
						 char **desc)
{
	Relation	rel = OdpOpenSourceRelation(source);

	OdpResolveRelation(rel, spec, check_privileges, plan, desc);
	return rel;
}

/* ---- the two ways of reading rows ---- */

/*
 * Estimates the rows a full scan of rel returns, as the planner does: the
 * tuple density of the last VACUUM or ANALYZE times the current number of
 * blocks; 0 if never analysed.  Used only to size the first allocation of
 * a full scan, which the data fills anyway.
 */
static double
OdpEstimateRows(Relation rel)
{
	BlockNumber relpages = rel->rd_rel->relpages;
	double		reltuples = rel->rd_rel->reltuples;

	if (relpages == 0 || reltuples < 0)
		return 0;
	return reltuples / relpages * RelationGetNumberOfBlocks(rel);
}

/*
 * Reads every row of rel by a direct table scan under the active snapshot,
 * deforming only the attributes used.  No syncscan, so that the rows come
 * in physical order (often ascending id order, which saves the sort); or
 * each at its id's place, where an index on the ids bounds them.
 */
static void
OdpReadTableScan(Relation rel, OdpReader *r)
{
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan;

	(void) OdpReaderPlaceTable(r, rel, GetActiveSnapshot());
	scan = table_beginscan_strat(rel, GetActiveSnapshot(), 0, NULL,
								 true, false);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
		OdpReaderAddSlot(r, slot);
	MemoryContextReset(r->rowcxt);
	OdpReaderEndPlacement(r);
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * Receives a query's rows straight from its executor (a DestReceiver):
 * resolves the columns from the result descriptor where the plan is not
 * known yet (a query source), then decodes each row into the reader.
 * Rows are never stored in between, so a large input never exists twice.
 */
typedef struct OdpQueryReceiver
{
	DestReceiver pub;
	OdpReader  *r;
	OdpColumnPlan *plan;
	bool		plan_known;		/* a relation's generated query */
	const OdpInputSpec *spec;
	const char *desc;
	MemoryContext outcxt;
	MemoryContext workcxt;
	MemoryContext rowcxt;
} OdpQueryReceiver;

static void
OdpReceiverStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	OdpQueryReceiver *rc = (OdpQueryReceiver *) self;

	if (!rc->plan_known)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(rc->workcxt);
		OdpColumn  *cols;
		int			ncols;

		cols = OdpDescribeColumns(typeinfo, false, &ncols);
		OdpResolvePlan(cols, ncols, false, InvalidAttrNumber, rc->spec,
					   rc->desc, rc->plan);
		MemoryContextSwitchTo(oldcxt);
	}
	Assert(rc->plan->maxpos <= typeinfo->natts);
	OdpReaderInit(rc->r, rc->plan, rc->outcxt, rc->rowcxt, rc->desc, 0, rc->spec);
}

static bool
OdpReceiveSlot(TupleTableSlot *slot, DestReceiver *self)
{
	OdpReaderAddSlot(((OdpQueryReceiver *) self)->r, slot);
	return true;
}

static void
OdpReceiverShutdown(DestReceiver *self)
{
	MemoryContextReset(((OdpQueryReceiver *) self)->rowcxt);
}

static void
OdpReceiverDestroy(DestReceiver *self)
{
}

/* Connects to SPI, raising an internal error if that fails. */
static void
OdpSpiConnect(void)
{
	int			rc = SPI_connect();

	if (rc != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed: %s", SPI_result_code_string(rc));
}

/*
 * Runs query (one read-only statement, with the caller's rights) and
 * decodes its rows into r as they come: with *plan as it is if
 * plan_known, else resolved from the query's result.  The planner may run
 * it with parallel workers, as it would any query: the rows are consumed
 * at once, as by a plain SELECT, not fetched through a cursor.
 */
static void
OdpReadQuery(const char *query, OdpReader *r, OdpColumnPlan *plan,
			 bool plan_known, const OdpInputSpec *spec, const char *desc,
			 MemoryContext outcxt, MemoryContext workcxt, MemoryContext rowcxt)
{
	OdpQueryReceiver receiver;
	OdpQueryReceiver *rc = &receiver;
	SPIPrepareOptions prepare;
	SPIExecuteOptions execute;
	SPIPlanPtr	spiplan;
	int			ret;

	memset(rc, 0, sizeof(*rc));
	memset(r, 0, sizeof(*r));
	rc->pub.receiveSlot = OdpReceiveSlot;
	rc->pub.rStartup = OdpReceiverStartup;
	rc->pub.rShutdown = OdpReceiverShutdown;
	rc->pub.rDestroy = OdpReceiverDestroy;
	rc->pub.mydest = DestNone;
	rc->r = r;
	rc->plan = plan;
	rc->plan_known = plan_known;
	rc->spec = spec;
	rc->desc = desc;
	rc->outcxt = outcxt;
	rc->workcxt = workcxt;
	rc->rowcxt = rowcxt;

	OdpSpiConnect();
	memset(&prepare, 0, sizeof(prepare));
	prepare.cursorOptions = CURSOR_OPT_PARALLEL_OK;
	spiplan = SPI_prepare_extended(query, &prepare);
	if (spiplan == NULL)
		elog(ERROR, "SPI_prepare_extended failed: %s",
			 SPI_result_code_string(SPI_result));
	if (list_length(SPI_plan_get_plan_sources(spiplan)) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("a query source must be one statement"),
				 errhint("Remove the other statements, or combine them with WITH.")));
	memset(&execute, 0, sizeof(execute));
	execute.read_only = true;
	execute.dest = &rc->pub;
	ret = SPI_execute_plan_extended(spiplan, &execute);
	if (ret < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s",
			 SPI_result_code_string(ret));
	if (r->plan == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("a query source must return rows")));
	SPI_finish();
}

/*
 * Reads a query source: runs it, resolving the columns from its result
 * descriptor, and decodes the rows as they come.
 */
static void
OdpReadQuerySource(const char *query, const OdpInputSpec *spec,
				   OdpReader *r, OdpColumnPlan *plan,
				   MemoryContext outcxt, MemoryContext workcxt,
				   MemoryContext rowcxt)
{
	OdpReadQuery(query, r, plan, false, spec, "query", outcxt, workcxt, rowcxt);
}

/*
 * Reads a relation source: checks it and the privileges, resolves the
 * columns, then reads by table scan when allowed, else through SPI with a
 * generated query.  Sets *desc, *heap_scan and *workers (the parallel
 * workers that read with the backend).
 */
static void
OdpReadRelationSource(const char *source, const OdpInputSpec *spec,
					  OdpReader *r, OdpColumnPlan *plan,
					  MemoryContext outcxt, MemoryContext workcxt,
					  MemoryContext rowcxt, char **desc, bool *heap_scan,
					  int *workers, OdpCacheUse *cache)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(workcxt);
	Relation	rel;
	Oid			relid;

	rel = OdpResolveRelationSource(source, spec,
								   !OidIsValid(spec->checked_parent),
								   plan, desc);
	relid = RelationGetRelid(rel);

	/*
	 * A plain table, read as SELECT would: no RLS policies, no children.
	 * A partition read for its checked parent is read as the parent's
	 * query reads it: the parent's policies apply (the caller made sure
	 * it has none), not the partition's.
	 */
	if (OidIsValid(spec->checked_parent))
	{
		if (rel->rd_rel->relkind != RELKIND_RELATION || !rel->rd_rel->relispartition)
			elog(ERROR, "odp_gpu: %s is not a partition", *desc);
		*heap_scan = true;
	}
	else
		*heap_scan = rel->rd_rel->relkind == RELKIND_RELATION &&
			check_enable_rls(relid, InvalidOid, false) != RLS_ENABLED &&
			!has_subclass(relid);

	if (*heap_scan)
	{
		OdpCacheBeforeRead(rel, plan, spec, cache);
		MemoryContextSwitchTo(oldcxt);
		if (cache->hit)
		{
			relation_close(rel, NoLock);
			return;
		}
		OdpReaderInit(r, plan, outcxt, rowcxt, *desc, 0, spec);
		if (!OdpReadTableParallel(rel, spec, r, *desc, workers))
		{
			OdpReaderInit(r, plan, outcxt, rowcxt, *desc, OdpEstimateRows(rel),
						  spec);
			OdpReadTableScan(rel, r);
		}
		OdpCacheAfterScan(rel, cache);
	}
	else
	{
		StringInfoData query;

		/* only quoted names go into the text; positions follow the list */
		initStringInfo(&query);
		appendStringInfo(&query, "SELECT %s", quote_identifier(plan->id.name));
		plan->id.pos = 1;
		for (int i = 0; i < plan->nfeatures; i++)
		{
			appendStringInfo(&query, ", %s",
							 quote_identifier(plan->features[i].name));
			plan->features[i].pos = i + 2;
		}
		plan->maxpos = plan->nfeatures + 1;
		appendStringInfo(&query, " FROM %s",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)));
		MemoryContextSwitchTo(oldcxt);

		OdpReadQuery(query.data, r, plan, true, spec, *desc, outcxt, workcxt,
					 rowcxt);
	}

	/* keep the lock until the end of the transaction */
	relation_close(rel, NoLock);
}

/* ---- entry points ---- */

PGDLLEXPORT void OdpParallelReadMain(dsm_segment *seg, shm_toc *toc);

/*
 * A parallel worker of OdpReadTableParallel: resolves the columns of the
 * backend's relation as the backend did, then reads its share of chunks.
 * Runs in the backend's transaction, snapshot and user (parallel.c).
 */
void
OdpParallelReadMain(dsm_segment *seg, shm_toc *toc)
{
	OdpInputSpec spec;
	OdpColumnPlan plan;
	Relation	rel;
	Oid			relid;
	char	   *desc;

	OdpParallelWorkerSpec(toc, &spec, &relid);
	rel = table_open(relid, AccessShareLock);
	OdpResolveRelation(rel, &spec, false, &plan, &desc);
	OdpParallelWorkerRead(toc, rel, &plan, &spec, desc);
	table_close(rel, AccessShareLock);
}

/* See input.h. */
bool
OdpResolveSource(const OdpInputSpec *spec, Oid *relid, char **id_name,
				 List **features, bool *float64)
{
	char	   *source = text_to_cstring(spec->source);
	Relation	rel;
	OdpColumnPlan plan;
	char	   *desc;

	*features = NIL;
	if (OdpSourceIsQuery(source))
		return false;
	rel = OdpResolveRelationSource(source, spec, true, &plan, &desc);
	*relid = RelationGetRelid(rel);
	*id_name = pstrdup(plan.id.name);
	for (int i = 0; i < plan.nfeatures; i++)
		*features = lappend(*features, pstrdup(plan.features[i].name));
	*float64 = spec->values == ODP_VALUES_FLOAT8 ||
		(spec->values == ODP_VALUES_DISTANCE &&
		 OdpColumnsNeedFloat64(plan.features, plan.nfeatures));
	relation_close(rel, NoLock);
	return true;
}

/* Sets the input's read time, from start to now. */
static void
OdpInputTimeRead(OdpInput *out, instr_time start)
{
	instr_time	duration;

	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	out->read_ms = INSTR_TIME_GET_MILLISEC(duration);
}

/*
 * Reads spec's source into out (see input.h).  The matrix and ids are
 * allocated in the caller's CurrentMemoryContext; all scratch memory lives
 * in a child context deleted before returning.
 */
void
OdpReadInput(const OdpInputSpec *spec, OdpInput *out)
{
	MemoryContext outcxt = CurrentMemoryContext;
	MemoryContext workcxt;
	MemoryContext rowcxt;
	instr_time	start;
	OdpColumnPlan plan;
	OdpReader	reader;
	char	   *source;
	char	   *desc = NULL;
	bool		heap_scan = false;
	int			workers = 0;
	OdpCacheUse *cache;

	Assert(spec->source != NULL);
	INSTR_TIME_SET_CURRENT(start);
	memset(out, 0, sizeof(*out));

	workcxt = AllocSetContextCreate(outcxt, "odp_gpu input",
									ALLOCSET_DEFAULT_SIZES);
	rowcxt = AllocSetContextCreate(workcxt, "odp_gpu input rows",
								   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(workcxt);
	source = text_to_cstring(spec->source);
	cache = palloc0(sizeof(OdpCacheUse));

	if (OdpSourceIsQuery(source))
	{
		desc = "query";
		OdpReadQuerySource(source, spec, &reader, &plan, outcxt, workcxt,
						   rowcxt);
	}
	else
		OdpReadRelationSource(source, spec, &reader, &plan, outcxt, workcxt,
							  rowcxt, &desc, &heap_scan, &workers, cache);

	if (cache->hit)
	{
		MemoryContextSwitchTo(outcxt);
		OdpCacheFillInput(cache, outcxt, out);
		if (plan.regions)
			out->region_dims = OdpDescribeRegionDims(&plan, out->dims);
		out->source_desc = pstrdup(desc);
		out->heap_scan = true;
		out->read_order = "cache";
		MemoryContextDelete(workcxt);
		OdpInputTimeRead(out, start);
		return;
	}

	if (!heap_scan && OdpTableCacheEnabled())
		cache->why = "only tables read by a heap scan are kept (not views, queries, parent or foreign tables, or tables under row-level security)";
	MemoryContextSwitchTo(workcxt);
	OdpReaderFinish(&reader);
	MemoryContextSwitchTo(outcxt);

	out->rows = reader.rows;
	out->dims = reader.dims;
	out->data = reader.data;
	out->data64 = reader.data64;
	out->missing = reader.missing;
	out->lower = reader.lower;
	out->upper = reader.upper;
	out->bound_flags = reader.bflags;
	out->exact_bounds = reader.exact;
	out->exact_kept = reader.keep_exact;
	if (plan.exact_bounds && reader.dims > 0)
	{
		out->exact_dims = palloc(reader.dims);
		memcpy(out->exact_dims, reader.exact_dims, reader.dims);
	}
	out->exact_long = reader.exact_long;
	out->pieces = reader.any_piece;
	if (plan.regions)
		out->region_dims = OdpDescribeRegionDims(&plan, reader.dims);
	out->ids = reader.ids;
	out->source_desc = pstrdup(desc);
	out->heap_scan = heap_scan;
	out->read_workers = workers;
	out->read_order = reader.order;
	OdpCacheKeep(cache, outcxt, out);
	MemoryContextDelete(workcxt);
	OdpInputTimeRead(out, start);
}
