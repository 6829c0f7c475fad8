/*-------------------------------------------------------------------------
 *
 * gpu_knn_tc.cu
 *	  Exact k-NN for the metrics that are matrix products (euclidean,
 *	  squared euclidean, cosine, inner product) through a tensor-core
 *	  filter.
 *
 * The canonical distance (odp_distance.h: float32, dimension by dimension,
 * no FMA) costs 3 SIMT operations per dimension; a TF32 tensor core
 * computes a dot product many times faster, but not bit for bit.  So the
 * tensor cores only filter, and every result is still canonical:
 *
 *	1. Threshold: each query's exact k-th distance over a strided sample of
 *	   S candidates (the shared SIMT primitive, k + 1 for a self join).  It
 *	   bounds the final k-th distance from above.
 *	2. Filter (TcFilterKernel): TF32 mma.sync tiles of 128 queries x 128
 *	   candidates give s~ = |q|^2 + |c|^2 - 2 q.c (cosine: 1 - q.c/|q||c|,
 *	   inner product: -q.c) on copies of the rows rounded to TF32
 *	   (centred on the candidates' mean for the euclidean metrics, which
 *	   changes no distance and keeps the norms small).  A rigorous bound
 *	   E on |s~ - canonical| (below) makes L = s~ - E a lower bound of the
 *	   canonical value, and a candidate whose L reaches the threshold is
 *	   appended to the query's list (TC_CAP entries).
 *	3. Refine (TcRefineKernel): one warp per query computes the canonical
 *	   distance of every listed candidate and keeps the k smallest by
 *	   (distance, index), exactly what the SIMT primitive keeps.
 * Every candidate of the true k nearest has distance <= threshold, so its
 * L passes: the lists hold all of them, and the result is exact.  A list
 * that overflows (data with many equal distances) makes the whole search
 * report "not done", and the caller runs the SIMT primitive instead.
 *
 * The bound.  Rounding a value to TF32 (round to nearest) errs by at most
 * 2^-11 relatively, so a product by at most 2^-10 + 2^-22; the tensor
 * core's float32 accumulation of D products by at most about D 2^-23 of
 * the sum of their magnitudes; the float32 norms, the float32 centring
 * and the canonical sum itself by D 2^-24 or 2^-24 relatively.  With
 * |q.c| <= |q||c| <= (|q|^2 + |c|^2) / 2, all of it stays below
 * E = TC_REL(D) (|q|^2 + |c|^2), TC_REL(D) = 2^-8 + D 2^-20, about twice
 * the sum of the worst cases; cosine and inner product use TC_REL(D) in
 * units of 1 and of |q||c|.  A generous E costs only a few more exact
 * distances.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu_knn_tc.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "engine_internal.h"
#include "gpu_check.cuh"
#include "gpu_knn_tc.cuh"
#include "gpu_runtime.cuh"
#include "odp_distance.h"

#define TC_BM			128		/* queries per block tile */
#define TC_BN			128		/* candidates per block tile */
#define TC_BK			32		/* dimensions per staged step */
#define TC_LD			(TC_BK + 4)	/* smem row stride: conflict-free fragments */
#define TC_THREADS		256
#define TC_CAP			2048	/* list entries per query */
#define TC_MAX_K		32		/* larger k: lists would need larger samples */
#define TC_MIN_CANDS	32768	/* fewer: the SIMT primitive is as fast */
#define TC_MIN_QUERIES	128		/* fewer: the threshold pass and the TF32
								 * copy of every candidate cost more than
								 * the SIMT primitive's few tiles */
#define TC_QUERY_CHUNK	262144	/* queries whose lists are held at once */
#define TC_REFINE_WARPS	2
#define TC_LAUNCH_WORK	((int64_t) 1 << 38)	/* pair-dimensions per launch */
#define TC_SUM_ROWS		512		/* rows per block of the column sums */
#define TC_TILES		8		/* candidate tiles one filter block sweeps */

/* Query chunks the filter finished, for the tests (not thread-safe). */
extern "C" int64_t odp_gpu_knn_tc_chunks;
int64_t		odp_gpu_knn_tc_chunks = 0;

