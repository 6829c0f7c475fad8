/*-------------------------------------------------------------------------
 *
 * odp_engine.h
 *	  Plain C API of the odp_gpu compute engine (CPU and GPU paths).
 *
 * The engine knows nothing of PostgreSQL.  It takes an N x D float32
 * matrix in row-major order (float64, with optional flags of missing
 * values, for the correlations), returns results into buffers the caller
 * owns, and reports failure as a status code plus a message in the
 * context.  It never exits, aborts, longjmps or throws, and it frees all
 * host and device memory it allocated before returning, on every path.
 *
 * Entry points are named odp_compute_<analytic>; the bare SQL names
 * (odp_outlier_scores, ...) belong to the SQL-callable C functions in src/.
 *
 * Row order is meaningful: wherever two results tie, the engine prefers
 * the row with the smaller index.  Callers that want "ties by smaller id"
 * pass rows sorted by ascending id (src/ does).
 *
 * Distances are computed in float32, one dimension after the other in
 * index order and without fused multiply-add, on both paths, so the CPU
 * and the GPU produce bit-identical distances; scores sum the k smallest
 * distances in ascending order in float64.  Both paths therefore return
 * the same scores and the same ranking.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_engine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ENGINE_H
#define ODP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* Limits the engine enforces; src/ checks them first to report nicely. */
#define ODP_MAX_DIMS		16384		/* features per row */
#define ODP_MAX_K			4096		/* neighbours per row */
#define ODP_MAX_ROWS		(((int64_t) 1 << 31) - 1)	/* rows per input */
#define ODP_MAX_SERIES_LEN	(1 << 20)	/* values per correlated series */
#define ODP_MESSAGE_LEN		512
#define ODP_MAX_GPUS		16			/* entries of a device list */
#define ODP_GPUS_ALL		(-1)		/* OdpContext.gpu_count: every device */

typedef enum OdpStatus
{
	ODP_OK = 0,
	ODP_ERR_INVALID_ARGUMENT,	/* bad k, n, sizes: caller's fault */
	ODP_ERR_DATA,				/* bad values (e.g. zero vector with cosine) */
	ODP_ERR_LIMIT,				/* input over an engine limit */
	ODP_ERR_HOST_OOM,			/* host allocation failed */
	ODP_ERR_GPU_OOM,			/* device allocation failed */
	ODP_ERR_NO_GPU,				/* no usable GPU (no driver, no device, ...) */
	ODP_ERR_GPU,				/* any other CUDA failure */
	ODP_ERR_CANCELLED,			/* the cancel callback asked to stop */
	ODP_ERR_INTERNAL			/* a bug: an invariant did not hold */
} OdpStatus;

typedef enum OdpMetric
{
	ODP_METRIC_EUCLIDEAN = 0,
	ODP_METRIC_SQEUCLIDEAN,
	ODP_METRIC_MANHATTAN,
	ODP_METRIC_CHEBYSHEV,
	ODP_METRIC_COSINE,
	ODP_METRIC_INNER_PRODUCT	/* k-NN only: largest inner product first */
} OdpMetric;

#define ODP_METRIC_COUNT 6

typedef enum OdpDevice
{
	ODP_DEVICE_CPU = 0,
	ODP_DEVICE_GPU
} OdpDevice;

/*
 * Cancellation callback: return true to ask the engine to stop.  The engine
 * calls it from the caller's thread only, between bounded pieces of work
 * (tiles, kernel launches), never from a worker thread.
 */
typedef bool (*OdpCancelFn) (void *arg);

/*
 * Per-call context.  The caller fills the inputs (zeroing the struct first
 * gives sane defaults) and reads the outputs after the call.
 */
typedef struct OdpContext
{
	/* inputs */
	OdpDevice	device;			/* which path runs */
	int			gpu_id;			/* CUDA device ordinal, when gpu_count is 0 */

	/*
	 * The devices one call spreads its work over: gpu_count 0 means gpu_id
	 * alone (as a zeroed context gives), ODP_GPUS_ALL every device of the
	 * host, else gpu_ids[0 .. gpu_count).  An ordinal may appear more than
	 * once: each entry is then a part of its own, with its own stream and
	 * an equal share of that device's budget (a way to exercise the split
	 * on a host with one GPU).  Analytics that run on one device only
	 * (SolvingSet) use the first entry.  Every split gives the same
	 * results as one device.
	 */
	int			gpu_count;
	int			gpu_ids[ODP_MAX_GPUS];
	size_t		gpu_memory_limit;	/* bytes the GPU path may use on each
									 * device; 0 = 90% of its free memory */
	int			cpu_threads;	/* worker threads for the CPU path; <= 1 = one */
	OdpCancelFn cancel;			/* may be NULL */
	void	   *cancel_arg;

	/* outputs */
	char		message[ODP_MESSAGE_LEN];	/* set on failure, may be set on OK */
	double		transfer_ms;	/* host<->device copies (GPU path) */
	double		compute_ms;		/* distance and selection work */
	int64_t		chunks;			/* query x candidate chunks the GPU ran */
	int			gpu_parts;		/* device parts the GPU path's work was
								 * spread over (2 or more), left as the
								 * caller set it where it ran on one */
} OdpContext;

