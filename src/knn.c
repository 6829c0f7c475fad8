/*-------------------------------------------------------------------------
 *
 * knn.c
 *	  SQL entry points of k nearest neighbours: odp_knn (one query vector
 *	  against a source) and odp_knn_join (every row of one source against
 *	  another, or against itself).
 *
 * Sources are read sorted by id, so the engine's "ties by smaller row
 * index" is "ties by smaller id".  A k larger than the rows available
 * returns them all.  Both functions return rows in materialized mode,
 * ordered by query id and rank; all their memory lives in one child
 * context deleted at the end.  Their steps (knn.h) serve
 * odp_outlier_predict (outliers.c) too.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/knn.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "args.h"
#include "distributed/distributed.h"
#include "engine_glue.h"
#include "funcapi.h"
#include "input/input.h"
#include "knn.h"
#include "knn_cost.h"
#include "miscadmin.h"
#include "odp_distance.h"
#include "output.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(odp_knn);
PG_FUNCTION_INFO_V1(odp_knn_join);

#define KNN_COLS		3
#define KNN_JOIN_COLS	4

/*
 * Runs the engine for queries against source and leaves the lists in
 * *res; k larger than the rows available is clamped to them (zero: no
 * neighbours at all).
 */
void
OdpKnnCompute(const OdpInput *queries, const OdpInput *source, OdpMetric metric,
			  int32 k, bool self_join, OdpKnnResult *res)
{
	int64		avail = source->rows - (self_join ? 1 : 0);
	Size		n;

	memset(res, 0, sizeof(*res));
	res->k = (int32) Min((int64) k, avail);
	if (res->k == 0)
		return;
	n = (Size) queries->rows * (Size) res->k;
	res->dist = (double *) MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
	res->index = (int64 *) MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
	res->info.on_gpu = OdpChooseKnnGpu(queries, source, metric, res->k, self_join,
										&res->info);
	OdpComputeKnn(queries, source, metric, res->k, self_join, res->dist,
				  res->index, &res->info);
	OdpEnsureFiniteDistances(res->dist, (int64) n, res->k, queries->ids,
							 source->data64 != NULL);
}

/*
 * Fills spec, the rows searched (text in argument src, id column and
 * features in arguments opt and opt + 1), and qspec, the rows searched for
 * (text in argument qsrc, options in qopt and qopt + 1, by default
 * spec's).
 */
void
OdpKnnArgSpecs(FunctionCallInfo fcinfo, int src, int opt, int qsrc, int qopt,
			   OdpInputSpec *spec, OdpInputSpec *qspec)
{
	memset(spec, 0, sizeof(*spec));
	memset(qspec, 0, sizeof(*qspec));
	spec->source = OdpArgSource(fcinfo, src);
	spec->id_column = OdpArgOptText(fcinfo, opt);
	spec->features = OdpArgOptArray(fcinfo, opt + 1);
	qspec->source = OdpArgSource(fcinfo, qsrc);
	qspec->id_column = PG_ARGISNULL(qopt) ? spec->id_column : PG_GETARG_TEXT_PP(qopt);
	qspec->features = PG_ARGISNULL(qopt + 1) ? spec->features : PG_GETARG_ARRAYTYPE_P(qopt + 1);
}

/*
 * Reads the rows of qspec, checked against source (OdpKnnCheckQueries).
 * Allocates in the current memory context.
 */
void
OdpKnnReadQueries(const OdpInputSpec *qspec, OdpInput *source,
				  OdpMetric metric, OdpInput *queries)
{
	OdpReadInput(qspec, queries);
	OdpKnnCheckQueries(queries, source, metric);
}

/*
 * Checks queries against source: as many values as its rows, and norms
 * for cosine; the two are brought to one precision, float64 where either
 * is (widening float32 rows is exact), so that a real[] table joined with
 * a float8 one is compared as the float8 one is stored.  The source's
 * norms are checked again where it was widened.
 */
void
OdpKnnCheckQueries(OdpInput *queries, OdpInput *source, OdpMetric metric)
{
	if (queries->data64 != NULL && source->data64 == NULL)
	{
		OdpInputWiden(source);
		OdpCheckCosineRows(source, metric);
	}
	else if (source->data64 != NULL)
		OdpInputWiden(queries);
	if (queries->dims != source->dims)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("vectors have different lengths"),
				 errdetail("The rows of %s have %d values but those of %s have %d.",
						   queries->source_desc, queries->dims,
						   source->source_desc, source->dims),
				 errhint("Give queries the same features as the source.")));
	OdpCheckCosineRows(queries, metric);
}