/* Relative error bound of the filter for D dimensions (see the header). */
#define TC_REL(D)		(0x1p-8f + (float) (D) * 0x1p-20f)

/* Everything one filter launch needs. */
struct TcArgs
{
	const float *q;				/* nq x dp TF32 rows (centred for euclidean) */
	const float *c;				/* nc x dp */
	const float *qw;			/* per query: see TcRowWeights */
	const float *cw;			/* per candidate */
	const float *limit;			/* per query: threshold, accumulator scale */
	int64_t		nq;
	int64_t		nc;
	int64_t		q_begin;		/* first query tile row of this launch */
	int			dp;				/* padded dimensions, a multiple of TC_BK */
	float		rel;			/* TC_REL(dims) */
	int32_t    *count;			/* per query: candidates appended */
	int32_t    *list;			/* per query: TC_CAP local candidate indexes */
};

/* Rounds to TF32 (round to nearest, ties away), as the bound assumes. */
static __device__ __forceinline__ float
TcRound(float x)
{
	uint32_t	r;

	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return __uint_as_float(r);
}

/* Column sums of rows x dims into sum (zeroed), in double. */
static __global__ void
TcColumnSumKernel(const float *x, int64_t rows, int dims, double *sum)
{
	const int	d = blockIdx.x * blockDim.x + threadIdx.x;
	const int64_t r0 = (int64_t) blockIdx.y * TC_SUM_ROWS;
	const int64_t r1 = min(rows, r0 + TC_SUM_ROWS);
	double		s = 0.0;

	if (d >= dims)
		return;
	for (int64_t r = r0; r < r1; r++)
		s += x[r * dims + d];
	atomicAdd(sum + d, s);
}

/*
 * Writes row r of x, less mean (NULL: nothing), rounded to TF32 and
 * zero-padded to dp, into out; and into sq[r] the float32 squared norm of
 * the unrounded (centred) row.  One thread per row.
 */
static __global__ void
TcPrepareKernel(const float *x, int64_t rows, int dims, int dp,
				const double *sum, int64_t sum_rows, float *out, float *sq)
{
	const int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	float		acc = 0.0f;

	if (r >= rows)
		return;
	for (int d = 0; d < dp; d++)
	{
		float		v = 0.0f;

		if (d < dims)
		{
			v = x[r * dims + d];
			if (sum != NULL)
				v = __fsub_rn(v, (float) (sum[d] / (double) sum_rows));
			acc = __fadd_rn(acc, __fmul_rn(v, v));
		}
		out[r * dp + d] = TcRound(v);
	}
	sq[r] = acc;
}

/*
 * Per-row weights of the filter, from the squared norms sq (and the
 * canonical norms of cosine, odp_row_norm): euclidean: sq (1 - rel), so
 * that qw + cw - 2 q.c is s~ - E; cosine: 1 / norm; inner product: the
 * norm times sqrt(rel), so that qw cw is E.
 */
template <OdpMetric M>
static __global__ void
TcRowWeightsKernel(const float *sq, const float *norms, int64_t rows,
				   float rel, float *w)
{
	const int64_t r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (r >= rows)
		return;
	if (M == ODP_METRIC_COSINE)
		w[r] = 1.0f / norms[r];
	else if (M == ODP_METRIC_INNER_PRODUCT)
		w[r] = sqrtf(sq[r]) * 1.0001f * sqrtf(rel);
	else
		w[r] = sq[r] * (1.0f - rel);
}

/*
 * Turns the sample's k-th distances (dist[q * ks + ks - 1]) into the
 * filter's limits (OdpKnnPrefilterLimit: accumulator scale).  count[q]
 * must be ks, else *bad is set.
 */
