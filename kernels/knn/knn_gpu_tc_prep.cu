/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc_prep.cu
 *	  The tensor-core filter's preparation: the candidates' centring and
 *	  scale, the half-precision copies of the rows with the filter's
 *	  per-row constants, the sample that gives the thresholds, and the
 *	  symmetric filter's terms (steps 1 and 2 of knn_gpu_tc.cu).
 *
 * Map of this file: the centring and the column ranges
 * (TcColumnSumKernel, TcMeanKernel), the scale (TcValue, TcMaxAbsKernel),
 * the half copies and test constants (TcHalfIndex, TcRowCopy,
 * TcCandRowsKernel, TcQueryRowsKernel), the sample (TcSampleKernel), the
 * symmetric filter's terms (TcMirrorKernel), then the launchers TcSearch
 * calls (knn_gpu_tc_internal.cuh).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc_prep.cu
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "knn/knn_gpu_tc_internal.cuh"

#define TC_SUM_ROWS		512		/* rows per block of the column sums */
#define TC_ROW_WARPS	8		/* rows per block of the row kernels */
#define TC_ROW_STAGE	256		/* dimensions a warp of them stages at once */

/*
 * Column sums of rows x dims into sum (zeroed), in double, and each
 * column's smallest and largest value into range[0, dims) and [dims,
 * 2 dims) (TcKeyOf; all ones and zero before).
 */
static __global__ void
TcColumnSumKernel(const float *x, int64_t rows, int dims, double *sum, unsigned int *range)
{
	const int	d = blockIdx.x * blockDim.x + threadIdx.x;
	const int64_t r0 = (int64_t) blockIdx.y * TC_SUM_ROWS;
	const int64_t r1 = min(rows, r0 + TC_SUM_ROWS);
	double		s = 0.0;
	unsigned int lo = 0xffffffffu,
				hi = 0;

	if (d >= dims)
		return;
	for (int64_t r = r0; r < r1; r++)
	{
		const float v = x[r * dims + d];

		s += v;
		lo = min(lo, TcKeyOf(v));
		hi = max(hi, TcKeyOf(v));
	}
	atomicAdd(sum + d, s);
	atomicMin(range + d, lo);
	atomicMax(range + dims + d, hi);
}

/*
 * The candidates' column means, as the float32 each value is centred by,
 * and into *largest (as TcMaxAbsKernel) the largest |centred value|: as
 * v - mean rounds monotonically in v, a column's is that of its smallest
 * or largest value, the same float as over all its values.
 */
static __global__ void
TcMeanKernel(const double *sum, const unsigned int *range, int dims, int64_t rows,
			 float *mean, unsigned int *largest)
{
	const int	d = blockIdx.x * blockDim.x + threadIdx.x;
	float		m;

	if (d >= dims)
		return;
	m = (float) (sum[d] / (double) rows);
	mean[d] = m;
	atomicMax(largest, max(__float_as_uint(fabsf(__fsub_rn(TcFloatOf(range[d]), m))),
						   __float_as_uint(fabsf(__fsub_rn(TcFloatOf(range[dims + d]), m)))));
}

/*
 * A row's value in dimension d before rounding to half precision:
 * centred (mean != NULL) or divided by its norm (norm != 0), then scaled
 * by 2^e.  Scaling by a power of two is exact.
 */
static __device__ __forceinline__ float
TcValue(const float *row, int d, const float *mean, float norm, int e)
{
	float		v = row[d];

	if (mean != NULL)
		v = __fsub_rn(v, mean[d]);
	if (norm != 0.0f)
		v = __fdiv_rn(v, norm);
	return ldexpf(v, e);
}

/* Largest |centred value| of rows x dims, as float bits, into *largest. */
static __global__ void
TcMaxAbsKernel(const float *x, int64_t rows, int dims, const float *mean,
			   unsigned int *largest)
{
	const int	lane = threadIdx.x & 31;
	const int64_t warps = (int64_t) gridDim.x * (blockDim.x >> 5);
	unsigned int m = 0;

	for (int64_t r = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows; r += warps)
		for (int d = lane; d < dims; d += 32)
			m = max(m, __float_as_uint(fabsf(TcValue(x + r * dims, d, mean, 0.0f, 0))));
	m = __reduce_max_sync(0xffffffffu, m);
	if (lane == 0)
		atomicMax(largest, m);
}