/*
 * Dense input: rows x dims float32, row-major, finite values.  Rows are
 * addressed by index 0 .. rows-1.  ids, where given, are the rows' ids,
 * strictly ascending: SolvingSet draws its first candidates by id, so
 * that the same rows give the same run however they are split
 * (odp_distributed.h); NULL stands for ids equal to the indexes.
 */
typedef struct OdpMatrix
{
	const float *data;
	int64_t		rows;
	int32_t		dims;
	const int64_t *ids;
} OdpMatrix;

/*
 * Outlier scores (seed 001, Definition 3.1): for every row p, the sum of
 * the distances from p to its k nearest neighbours among the other rows
 * (p itself excluded by index; a duplicate of p counts, at distance 0).
 *
 * Requires 1 <= k < rows and k <= ODP_MAX_K.  scores must hold rows
 * doubles.  Runs on ctx->device.
 */
extern OdpStatus odp_compute_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
											OdpMetric metric, int32_t k,
											double *scores);

/*
 * k nearest neighbours: for every row q of queries, the k rows of cands
 * nearest to it, nearest first, ties by smaller row index.  Writes them to
 * index[q * k .. q * k + k) and their distances to dist (same layout).
 * For ODP_METRIC_INNER_PRODUCT "nearest" is "largest inner product" and
 * dist holds the inner products, descending.  With self_join, queries
 * must be cands (the same matrix) and row q is not its own neighbour.
 *
 * Requires 1 <= k <= ODP_MAX_K and k <= cands->rows (minus one for a self
 * join): callers that want "all rows when k is larger" pass the smaller k.
 * Distances are the float32 values odp_distance defines, on both paths.
 */
extern OdpStatus odp_compute_knn(OdpContext *ctx, const OdpMatrix *queries,
								 const OdpMatrix *cands, OdpMetric metric,
								 int32_t k, bool self_join, float *dist,
								 int64_t *index);

/* Whether a metric is a distance (every metric but the inner product). */
extern bool odp_metric_is_distance(OdpMetric metric);

/* How odp_compute_top_outliers finds the top n. */
typedef enum OdpOutlierMethod
{
	ODP_METHOD_AUTO = 0,		/* whichever is expected to be faster */
	ODP_METHOD_BRUTEFORCE,		/* every row's score, then the n best */
	ODP_METHOD_SOLVINGSET		/* SolvingSet (seeds 000, 001): prunes rows */
} OdpOutlierMethod;

/* What a top-n outlier computation did. */
typedef struct OdpTopOutliersStats
{
	OdpOutlierMethod method;	/* the method that ran (never AUTO) */
	int64_t		distances;		/* distance evaluations performed */
	int64_t		solving_set_size;	/* rows whose exact score was computed */
	int32_t		iterations;		/* SolvingSet candidate batches */
	int32_t		batch_size;		/* SolvingSet candidates per batch (m) */
} OdpTopOutliersStats;

/*
 * Top-n outliers: the min(n, rows) rows with the highest outlier scores
 * (as odp_compute_outlier_scores defines them), best first, ties by
 * smaller row index.  Writes their row indexes into order and their exact
 * scores into scores (both min(n, rows) long) and returns the count in
 * *count.  Every method returns exactly the same rows, order and scores.
 *
 * If solving_set is not NULL it must hold rows entries; the rows whose
 * exact score the computation established (the solving set, seed 001
 * Definition 3.3, for SolvingSet; every row for brute force) are written
 * there in ascending row order with their scores in solving_scores, and
 * stats->solving_set_size says how many.  The solving set is the same on
 * both paths.
 *
 * batch_size is SolvingSet's number of candidates per batch (m), 0 for
 * its default rule (rows / 64 within 4,096 .. 16,384); either is raised to
 * n and capped at rows.  A smaller m makes a smaller solving set in more
 * iterations.  The top n do not depend on it.
 *
 * Requires 1 <= k < rows, k < ODP_MAX_K for SolvingSet, n >= 1,
 * batch_size >= 0.
 */
