/*-------------------------------------------------------------------------
 *
 * knn_gpu_int.cu
 *	  Exact k-NN of integer-valued rows (card ranks, counts, codes, 0/1
 *	  attributes) on the integer tensor cores, for the euclidean metrics,
 *	  and for manhattan where no dimension spans more than 1 (0/1
 *	  attributes: there |a - b| = (a - b)^2).
 *
 * Such data ties massively: thousands of candidates share a query's k-th
 * distance.  The half-precision filter (knn_gpu_tc.cu) then lets them all
 * through and rechecks them, and a list that overflows scans every
 * candidate alone.  Integers need neither filter nor recheck:
 *
 *	1. Detection (IqRangeKernel): every value an integer of magnitude at
 *	   most 2^24, and each dimension's values, queries and candidates
 *	   together, within 255 of each other.  Shifting a dimension by a
 *	   constant changes no difference, so every value fits an int8 after
 *	   its dimension's shift.  The largest possible squared distance, the
 *	   sum of the squared ranges, must stay below 2^24: then every partial
 *	   sum of the canonical float32 distance (odp_distance.h) is an exact
 *	   integer, and the integer distance here is that float, bit for bit.
 *	   For the euclidean metric it must stay below 2^22, where the square
 *	   roots of distinct integers are distinct floats (their gap, at least
 *	   1 / (2 sqrt(s)), exceeds an ulp of sqrt(s) while s <= 2^22), so that
 *	   ordering by the integer orders by the float with the same ties.
 *	2. Distances (both sweeps below): int8 mma.sync (m16n8k16 for up to
 *	   16 dimensions, else m16n8k32) gives q.c exactly in 32 bits, and
 *	   |q|^2 + |c|^2 - 2 q.c is the exact squared distance.  Where two
 *	   padded dimensions are spare and values small (IQ_FOLD_*), the
 *	   candidate's norm rides in them: the products are 2 q.c - |c|^2
 *	   outright and a pair's test is one comparison with |q|^2 - limit.  A
 *	   thread first compares the largest value of each of its rows with the
 *	   row's limit, so a tile with no passer costs about one operation a
 *	   pair, and only a row with a passer is taken pair by pair.
 *	3. Counts (IqCountKernel, IqSettleKernel): each query's distances under
 *	   a limit go to 16-bit bins [0, 256), and the limit falls to the k-th
 *	   smallest value counted; a value that ties it changes nothing, so ties
 *	   stop costing at once.  The bins give the k-th distance t; for the
 *	   outlier scores (values only) they give the k smallest values
 *	   themselves, and the query is done.
 *	4. Lists (IqSweepKernel), for k-NN and for queries whose k-th distance
 *	   is past the bins.  A block holds 64 queries and sweeps its candidate
 *	   range in ascending tiles of 128, so a candidate comes after every
 *	   candidate of a smaller index.  Each query keeps its k smallest
 *	   (distance, index) pairs in shared memory and a limit: while the list
 *	   is short, t + 1 (or any distance); once full, its k-th distance,
 *	   strictly.  A later candidate that ties the k-th distance has the
 *	   larger index and can never enter, so ties add no work after the
 *	   list fills.  Passers go to a 32-entry buffer per query, merged into
 *	   the list by one warp per query after the tile; a tile whose passers
 *	   overflow a buffer (the first tiles) is taken again in four rounds of
 *	   32 ascending columns, each merged before the next.
 *	5. Few queries: the candidates are split into ranges, one block per
 *	   (query block, range), and IqMergeKernel merges the ranges' lists,
 *	   which also turns distances into the canonical floats.
 *
 * Map of this file.  From top to bottom:
 *	- the constants (IQ_*) and the test counter and hooks
 *	  (odp_gpu_knn_int_*);
 *	- preparation: IqRangeKernel (detection), IqRowsKernel (int8 rows and
 *	  norms);
 *	- the sweeps' shared parts: IqArgs, the list sweep's shared memory
 *	  (IqShared, IqSharedBytes, IqCarve), the tile copies (IqIssueTile,
 *	  and the count sweep's IqIssueSpan), the products (IqLd, IqMma,
 *	  IqPlace, IqProducts), the list merge (IqMerge), the test of a tile's
 *	  products against the limits (IqPassers) and the query copy
 *	  (IqLoadQueries);
 *	- the list sweep: IqSweepKernel;
 *	- the count sweep: IqCountSharedBytes, IqWordCounts, IqCanonical, IqKth,
 *	  IqCountKernel, and IqSettleKernel, which turns counts into each
 *	  query's k-th distance (or, for the outlier scores, its k smallest
 *	  values);
 *	- IqMergeKernel (the ranges' lists, as floats);
 *	- host side: the trace (IQ_MARK), IqCounter (the count kernel compiled
 *	  for the padded dimensions), IqLaunchRange, IqLaunchSweep and the
 *	  entry points OdpKnnIntEligible and OdpKnnIntSearch.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_int.cu
 *
 *-------------------------------------------------------------------------
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "knn/knn_gpu_int.cuh"

#define IQ_BM			64		/* queries per block */
#define IQ_BN			128		/* candidates per tile */
#define IQ_THREADS		256
#define IQ_WARPS		(IQ_THREADS / 32)
#define IQ_ROUND		32		/* ascending columns per round, and the
								 * buffer entries per query */
#define IQ_MAX_K		64		/* list entries per query (two per lane) */
#define IQ_MAX_DIMS		256
#define IQ_MAX_BINS		256		/* counted distances per query: [0, 256) */
/*
 * Bytes from one row to the next in shared memory: a stride of 4 (mod 8)
 * words puts the fragment loads of a warp's 8 rows on distinct banks
 * (dp is a multiple of 16).
 */
#define IQ_RS(dp)		((dp) % 32 == 0 ? (dp) + 16 : (dp))
#define IQ_ALL			(1 << 30)	/* a short list's limit: above every
									 * distance */
#define IQ_NONE			(-(1 << 30))	/* a padding query's limit */
#define IQ_PAD_NORM		((1 << 30) + (1 << 25))	/* padding candidates: never
												 * under any limit */
#define IQ_MAX_RANGES	32
#define IQ_MIN_RANGE	4096	/* fewest candidates per range */
#define IQ_QUERY_CHUNK	262144	/* queries whose lists are held at once */
#define IQ_LAUNCH_PAIRS	((int64_t) 1 << 36)	/* pairs per launch */
#define IQ_MAX_SQ_SUM	(1 << 24)	/* squared: exact float sums below */
#define IQ_MAX_EU_SUM	(1 << 22)	/* euclidean: distinct square roots below */
/*
 * Folding the candidate norm into the products (IqRowsKernel) takes two
 * spare dimensions, query values doubled (so shifted values within 63)
 * and norms below IQ_FOLD_BASE * 128, so that both parts fit an int8.
 */
#define IQ_FOLD_NONE	0
#define IQ_FOLD_QUERY	1
#define IQ_FOLD_CAND	2
#define IQ_FOLD_BASE	127
#define IQ_FOLD_MAX_V	63
#define IQ_FOLD_MAX_NORM	(IQ_FOLD_BASE * 128 - 1)
#define IQ_COUNT_SPAN	2		/* count sweep: tiles between barriers, a
								 * candidate row per thread */

/*
 * Query chunks the integer path finished, for the tests (not
 * thread-safe); and the fewest query-candidate pairs it takes, which the
 * tests lower to 0 to run it on small data.
 */
extern "C" int64_t odp_gpu_knn_int_searches;
extern "C" int64_t odp_gpu_knn_int_min_pairs;
int64_t		odp_gpu_knn_int_searches = 0;
int64_t		odp_gpu_knn_int_min_pairs = (int64_t) 1 << 22;