/*
 * Index of dimension d of row r in a half copy of dp padded dimensions:
 * row after row (tr = 0), or, for TcFilterWgKernel's bulk copies, in
 * blocks of tr rows x bk dimensions (a tile's stage; block after block
 * along the row, then tile after tile), each block in core-matrix order
 * (gpu_wgmma.cuh: 8 rows x 8 dimensions in 128 contiguous bytes, a row
 * group's bk / 8 of them after one another).
 */
static __device__ __forceinline__ int64_t
TcHalfIndex(int64_t r, int d, int dp, int tr, int bk)
{
	int64_t		block;
	int			rr,
				dd;

	if (tr == 0)
		return r * dp + d;
	block = (r / tr) * (dp / bk) + d / bk;
	rr = (int) (r % tr);
	dd = d % bk;
	return block * tr * bk + ((rr >> 3) * (bk >> 3) + (dd >> 3)) * 64 + (rr & 7) * 8 + (dd & 7);
}

/*
 * One warp per row r < padded: writes the row's half-precision copy
 * (zero beyond dims and for padded rows) into out (layout tr, bk: see
 * TcHalfIndex), and returns in *sq
 * (every lane) the float32 squared norm of the scaled, unrounded row.
 * Returns whether row r is a real one.  The row is read a dimension a
 * lane, through stage (the warp's TC_ROW_STAGE floats), and written 8
 * halves (16 bytes, one piece of either layout) a lane.
 */
static __device__ __forceinline__ bool
TcRowCopy(const float *x, int64_t rows, int dims, int dp, int tr, int bk,
		  const float *mean, const float *norms, int e, int64_t r, __half *out, float *sq,
		  float *stage)
{
	const int	lane = threadIdx.x & 31;
	const bool	real = r < rows;
	const float *row = x + r * dims;
	float		acc = 0.0f;

	for (int d0 = 0; d0 < dp; d0 += TC_ROW_STAGE)
	{
		for (int d = d0 + lane; d < d0 + TC_ROW_STAGE && d < dp; d += 32)
		{
			float		v = 0.0f;

			if (real && d < dims)
			{
				v = TcValue(row, d, mean, norms != NULL ? norms[r] : 0.0f, e);
				acc = __fadd_rn(acc, __fmul_rn(v, v));
			}
			stage[d - d0] = v;
		}
		__syncwarp();
		if (d0 + lane * 8 < dp)
		{
			const float *v = stage + lane * 8;
			union
			{
				__half2		h[4];
				uint4		u;
			}			piece;

			for (int k = 0; k < 4; k++)
				piece.h[k] = __floats2half2_rn(v[2 * k], v[2 * k + 1]);
			*(uint4 *) (out + TcHalfIndex(r, d0 + lane * 8, dp, tr, bk)) = piece.u;
		}
		__syncwarp();
	}
	for (int o = 16; o > 0; o >>= 1)
		acc = __fadd_rn(acc, __shfl_xor_sync(0xffffffffu, acc, o));
	*sq = acc;
	return real;
}

/*
 * The candidates' half copies and weights, one warp per row of padded
 * rows.  Euclidean: |c|^2 (1 - rel) - 2 kappa |c|, so that the test is
 * cw - 2 q.c <= thr; cosine: 0; inner product: |c| (the test is
 * -q.c - alpha |c| <= thr).  Padded rows get a weight making the test's
 * value +inf.
 */
template <OdpMetric M>
static __global__ void
TcCandRowsKernel(const float *x, const float *norms, int64_t rows, int64_t padded,
				 int dims, int dp, int tr, int bk, const float *mean, int e, __half *out, float *cw)
{
	const int64_t r = (int64_t) blockIdx.x * TC_ROW_WARPS + (threadIdx.x >> 5);
	const float rel = TC_REL(dims);
	float		sq;
	__shared__ float stage[TC_ROW_WARPS][TC_ROW_STAGE];

	if (r >= padded)
		return;
	if (!TcRowCopy(x, rows, dims, dp, tr, bk, mean, M == ODP_METRIC_COSINE ? norms : NULL, e, r, out, &sq,
				   stage[threadIdx.x >> 5]))
	{
		if ((threadIdx.x & 31) == 0)
			cw[r] = M == ODP_METRIC_INNER_PRODUCT ? -INFINITY : INFINITY;
		return;
	}
	if ((threadIdx.x & 31) != 0)
		return;
	if (M == ODP_METRIC_COSINE)
		cw[r] = 0.0f;
	else if (M == ODP_METRIC_INNER_PRODUCT)
		cw[r] = sqrtf(sq);
	else
		cw[r] = __fsub_rn(__fmul_rn(sq, 1.0f - rel), __fmul_rn(2.0f * TC_KAPPA(dims), sqrtf(sq)));
}

