/*-------------------------------------------------------------------------
 *
 * gpu_outliers.cu
 *	  GPU path of the outlier scores: upload, k-NN accumulation with
 *	  self-exclusion, per-row score, download; chunked when the input and
 *	  the selection state do not fit the GPU memory budget.
 *
 * The score of row p is the sum, in float64 and in ascending order, of
 * the distances to its k nearest other rows.  The k-NN primitive
 * (gpu_knn.cu) keeps each row's k smallest distances sorted ascending, so
 * the score kernel sums them in stored order with odp_sum_ascending, the
 * function the CPU path uses: same floats, same order, same double.
 *
 * Chunking.  With B the budget (OdpGpuBegin), R the bytes of a row and S
 * the state bytes of a query row, the plan is, in order of preference:
 *	- everything resident: one query chunk, one candidate chunk;
 *	- all candidates resident (at most half of B) and the queries, which
 *	  are the same rows, taken from them in chunks sized by the rest;
 *	- half of B for a candidate chunk, half for a query chunk with its
 *	  state; the candidate chunks are streamed past every query chunk.
 * The state of a query chunk persists across its candidate chunks and
 * the primitive's merge is exact whatever the order, so every plan gives
 * the same scores.  ctx->chunks counts the query x candidate chunk pairs.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu_outliers.cu
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include <cuda_runtime.h>

#include "engine_internal.h"
#include "gpu_check.cuh"
#include "gpu_knn.cuh"
#include "gpu_runtime.cuh"
#include "odp_distance.h"

/* Smallest chunk, in rows, that the plan accepts before giving up. */
#define OUTLIER_MIN_CHUNK	64

/* Allocations of one call, counted against the budget as slack. */
#define OUTLIER_ALLOCS		12

/* Sizes the chunk plan decided. */
typedef struct OutlierPlan
{
	int64_t		query_chunk;	/* rows per query chunk */
	int64_t		cand_chunk;		/* rows per candidate chunk */
	bool		separate_queries;	/* query rows need their own buffer */
} OutlierPlan;

/*
 * Writes each row's score: the sum of its k stored distances in
 * ascending order.  One thread per row; count[q] must be k (every row has
 * at least k other rows), else *bad is set: an internal error.
 */
static __global__ void
OutlierScoreKernel(const float *dist, const int32_t *count, int64_t rows,
				   int k, double *scores, int *bad)
{
	const int64_t q = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (q >= rows)
		return;
	if (count[q] != k)
	{
		atomicExch(bad, 1);
		scores[q] = 0.0;
		return;
	}
	scores[q] = odp_sum_ascending(dist + q * k, k);
}

/*
 * Decides the chunk sizes for rows x dims with k neighbours under budget
 * bytes.  Fails with ODP_ERR_GPU_OOM, giving the smallest workable budget,
 * when even OUTLIER_MIN_CHUNK-row chunks do not fit.
 */
static OdpStatus
OutlierMakePlan(OdpContext *ctx, int64_t rows, int dims, bool cosine,
				int32_t k, size_t budget, OutlierPlan *plan)
{
	const size_t row_bytes = (size_t) dims * sizeof(float) + (cosine ? sizeof(float) : 0);
	const size_t state_bytes = OdpKnnStateBytesPerRow(k) + sizeof(double);
	const size_t slack = OUTLIER_ALLOCS * ODP_GPU_ALLOC_ALIGN;
	const int64_t min_rows = rows < OUTLIER_MIN_CHUNK ? rows : OUTLIER_MIN_CHUNK;
	size_t		all_rows;
	size_t		all_state;
	size_t		need;
	size_t		avail;

	memset(plan, 0, sizeof(*plan));
	if (!OdpSizeMul((size_t) rows, row_bytes, &all_rows) ||
		!OdpSizeMul((size_t) rows, state_bytes, &all_state))
		return odp_fail(ctx, ODP_ERR_LIMIT,
						"input of %lld rows x %d dimensions is too large to address",
						(long long) rows, dims);
	avail = budget > slack ? budget - slack : 0;

	if (OdpSizeAdd(all_rows, all_state, &need) && need <= avail)
	{
		plan->query_chunk = rows;
		plan->cand_chunk = rows;
		return ODP_OK;
	}
	if (all_rows <= avail / 2)
	{
		plan->cand_chunk = rows;
		plan->query_chunk = (int64_t) ((avail - all_rows) / state_bytes);
	}
	else
	{
		plan->separate_queries = true;
		plan->cand_chunk = (int64_t) (avail / 2 / row_bytes);
		plan->query_chunk = (int64_t) (avail / 2 / (row_bytes + state_bytes));
	}
	if (plan->cand_chunk > rows)
		plan->cand_chunk = rows;
	if (plan->query_chunk > rows)
		plan->query_chunk = rows;
	if (plan->query_chunk < min_rows || plan->cand_chunk < min_rows)
		return odp_fail(ctx, ODP_ERR_GPU_OOM,
						"GPU memory budget of %zu bytes is too small for %lld rows of %d dimensions with k = %d: at least %zu bytes are needed",
						budget, (long long) rows, dims, k,
						slack + (size_t) min_rows * (2 * row_bytes + state_bytes));
	/* whole thread blocks of queries, except for a final partial one */
	if (plan->query_chunk > ODP_KNN_BLOCK_QUERIES && plan->query_chunk < rows)
		plan->query_chunk -= plan->query_chunk % ODP_KNN_BLOCK_QUERIES;
	return ODP_OK;
}

