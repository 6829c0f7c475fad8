/*-------------------------------------------------------------------------
 *
 * pearson_gpu_prep.cu
 *	  The correlations' GPU preparation: the series copied to the device
 *	  chunk by chunk, ranked for Spearman (a segmented radix sort), then
 *	  scaled and centred into the planes the products read
 *	  (pearson_math.h).
 *
 * Map of this file: the preparation's block reductions (PearsonSumOp,
 * PearsonMaxOp, PearsonMinOp, PearsonBlockAll), PearsonPrepKernel, the
 * ranking (PearsonIotaKernel, PearsonRankKernel), the sort's temporary
 * storage (PearsonRankBytes), one chunk (PearsonPrepChunk), the input's
 * page lock (PearsonPinInput, PearsonUnpin) and a whole side
 * (PearsonPrepare).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu_prep.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "pearson/pearson_gpu_internal.cuh"

/* Reduction operators of the preparation. */
struct PearsonSumOp
{
	__device__ __forceinline__ double operator() (double a, double b) const
	{
		return a + b;
	}
};
struct PearsonMaxOp
{
	__device__ __forceinline__ double operator() (double a, double b) const
	{
		return fmax(a, b);
	}
};
struct PearsonMinOp
{
	__device__ __forceinline__ double operator() (double a, double b) const
	{
		return fmin(a, b);
	}
};

/*
 * Reduces v over the block with op and gives every thread the result (a
 * block reduction's is valid in thread 0 only).  All threads call it.
 */
template <typename R, typename Op>
static __device__ __forceinline__ double
PearsonBlockAll(R &reduce, double v, Op op, double *shared)
{
	double		s = reduce.Reduce(v, op);

	if (threadIdx.x == 0)
		*shared = s;
	__syncthreads();
	s = *shared;
	__syncthreads();
	return s;
}

/*
 * Prepares rows series of dims values in place (pearson_math.h): v holds the
 * raw values (rows x dims) and receives c, or z for complete data
 * (pairwise == 0), where constant series are zeroed and flagged in
 * invalid.  Pairwise data also writes c^2 to sq, the presence mask to mk
 * and the scaled values to xs (all 0 where missing); miss (rows x dims,
 * or NULL) flags absent values.  One block per series, a grid-stride
 * loop over series.
 */
static __global__ void __launch_bounds__(PEARSON_THREADS)
PearsonPrepKernel(double *v, const uint8_t *miss, int64_t rows, int32_t dims,
				  int pairwise, double *sq, double *mk, double *xs,
				  uint8_t *invalid)
{
	typedef cub::BlockReduce<double, PEARSON_THREADS> Reduce;
	__shared__ typename Reduce::TempStorage tmp;
	__shared__ double bcast;
	Reduce		reduce(tmp);

	for (int64_t s = blockIdx.x; s < rows; s += gridDim.x)
	{
		double	   *x = v + s * dims;
		const uint8_t *ms = miss ? miss + s * dims : NULL;
		double		amax = 0.0;
		double		lo = INFINITY;
		double		hi = -INFINITY;
		double		cnt = 0.0;
		double		sum = 0.0;
		double		n;
		double		scale;
		double		mean;
		double		delta;
		double		ss;

		for (int32_t i = threadIdx.x; i < dims; i += PEARSON_THREADS)
		{
			if (ms && ms[i])
				continue;
			amax = fmax(amax, fabs(x[i]));
			lo = fmin(lo, x[i]);
			hi = fmax(hi, x[i]);
			cnt += 1.0;
		}
		amax = PearsonBlockAll(reduce, amax, PearsonMaxOp(), &bcast);
		lo = PearsonBlockAll(reduce, lo, PearsonMinOp(), &bcast);
		hi = PearsonBlockAll(reduce, hi, PearsonMaxOp(), &bcast);
		n = PearsonBlockAll(reduce, cnt, PearsonSumOp(), &bcast);

		if (!pairwise)
		{
			const bool	constant = !(lo < hi);

			if (threadIdx.x == 0)
				invalid[s] = constant ? 1 : 0;
			if (constant)
			{
				for (int32_t i = threadIdx.x; i < dims; i += PEARSON_THREADS)
					x[i] = 0.0;
				continue;
			}
		}
		scale = amax > 0.0 ? odp_pearson_scale_of(amax) : 1.0;
		for (int32_t i = threadIdx.x; i < dims; i += PEARSON_THREADS)
		{
			const bool	present = !(ms && ms[i]);

			if (present)
				sum += x[i] * scale;
			if (pairwise)
				xs[s * dims + i] = present ? x[i] * scale : 0.0;
		}
		sum = PearsonBlockAll(reduce, sum, PearsonSumOp(), &bcast);
		mean = n > 0.0 ? sum / n : 0.0;
		sum = 0.0;
		for (int32_t i = threadIdx.x; i < dims; i += PEARSON_THREADS)
		{
			const double c = (ms && ms[i]) ? 0.0 : x[i] * scale - mean;

			x[i] = c;
			sum += c;
		}
		sum = PearsonBlockAll(reduce, sum, PearsonSumOp(), &bcast);
		delta = n > 0.0 ? sum / n : 0.0;
		ss = 0.0;
		for (int32_t i = threadIdx.x; i < dims; i += PEARSON_THREADS)
		{
			double		c = x[i];

			if (!(ms && ms[i]))
				c -= delta;
			x[i] = c;
			ss += c * c;
		}
		ss = PearsonBlockAll(reduce, ss, PearsonSumOp(), &bcast);
		for (int32_t i = threadIdx.x; i < dims; i += PEARSON_THREADS)
		{
			if (!pairwise)
				x[i] = x[i] / sqrt(ss);
			else
			{
				sq[s * dims + i] = x[i] * x[i];
				mk[s * dims + i] = (ms && ms[i]) ? 0.0 : 1.0;
			}
		}
	}
}