extern OdpStatus odp_compute_top_outliers(OdpContext *ctx, const OdpMatrix *m,
										  OdpMetric metric, int32_t k,
										  int64_t n, OdpOutlierMethod method,
										  int64_t batch_size,
										  int64_t *order, double *scores,
										  int64_t *count,
										  int64_t *solving_set,
										  double *solving_scores,
										  OdpTopOutliersStats *stats);

/*
 * Selects the n highest scores, ties by smaller id (ids may be NULL: then
 * by smaller index).  Writes min(n, rows) row indexes into order, best
 * first, and returns how many it wrote.  Pure host code, O(rows log n).
 */
extern int64_t odp_top_n(const double *scores, const int64_t *ids,
						 int64_t rows, int64_t n, int64_t *order);

/* ---- Pearson and Spearman correlation of series ---- */

/*
 * Dense float64 input: rows x dims, row-major, one series per row, its
 * values in order.  missing, when not NULL, holds rows x dims flags: a
 * nonzero flag marks a value as absent (its data entry is then ignored).
 * Present values must be finite.
 */
typedef struct OdpMatrix64
{
	const double *data;
	const uint8_t *missing;		/* or NULL: every value present */
	int64_t		rows;
	int32_t		dims;
} OdpMatrix64;

/* Which coefficient odp_compute_pearson_* compute. */
typedef enum OdpPearsonMethod
{
	ODP_PEARSON_METHOD_PEARSON = 0,
	ODP_PEARSON_METHOD_SPEARMAN			/* Pearson of the ranks, ties averaged */
} OdpPearsonMethod;

/* What odp_compute_pearson_top ranks partners by (largest first). */
typedef enum OdpPearsonRank
{
	ODP_PEARSON_RANK_ABS = 0,		/* |r| */
	ODP_PEARSON_RANK_POSITIVE,		/* r */
	ODP_PEARSON_RANK_NEGATIVE		/* -r */
} OdpPearsonRank;

/*
 * The common arguments of a correlation call.  x holds series a, y (or
 * NULL) series b; with y NULL every pair of distinct rows of x is
 * correlated (a self correlation), else every row of x with every row of
 * y, and both must have the same dims.
 *
 * A pair's coefficient uses the positions where both series have a value
 * (all of them unless a matrix has missing flags, pandas' pairwise-
 * complete rule); a pair with fewer than min_periods such positions, or
 * over which either series is constant, has no coefficient.  Spearman
 * needs complete data (no missing flags).  r is computed in float64 from
 * centred series (never from one-pass sums of squares) and lies in
 * [-1, 1].
 */
typedef struct OdpPearsonProblem
{
	const OdpMatrix64 *x;
	const OdpMatrix64 *y;		/* or NULL: x against itself */
	OdpPearsonMethod method;
	int32_t		min_periods;	/* >= 1; pairs need max(2, this) positions */
} OdpPearsonProblem;

/*
 * Receives pairs of odp_compute_pearson_pairs in ascending (a, b) order, a
 * and b row indexes of x and of y (of x for a self correlation).  Called
 * from the caller's thread only.  Returning false stops the computation:
 * the call then frees everything and returns ODP_ERR_CANCELLED.
 */
typedef bool (*OdpPearsonPairFn) (void *arg, const int64_t *a, const int64_t *b,
							   const double *r, int64_t count);

/*
 * Every pair (a, b) with |r| >= min_abs_r (0 <= min_abs_r <= 1), passed
 * to emit in ascending (a, b) order; a self correlation gives each
 * unordered pair once, as a < b.  *pairs receives the number of pairs.
 * Runs on ctx->device.
 */
extern OdpStatus odp_compute_pearson_pairs(OdpContext *ctx,
										const OdpPearsonProblem *p,
										double min_abs_r, OdpPearsonPairFn emit,
										void *emit_arg, int64_t *pairs);

/*
 * For every row a of x its k partners (rows b of y, or of x other than a
 * for a self correlation) ranked first by rank, ties by smaller b: writes
 * them to other[a * k ..] and their coefficients to r[a * k ..], best
 * first; where a has fewer than k partners with a coefficient the list
 * ends with other = -1.  Requires 1 <= k <= ODP_MAX_K.  Runs on
 * ctx->device.
 */