/*
 * The query chunk's half copies and test constants, one warp per row of
 * padded rows, from the sample's k-th distance t (OdpKnnPrefilterLimit:
 * accumulator scale, times 2^2e).  Euclidean: thr = lim - |q|^2 (1 - rel)
 * + 2 kappa |q| + 2 K0 (the distance errs by twice the dot product); cosine: thr = -2 (1 - rel' - lim) 2^28 (rows of norm
 * 2^14); inner product: thr = lim + kappa |q| + K0, alpha = rel |q| +
 * kappa.  Padded rows: thr = -inf.  An infinite limit becomes FLT_MAX:
 * everything passes, and padding still does not.
 */
template <OdpMetric M>
static __global__ void
TcQueryRowsKernel(const __grid_constant__ TcQueryRowsArgs a)
{
	const int64_t r = (int64_t) blockIdx.x * TC_ROW_WARPS + (threadIdx.x >> 5);
	const float rel = TC_REL(a.dims);
	const float kappa = TC_KAPPA(a.dims);
	float		sq,
				n,
				lim,
				thr;
	__shared__ float stage[TC_ROW_WARPS][TC_ROW_STAGE];

	if (r >= a.padded)
		return;
	if (!TcRowCopy(a.x, a.rows, a.dims, a.dp, a.tr, a.bk, a.mean,
				   M == ODP_METRIC_COSINE ? a.norms : NULL, a.e, r, a.out, &sq,
				   stage[threadIdx.x >> 5]))
	{
		if ((threadIdx.x & 31) == 0)
		{
			a.thr[r] = -INFINITY;
			a.alpha[r] = 0.0f;
		}
		return;
	}
	if ((threadIdx.x & 31) != 0)
		return;
	if (a.kth != NULL ? isnan(a.kth[r]) : a.count[r] != a.ks)
	{
		atomicExch(a.bad, 1);
		a.thr[r] = -INFINITY;
		a.alpha[r] = 0.0f;
		return;
	}
	n = sqrtf(sq);
	lim = OdpKnnPrefilterLimit<M>(a.kth != NULL ? a.kth[r] : a.dist[r * a.ks + a.ks - 1]);
	if (M == ODP_METRIC_COSINE)
		thr = -2.0f * ldexpf(__fsub_rn(__fsub_rn(1.0f, rel + 0x1p-20f), lim), 2 * TC_TOP_EXP);
	else if (M == ODP_METRIC_INNER_PRODUCT)
		thr = __fadd_rn(__fadd_rn(ldexpf(lim, 2 * a.e), __fmul_rn(kappa, n)), TC_K0(a.dims, a.e));
	else
		thr = __fadd_rn(__fadd_rn(__fsub_rn(ldexpf(lim, 2 * a.e), __fmul_rn(sq, 1.0f - rel)),
								  __fmul_rn(2.0f * kappa, n)),
						2.0f * TC_K0(a.dims, a.e));
	a.thr[r] = thr < FLT_MAX ? thr : FLT_MAX;
	a.alpha[r] = __fadd_rn(__fmul_rn(rel * 1.0001f, n), kappa);
}

/* Copies the sample (every stride-th candidate row) into dst. */
static __global__ void
TcSampleKernel(const float *c, const float *cn, int dims, int64_t nc,
			   int64_t s, float *dst, float *dst_norms)
{
	const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		r,
				src;

	if (t >= s * dims)
		return;
	r = t / dims;
	src = r * nc / s;
	dst[t] = c[src * dims + t % dims];
	if (cn != NULL && t % dims == 0)
		dst_norms[r] = cn[src];
}

/*
 * The symmetric filter's row and candidate terms (see TcTestMirrored):
 * rw = cw / 2 for rows < padded_rows, cv = -thr / 2 - cw / 2 for
 * candidates < padded_cands; padding (from rows on) gets +inf, which
 * never passes.
 */