template <OdpMetric M>
static __global__ void
TcLimitKernel(const float *dist, const int32_t *count, int64_t nq, int ks,
			  float *limit, int *bad)
{
	const int64_t q = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (q >= nq)
		return;
	if (count[q] != ks)
	{
		atomicExch(bad, 1);
		return;
	}
	limit[q] = OdpKnnPrefilterLimit<M>(dist[q * ks + ks - 1]);
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

/* One m16n8k8 TF32 product into c. */
static __device__ __forceinline__ void
TcMma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
				 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
				 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
				 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* Stages TC_BK dimensions of 128 rows from x (row stride dp) into dst. */
static __device__ __forceinline__ void
TcStage(const float *x, int64_t row0, int64_t rows, int dp, int k0, float *dst)
{
	for (int t = threadIdx.x; t < 128 * (TC_BK / 4); t += TC_THREADS)
	{
		const int	r = t / (TC_BK / 4);
		const int	v = t % (TC_BK / 4);
		float	   *d = dst + r * TC_LD + v * 4;

		if (row0 + r < rows)
			__pipeline_memcpy_async(d, x + (row0 + r) * dp + k0 + v * 4, 16);
		else
			*(float4 *) d = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	}
}

/*
 * The filter's epilogue for one tile: every accumulated product becomes
 * a lower bound, checked against its query's limit; the accumulators are
 * cleared for the next tile.
 */
template <OdpMetric M>
static __device__ __forceinline__ void
TcEpilogue(const TcArgs &a, float (&acc)[4][4][4], int64_t q0, int64_t c0,
		   int wm, int wn, int g, int t)
{
	/* Epilogue: lower bounds against each query's limit. */
	float		cw[4][2];

#pragma unroll
	for (int j = 0; j < 4; j++)
#pragma unroll
		for (int e = 0; e < 2; e++)
		{
			const int64_t c = c0 + wn * 32 + j * 8 + 2 * t + e;

			cw[j][e] = c < a.nc ? a.cw[c] : 0.0f;
		}
#pragma unroll
	for (int i = 0; i < 4; i++)
	{
#pragma unroll
		for (int h = 0; h < 2; h++)
		{
			const int64_t q = q0 + wm * 64 + i * 16 + g + h * 8;
			float		qw,
						lim;

			if (q >= a.nq)
				continue;
			qw = a.qw[q];
			lim = a.limit[q];
#pragma unroll
			for (int j = 0; j < 4; j++)
			{
#pragma unroll
				for (int e = 0; e < 2; e++)
				{
					const int64_t c = c0 + wn * 32 + j * 8 + 2 * t + e;
					const float dot = acc[i][j][h * 2 + e];
					float		lb;

					if (c >= a.nc)
						continue;
					if (M == ODP_METRIC_COSINE)
						lb = fminf(1.0f - dot * qw * cw[j][e] - a.rel, 2.0f);
					else if (M == ODP_METRIC_INNER_PRODUCT)
						lb = -dot - qw * cw[j][e];
					else
						lb = (qw + cw[j][e]) - 2.0f * dot;
					if (lb <= lim)
					{
						const int	pos = atomicAdd(a.count + q, 1);

						if (pos < TC_CAP)
							a.list[q * TC_CAP + pos] = (int32_t) c;
					}
				}
			}
		}
	}
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;
}

/*
 * The filter.  Grid: x = groups of TC_TILES candidate tiles, y = query
 * tiles from a.q_begin; 8 warps, warp w covering queries (w / 4) * 64 ..
 * + 64 and candidates (w % 4) * 32 .. + 32 of the block tile as 4 x 4
 * m16n8 fragments.  Dimensions are staged TC_BK at a time,
 * double-buffered, the pipeline running on from one candidate tile into
 * the next.
 */
template <OdpMetric M>
static __global__ void __launch_bounds__(TC_THREADS)
TcFilterKernel(const __grid_constant__ TcArgs a)
{
	extern __shared__ __align__(16) float tsm[];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int	g = lane >> 2;
	const int	t = lane & 3;
	const int	wm = warp >> 2;
	const int	wn = warp & 3;
	const int64_t q0 = a.q_begin + (int64_t) blockIdx.y * TC_BM;
	const int64_t cfirst = (int64_t) blockIdx.x * TC_BN * TC_TILES;
	const int	ksteps = a.dp / TC_BK;
	const int	tiles = (int) min((int64_t) TC_TILES, (a.nc - cfirst + TC_BN - 1) / TC_BN);
	const int	steps = tiles * ksteps;
	float		acc[4][4][4];

#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;

	TcStage(a.q, q0, a.nq, a.dp, 0, tsm);
	TcStage(a.c, cfirst, a.nc, a.dp, 0, tsm + 128 * TC_LD);
	__pipeline_commit();
	for (int s = 0; s < steps; s++)
	{
		const float *as = tsm + (s & 1) * 256 * TC_LD;
		const float *bs = as + 128 * TC_LD;
		const int64_t c0 = cfirst + (int64_t) (s / ksteps) * TC_BN;

		/* the pipeline runs on across tiles: stage the next step now */
		if (s + 1 < steps)
		{
			float	   *nx = tsm + ((s + 1) & 1) * 256 * TC_LD;
			const int	nk = ((s + 1) % ksteps) * TC_BK;

			TcStage(a.q, q0, a.nq, a.dp, nk, nx);
			TcStage(a.c, cfirst + (int64_t) ((s + 1) / ksteps) * TC_BN, a.nc, a.dp, nk,
					nx + 128 * TC_LD);
			__pipeline_commit();
			__pipeline_wait_prior(1);
		}
		else
			__pipeline_wait_prior(0);
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < TC_BK; kk += 8)
		{
			uint32_t	af[4][4];
			uint32_t	bf[4][2];

#pragma unroll
			for (int i = 0; i < 4; i++)
			{
				const float *r = as + (wm * 64 + i * 16 + g) * TC_LD + kk + t;

				af[i][0] = __float_as_uint(r[0]);
				af[i][1] = __float_as_uint(r[8 * TC_LD]);
				af[i][2] = __float_as_uint(r[4]);
				af[i][3] = __float_as_uint(r[8 * TC_LD + 4]);
			}
#pragma unroll
			for (int j = 0; j < 4; j++)
			{
				const float *r = bs + (wn * 32 + j * 8 + g) * TC_LD + kk + t;

				bf[j][0] = __float_as_uint(r[0]);
				bf[j][1] = __float_as_uint(r[4]);
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					TcMma(acc[i][j], af[i], bf[j]);
		}
		/* nobody may restage this buffer before everyone has read it */
		__syncthreads();
		if ((s + 1) % ksteps == 0)
			TcEpilogue<M>(a, acc, q0, c0, wm, wn, g, t);
	}
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
	int		   *overflow;		/* set when a list overflowed */
	int		   *bad;			/* set when fewer than k remain */
};

/*
 * One warp per query: canonical distances of the listed candidates, then
 * the k smallest by (distance, index), by k rounds of a warp-wide minimum
 * above the previous pick (keys are unique).
 */
template <OdpMetric M>
static __global__ void __launch_bounds__(TC_REFINE_WARPS * 32)
TcRefineKernel(const __grid_constant__ TcRefineArgs a)
{
	__shared__ float rd[TC_REFINE_WARPS][TC_CAP];
	__shared__ int64_t ri[TC_REFINE_WARPS][TC_CAP];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const int64_t ql = (int64_t) blockIdx.x * TC_REFINE_WARPS + warp;
	const int64_t q = a.q_first + ql;
	const float *qrow;
	float		qn = 1.0f;
	int			n;
	float		pd = -INFINITY;
	int64_t		pi = -1;
	int			taken = 0;

	if (ql >= a.nq)
		return;
	n = a.count[ql];
	if (n > TC_CAP)
	{
		if (lane == 0)
			atomicExch(a.overflow, 1);
		return;
	}
	qrow = a.q + q * a.dims;
	if (M == ODP_METRIC_COSINE)
		qn = a.qn[q];
	for (int e = lane; e < n; e += 32)
	{
		const int64_t c = a.list[ql * TC_CAP + e];
		const int64_t cg = a.c_base + c;

		rd[warp][e] = INFINITY;
		ri[warp][e] = INT64_MAX;
		if (a.exclude_self && cg == a.q_base + ql)
			continue;
		rd[warp][e] = odp_distance(M, qrow, a.c + c * a.dims, a.dims, qn,
								   M == ODP_METRIC_COSINE ? a.cn[c] : 1.0f);
		ri[warp][e] = cg;
	}
	__syncwarp();
	while (taken < a.k)
	{
		float		bd = INFINITY;
		int64_t		bi = INT64_MAX;

		for (int e = lane; e < n; e += 32)
		{
			const float d = rd[warp][e];
			const int64_t i = ri[warp][e];

			if (i == INT64_MAX)
				continue;
			/* above the previous pick, and below the best so far */
			if ((d > pd || (d == pd && i > pi)) &&
				(d < bd || (d == bd && i < bi)))
			{
				bd = d;
				bi = i;
			}
		}
#pragma unroll
		for (int o = 16; o > 0; o >>= 1)
		{
			const float od = __shfl_xor_sync(0xffffffffu, bd, o);
			const int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);

			if (od < bd || (od == bd && oi < bi))
			{
				bd = od;
				bi = oi;
			}
		}
		if (bi == INT64_MAX)
			break;
		if (lane == 0)
		{
			a.sd[q * a.k + taken] = bd;
			a.si[q * a.k + taken] = bi;
		}
		pd = bd;
		pi = bi;
		taken++;
	}
	if (lane == 0)
	{
		a.sn[q] = taken;
		if (taken < a.k)
			atomicExch(a.bad, 1);
	}
}