/*
 * k-NN lists (not values only) take the integer path only where every
 * distance there can be has its bin (the largest below IQ_MAX_BINS: 0/1
 * rows, few small integers), where ties are heaviest.  Elsewhere the two
 * sweeps cost more than the float filter (1,000,000 rows of 10 integers
 * 0 .. 12, k = 10, self join: 1.22 s against 0.42 s on the H100).  The
 * tests set it to take every eligible problem, to check the list sweep on
 * all data.
 */
extern "C" int odp_gpu_knn_int_all_lists;
int			odp_gpu_knn_int_all_lists = 0;

/* Each dimension's smallest and largest value; *bad where one is no small integer. */
static __global__ void
IqRangeKernel(const float *x, int64_t rows, int dims, int *mn, int *mx, int *bad)
{
	const int	d = blockIdx.x * 32 + threadIdx.x;
	int			lo = INT_MAX,
				hi = INT_MIN;
	bool		b = false;

	if (d >= dims)
		return;
	for (int64_t r = (int64_t) blockIdx.y * blockDim.y + threadIdx.y; r < rows;
		 r += (int64_t) gridDim.y * blockDim.y)
	{
		const float v = x[r * dims + d];

		if (!(fabsf(v) <= 16777216.0f) || v != rintf(v))
		{
			b = true;
			break;
		}
		lo = min(lo, (int) v);
		hi = max(hi, (int) v);
	}
	if (b)
		atomicOr(bad, 1);
	else if (lo <= hi)
	{
		atomicMin(&mn[d], lo);
		atomicMax(&mx[d], hi);
	}
}

/*
 * Shifted int8 copies of rows [0, rows) and their squared norms n, padded
 * with zero rows up to padded (norm pad_norm) and zero dimensions up to dp.
 * With fold (IQ_FOLD_*), dimensions dims and dims + 1 carry the norm into
 * the products: a query row holds 2 v and then (1, IQ_FOLD_BASE), a
 * candidate row v and then -(n mod IQ_FOLD_BASE), -(n div IQ_FOLD_BASE),
 * so that the product of the two is 2 q.c - |c|^2; padding candidates get
 * the most negative pair.  One warp per row.
 */
static __global__ void
IqRowsKernel(const float *x, int64_t rows, int64_t padded, int dims, int dp,
			 const int *shift, int fold, int8_t *out, int32_t *norm, int32_t pad_norm)
{
	const int64_t r = (int64_t) blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	const int	lane = threadIdx.x % 32;
	int			s = 0;

	if (r >= padded)
		return;
	for (int d = lane; d < dp; d += 32)
	{
		int			v = 0;

		if (r < rows && d < dims)
			v = (int) x[r * dims + d] - shift[d];
		/* the fold's two dimensions wait for the whole norm */
		if (fold == IQ_FOLD_NONE || d < dims || d > dims + 1)
			out[r * dp + d] = (int8_t) (fold == IQ_FOLD_QUERY ? 2 * v : v);
		s += v * v;
	}
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if (lane == 0)
	{
		norm[r] = r < rows ? s : pad_norm;
		if (fold == IQ_FOLD_QUERY)
		{
			out[r * dp + dims] = 1;
			out[r * dp + dims + 1] = IQ_FOLD_BASE;
		}
		else if (fold == IQ_FOLD_CAND)
		{
			out[r * dp + dims] = (int8_t) (r < rows ? -(s % IQ_FOLD_BASE) : -128);
			out[r * dp + dims + 1] = (int8_t) (r < rows ? -(s / IQ_FOLD_BASE) : -128);
		}
	}
}

/* One sweep launch's arguments. */
typedef struct IqArgs
{
	const int8_t *q;			/* query rows, padded to whole blocks */
	const int32_t *qn;
	const int8_t *c;			/* candidate rows, padded to whole tiles */
	const int32_t *cn;
	int64_t		nq;				/* real queries of the chunk */
	int64_t		nq_pad;
	int64_t		nc;				/* real candidates */
	int64_t		qblock0;		/* first query block of the launch */
	int64_t		ctiles;			/* candidate tiles in all */
	int64_t		range_tiles;	/* tiles per range */
	int			dp;				/* padded dimensions */
	int			k;
	int			exclude_self;
	int64_t		self_shift;		/* query i is candidate i + self_shift */
	const int32_t *init_lim;	/* list sweep: each query's first limit (NULL: IQ_ALL) */
	int			hbins;			/* count sweep: bins per query (even) */
	int32_t    *out_lim;		/* count sweep: ranges x nq_pad limits */
	uint32_t   *out_bins;		/* count sweep: ranges x nq_pad x hbins / 2 */
	int32_t    *out_d;			/* ranges x nq_pad x k */
	int32_t    *out_c;
	int32_t    *out_n;			/* ranges x nq_pad */
} IqArgs;

/* The shared memory of one sweep block, carved from the dynamic array. */
typedef struct IqShared
{
	int8_t	   *q;				/* IQ_BM rows */
	int8_t	   *c;				/* two tiles of IQ_BN rows, one after the other */
	int32_t    *cn;				/* their norms, likewise */
	int32_t    *qn;
	int32_t    *lim;
	int32_t    *pend_d;			/* IQ_BM x IQ_ROUND */
	int32_t    *pend_c;
	int32_t    *pend_n;
	int32_t    *list_d;			/* IQ_BM x k */
	int32_t    *list_c;
	int32_t    *list_n;
	int32_t    *flags;			/* [0]: something to merge, [1]: a buffer overflowed */
} IqShared;

static __host__ __device__ size_t
IqSharedBytes(int dp, int k)
{
	const size_t rs = (size_t) IQ_RS(dp);

	return rs * IQ_BM + 2 * rs * IQ_BN + sizeof(int32_t) *
		(2 * IQ_BN + 2 * IQ_BM + 2 * IQ_BM * IQ_ROUND + IQ_BM +
		 2 * (size_t) IQ_BM * k + IQ_BM + 2);
}

static __device__ IqShared
IqCarve(unsigned char *base, int dp, int k)
{
	const size_t rs = (size_t) IQ_RS(dp);
	IqShared	s;
	int32_t    *w;

	s.q = (int8_t *) base;
	s.c = s.q + rs * IQ_BM;
	w = (int32_t *) (s.c + 2 * rs * IQ_BN);
	s.cn = w;
	s.qn = w + 2 * IQ_BN;
	s.lim = s.qn + IQ_BM;
	s.pend_d = s.lim + IQ_BM;
	s.pend_c = s.pend_d + IQ_BM * IQ_ROUND;
	s.pend_n = s.pend_c + IQ_BM * IQ_ROUND;
	s.list_d = s.pend_n + IQ_BM;
	s.list_c = s.list_d + IQ_BM * k;
	s.list_n = s.list_c + IQ_BM * k;
	s.flags = s.list_n + IQ_BM;
	return s;
}

/* Queues one candidate tile's rows and norms (cp.async). */
static __device__ __forceinline__ void
IqIssueTile(const IqArgs &a, const IqShared &s, int buf, int64_t tile)
{
	const int8_t *src = a.c + tile * IQ_BN * a.dp;
	const int	rs = IQ_RS(a.dp);
	const int	r = threadIdx.x % IQ_BN;

	/* two threads a row, taking every other 16 bytes */
	for (int o = 16 * (threadIdx.x / IQ_BN); o < a.dp; o += 32)
		__pipeline_memcpy_async(s.c + (buf * IQ_BN + r) * rs + o, src + (int64_t) r * a.dp + o, 16);
	if (threadIdx.x < IQ_BN / 4)
		__pipeline_memcpy_async(s.cn + buf * IQ_BN + threadIdx.x * 4,
								a.cn + tile * IQ_BN + threadIdx.x * 4, 16);
	__pipeline_commit();
}

