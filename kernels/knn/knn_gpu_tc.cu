/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc.cu
 *	  Exact k-NN for the metrics that are matrix products (euclidean,
 *	  squared euclidean, cosine, inner product) through a tensor-core
 *	  filter.
 *
 * The canonical distance (odp_distance.h: float32, dimension by dimension,
 * no FMA) costs 3 SIMT operations per dimension; a tensor core computes
 * a dot product many times faster, but not bit for bit.  So the tensor
 * cores only filter, and every result is still canonical:
 *
 *	1. Threshold: each query's exact k-th distance over a strided sample of
 *	   S candidates (the shared SIMT primitive, k + 1 for a self join).  It
 *	   bounds the final k-th distance from above.
 *	2. Filter (TcFilterKernel): FP16 mma.sync tiles of 128 queries x 128
 *	   candidates (on the H100, TcFilterWgKernel: warpgroup products of
 *	   256 queries x 128) give the dot products q.c of copies of the rows scaled
 *	   by a power of two 2^e and rounded to half precision (centred on the
 *	   candidates' mean for the euclidean metrics, which changes no
 *	   distance; divided by their norms for cosine).  With a rigorous
 *	   bound E on the error (below), L = |q|^2 + |c|^2 - 2 q.c - E
 *	   (cosine: 1 - q.c - E, inner product: -q.c - E) is a lower bound of
 *	   the canonical value, and a candidate whose L reaches the threshold
 *	   is appended to the query's list (TC_CAP entries).  Every term of L
 *	   but the product is a per-query or per-candidate constant, so the
 *	   test is one FMA and one comparison per pair; where the products
 *	   start from the candidate's term (TcFilterRegKernel, rows of up to
 *	   32 padded dimensions), one maximum per pair.  A self join there
 *	   tests each pair of rows once for both rows (the symmetric filter:
 *	   half the products, a second test per pair).
 *	3. Refine (TcRefineKernel): one warp per query computes the canonical
 *	   distance of every listed candidate and keeps the k smallest by
 *	   (distance, index), exactly what the SIMT primitive keeps, through
 *	   a bitwise search for the k-th smallest (no sort of the list).
 * Every candidate of the true k nearest has distance <= threshold, so its
 * L passes: the lists hold all of them, and the result is exact.  A query
 * whose list overflows (many equal distances, as with many copies of a
 * row) scans every candidate instead (TcScanKernel), alone.
 *
 * The bound.  Half precision has TF32's 11-bit significand: rounding a
 * normal value errs by at most 2^-11 relatively, so a product by at most
 * 2^-10 + 2^-22; the scaling puts the largest magnitude in [2^14, 2^15),
 * far from overflow, and a value that falls into the subnormal range
 * errs by at most eta = 2^-25 absolutely, which adds at most
 * eta (1 + 2^-11) sqrt(D) (|q| + |c|) + D eta^2 to a dot product.  The
 * tensor core's float32 accumulation of D exact products errs by about
 * D 2^-23 of the sum of their magnitudes; the float32 norms, centring,
 * normalisation and the canonical sum itself by D 2^-24 or 2^-24
 * relatively.  With |q.c| <= |q||c| <= (|q|^2 + |c|^2) / 2, the relative
 * part stays below TC_REL(D) (|q|^2 + |c|^2), TC_REL(D) = 2^-8 + D 2^-20,
 * about twice the sum of the worst cases (cosine: TC_REL(D) in units of
 * 1; inner product: in units of |q||c|), and the absolute part is
 * counted twice over (TC_KAPPA).  A generous E costs only a few more
 * exact distances.
 *
 * Map of this file.  From top to bottom:
 *	- declarations: the constants (TC_*), the test counters
 *	  (odp_gpu_knn_tc_*), the bound's terms (TC_REL, TC_KAPPA, TC_K0) and
 *	  TcArgs, one filter launch's arguments;
 *	- preparation kernels: the float keys (TcKeyOf, TcFloatOf), the
 *	  centring and its range (TcColumnSumKernel, TcMeanKernel),
 *	  the scale (TcMaxAbsKernel), the half copies and test constants
 *	  (TcValue, TcHalfIndex, TcRowCopy, TcCandRowsKernel, TcQueryRowsKernel) and the
 *	  sample (TcSampleKernel);
 *	- the filter (step 2): device helpers (TcMma, TcStageQueries,
 *	  TcTestValue, TcLdm4, TcLoadLimits, TcAppend, the warpgroup
 *	  filter's deferred appends TcWarpBuf, TcWgFlush and TcWgTest,
 *	  TcTestFragments, TcTestFolded, TcTestMirrored, TcStep,
 *	  TcIssueStage), then TcFilterKernel and TcFilterRegKernel, the
 *	  warpgroup filter's stages (TcWgIssue), TcFilterWgKernel,
 *	  TcWgSharedBytes and its probe (TcWgmmaProbeKernel);
 *	- the refinement (step 3): TcRefineArgs, the distance keys (TcCandKey,
 *	  TcListKeys, TcCountBelow), TcRefineKernel
 *	  and TcScanKernel for the lists that overflowed;
 *	- host side: OdpKnnTcEligible, TcSampleSize, TcRegFilter, TcWgmmaUsable,
 *	  TcSymmetric and TcMirrorKernel (the symmetric filter's terms),
 *	  TcSearch (one metric's
 *	  launches, query chunk by query chunk) and the entry point
 *	  OdpKnnTcSearch.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc.cu
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "gpu/gpu_wgmma.cuh"
#include "include/odp_distance.h"
#include "knn/knn_gpu_tc.cuh"

#define TC_BM			128		/* queries per block tile */
#define TC_BN			128		/* candidates per block tile */
#define TC_BK			32		/* rows are padded to a multiple of these
								 * dimensions; a stage holds 32 or 64 */
#define TC_STAGES		4		/* cp.async ring depth */
#define TC_QRES_MAX		256		/* padded dimensions up to which a block's
								 * queries stay in shared memory */
#define TC_SMEM_TWO_BLOCKS	(110 * 1024)	/* shared bytes a block may take so
											 * that two fit an SM */
#define TC_THREADS		256
#define TC_REG_BM		512		/* queries per block of the register-resident filter */
#define TC_WG_BM		256		/* queries per block of the warpgroup filter */
#define TC_WG_THREADS	512		/* its four warpgroups */
#define TC_WG_BUF		192		/* deferred appends per warp (TcWarpBuf) */
#define TC_MAX_TILES	32		/* candidate tiles one filter block sweeps */
#define TC_CAP			2048	/* list entries per query */
#define TC_MAX_K		64		/* larger k: lists would need larger samples
								 * (Poker stand-in k = 50, lists expected a
								 * quarter full: 563 on average, 989 at
								 * most) */
#define TC_MIN_CANDS	32768	/* fewer: the SIMT primitive is as fast */
#define TC_MIN_QUERIES	128		/* fewer: the threshold pass and the half
								 * copy of every candidate cost more than
								 * the SIMT primitive's few tiles */
#define TC_QUERY_CHUNK	262144	/* queries whose lists are held at once */
#define TC_PROBE_QUERIES 16384	/* first chunk when giving up is allowed */
#define TC_NEST_MIN_SAMPLE	16384	/* a sample this large gets its thresholds
									 * through the filter too */
#define TC_REFINE_WARPS	3		/* with their keys and terms 39 KB of shared
								 * memory (five blocks an SM; registers, 146
								 * a thread, allow four) */
#define TC_SCAN_QUERIES	1024	/* overflowed queries per launch of the scan */
#define TC_SCAN_WARPS	16		/* warps sharing one overflowed query's scan */
#define TC_REFINE_SEL	(TC_MAX_K + 1)	/* k of a sample search: k + 1 */
#define TC_LAUNCH_WORK	((int64_t) 1 << 38)	/* pair-dimensions per launch */
#define TC_SUM_ROWS		512		/* rows per block of the column sums */
#define TC_ROW_WARPS	8		/* rows per block of the row kernels */
#define TC_ROW_STAGE	256		/* dimensions a warp of them stages at once */
#define TC_TOP_EXP		14		/* largest scaled magnitude in [2^14, 2^15) */

/*
 * Query chunks the filter finished, and samples whose thresholds it
 * found, for the tests (not thread-safe).
 */
extern "C" int64_t odp_gpu_knn_tc_chunks;
extern "C" int64_t odp_gpu_knn_tc_samples;
extern "C" int64_t odp_gpu_knn_tc_scans;
extern "C" int64_t odp_gpu_knn_tc_give_ups;
extern "C" int64_t odp_gpu_knn_tc_symmetric;
extern "C" int64_t odp_gpu_knn_tc_warpgroup;
int64_t		odp_gpu_knn_tc_chunks = 0;
int64_t		odp_gpu_knn_tc_samples = 0;
int64_t		odp_gpu_knn_tc_scans = 0;	/* queries whose list overflowed */
int64_t		odp_gpu_knn_tc_give_ups = 0;	/* searches past tc_max_overflow */
int64_t		odp_gpu_knn_tc_symmetric = 0;	/* self joins filtered symmetrically */
int64_t		odp_gpu_knn_tc_warpgroup = 0;	/* searches through TcFilterWgKernel */
/* Tests: candidate tiles per filter block when > 0 (the ring wraps many times). */
extern "C" int odp_gpu_knn_tc_block_tiles;
int			odp_gpu_knn_tc_block_tiles = 0;

/* Relative error bound of the filter for D dimensions (see the header). */
#define TC_REL(D)		(0x1p-8f + (float) (D) * 0x1p-20f)
/* Per unit of a row's scaled norm: twice the subnormal error of a product. */
#define TC_KAPPA(D)		(2.01f * 0x1p-25f * sqrtf((float) (D)))
/* Constant part: twice D eta^2, and the canonical sum's subnormal error. */
#define TC_K0(D, e)		((float) (D) * 0x1p-49f + ldexpf(4.0f * (float) (D), 2 * (e) - 149))

/*
 * Everything one filter launch needs.  Rows are padded to whole tiles:
 * padded queries have threshold -inf and padded candidates a weight that
 * makes every bound +inf, so no pair needs a range check.
 */
struct TcArgs
{
	const __half *q;			/* query tiles x TC_BM rows of dp halves */
	const __half *c;			/* candidate tiles x TC_BN rows of dp halves */
	const float *thr;			/* per query: the test's threshold */
	const float *alpha;			/* per query (inner product): norm factor */
	const float *cw;			/* per candidate: the test's weight */
	int64_t		group0;			/* first candidate group of this launch */
	int			tiles;			/* candidate tiles per group */
	int			ctiles;			/* candidate tiles in all */
	int			dp;				/* padded dimensions: 16 or a multiple
								 * of TC_BK */
	int32_t    *count;			/* per query: candidates appended */
	int32_t    *list;			/* per query: TC_CAP local candidate indexes */
	/* the symmetric filter of a self join (TcTestMirrored) */
	const float *rw;			/* per query row: half its candidate weight */
	const float *cv;			/* per candidate: its mirrored threshold */
};

/*
 * Order-preserving unsigned keys of floats (the refinement's distances,
 * the column ranges): a < b as floats iff key(a) < key(b), except that -0
 * sorts below +0; no metric produces both (odp_distance.h: the inner
 * product's zero is always -0, every other metric's +0).  TC_KEY_NONE
 * marks an entry that takes no part (the query itself, a NaN distance),
 * above every other key; TcFloatOf turns a key back into its float (NaN
 * for TC_KEY_NONE).
 */
#define TC_KEY_NONE		0xffffffffu

static __device__ __forceinline__ uint32_t
TcKeyOf(float d)
{
	const uint32_t b = __float_as_uint(d);

	if (d != d)
		return TC_KEY_NONE;
	return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

static __device__ __forceinline__ float
TcFloatOf(uint32_t key)
{
	return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

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

/* Where the query rows kernel finds the sample's k-th distances. */
struct TcQueryRowsArgs
{
	const float *x;				/* the chunk's first query row */
	const float *norms;			/* their cosine norms, else NULL */
	int64_t		rows;
	int64_t		padded;
	int			dims;
	int			dp;
	int			tr;				/* layout of out (TcHalfIndex) */
	int			bk;
	const float *mean;
	int			e;
	const float *dist;			/* sample state: rows x ks */
	const int32_t *count;
	int			ks;
	__half	   *out;
	float	   *thr;
	float	   *alpha;
	int		   *bad;			/* set when a sample list is short */
};

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
	if (a.count[r] != a.ks)
	{
		atomicExch(a.bad, 1);
		a.thr[r] = -INFINITY;
		a.alpha[r] = 0.0f;
		return;
	}
	n = sqrtf(sq);
	lim = OdpKnnPrefilterLimit<M>(a.dist[r * a.ks + a.ks - 1]);
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


/* One m16n8k16 FP16 product with float32 accumulation into c (ZERO: c = 0 first). */
template <bool ZERO>
static __device__ __forceinline__ void
TcMma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
	if (ZERO)
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
					 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
					 : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
					 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
	else
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
					 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
					 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
					 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Copies the query tile (TC_BM rows of dp halves) into dst (row stride dp + 8). */
static __device__ __forceinline__ void
TcStageQueries(const __half *src, int dp, __half *dst)
{
	const int	per_row = dp / 8;

	for (int t = threadIdx.x; t < TC_BM * per_row; t += TC_THREADS)
	{
		const int	r = t / per_row;
		const int	v = t - r * per_row;

		__pipeline_memcpy_async(dst + r * (dp + 8) + v * 8, src + (int64_t) r * dp + v * 8, 16);
	}
}

/* The test's value for one pair: at most thr when the pair passes. */
template <OdpMetric M>
static __device__ __forceinline__ float
TcTestValue(float dot, float cw, float alpha)
{
	if (M == ODP_METRIC_INNER_PRODUCT)
		return fmaf(-cw, alpha, -dot);
	return fmaf(-2.0f, dot, cw);
}

/* Four 8 x 8 matrices of halves from the shared address addr (one row per lane). */
static __device__ __forceinline__ void
TcLdm4(uint32_t (&r)[4], uint32_t addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
				 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

/*
 * The threshold and factor of each of the lane's rows of a warp's 64
 * queries from qw (m16n8 fragment layout: row i * 16 + g + h * 8).
 */
template <OdpMetric M>
static __device__ __forceinline__ void
TcLoadLimits(const TcArgs &a, int64_t qw, float (&thr)[4][2], float (&alpha)[4][2])
{
	const int	g = (threadIdx.x & 31) >> 2;

#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int h = 0; h < 2; h++)
		{
			const int64_t q = qw + i * 16 + g + h * 8;

			thr[i][h] = a.thr[q];
			alpha[i][h] = M == ODP_METRIC_INNER_PRODUCT ? a.alpha[q] : 0.0f;
		}
}

/*
 * Appends candidate c to query q's list; past TC_CAP entries sets the
 * row's limit to never, which no pair passes (see TcTestFragments).
 */
static __device__ __forceinline__ void
TcAppend(int32_t *count, int32_t *list, int64_t q, int64_t c, float &limit, float never)
{
	const int	pos = atomicAdd(count + q, 1);

	if (pos < TC_CAP)
		list[q * TC_CAP + pos] = (int32_t) c;
	else
		limit = never;
}

/*
 * The warpgroup filter's deferred appends (TcFilterWgKernel): a warp's
 * passers wait in shared memory, as entry (candidate - c_first) << 4 |
 * (query - qw), until TcWgFlush moves them to their lists, 32 at a time.
 * A global atomic per passer, whose result the warp (and with it its
 * warpgroup's next products) would wait for, becomes a store of the
 * warp's own into shared memory.
 */
struct TcWarpBuf
{
	uint32_t   *entry;			/* TC_WG_BUF entries */
	int		   *n;				/* entries held */
	unsigned   *over;			/* rows that lost entries: their lists
								 * are marked full (TcWgFlush) */
	int64_t		qw;				/* the warp's first query (16 rows) */
	int64_t		c_first;		/* the block's first candidate */
};

/*
 * Moves a warp's buffered passers to their lists (all lanes); a row whose
 * list fills up gets the limit never, as with TcAppend (lane's rows: g and
 * g + 8 of the warp's 16), and so does a row marked in wb.over, whose list
 * is marked full.  Every lane runs every atomic (adding 0 where it has no
 * entry), on branches the compiler knows are uniform: a global atomic on a
 * path it takes for divergent makes it serialise the warpgroup products
 * of the whole kernel (ptxas C7520).
 */
static __device__ __forceinline__ void
TcWgFlush(const TcWarpBuf &wb, int32_t *count, int32_t *list, float (&limit)[1][2], float never)
{
	const int	lane = threadIdx.x & 31;
	unsigned	full = 0;
	int			n;

	__syncwarp();
	n = __shfl_sync(0xffffffffu, *wb.n, 0);
	for (int i0 = 0; i0 < n; i0 += 32)
	{
		const bool	mine = i0 + lane < n;
		const uint32_t e = mine ? wb.entry[i0 + lane] : 0;
		const int64_t q = wb.qw + (e & 15);
		const int	pos = atomicAdd(count + q, mine ? 1 : 0);

		if (mine && pos < TC_CAP)
			list[q * TC_CAP + pos] = (int32_t) (wb.c_first + (e >> 4));
		full |= (mine && pos >= TC_CAP ? 1u : 0u) << (e & 15);
	}
	full = __reduce_or_sync(0xffffffffu, full | *wb.over);
	if (full != 0)
		atomicMax(count + wb.qw + (lane & 15), ((full >> (lane & 15)) & 1) ? TC_CAP + 1 : 0);
#pragma unroll
	for (int h = 0; h < 2; h++)
		if ((full >> ((lane >> 2) + h * 8)) & 1)
			limit[0][h] = never;
	__syncwarp();
	if (lane == 0)
	{
		*wb.n = 0;
		*wb.over = 0;
	}
	__syncwarp();
}

/*
 * TcFilterWgKernel's test of a warp's 16 x 128 block of pairs (queries
 * from wb.qw, candidates from c0; acc in OdpWgMma64x128's layout): the
 * test of TcTestFolded (FOLD: thr holds -thr / 2) or TcTestFragments.  A
 * lane with a passer in a row takes its row's bit mask; then the warp
 * finds each lane's place in its buffer (flushed first if it would
 * overflow) and writes every lane's passers there, with no wait on
 * memory.  A tile with more passers than a buffer marks their rows' lists
 * full instead (they are scanned whole), as a list past its capacity.
 */
template <OdpMetric M, bool FOLD>
static __device__ __forceinline__ void
TcWgTest(const float (&acc)[1][16][4], const float (&cw)[16][2], float (&thr)[1][2],
		 const float (&alpha)[1][2], int64_t c0, const TcWarpBuf &wb,
		 int32_t *count, int32_t *list)
{
	const int	lane = threadIdx.x & 31;
	const int	g = lane >> 2;
	const int	t = lane & 3;
	uint32_t	pass[2] = {0, 0};
	unsigned	lost = 0;
	int			n,
				before,
				total,
				base;

#pragma unroll
	for (int h = 0; h < 2; h++)
	{
		float		m = FOLD ? -INFINITY : INFINITY;

#pragma unroll
		for (int j = 0; j < 16; j++)
#pragma unroll
			for (int e = 0; e < 2; e++)
				m = FOLD ? fmaxf(m, acc[0][j][h * 2 + e])
					: fminf(m, TcTestValue<M>(acc[0][j][h * 2 + e], cw[j][e], alpha[0][h]));
		if (FOLD ? m >= thr[0][h] : m <= thr[0][h])
#pragma unroll
			for (int j = 0; j < 16; j++)
#pragma unroll
				for (int e = 0; e < 2; e++)
					if (FOLD ? acc[0][j][h * 2 + e] >= thr[0][h]
						: TcTestValue<M>(acc[0][j][h * 2 + e], cw[j][e], alpha[0][h]) <= thr[0][h])
						pass[h] |= 1u << (j * 2 + e);
	}
	n = __popc(pass[0]) + __popc(pass[1]);
	before = n;
	for (int o = 1; o < 32; o <<= 1)
	{
		const int	v = __shfl_up_sync(0xffffffffu, before, o);

		if (lane >= o)
			before += v;
	}
	/* before: this lane's passers and those of the lanes below it */
	total = __shfl_sync(0xffffffffu, before, 31);
	if (total == 0)
		return;
	__syncwarp();
	/* the vote and the shuffles make branches the compiler knows are uniform */
	if (__any_sync(0xffffffffu, *wb.n + total > TC_WG_BUF))
		TcWgFlush(wb, count, list, thr, FOLD ? INFINITY : -INFINITY);
	base = *wb.n + before - n;
#pragma unroll
	for (int h = 0; h < 2; h++)
		while (pass[h] != 0)
		{
			const int	b = __ffs(pass[h]) - 1;
			const int64_t c = c0 + (b >> 1) * 8 + 2 * t + (b & 1);

			pass[h] &= pass[h] - 1;
			if (base < TC_WG_BUF)
				wb.entry[base] = (uint32_t) ((c - wb.c_first) << 4) | (uint32_t) (g + h * 8);
			else
				lost |= 1u << (g + h * 8);	/* more than a buffer in one tile */
			base++;
		}
	lost = __reduce_or_sync(0xffffffffu, lost);
	__syncwarp();
	if (lane == 0)
	{
		*wb.n = min(*wb.n + total, TC_WG_BUF);
		*wb.over |= lost;
	}
	__syncwarp();
}

/*
 * Tests a warp's (16 MI) x (8 NJ) block of pairs (queries from qw,
 * candidates from c0; acc in m16n8 fragment layout) and appends the passers to
 * their queries' lists: a row of 2 NJ pairs at a time through its
 * minimum, as nearly every row fails.
 *
 * thr is the caller's, kept across its tiles: once an append finds a
 * row's list past its capacity, the row's threshold becomes -inf.  Such
 * a list is scanned whole later, so further appends would only cost
 * atomics, which on rows in tight clusters (every pair passing) dominate
 * the filter's time.  Learnt from the atomic's own result, it costs no
 * extra memory round trip, nor any test.
 */
template <OdpMetric M, int MI, int NJ>
static __device__ __forceinline__ void
TcTestFragments(const float (&acc)[MI][NJ][4], const float (&cw)[NJ][2],
				float (&thr)[MI][2], const float (&alpha)[MI][2],
				int64_t qw, int64_t c0, int32_t *count, int32_t *list)
{
	const int	g = (threadIdx.x & 31) >> 2;
	const int	t = threadIdx.x & 3;

#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int h = 0; h < 2; h++)
		{
			float		m = INFINITY;

#pragma unroll
			for (int j = 0; j < NJ; j++)
#pragma unroll
				for (int e = 0; e < 2; e++)
					m = fminf(m, TcTestValue<M>(acc[i][j][h * 2 + e], cw[j][e], alpha[i][h]));
			if (m <= thr[i][h])
			{
				const int64_t q = qw + i * 16 + g + h * 8;

#pragma unroll
				for (int j = 0; j < NJ; j++)
#pragma unroll
					for (int e = 0; e < 2; e++)
						if (TcTestValue<M>(acc[i][j][h * 2 + e], cw[j][e], alpha[i][h]) <= thr[i][h])
							TcAppend(count, list, q, c0 + j * 8 + 2 * t + e, thr[i][h], -INFINITY);
			}
		}
}

/*
 * TcTestFragments for products that started from -cw / 2 (the MMA's C
 * operand), so that acc = q.c - cw / 2 and a pair passes when
 * acc >= -thr / 2 (half, per row; +inf once the row's list is full):
 * one maximum per pair.  Not for the inner product, whose weight has a
 * per-query factor.  The symmetric filter's products also start from
 * -rw (TcTestMirrored), and half is then -thr / 2 - rw.
 */
template <int MI, int NJ>
static __device__ __forceinline__ void
TcTestFolded(const float (&acc)[MI][NJ][4], float (&half)[MI][2],
			 int64_t qw, int64_t c0, int32_t *count, int32_t *list)
{
	const int	g = (threadIdx.x & 31) >> 2;
	const int	t = threadIdx.x & 3;

#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int h = 0; h < 2; h++)
		{
			float		m = -INFINITY;

#pragma unroll
			for (int j = 0; j < NJ; j++)
				m = fmaxf(m, fmaxf(acc[i][j][h * 2], acc[i][j][h * 2 + 1]));
			if (m >= half[i][h])
			{
				const int64_t q = qw + i * 16 + g + h * 8;

#pragma unroll
				for (int j = 0; j < NJ; j++)
#pragma unroll
					for (int e = 0; e < 2; e++)
						if (acc[i][j][h * 2 + e] >= half[i][h])
							TcAppend(count, list, q, c0 + j * 8 + 2 * t + e, half[i][h], INFINITY);
			}
		}
}

/*
 * The mirrored test of a self join's symmetric filter: the pair of row r
 * and candidate c read the other way round, c as the query and r as its
 * candidate, appended to c's list.  The products start from -(rw + cw /
 * 2), rw = w_r / 2 (TcMirrorKernel), so that acc = q.c - (w_r + w_c) / 2
 * serves both tests: r's against -thr_r / 2 - rw (TcTestFolded), c's
 * against cv = -thr_c / 2 - w_c / 2: one maximum per pair, a column's
 * maximum first.  (Subtracting rw in the test instead cost as much; a
 * weaker first test, max acc against cv + min rw over products from -cw
 * / 2 alone, passed so often on 1e6 x 32 Gaussian rows that the filter
 * took 46% longer.)
 */
template <int NJ>
static __device__ __forceinline__ void
TcTestMirrored(const float (&acc)[4][NJ][4], const float *cv,
			   int64_t qw, int64_t c0, int32_t *count, int32_t *list)
{
	const int	g = (threadIdx.x & 31) >> 2;
	const int	t = threadIdx.x & 3;

#pragma unroll
	for (int j = 0; j < NJ; j++)
#pragma unroll
		for (int e = 0; e < 2; e++)
		{
			const float v = cv[j * 8 + 2 * t + e];
			float		m = -INFINITY;

#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int h = 0; h < 2; h++)
					m = fmaxf(m, acc[i][j][h * 2 + e]);
			if (m >= v)
			{
				const int64_t c = c0 + j * 8 + 2 * t + e;

#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int h = 0; h < 2; h++)
						if (acc[i][j][h * 2 + e] >= v)
						{
							const int	pos = atomicAdd(count + c, 1);

							if (pos < TC_CAP)
								list[c * TC_CAP + pos] = (int32_t) (qw + i * 16 + g + h * 8);
						}
			}
		}
}

/*
 * One k-step of 16 dimensions for a warp's 64 x 32 block: A fragments
 * from the shared addresses a_addr[i] (+ koff bytes), B from b_addr[jp].
 */
template <bool ZERO>
static __device__ __forceinline__ void
TcStep(float (&acc)[4][4][4], const uint32_t (&a_addr)[4], uint32_t a_koff,
	   const uint32_t (&b_addr)[2], uint32_t b_koff)
{
	uint32_t	af[4][4];
	uint32_t	bf[2][4];

#pragma unroll
	for (int i = 0; i < 4; i++)
		TcLdm4(af[i], a_addr[i] + a_koff);
#pragma unroll
	for (int jp = 0; jp < 2; jp++)
		TcLdm4(bf[jp], b_addr[jp] + b_koff);
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			TcMma<ZERO>(acc[i][j], af[i], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
}

/*
 * Issues the copies of one ring stage into slot: BK dimensions from
 * knext of the candidate tile at cnext (and of the query tile unless
 * QRES); then advances (cnext, knext) to the next stage.
 */
template <bool QRES, int BK>
static __device__ __forceinline__ void
TcIssueStage(__half *slot, const __half *qtile, const __half *&cnext, int &knext, int dp,
			 const int (&src_off)[TC_BN * BK / 8 / TC_THREADS],
			 const int (&dst_off)[TC_BN * BK / 8 / TC_THREADS])
{
	constexpr int SLD = BK + 8;
	constexpr int COPIES = TC_BN * BK / 8 / TC_THREADS;

#pragma unroll
	for (int u = 0; u < COPIES; u++)
	{
		if (!QRES)
			__pipeline_memcpy_async(slot + TC_BN * SLD + dst_off[u], qtile + knext + src_off[u], 16);
		__pipeline_memcpy_async(slot + dst_off[u], cnext + knext + src_off[u], 16);
	}
	knext += BK;
	if (knext == dp)
	{
		knext = 0;
		cnext += (int64_t) TC_BN * dp;
	}
}

/*
 * The filter.  Grid: x = query tiles, y = candidate groups from
 * a.group0, each of a.tiles candidate tiles (fewer in the last); queries
 * vary fastest, so the blocks running at once share their candidates in
 * L2.  8 warps, warp w covering queries (w / 4) * 64 .. + 64 and
 * candidates (w % 4) * 32 .. + 32 of the block tile as 4 x 4 m16n8
 * fragments.  QRES: the query tile stays in shared memory (padded row
 * stride dp + 8, conflict-free) and the ring stages BK dimensions of
 * candidates; otherwise each stage holds BK dimensions of both.  The
 * ring runs on from one candidate tile into the next; one barrier per
 * stage.
 */
template <OdpMetric M, bool QRES, int BK>
static __global__ void __launch_bounds__(TC_THREADS, 2)
TcFilterKernel(const __grid_constant__ TcArgs a)
{
	extern __shared__ __align__(16) __half tsm[];
	constexpr int SLD = BK + 8;		/* stage row stride: conflict-free ldmatrix */
	constexpr int STAGE = (QRES ? 1 : 2) * TC_BN * SLD;	/* halves per slot */
	constexpr int COPIES = TC_BN * BK / 8 / TC_THREADS;	/* 16-byte copies per thread and row block */
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int	t = lane & 3;
	const int	wm = warp >> 2;
	const int	wn = warp & 3;
	const int64_t q0 = (int64_t) blockIdx.x * TC_BM;
	const int	tile0 = (int) ((a.group0 + blockIdx.y) * a.tiles);
	const int	tiles = min(a.tiles, a.ctiles - tile0);
	const int	kc = a.dp / BK;
	const int	steps = tiles * kc;
	const int	qld = a.dp + 8;
	__half	   *ring = tsm + (QRES ? TC_BM * qld : 0);
	const __half *qtile = a.q + q0 * a.dp;
	const __half *cnext;		/* the next stage's candidate rows */
	int			knext = 0;		/* and first dimension */
	int			src_off[COPIES];
	int			dst_off[COPIES];
	uint32_t	a_addr[4];
	uint32_t	b_addr[2];
	float		acc[4][4][4];
	float		thr[4][2];
	float		alpha[4][2];

	TcLoadLimits<M>(a, q0 + wm * 64, thr, alpha);
#pragma unroll
	for (int u = 0; u < COPIES; u++)
	{
		const int	x = threadIdx.x + u * TC_THREADS;

		src_off[u] = (x / (BK / 8)) * a.dp + (x % (BK / 8)) * 8;
		dst_off[u] = (x / (BK / 8)) * SLD + (x % (BK / 8)) * 8;
	}
	/* ldmatrix row addresses of this lane, in slot 0 / at dimension 0 */
#pragma unroll
	for (int i = 0; i < 4; i++)
	{
		const int	row = wm * 64 + i * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
		const __half *p = QRES ? tsm + row * qld : ring + TC_BN * SLD + row * SLD;

		a_addr[i] = (uint32_t) __cvta_generic_to_shared(p + (lane >> 4) * 8);
	}
#pragma unroll
	for (int jp = 0; jp < 2; jp++)
	{
		const int	row = wn * 32 + jp * 16 + (lane & 7) + (lane >> 4) * 8;

		b_addr[jp] = (uint32_t) __cvta_generic_to_shared(ring + row * SLD + ((lane >> 3) & 1) * 8);
	}

	/* prologue: the query tile (QRES) and the first TC_STAGES - 1 stages */
	if (QRES)
		TcStageQueries(qtile, a.dp, tsm);
	cnext = a.c + (int64_t) tile0 * TC_BN * a.dp;
#pragma unroll
	for (int s = 0; s < TC_STAGES - 1; s++)
	{
		if (s < steps)
			TcIssueStage<QRES, BK>(ring + s * STAGE, qtile, cnext, knext, a.dp, src_off, dst_off);
		__pipeline_commit();
	}
	for (int s = 0, kchunk = 0, tile = tile0; s < steps; s++)
	{
		const int	slot = s % TC_STAGES;
		const uint32_t slot_bytes = (uint32_t) (slot * STAGE * sizeof(__half));
		const uint32_t a_koff = QRES ? (uint32_t) (kchunk * BK * sizeof(__half)) : slot_bytes;

		__pipeline_wait_prior(TC_STAGES - 2);
		/* stage s has landed; everyone is done with stage s - 1's slot */
		__syncthreads();
		if (s + TC_STAGES - 1 < steps)
			TcIssueStage<QRES, BK>(ring + ((s + TC_STAGES - 1) % TC_STAGES) * STAGE, qtile,
								   cnext, knext, a.dp, src_off, dst_off);
		__pipeline_commit();
		if (kchunk == 0)
			TcStep<true>(acc, a_addr, a_koff, b_addr, slot_bytes);
		else
			TcStep<false>(acc, a_addr, a_koff, b_addr, slot_bytes);
#pragma unroll
		for (int kk = 16; kk < BK; kk += 16)
			TcStep<false>(acc, a_addr, a_koff + kk * sizeof(__half), b_addr, slot_bytes + kk * sizeof(__half));

		if (++kchunk == kc)
		{
			/* the tile is done: test every pair, a row's minimum first */
			const int64_t c0 = (int64_t) tile * TC_BN + wn * 32;
			float		cw[4][2];

			kchunk = 0;
			tile++;
#pragma unroll
			for (int j = 0; j < 4; j++)
			{
				const float2 w = *(const float2 *) (a.cw + c0 + j * 8 + 2 * t);

				cw[j][0] = w.x;
				cw[j][1] = w.y;
			}
			TcTestFragments<M, 4, 4>(acc, cw, thr, alpha, q0 + wm * 64, c0, a.count, a.list);
		}
	}
}

/*
 * The filter for rows of DP = 16 or 32 padded dimensions, where a tile's
 * products are too few to hide the staging of the query tile: each warp
 * keeps the A fragments of its 64 queries in registers for the whole
 * sweep, so a block covers TC_REG_BM = 8 x 64 queries and its warps share
 * every candidate tile.  The ring holds whole candidate tiles (all DP
 * dimensions) with their weights; a warp takes a tile CPS candidates at a
 * time (32 at DP = 16; 16 at DP = 32, whose A fragments take twice the
 * registers).  FOLD: the products start from -cw / 2 (TcTestFolded).
 * Grid and padding as TcFilterKernel, with TC_REG_BM-query tiles.
 *
 * SYM (a self join, FOLD): each pair of rows is tested once for both
 * queries.  A block takes only the candidate tiles from its own rows on:
 * those of its own rows get the usual test; every later one also the
 * mirrored test (TcTestMirrored), its slot holding the candidates'
 * mirrored thresholds after their weights.  The products then start
 * from -(rw + cw / 2) and the rows' thresholds are -thr / 2 - rw.  Half
 * the products.
 */
template <OdpMetric M, int DP, bool FOLD, bool SYM>
static __global__ void __launch_bounds__(TC_THREADS, 2)
TcFilterRegKernel(const __grid_constant__ TcArgs a)
{
	extern __shared__ __align__(16) __half tsm[];
	constexpr int SLD = DP + 8;		/* conflict-free ldmatrix */
	constexpr int ROW_BYTES = TC_BN * SLD * (int) sizeof(__half);
	constexpr int SLOT_BYTES = ROW_BYTES + (SYM ? 2 : 1) * TC_BN * (int) sizeof(float);
	constexpr int COPIES = TC_BN * DP / 8 / TC_THREADS;
	constexpr int KS = DP / 16;
	constexpr int CPS = DP == 16 ? 32 : 16;	/* candidates per step */
	constexpr int NJ = CPS / 8;
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int	g = lane >> 2;
	const int	t = lane & 3;
	const int64_t qw = (int64_t) blockIdx.x * TC_REG_BM + warp * 64;
	/* SYM: the first candidate tile of the block's own rows */
	const int	diag = (int) blockIdx.x * (TC_REG_BM / TC_BN);
	const int	group_tile0 = (int) ((a.group0 + blockIdx.y) * a.tiles);
	const int	tile0 = SYM ? max(group_tile0, diag) : group_tile0;
	const int	tiles = min(a.tiles - (tile0 - group_tile0), a.ctiles - tile0);
	const int64_t cbase = (int64_t) tile0 * TC_BN;
	char	   *ring = (char *) tsm;
	const uint32_t ring_addr = (uint32_t) __cvta_generic_to_shared(ring);
	uint32_t	af[4][KS][4];
	uint32_t	b_off[NJ / 2];
	float		thr[4][2];
	float		alpha[4][2];
	float		rw[4][2];

	if (SYM && tiles <= 0)
		return;					/* the whole block: all its tiles precede its rows */
	TcLoadLimits<M>(a, qw, thr, alpha);
	if (SYM)
#pragma unroll
		for (int i = 0; i < 4; i++)
#pragma unroll
			for (int h = 0; h < 2; h++)
				rw[i][h] = a.rw[qw + i * 16 + g + h * 8];
	if (FOLD)
#pragma unroll
		for (int i = 0; i < 4; i++)
#pragma unroll
			for (int h = 0; h < 2; h++)
			{
				thr[i][h] *= -0.5f;
				if (SYM)
					thr[i][h] = __fsub_rn(thr[i][h], rw[i][h]);
			}
#pragma unroll
	for (int i = 0; i < 4; i++)
	{
#pragma unroll
		for (int kk = 0; kk < KS; kk++)
		{
			const __half *r0 = a.q + (qw + i * 16 + g) * DP + kk * 16 + 2 * t;
			const __half *r1 = r0 + 8 * DP;

			af[i][kk][0] = *(const uint32_t *) r0;
			af[i][kk][1] = *(const uint32_t *) r1;
			af[i][kk][2] = *(const uint32_t *) (r0 + 8);
			af[i][kk][3] = *(const uint32_t *) (r1 + 8);
		}
	}
	/* this lane's ldmatrix row of 16 candidates jp, relative to a slot */
#pragma unroll
	for (int jp = 0; jp < NJ / 2; jp++)
		b_off[jp] = (uint32_t) (((jp * 16 + (lane & 7) + (lane >> 4) * 8) * SLD +
								 ((lane >> 3) & 1) * 8) * sizeof(__half));

#define TC_REG_ISSUE(s_) \
	do { \
		char	   *slot_ = ring + ((s_) % TC_STAGES) * SLOT_BYTES; \
		const int64_t first_ = cbase + (int64_t) (s_) * TC_BN; \
\
		for (int u_ = 0; u_ < COPIES; u_++) \
		{ \
			const int	x_ = threadIdx.x + u_ * TC_THREADS; \
\
			__pipeline_memcpy_async((__half *) slot_ + (x_ / (DP / 8)) * SLD + (x_ % (DP / 8)) * 8, \
									a.c + (first_ + x_ / (DP / 8)) * DP + (x_ % (DP / 8)) * 8, 16); \
		} \
		if (threadIdx.x < TC_BN / 4) \
			__pipeline_memcpy_async(slot_ + ROW_BYTES + threadIdx.x * 16, \
									a.cw + first_ + threadIdx.x * 4, 16); \
		else if (SYM && threadIdx.x < TC_BN / 2) \
			__pipeline_memcpy_async(slot_ + ROW_BYTES + threadIdx.x * 16, \
									a.cv + first_ + (threadIdx.x - TC_BN / 4) * 4, 16); \
	} while (0)

#pragma unroll
	for (int s = 0; s < TC_STAGES - 1; s++)
	{
		if (s < tiles)
			TC_REG_ISSUE(s);
		__pipeline_commit();
	}
	for (int s = 0; s < tiles; s++)
	{
		const int	slot = s % TC_STAGES;
		const uint32_t rows = ring_addr + slot * SLOT_BYTES;
		const float *w = (const float *) (ring + slot * SLOT_BYTES + ROW_BYTES);

		__pipeline_wait_prior(TC_STAGES - 2);
		/* tile s has landed; everyone is done with tile s - 1's slot */
		__syncthreads();
		if (s + TC_STAGES - 1 < tiles)
			TC_REG_ISSUE(s + TC_STAGES - 1);
		__pipeline_commit();
#pragma unroll 1
		for (int sc = 0; sc < TC_BN / CPS; sc++)
		{
			float		acc[4][NJ][4];
			float		cw[NJ][2];

#pragma unroll
			for (int j = 0; j < NJ; j++)
			{
				const float2 v = *(const float2 *) (w + sc * CPS + j * 8 + 2 * t);

				cw[j][0] = v.x;
				cw[j][1] = v.y;
			}
			if (SYM)
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < NJ; j++)
#pragma unroll
						for (int h = 0; h < 2; h++)
#pragma unroll
							for (int e = 0; e < 2; e++)
								acc[i][j][h * 2 + e] = __fsub_rn(-0.5f * cw[j][e], rw[i][h]);
			else if (FOLD)
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < NJ; j++)
					{
						acc[i][j][0] = acc[i][j][2] = -0.5f * cw[j][0];
						acc[i][j][1] = acc[i][j][3] = -0.5f * cw[j][1];
					}
#pragma unroll
			for (int kk = 0; kk < KS; kk++)
			{
				uint32_t	bf[NJ / 2][4];

#pragma unroll
				for (int jp = 0; jp < NJ / 2; jp++)
					TcLdm4(bf[jp], rows + b_off[jp] + (uint32_t) ((sc * CPS * SLD + kk * 16) * sizeof(__half)));
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < NJ; j++)
					{
						if (kk == 0 && !FOLD)
							TcMma<true>(acc[i][j], af[i][kk], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
						else
							TcMma<false>(acc[i][j], af[i][kk], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
					}
			}
			if (FOLD)
				TcTestFolded<4, NJ>(acc, thr, qw, cbase + (int64_t) s * TC_BN + sc * CPS,
								 a.count, a.list);
			else
				TcTestFragments<M, 4, NJ>(acc, cw, thr, alpha, qw, cbase + (int64_t) s * TC_BN + sc * CPS,
									   a.count, a.list);
			if (SYM && tile0 + s >= diag + TC_REG_BM / TC_BN)
				TcTestMirrored<NJ>(acc, w + TC_BN + sc * CPS, qw,
								   cbase + (int64_t) s * TC_BN + sc * CPS, a.count, a.list);
		}
	}
#undef TC_REG_ISSUE
}

/*
 * Issues stage p of a TcFilterWgKernel block (candidate tile tile0 +
 * p / kc, dimensions (p % kc) BK ..) into its slot p % S: one bulk copy
 * of the stage (laid out by TcHalfIndex, 128 x BK) and, with the tile's
 * first stage (FOLD) or last, one of the tile's weights.
 */
template <int BK, bool FOLD>
static __device__ __forceinline__ void
TcWgIssue(const TcArgs &a, int tile0, int kc, int p, int S, uint32_t ring,
		  uint32_t weights, uint32_t full)
{
	const uint32_t bytes = TC_BN * BK * sizeof(__half);
	const int	tile = tile0 + p / kc;
	const int	k = p % kc;
	const int	slot = p % S;
	const bool	with_w = FOLD ? k == 0 : k == kc - 1;

	OdpMbarArrive(full + 8 * slot, bytes + (with_w ? TC_BN * sizeof(float) : 0));
	OdpBulkCopy(ring + slot * bytes, a.c + ((int64_t) tile * kc + k) * TC_BN * BK, bytes,
				full + 8 * slot);
	if (with_w)
		OdpBulkCopy(weights + slot * TC_BN * sizeof(float), a.cw + (int64_t) tile * TC_BN,
					TC_BN * sizeof(float), full + 8 * slot);
}

/*
 * The filter on Hopper's warpgroup products (sm_90a: run only where
 * TcWgmmaUsable).  Grid and arguments as TcFilterKernel, with tiles of
 * TC_WG_BM = 256 queries: four warpgroups of 64 queries share each
 * candidate tile, and warp w tests queries w * 16 .. + 16 against all 128
 * candidates (OdpWgMma64x128's layout).
 *
 * Why: TcFilterKernel's 128-query tiles were bound by the copies of
 * candidates into shared memory (H100, 2026-11-27, 1e4 x 1e6 x 128: 8.7
 * ms; without the copies 4.8).  Here twice the queries share a copy, and
 * the copies are bulk copies of whole stages by the copy unit: the host
 * writes both half copies in the operands' order (TcHalfIndex), the
 * query tile in one block, a candidate tile in stages of BK dimensions.
 * Measured in one run: 6.0 ms against 8.7 (the batch above).  A tile's
 * test stalls its warpgroup's products: testing one half of the tile
 * while the other's products run makes ptxas serialise every product
 * (C7514: accumulators read while any product is in flight), so that
 * overlap would take warpgroups that take turns (a ping-pong of
 * producer-fed consumers), not one warpgroup's two halves.
 *
 * Pipeline: a ring of S slots, each with a barrier "full" (the copy has
 * landed) and "empty" (all 16 warps are done with it).  Thread 0 issues
 * stage s + S - 2 before the block's products of stage s, once every warp
 * has released stage s - 2; a warpgroup releases a stage when its
 * products are known complete (one group left in flight), a tile's last
 * stage after the tile's test.  No block-wide barrier after the start.
 *
 * FOLD (all metrics but the inner product): the products start from
 * -cw / 2, read from the tile's first stage, and the test is one maximum
 * per pair (as TcTestFolded's); the inner product reads the weights from
 * the last stage for TcTestFragments' test.  Passers go to the warp's
 * buffer (TcWgTest), flushed before it would overflow and at the end.
 */
template <OdpMetric M, int BK, int S>
static __global__ void __launch_bounds__(TC_WG_THREADS, 1)
TcFilterWgKernel(const __grid_constant__ TcArgs a)
{
	constexpr bool FOLD = M != ODP_METRIC_INNER_PRODUCT;
	constexpr uint32_t SLOT = TC_BN * BK * sizeof(__half);
	extern __shared__ __align__(128) unsigned char wsm[];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int	g = lane >> 2;
	const int	t = lane & 3;
	const int64_t q0 = (int64_t) blockIdx.x * TC_WG_BM;
	const int64_t qw = q0 + warp * 16;
	const int	tile0 = (int) ((a.group0 + blockIdx.y) * a.tiles);
	const int	tiles = min(a.tiles, a.ctiles - tile0);
	const int	kc = a.dp / BK;
	const int	steps = tiles * kc;
	const uint32_t qbytes = (uint32_t) (TC_WG_BM * a.dp * sizeof(__half));
	const uint32_t base = (uint32_t) __cvta_generic_to_shared(wsm);
	const uint32_t ring = base + qbytes;
	const uint32_t weights = ring + S * SLOT;
	const uint32_t full = weights + S * TC_BN * sizeof(float);
	const uint32_t empty = full + 8 * S;
	const uint32_t qbar = empty + 8 * S;
	/* this warp's deferred appends: after the barriers (8-byte aligned) */
	uint32_t   *bufs = (uint32_t *) (wsm + (qbar + 8 - base));
	const TcWarpBuf wb = {bufs + warp * TC_WG_BUF,
						  (int *) (bufs + TC_WG_THREADS / 32 * TC_WG_BUF) + warp,
						  (unsigned *) (bufs + TC_WG_THREADS / 32 * (TC_WG_BUF + 1)) + warp,
						  qw, (int64_t) tile0 * TC_BN};
	/* this warpgroup's 64 query rows: row groups of dp / 8 core matrices */
	const uint32_t qdesc = base + (warp >> 2) * 8 * (a.dp * 16);
	const float *wts = (const float *) (wsm + qbytes + S * SLOT);	/* at weights */
	float		acc[1][16][4];
	float		thr[1][2];
	float		alpha[1][2];

#pragma unroll
	for (int h = 0; h < 2; h++)
	{
		thr[0][h] = a.thr[qw + g + h * 8];
		alpha[0][h] = M == ODP_METRIC_INNER_PRODUCT ? a.alpha[qw + g + h * 8] : 0.0f;
		if (FOLD)
			thr[0][h] *= -0.5f;
	}
	if (lane == 0)
	{
		*wb.n = 0;
		*wb.over = 0;
	}
	if (threadIdx.x == 0)
	{
		OdpMbarInit(full, S, 1);
		OdpMbarInit(empty, S, TC_WG_THREADS / 32);
		OdpMbarInit(qbar, 1, 1);
		OdpMbarInitFence();
	}
	__syncthreads();
	if (threadIdx.x == 0)
	{
		OdpMbarArrive(qbar, qbytes);
		OdpBulkCopy(base, a.q + q0 * a.dp, qbytes, qbar);
		for (int p = 0; p < S - 2 && p < steps; p++)
			TcWgIssue<BK, FOLD>(a, tile0, kc, p, S, ring, weights, full);
	}
	__syncwarp();
	OdpMbarWait(qbar, 0);
	for (int tile = tile0, s = 0; tile < tile0 + tiles; tile++)
	{
		const int	s_last = s + kc - 1;	/* the tile's last stage */

		/*
		 * FOLD: the weights come with the tile's first stage.  Read here,
		 * where no product is in flight (inside the stage loop the
		 * compiler would serialise the products on the write).
		 */
		if (FOLD)
		{
			const float *w = wts + (s % S) * TC_BN;

			OdpMbarWait(full + 8 * (s % S), (s / S) & 1);
#pragma unroll
			for (int j = 0; j < 16; j++)
			{
				const float2 v = *(const float2 *) (w + j * 8 + 2 * t);

				acc[0][j][0] = acc[0][j][2] = -0.5f * v.x;
				acc[0][j][1] = acc[0][j][3] = -0.5f * v.y;
			}
		}
		for (int kchunk = 0; kchunk < kc; kchunk++, s++)
		{
			const int	slot = s % S;

			if (threadIdx.x == 0 && s + S - 2 < steps)
			{
				const int	p = s + S - 2;

				/* its slot's previous stage, p - S, is released by every warp */
				if (p >= S)
					OdpMbarWait(empty + 8 * (p % S), (p / S - 1) & 1);
				TcWgIssue<BK, FOLD>(a, tile0, kc, p, S, ring, weights, full);
			}
			__syncwarp();
			OdpMbarWait(full + 8 * slot, (s / S) & 1);
			OdpWgFence();
#pragma unroll
			for (int kk = 0; kk < BK; kk += 16)
				OdpWgMma64x128(acc[0], OdpWgDesc(qdesc + (kchunk * BK + kk) / 8 * 128, a.dp * 16),
							   OdpWgDesc(ring + slot * SLOT + kk / 8 * 128, BK * 16),
							   FOLD || kchunk > 0 || kk > 0);
			if (kchunk < kc - 1)
			{
				/* stage s - 1's products are complete */
				OdpWgCommitWait<1>();
				if (kchunk > 0 && lane == 0)
					OdpMbarArrive(empty + 8 * ((s - 1) % S), 0);
			}
		}
		OdpWgCommitWait<0>();
		if (kc > 1 && lane == 0)
			OdpMbarArrive(empty + 8 * ((s_last - 1) % S), 0);
		{
			const float *w = wts + (s_last % S) * TC_BN;
			float		cw[16][2];

			if (!FOLD)
#pragma unroll
				for (int j = 0; j < 16; j++)
				{
					const float2 v = *(const float2 *) (w + j * 8 + 2 * t);

					cw[j][0] = v.x;
					cw[j][1] = v.y;
				}
			TcWgTest<M, FOLD>(acc, cw, thr, alpha, (int64_t) tile * TC_BN, wb, a.count, a.list);
		}
		__syncwarp();
		if (lane == 0)
			OdpMbarArrive(empty + 8 * (s_last % S), 0);
	}
	TcWgFlush(wb, a.count, a.list, thr, FOLD ? INFINITY : -INFINITY);
}

/* Shared memory of TcFilterWgKernel<M, BK, S> for dp padded dimensions. */
static size_t
TcWgSharedBytes(int dp, int bk, int slots)
{
	return (size_t) TC_WG_BM * dp * sizeof(__half) +
		(size_t) slots * (TC_BN * bk * sizeof(__half) + TC_BN * sizeof(float)) +
		(size_t) 8 * (2 * slots + 1) +
		(size_t) TC_WG_THREADS / 32 * (TC_WG_BUF + 2) * sizeof(uint32_t);
}

/* Whether the code this device runs has the sm_90a kernels: see TcWgmmaUsable. */
static __device__ int tc_wgmma_probe;

static __global__ void
TcWgmmaProbeKernel(void)
{
	tc_wgmma_probe = ODP_GPU_HAVE_WGMMA;
}

/* Arguments of the refine kernel. */
struct TcRefineArgs
{
	const float *q;				/* original query rows (device) */
	const float *qn;			/* cosine norms, else NULL */
	const float *c;
	const float *cn;
	int64_t		q_base;			/* global index of query 0 of this chunk */
	int64_t		q_first;		/* chunk offset into q and the state */
	int64_t		c_base;
	int64_t		nq;				/* queries in the chunk */
	int			dims;
	int			k;
	int			exclude_self;
	const int32_t *count;
	const int32_t *list;
	float	   *sd;				/* state rows of the chunk */
	int64_t    *si;
	int32_t    *sn;
	int		   *overflow;		/* counts the queries whose list overflowed */
	int32_t    *over;			/* and lists them (chunk-local), in no order */
	int		   *bad;			/* set when fewer than k remain */
};

/* Whether local candidate c is query ql of the chunk itself, left out. */
static __device__ __forceinline__ bool
TcIsSelf(const TcRefineArgs &a, int64_t ql, int64_t c)
{
	return a.exclude_self && a.c_base + c == a.q_base + ql;
}

/*
 * Key of the canonical distance from query ql of the chunk (row qrow,
 * norm qn) to local candidate c; TC_KEY_NONE for the query itself.
 */
template <OdpMetric M>
static __device__ __forceinline__ uint32_t
TcCandKey(const TcRefineArgs &a, int64_t ql, const float *qrow, float qn, int64_t c)
{
	if (TcIsSelf(a, ql, c))
		return TC_KEY_NONE;
	return TcKeyOf(odp_distance(M, qrow, a.c + c * a.dims, a.dims, qn,
								M == ODP_METRIC_COSINE ? a.cn[c] : 1.0f));
}

/*
 * Keys of the canonical distances from query ql (row qrow, norm qn) to
 * the n listed candidates, into rk; returns how many take part (every
 * lane gets it).  32 entries at a time, a 32-dimension slice at a time:
 * the warp reads the slice of each entry's row together (one line per
 * row, where a lane per entry touches 32 lines at each load, which made
 * the refinement wait on the L1 for three quarters of its time at 32
 * dimensions), each lane leaves its terms (odp_dist_term) in terms, and
 * each lane then adds its own entry's terms in index order: the
 * canonical distance, bit for bit.  The dimensions past the last whole
 * slice (all of them in rows of fewer than 32) each lane reads from its
 * own entry's row: spread over the lanes too they cost more, one load
 * in flight per lane where a lane's own row has them all (H100,
 * 2026-11-27, same samples: 1e6 x 10 all-kNN 370-374 ms against
 * 343-349; 1e6 x 16, k = 30: 510 against 461-465).
 */
#define TC_REFINE_BATCH	32		/* rows whose slices a lane loads at once */

template <OdpMetric M>
static __device__ __forceinline__ int
TcListKeys(const TcRefineArgs &a, int64_t ql, const float *qrow, float qn,
		   const int32_t *list, int n, uint32_t *rk, float (*terms)[33])
{
	const int	lane = threadIdx.x & 31;
	const int	dims = a.dims;
	const int	whole = dims / 32 * 32;	/* dimensions in whole slices */
	int			valid = 0;

	for (int e0 = 0; e0 < n; e0 += 32)
	{
		const int	m = n - e0 < 32 ? n - e0 : 32;
		const int32_t mine = lane < m ? list[e0 + lane] : 0;
		float		acc = 0.0f;

		for (int b = 0; b < whole; b += 32)
		{
			const float qv = qrow[b + lane];

			for (int i0 = 0; i0 < m; i0 += TC_REFINE_BATCH)
			{
				float		v[TC_REFINE_BATCH];

#pragma unroll
				for (int u = 0; u < TC_REFINE_BATCH; u++)
				{
					const int32_t c = __shfl_sync(0xffffffffu, mine, (i0 + u) & 31);

					v[u] = i0 + u < m ? __ldg(a.c + (int64_t) c * dims + b + lane) : 0.0f;
				}
#pragma unroll
				for (int u = 0; u < TC_REFINE_BATCH; u++)
					if (i0 + u < m)
						terms[i0 + u][lane] = odp_dist_term(M, qv, v[u]);
			}
			__syncwarp();
			if (lane < m)
				for (int j = 0; j < 32; j++)
					acc = odp_dist_add(M, acc, terms[lane][j]);
			__syncwarp();
		}
		if (lane < m)
		{
			const float *crow = a.c + (int64_t) mine * dims;
			uint32_t	key = TC_KEY_NONE;

			for (int d = whole; d < dims; d++)
				acc = odp_dist_step(M, acc, qrow[d], crow[d]);
			if (!TcIsSelf(a, ql, mine))
				key = TcKeyOf(odp_dist_finish(M, acc, qn, M == ODP_METRIC_COSINE ? a.cn[mine] : 1.0f));
			rk[e0 + lane] = key;
			valid += key != TC_KEY_NONE;
		}
	}
	return (int) __reduce_add_sync(0xffffffffu, (unsigned) valid);
}

/* How many of the warp's n keys in rk lie below t (every lane gets it). */
static __device__ __forceinline__ int
TcCountBelow(const uint32_t *rk, int n, uint32_t t)
{
	int			c = 0;

	for (int e = threadIdx.x & 31; e < n; e += 32)
		c += rk[e] < t;
	return (int) __reduce_add_sync(0xffffffffu, (unsigned) c);
}

/*
 * One warp per query: the canonical distance of every listed candidate
 * (as a key, in shared memory), then the k smallest by (distance, index)
 * without sorting the list: the k-th smallest key x by a bitwise search
 * (largest x with fewer than k keys below it), and, when more keys equal
 * x than are needed, the largest local index y to take among them, the
 * same way.  The k chosen entries are then ranked among themselves.
 * Local indexes order like global ones (c_base + local).
 */
template <OdpMetric M>
static __global__ void __launch_bounds__(TC_REFINE_WARPS * 32)
TcRefineKernel(const __grid_constant__ TcRefineArgs a)
{
	__shared__ uint32_t keys[TC_REFINE_WARPS][TC_CAP];
	__shared__ uint32_t sel_key[TC_REFINE_WARPS][TC_REFINE_SEL];
	__shared__ int32_t sel_idx[TC_REFINE_WARPS][TC_REFINE_SEL];
	__shared__ float terms[TC_REFINE_WARPS][32][33];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int64_t ql = (int64_t) blockIdx.x * TC_REFINE_WARPS + warp;
	const int64_t q = a.q_first + ql;
	uint32_t   *rk = keys[warp];
	const int32_t *list;
	const float *qrow;
	float		qn = 1.0f;
	int			n,
				valid,
				kk,
				below,
				equal,
				base = 0;
	uint32_t	x = 0;
	int32_t		y = INT32_MAX;

	if (ql >= a.nq)
		return;
	n = a.count[ql];
	if (n > TC_CAP)
	{
		if (lane == 0)
			a.over[atomicAdd(a.overflow, 1)] = (int32_t) ql;
		return;
	}
	list = a.list + ql * TC_CAP;
	qrow = a.q + q * a.dims;
	if (M == ODP_METRIC_COSINE)
		qn = a.qn[q];
	valid = TcListKeys<M>(a, ql, qrow, qn, list, n, rk, terms[warp]);
	__syncwarp();
	kk = valid < a.k ? valid : a.k;
	if (kk > 0)
	{
		/* x: the kk-th smallest key */
		for (int b = 31; b >= 0; b--)
		{
			const uint32_t t = x | (1u << b);

			if (TcCountBelow(rk, n, t) < kk)
				x = t;
		}
		below = TcCountBelow(rk, n, x);
		equal = TcCountBelow(rk, n, x + 1) - below;
		/* ties at x beyond what is needed: y, the largest local index taken */
		if (equal > kk - below)
		{
			y = 0;
			for (int b = 30; b >= 0; b--)
			{
				const int32_t t = y | (1 << b);
				int			cnt = 0;

				for (int e = lane; e < n; e += 32)
					cnt += rk[e] == x && list[e] < t;
				if ((int) __reduce_add_sync(0xffffffffu, (unsigned) cnt) < kk - below)
					y = t;
			}
		}
		/* gather the kk chosen entries, in list order */
		for (int e0 = 0; e0 < n; e0 += 32)
		{
			const int	e = e0 + lane;
			bool		take = false;
			int32_t		c = 0;
			unsigned	mask;

			if (e < n && rk[e] <= x)
			{
				c = list[e];
				take = rk[e] < x || c <= y;
			}
			mask = __ballot_sync(0xffffffffu, take);
			if (take)
			{
				const int	pos = base + __popc(mask & ((1u << lane) - 1u));

				sel_key[warp][pos] = rk[e];
				sel_idx[warp][pos] = c;
			}
			base += __popc(mask);
		}
		__syncwarp();
		/* each chosen entry's rank among the chosen */
		for (int s = lane; s < kk; s += 32)
		{
			const uint32_t key = sel_key[warp][s];
			const int32_t c = sel_idx[warp][s];
			int			r = 0;

			for (int j = 0; j < kk; j++)
			{
				const uint32_t ok = sel_key[warp][j];

				r += ok < key || (ok == key && sel_idx[warp][j] < c);
			}
			a.sd[q * a.k + r] = TcFloatOf(key);
			a.si[q * a.k + r] = a.c_base + c;
		}
	}
	if (lane == 0)
	{
		a.sn[q] = kk;
		if (kk < a.k || base != kk)
			atomicExch(a.bad, 1);
	}
}

/*
 * The queries whose list overflowed (more than TC_CAP candidates passed
 * the filter: many equal distances, as with many copies of a row), one
 * block per query over[blockIdx.x]: each warp scans a slice of the
 * candidates' canonical distances and keeps its k smallest (key, local
 * index) pairs sorted in shared memory (insertions are rare once its list
 * is full); then each kept pair's rank among all the warps' (keys are
 * unique) places the k smallest.
 */
template <OdpMetric M>
static __global__ void __launch_bounds__(TC_SCAN_WARPS * 32)
TcScanKernel(const __grid_constant__ TcRefineArgs a, const int32_t *over, int64_t nc)
{
	__shared__ uint64_t best[TC_SCAN_WARPS][TC_REFINE_SEL];
	__shared__ int kept[TC_SCAN_WARPS];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int64_t ql = over[blockIdx.x];
	const int64_t q = a.q_first + ql;
	const int64_t slice = (nc + 32 * TC_SCAN_WARPS - 1) / (32 * TC_SCAN_WARPS) * 32;
	const int64_t c_end = min(nc, (warp + 1) * slice);
	uint64_t   *b = best[warp];
	uint64_t	worst = UINT64_MAX;	/* the k-th key once k are kept */
	int			have = 0;
	int			total = 0;
	const float *qrow = a.q + q * a.dims;
	const float qn = M == ODP_METRIC_COSINE ? a.qn[q] : 1.0f;

	for (int64_t c0 = warp * slice; c0 < c_end; c0 += 32)
	{
		const int64_t c = c0 + lane;
		uint64_t	key = UINT64_MAX;
		unsigned	pass;

		if (c < c_end)
		{
			const uint32_t dk = TcCandKey<M>(a, ql, qrow, qn, c);

			if (dk != TC_KEY_NONE)
				key = ((uint64_t) dk << 32) | (uint64_t) c;
		}
		pass = __ballot_sync(0xffffffffu, key < worst);
		while (pass != 0)
		{
			const uint64_t nk = __shfl_sync(0xffffffffu, key, __ffs(pass) - 1);
			const int	last = have < a.k ? have : a.k - 1;
			uint64_t	moved[(TC_REFINE_SEL + 31) / 32];
			int			pos = 0;

			pass &= pass - 1;
			if (nk >= worst)
				continue;
			for (int e = lane; e < have; e += 32)
				pos += b[e] < nk;
			pos = (int) __reduce_add_sync(0xffffffffu, (unsigned) pos);
			/* entries pos .. last - 1 move up one place; the k-th drops out */
#pragma unroll
			for (int r = 0; r < (TC_REFINE_SEL + 31) / 32; r++)
				if (pos + lane + 32 * r < last)
					moved[r] = b[pos + lane + 32 * r];
			__syncwarp();
#pragma unroll
			for (int r = 0; r < (TC_REFINE_SEL + 31) / 32; r++)
				if (pos + lane + 32 * r < last)
					b[pos + lane + 32 * r + 1] = moved[r];
			if (lane == 0)
				b[pos] = nk;
			__syncwarp();
			if (have < a.k)
				have++;
			if (have == a.k)
				worst = b[a.k - 1];
		}
	}
	if (lane == 0)
		kept[warp] = have;
	__syncthreads();
	for (int w = 0; w < TC_SCAN_WARPS; w++)
		total += kept[w];
	for (int t = threadIdx.x; t < TC_SCAN_WARPS * TC_REFINE_SEL; t += blockDim.x)
	{
		const int	w = t / TC_REFINE_SEL;
		const int	e = t - w * TC_REFINE_SEL;
		uint64_t	key;
		int			rank = e;

		if (e >= kept[w])
			continue;
		key = best[w][e];
		for (int v = 0; v < TC_SCAN_WARPS; v++)
		{
			int			lo = 0,
						hi = kept[v];

			if (v == w)
				continue;
			while (lo < hi)
			{
				const int	mid = (lo + hi) >> 1;

				if (best[v][mid] < key)
					lo = mid + 1;
				else
					hi = mid;
			}
			rank += lo;
		}
		if (rank < a.k)
		{
			a.sd[q * a.k + rank] = TcFloatOf((uint32_t) (key >> 32));
			a.si[q * a.k + rank] = a.c_base + (int64_t) (key & 0xffffffffu);
		}
	}
	if (threadIdx.x == 0)
	{
		a.sn[q] = total < a.k ? total : a.k;
		if (total < a.k)
			atomicExch(a.bad, 1);
	}
}

/* See knn_gpu_tc.cuh. */
bool
OdpKnnTcEligible(const OdpKnnProblem *p, int32_t k)
{
	if (p->metric != ODP_METRIC_EUCLIDEAN && p->metric != ODP_METRIC_SQEUCLIDEAN &&
		p->metric != ODP_METRIC_COSINE && p->metric != ODP_METRIC_INNER_PRODUCT)
		return false;
	return k <= TC_MAX_K && p->nc >= TC_MIN_CANDS && p->nq >= TC_MIN_QUERIES &&
		p->dims >= 4 &&
		p->cand_bound == NULL && p->cand_split == 0 && !p->ascending_candidates;
}

/*
 * Sample size for ks sample neighbours: lists expected an eighth full.
 * Measured on the H100, 1e6 x 32 all-kNN k = 10 (per 262,144 queries:
 * thresholds, filter, refine): a quarter full 20, 100, 21 ms; an eighth
 * 27, 88, 10 ms (fewer appends, half the exact distances); a twelfth
 * 34, 84, 7 ms.  Batch 1e4 x 1e6 x 128: 18.8 ms against 16.1.  The
 * symmetric filter (sym), whose appends scatter over every list, gains
 * from lists an eleventh full at k = 10 (2026-11-27, all 1e6 queries at
 * once: thresholds 105-108, filter 247, refine 19.7 ms against 90-91,
 * 262 and 24.7); a sample grows with k and its savings do not, so from
 * 16 sample neighbours on the eighth stays.
 */
static int64_t
TcSampleSize(int64_t nc, int ks, bool sym)
{
	int64_t		s = (int64_t) (sym && ks < 16 ? 11 : 8) * ks * nc / TC_CAP;

#ifdef ODP_TC_TRACE
	if (getenv("ODP_TC_SAMPLE"))	/* benchmark builds: times the default */
		s = (int64_t) (atof(getenv("ODP_TC_SAMPLE")) * (double) s);
#endif
	if (s < 4096)
		s = 4096;
	return s < nc ? s : nc;
}

/*
 * The register-resident filter for dp: the euclidean metrics and cosine
 * fold their weights into the products (at 16 and 32 padded dimensions);
 * the inner product, whose weight has a per-query factor, runs it at 16
 * only and keeps TcFilterKernel at 32 (the register-resident filter was
 * measured there with the fold alone).  NULL: TcFilterKernel.
 */
typedef void (*TcFilterFn) (const TcArgs);

/*
 * Whether dev runs TcFilterWgKernel: a device of compute capability 9.0
 * (H100, H200) whose code from this build is sm_90a's; a build without it
 * runs its compute_90 code there, which lacks the warpgroup instructions.
 * Probed once per device and process.
 */
#define TC_WGMMA_DEVICES 64
static int	tc_wgmma_known[TC_WGMMA_DEVICES];	/* 0 unknown, 1 no, 2 yes */

static bool
TcWgmmaUsable(const OdpGpuDevice *dev, cudaStream_t stream)
{
	const bool	cached = dev->id >= 0 && dev->id < TC_WGMMA_DEVICES;
	int			known = 0,
				have = 0;

	if (dev->cc_major != 9 || dev->cc_minor != 0)
		return false;
	if (cached && (known = __atomic_load_n(&tc_wgmma_known[dev->id], __ATOMIC_RELAXED)) != 0)
		return known == 2;
	TcWgmmaProbeKernel<<<1, 1, 0, stream>>>();
	if (cudaGetLastError() != cudaSuccess ||
		cudaMemcpyFromSymbolAsync(&have, tc_wgmma_probe, sizeof(int), 0,
								  cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
		cudaStreamSynchronize(stream) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;			/* the tile filter runs */
	}
	if (cached)
		__atomic_store_n(&tc_wgmma_known[dev->id], have == 1 ? 2 : 1, __ATOMIC_RELAXED);
	return have == 1;
}

template <OdpMetric M>
static TcFilterFn
TcRegFilter(int dp, bool sym)
{
	constexpr bool FOLD = M != ODP_METRIC_INNER_PRODUCT;
	constexpr int DP_MAX = FOLD ? 32 : 16;

	if (sym && FOLD)
		return dp == 16 ? TcFilterRegKernel<M, 16, FOLD, FOLD> :
			(dp == 32 ? TcFilterRegKernel<M, 32, FOLD, FOLD> : NULL);
	if (dp == 16)
		return TcFilterRegKernel<M, 16, FOLD, false>;
	return dp == DP_MAX ? TcFilterRegKernel<M, DP_MAX, FOLD, false> : NULL;
}

/*
 * Whether the caller's self join gets the symmetric filter (SYM of
 * TcFilterRegKernel): one pass over the pairs of rows i < j instead of
 * two, for the metrics whose weights fold into the products and rows
 * the register-resident filter takes.  Every query's list is then held
 * at once, so only where they take at most half of the memory left; and
 * not where the search may give up, whose probe is one small chunk.
 */
template <OdpMetric M>
static bool
TcSymmetric(const OdpKnnProblem *p, const OdpGpuArena *arena, int dp, int depth)
{
	const size_t lists = (size_t) p->nq * (TC_CAP + 4) * sizeof(int32_t);
	const size_t left = arena->budget > arena->used ? arena->budget - arena->used : 0;

#ifdef ODP_TC_TRACE
	if (getenv("ODP_TC_SYM") && strcmp(getenv("ODP_TC_SYM"), "0") == 0)
		return false;			/* benchmark builds compare with the chunked filter */
#endif
	return M != ODP_METRIC_INNER_PRODUCT && (dp == 16 || dp == 32) && depth == 0 &&
		p->exclude_self && p->queries == p->cands && p->query_base == p->cand_base &&
		p->nq == p->nc && p->tc_max_overflow <= 0.0 &&
		(arena->budget == 0 || lists <= left / 2);
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

/*
 * Phase timings and list fill on stderr, for benchmark builds
 * (-DODP_TC_TRACE): each mark waits for the stream.
 */
#ifdef ODP_TC_TRACE
#include <stdio.h>
#include <stdlib.h>
#define TC_MARK(name) \
	do { \
		double		now_; \
		(void) cudaStreamSynchronize(stream); \
		now_ = odp_now_ms(); \
		fprintf(stderr, "tc%s: %-10s %8.2f ms\n", depth > 0 ? " (sample)" : "", (name), now_ - trace_t); \
		trace_t = now_; \
	} while (0)
#else
#define TC_MARK(name) ((void) 0)
#endif

/*
 * The launches of one metric; see OdpKnnTcSearch.  depth 0 is the
 * caller's problem; at depth 1 it finds the thresholds of depth 0 (the
 * sample's k nearest), itself from a smaller sample through the SIMT
 * primitive.
 */
template <OdpMetric M>
static OdpStatus
TcSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
		 const OdpKnnProblem *p, OdpKnnState *state, OdpGpuArena *arena,
		 bool *done, bool *gave_up, int depth)
{
	OdpStatus	status = ODP_OK;
	const bool	euclid = (M == ODP_METRIC_EUCLIDEAN || M == ODP_METRIC_SQEUCLIDEAN);
	const int	dims = p->dims;
	/* rows of up to 16 dimensions take one k-step of the products */
	const int	dp = dims <= 16 ? 16 : (dims + TC_BK - 1) / TC_BK * TC_BK;
	const bool	sym = TcSymmetric<M>(p, arena, dp, depth);
	/* benchmark builds compare with the tile filter: ODP_TC_FILTER=old */
	const TcFilterFn reg_filter =
#ifdef ODP_TC_TRACE
		getenv("ODP_TC_FILTER") && strcmp(getenv("ODP_TC_FILTER"), "old") == 0 && dp > 16 && !sym ? NULL :
#endif
		TcRegFilter<M>(dp, sym);
	const bool	reg = reg_filter != NULL;
	const bool	qres = dp <= TC_QRES_MAX;
	/* the warpgroup filter: stages of 64 dimensions where they divide dp */
	const int	wbk = dp % 64 == 0 ? 64 : 32;
	const int	wslots = dp <= 128 || wbk == 32 ? 8 : 5;
	const bool	wg = !reg && qres &&
#ifdef ODP_TC_TRACE
		!(getenv("ODP_TC_FILTER") && strcmp(getenv("ODP_TC_FILTER"), "mma") == 0) &&
#endif
		TcWgSharedBytes(dp, wbk, wslots) <= dev->smem_per_block &&
		TcWgmmaUsable(dev, stream);
	const int	qbm = reg ? TC_REG_BM : (wg ? TC_WG_BM : TC_BM);	/* queries per block */
	const int	ks = state->k + (p->exclude_self ? 1 : 0);
	const int64_t s = TcSampleSize(p->nc, ks, sym);
	/* the symmetric filter appends to any query's list: all are held */
	const int64_t qchunk = p->nq < TC_QUERY_CHUNK || sym ? p->nq : TC_QUERY_CHUNK;
	const int64_t qchunk_pad = (qchunk + qbm - 1) / qbm * qbm;
	const int	ctiles = (int) ((p->nc + TC_BN - 1) / TC_BN);
	const int64_t nc_pad = (int64_t) ctiles * TC_BN;
	/* 64-dimension stages (half the barriers) where two blocks still fit an SM */
	const int	bk = qres && dp % 64 == 0 &&
		TC_BM * (dp + 8) + TC_STAGES * TC_BN * (64 + 8) <= TC_SMEM_TWO_BLOCKS / 2 ? 64 : 32;
	const size_t smem = reg
		? TC_STAGES * (sizeof(__half) * TC_BN * (dp + 8) + (sym ? 2 : 1) * sizeof(float) * TC_BN)
		: (wg ? TcWgSharedBytes(dp, wbk, wslots)
		   : sizeof(__half) * ((qres ? (size_t) TC_BM * (dp + 8) : 0) +
							   (size_t) TC_STAGES * (qres ? 1 : 2) * TC_BN * (bk + 8)));
	void		(*filter) (const TcArgs) = reg
		? reg_filter
		: (wg ? (wbk == 32 ? TcFilterWgKernel<M, 32, 8>
				 : (wslots == 8 ? TcFilterWgKernel<M, 64, 8> : TcFilterWgKernel<M, 64, 5>))
		   : (!qres ? TcFilterKernel<M, false, 32>
			  : (bk == 64 ? TcFilterKernel<M, true, 64> : TcFilterKernel<M, true, 32>)));
	double	   *d_sum = NULL;
	float	   *d_mean = NULL,
			   *d_cw = NULL,
			   *d_thr = NULL,
			   *d_alpha = NULL,
			   *d_sample = NULL,
			   *d_snorm = NULL,
			   *d_rw = NULL,
			   *d_cv = NULL;
	__half	   *d_ct = NULL,
			   *d_qt = NULL;
	unsigned int *d_max = NULL,
			   *d_range = NULL;
	int32_t    *d_count = NULL,
			   *d_list = NULL,
			   *d_over = NULL;
	int		   *d_flags = NULL;
	int			flags[2] = {0, 0};
	int			e = TC_TOP_EXP;
	OdpKnnState sst;
	OdpKnnProblem sp;
	TcArgs		fa;
	TcQueryRowsArgs qa;
	TcRefineArgs ra;
#ifdef ODP_TC_TRACE
	double		trace_t = odp_now_ms();
#endif

	*done = false;
	if (ks > s || state->k > TC_REFINE_SEL)
		return ODP_OK;
#define TC_ALLOC(ptr, bytes, what) \
	do { \
		if (OdpGpuArenaAlloc(ctx, arena, (bytes), (what), (void **) &(ptr)) != ODP_OK) \
		{ \
			ctx->message[0] = '\0'; \
			return ODP_OK;	/* not enough memory: the caller's path runs */ \
		} \
	} while (0)
	TC_ALLOC(d_ct, (size_t) nc_pad * dp * sizeof(__half), "half candidate rows");
	TC_ALLOC(d_cw, (size_t) nc_pad * sizeof(float), "candidate weights");
	TC_ALLOC(d_qt, (size_t) qchunk_pad * dp * sizeof(__half), "half query rows");
	TC_ALLOC(d_thr, (size_t) qchunk_pad * sizeof(float), "query thresholds");
	TC_ALLOC(d_alpha, (size_t) qchunk_pad * sizeof(float), "query factors");
	TC_ALLOC(d_count, (size_t) qchunk * sizeof(int32_t), "filter counts");
	TC_ALLOC(d_list, (size_t) qchunk * TC_CAP * sizeof(int32_t), "filter lists");
	TC_ALLOC(d_over, (size_t) qchunk * sizeof(int32_t), "overflowed queries");
	TC_ALLOC(d_sample, (size_t) s * dims * sizeof(float), "sample rows");
	if (M == ODP_METRIC_COSINE)
		TC_ALLOC(d_snorm, (size_t) s * sizeof(float), "sample norms");
	if (sym)
	{
		TC_ALLOC(d_rw, (size_t) qchunk_pad * sizeof(float), "row weights");
		TC_ALLOC(d_cv, (size_t) nc_pad * sizeof(float), "mirrored thresholds");
	}
	TC_ALLOC(d_sum, (size_t) dims * sizeof(double), "column sums");
	TC_ALLOC(d_range, (size_t) 2 * dims * sizeof(unsigned int), "column ranges");
	TC_ALLOC(d_mean, (size_t) dims * sizeof(float), "column means");
	TC_ALLOC(d_max, sizeof(unsigned int), "largest magnitude");
	TC_ALLOC(d_flags, 2 * sizeof(int), "flags");
	if (OdpKnnStateAlloc(ctx, arena, qchunk, ks, &sst) != ODP_OK)
	{
		ctx->message[0] = '\0';
		return ODP_OK;
	}
#undef TC_ALLOC
	ctx->message[0] = '\0';

	ODP_CUDA_TRY(ctx, OdpGpuFuncSharedAtLeast((const void *) filter, smem),
				 "setting the filter kernel's shared memory size");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_flags, 0, 2 * sizeof(int), stream), "clearing flags");

	/*
	 * The euclidean metrics centre every row on the candidates' mean; the
	 * same pass finds the candidates' largest centred magnitude.
	 */
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_max, 0, sizeof(unsigned int), stream), "clearing the magnitude");
	if (euclid)
	{
		dim3		grid((unsigned) ((dims + 127) / 128), (unsigned) ((p->nc + TC_SUM_ROWS - 1) / TC_SUM_ROWS));

		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_sum, 0, (size_t) dims * sizeof(double), stream),
					 "clearing column sums");
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_range, 0xff, (size_t) dims * sizeof(unsigned int), stream),
					 "clearing column ranges");
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_range + dims, 0, (size_t) dims * sizeof(unsigned int), stream),
					 "clearing column ranges");
		TcColumnSumKernel<<<grid, 128, 0, stream>>>(p->cands, p->nc, dims, d_sum, d_range);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the column sum kernel");
		TcMeanKernel<<<(unsigned) ((dims + 127) / 128), 128, 0, stream>>>(d_sum, d_range, dims, p->nc,
																			d_mean, d_max);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the column mean kernel");
	}

	/* the scale 2^e puts the largest magnitude in [2^14, 2^15) */
	if (M != ODP_METRIC_COSINE)
	{
		unsigned int maxbits = 0;
		float		maxabs;

		if (!euclid)
		{
			TcMaxAbsKernel<<<4 * dev->sm_count, 256, 0, stream>>>(p->cands, p->nc, dims, NULL, d_max);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the magnitude kernel");
		}
		if (p->queries != p->cands)
		{
			TcMaxAbsKernel<<<4 * dev->sm_count, 256, 0, stream>>>(p->queries, p->nq, dims, euclid ? d_mean : NULL, d_max);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the magnitude kernel");
		}
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&maxbits, d_max, sizeof(unsigned int), cudaMemcpyDeviceToHost, stream),
					 "reading the largest magnitude");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "finding the largest magnitude");
		memcpy(&maxabs, &maxbits, sizeof(maxabs));
		if (!(maxabs < INFINITY))
			return ODP_OK;		/* centring overflowed: the caller's path runs */
		e = maxabs > 0.0f ? TC_TOP_EXP - ilogbf(maxabs) : 0;
	}

	/* candidates: half copies and weights, padded to whole tiles; the sample */
	TcCandRowsKernel<M><<<(unsigned) ((nc_pad + TC_ROW_WARPS - 1) / TC_ROW_WARPS), TC_ROW_WARPS * 32, 0, stream>>>(
		p->cands, p->cand_norms, p->nc, nc_pad, dims, dp, wg ? TC_BN : 0, wbk,
		euclid ? d_mean : NULL, e, d_ct, d_cw);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the candidate copy kernel");
	TcSampleKernel<<<(unsigned) ((s * dims + 255) / 256), 256, 0, stream>>>(p->cands, p->cand_norms, dims, p->nc, s, d_sample, d_snorm);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the sample kernel");
	TC_MARK("prepare");

	/*
	 * A caller that lets the search give up on overflowing lists gets a
	 * small first chunk as a probe, so that giving up costs a sixteenth
	 * of a chunk's filter (the rest of the probe's work is kept).
	 */
	for (int64_t qf = 0, nq = 0; qf < p->nq; qf += nq)
	{
		nq = qf == 0 && depth == 0 && p->tc_max_overflow > 0.0 ? TC_PROBE_QUERIES : qchunk;
		nq = p->nq - qf < nq ? p->nq - qf : nq;
		const int64_t qtiles = (nq + qbm - 1) / qbm;
		int64_t		tiles,
					groups,
					per_launch;

		/* enough blocks to fill the GPU; more tiles per block, fewer query reloads */
		tiles = qtiles * ctiles / (16 * (int64_t) dev->sm_count);
		if (odp_gpu_knn_tc_block_tiles > 0)
			tiles = odp_gpu_knn_tc_block_tiles;
		tiles = tiles < 1 ? 1 : (tiles > TC_MAX_TILES ? TC_MAX_TILES : tiles);
		groups = (ctiles + tiles - 1) / tiles;
		per_launch = TC_LAUNCH_WORK / (qtiles * qbm * tiles * TC_BN * dp);
		per_launch = per_launch < 1 ? 1 : (per_launch > 65535 ? 65535 : per_launch);

		/* 1. thresholds from the sample */
		memset(&sp, 0, sizeof(sp));
		sp.queries = p->queries + qf * dims;
		sp.query_norms = M == ODP_METRIC_COSINE ? p->query_norms + qf : NULL;
		sp.query_base = 0;
		sp.nq = nq;
		sp.cands = d_sample;
		sp.cand_norms = d_snorm;
		sp.cand_base = 0;
		sp.nc = s;
		sp.dims = dims;
		sp.metric = M;
		sst.rows = nq;
		{
			bool		sample_done = false;

			/* a large sample goes through the filter itself, with memory of its own */
			if (depth == 0 && s >= TC_NEST_MIN_SAMPLE)
			{
				OdpGpuArena sub;

				OdpGpuArenaInit(&sub, arena->budget == 0 ? 0
								: (arena->budget - arena->used > 1 ? arena->budget - arena->used : 1));
				/*
				 * The sample's lists fill like the caller's (same
				 * expected fill), so too many overflows there mean the
				 * same here, found for a fraction of the cost.
				 */
				sp.tc_max_overflow = p->tc_max_overflow;
				status = TcSearch<M>(ctx, dev, stream, &sp, &sst, &sub, &sample_done,
									 gave_up, depth + 1);
				(void) cudaStreamSynchronize(stream);
				OdpGpuArenaRelease(&sub);
				if (status != ODP_OK || *gave_up)
					goto cleanup;
			}
			if (!sample_done)
			{
				double		ignored = 0.0;

				ODP_TRY(OdpKnnStateReset(ctx, stream, &sst));
				ODP_TRY(OdpKnnAccumulate(ctx, dev, stream, &sp, &sst, &ignored));
			}
		}
		TC_MARK("threshold");

		/* 2. the filter */
		memset(&qa, 0, sizeof(qa));
		qa.x = p->queries + qf * dims;
		qa.norms = M == ODP_METRIC_COSINE ? p->query_norms + qf : NULL;
		qa.rows = nq;
		qa.padded = qtiles * qbm;
		qa.dims = dims;
		qa.dp = dp;
		qa.tr = wg ? TC_WG_BM : 0;
		qa.bk = dp;
		qa.mean = euclid ? d_mean : NULL;
		qa.e = e;
		qa.dist = sst.dist;
		qa.count = sst.count;
		qa.ks = ks;
		qa.out = d_qt;
		qa.thr = d_thr;
		qa.alpha = d_alpha;
		qa.bad = d_flags + 1;
		TcQueryRowsKernel<M><<<(unsigned) ((qa.padded + TC_ROW_WARPS - 1) / TC_ROW_WARPS), TC_ROW_WARPS * 32, 0, stream>>>(qa);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the query copy kernel");
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_count, 0, (size_t) nq * sizeof(int32_t), stream),
					 "clearing filter counts");
		if (sym)
		{
			const int64_t n = qa.padded > nc_pad ? qa.padded : nc_pad;

			TcMirrorKernel<<<(unsigned) ((n + 255) / 256), 256, 0, stream>>>(
				d_thr, d_cw, nq, qa.padded, nc_pad, d_rw, d_cv);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the mirror kernel");
		}
		TC_MARK("q-prepare");
		memset(&fa, 0, sizeof(fa));
		fa.q = d_qt;
		fa.c = d_ct;
		fa.thr = d_thr;
		fa.alpha = d_alpha;
		fa.cw = d_cw;
		fa.tiles = (int) tiles;
		fa.ctiles = ctiles;
		fa.dp = dp;
		fa.count = d_count;
		fa.list = d_list;
		fa.rw = d_rw;
		fa.cv = d_cv;
		for (int64_t g0 = 0, ng = 0; g0 < groups; g0 += ng)
		{
			int64_t		gx = qtiles;	/* query blocks of the launch */

			ng = groups - g0 < per_launch ? groups - g0 : per_launch;
			if (sym)
			{
				/*
				 * The symmetric filter's group g has work for the query
				 * blocks up to its last tile only: a launch takes groups
				 * until that work reaches a full launch's, and only those
				 * blocks (else its early launches would leave most SMs
				 * idle, and every launch end on a partial wave).
				 */
				const int64_t per_block = (int64_t) qbm * tiles * TC_BN * dp;
				int64_t		work = 0;

				for (ng = 0; g0 + ng < groups && ng < 65535 &&
					 (ng == 0 || work < TC_LAUNCH_WORK); ng++)
				{
					const int64_t end = (g0 + ng + 1) * tiles * TC_BN;	/* first row after the group */

					gx = (end + qbm - 1) / qbm < qtiles ? (end + qbm - 1) / qbm : qtiles;
					work += gx * per_block;
				}
			}
			if (odp_cancel_requested(ctx))
			{
				status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
				goto cleanup;
			}
			fa.group0 = g0;
			filter<<<dim3((unsigned) gx, (unsigned) ng), wg ? TC_WG_THREADS : TC_THREADS, smem, stream>>>(fa);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the tensor-core filter kernel");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "running the tensor-core filter kernel");
		}
		TC_MARK("filter");