/*
 * Copies rows [first, first + n) of m (and their norms) to dst / dst_norms
 * on stream and waits, adding the time to ctx->transfer_ms.
 */
static OdpStatus
OutlierUpload(OdpContext *ctx, cudaStream_t stream, const OdpMatrix *m,
			  const float *norms, int64_t first, int64_t n,
			  float *dst, float *dst_norms)
{
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(dst, m->data + first * m->dims,
									  (size_t) n * m->dims * sizeof(float),
									  cudaMemcpyHostToDevice, stream),
				 "copying the input rows to the GPU");
	if (norms != NULL)
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(dst_norms, norms + first,
										  (size_t) n * sizeof(float),
										  cudaMemcpyHostToDevice, stream),
					 "copying the row norms to the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream),
				 "copying the input rows to the GPU");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	return status;
}

/* Runs a step that returns a status; on failure jumps to cleanup. */
#define OUTLIER_TRY(expr) \
	do { \
		status = (expr); \
		if (status != ODP_OK) \
			goto cleanup; \
	} while (0)

/*
 * GPU outlier scores; arguments validated by the dispatcher
 * (kernels/outliers.c): 1 <= k < rows, k <= ODP_MAX_K, norms set (and
 * nonzero) exactly for cosine.  Frees every device allocation before
 * returning, on every path.
 */