/*
 * Queues the rows of tiles [tile, tile + 2) (cp.async), thread i taking
 * row i, and with norms their norms.  The count sweep's span.
 */
static_assert(IQ_COUNT_SPAN * IQ_BN == IQ_THREADS, "a span holds a row per thread");

static __device__ __forceinline__ void
IqIssueSpan(const IqArgs &a, int8_t *sc, int32_t *scn, int rs, int dp, int64_t tile,
			bool norms)
{
	const int64_t row = tile * IQ_BN + threadIdx.x;
	const int8_t *src = a.c + row * dp;
	int8_t	   *dst = sc + threadIdx.x * rs;

	if (row < a.ctiles * IQ_BN)
		for (int o = 0; o < dp; o += 16)
			__pipeline_memcpy_async(dst + o, src + o, 16);
	if (norms && threadIdx.x < IQ_THREADS / 4 &&
		tile * IQ_BN + threadIdx.x * 4 < a.ctiles * IQ_BN)
		__pipeline_memcpy_async(scn + threadIdx.x * 4, a.cn + tile * IQ_BN + threadIdx.x * 4, 16);
	__pipeline_commit();
}

static __device__ __forceinline__ uint32_t
IqLd(const int8_t *p)
{
	return *(const uint32_t *) p;
}

/*
 * acc += A (16 x KS, row) * B (KS x 8, col), int8 in, int32 sums; with
 * FIRST, acc = A * B (no zeroing of the accumulators).
 */
template <int KS, bool FIRST>
static __device__ __forceinline__ void
IqMma(int32_t (&acc)[4], const uint32_t (&a)[KS / 8], const uint32_t (&b)[KS / 16])
{
	if (FIRST && KS == 32)
		asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
					 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
					 : "=r"(acc[0]), "=r"(acc[1]), "=r"(acc[2]), "=r"(acc[3])
					 : "r"(a[0]), "r"(a[1]), "r"(a[KS / 8 > 2 ? 2 : 0]),
					 "r"(a[KS / 8 > 3 ? 3 : 0]), "r"(b[0]), "r"(b[KS / 16 > 1 ? 1 : 0]), "r"(0));
	else if (FIRST)
		asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
					 "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};\n"
					 : "=r"(acc[0]), "=r"(acc[1]), "=r"(acc[2]), "=r"(acc[3])
					 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(0));
	else if (KS == 32)
		asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
					 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
					 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
					 : "r"(a[0]), "r"(a[1]), "r"(a[KS / 8 > 2 ? 2 : 0]),
					 "r"(a[KS / 8 > 3 ? 3 : 0]), "r"(b[0]), "r"(b[KS / 16 > 1 ? 1 : 0]));
	else
		asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
					 "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
					 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
					 : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

/*
 * Where a thread's products lie in the block's 64 x 128 tile: warp (wm,
 * wn) gets queries 32 wm + [0, 32) and, in n-subtile r, candidates 32 r +
 * 8 wn + [0, 8), so that round r of the test covers columns [32 r, 32 r +
 * 32); lane (g, t4) holds the m16n8 fragments' rows g and g + 8, columns
 * 2 t4 and 2 t4 + 1.  IqProducts fills them, IqPassers reads them.
 */
typedef struct IqPlace
{
	int			g,
				t4,
				wm,
				wn;
} IqPlace;

static __device__ __forceinline__ IqPlace
IqPlaceOf(void)
{
	const int	lane = threadIdx.x % 32,
				warp = threadIdx.x / 32;
	IqPlace		p;

	p.g = lane / 4;
	p.t4 = lane % 4;
	p.wm = warp % 2;
	p.wn = warp / 2;
	return p;
}

/*
 * The exact products of the block's 64 query rows (sq) with one tile of
 * 128 candidate rows (sc), both at row stride rs, placed as IqPlace says.
 */
template <int KS, int DP = 0>
static __device__ __forceinline__ void
IqProducts(const int8_t *sq, const int8_t *sc, int rs_, int dp_, int32_t (&acc)[2][4][4])
{
	/* DP > 0: the padded dimensions known at compile time */
	const int	dp = DP > 0 ? DP : dp_,
				rs = DP > 0 ? IQ_RS(DP) : rs_;
	const IqPlace pl = IqPlaceOf();
	const int	g = pl.g,
				t4 = pl.t4,
				wm = pl.wm,
				wn = pl.wn;

	for (int kk = 0; kk < dp; kk += KS)
	{
		uint32_t	af[2][KS / 8];

#pragma unroll
		for (int mt = 0; mt < 2; mt++)
		{
			const int8_t *p0 = sq + (32 * wm + 16 * mt + g) * rs + kk + 4 * t4;
			const int8_t *p1 = p0 + 8 * rs;

			af[mt][0] = IqLd(p0);
			af[mt][1] = IqLd(p1);
			if (KS == 32)
			{
				af[mt][KS / 8 > 2 ? 2 : 0] = IqLd(p0 + 16);
				af[mt][KS / 8 > 3 ? 3 : 0] = IqLd(p1 + 16);
			}
		}
#pragma unroll
		for (int r = 0; r < 4; r++)
		{
			const int8_t *pb = sc + (32 * r + 8 * wn + g) * rs + kk + 4 * t4;
			uint32_t	bf[KS / 16];

			bf[0] = IqLd(pb);
			if (KS == 32)
				bf[KS / 16 > 1 ? 1 : 0] = IqLd(pb + 16);
#pragma unroll
			for (int mt = 0; mt < 2; mt++)
				if (kk == 0)
					IqMma<KS, true>(acc[mt][r], af[mt], bf);
				else
					IqMma<KS, false>(acc[mt][r], af[mt], bf);
		}
	}
}

/*
 * Merges every query's buffer into its list, one warp per query: each
 * entry's place is its rank among the buffer plus its rank in the list
 * (all keys (distance, index) are distinct), and the k first places stay.
 */
static __device__ void
IqMerge(const IqShared &s, int k)
{
	const int	lane = threadIdx.x % 32;

	for (int q = threadIdx.x / 32; q < IQ_BM; q += IQ_WARPS)
	{
		const int	np = s.pend_n[q];
		const int	ln = s.list_n[q];
		int32_t    *ld = s.list_d + q * k;
		int32_t    *lc = s.list_c + q * k;
		int			pd = INT_MAX,
					pc = INT_MAX,
					rp = 0,
					lo = 0,
					hi = ln;
		int			md[2],
					mc[2],
					mpos[2];

		if (np == 0)
			continue;
		if (lane < np)
		{
			pd = s.pend_d[q * IQ_ROUND + lane];
			pc = s.pend_c[q * IQ_ROUND + lane];
		}
		for (int j = 0; j < np; j++)
		{
			const int	od = __shfl_sync(0xffffffffu, pd, j);
			const int	oc = __shfl_sync(0xffffffffu, pc, j);

			rp += (od < pd || (od == pd && oc < pc));
		}
		while (lo < hi)
		{
			const int	mid = (lo + hi) / 2;

			if (ld[mid] < pd || (ld[mid] == pd && lc[mid] < pc))
				lo = mid + 1;
			else
				hi = mid;
		}
#pragma unroll
		for (int e = 0; e < 2; e++)
		{
			const int	i = lane + 32 * e;

			md[e] = INT_MAX;
			mc[e] = INT_MAX;
			mpos[e] = INT_MAX;
			if (i < ln)
			{
				md[e] = ld[i];
				mc[e] = lc[i];
			}
		}
#pragma unroll
		for (int e = 0; e < 2; e++)
		{
			int			before = 0;

			for (int j = 0; j < np; j++)
			{
				const int	od = __shfl_sync(0xffffffffu, pd, j);
				const int	oc = __shfl_sync(0xffffffffu, pc, j);

				before += (od < md[e] || (od == md[e] && oc < mc[e]));
			}
			if (lane + 32 * e < ln)
				mpos[e] = lane + 32 * e + before;
		}
		__syncwarp();
		if (lane < np && rp + lo < k)
		{
			ld[rp + lo] = pd;
			lc[rp + lo] = pc;
		}
#pragma unroll
		for (int e = 0; e < 2; e++)
			if (mpos[e] < k)
			{
				ld[mpos[e]] = md[e];
				lc[mpos[e]] = mc[e];
			}
		__syncwarp();
		if (lane == 0)
		{
			const int	n = ln + np < k ? ln + np : k;

			s.list_n[q] = n;
			s.pend_n[q] = 0;
			s.lim[q] = n == k ? ld[k - 1] : IQ_ALL;
		}
		__syncwarp();
	}
}