extern OdpStatus odp_compute_pearson_top(OdpContext *ctx, const OdpPearsonProblem *p,
									  int32_t k, OdpPearsonRank rank,
									  int64_t *other, double *r);

/*
 * Whether the GPU path of the correlations can run: a GPU is usable and
 * cuBLAS, which it loads at first use, could be loaded.  Otherwise
 * returns ODP_ERR_NO_GPU with the reason in ctx->message.
 */
extern OdpStatus odp_gpu_pearson_available(OdpContext *ctx);

/* ---- Skyline and k-skyband ---- */

/*
 * A skyline problem: the rows of points (no missing values, every value
 * finite), each feature to be minimised, or maximised where maximize[d]
 * is nonzero (maximize NULL: minimise every feature).  Row p dominates row
 * q when p is at least as good as q in every feature and strictly better
 * in one; equal rows do not dominate each other.  Values are compared as
 * the float64 they are (-0 equals 0).
 */
typedef struct OdpSkylineProblem
{
	const OdpMatrix64 *points;
	const uint8_t *maximize;	/* dims flags, or NULL */
	int32_t		band;			/* >= 1: the k of the k-skyband */
} OdpSkylineProblem;

/* What a skyline computation did. */
typedef struct OdpSkylineStats
{
	int64_t		members;		/* rows dominated by fewer than band others */
	int64_t		pair_tests;		/* (dominator candidate, row) pairs looked at */
	int64_t		full_tests;		/* of them, compared feature by feature */
	int64_t		blocks;			/* blocks of rows, in presorted order */
	double		presort_ms;		/* of compute_ms: ranks, keys, order */
	double		loop_ms;		/* of compute_ms: the blocks' comparisons */
} OdpSkylineStats;

/*
 * The k-skyband (band = k; the skyline for band = 1): writes, for every
 * row r, dominated_by[r] = the number of rows that dominate r when that is
 * less than band, else band (r is not in the band).  stats may be NULL.
 * Both paths give the same numbers.
 */
extern OdpStatus odp_compute_skyline(OdpContext *ctx,
									 const OdpSkylineProblem *p,
									 int32_t *dominated_by,
									 OdpSkylineStats *stats);

/* ---- Interval (region) matching ---- */

/*
 * A set of regions: axis-parallel boxes of dims dimensions, one interval
 * per dimension, as order-preserving 64-bit keys of their bounds
 * (odp_order.h: odp_order_int64 for integers, dates and timestamps,
 * odp_order_float64 for floating-point values), rows x dims each,
 * row-major.  flags holds rows x dims ODP_BOUND_* bits; the key of an
 * infinite bound is ignored.  flags NULL promises that every bound is
 * included and finite and that no lower key exceeds its upper key (no
 * interval is empty): then nothing is checked or copied.
 *
 * Overlap in one dimension is what PostgreSQL's range && means: a lower
 * bound L and an upper bound U "meet" when L's value is below U's, or
 * equal and both included; an infinite bound meets every bound; two
 * intervals overlap when each one's lower bound meets the other's upper
 * bound.  An interval flagged empty, or whose own bounds do not meet,
 * overlaps nothing, and so does its region.  Two regions overlap when
 * they overlap in every dimension.
 */
#define ODP_BOUND_LOWER_EXCLUSIVE	0x01
#define ODP_BOUND_UPPER_EXCLUSIVE	0x02
#define ODP_BOUND_LOWER_INFINITE	0x04
#define ODP_BOUND_UPPER_INFINITE	0x08
#define ODP_BOUND_EMPTY				0x10

typedef struct OdpRegions
{
	const uint64_t *lower;
	const uint64_t *upper;
	const uint8_t *flags;		/* or NULL */
	int64_t		rows;
	int32_t		dims;
} OdpRegions;

/* How the bounds of one dimension are compared. */
typedef enum OdpIntervalCompare
{
	ODP_INTERVAL_EXACT = 0,		/* as keys, with the flags (above) */
	ODP_INTERVAL_BOX			/* keys of float64 values, with no flags,
								 * compared as PostgreSQL's box && compares
								 * coordinates: L meets U when L <= U + 1e-6
								 * (EPSILON of utils/geo_decls.h), in float64 */
} OdpIntervalCompare;

/* Most dimensions a region may have. */
#define ODP_MAX_INTERVAL_DIMS	100

