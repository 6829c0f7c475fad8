/*-------------------------------------------------------------------------
 *
 * distributed.h
 *	  The calling server's side of the distributed calls: a sharded
 *	  table's outliers, k-NN and skyline computed on its nodes.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DISTRIBUTED_PG_H
#define ODP_DISTRIBUTED_PG_H

#include "distributed/distributed_shards.h"
#include "engine_glue.h"

/* Results of a distributed top-n. */
typedef struct OdpDistributedTop
{
	int64		count;
	int64	   *ids;			/* best first */
	double	   *scores;
	int64		members;		/* solving set (want_set) */
	int64	   *member_ids;		/* ascending */
	double	   *member_scores;
	int64		rows;			/* over every shard */
	int32		dims;
} OdpDistributedTop;

/*
 * The top n outliers of the sharded table (SolvingSet on the nodes; no
 * pruning for ODP_METHOD_BRUTEFORCE), batch_size as odp_solving_set takes
 * it, with the solving set when want_set.  Same ids and scores as one
 * call over the same rows in one table.
 */
extern void OdpDistributedTopOutliers(const OdpShardSet *set, const OdpInputSpec *spec,
									  OdpMetric metric, int32 k, int64 n,
									  OdpOutlierMethod method, int64 batch_size,
									  bool want_set, const char *what,
									  OdpDistributedTop *top);

/*
 * For every query (nq rows of dims values, ids qids or NULL), its k
 * nearest rows of the sharded table, as dist/ids lists of *k_out entries
 * each (k clamped to the rows there are; a row whose id is its query's
 * left out when exclude_self).  dist and ids hold nq * k entries.  The
 * queries are float32 (queries; widened, exactly, for a float64 table) or
 * float64 (queries64, NULL queries: for a float64 table only).
 */
extern void OdpDistributedKnn(const OdpShardSet *set, const OdpInputSpec *spec,
							  OdpMetric metric, int32 k, const float *queries,
							  const double *queries64, const int64 *qids,
							  int64 nq, int32 dims, bool exclude_self,
							  const char *what, double *dist, int64 *ids,
							  int32 *k_out);

/*
 * The k-skyband of the sharded table: the union of the nodes' skybands
 * (which holds every row of the global one and all of its dominators)
 * in *in, by id, with each row's dominators in *dominated_by.
 */
extern void OdpDistributedSkyline(const OdpShardSet *set, ArrayType *directions,
								  const uint8 *maximize, int nentries, int32 band,
								  OdpInput *in, int32 **dominated_by);

#endif							/* ODP_DISTRIBUTED_PG_H */