/*
 * The thread's products of n-subtiles [r0, r1) whose distance d is under
 * their query's limit (a query's pair with itself, and padding, left
 * out): the list sweep (COUNT false) appends (d, index) to the query's
 * buffer in s, setting s.flags; the count sweep adds one to the query's
 * bin d and to added[q].  With FOLD the products are 2 q.c - |c|^2
 * already (IqRowsKernel), else 2 q.c, and cn gives |c|^2.  One test a row
 * comes first, and only a row with a passer is taken pair by pair:
 * passers are rare once limits fall.
 */
template <bool COUNT, bool FOLD>
static __device__ __forceinline__ void
IqPassers(const IqArgs &a, const int32_t *qn_s, const int32_t *lim,
		  const int32_t (&acc)[2][4][4], const int32_t *cn, int64_t tile,
		  int r0, int r1, int64_t qrow0, const IqShared &s, uint32_t *bins,
		  int32_t *added)
{
	const IqPlace pl = IqPlaceOf();
	const int	g = pl.g,
				t4 = pl.t4,
				wm = pl.wm,
				wn = pl.wn;
	int32_t		tq[2][2],
				top[2][2];
	bool		any = false,
				over = false,
				hit = false;

#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++)
		{
			const int	q = 32 * wm + 16 * mt + g + 8 * h;

			tq[mt][h] = qn_s[q] - lim[q];
			top[mt][h] = INT_MIN;
		}
#pragma unroll
	for (int r = r0; r < r1; r++)
#pragma unroll
		for (int j = 0; j < 2; j++)
		{
			const int32_t c = FOLD ? 0 : cn[32 * r + 8 * wn + 2 * t4 + j];

#pragma unroll
			for (int mt = 0; mt < 2; mt++)
#pragma unroll
				for (int h = 0; h < 2; h++)
					top[mt][h] = max(top[mt][h],
									 FOLD ? acc[mt][r][2 * h + j] : 2 * acc[mt][r][2 * h + j] - c);
		}
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++)
			any |= top[mt][h] > tq[mt][h];
	if (!any)
		return;
	{
		const int64_t cbase = tile * IQ_BN;
		/* columns past the real candidates, and each row's own column, stay out */
		const int	col_end = a.nc - cbase < IQ_BN ? (int) (a.nc - cbase) : IQ_BN;

#pragma unroll
		for (int mt = 0; mt < 2; mt++)
#pragma unroll
			for (int h = 0; h < 2; h++)
			{
				const int	q = 32 * wm + 16 * mt + g + 8 * h;
				const int64_t self = qrow0 + q + a.self_shift - cbase;
				const int	self_col = a.exclude_self && self >= 0 && self < IQ_BN ? (int) self : -1;
				const int32_t qn = qn_s[q];
				int			n = 0;

				if (top[mt][h] <= tq[mt][h])
					continue;
#pragma unroll
				for (int r = r0; r < r1; r++)
#pragma unroll
					for (int j = 0; j < 2; j++)
					{
						const int	col = 32 * r + 8 * wn + 2 * t4 + j;
						const int32_t v = FOLD ? acc[mt][r][2 * h + j] :
							2 * acc[mt][r][2 * h + j] - cn[col];
						int			d;

						if (v <= tq[mt][h] || col >= col_end || col == self_col)
							continue;
						d = qn - v;
						n++;
						if (COUNT)
							atomicAdd(&bins[q * (a.hbins / 2) + d / 2], 1u << (16 * (d & 1)));
						else
						{
							const int	slot = atomicAdd(&s.pend_n[q], 1);

							if (slot < IQ_ROUND)
							{
								s.pend_d[q * IQ_ROUND + slot] = d;
								s.pend_c[q * IQ_ROUND + slot] = (int32_t) (cbase + col);
							}
							else
								over = true;
						}
					}
				if (COUNT && n > 0)
					atomicAdd(&added[q], n);
				hit |= n > 0;
			}
	}
	if (!COUNT && hit)
		s.flags[0] = 1;
	if (over)
		s.flags[1] = 1;
}

/* Copies the block's 64 query rows into shared memory at row stride rs. */
static __device__ __forceinline__ void
IqLoadQueries(const IqArgs &a, int8_t *sq, int rs, int64_t qrow0)
{
	for (int i = threadIdx.x; i < IQ_BM * (a.dp / 16); i += IQ_THREADS)
	{
		const int	r = i / (a.dp / 16),
					o = (i % (a.dp / 16)) * 16;

		*(int4 *) (sq + r * rs + o) = *(const int4 *) (a.q + (qrow0 + r) * a.dp + o);
	}
}

/*
 * One block: queries [64 b, 64 b + 64) of the chunk against candidate
 * range blockIdx.y, swept in ascending tiles; writes the range's list of
 * each query (ascending (distance, index)) to out.
 */