extern "C" OdpStatus
odp_gpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
					   int32_t k, const float *norms, double *scores)
{
	OdpStatus	status = ODP_OK;
	const bool	cosine = (metric == ODP_METRIC_COSINE);
	OdpGpuDevice dev;
	OdpGpuArena arena;
	OutlierPlan plan;
	OdpKnnState state;
	OdpKnnProblem prob;
	cudaStream_t stream = NULL;
	float	   *d_cand = NULL;
	float	   *d_cnorm = NULL;
	float	   *d_query = NULL;
	float	   *d_qnorm = NULL;
	double	   *d_scores = NULL;
	int		   *d_bad = NULL;
	int			bad = 0;
	double		t0;

	ctx->transfer_ms = 0.0;
	ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	OdpGpuArenaInit(&arena, 0);
	memset(&state, 0, sizeof(state));

	if (cosine != (norms != NULL))
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"row norms must be given exactly for cosine");

	status = OdpGpuBegin(ctx, &dev);
	if (status != ODP_OK)
		return status;
	arena.budget = dev.budget;
	status = OutlierMakePlan(ctx, m->rows, m->dims, cosine, k, dev.budget, &plan);
	if (status != ODP_OK)
		return status;

	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");

	OUTLIER_TRY(OdpGpuArenaAlloc(ctx, &arena,
								 (size_t) plan.cand_chunk * m->dims * sizeof(float),
								 "the candidate rows", (void **) &d_cand));
	if (cosine)
		OUTLIER_TRY(OdpGpuArenaAlloc(ctx, &arena,
									 (size_t) plan.cand_chunk * sizeof(float),
									 "the candidate norms", (void **) &d_cnorm));
	if (plan.separate_queries)
	{
		OUTLIER_TRY(OdpGpuArenaAlloc(ctx, &arena,
									 (size_t) plan.query_chunk * m->dims * sizeof(float),
									 "the query rows", (void **) &d_query));
		if (cosine)
			OUTLIER_TRY(OdpGpuArenaAlloc(ctx, &arena,
										 (size_t) plan.query_chunk * sizeof(float),
										 "the query norms", (void **) &d_qnorm));
	}
	OUTLIER_TRY(OdpKnnStateAlloc(ctx, &arena, plan.query_chunk, k, &state));
	OUTLIER_TRY(OdpGpuArenaAlloc(ctx, &arena,
								 (size_t) plan.query_chunk * sizeof(double),
								 "the scores", (void **) &d_scores));
	OUTLIER_TRY(OdpGpuArenaAlloc(ctx, &arena, sizeof(int), "an error flag",
								 (void **) &d_bad));
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_bad, 0, sizeof(int), stream),
				 "clearing an error flag");

	/* resident candidates are uploaded once and serve as queries too */
	if (plan.cand_chunk == m->rows)
		OUTLIER_TRY(OutlierUpload(ctx, stream, m, norms, 0, m->rows,
								  d_cand, d_cnorm));

	for (int64_t q0 = 0; q0 < m->rows; q0 += plan.query_chunk)
	{
		const int64_t nq = m->rows - q0 < plan.query_chunk ? m->rows - q0 : plan.query_chunk;

		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED,
							  "outlier scores cancelled by request");
			goto cleanup;
		}

		memset(&prob, 0, sizeof(prob));
		prob.query_base = q0;
		prob.nq = nq;
		prob.dims = m->dims;
		prob.metric = metric;
		prob.exclude_self = true;
		if (plan.separate_queries)
		{
			OUTLIER_TRY(OutlierUpload(ctx, stream, m, norms, q0, nq,
									  d_query, d_qnorm));
			prob.queries = d_query;
			prob.query_norms = d_qnorm;
		}
		else
		{
			prob.queries = d_cand + q0 * m->dims;
			prob.query_norms = cosine ? d_cnorm + q0 : NULL;
		}

		state.rows = nq;
		OUTLIER_TRY(OdpKnnStateReset(ctx, stream, &state));

		for (int64_t c0 = 0; c0 < m->rows; c0 += plan.cand_chunk)
		{
			const int64_t nc = m->rows - c0 < plan.cand_chunk ? m->rows - c0 : plan.cand_chunk;

			if (plan.cand_chunk != m->rows)
				OUTLIER_TRY(OutlierUpload(ctx, stream, m, norms, c0, nc,
										  d_cand, d_cnorm));
			prob.cands = d_cand;
			prob.cand_norms = d_cnorm;
			prob.cand_base = c0;
			prob.nc = nc;
			OUTLIER_TRY(OdpKnnAccumulate(ctx, &dev, stream, &prob, &state,
										 &ctx->compute_ms));
			ctx->chunks++;
		}

		t0 = odp_now_ms();
		OutlierScoreKernel<<<(unsigned) ((nq + 255) / 256), 256, 0, stream>>>(state.dist, state.count, nq, k, d_scores, d_bad);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the outlier score kernel");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream),
					 "computing the outlier scores");
		ctx->compute_ms += odp_now_ms() - t0;

		t0 = odp_now_ms();
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(scores + q0, d_scores,
										  (size_t) nq * sizeof(double),
										  cudaMemcpyDeviceToHost, stream),
					 "copying the scores from the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, d_bad, sizeof(int),
										  cudaMemcpyDeviceToHost, stream),
					 "copying the scores from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream),
					 "copying the scores from the GPU");
		ctx->transfer_ms += odp_now_ms() - t0;
		if (bad != 0)
		{
			status = odp_fail(ctx, ODP_ERR_INTERNAL,
							  "a row kept fewer than k = %d neighbours on the GPU", k);
			goto cleanup;
		}
	}

cleanup:
	if (stream != NULL)
	{
		/* nothing may still write into memory we are about to free */
		(void) cudaStreamSynchronize(stream);
		(void) cudaStreamDestroy(stream);
	}
	OdpGpuArenaRelease(&arena);
	(void) cudaGetLastError();
	return status;
}