/* Fills pos with each value's position in its series and offsets with series starts. */
static __global__ void
PearsonIotaKernel(int32_t *pos, int32_t *offsets, int64_t rows, int32_t dims)
{
	const int64_t n = rows * dims;

	for (int64_t e = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; e < n;
		 e += (int64_t) gridDim.x * blockDim.x)
		pos[e] = (int32_t) (e % dims);
	for (int64_t s = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; s <= rows;
		 s += (int64_t) gridDim.x * blockDim.x)
		offsets[s] = (int32_t) (s * dims);
}

/*
 * Writes each value's average rank into out (rows x dims, in the series'
 * order): sorted holds every series sorted, pos the original positions.
 */
static __global__ void
PearsonRankKernel(const double *sorted, const int32_t *pos, int64_t rows,
				  int32_t dims, double *out)
{
	const int64_t n = rows * dims;

	for (int64_t e = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; e < n;
		 e += (int64_t) gridDim.x * blockDim.x)
	{
		const int64_t s = e / dims;
		const double *seg = sorted + s * dims;
		const double v = sorted[e];
		int32_t		lo = 0;
		int32_t		hi = dims;
		int32_t		a = 0;
		int32_t		b = dims;

		while (lo < hi)
		{
			int32_t		mid = (lo + hi) >> 1;

			if (seg[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		while (a < b)
		{
			int32_t		mid = (a + b) >> 1;

			if (seg[mid] <= v)
				a = mid + 1;
			else
				b = mid;
		}
		out[s * dims + pos[e]] = odp_pearson_average_rank(lo, a);
	}
}

/* Device bytes of temporary storage the ranking sort needs (Spearman). */
OdpStatus
PearsonRankBytes(GpuPearson *g, size_t *bytes)
{
	OdpStatus	status = ODP_OK;
	const int	n = (int) (g->plan.prep_rows * g->dims);
	size_t		b = 0;

	ODP_CUDA_TRY(g->ctx, cub::DeviceSegmentedRadixSort::SortPairs(
					 NULL, b, (const double *) NULL, (double *) NULL,
					 (const int32_t *) NULL, (int32_t *) NULL, n,
					 (int) g->plan.prep_rows, (const int32_t *) NULL,
					 (const int32_t *) NULL + 1, 0, 64, g->stream),
				 "sizing the ranking sort");
	*bytes = b;
cleanup:
	return status;
}

/*
 * Prepares series [s0, s1) of side (from its host matrix) into out, a
 * device buffer of nplanes planes with plane stride pstride values.
 */
static OdpStatus
PearsonPrepChunk(GpuPearson *g, GpuPearsonSide *side, int64_t s0, int64_t s1,
				 double *out, size_t pstride)
{
	OdpContext *ctx = g->ctx;
	const OdpMatrix64 *m = side->m;
	const int64_t rows = s1 - s0;
	const size_t n = (size_t) rows * g->dims;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, out, m->data + (size_t) s0 * g->dims,
									  n * sizeof(double), g->stream),
				 "copying the series to the GPU");
	if (g->pairwise)
	{
		if (m->missing != NULL)
			ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, g->d_miss, m->missing + (size_t) s0 * g->dims,
											  n, g->stream),
						 "copying the missing-value flags to the GPU");
		else
			ODP_CUDA_TRY(ctx, cudaMemsetAsync(g->d_miss, 0, n, g->stream),
						 "clearing the missing-value flags");
	}
	if ((status = PearsonSync(g, "copying the series to the GPU")) != ODP_OK)
		goto cleanup;
	ctx->transfer_ms += odp_now_ms() - t0;

	if (g->job->p->method == ODP_PEARSON_METHOD_SPEARMAN)
	{
		size_t		tb = g->temp_bytes;

		PearsonIotaKernel<<<PearsonBlocks(g, (int64_t) n), PEARSON_THREADS, 0, g->stream>>>(
			g->d_pos, g->d_offsets, rows, g->dims);
		ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "numbering the values");
		ODP_CUDA_TRY(ctx, cub::DeviceSegmentedRadixSort::SortPairs(
						 g->d_temp, tb, (const double *) out, g->d_sorted,
						 (const int32_t *) g->d_pos, g->d_pos + n, (int) n, (int) rows,
						 (const int32_t *) g->d_offsets, (const int32_t *) g->d_offsets + 1,
						 0, 64, g->stream),
					 "sorting the series to rank them");
		PearsonRankKernel<<<PearsonBlocks(g, (int64_t) n), PEARSON_THREADS, 0, g->stream>>>(
			g->d_sorted, g->d_pos + n, rows, g->dims, out);
		ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "ranking the values");
	}
	PearsonPrepKernel<<<(unsigned) (rows < 65535 * 16 ? rows : 65535 * 16), PEARSON_THREADS, 0,
		g->stream>>>(out, g->pairwise ? g->d_miss : NULL, rows, g->dims,
					 g->pairwise ? 1 : 0, g->pairwise ? out + pstride : NULL,
					 g->pairwise ? out + 2 * pstride : NULL,
					 g->pairwise ? out + 3 * pstride : NULL, side->invalid + s0);
	ODP_CUDA_TRY_LAUNCH(ctx, g->stream, "preparing the series");