template <int KS, bool FOLD>
static __global__ void __launch_bounds__(IQ_THREADS)
IqSweepKernel(const __grid_constant__ IqArgs a)
{
	extern __shared__ __align__(16) unsigned char iq_smem[];
	const IqShared s = IqCarve(iq_smem, a.dp, a.k);
	const int64_t qb = a.qblock0 + blockIdx.x;
	const int64_t qrow0 = qb * IQ_BM;
	const int64_t t0 = (int64_t) blockIdx.y * a.range_tiles;
	const int64_t t1 = t0 + a.range_tiles < a.ctiles ? t0 + a.range_tiles : a.ctiles;
	const int	rs = IQ_RS(a.dp);
	int			lim0 = IQ_NONE;

	/* the queries, their limits and empty lists; a block of settled queries stops */
	if (threadIdx.x < IQ_BM && qrow0 + threadIdx.x < a.nq)
		lim0 = a.init_lim != NULL ? a.init_lim[qrow0 + threadIdx.x] : IQ_ALL;
	if (!__syncthreads_or(lim0 != IQ_NONE))
	{
		if (threadIdx.x < IQ_BM)
			a.out_n[(int64_t) blockIdx.y * a.nq_pad + qrow0 + threadIdx.x] = 0;
		return;
	}
	IqLoadQueries(a, s.q, rs, qrow0);
	if (threadIdx.x < IQ_BM)
	{
		s.qn[threadIdx.x] = a.qn[qrow0 + threadIdx.x];
		s.lim[threadIdx.x] = lim0;
		s.pend_n[threadIdx.x] = 0;
		s.list_n[threadIdx.x] = 0;
	}
	if (threadIdx.x < 2)
		s.flags[threadIdx.x] = 0;
	if (t0 < t1)
		IqIssueTile(a, s, 0, t0);

	for (int64_t t = t0; t < t1; t++)
	{
		const int	buf = (int) ((t - t0) & 1);
		int32_t		acc[2][4][4];
		int			f0,
					f1;

		if (t + 1 < t1)
		{
			IqIssueTile(a, s, buf ^ 1, t + 1);
			__pipeline_wait_prior(1);
		}
		else
			__pipeline_wait_prior(0);
		__syncthreads();

		IqProducts<KS>(s.q, s.c + buf * IQ_BN * rs, rs, a.dp, acc);

		IqPassers<false, FOLD>(a, s.qn, s.lim, acc, s.cn + buf * IQ_BN, t, 0, 4, qrow0, s, NULL, NULL);
		__syncthreads();
		f0 = s.flags[0];
		f1 = s.flags[1];
		if (f1)
		{
			/* a buffer overflowed: the tile again, one round at a time */
			__syncthreads();
			if (threadIdx.x < IQ_BM)
				s.pend_n[threadIdx.x] = 0;
			if (threadIdx.x < 2)
				s.flags[threadIdx.x] = 0;
			__syncthreads();
#pragma unroll
			for (int r = 0; r < 4; r++)
			{
				IqPassers<false, FOLD>(a, s.qn, s.lim, acc, s.cn + buf * IQ_BN, t, r, r + 1, qrow0, s, NULL, NULL);
				__syncthreads();
				if (s.flags[0])
					IqMerge(s, a.k);
				__syncthreads();
				if (threadIdx.x < 2)
					s.flags[threadIdx.x] = 0;
				__syncthreads();
			}
		}
		else if (f0)
		{
			IqMerge(s, a.k);
			__syncthreads();
			if (threadIdx.x == 0)
				s.flags[0] = 0;
		}
	}
	__syncthreads();

	/* the range's lists */
	for (int i = threadIdx.x; i < IQ_BM * a.k; i += IQ_THREADS)
	{
		const int	q = i / a.k,
					e = i % a.k;
		const int64_t o = ((int64_t) blockIdx.y * a.nq_pad + qrow0 + q) * a.k + e;

		if (e < s.list_n[q])
		{
			a.out_d[o] = s.list_d[q * a.k + e];
			a.out_c[o] = s.list_c[q * a.k + e];
		}
	}
	if (threadIdx.x < IQ_BM)
		a.out_n[(int64_t) blockIdx.y * a.nq_pad + qrow0 + threadIdx.x] = s.list_n[threadIdx.x];
}

/* The shared memory of one count block (bins: two 16-bit counts a word). */
static __host__ __device__ size_t
IqCountSharedBytes(int dp, int hbins)
{
	const size_t rs = (size_t) IQ_RS(dp);

	return rs * IQ_BM + 2 * IQ_COUNT_SPAN * rs * IQ_BN +
		sizeof(int32_t) * (2 * IQ_COUNT_SPAN * IQ_BN + 3 * IQ_BM + (size_t) IQ_BM * hbins / 2);
}

/*
 * Lane's word j of the bins summed over rows rows at stride apart: its two
 * counts under lim (values 2 j and 2 j + 1), and their inclusive prefix
 * sum over the warp (every lane calls it).
 */
static __device__ __forceinline__ int
IqWordCounts(const uint32_t *bins, int rows, int64_t stride, int j, int lim,
			 int *c0, int *c1)
{
	const int	lane = threadIdx.x % 32;
	int			incl;

	*c0 = 0;
	*c1 = 0;
	for (int r = 0; r < rows; r++)
	{
		const uint32_t word = 2 * j < lim ? bins[r * stride + j] : 0u;

		*c0 += (int) (word & 0xffffu);
		*c1 += 2 * j + 1 < lim ? (int) (word >> 16) : 0;
	}
	incl = *c0 + *c1;
	for (int o = 1; o < 32; o <<= 1)
	{
		const int	t = __shfl_up_sync(0xffffffffu, incl, o);

		if (lane >= o)
			incl += t;
	}
	return incl;
}

/* The canonical float of integer distance d (odp_distance.h). */
static __device__ __forceinline__ float
IqCanonical(int d, int euclid)
{
	return euclid ? sqrtf((float) d) : (float) d;
}

/*
 * The smallest v under lim whose bins [0, v] of the summed rows hold at
 * least k counts, for one warp (-1: none), and in *below the counts under
 * it.  rows bins rows of hw words at stride stride apart.
 */
static __device__ int
IqKth(const uint32_t *bins, int rows, int64_t stride, int lim, int k, int *below)
{
	const int	lane = threadIdx.x % 32;
	int			cum = 0;

	for (int w0 = 0; 2 * w0 < lim; w0 += 32)
	{
		const int	j = w0 + lane;
		int			c0,
					c1;
		const int	incl = IqWordCounts(bins, rows, stride, j, lim, &c0, &c1);
		int			total;
		unsigned	hit;

		total = __shfl_sync(0xffffffffu, incl, 31);
		hit = __ballot_sync(0xffffffffu, cum + incl >= k);
		if (hit != 0)
		{
			const int	f = __ffs(hit) - 1;
			const int	excl = cum + incl - c0 - c1;
			int			v = excl + c0 >= k ? 2 * j : 2 * j + 1;
			int			b = excl + c0 >= k ? excl : excl + c0;

			v = __shfl_sync(0xffffffffu, v, f);
			*below = __shfl_sync(0xffffffffu, b, f);
			return v;
		}
		cum += total;
	}
	*below = cum;
	return -1;
}

/*
 * Count sweep: queries [64 b, 64 b + 64) against candidate range
 * blockIdx.y, IQ_COUNT_SPAN tiles between barriers (DP > 0: dp known at
 * compile time, so the products' addresses are constants), counting each
 * query's distances in bins [0, hbins) under a limit that falls to the
 * k-th smallest counted value as counts come in (a value that ties it
 * adds nothing to the k smallest values).  Each warp
 * keeps the limits of 8 queries, after its own span, while the others go
 * on, and only once max(k, 16) counts came in since the last time: a late
 * limit only lets more through, and no bin passes k + 16 + two spans of
 * counts before a limit falls below it, far from 2^16.  Writes the limits
 * and bins.
 */
