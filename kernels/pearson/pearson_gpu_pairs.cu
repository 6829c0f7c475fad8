/*-------------------------------------------------------------------------
 *
 * pearson_gpu_pairs.cu
 *	  The correlations' pairs over a threshold on the GPU: cub's
 *	  DeviceSelect compacts a tile's indexes with |r| >= min_abs_r, a
 *	  gather fetches their coefficients, and the host turns them into
 *	  pairs, pipelined with the next tile, and hands each row block's
 *	  pairs over in (a, b) order.
 *
 * Map of this file: the selection's predicate (PearsonOverThreshold),
 * PearsonGatherKernel, the selection's temporary storage
 * (PearsonSelectBytes), a tile's selection (PearsonSelectPairs), its
 * pairs copied back (PearsonFetchPairs) and handed over
 * (PearsonTakePairs).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu_pairs.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "pearson/pearson_gpu_internal.cuh"

#define PEARSON_POLL_PAIRS		((int64_t) 1 << 20)	/* pairs between cancel polls */

/*
 * Selection predicate over a tile's linear indexes: a coefficient at or
 * over the threshold (NaN never).  The raw value is tested first, since
 * clamping and masking only ever remove values, and most fail.
 */
struct PearsonOverThreshold
{
	PearsonTileView v;
	double		t;

	__device__ __forceinline__ bool operator() (const uint32_t &e) const
	{
		const uint32_t nj = (uint32_t) v.nj;

		if (!(fabs(v.t[e]) >= t))
			return false;
		return fabs(PearsonTileCoefficient(v, e / nj, e % nj)) >= t;
	}
};

/* out[p] = coefficient sel[p] of the tile, for the n selected elements. */
static __global__ void
PearsonGatherKernel(PearsonTileView v, const uint32_t *sel, int64_t n, double *out)
{
	const uint32_t nj = (uint32_t) v.nj;

	for (int64_t p = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; p < n;
		 p += (int64_t) gridDim.x * blockDim.x)
		out[p] = PearsonTileCoefficient(v, sel[p] / nj, sel[p] % nj);
}

/* Device bytes of temporary storage the pair selection needs. */
OdpStatus
PearsonSelectBytes(GpuPearson *g, size_t *bytes)
{
	OdpStatus	status = ODP_OK;
	thrust::counting_iterator<uint32_t> in(0);
	PearsonOverThreshold pred;
	size_t		b = 0;

	memset(&pred, 0, sizeof(pred));
	ODP_CUDA_TRY(g->ctx, cub::DeviceSelect::If(NULL, b, in, (uint32_t *) NULL,
											   (int64_t *) NULL,
											   g->plan.T * g->plan.W, pred,
											   g->stream),
				 "sizing the pair selection");
	*bytes = b;
cleanup:
	return status;
}

/* Enqueues the selection of the tile's pairs over the threshold. */
OdpStatus
PearsonSelectPairs(GpuPearson *g, const PearsonTileView *v, int64_t ni)
{
	OdpStatus	status = ODP_OK;
	thrust::counting_iterator<uint32_t> in(0);
	PearsonOverThreshold pred;
	size_t		tb = g->temp_bytes;

	pred.v = *v;
	pred.t = g->job->min_abs_r;
	ODP_CUDA_TRY(g->ctx, cub::DeviceSelect::If(g->d_temp, tb, in, g->d_sel, g->d_nsel,
											   ni * v->nj, pred, g->stream),
				 "selecting the pairs over the threshold");
cleanup:
	return status;
}

/*
 * Waits for the tile's selection and copies its pairs back into h_sel and
 * h_selr (which must be free: the previous tile's converted); sets
 * taken->count.
 */