cleanup:
	return status;
}

/* Page-locks a large input for its copy (OdpGpuPinHost). */
static void
PearsonPinInput(GpuPearson *g, const GpuPearsonSide *side)
{
	g->pinned = OdpGpuPinHost(g->ctx, side->m->data,
							  (size_t) side->rows * (size_t) g->dims * sizeof(double));
}

/* Unlocks what PearsonPinInput locked. */
void
PearsonUnpin(GpuPearson *g)
{
	OdpGpuUnpinHost(g->ctx, g->pinned);
	g->pinned = NULL;
}

/* Prepares every series of side: into its device planes, or its host planes. */
OdpStatus
PearsonPrepare(GpuPearson *g, GpuPearsonSide *side)
{
	OdpStatus	status = ODP_OK;
	const int64_t step = g->plan.prep_rows;
	const size_t dims = (size_t) g->dims;

	PearsonPinInput(g, side);

	for (int64_t s0 = 0; s0 < side->rows; s0 += step)
	{
		const int64_t s1 = s0 + step < side->rows ? s0 + step : side->rows;

		if (g->plan.resident)
		{
			if ((status = PearsonPrepChunk(g, side, s0, s1, side->plane[0] + s0 * dims,
										   (size_t) side->rows * dims)) != ODP_OK)
				return status;
		}
		else
		{
			const size_t pstride = (size_t) step * dims;
			double		t0;

			if ((status = PearsonPrepChunk(g, side, s0, s1, g->d_stage, pstride)) != ODP_OK)
				return status;
			t0 = odp_now_ms();
			for (int q = 0; q < g->plan.nplanes; q++)
				ODP_CUDA_TRY(g->ctx, cudaMemcpyAsync(side->host[q] + s0 * dims,
													 g->d_stage + q * pstride,
													 (size_t) (s1 - s0) * dims * sizeof(double),
													 cudaMemcpyDeviceToHost, g->stream),
							 "copying the prepared series back");
			if ((status = PearsonSync(g, "copying the prepared series back")) != ODP_OK)
				return status;
			g->ctx->transfer_ms += odp_now_ms() - t0;
		}
		if ((status = PearsonPoll(g)) != ODP_OK)
			return status;
	}
	PearsonUnpin(g);
cleanup:
	return status;
}