#ifdef ODP_TC_TRACE
		{
			int32_t    *cnt = (int32_t *) malloc((size_t) nq * sizeof(int32_t));
			double		sum = 0.0;
			int32_t		mx = 0;

			if (cnt != NULL &&
				cudaMemcpy(cnt, d_count, (size_t) nq * sizeof(int32_t), cudaMemcpyDeviceToHost) == cudaSuccess)
			{
				for (int64_t i = 0; i < nq; i++)
				{
					sum += cnt[i];
					mx = cnt[i] > mx ? cnt[i] : mx;
				}
				fprintf(stderr, "tc: lists: mean %.1f, max %d, sample %lld\n",
						sum / (double) nq, (int) mx, (long long) s);
			}
			free(cnt);
			trace_t = odp_now_ms();
		}
#endif
		/* 3. exact distances of the passers */
		memset(&ra, 0, sizeof(ra));
		ra.q = p->queries;
		ra.qn = p->query_norms;
		ra.c = p->cands;
		ra.cn = p->cand_norms;
		ra.q_base = p->query_base + qf;
		ra.q_first = qf;
		ra.c_base = p->cand_base;
		ra.nq = nq;
		ra.dims = dims;
		ra.k = state->k;
		ra.exclude_self = p->exclude_self ? 1 : 0;
		ra.count = d_count;
		ra.list = d_list;
		ra.sd = state->dist;
		ra.si = state->index;
		ra.sn = state->count;
		ra.overflow = d_flags;
		ra.over = d_over;
		ra.bad = d_flags + 1;
		TcRefineKernel<M><<<(unsigned) ((nq + TC_REFINE_WARPS - 1) / TC_REFINE_WARPS), TC_REFINE_WARPS * 32, 0, stream>>>(ra);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the refine kernel");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(flags, d_flags, 2 * sizeof(int), cudaMemcpyDeviceToHost, stream),
					 "reading the filter's flags");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "refining the filter's candidates");
		TC_MARK("refine");
		if (p->tc_max_overflow > 0.0 &&
			(double) flags[0] > p->tc_max_overflow * (double) nq)
		{
#ifdef ODP_TC_TRACE
			fprintf(stderr, "tc%s: %d of %lld lists overflowed: giving up\n",
					depth > 0 ? " (sample)" : "", flags[0], (long long) nq);
#endif
			*gave_up = true;
			goto cleanup;		/* *done stays false */
		}
		if (flags[0] != 0)
		{
			/*
			 * The queries whose list overflowed (listed by the refine
			 * kernel) scan every candidate, a slice of them per launch:
			 * on data of copies that is all of them, and a cancel request
			 * must not wait for a whole chunk.
			 */
			for (int64_t off = 0; off < flags[0]; off += TC_SCAN_QUERIES)
			{
				const int64_t n = flags[0] - off < TC_SCAN_QUERIES ? flags[0] - off : TC_SCAN_QUERIES;

				if (odp_cancel_requested(ctx))
				{
					status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
					goto cleanup;
				}
				TcScanKernel<M><<<(unsigned) n, TC_SCAN_WARPS * 32, 0, stream>>>(ra, d_over + off, p->nc);
				ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the scan kernel");
				ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "scanning the overflowed queries");
			}
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(flags + 1, d_flags + 1, sizeof(int), cudaMemcpyDeviceToHost, stream),
						 "reading the filter's flags");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "scanning the overflowed queries");
			odp_gpu_knn_tc_scans += flags[0];