template <int KS, bool FOLD, int DP>
static __global__ void __launch_bounds__(IQ_THREADS)
IqCountKernel(const __grid_constant__ IqArgs a)
{
	extern __shared__ __align__(16) unsigned char iq_smem[];
	const int	dp = DP > 0 ? DP : a.dp;
	const int	rs = IQ_RS(dp);
	const int	hw = a.hbins / 2;
	int8_t	   *sq = (int8_t *) iq_smem;
	int8_t	   *sc = sq + rs * IQ_BM;
	int32_t    *cn = (int32_t *) (sc + 2 * IQ_COUNT_SPAN * rs * IQ_BN);
	int32_t    *qn = cn + 2 * IQ_COUNT_SPAN * IQ_BN;
	int32_t    *lim = qn + IQ_BM;
	int32_t    *added = lim + IQ_BM;
	uint32_t   *bins = (uint32_t *) (added + IQ_BM);
	const int	every = a.k > 16 ? a.k : 16;
	const int64_t qrow0 = (a.qblock0 + blockIdx.x) * IQ_BM;
	const int64_t t0 = (int64_t) blockIdx.y * a.range_tiles;
	const int64_t t1 = t0 + a.range_tiles < a.ctiles ? t0 + a.range_tiles : a.ctiles;
	const int	warp = threadIdx.x / 32;
	IqShared	io;				/* the list sweep's; unused by counts */

	IqLoadQueries(a, sq, rs, qrow0);
	for (int i = threadIdx.x; i < IQ_BM * hw; i += IQ_THREADS)
		bins[i] = 0;
	if (threadIdx.x < IQ_BM)
	{
		qn[threadIdx.x] = a.qn[qrow0 + threadIdx.x];
		lim[threadIdx.x] = qrow0 + threadIdx.x < a.nq ? a.hbins : IQ_NONE;
		added[threadIdx.x] = 0;
	}
	IqIssueSpan(a, sc, cn, rs, dp, t0, !FOLD);

	/* IQ_COUNT_SPAN tiles between barriers, the next span loading meanwhile */
	for (int64_t t = t0; t < t1; t += IQ_COUNT_SPAN)
	{
		const int	buf = (int) (((t - t0) / IQ_COUNT_SPAN) & 1) * IQ_COUNT_SPAN;

		/* this span landed, and every thread is done with the other one */
		__pipeline_wait_prior(0);
		__syncthreads();
		if (t + IQ_COUNT_SPAN < t1)
			IqIssueSpan(a, sc + (IQ_COUNT_SPAN - buf) * IQ_BN * rs,
						cn + (IQ_COUNT_SPAN - buf) * IQ_BN, rs, dp, t + IQ_COUNT_SPAN, !FOLD);
#pragma unroll
		for (int h = 0; h < IQ_COUNT_SPAN; h++)
		{
			int32_t		acc[2][4][4];

			if (t + h >= t1)
				break;
			IqProducts<KS, DP>(sq, sc + (buf + h) * IQ_BN * rs, rs, dp, acc);
			IqPassers<true, FOLD>(a, qn, lim, acc, cn + (buf + h) * IQ_BN, t + h, 0, 4,
								  qrow0, io, bins, added);
		}
		__syncwarp();
		{
			const int4	c0 = *(const int4 *) (added + 8 * warp);
			const int4	c1 = *(const int4 *) (added + 8 * warp + 4);
			const int	most = max(max(max(c0.x, c0.y), max(c0.z, c0.w)),
								   max(max(c1.x, c1.y), max(c1.z, c1.w)));

			/* one lane's view for all */
			if (__shfl_sync(0xffffffffu, most, 0) < every)
				continue;
		}
		for (int q = 8 * warp; q < 8 * warp + 8; q++)
		{
			/* other warps count as this one reads: one lane's view for all */
			const int	fresh = __shfl_sync(0xffffffffu, added[q], 0);
			int			below,
						v,
						lq;

			if (fresh < every)
				continue;
			__syncwarp();
			if (threadIdx.x % 32 == 0)
				atomicSub(&added[q], fresh);
			lq = __shfl_sync(0xffffffffu, lim[q], 0);
			v = IqKth(bins + q * hw, 1, 0, lq, a.k, &below);
			if (v >= 0 && v < lq && threadIdx.x % 32 == 0)
				lim[q] = v;
			__syncwarp();
		}
	}
	__syncthreads();
	for (int i = threadIdx.x; i < IQ_BM * hw; i += IQ_THREADS)
		a.out_bins[((int64_t) blockIdx.y * a.nq_pad + qrow0) * hw + i] = bins[i];
	if (threadIdx.x < IQ_BM)
		a.out_lim[(int64_t) blockIdx.y * a.nq_pad + qrow0 + threadIdx.x] = lim[threadIdx.x];
}

/*
 * Each query's k-th smallest distance t from its ranges' bins, one warp
 * per query.  Every value under L, the least range limit, was counted in
 * every range; a range with limit L holds k values up to L, so t is L when
 * the counts under L are fewer than k.  With every limit still at hbins
 * and fewer than k counts, t is unknown and init_lim gets IQ_ALL (the list
 * sweep finds the query's neighbours).  Otherwise, with values (the
 * outlier scores), the k smallest values are written as the canonical
 * floats and init_lim gets IQ_NONE; without, init_lim gets t + 1, the
 * list sweep's first limit.
 */
static __global__ void
IqSettleKernel(const uint32_t *bins, const int32_t *lims, int ranges, int64_t nq,
			   int64_t nq_pad, int hbins, int k, int values, int euclid,
			   int32_t *init_lim, float *dist, int64_t *index, int32_t *count)
{
	const int64_t q = (int64_t) blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	const int	lane = threadIdx.x % 32;
	const int	hw = hbins / 2;
	int			L = hbins,
				below,
				t;

	if (q >= nq)
		return;
	for (int r = 0; r < ranges; r++)
		L = min(L, lims[(int64_t) r * nq_pad + q]);
	t = IqKth(bins + q * hw, ranges, nq_pad * hw, L, k, &below);
	if (t < 0)
	{
		if (L >= hbins)
		{
			if (lane == 0)
				init_lim[q] = IQ_ALL;
			return;
		}
		t = L;
	}
	if (!values)
	{
		if (lane == 0)
			init_lim[q] = t + 1;
		return;
	}
	/* bins under t hold fewer than k counts in all: each goes to its places */
	{
		int			base = 0;

		for (int w0 = 0; 2 * w0 < t; w0 += 32)
		{
			const int	j = w0 + lane;
			int			c0,
						c1;
			const int	incl = IqWordCounts(bins + q * hw, ranges, nq_pad * hw, j, t, &c0, &c1);

			{
				const int	p0 = base + incl - c0 - c1;
				const float f0 = IqCanonical(2 * j, euclid);
				const float f1 = IqCanonical(2 * j + 1, euclid);

				for (int e = 0; e < c0; e++)
					dist[q * k + p0 + e] = f0;
				for (int e = 0; e < c1; e++)
					dist[q * k + p0 + c0 + e] = f1;
			}
			base += __shfl_sync(0xffffffffu, incl, 31);
		}
		for (int e = below + lane; e < k; e += 32)
			dist[q * k + e] = IqCanonical(t, euclid);
		for (int e = lane; e < k; e += 32)
			index[q * k + e] = -1;
		if (lane == 0)
		{
			count[q] = k;
			init_lim[q] = IQ_NONE;
		}
	}
}

/*
 * Each query's k smallest over its ranges' lists (disjoint, each
 * ascending), as the canonical floats, into the state rows from q_first;
 * not the queries that IqSettleKernel settled.  One thread per query.
 */
static __global__ void
IqMergeKernel(const int32_t *in_d, const int32_t *in_c, const int32_t *in_n,
			  const int32_t *init_lim, int ranges, int64_t nq, int64_t nq_pad,
			  int k, int euclid, int64_t cand_base, float *dist, int64_t *index,
			  int32_t *count)
{
	const int64_t q = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int			pos[IQ_MAX_RANGES];
	int			n = 0;

	if (q >= nq || init_lim[q] == IQ_NONE)
		return;
	for (int r = 0; r < ranges; r++)
		pos[r] = 0;
	while (n < k)
	{
		int			best = -1,
					bd = 0,
					bc = 0;

		for (int r = 0; r < ranges; r++)
		{
			const int64_t row = (int64_t) r * nq_pad + q;

			if (pos[r] < in_n[row])
			{
				const int	d = in_d[row * k + pos[r]],
							c = in_c[row * k + pos[r]];

				if (best < 0 || d < bd || (d == bd && c < bc))
				{
					best = r;
					bd = d;
					bc = c;
				}
			}
		}
		if (best < 0)
			break;
		pos[best]++;
		dist[q * k + n] = IqCanonical(bd, euclid);
		index[q * k + n] = cand_base + bc;
		n++;
	}
	count[q] = n;
}

/*
 * Phase times on stderr when the environment sets ODP_INT_TRACE, for the
 * benchmarks: each mark waits for the stream.
 */