/*
 * A matching problem: every region of a (subscriptions) against every
 * region of b (updates), or, with b NULL, every pair of distinct regions
 * of a.  compare has dims entries (NULL: every dimension exact); a and b
 * have the same dims, from 1 to ODP_MAX_INTERVAL_DIMS, and at most
 * ODP_MAX_ROWS rows each (0 is allowed: no pairs).
 */
typedef struct OdpIntervalProblem
{
	const OdpRegions *a;
	const OdpRegions *b;		/* or NULL */
	const uint8_t *compare;		/* OdpIntervalCompare per dimension, or NULL */
} OdpIntervalProblem;

/* What a matching computation did. */
typedef struct OdpIntervalStats
{
	int64_t		pairs;			/* overlapping pairs */
	int64_t		candidates;		/* pairs that overlap in the sweep dimension,
								 * whose other dimensions were tested (or,
								 * with one exact dimension, all pairs) */
	int64_t		empty;			/* regions that overlap nothing */
	int32_t		sweep_dim;		/* the dimension whose sorted lower bounds
								 * drive the search */
	int32_t		runs;			/* chunks of subscriptions x chunks of
								 * updates the path ran */
	double		prep_ms;		/* of compute_ms: positions, empty regions and
								 * the sweep dimension, on the host */
	double		setup_ms;		/* of compute_ms: the path's start (GPU:
								 * device, plan, buffers) and end */
	double		match_ms;		/* of compute_ms: sorted structures, windows,
								 * candidates and the pairs' order */
	double		sort_ms;		/* of match_ms: ordering the pairs */
} OdpIntervalStats;

/*
 * Receives pairs of odp_compute_interval_pairs in ascending (a, b) order,
 * a a row of p->a, b a row of p->b (of p->a, with a < b, for one set).
 * Called from the caller's thread only.  Returning false stops the
 * computation: the call then frees everything and returns
 * ODP_ERR_CANCELLED.
 */
typedef bool (*OdpIntervalPairFn) (void *arg, const int64_t *a,
								   const int64_t *b, int64_t count);

/*
 * Every overlapping pair, handed to emit in ascending (a, b) order; *pairs
 * receives their number.  Sort-based matching: the lower bounds of the
 * sweep dimension are sorted, each region finds the regions whose lower
 * bound lies within its interval there by binary search, and the other
 * dimensions are tested on the fly.  Runs on ctx->device; both paths give
 * the same pairs.  stats may be NULL.
 */
extern OdpStatus odp_compute_interval_pairs(OdpContext *ctx,
											const OdpIntervalProblem *p,
											OdpIntervalPairFn emit,
											void *emit_arg, int64_t *pairs,
											OdpIntervalStats *stats);

/*
 * The number of overlapping pairs, without producing them (with one exact
 * dimension, without looking at them).  stats may be NULL.
 */
extern OdpStatus odp_compute_interval_count(OdpContext *ctx,
											const OdpIntervalProblem *p,
											int64_t *pairs,
											OdpIntervalStats *stats);

/* Parses "euclidean" etc.; returns false for an unknown name. */
extern bool odp_metric_from_name(const char *name, OdpMetric *metric);
extern const char *odp_metric_name(OdpMetric metric);

/* Monotonic wall clock in milliseconds, for phase timings on both sides. */
extern double odp_now_ms(void);

/* Returns a fixed English description of a status. */
extern const char *odp_status_name(OdpStatus status);

/* ---- GPU runtime, shared by every analytic ---- */

typedef struct OdpGpuInfo
{
	int			index;
	char		name[256];
	int			cc_major;
	int			cc_minor;
	int			multiprocessors;
	size_t		total_memory;
	size_t		free_memory;
} OdpGpuInfo;

/*
 * Returns whether the build has a GPU path at all (false when compiled
 * without CUDA).
 */
extern bool odp_gpu_compiled(void);

/* CUDA runtime version the library was built with (e.g. 13000), or 0. */
extern int	odp_gpu_build_version(void);

/*
 * Initialises CUDA lazily in the calling process and counts the devices.
 * On success returns ODP_OK and sets *count (>= 1).  Without a driver or a
 * device it returns ODP_ERR_NO_GPU with the reason in ctx->message.  Safe to
 * call repeatedly; the outcome is cached per process.
 */
extern OdpStatus odp_gpu_probe(OdpContext *ctx, int *count,
							   int *driver_version, int *runtime_version);

/* Fills *info for device ordinal index (after a successful probe). */
extern OdpStatus odp_gpu_device_info(OdpContext *ctx, int index,
									 OdpGpuInfo *info);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_ENGINE_H */
