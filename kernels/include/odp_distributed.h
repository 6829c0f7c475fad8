/*-------------------------------------------------------------------------
 *
 * odp_distributed.h
 *	  Engine API of the distributed analytics: the data set is split into
 *	  shards held by nodes, a supervisor drives them (seed 001, Section
 *	  3.5.4: GPU-DistributedSolvingSet), and only candidates, neighbour
 *	  lists and proposals travel between them.
 *
 * The engine does the computing on both sides; moving the buffers between
 * supervisor and nodes (network, SQL) is the caller's.  Every row has an
 * id, unique over all shards; each shard's rows come sorted by ascending
 * id.  Ties everywhere go to the smaller id, so a distributed run returns
 * what one run over all the rows in one matrix (ids ascending) returns.
 *
 * Distributed SolvingSet.  The supervisor runs the loop of solvingset.c
 * with the distance work moved to the nodes:
 *
 *	  C = the m rows of smallest odp_ss_first_key(id) over all shards
 *		  (each node proposes its m smallest, the supervisor keeps the m
 *		  smallest of the proposals);
 *	  while C is not empty:
 *		  every node: for every candidate, its k smallest distances to the
 *			  node's rows other than itself (odp_ss_node_exact); the
 *			  node's own candidates leave its active rows, and every active
 *			  row merges its distances to C into its partial list;
 *		  supervisor: each candidate's k smallest of the nodes' lists give
 *			  its exact weight; Top, minOUT (odp_ss_sup_merge);
 *		  every node: prunes its active rows below minOUT and proposes its
 *			  m active rows of largest upper bound (odp_ss_node_next);
 *		  supervisor: C = the m proposals of largest upper bound, ties by
 *			  smaller id (odp_ss_sup_choose).
 *
 * That is the loop of solvingset.c step for step (the same first
 * candidates, bounds, pruning and choices), so the top n, their scores
 * and the solving set are those of one run over all the rows.
 *
 * The steps take float32 rows (OdpMatrix.data) or float64 rows (data64),
 * every node and the supervisor in one precision: candidate vectors travel
 * in it (OdpSsRows.vectors or vectors64), and the distances, bounds and
 * lists in double for both (a float32 distance widens exactly, so float32
 * answers are those of float32 distances).  A float64 node works through
 * the k-NN engine (the float64 SolvingSet backend has no node entries).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_distributed.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DISTRIBUTED_H
#define ODP_DISTRIBUTED_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * SolvingSet's first-candidate key of a row: a fixed pseudo-random
 * function of its id alone, so that any split of the rows over nodes
 * draws the same first candidates.
 */
extern uint64_t odp_ss_first_key(int64_t id);

/*
 * SolvingSet's candidates per batch (m) for rows rows: requested when >
 * 0, else rows / 64 within 4,096 .. 16,384; raised to n, capped at rows.
 */
extern int64_t odp_ss_batch_size(int64_t rows, int64_t n, int64_t requested);

/*
 * Rows with a value each, as nodes propose them and the supervisor
 * broadcasts them: ids[count], rank[count] (a first key as a double's
 * bits, or an upper bound), bound[count] (the largest distance of the
 * row's partial list when it is full, else +inf: every node may keep only
 * the candidate's distances under it, as one run's single pass does) and
 * vectors[count * dims] of float32 rows or vectors64[count * dims] of
 * float64 ones (the other NULL).  Buffers are the caller's, of capacity
 * rows.
 */
typedef struct OdpSsRows
{
	int64_t		count;
	int64_t		capacity;
	int32_t		dims;
	int64_t    *ids;
	double	   *rank;
	double	   *bound;
	float	   *vectors;
	double	   *vectors64;
} OdpSsRows;

/* ---- node side ---- */

typedef struct OdpSsNode OdpSsNode;

/*
 * A node's state over its shard rows (rows->ids required, ascending; the
 * matrix must outlive the node; 0 rows allowed), for k neighbours (1 <= k
 * < ODP_MAX_K) by a distance metric.  bounds false serves a supervisor
 * that does not prune (brute force): no upper bounds are kept and
 * proposals are the active rows of smallest id.  Host memory with bounds:
 * rows * k distances of partial lists plus a few bytes a row.
 */
extern OdpStatus odp_ss_node_create(OdpContext *ctx, const OdpMatrix *rows,
									OdpMetric metric, int32_t k, bool bounds,
									OdpSsNode **node);
extern void odp_ss_node_free(OdpSsNode *node);

/*
 * The node's first proposals: its min(m, rows) rows of smallest
 * (odp_ss_first_key(id), id), the key's bits in rank.
 */
extern OdpStatus odp_ss_node_first(OdpContext *ctx, OdpSsNode *node,
								   int64_t m, OdpSsRows *out);

/*
 * For every candidate (ids and vectors of cands, in the shard's
 * precision), its k smallest
 * distances to the node's rows other than itself, ascending, into
 * lists[c * k ..]; +inf where the node has fewer rows.  Where the
 * candidate's bound is finite, the list may hold only the distances
 * under it (then +inf): the supervisor reads every entry as at most the
 * bound.  Then the candidates that are the node's rows become inactive
 * and every active row merges its distances to the candidates into its
 * partial list.  A candidate of the node's that was a candidate before
 * is ODP_ERR_DATA.  Adds the distance evaluations to *distances.
 */
