/*-------------------------------------------------------------------------
 *
 * pearson_gpu_top.cu
 *	  The correlations' top-k lists on the GPU: each tile row's
 *	  coefficients merged into its series' list by the shared k-selection
 *	  of gpu_select.cuh, with float64 keys (pearson_math.h), and the lists
 *	  copied back into the job's outputs.
 *
 * Map of this file: PearsonTopArgs, PearsonTopKernel, a tile's merge
 * (PearsonTakeTop) and the lists copied out (PearsonTakeLists).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu_top.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "gpu/gpu_select.cuh"
#include "pearson/pearson_gpu_internal.cuh"

#define PEARSON_SEL_WARPS		8		/* warps (tile rows) per selection block */

/* Arguments of PearsonTopKernel. */
struct PearsonTopArgs
{
	PearsonTileView v;				/* ni x nj coefficients */
	int64_t		ni;
	int64_t		row0;			/* state row of tile row 0 */
	double	   *key;			/* state: rows x k */
	int64_t    *tag;
	int32_t    *count;
	int			k;
	OdpPearsonRank rank;
};

/*
 * Merges every tile row's coefficients into its series' top-k list (the
 * shared selection of gpu_select.cuh).  One warp per row; partners enter
 * a 32-entry buffer when they beat the list's k-th entry (or the list is
 * not full), and a full buffer is merged.
 */
static __global__ void __launch_bounds__(PEARSON_SEL_WARPS * 32)
PearsonTopKernel(const PearsonTopArgs a)
{
	typedef OdpSelSort<double, 1> Sel;
	__shared__ double buf_key[PEARSON_SEL_WARPS][32];
	__shared__ int64_t buf_tag[PEARSON_SEL_WARPS][32];
	__shared__ double sort_key[PEARSON_SEL_WARPS][32];
	__shared__ int64_t sort_tag[PEARSON_SEL_WARPS][32];
	__shared__ typename Sel::TempStorage tmp[PEARSON_SEL_WARPS];
	const int	warp = threadIdx.x >> 5;
	const int	lane = threadIdx.x & 31;
	const unsigned below = (1u << lane) - 1;
	const int64_t i = (int64_t) blockIdx.x * PEARSON_SEL_WARPS + warp;
	double	   *lk;
	int64_t    *lt;
	int			len;
	int			n = 0;
	double		tk = INFINITY;
	int64_t		tt = INT64_MAX;

	if (i >= a.ni)
		return;
	lk = a.key + (a.row0 + i) * a.k;
	lt = a.tag + (a.row0 + i) * a.k;
	len = a.count[a.row0 + i];
	if (len == a.k)
	{
		tk = lk[a.k - 1];
		tt = lt[a.k - 1];
	}
	for (int64_t c = 0; c < a.v.nj; c += 32)
	{
		const int64_t j = c + lane;
		const double r = j < a.v.nj ? PearsonTileCoefficient(a.v, i, j) : (double) NAN;
		const bool	valid = !isnan(r);
		const double key = odp_pearson_key(r, a.rank);
		const int64_t tag = odp_pearson_tag(a.v.b0 + j, r);

		bool		pass = valid && (len < a.k || OdpSelLess(key, tag, tk, tt));
		unsigned	b = __ballot_sync(0xffffffffu, pass);

		if (b == 0)
			continue;
		if (n + __popc(b) > 32)
		{
			len = OdpSelWarpMerge<double, 1>(lk, lt, len, a.k, buf_key[warp],
											 buf_tag[warp], n, sort_key[warp],
											 sort_tag[warp], tmp[warp]);
			n = 0;
			if (len == a.k)
			{
				tk = lk[a.k - 1];
				tt = lt[a.k - 1];
			}
			pass = valid && (len < a.k || OdpSelLess(key, tag, tk, tt));
			b = __ballot_sync(0xffffffffu, pass);
		}
		if (pass)
		{
			const int	p = n + __popc(b & below);

			buf_key[warp][p] = key;
			buf_tag[warp][p] = tag;
		}
		n += __popc(b);
		__syncwarp();
	}
	if (n > 0)
		len = OdpSelWarpMerge<double, 1>(lk, lt, len, a.k, buf_key[warp],
										 buf_tag[warp], n, sort_key[warp],
										 sort_tag[warp], tmp[warp]);
	if (lane == 0)
		a.count[a.row0 + i] = len;
}

/* Enqueues the merge of a tile view's ni rows into the lists of state rows row0 .. */
OdpStatus
PearsonTakeTop(GpuPearson *g, const PearsonTileView *v, int64_t ni, int64_t row0)
{
	OdpStatus	status = ODP_OK;
	PearsonTopArgs a;

	a.v = *v;
	a.ni = ni;
	a.row0 = row0;
	a.key = g->s_key;
	a.tag = g->s_tag;
	a.count = g->s_count;
	a.k = g->job->k;
	a.rank = g->job->rank;
	PearsonTopKernel<<<(unsigned) ((ni + PEARSON_SEL_WARPS - 1) / PEARSON_SEL_WARPS),
		PEARSON_SEL_WARPS * 32, 0, g->stream>>>(a);
	ODP_CUDA_TRY_LAUNCH(g->ctx, g->stream, "selecting the top-k partners");
	PEARSON_TRACE(g->stream, PEARSON_T_TOP);
cleanup:
	return status;
}

/*
 * Copies the lists of state rows [0, n) back and writes them to the job's
 * outputs for series first .. first + n - 1.
 */
OdpStatus
PearsonTakeLists(GpuPearson *g, int64_t first, int64_t n)
{
	OdpContext *ctx = g->ctx;
	const OdpPearsonJob *job = g->job;
	const int32_t k = job->k;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g->h_key, g->s_key, (size_t) n * k * sizeof(double),
									  cudaMemcpyDeviceToHost, g->stream),
				 "copying the top-k lists back");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g->h_tag, g->s_tag, (size_t) n * k * sizeof(int64_t),
									  cudaMemcpyDeviceToHost, g->stream),
				 "copying the top-k lists back");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g->h_count, g->s_count, (size_t) n * sizeof(int32_t),
									  cudaMemcpyDeviceToHost, g->stream),
				 "copying the top-k lists back");
	if ((status = PearsonSync(g, "copying the top-k lists back")) != ODP_OK)
		goto cleanup;
	ctx->transfer_ms += odp_now_ms() - t0;
	for (int64_t s = 0; s < n; s++)
	{
		const size_t at = (size_t) s * k;
		const size_t out = (size_t) (first + s) * k;

		for (int32_t q = 0; q < k; q++)
		{
			if (q < g->h_count[s])
			{
				job->other[out + q] = odp_pearson_tag_row(g->h_tag[at + q]);
				job->r[out + q] = odp_pearson_r_of(g->h_key[at + q], g->h_tag[at + q], job->rank);
			}
			else
			{
				job->other[out + q] = -1;
				job->r[out + q] = 0.0;
			}
		}
	}
cleanup:
	return status;
}
