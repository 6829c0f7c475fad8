/*-------------------------------------------------------------------------
 *
 * outliers.c
 *	  Distance-based outlier scores (seed 001, Definition 3.1): argument
 *	  checks, the CPU path, and dispatch to the GPU path.
 *
 * The weight of a row p is the sum of the distances from p to its k
 * nearest neighbours in the data set, p itself excluded.  Both paths
 * produce each row's k smallest distances, sort them ascending and sum
 * them in float64 in that order (odp_sum_ascending), which together with
 * the shared distance definition makes their scores identical.  Float64
 * rows (OdpMatrix.data64) do the same in float64 throughout
 * (odp_distance64, odp_sum_ascending64); on the GPU, where the shape
 * suits it, through the float32 filter's certified lists
 * (knn_wide_filter.c), summed here as the CPU path sums them.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/outliers.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>

#include "common/engine_internal.h"
#include "include/odp_distance.h"
#include "include/odp_outliers.h"
#include "knn/knn_internal.h"
#include "knn/spatial.h"
#include "outliers/outliers_internal.h"

/* Stores one row's weight; emit callback of the CPU k-NN primitive. */
static void
cpu_outlier_emit(void *arg, int64_t query, const float *dist,
				 const int64_t *index, int32_t count)
{
	double	   *scores = (double *) arg;

	(void) index;
	scores[query] = odp_sum_ascending(dist, count);
}

/* The same over float64 rows: their float64 distances, summed ascending. */
static void
cpu_outlier_emit64(void *arg, int64_t query, const double *dist,
				   const int64_t *index, int32_t count)
{
	double	   *scores = (double *) arg;

	(void) index;
	scores[query] = odp_sum_ascending64(dist, count);
}

/* CPU path: blocked brute force through the shared k-NN primitive. */
OdpStatus
odp_cpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
					   int32_t k, const float *norms, const double *norms64,
					   double *scores)
{
	OdpCpuKnnArgs args = {0};
	double		start = odp_now_ms();
	OdpStatus	status;

	args.ctx = ctx;
	args.queries = m;
	args.candidates = m;
	args.query_norms = norms;
	args.cand_norms = norms;
	args.query_norms64 = norms64;
	args.cand_norms64 = norms64;
	args.metric = metric;
	args.k = k;
	args.self_join = true;
	args.emit = cpu_outlier_emit;
	args.emit64 = cpu_outlier_emit64;
	args.emit_arg = scores;
	status = odp_cpu_knn(&args);
	ctx->compute_ms = odp_now_ms() - start;
	return status;
}

/*
 * Resets ctx's outputs, checks the arguments every outlier analytic shares
 * (matrix, k, metric) and, for cosine, computes every row's norm into a
 * new array returned in *norms (NULL for the other metrics).  On success
 * the caller must free(*norms); on failure nothing is left allocated and
 * ctx->message says why.  ctx must not be NULL.
 */
OdpStatus
odp_outlier_prepare(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
					int32_t k, float **norms_out, double **norms64_out)
{
	*norms_out = NULL;
	*norms64_out = NULL;
	ctx->message[0] = '\0';
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	if (m == NULL || (m->data == NULL && m->data64 == NULL))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing input or output buffer");
	if (m->data != NULL && m->data64 != NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"the rows have both float32 and float64 values");
	if (m->dims < 1 || m->dims > ODP_MAX_DIMS)
		return odp_fail(ctx, ODP_ERR_LIMIT, "dimension %d is out of range 1 .. %d",
						(int) m->dims, ODP_MAX_DIMS);
	if (m->rows < 2 || m->rows > ODP_MAX_ROWS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%lld rows: outlier scores need 2 .. %lld rows",
						(long long) m->rows, (long long) ODP_MAX_ROWS);
	if (k < 1 || k >= m->rows || k > ODP_MAX_K)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"k = %d is out of range 1 .. %lld",
						(int) k, (long long) (m->rows - 1 < ODP_MAX_K ? m->rows - 1 : ODP_MAX_K));
	if ((int) metric < 0 || (int) metric >= ODP_METRIC_COUNT)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "unknown metric %d", (int) metric);

	if (!odp_metric_is_distance(metric))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"metric %s is not a distance: outlier scores need one",
						odp_metric_name(metric));
	if (metric == ODP_METRIC_COSINE && odp_matrix_is64(m))
		return odp_matrix_norms64(ctx, m, "row", norms64_out);
	if (metric == ODP_METRIC_COSINE)
		return odp_matrix_norms(ctx, m, "row", norms_out);
	return ODP_OK;
}

/*
 * Checks the arguments, computes row norms for cosine, and runs the path
 * ctx->device names.  See odp_outliers.h for the contract.
 */
OdpStatus
odp_compute_outlier_scores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
				   int32_t k, double *scores)
{
	float	   *norms = NULL;
	double	   *norms64 = NULL;
	OdpStatus	status;

	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	if (scores == NULL)
	{
		ctx->message[0] = '\0';
		ctx->transfer_ms = ctx->compute_ms = 0.0;
		ctx->chunks = 0;
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing input or output buffer");
	}
	status = odp_outlier_prepare(ctx, m, metric, k, &norms, &norms64);
	if (status != ODP_OK)
		return status;

	status = odp_outlier_scores_on_device(ctx, m, metric, k, norms, norms64, scores);
	free(norms);
	free(norms64);
	return status;
}

/*
 * Computes every row's score on the path ctx->device names; arguments and
 * norms as odp_outlier_prepare left them.
 */
OdpStatus
odp_outlier_scores_on_device(OdpContext *ctx, const OdpMatrix *m,
							 OdpMetric metric, int32_t k, const float *norms,
							 const double *norms64, double *scores)
{
	ctx->spatial_used = 0;
	ctx->spatial_distances = 0;
	if (odp_spatial_chosen(ctx, metric, m->dims, m->rows, m->rows, k))
	{
		OdpSpatialOut out = {NULL, NULL, scores};
		OdpStatus	status = odp_spatial_knn(ctx, m, m, metric, k, true, &out);

		if (!odp_spatial_gave_way(ctx, status))
			return status;
		ctx->spatial_used = 0;
		ctx->message[0] = '\0';
	}
	if (ctx->device == ODP_DEVICE_GPU && odp_matrix_is64(m))
	{
		bool		unfiltered = true;
		double		transfer_ms = 0.0,
					compute_ms = 0.0;
		int64_t		chunks = 0;
		OdpStatus	status = ODP_OK;

		if (odp_knn64_filter_shape(metric, m->rows, m->rows, k, true))
		{
			status = odp_knn64_filtered_scores(ctx, m, norms64, metric, k, scores,
											   &unfiltered);
			/* the filter's attempt counts with the exact scores' times */
			transfer_ms = ctx->transfer_ms;
			compute_ms = ctx->compute_ms;
			chunks = ctx->chunks;
		}
		if (status != ODP_OK || !unfiltered)
			return status;
		status = odp_split_outlier_scores64(ctx, m, metric, k, norms64, scores);
		ctx->transfer_ms += transfer_ms;
		ctx->compute_ms += compute_ms;
		ctx->chunks += chunks;
		return status;
	}
	if (ctx->device == ODP_DEVICE_GPU)
		return odp_split_outlier_scores(ctx, m, metric, k, norms, scores);
	return odp_cpu_outlier_scores(ctx, m, metric, k, norms, norms64, scores);
}