static __global__ void
TcMirrorKernel(const float *thr, const float *cw, int64_t rows, int64_t padded_rows,
			   int64_t padded_cands, float *rw, float *cv)
{
	const int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (r < padded_rows)
		rw[r] = r < rows ? 0.5f * cw[r] : INFINITY;
	if (r < padded_cands)
		cv[r] = r < rows ? __fsub_rn(-0.5f * thr[r], 0.5f * cw[r]) : INFINITY;
}

/* See knn_gpu_tc_internal.cuh. */
void
TcLaunchColumnSums(cudaStream_t stream, const float *x, int64_t rows, int dims,
				   double *sum, unsigned int *range)
{
	dim3		grid((unsigned) ((dims + 127) / 128), (unsigned) ((rows + TC_SUM_ROWS - 1) / TC_SUM_ROWS));

	TcColumnSumKernel<<<grid, 128, 0, stream>>>(x, rows, dims, sum, range);
}

/* See knn_gpu_tc_internal.cuh. */
void
TcLaunchMeans(cudaStream_t stream, const double *sum, const unsigned int *range,
			  int dims, int64_t rows, float *mean, unsigned int *largest)
{
	TcMeanKernel<<<(unsigned) ((dims + 127) / 128), 128, 0, stream>>>(sum, range, dims, rows,
																		mean, largest);
}

/* See knn_gpu_tc_internal.cuh. */
void
TcLaunchMaxAbs(cudaStream_t stream, const OdpGpuDevice *dev, const float *x,
			   int64_t rows, int dims, const float *mean, unsigned int *largest)
{
	TcMaxAbsKernel<<<4 * dev->sm_count, 256, 0, stream>>>(x, rows, dims, mean, largest);
}

/* See knn_gpu_tc_internal.cuh. */
template <OdpMetric M>
void
TcLaunchCandRows(cudaStream_t stream, const float *x, const float *norms,
				 int64_t rows, int64_t padded, int dims, int dp, int tr, int bk,
				 const float *mean, int e, __half *out, float *cw)
{
	TcCandRowsKernel<M><<<(unsigned) ((padded + TC_ROW_WARPS - 1) / TC_ROW_WARPS), TC_ROW_WARPS * 32, 0, stream>>>(
		x, norms, rows, padded, dims, dp, tr, bk, mean, e, out, cw);
}

/* See knn_gpu_tc_internal.cuh. */
void
TcLaunchSample(cudaStream_t stream, const float *c, const float *cn, int dims,
			   int64_t nc, int64_t s, float *dst, float *dst_norms)
{
	TcSampleKernel<<<(unsigned) ((s * dims + 255) / 256), 256, 0, stream>>>(c, cn, dims, nc, s, dst, dst_norms);
}

/* See knn_gpu_tc_internal.cuh. */
template <OdpMetric M>
void
TcLaunchQueryRows(cudaStream_t stream, const TcQueryRowsArgs &a)
{
	TcQueryRowsKernel<M><<<(unsigned) ((a.padded + TC_ROW_WARPS - 1) / TC_ROW_WARPS), TC_ROW_WARPS * 32, 0, stream>>>(a);
}

/* See knn_gpu_tc_internal.cuh. */
void
TcLaunchMirror(cudaStream_t stream, const float *thr, const float *cw, int64_t rows,
			   int64_t padded_rows, int64_t padded_cands, float *rw, float *cv)
{
	const int64_t n = padded_rows > padded_cands ? padded_rows : padded_cands;

	TcMirrorKernel<<<(unsigned) ((n + 255) / 256), 256, 0, stream>>>(
		thr, cw, rows, padded_rows, padded_cands, rw, cv);
}

/* The instances TcSearch runs: one per metric (TC_FOR_EACH_METRIC). */
#define TC_PREP_METRIC(M) \
	template void TcLaunchCandRows<M>(cudaStream_t, const float *, const float *, int64_t, \
									  int64_t, int, int, int, int, const float *, int, \
									  __half *, float *); \
	template void TcLaunchQueryRows<M>(cudaStream_t, const TcQueryRowsArgs &);
TC_FOR_EACH_METRIC(TC_PREP_METRIC)
#undef TC_PREP_METRIC