#include <stdio.h>
#include <stdlib.h>
#define IQ_MARK(name) \
	do { \
		if (trace) \
		{ \
			double		now_; \
			(void) cudaStreamSynchronize(stream); \
			now_ = odp_now_ms(); \
			fprintf(stderr, "int: %-8s %8.2f ms\n", (name), now_ - trace_t); \
			trace_t = now_; \
		} \
	} while (0)

/* An allocation the search can do without: the caller's paths run. */
#define IQ_ALLOC(ptr, bytes, what) \
	do { \
		if (OdpGpuArenaAlloc(ctx, &arena, (bytes), (what), (void **) &(ptr)) != ODP_OK) \
		{ \
			ctx->message[0] = '\0'; \
			goto cleanup; \
		} \
	} while (0)

/* The count kernel for dp padded dimensions: the common ones compiled for. */
template <bool FOLD>
static void (*IqCounter(int dp)) (const IqArgs)
{
	switch (dp)
	{
		case 16:
			return IqCountKernel<16, FOLD, 16>;
		case 32:
			return IqCountKernel<32, FOLD, 32>;
		case 64:
			return IqCountKernel<32, FOLD, 64>;
		default:
			return IqCountKernel<32, FOLD, 0>;
	}
}

/* Launches IqRangeKernel over rows x dims. */
static void
IqLaunchRange(cudaStream_t stream, const float *x, int64_t rows, int dims,
			  int *mn, int *mx, int *bad)
{
	int64_t		gy = (rows + 7) / 8;

	gy = gy < 1024 ? (gy < 1 ? 1 : gy) : 1024;
	IqRangeKernel<<<dim3((unsigned) ((dims + 31) / 32), (unsigned) gy), dim3(32, 8), 0, stream>>>(
		x, rows, dims, mn, mx, bad);
}

/*
 * Launches sweep kernel fn over query blocks [0, qblocks) of ia, per_launch
 * blocks (times ranges) at a time so that each launch stays short, with a
 * cancel check before each.
 */
static OdpStatus
IqLaunchSweep(OdpContext *ctx, cudaStream_t stream, void (*fn) (const IqArgs),
			  size_t smem, IqArgs *ia, int64_t qblocks, int64_t per_launch,
			  int ranges, const char *what)
{
	for (int64_t b0 = 0; b0 < qblocks; b0 += per_launch)
	{
		const int64_t nb = qblocks - b0 < per_launch ? qblocks - b0 : per_launch;

		if (odp_cancel_requested(ctx))
			return odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
		ia->qblock0 = b0;
		fn<<<dim3((unsigned) nb, (unsigned) ranges), IQ_THREADS, smem, stream>>>(*ia);
		ODP_CUDA_RETURN_LAUNCH(ctx, stream, what);
		ODP_CUDA_RETURN(ctx, cudaStreamSynchronize(stream), what);
	}
	return ODP_OK;
}

/* See knn_gpu_int.cuh. */
bool
OdpKnnIntEligible(const OdpKnnProblem *p, int k)
{
	return (p->metric == ODP_METRIC_EUCLIDEAN || p->metric == ODP_METRIC_SQEUCLIDEAN ||
			p->metric == ODP_METRIC_MANHATTAN) &&
		k >= 1 && k <= IQ_MAX_K && p->dims >= 1 && p->dims <= IQ_MAX_DIMS &&
		p->nq >= 1 && p->nc >= 1 && p->nc <= INT32_MAX - IQ_BN &&
		(double) p->nq * (double) p->nc >= (double) odp_gpu_knn_int_min_pairs;
}