/*
 * The k nearest rows of a sharded table for every query (float32 queries
 * or float64 queries64), found on its nodes and stored as odp_knn (qids
 * NULL: one query) or odp_knn_join rows.
 */
static void
KnnDistributed(ReturnSetInfo *rsinfo, const OdpShardSet *shards,
			   const OdpInputSpec *spec, OdpMetric metric, int32 k,
			   const float *queries, const double *queries64, const int64 *qids,
			   int64 nq, int32 dims, const char *what)
{
	Size		n = (Size) Max(nq, 1) * (Size) k;
	double	   *dist = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(double) * n);
	int64	   *ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n);
	int32		k_out;

	OdpDistributedKnn(shards, spec, metric, k, queries, queries64, qids, nq, dims,
					  false, what, dist, ids, &k_out);
	for (int64 q = 0; q < nq; q++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int32 r = 0; r < k_out; r++)
		{
			const Size at = (Size) q * k + r;
			Datum		values[KNN_JOIN_COLS];
			bool		nulls[KNN_JOIN_COLS] = {false, false, false, false};
			int			c = 0;

			if (qids != NULL)
				values[c++] = Int64GetDatum(qids[q]);
			values[c++] = Int32GetDatum(r + 1);
			values[c++] = Int64GetDatum(ids[at]);
			values[c++] = Float8GetDatum(dist[at]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
}

/*
 * Ensures a cosine query has a norm, in the precision it is compared in
 * (q64 for float64 rows, else q32).
 */
static void
KnnQueryNotZero(OdpMetric metric, const double *q64, const float *q32,
				int32 dims)
{
	double		norm;

	if (metric != ODP_METRIC_COSINE)
		return;
	norm = q64 != NULL ? odp_row_norm64(q64, dims) : (double) odp_row_norm(q32, dims);
	if (norm == 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query is a zero vector, for which cosine distance is undefined")));
}

/*
 * odp_knn(source, query, k, id_column, features, metric)
 *	  -> TABLE(rank int, id bigint, distance float8): the k rows of source
 *	  nearest to query, nearest first (largest inner product first), ties
 *	  by smaller id.
 */
Datum
odp_knn(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpInputSpec spec;
	OdpInput	source;
	OdpInput	query;
	OdpKnnResult	res;
	OdpMetric	metric;
	MemoryContext work,
				old;
	double	   *qv;
	int32		qdims;
	int32		k;
	double		start;

	OdpArgNotNull(fcinfo, 0, "source");
	k = OdpArgK(fcinfo, 2);
	metric = OdpArgMetric(fcinfo, 5, true);
	memset(&spec, 0, sizeof(spec));
	spec.source = OdpArgSource(fcinfo, 0);
	spec.id_column = OdpArgOptText(fcinfo, 3);
	spec.features = OdpArgOptArray(fcinfo, 4);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == KNN_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu knn",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	qv = OdpArgQueryVector(fcinfo, 1, &qdims);
	/* a zero query is refused before any row is read */
	KnnQueryNotZero(metric, qv, NULL, qdims);
	{
		OdpShardSet shards;

		/* the query in the sharded table's precision (OdpFindShards) */
		if (k < ODP_MAX_K && OdpFindShards(&spec, &shards))
		{
			float	   *qv32 = shards.float64 ? NULL : OdpQueryToFloat32(qv, qdims);

			if (qv32 != NULL)
				KnnQueryNotZero(metric, NULL, qv32, qdims);
			KnnDistributed(rsinfo, &shards, &spec, metric, k, qv32,
						   shards.float64 ? qv : NULL, NULL, 1, qdims, "odp_knn");
			MemoryContextSwitchTo(old);
			MemoryContextDelete(work);
			return (Datum) 0;
		}
	}
	OdpReadInput(&spec, &source);
	if (qdims != source.dims)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query has %d elements but the rows of %s have %d",
						qdims, source.source_desc, source.dims),
				 errhint("Pass a query vector with one value per feature.")));
	OdpCheckCosineRows(&source, metric);
	/* the query in the table's precision */
	memset(&query, 0, sizeof(query));
	query.rows = 1;
	query.dims = qdims;
	if (source.data64 != NULL)
		query.data64 = qv;
	else
		query.data = OdpQueryToFloat32(qv, qdims);
	if (query.data != NULL)
		KnnQueryNotZero(metric, NULL, query.data, qdims);
	OdpKnnCompute(&query, &source, metric, k, false, &res);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	for (int32 r = 0; r < res.k; r++)
	{
		Datum		values[KNN_COLS];
		bool		nulls[KNN_COLS] = {false, false, false};

		values[0] = Int32GetDatum(r + 1);
		values[1] = Int64GetDatum(source.ids[res.index[r]]);
		values[2] = Float8GetDatum(res.dist[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (res.k > 0)
		OdpReportTiming("odp_knn", &source, &res.info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * odp_knn_join(queries, source, k, id_column, features, metric,
 *				query_id_column, query_features)
 *	  -> TABLE(query_id bigint, rank int, id bigint, distance float8): for
 *	  every row of queries, its k nearest rows of source.  When both name
 *	  the same data (same options, and the same text or relation) it is a
 *	  self join, read once, and a row is not its own neighbour.  The query
 *	  options default to the source's.
 */
Datum
odp_knn_join(PG_FUNCTION_ARGS)
{
	double		call_start = odp_now_ms();
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OdpInputSpec qspec;
	OdpInputSpec spec;
	OdpInput	queries;
	OdpInput	source;
	const OdpInput *qin;
	OdpKnnResult	res;
	OdpMetric	metric;
	MemoryContext work,
				old;
	bool		self_join;
	bool		queries_read = false;
	int32		k;
	double		start;

	OdpArgNotNull(fcinfo, 0, "queries");
	OdpArgNotNull(fcinfo, 1, "source");
	k = OdpArgK(fcinfo, 2);
	metric = OdpArgMetric(fcinfo, 5, true);
	OdpKnnArgSpecs(fcinfo, 1, 3, 0, 6, &spec, &qspec);
	OdpOutputInit(fcinfo);
	Assert(rsinfo->setDesc->natts == KNN_JOIN_COLS);

	work = AllocSetContextCreate(CurrentMemoryContext, "odp_gpu knn join",
								 ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work);
	self_join = OdpSameSource(&qspec, &spec);
	{
		OdpShardSet shards;

		/* a self join would send every shard to every node: rows are read */
		if (!self_join && k < ODP_MAX_K && OdpFindShards(&spec, &shards))
		{
			OdpReadInput(&qspec, &queries);
			OdpCheckCosineRows(&queries, metric);
			queries_read = true;
			/*
			 * queries are compared in the wider of the two precisions:
			 * float64 queries with float32 shards, with the rows read
			 */
			if (queries.data != NULL || shards.float64)
			{
				KnnDistributed(rsinfo, &shards, &spec, metric, k, queries.data,
							   queries.data64, queries.ids, queries.rows, queries.dims,
							   "odp_knn_join");
				MemoryContextSwitchTo(old);
				MemoryContextDelete(work);
				return (Datum) 0;
			}
		}
	}
	OdpReadInput(&spec, &source);
	OdpCheckCosineRows(&source, metric);
	if (self_join)
		qin = &source;
	else
	{
		if (queries_read)
			OdpKnnCheckQueries(&queries, &source, metric);
		else
			OdpKnnReadQueries(&qspec, &source, metric, &queries);
		qin = &queries;
	}
	OdpKnnCompute(qin, &source, metric, k, self_join, &res);
	MemoryContextSwitchTo(old);

	start = odp_now_ms();
	for (int64 q = 0; q < qin->rows; q++)
	{
		/* ten million rows take a while to store */
		CHECK_FOR_INTERRUPTS();
		for (int32 r = 0; r < res.k; r++)
		{
			const Size at = (Size) q * res.k + r;
			Datum		values[KNN_JOIN_COLS];
			bool		nulls[KNN_JOIN_COLS] = {false, false, false, false};

			values[0] = Int64GetDatum(qin->ids[q]);
			values[1] = Int32GetDatum(r + 1);
			values[2] = Int64GetDatum(source.ids[res.index[at]]);
			values[3] = Float8GetDatum(res.dist[at]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	if (res.k > 0)
		OdpReportTiming("odp_knn_join", &source, &res.info, odp_now_ms() - start, call_start);
	MemoryContextDelete(work);
	return (Datum) 0;
}
