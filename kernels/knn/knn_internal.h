/*-------------------------------------------------------------------------
 *
 * knn_internal.h
 *	  Declarations shared by the k-NN analytic's dispatcher (knn.c),
 *	  its CPU and GPU paths, its split over devices, and the analytics built
 *	  on the k-NN primitive (outliers/).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_KNN_INTERNAL_H
#define ODP_KNN_INTERNAL_H

#include "devices/device_set.h"
#include "include/odp_knn.h"

#ifdef __cplusplus
extern "C"
{
#endif

/*
 * Receives one query's neighbours, sorted ascending by (distance, index);
 * count = min(k, candidates available).  May be called from several
 * threads at once, never twice for one query.
 */
typedef void (*OdpKnnEmitFn) (void *arg, int64_t query, const float *dist,
							  const int64_t *index, int32_t count);
/* The same for float64 rows, whose distances are float64. */
typedef void (*OdpKnnEmit64Fn) (void *arg, int64_t query, const double *dist,
								const int64_t *index, int32_t count);

/*
 * Arguments of the CPU k-nearest-neighbour primitive (knn_cpu.c).  Float32
 * matrices (data) take query_norms, cand_norms and emit; float64 ones
 * (data64, both of them) take query_norms64, cand_norms64 and emit64.
 */
typedef struct OdpCpuKnnArgs
{
	OdpContext *ctx;
	const OdpMatrix *queries;
	const OdpMatrix *candidates;
	const float *query_norms;	/* cosine only, else NULL */
	const float *cand_norms;	/* cosine only, else NULL */
	const double *query_norms64;	/* float64 rows, cosine only, else NULL */
	const double *cand_norms64; /* float64 rows, cosine only, else NULL */
	OdpMetric	metric;
	int32_t		k;
	bool		self_join;		/* queries == candidates: skip the pair (i, i) */
	const int64_t *query_rows;	/* or NULL; else query q is candidate row
								 * query_rows[q], and that pair is skipped */
	OdpKnnEmitFn emit;
	OdpKnnEmit64Fn emit64;		/* float64 rows */
	void	   *emit_arg;
} OdpCpuKnnArgs;

extern OdpStatus odp_cpu_knn(const OdpCpuKnnArgs *args);

/*
 * The CPU path starts no more threads than calls of this many distance
 * terms (queries x candidates x dimensions) each: a thread costs tens of
 * microseconds to start and join, about what one does in 2^20 terms.
 */
#define ODP_KNN_CPU_TERMS_PER_THREAD ((int64_t) 1 << 20)

/*
 * How odp_cpu_knn splits a call of queries x candidates x dims over
 * threads (the context's cpu_threads): the threads it starts (no more
 * than one per ODP_KNN_CPU_TERMS_PER_THREAD terms), and the work items
 * they share: blocks of query_block queries against every candidate, or
 * for fewer queries than that keeps busy, ranges of the candidates
 * (ranges > 1) against every query.  The cost model reads the same plan.
 */
typedef struct OdpCpuKnnPlan
{
	int			threads;
	int64_t		query_block;
	int64_t		nblocks;		/* work items */
	int			ranges;			/* 1: blocks of queries */
} OdpCpuKnnPlan;

extern void odp_cpu_knn_plan(int64_t queries, int64_t candidates, int dims, int threads,
							 OdpCpuKnnPlan *plan);

/*
 * The cost model's count of the candidates a query's list of k (0: 10)
 * takes in over rows candidates (knn_cost.c).
 */
extern double odp_knn_cost_list_entries(int64_t rows, int32_t k);

/*
 * odp_compute_knn's checks of its inputs, metric and k (knn.c): ODP_OK, or
 * the status and message (in ctx) the call would fail with.
 */
extern OdpStatus odp_knn_check(OdpContext *ctx, const OdpMatrix *queries,
							   const OdpMatrix *cands, OdpMetric metric, int32_t k,
							   bool self_join);

/*
 * A few float32 queries against many candidates (knn_gpu_few.cu): every
 * distance, then each query's k smallest by a radix select; for the
 * distance metrics (not cosine, not the inner product), no self join, k
 * up to ODP_KNN_FEW_MAX_K (the host orders each query's k).
 * odp_gpu_knn_few_fits says whether a call qualifies; odp_gpu_knn_few
 * fails with ODP_ERR_GPU_OOM where its scratch does not fit the budget
 * (the caller then takes the tiled path, which works in chunks).
 */
#define ODP_KNN_FEW_MAX_QUERIES 32
#define ODP_KNN_FEW_MAX_K 1024
extern bool odp_gpu_knn_few_fits(const OdpMatrix *queries, const OdpMatrix *cands,
								 OdpMetric metric, int32_t k, bool self_join);
extern OdpStatus odp_gpu_knn_few(OdpContext *ctx, const OdpMatrix *queries,
								 const OdpMatrix *cands, OdpMetric metric, int32_t k,
								 float *dist, int64_t *index);

/*
 * GPU path of odp_compute_knn (knn_gpu_search.cu), arguments checked;
 * norms set exactly for cosine (qnorms == cnorms for a self join); dist
 * receives the metric's ranking values (the inner product negated).
 */