/* See knn_gpu_int.cuh. */
OdpStatus
OdpKnnIntSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
				const OdpKnnProblem *p, OdpKnnState *state, size_t budget,
				bool *done, double *compute_ms)
{
	OdpStatus	status = ODP_OK;
	OdpGpuArena arena;
	const int	dims = p->dims;
	const int	k = state->k;
	const bool	euclid = p->metric == ODP_METRIC_EUCLIDEAN;
	int			ks,
				dp;
	bool		fold = dims + 2 <= IQ_MAX_DIMS;
	int64_t		fold_norm = 0;
	const int64_t ctiles = (p->nc + IQ_BN - 1) / IQ_BN;
	const int64_t nc_pad = ctiles * IQ_BN;
	const int64_t qchunk = p->nq < IQ_QUERY_CHUNK ? p->nq : IQ_QUERY_CHUNK;
	const int64_t qchunk_pad = (qchunk + IQ_BM - 1) / IQ_BM * IQ_BM;
	const bool	q_in_c = p->queries >= p->cands &&
		p->queries + p->nq * dims <= p->cands + p->nc * dims;
	size_t		smem;
	void		(*sweep) (const IqArgs);
	void		(*counter) (const IqArgs);
	int		   *d_mm = NULL,
			   *d_shift = NULL;
	int			mm[2 * IQ_MAX_DIMS + 1];
	int			shift[IQ_MAX_DIMS];
	int8_t	   *d_c = NULL,
			   *d_q = NULL;
	int32_t    *d_cn = NULL,
			   *d_qn = NULL,
			   *d_ld = NULL,
			   *d_lc = NULL,
			   *d_ln = NULL,
			   *d_init = NULL,
			   *d_lims = NULL;
	uint32_t   *d_bins = NULL;
	int64_t		sum = 0;
	int			ranges,
				hbins;
	double		t_start = odp_now_ms();
	const bool	trace = getenv("ODP_INT_TRACE") != NULL;
	double		trace_t = t_start;

	*done = false;
	if (!OdpKnnIntEligible(p, k) || p->cand_bound != NULL || p->cand_split != 0 ||
		state->rows != p->nq)
		return ODP_OK;
	OdpGpuArenaInit(&arena, budget);

	/* 1. detection */
	IQ_ALLOC(d_mm, (2 * IQ_MAX_DIMS + 1) * sizeof(int), "integer ranges");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_mm, 0x7f, dims * sizeof(int), stream), "clearing ranges");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_mm + IQ_MAX_DIMS, 0x80, dims * sizeof(int), stream),
				 "clearing ranges");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_mm + 2 * IQ_MAX_DIMS, 0, sizeof(int), stream),
				 "clearing ranges");
	IqLaunchRange(stream, p->cands, p->nc, dims, d_mm, d_mm + IQ_MAX_DIMS, d_mm + 2 * IQ_MAX_DIMS);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the integer range kernel");
	if (!q_in_c)
	{
		IqLaunchRange(stream, p->queries, p->nq, dims, d_mm, d_mm + IQ_MAX_DIMS,
					  d_mm + 2 * IQ_MAX_DIMS);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the integer range kernel");
	}
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(mm, d_mm, sizeof(mm), cudaMemcpyDeviceToHost, stream),
				 "reading integer ranges");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "finding integer ranges");
	if (mm[2 * IQ_MAX_DIMS] != 0)
		goto cleanup;
	for (int d = 0; d < dims; d++)
	{
		const int64_t range = (int64_t) mm[IQ_MAX_DIMS + d] - mm[d];

		/* manhattan is the squared distance where no dimension spans more than 1 */
		if (range < 0 || range > (p->metric == ODP_METRIC_MANHATTAN ? 1 : 255))
			goto cleanup;
		sum += range * range;
		shift[d] = mm[d] + (int) ((range + 1) / 2);
		/* shifted values lie in [-(range + 1) / 2, range / 2] */
		fold_norm += ((range + 1) / 2) * ((range + 1) / 2);
		fold &= (range + 1) / 2 <= IQ_FOLD_MAX_V;
	}
	fold &= fold_norm <= IQ_FOLD_MAX_NORM;
	ks = dims + (fold ? 2 : 0) <= 16 ? 16 : 32;
	dp = (dims + (fold ? 2 : 0) + ks - 1) / ks * ks;
	smem = IqSharedBytes(dp, k);
	if (fold)
	{
		sweep = ks == 16 ? IqSweepKernel<16, true> : IqSweepKernel<32, true>;
		counter = IqCounter<true>(dp);
	}
	else
	{
		sweep = ks == 16 ? IqSweepKernel<16, false> : IqSweepKernel<32, false>;
		counter = IqCounter<false>(dp);
	}
	if (sum >= (euclid ? IQ_MAX_EU_SUM : IQ_MAX_SQ_SUM) ||
		(!p->values_only && sum >= IQ_MAX_BINS && !odp_gpu_knn_int_all_lists))
		goto cleanup;
	/* bins for every distance there can be, up to IQ_MAX_BINS, in whole warps' words */
	hbins = sum + 1 < IQ_MAX_BINS ? (int) sum + 1 : IQ_MAX_BINS;
	hbins = (hbins + 63) / 64 * 64;

	/* 2. shifted int8 rows */
	IQ_ALLOC(d_shift, dims * sizeof(int), "integer shifts");
	IQ_ALLOC(d_c, (size_t) nc_pad * dp, "int8 candidate rows");
	IQ_ALLOC(d_cn, (size_t) nc_pad * sizeof(int32_t), "candidate norms");
	IQ_ALLOC(d_q, (size_t) qchunk_pad * dp, "int8 query rows");
	IQ_ALLOC(d_qn, (size_t) qchunk_pad * sizeof(int32_t), "query norms");
	ranges = (int) ((2 * (int64_t) dev->sm_count + qchunk_pad / IQ_BM - 1) / (qchunk_pad / IQ_BM));
	ranges = ranges < 1 ? 1 : (ranges > IQ_MAX_RANGES ? IQ_MAX_RANGES : ranges);
	while (ranges > 1 && p->nc / ranges < IQ_MIN_RANGE)
		ranges--;
	IQ_ALLOC(d_ld, (size_t) ranges * qchunk_pad * k * sizeof(int32_t), "integer lists");
	IQ_ALLOC(d_lc, (size_t) ranges * qchunk_pad * k * sizeof(int32_t), "integer lists");
	IQ_ALLOC(d_ln, (size_t) ranges * qchunk_pad * sizeof(int32_t), "integer list counts");
	IQ_ALLOC(d_init, (size_t) qchunk_pad * sizeof(int32_t), "integer limits");
	IQ_ALLOC(d_lims, (size_t) ranges * qchunk_pad * sizeof(int32_t), "integer count limits");
	IQ_ALLOC(d_bins, (size_t) ranges * qchunk_pad * (hbins / 2) * sizeof(uint32_t),
			 "integer distance counts");
	ODP_CUDA_TRY(ctx, OdpGpuFuncSharedAtLeast((const void *) sweep, smem),
				 "setting the integer kernel's shared memory size");
	ODP_CUDA_TRY(ctx, OdpGpuFuncSharedAtLeast((const void *) counter, IqCountSharedBytes(dp, hbins)),
				 "setting the integer count kernel's shared memory size");
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, d_shift, shift, dims * sizeof(int), stream),
				 "uploading integer shifts");
	IqRowsKernel<<<(unsigned) ((nc_pad + 7) / 8), 256, 0, stream>>>(
		p->cands, p->nc, nc_pad, dims, dp, d_shift, fold ? IQ_FOLD_CAND : IQ_FOLD_NONE,
		d_c, d_cn, IQ_PAD_NORM);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the int8 row kernel");

	IQ_MARK("prepare");

	/* 3. query chunk by query chunk */
	for (int64_t qf = 0; qf < p->nq; qf += qchunk)
	{
		const int64_t nq = p->nq - qf < qchunk ? p->nq - qf : qchunk;
		const int64_t qblocks = (nq + IQ_BM - 1) / IQ_BM;
		const int64_t range_tiles = (ctiles + ranges - 1) / ranges;
		const int	rg = (int) ((ctiles + range_tiles - 1) / range_tiles);
		int64_t		per_launch = IQ_LAUNCH_PAIRS / ((int64_t) IQ_BM * nc_pad);
		IqArgs		ia;

		per_launch = per_launch < 1 ? 1 : (per_launch > 65535 ? 65535 : per_launch);
		IqRowsKernel<<<(unsigned) ((qblocks * IQ_BM + 7) / 8), 256, 0, stream>>>(
			p->queries + qf * dims, nq, qblocks * IQ_BM, dims, dp, d_shift,
			fold ? IQ_FOLD_QUERY : IQ_FOLD_NONE, d_q, d_qn, 0);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the int8 row kernel");
		memset(&ia, 0, sizeof(ia));
		ia.q = d_q;
		ia.qn = d_qn;
		ia.c = d_c;
		ia.cn = d_cn;
		ia.nq = nq;
		ia.nq_pad = qchunk_pad;
		ia.nc = p->nc;
		ia.ctiles = ctiles;
		ia.range_tiles = range_tiles;
		ia.dp = dp;
		ia.k = k;
		ia.exclude_self = p->exclude_self ? 1 : 0;
		ia.self_shift = p->query_base + qf - p->cand_base;
		ia.out_d = d_ld;
		ia.out_c = d_lc;
		ia.out_n = d_ln;
		ia.hbins = hbins;
		ia.out_lim = d_lims;
		ia.out_bins = d_bins;
		/* counts: each query's k-th distance, or with values its k smallest */
		ODP_TRY(IqLaunchSweep(ctx, stream, counter, IqCountSharedBytes(dp, hbins), &ia,
							 qblocks, per_launch, rg, "the integer count kernel"));
		IqSettleKernel<<<(unsigned) ((nq + 7) / 8), 256, 0, stream>>>(
			d_bins, d_lims, rg, nq, qchunk_pad, hbins, k, p->values_only ? 1 : 0,
			euclid ? 1 : 0, d_init, state->dist + qf * k, state->index + qf * k,
			state->count + qf);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the integer settle kernel");
		IQ_MARK("count");
		if (trace)
		{
			int32_t    *lim = (int32_t *) malloc(nq * sizeof(int32_t));
			int64_t		open = 0;

			if (lim != NULL &&
				cudaMemcpy(lim, d_init, nq * sizeof(int32_t), cudaMemcpyDeviceToHost) == cudaSuccess)
				for (int64_t i = 0; i < nq; i++)
					open += lim[i] != IQ_NONE;
			fprintf(stderr, "int: %lld of %lld queries to the list sweep, %d bins, %d ranges, "
					"%d dimensions%s\n", (long long) open, (long long) nq, hbins, rg, dp,
					fold ? ", norms folded" : "");
			free(lim);
			trace_t = odp_now_ms();
		}
		/* lists: every query's neighbours, or those the counts left open */
		ia.init_lim = d_init;
		ODP_TRY(IqLaunchSweep(ctx, stream, sweep, smem, &ia, qblocks, per_launch, rg,
							 "the integer k-NN kernel"));
		IqMergeKernel<<<(unsigned) ((nq + 127) / 128), 128, 0, stream>>>(
			d_ld, d_lc, d_ln, d_init, rg, nq, qchunk_pad, k, euclid ? 1 : 0, p->cand_base,
			state->dist + qf * k, state->index + qf * k, state->count + qf);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the integer list merge");
		IQ_MARK("lists");
	}
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "merging integer lists");
	*done = true;
	odp_gpu_knn_int_searches++;

cleanup:
	/* nothing may still use what is freed */
	(void) cudaStreamSynchronize(stream);
	OdpGpuArenaRelease(&arena);
	*compute_ms += odp_now_ms() - t_start;
	return status;
}