/* See gpu_knn_tc.cuh. */
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

/* Sample size for ks sample neighbours: lists expected a quarter full. */
static int64_t
TcSampleSize(int64_t nc, int ks)
{
	int64_t		s = (int64_t) 4 * ks * nc / TC_CAP;

	if (s < 4096)
		s = 4096;
	return s < nc ? s : nc;
}

/* Runs a step that returns a status; on failure jumps to cleanup. */
#define TC_TRY(expr) \
	do { \
		status = (expr); \
		if (status != ODP_OK) \
			goto cleanup; \
	} while (0)

/* The launches of one metric; see OdpKnnTcSearch. */
template <OdpMetric M>
static OdpStatus
TcSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
		 const OdpKnnProblem *p, OdpKnnState *state, OdpGpuArena *arena,
		 bool *done)
{
	OdpStatus	status = ODP_OK;
	const bool	euclid = (M == ODP_METRIC_EUCLIDEAN || M == ODP_METRIC_SQEUCLIDEAN);
	const int	dims = p->dims;
	const int	dp = (dims + TC_BK - 1) / TC_BK * TC_BK;
	const int	ks = state->k + (p->exclude_self ? 1 : 0);
	const int64_t s = TcSampleSize(p->nc, ks);
	const int64_t qchunk = p->nq < TC_QUERY_CHUNK ? p->nq : TC_QUERY_CHUNK;
	const float rel = TC_REL(dims);
	const size_t smem = (size_t) 2 * 256 * TC_LD * sizeof(float);
	double	   *d_sum = NULL;
	float	   *d_ct = NULL,
			   *d_qt = NULL,
			   *d_csq = NULL,
			   *d_qsq = NULL,
			   *d_cw = NULL,
			   *d_qw = NULL,
			   *d_lim = NULL,
			   *d_sample = NULL,
			   *d_snorm = NULL;
	int32_t    *d_count = NULL,
			   *d_list = NULL;
	int		   *d_flags = NULL;
	int			flags[2] = {0, 0};
	OdpKnnState sst;
	OdpKnnProblem sp;
	TcArgs		fa;
	TcRefineArgs ra;

	*done = false;
	if (ks > s)
		return ODP_OK;
#define TC_ALLOC(ptr, bytes, what) \
	do { \
		if (OdpGpuArenaAlloc(ctx, arena, (bytes), (what), (void **) &(ptr)) != ODP_OK) \
		{ \
			ctx->message[0] = '\0'; \
			return ODP_OK;	/* not enough memory: the caller's path runs */ \
		} \
	} while (0)
	TC_ALLOC(d_ct, (size_t) p->nc * dp * sizeof(float), "TF32 candidate rows");
	TC_ALLOC(d_csq, (size_t) p->nc * sizeof(float), "candidate norms");
	TC_ALLOC(d_cw, (size_t) p->nc * sizeof(float), "candidate weights");
	TC_ALLOC(d_qt, (size_t) qchunk * dp * sizeof(float), "TF32 query rows");
	TC_ALLOC(d_qsq, (size_t) qchunk * sizeof(float), "query norms");
	TC_ALLOC(d_qw, (size_t) qchunk * sizeof(float), "query weights");
	TC_ALLOC(d_lim, (size_t) qchunk * sizeof(float), "query limits");
	TC_ALLOC(d_count, (size_t) qchunk * sizeof(int32_t), "filter counts");
	TC_ALLOC(d_list, (size_t) qchunk * TC_CAP * sizeof(int32_t), "filter lists");
	TC_ALLOC(d_sample, (size_t) s * dims * sizeof(float), "sample rows");
	if (M == ODP_METRIC_COSINE)
		TC_ALLOC(d_snorm, (size_t) s * sizeof(float), "sample norms");
	TC_ALLOC(d_sum, (size_t) dims * sizeof(double), "column means");
	TC_ALLOC(d_flags, 2 * sizeof(int), "flags");
	if (OdpKnnStateAlloc(ctx, arena, qchunk, ks, &sst) != ODP_OK)
	{
		ctx->message[0] = '\0';
		return ODP_OK;
	}
#undef TC_ALLOC
	ctx->message[0] = '\0';

	ODP_CUDA_TRY(ctx, cudaFuncSetAttribute((const void *) TcFilterKernel<M>,
										   cudaFuncAttributeMaxDynamicSharedMemorySize,
										   (int) smem),
				 "setting the filter kernel's shared memory size");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_flags, 0, 2 * sizeof(int), stream), "clearing flags");

	/* candidates: centred (euclidean) TF32 copies, weights, the sample */
	if (euclid)
	{
		dim3		grid((unsigned) ((dims + 127) / 128), (unsigned) ((p->nc + TC_SUM_ROWS - 1) / TC_SUM_ROWS));

		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_sum, 0, (size_t) dims * sizeof(double), stream),
					 "clearing column sums");
		TcColumnSumKernel<<<grid, 128, 0, stream>>>(p->cands, p->nc, dims, d_sum);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the column sum kernel");
	}
	TcPrepareKernel<<<(unsigned) ((p->nc + 127) / 128), 128, 0, stream>>>(p->cands, p->nc, dims, dp, euclid ? d_sum : NULL, p->nc, d_ct, d_csq);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the TF32 copy kernel");
	TcRowWeightsKernel<M><<<(unsigned) ((p->nc + 255) / 256), 256, 0, stream>>>(d_csq, p->cand_norms, p->nc, rel, d_cw);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the weight kernel");
	TcSampleKernel<<<(unsigned) ((s * dims + 255) / 256), 256, 0, stream>>>(p->cands, p->cand_norms, dims, p->nc, s, d_sample, d_snorm);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the sample kernel");

	for (int64_t qf = 0; qf < p->nq; qf += qchunk)
	{
		const int64_t nq = p->nq - qf < qchunk ? p->nq - qf : qchunk;
		const int64_t qtiles = (nq + TC_BM - 1) / TC_BM;
		const int64_t ctiles = (p->nc + TC_BN - 1) / TC_BN;
		const int64_t cgroups = (ctiles + TC_TILES - 1) / TC_TILES;
		int64_t		per_launch = TC_LAUNCH_WORK / ((int64_t) TC_BM * TC_BN * ctiles * dp);

		if (per_launch < 1)
			per_launch = 1;
		if (per_launch > 65535)
			per_launch = 65535;

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
		TC_TRY(OdpKnnStateReset(ctx, stream, &sst));
		{
			double		ignored = 0.0;

			TC_TRY(OdpKnnAccumulate(ctx, dev, stream, &sp, &sst, &ignored));
		}
		TcLimitKernel<M><<<(unsigned) ((nq + 255) / 256), 256, 0, stream>>>(sst.dist, sst.count, nq, ks, d_lim, d_flags + 1);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the limit kernel");

		/* 2. the filter */
		TcPrepareKernel<<<(unsigned) ((nq + 127) / 128), 128, 0, stream>>>(p->queries + qf * dims, nq, dims, dp, euclid ? d_sum : NULL, p->nc, d_qt, d_qsq);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the TF32 copy kernel");
		TcRowWeightsKernel<M><<<(unsigned) ((nq + 255) / 256), 256, 0, stream>>>(d_qsq, M == ODP_METRIC_COSINE ? p->query_norms + qf : NULL, nq, rel, d_qw);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the weight kernel");
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_count, 0, (size_t) nq * sizeof(int32_t), stream),
					 "clearing filter counts");
		memset(&fa, 0, sizeof(fa));
		fa.q = d_qt;
		fa.c = d_ct;
		fa.qw = d_qw;
		fa.cw = d_cw;
		fa.limit = d_lim;
		fa.nq = nq;
		fa.nc = p->nc;
		fa.dp = dp;
		fa.rel = rel;
		fa.count = d_count;
		fa.list = d_list;
		for (int64_t qt = 0; qt < qtiles; qt += per_launch)
		{
			const int64_t nt = qtiles - qt < per_launch ? qtiles - qt : per_launch;

			if (odp_cancel_requested(ctx))
			{
				status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
				goto cleanup;
			}
			fa.q_begin = qt * TC_BM;
			TcFilterKernel<M><<<dim3((unsigned) cgroups, (unsigned) nt), TC_THREADS, smem, stream>>>(fa);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the tensor-core filter kernel");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "running the tensor-core filter kernel");
		}

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
		ra.bad = d_flags + 1;
		TcRefineKernel<M><<<(unsigned) ((nq + TC_REFINE_WARPS - 1) / TC_REFINE_WARPS), TC_REFINE_WARPS * 32, 0, stream>>>(ra);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the refine kernel");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(flags, d_flags, 2 * sizeof(int), cudaMemcpyDeviceToHost, stream),
					 "reading the filter's flags");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "refining the filter's candidates");
		if (flags[0] != 0)
			return ODP_OK;		/* a list overflowed: not done */
		if (flags[1] != 0)
			return odp_fail(ctx, ODP_ERR_INTERNAL,
							"the tensor-core filter kept fewer than k = %d candidates", state->k);
	}
	*done = true;
	odp_gpu_knn_tc_chunks++;