extern OdpStatus odp_gpu_knn(OdpContext *ctx, const OdpMatrix *queries,
							 const OdpMatrix *cands, const float *qnorms,
							 const float *cnorms, OdpMetric metric, int32_t k,
							 bool self_join, float *dist, int64_t *index);

/*
 * odp_gpu_knn for query rows [first, first + count) only (count 0: every
 * row); writes their lists at dist/index[first * k ..].
 */
extern OdpStatus odp_gpu_knn_rows(OdpContext *ctx, const OdpMatrix *queries,
								  const OdpMatrix *cands, const float *qnorms,
								  const float *cnorms, OdpMetric metric,
								  int32_t k, bool self_join, int64_t first,
								  int64_t count, float *dist, int64_t *index);

/*
 * A float32 self join split over devices by its pairs, not its rows
 * (knn_split.c builds it, the tensor-core filter uses it): part p finds
 * the thresholds of rows [first[p], first[p + 1]) and returns those rows'
 * lists, while the pairs of rows i < j are shared out by tiles, each part
 * testing its share for both rows of a pair (the symmetric filter, which
 * one device runs over every pair).  The parts then exchange the lists.
 * Each part joins once (odp_knn_team_join), saying whether it can; the
 * pairs are shared only when all can, else each part computes its own
 * rows' lists alone, as a split by rows does.
 */
typedef struct OdpKnnTeam
{
	int			parts;
	int64_t		first[ODP_MAX_GPUS + 1];
	OdpMeeting *meeting;
	float	   *kth;			/* every row's threshold distance, from its
								 * part (NaN: its sample fell short) */
	bool		can[ODP_MAX_GPUS];	/* written before the join's meeting */
	bool		joined[ODP_MAX_GPUS];
	bool		all;			/* every part can (after the join) */

	/* each part's lists of every row, on its device, between two meetings */
	int			device[ODP_MAX_GPUS];
	const float *dist[ODP_MAX_GPUS];
	const int64_t *index[ODP_MAX_GPUS];
	const int32_t *count[ODP_MAX_GPUS];
} OdpKnnTeam;

/*
 * A team of parts parts, part p owning rows [first[p], first[p + 1]) of
 * rows (knn_team.c); NULL without memory.
 */
extern OdpKnnTeam *odp_knn_team_make(int parts, const int64_t *first, int64_t rows);
extern void odp_knn_team_free(OdpKnnTeam *team);

/*
 * Part part's one join: records can, meets the others, and sets *all to
 * whether every part can.  False when the run was stopped meanwhile.  A
 * part that has joined gets its earlier answer at once.
 */
extern bool odp_knn_team_join(OdpContext *pctx, OdpKnnTeam *team, int part,
							  bool can, bool *all);

/*
 * Whether a float32 self join of rows x dims under metric with k
 * neighbours is one the tensor-core filter shares out over a team
 * (knn_gpu_tc.cu): its symmetric filter's shapes.
 */
extern bool odp_gpu_knn_team_fits(int64_t rows, int32_t dims, OdpMetric metric,
								  int32_t k);

/*
 * Part part of team on ctx's device: the self join of rows (norms for
 * cosine), writing the lists of rows [team->first[part],
 * team->first[part + 1]) at dist/index[first * k ..].
 */
extern OdpStatus odp_gpu_knn_team_rows(OdpContext *ctx, const OdpMatrix *rows,
									   const float *norms, OdpMetric metric,
									   int32_t k, OdpKnnTeam *team, int part,
									   float *dist, int64_t *index);

/*
 * GPU path of odp_compute_knn for float64 rows (queries->data64 and
 * cands->data64; knn_gpu_search.cu over knn_gpu_wide.cu's kernel),
 * arguments checked: distances by
 * odp_distance64, in float64, bit-identical to the CPU path's; norms set
 * exactly (odp_row_norm64) for cosine, qnorms == cnorms for a self join;
 * dist receives the metric's ranking values (the inner product negated).
 * first/count as for odp_gpu_knn_rows (count 0: every query row).
 */
extern OdpStatus odp_gpu_knn64_rows(OdpContext *ctx, const OdpMatrix *queries,
									const OdpMatrix *cands, const double *qnorms,
									const double *cnorms, OdpMetric metric,
									int32_t k, bool self_join, int64_t first,
									int64_t count, double *dist, int64_t *index);
/* odp_gpu_knn64_rows over the call's device set, as odp_split_knn. */
extern OdpStatus odp_split_knn64(OdpContext *ctx, const OdpMatrix *queries,
								 const OdpMatrix *cands, const double *qnorms,
								 const double *cnorms, OdpMetric metric,
								 int32_t k, bool self_join, double *dist,
								 int64_t *index);
/*
 * Float64 k-NN on the GPU through the float32 k-NN as a filter
 * (knn_wide_filter.c; the bound is proven there): the same lists, bit for
 * bit, as odp_split_knn64, which it calls itself for the queries the
 * filter cannot certify and for whole calls it does not serve (the inner
 * product, small or too large shapes, magnitudes float32 cannot hold).
 * Arguments as odp_split_knn64's.
 */
