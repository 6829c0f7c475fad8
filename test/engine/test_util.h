/*-------------------------------------------------------------------------
 *
 * test_util.h
 *	  Helpers shared by the engine unit tests (defined in test_util.c):
 *	  checks, reproducible random data, the naive references, contexts and
 *	  the GPU probe; and each analytic's tests, which runner.c calls.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_util.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_TEST_UTIL_H
#define ODP_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/odp_engine.h"

/* Kinds of generated data. */
typedef enum Gen
{
	GEN_UNIFORM,				/* uniform in [-1, 1) */
	GEN_UNIT,					/* uniform in [0, 1), as the benchmark */
	GEN_DUPLICATES,				/* copies of a few prototype rows */
	GEN_TIES,					/* small integers: many equal distances */
	GEN_CONSTANT_COLUMNS,		/* every third column constant */
	GEN_IDENTICAL,				/* all rows equal */
	GEN_OFFSET,					/* uniform in [299, 301): far from the origin */
	GEN_WIDE,					/* uniform in [-1, 1), times 2^30 in even
								 * columns and 2^-30 in odd ones: values the
								 * filter's half copies flush to zero */
	GEN_GRID					/* integers 1 .. 13 (Poker's ranks): sparse
								 * rows with many equal distances */
} Gen;

extern const char *const gen_names[];

/* Whether odp_gpu_probe found a usable GPU, and why not otherwise. */
extern bool gpu_ok;
/* Compute capability of GPU 0 as major * 10 + minor (90: H100, H200); 0 without. */
extern int gpu_cc;
extern char gpu_reason[ODP_MESSAGE_LEN];

/* Records one check and prints its line ("ok   - ..." or "FAIL - ..."). */
extern void check(bool ok, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* Reproducible pseudo-random numbers: 64 bits, or a float in [0, 1). */
extern uint64_t rng_next(void);
extern float rng_unit(void);

/*
 * Value of a GPU counter declared weak (absent from CPU-only builds,
 * WITH_CUDA=no): 0 there.
 */
static inline int64_t
gpu_counter(const int64_t *counter)
{
	return counter != NULL ? *counter : 0;
}

/*
 * Turns the GPU's exact integer k-NN path (knn_gpu_int.cu) off, or back
 * to its production threshold, so that a test can exercise the float
 * paths on integer data; a no-op in CPU-only builds.
 */
extern void gpu_integer_path(bool on);

/* Allocates or exits: the tests have no use for running out of memory. */
extern void *xmalloc(size_t n);

/* rows x dims data of the given kind, no zero row; the caller frees it. */
extern float *make_data(Gen gen, int64_t rows, int dims);

/* The naive reference scores (every distance, sorted, k smallest summed). */
extern void reference_scores(const float *x, int64_t rows, int dims,
							 OdpMetric metric, int k, double *scores);

/*
 * The naive reference of odp_compute_knn: every candidate's distance
 * (odp_distance), the k smallest by (distance, index); inner products
 * reported positive.  dist and index hold q->rows * k entries.
 */
extern void reference_knn(const OdpMatrix *q, const OdpMatrix *c,
						  OdpMetric metric, int k, bool self_join,
						  float *dist, int64_t *index);

/* A context for device dev with sane defaults (4 CPU threads). */
extern OdpContext make_ctx(OdpDevice dev);

/*
 * Probes the GPU, sets gpu_ok (and gpu_reason when there is none) and
 * checks what was found; call before any test.
 */
extern void probe_gpu(void);

/* Prints "N passed, N failed"; returns the exit status (1 when a check failed). */
extern int	test_summary(void);

/* The outlier-score and odp_top_n tests (test_outliers.c). */
extern void run_outlier_tests(void);

/* The SolvingSet tests (test_outliers_solvingset.c). */
extern void run_solvingset_tests(void);

/* The k-NN tests (test_knn.c). */
extern void run_knn_tests(void);

/* The k-NN cost model (test_knn_cost.c). */
extern void run_knn_cost_tests(void);

/* Device copies made piece by piece from a page-locked ring (test_pieces.c). */
extern void run_piece_copy_tests(void);

/* The correlation tests (test_pearson.c). */
extern void run_pearson_tests(void);

/* The skyline tests (test_skyline.c). */
extern void run_skyline_tests(void);

/* The region matching tests (test_intervals.c). */
extern void run_interval_tests(void);

/* The distributed forms' tests (test_distributed.c). */
extern void run_distributed_tests(void);

/* The device-set tests (test_devices.c). */
extern void run_device_tests(void);

/* The integer-valued, tie-heavy k-NN and outlier tests (test_integer.c). */
extern void run_integer_tests(void);

/* The spatial path's tests (test_spatial.c). */
extern void run_spatial_tests(void);

/* The float64 rows' k-NN and outlier tests (test_precision.c). */
extern void run_precision_tests(void);

#endif							/* ODP_TEST_UTIL_H */