cleanup:
	return status;
}

/* See gpu_knn_tc.cuh. */
OdpStatus
OdpKnnTcSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
			   const OdpKnnProblem *p, OdpKnnState *state, size_t budget,
			   bool *done, double *compute_ms)
{
	OdpGpuArena arena;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	*done = false;
	if (!OdpKnnTcEligible(p, state->k) || state->rows != p->nq)
		return ODP_OK;
	OdpGpuArenaInit(&arena, budget);
	switch (p->metric)
	{
		case ODP_METRIC_EUCLIDEAN:
			status = TcSearch<ODP_METRIC_EUCLIDEAN>(ctx, dev, stream, p, state, &arena, done);
			break;
		case ODP_METRIC_SQEUCLIDEAN:
			status = TcSearch<ODP_METRIC_SQEUCLIDEAN>(ctx, dev, stream, p, state, &arena, done);
			break;
		case ODP_METRIC_COSINE:
			status = TcSearch<ODP_METRIC_COSINE>(ctx, dev, stream, p, state, &arena, done);
			break;
		case ODP_METRIC_INNER_PRODUCT:
			status = TcSearch<ODP_METRIC_INNER_PRODUCT>(ctx, dev, stream, p, state, &arena, done);
			break;
		default:
			break;
	}
	/* nothing may still use what is freed */
	(void) cudaStreamSynchronize(stream);
	OdpGpuArenaRelease(&arena);
	*compute_ms += odp_now_ms() - t0;
	return status;
}