extern OdpStatus odp_knn64_filtered(OdpContext *ctx, const OdpMatrix *queries,
									const OdpMatrix *cands,
									const double *qnorms, const double *cnorms,
									OdpMetric metric, int32_t k,
									bool self_join, double *dist,
									int64_t *index);

/*
 * Every row's outlier score of float64 rows m (k nearest other rows'
 * distances summed by odp_sum_ascending64) through the same filter, the
 * lists summed on the device: the scores of the float64 CPU path, bit for
 * bit.  norms: m's, for cosine.  Where the filter does not take the call
 * (its shape, or data float32 cannot hold), sets *unfiltered and writes no
 * score: odp_split_outlier_scores64 computes them exactly.
 */
extern OdpStatus odp_knn64_filtered_scores(OdpContext *ctx, const OdpMatrix *m,
										   const double *norms, OdpMetric metric,
										   int32_t k, double *scores,
										   bool *unfiltered);

/*
 * Whether odp_knn64_filtered filters a call of this shape (the data may
 * still send it to odp_split_knn64): lets a caller that needs no lists
 * keep its own path for the others.
 */
extern bool odp_knn64_filter_shape(OdpMetric metric, int64_t nq, int64_t nc,
								   int32_t k, bool self_join);

/*
 * Counters of the filter, for tests: queries it ran on, queries it
 * certified, queries that went to the exact float64 kernel; and the
 * smallest call it filters (candidates, queries; smaller ones go to
 * odp_split_knn64 alone), which tests lower.
 */
extern int64_t odp_knn64_filter_queries;
extern int64_t odp_knn64_filter_certified;
extern int64_t odp_knn64_filter_fallbacks;
extern int64_t odp_knn64_filter_min_cands;
extern int64_t odp_knn64_filter_min_queries;
/*
 * Wall time of the filter's stages, summed over calls, for benchmarks:
 * the float64 rows' upload and float32 copies, float32 k-NN, refinement
 * (lists back included), exact kernel for the uncertified queries.
 */
extern double odp_knn64_filter_ms[4];

/*
 * One filtered float64 call (odp_knn64_filtered): float64 rows (data64;
 * one matrix for a self join), their norms for cosine (else NULL), k and
 * the float32 lists' length kp, the centre mu (dims values; NULL for
 * cosine); outputs for every query row: its k nearest into dist/index[q *
 * k ..] (or, where sums is not NULL, their odp_sum_ascending64 into
 * sums[q] instead) and certified[q], whether they are proven exact.
 */
typedef struct OdpFilter64
{
	const OdpMatrix *queries;
	const OdpMatrix *cands;
	const double *qnorms;
	const double *cnorms;
	bool		self_join;
	OdpMetric	metric;
	int32_t		k;
	int32_t		kp;
	const double *mu;
	double	   *dist;
	int64_t    *index;
	double	   *sums;
	unsigned char *certified;
} OdpFilter64;

/*
 * Query rows [first, first + count) of f on ctx's device
 * (knn_gpu_filter64.cu): writes their lists and certificates, and the
 * stages' wall times (copies, float32 k-NN, refinement).  Sets *refused
 * (and returns ODP_OK, nothing written) where the data or the budget does
 * not allow the filter.  Adds to ctx->transfer_ms, compute_ms and chunks.
 */
extern OdpStatus odp_gpu_knn64_filter_rows(OdpContext *ctx, const OdpFilter64 *f,
										   int64_t first, int64_t count,
										   double stage_ms[3], bool *refused);

/*
 * k-NN over the call's device set (knn_split.c): the query rows split into
 * one contiguous range per part, every candidate row on every device;
 * with one part (or too few queries) odp_gpu_knn on the first device.
 */
extern OdpStatus odp_split_knn(OdpContext *ctx, const OdpMatrix *queries,
							  const OdpMatrix *cands, const float *qnorms,
							  const float *cnorms, OdpMetric metric, int32_t k,
							  bool self_join, float *dist, int64_t *index);

/*
 * The query-row split of the distance analytics (knn_split.c, used by
 * outliers_split.c too): resolves ctx's device set into *set and sets
 * *split when the call splits (several parts, a block of queries for
 * each, and work enough: OdpDeviceSetWorth), writing each part's first
 * query into first[0 .. set->count] (ODP_MAX_GPUS + 1 entries); else the
 * call runs on the first device.
 */
extern OdpStatus odp_knn_split_plan(OdpContext *ctx, const OdpMatrix *queries,
									const OdpMatrix *cands, OdpDeviceSet *set,
									int64_t *first, bool *split);

/*
 * OdpDeviceSetRun of a query-row split, the rows of queries and cands
 * page-locked for every part meanwhile.
 */
extern OdpStatus odp_knn_split_run(OdpContext *ctx, const OdpDeviceSet *set,
								   const OdpMatrix *queries, const OdpMatrix *cands,
								   OdpPartFn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_KNN_INTERNAL_H */
