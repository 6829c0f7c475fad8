/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc_internal.cuh
 *	  What the files of the tensor-core filter share (knn_gpu_tc.cu and
 *	  the files of its kernels): the constants, the arguments of the
 *	  launches, the order-preserving keys of floats, the device helpers of
 *	  both mma.sync filters, and the host functions one file gives another.
 *
 * The algorithm and its error bound are in knn_gpu_tc.cu's opening
 * comment.  Every kernel is defined in the file whose host function
 * launches it or hands it to TcSearch (knn_gpu_tc.cu), so that each
 * kernel's template instances are made where it is defined; device
 * helpers of more than one file are here, static and inline.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc_internal.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_KNN_TC_INTERNAL_CUH
#define ODP_GPU_KNN_TC_INTERNAL_CUH

#include <math.h>
#include <stdint.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu/gpu_runtime.cuh"
#include "include/odp_distance.h"
#include "knn/knn_gpu_tc.cuh"

#define TC_BM			128		/* queries per block tile */
#define TC_BN			128		/* candidates per block tile */
#define TC_BK			32		/* rows are padded to a multiple of these
								 * dimensions; a stage holds 32 or 64 */
#define TC_STAGES		4		/* cp.async ring depth */
#define TC_THREADS		256
#define TC_REG_BM		512		/* queries per block of the register-resident filter */
#define TC_WG_BM		256		/* queries per block of the warpgroup filter */
#define TC_WG_THREADS	512		/* its four warpgroups */
#define TC_CAP			2048	/* list entries per query */
#define TC_MAX_K		64		/* larger k: lists would need larger samples
								 * (Poker stand-in k = 50, lists expected a
								 * quarter full: 563 on average, 989 at
								 * most) */
#define TC_REFINE_SEL	(TC_MAX_K + 1)	/* k of a sample search: k + 1 */
#define TC_TOP_EXP		14		/* largest scaled magnitude in [2^14, 2^15) */

/* The metrics the filter serves (OdpKnnTcEligible): X(M) for each. */
#define TC_FOR_EACH_METRIC(X) \
	X(ODP_METRIC_EUCLIDEAN) \
	X(ODP_METRIC_SQEUCLIDEAN) \
	X(ODP_METRIC_COSINE) \
	X(ODP_METRIC_INNER_PRODUCT)

/* Relative error bound of the filter for D dimensions (see knn_gpu_tc.cu). */
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
	const float *kth;			/* or, not NULL, the rows' k-th sample
								 * distances (NaN: a short list) */
	__half	   *out;
	float	   *thr;
	float	   *alpha;
	int		   *bad;			/* set when a sample list is short */
};

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

/* A filter kernel: TcFilterKernel, TcFilterRegKernel or TcFilterWgKernel. */
typedef void (*TcFilterFn) (const TcArgs);

/*
 * Device helpers of the tile filter (knn_gpu_tc_mma.cu) and the
 * register-resident one (knn_gpu_tc_reg.cu); TcTestValue also serves the
 * warpgroup filter (knn_gpu_tc_wg.cu).
 */

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
 * The preparation (knn_gpu_tc_prep.cu): each launches its kernel on
 * stream, with the kernel's grid; the caller checks the launch.
 */

/* TcColumnSumKernel over rows x dims. */
extern void TcLaunchColumnSums(cudaStream_t stream, const float *x, int64_t rows,
							   int dims, double *sum, unsigned int *range);

/* TcMeanKernel over dims columns of rows rows. */
extern void TcLaunchMeans(cudaStream_t stream, const double *sum,
						  const unsigned int *range, int dims, int64_t rows,
						  float *mean, unsigned int *largest);

/* TcMaxAbsKernel over rows x dims, four blocks per SM of dev. */
extern void TcLaunchMaxAbs(cudaStream_t stream, const OdpGpuDevice *dev,
						   const float *x, int64_t rows, int dims,
						   const float *mean, unsigned int *largest);

/* TcCandRowsKernel<M> over padded rows. */
template <OdpMetric M>
extern void TcLaunchCandRows(cudaStream_t stream, const float *x, const float *norms,
							 int64_t rows, int64_t padded, int dims, int dp, int tr,
							 int bk, const float *mean, int e, __half *out, float *cw);

/* TcSampleKernel: the sample of s rows of the nc candidates. */
extern void TcLaunchSample(cudaStream_t stream, const float *c, const float *cn,
						   int dims, int64_t nc, int64_t s, float *dst,
						   float *dst_norms);

/* TcQueryRowsKernel<M> over a.padded rows. */
template <OdpMetric M>
extern void TcLaunchQueryRows(cudaStream_t stream, const TcQueryRowsArgs &a);

/* TcMirrorKernel over the larger of padded_rows and padded_cands. */
extern void TcLaunchMirror(cudaStream_t stream, const float *thr, const float *cw,
						   int64_t rows, int64_t padded_rows, int64_t padded_cands,
						   float *rw, float *cv);

/*
 * The filter kernels, each from the file that defines it: TcFilterKernel
 * (knn_gpu_tc_mma.cu) with the query tile in shared memory (qres) or not
 * and stages of bk dimensions; TcFilterRegKernel (knn_gpu_tc_reg.cu) for
 * dp padded dimensions, symmetric (sym) or not, NULL where it does not
 * serve dp; TcFilterWgKernel (knn_gpu_tc_wg.cu) with stages of bk
 * dimensions in a ring of slots.
 */
template <OdpMetric M>
extern TcFilterFn TcTileFilter(bool qres, int bk);
template <OdpMetric M>
extern TcFilterFn TcRegFilter(int dp, bool sym);
template <OdpMetric M>
extern TcFilterFn TcWgFilter(int bk, int slots);

/* Shared memory of TcFilterWgKernel for dp padded dimensions (knn_gpu_tc_wg.cu). */
extern size_t TcWgSharedBytes(int dp, int bk, int slots);

/* Whether dev runs TcFilterWgKernel (knn_gpu_tc_wg.cu). */
extern bool TcWgmmaUsable(const OdpGpuDevice *dev, cudaStream_t stream);

/*
 * The refinement (knn_gpu_tc_refine.cu): TcRefineKernel<M> over the
 * a.nq queries of a chunk, and TcScanKernel<M> over the n overflowed
 * queries listed at over, against nc candidates.
 */
template <OdpMetric M>
extern void TcLaunchRefine(cudaStream_t stream, const TcRefineArgs &a);
template <OdpMetric M>
extern void TcLaunchScan(cudaStream_t stream, const TcRefineArgs &a,
						 const int32_t *over, int64_t n, int64_t nc);

/*
 * A team's steps (knn_gpu_tc_refine.cu): TcKthKernel writes each of rows
 * rows' k-th sample distance (its count must be ks, else NaN) into kth;
 * TcTeamMergeKernel merges, for each of rows rows, the lists of its lists
 * parts (row r of part l at dist/index + (l rows + r) k, count[l rows + r]
 * entries, ascending by (distance, index)) into the k smallest distinct
 * entries, and counts a row left with fewer than k in *short_rows.
 */
extern void TcLaunchKth(cudaStream_t stream, const float *dist, const int32_t *count,
						int ks, int64_t rows, float *kth);
extern void TcLaunchTeamMerge(cudaStream_t stream, const float *in_dist,
							  const int64_t *in_index, const int32_t *in_count, int lists,
							  int64_t rows, int k, float *dist, int64_t *index,
							  int32_t *count, int *short_rows);

#endif							/* ODP_GPU_KNN_TC_INTERNAL_CUH */