extern OdpStatus odp_ss_node_exact(OdpContext *ctx, OdpSsNode *node,
								   const OdpSsRows *cands, double *lists,
								   int64_t *distances);

/*
 * When prune, makes every active row with upper bound < min_out inactive;
 * then proposes the min(m, active) active rows of largest upper bound
 * (+inf while a row's list holds fewer than k distances), ties by smaller
 * id, ascending by id, the bounds in rank.
 */
extern OdpStatus odp_ss_node_next(OdpContext *ctx, OdpSsNode *node, bool prune,
								  double min_out, int64_t m, OdpSsRows *out);

/* ---- supervisor side ---- */

typedef struct OdpSsSupervisor OdpSsSupervisor;

/*
 * A supervisor for rows rows in total (over every node), k, n <= rows and
 * m = odp_ss_batch_size(rows, n, ...).  prune false visits every row (a
 * distributed brute force: every row's exact weight).
 */
extern OdpStatus odp_ss_sup_create(OdpContext *ctx, int64_t rows, int32_t k,
								   int64_t n, int64_t m, bool prune,
								   OdpSsSupervisor **sup);
extern void odp_ss_sup_free(OdpSsSupervisor *sup);

/*
 * The next batch from the nodes' proposals (nprops of them): the first
 * batch (first) takes the m smallest (key, id), a later one the m largest
 * (upper, then smaller id); written ascending by id into cands (capacity
 * m).  cands->count 0: the run is over.
 */
extern OdpStatus odp_ss_sup_choose(OdpContext *ctx, OdpSsSupervisor *sup,
								   const OdpSsRows *props, int nprops,
								   bool first, OdpSsRows *cands);

/*
 * Merges the nodes' lists for cands (lists[i] from node i, nlists nodes,
 * each cands->count * k): the candidates' exact weights join the solving
 * set and Top; writes whether the nodes should prune and at which bound.
 */
extern OdpStatus odp_ss_sup_merge(OdpContext *ctx, OdpSsSupervisor *sup,
								  const OdpSsRows *cands,
								  const double *const *lists, int nlists,
								  bool *prune, double *min_out);

/* The top n, best first (ties by smaller id): returns the count. */
extern int64_t odp_ss_sup_top(const OdpSsSupervisor *sup, int64_t *ids,
							  double *scores);

/* The solving set's size, and its rows ascending by id with their weights. */
extern int64_t odp_ss_sup_set_size(const OdpSsSupervisor *sup);
extern void odp_ss_sup_set(const OdpSsSupervisor *sup, int64_t *ids,
						   double *weights);

/* Batches merged so far. */
extern int32_t odp_ss_sup_iterations(const OdpSsSupervisor *sup);

/*
 * The nodes as the supervisor's loop sees them: each call reaches every
 * node (over the network, or in this process) and returns when all have
 * answered, or with the first failure (message in the ctx it was given).
 * props and lists have one entry per node; the caller of
 * odp_ss_distributed sizes their buffers (capacity m rows, m * k doubles).
 * A callback must return, not jump out: the loop then frees what it holds.
 */
typedef struct OdpSsNodes
{
	int			count;
	void	   *arg;
	OdpStatus	(*first) (void *arg, int64_t m, OdpSsRows *props);
	OdpStatus	(*exact) (void *arg, const OdpSsRows *cands, double **lists);
	OdpStatus	(*next) (void *arg, bool prune, double min_out, int64_t m,
						 OdpSsRows *props);
} OdpSsNodes;

/*
 * Runs distributed SolvingSet over nodes into sup (from
 * odp_ss_sup_create, whose m it uses), with props (nodes->count rows
 * buffers of capacity m, dims dims), cands (capacity m) and lists
 * (nodes->count buffers of m * k doubles) from the caller.  The results are
 * then read from sup.  The time the supervisor's own work took (choosing,
 * merging) is added to *supervisor_ms.
 */
extern OdpStatus odp_ss_distributed(OdpContext *ctx, OdpSsSupervisor *sup,
									const OdpSsNodes *nodes, OdpSsRows *props,
									OdpSsRows *cands, double **lists,
									double *supervisor_ms);

/* ---- k nearest neighbours over shards ---- */

/*
 * For every query row q (ids qids, or NULL), its k nearest rows of cands
 * (ids cids, required), nearest first, ties by smaller id, the row whose
 * id is qids[q] excluded (when qids is given): writes their ids and
 * distances (the inner product, largest first, for that metric) to
 * out_ids[q * k ..] and dist[q * k ..]; where cands has too few rows the
 * list ends with id -1.  1 <= k < ODP_MAX_K.  queries and cands are of
 * one precision; the distances are float64 for both (float32 ones widen
 * exactly).
 */
extern OdpStatus odp_knn_excluding(OdpContext *ctx, const OdpMatrix *queries,
								   const int64_t *qids, const OdpMatrix *cands,
								   const int64_t *cids, OdpMetric metric,
								   int32_t k, double *dist, int64_t *out_ids);

/*
 * Merges nlists lists of the layout odp_knn_excluding writes (queries
 * lists of k each) into the k best of each query, as one search over the
 * union would rank them: by distance (inner product descending), then
 * smaller id.
 */
extern void odp_knn_merge(OdpMetric metric, int32_t k, int64_t queries,
						  const double *const *dist, const int64_t *const *ids,
						  int nlists, double *out_dist, int64_t *out_ids);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_DISTRIBUTED_H */