#ifdef ODP_TC_TRACE
			fprintf(stderr, "tc: %d queries overflowed\n", flags[0]);
#endif
			TC_MARK("scan");
			flags[0] = 0;
			ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_flags, 0, sizeof(int), stream), "clearing flags");
		}
		if (flags[1] != 0)
			return odp_fail(ctx, ODP_ERR_INTERNAL,
							"the tensor-core filter kept fewer than k = %d candidates", state->k);
	}
	*done = true;
	if (sym)
		odp_gpu_knn_tc_symmetric++;
	if (wg)
		odp_gpu_knn_tc_warpgroup++;
	if (depth == 0)
		odp_gpu_knn_tc_chunks++;
	else
		odp_gpu_knn_tc_samples++;
cleanup:
	return status;
}

/* See knn_gpu_tc.cuh. */
OdpStatus
OdpKnnTcSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
			   const OdpKnnProblem *p, OdpKnnState *state, size_t budget,
			   bool *done, double *compute_ms)
{
	OdpGpuArena arena;
	OdpStatus	status = ODP_OK;
	bool		gave_up = false;
	double		t0 = odp_now_ms();

	*done = false;
	if (!OdpKnnTcEligible(p, state->k) || state->rows != p->nq)
		return ODP_OK;
	OdpGpuArenaInit(&arena, budget);
	switch (p->metric)
	{
		case ODP_METRIC_EUCLIDEAN:
			status = TcSearch<ODP_METRIC_EUCLIDEAN>(ctx, dev, stream, p, state, &arena, done, &gave_up, 0);
			break;
		case ODP_METRIC_SQEUCLIDEAN:
			status = TcSearch<ODP_METRIC_SQEUCLIDEAN>(ctx, dev, stream, p, state, &arena, done, &gave_up, 0);
			break;
		case ODP_METRIC_COSINE:
			status = TcSearch<ODP_METRIC_COSINE>(ctx, dev, stream, p, state, &arena, done, &gave_up, 0);
			break;
		case ODP_METRIC_INNER_PRODUCT:
			status = TcSearch<ODP_METRIC_INNER_PRODUCT>(ctx, dev, stream, p, state, &arena, done, &gave_up, 0);
			break;
		default:
			break;
	}
	if (gave_up)
		odp_gpu_knn_tc_give_ups++;
	/* nothing may still use what is freed */
	(void) cudaStreamSynchronize(stream);
	OdpGpuArenaRelease(&arena);
	*compute_ms += odp_now_ms() - t0;
	return status;
}