OdpStatus
PearsonFetchPairs(GpuPearson *g, const PearsonTileView *v, PearsonTaken *taken)
{
	OdpContext *ctx = g->ctx;
	OdpStatus	status = ODP_OK;
	int64_t		count = 0;
	double		t0;

	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&count, g->d_nsel, sizeof(int64_t),
									  cudaMemcpyDeviceToHost, g->stream),
				 "copying the pair count back");
	if ((status = PearsonSync(g, "selecting the pairs over the threshold")) != ODP_OK)
		goto cleanup;
	PEARSON_TRACE(g->stream, PEARSON_T_SELECT);
	taken->count = count;
	taken->a0 = v->a0;
	taken->b0 = v->b0;
	taken->nj = v->nj;
	if (count == 0)
		goto cleanup;
	/* copying a large tile's pairs back takes a while: let the user stop first */
	if (count > PEARSON_POLL_PAIRS && (status = PearsonPoll(g)) != ODP_OK)
	{
		taken->count = 0;
		goto cleanup;
	}
	PearsonGatherKernel<<<PearsonBlocks(g, count), PEARSON_THREADS, 0, g->stream>>>(
		*v, g->d_sel, count, g->d_selr);
	ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "gathering the selected coefficients");
	if (count > g->h_cap)
	{
		free(g->h_sel);
		free(g->h_selr);
		g->h_sel = (uint32_t *) malloc((size_t) count * sizeof(uint32_t));
		g->h_selr = (double *) malloc((size_t) count * sizeof(double));
		g->h_cap = count;
		if (g->h_sel == NULL || g->h_selr == NULL)
		{
			g->h_cap = 0;
			taken->count = 0;
			status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %lld pairs",
							  (long long) count);
			goto cleanup;
		}
	}
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g->h_sel, g->d_sel, (size_t) count * sizeof(uint32_t),
									  cudaMemcpyDeviceToHost, g->stream),
				 "copying the pairs back");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g->h_selr, g->d_selr, (size_t) count * sizeof(double),
									  cudaMemcpyDeviceToHost, g->stream),
				 "copying the coefficients back");
	status = PearsonSync(g, "copying the pairs back");
	ctx->transfer_ms += odp_now_ms() - t0;
cleanup:
	return status;
}

/*
 * Turns the waiting pairs (tile linear indexes, ascending) into (a, b, r)
 * in g->pairs, walking the rows instead of dividing; hands the row block's
 * pairs to the caller, in (a, b) order, after its last tile.
 */
OdpStatus
PearsonTakePairs(GpuPearson *g, PearsonTaken *taken)
{
	OdpContext *ctx = g->ctx;
	const uint64_t nj = (uint64_t) taken->nj;
	uint64_t	row_start = 0;
	int64_t		a = taken->a0;
	int64_t		at = g->pairs.count;
	OdpStatus	status = ODP_OK;

	if (taken->count > 0)
	{
		if (!odp_pearson_pairs_reserve(&g->pairs, taken->count))
			return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %lld pairs",
							(long long) (g->pairs.count + taken->count));
		for (int64_t q = 0; q < taken->count; q++, at++)
		{
			const uint64_t e = g->h_sel[q];

			/* a tile of every pair takes a while to turn into rows */
			if ((q & (PEARSON_POLL_PAIRS - 1)) == PEARSON_POLL_PAIRS - 1 &&
				(status = PearsonPoll(g)) != ODP_OK)
				return status;
			while (e >= row_start + nj)
			{
				row_start += nj;
				a++;
			}
			g->pairs.a[at] = a;
			g->pairs.b[at] = taken->b0 + (int64_t) (e - row_start);
			g->pairs.r[at] = g->h_selr[q];
		}
		g->pairs.count = at;
		taken->count = 0;
	}
	PEARSON_TRACE(NULL, PEARSON_T_HOST);
	if (taken->block_end)
	{
		/* several column blocks arrive block after block: order by (a, b) */
		if (!odp_pearson_pairs_sort(&g->pairs))
			return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory to order %lld pairs",
							(long long) g->pairs.count);
		status = odp_pearson_emit(ctx, g->job->emitter, &g->pairs);
		g->pairs.count = 0;
		taken->block_end = false;
	}
	return status;
}
