/*-------------------------------------------------------------------------
 *
 * pearson_gpu.cu
 *	  GPU path of the correlations: series prepared on the device, the
 *	  coefficients as FP64 matrix products (cuBLAS DGEMM on the tensor
 *	  cores), the threshold and the top-k selection on the device.
 *
 * Design
 * ------
 * Preparation (pearson_math.h): the series are copied to the device in chunks
 * (a large input page-locked for the copy, which then runs at the bus's
 * speed instead of through the driver's staging buffers) and prepared
 * there: for Spearman ranked first (a segmented radix sort
 * per chunk, then each value's average rank by two binary searches in its
 * sorted series), then scaled and centred by one block per series.
 * Complete data gives one plane z (unit-norm centred series); data with
 * missing values four planes (c, c^2, the presence mask and the scaled
 * values, which the exact recomputation reads).
 *
 * Products: tiles of T rows of x by up to W partners.  A self correlation
 * computes only the upper triangle: the row block [i0, i1) meets the
 * partners [i0, M), which costs a little over half of the full product.
 * Each tile is one DGEMM of the z plane into device memory, T x W float64
 * products that the consumers read as coefficients through a tile view
 * (clamped, NaN where a pair has none: PearsonTileCoefficient), with no pass of its
 * own; pairwise data takes six products of the planes, turned into
 * coefficients in place by odp_pearson_from_sums, with the exact
 * recomputation of ill-conditioned pairs, odp_pearson_pair_exact, in the same
 * kernel.  The M x M matrix never exists.
 *
 * Pairs over a threshold: cub::DeviceSelect compacts the tile's indexes
 * with |r| >= min_abs_r, in row-major order, a gather kernel fetches
 * their coefficients, and only those come back; each row block's pairs
 * are handed to the caller in (a, b) order.  The host's share is
 * pipelined: while the GPU computes tile t, tile t - 1's pairs are turned
 * into rows and, after a row block's last tile, handed over.

 *
 * Top-k lists: the shared k-selection of gpu_select.cuh, with float64
 * keys (pearson_math.h).  A warp scans one tile row, a partner at a time per
 * lane, appends the few that beat its list's k-th entry to a 32-entry
 * buffer and merges a full buffer into the list in device memory.  In a
 * self correlation the tile's off-diagonal part is also transposed
 * (cublasDgeam) and scanned for the partners' own lists, so that the
 * triangle serves every series; that needs every series' list on the
 * device, and where it does not fit (or the series do not), each row
 * block sweeps all partners instead and keeps only its own lists.
 *
 * Memory: the prepared planes stay on the device when they fit beside the
 * tiles (the common case); otherwise they are prepared into host memory
 * and panels of T and W series are copied in per tile ("staged").  Tiles
 * are at most PEARSON_TILE_ELEMS coefficients and PEARSON_TILE_FLOP operations
 * (about 10 ms on an H100), and the cancel callback is polled after each.
 * Everything comes from one arena, released on every path.
 *
 * Map of this file.  The declarations come first, then the two sections
 * that the divider comments name:
 *	- declarations: the constants (PEARSON_*), the self mask modes, the
 *	  state (GpuPearsonSide, GpuPearsonPlan, GpuPearson), the test counter
 *	  odp_gpu_pearson_staged_runs and the -DODP_PEARSON_TRACE timing;
 *	- kernels: the preparation (PearsonBlockAll, PearsonPrepKernel, and
 *	  for Spearman PearsonIotaKernel and PearsonRankKernel), reading a
 *	  tile (PearsonMasked, PearsonTileView, PearsonTileCoefficient,
 *	  PearsonFinishPairwise), the pairs over the threshold
 *	  (PearsonOverThreshold, PearsonGatherKernel) and PearsonTopKernel;
 *	- host side: helpers (PearsonBlocks, PearsonSync, PearsonPoll), the
 *	  plan and its buffers (PearsonPlan, PearsonAllocate), the preparation
 *	  (PearsonPrepChunk, PearsonPrepare), the products (PearsonPanel,
 *	  PearsonGemm, PearsonTileProducts), the pairs (PearsonSelectPairs,
 *	  PearsonFetchPairs, PearsonTakePairs), the top-k lists
 *	  (PearsonTakeTop, PearsonTakeLists), the tile loop PearsonRun,
 *	  PearsonRelease and the entry points odp_gpu_pearson and
 *	  odp_gpu_pearson_available.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "gpu/gpu_blas.cuh"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "gpu/gpu_select.cuh"
#include "pearson/pearson_internal.h"
#include "pearson/pearson_math.h"

#define PEARSON_THREADS		256
#define PEARSON_SEL_WARPS		8		/* warps (tile rows) per selection block */
#define PEARSON_PLANES			4		/* c, c^2, mask, scaled values (pairwise) */
#define PEARSON_SUMS			6		/* Sxy, n, Sx, Sy, Sxx, Syy */
#define PEARSON_MAX_T			4096	/* tile rows */
#define PEARSON_MAX_T_TRIANGLE	1024	/* tile rows over an upper triangle */
#define PEARSON_TILE_ELEMS		((int64_t) 1 << 26)
#define PEARSON_PAIR_TILE_ELEMS ((int64_t) 1 << 25)	/* when pairs are kept */
#define PEARSON_POLL_PAIRS		((int64_t) 1 << 20)	/* pairs between cancel polls */
#define PEARSON_TILE_FLOP		((double) ((int64_t) 1 << 39))
#define PEARSON_PREP_ELEMS		((int64_t) 1 << 26)	/* values per prepared chunk */

/* How the self mask of a tile is applied. */
enum
{
	PEARSON_SELF_NONE = 0,			/* x against y: every pair */
	PEARSON_SELF_UPPER,			/* pairs of a self correlation: b > a */
	PEARSON_SELF_OTHER				/* top-k of a self correlation: b != a */
};

/* One side of the problem on the device. */
typedef struct GpuPearsonSide
{
	const OdpMatrix64 *m;
	int64_t		rows;
	double	   *plane[PEARSON_PLANES];	/* resident: rows x dims each */
	double	   *host[PEARSON_PLANES];	/* staged: prepared planes in host memory */
	uint8_t    *invalid;		/* device, rows: constant series (complete) */
} GpuPearsonSide;

/* The plan of one call: sizes chosen from the memory budget. */
typedef struct GpuPearsonPlan
{
	int			nplanes;		/* 1 complete, 3 pairwise */
	int			ntiles;			/* 1 complete, 6 pairwise */
	bool		resident;		/* planes on the device */
	bool		triangle_top;	/* top-k lists of every series on the device */
	int64_t		T;				/* tile rows */
	int64_t		W;				/* tile columns */
	int64_t		prep_rows;		/* series per preparation chunk */
	int64_t		state_rows;		/* top-k lists on the device */
} GpuPearsonPlan;

/* Everything one call holds; released by GpuPearsonRelease. */
typedef struct GpuPearson
{
	OdpContext *ctx;
	const OdpPearsonJob *job;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream;
	const OdpBlas *blas;
	cublasHandle_t handle;
	GpuPearsonPlan plan;
	GpuPearsonSide x;
	GpuPearsonSide y;
	GpuPearsonSide *ys;			/* &x for a self correlation, else &y */
	bool		self;
	bool		pairwise;
	int32_t		dims;
	double		min_n;

	/* device buffers */
	double	   *tiles;			/* ntiles x T x W */
	double	   *trans;			/* T x W, triangle top-k */
	double	   *panel_a;		/* staged: nplanes x T x dims */
	double	   *panel_b;		/* staged: nplanes x W x dims */
	uint8_t    *d_miss;			/* prep: prep_rows x dims missing flags */
	double	   *d_stage;		/* staged prep: nplanes x prep_rows x dims */
	double	   *d_sorted;		/* Spearman: prep_rows x dims */
	int32_t    *d_pos;			/* Spearman: 2 x prep_rows x dims */
	int32_t    *d_offsets;		/* Spearman: prep_rows + 1 */
	void	   *d_temp;			/* CUB temporary storage */
	size_t		temp_bytes;
	uint32_t   *d_sel;			/* pairs: T x W selected indexes */
	double	   *d_selr;			/* pairs: their coefficients */
	int64_t    *d_nsel;			/* pairs: how many */
	double	   *s_key;			/* top-k lists: state_rows x k */
	int64_t    *s_tag;
	int32_t    *s_count;		/* state_rows */

	/* host buffers */
	uint32_t   *h_sel;
	double	   *h_selr;
	int64_t		h_cap;
	double	   *h_key;			/* top-k lists copied back */
	int64_t    *h_tag;
	int32_t    *h_count;
	OdpPearsonPairs pairs;			/* the current row block's pairs */
	void	   *pinned;			/* an input page-locked for its copy, or NULL */
} GpuPearson;

/* Calls that staged their series in host memory, for the tests (not thread-safe). */
extern "C" int64_t odp_gpu_pearson_staged_runs;
int64_t		odp_gpu_pearson_staged_runs = 0;

/*
 * Stage timing for benchmarks (-DODP_PEARSON_TRACE): each stage waits for
 * the stream and adds its wall time; odp_gpu_pearson_trace_print writes them
 * to stderr.  Compiled out otherwise.
 */
#ifdef ODP_PEARSON_TRACE
#include <stdio.h>
enum
{
	PEARSON_T_SETUP, PEARSON_T_PREP, PEARSON_T_GEMM, PEARSON_T_FINISH, PEARSON_T_SELECT,
	PEARSON_T_TOP, PEARSON_T_HOST, PEARSON_T_COUNT
};
static const char *const pearson_t_names[PEARSON_T_COUNT] = {
	"setup", "prepare", "gemm", "finish", "select", "top-k", "host"
};
static double pearson_t_ms[PEARSON_T_COUNT];
static double pearson_t_last;

/* Closes stage s: waits for the stream, adds the time since the last mark. */
static void
PearsonTraceMark(cudaStream_t stream, int s)
{
	double		now;

	if (stream != NULL)
		(void) cudaStreamSynchronize(stream);
	now = odp_now_ms();
	if (s >= 0)
		pearson_t_ms[s] += now - pearson_t_last;
	pearson_t_last = now;
}

/* Prints and clears the stage times. */
extern "C" void
odp_gpu_pearson_trace_print(void)
{
	for (int s = 0; s < PEARSON_T_COUNT; s++)
	{
		fprintf(stderr, "%s%s %.2f ms", s ? ", " : "pearson stages: ", pearson_t_names[s], pearson_t_ms[s]);
		pearson_t_ms[s] = 0.0;
	}
	fprintf(stderr, "\n");
}
#define PEARSON_TRACE(stream, s) PearsonTraceMark((stream), (s))
#else
#define PEARSON_TRACE(stream, s) ((void) 0)
#endif

/* ---- kernels ---- */

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

/* Whether the self mask excludes pair (a, b). */
static __device__ __forceinline__ bool
PearsonMasked(int self_mode, int64_t a, int64_t b)
{
	return (self_mode == PEARSON_SELF_UPPER && b <= a) ||
		(self_mode == PEARSON_SELF_OTHER && b == a);
}

/*
 * How the consumers of a tile (the pair selection, the top-k selection)
 * read coefficient (i, j) of ni x nj (row-major) values t.  Pairwise data
 * is finished in place first (PearsonFinishPairwise: r, or NaN for none);
 * complete data is read as the products themselves, which the reader
 * clamps and masks (a constant series, the self mask), so that no pass
 * over the tile is spent on finishing it.  a0, b0: the series of row 0
 * and column 0; inv_a, inv_b their sides' constant-series flags.
 */
struct PearsonTileView
{
	const double *t;
	int64_t		nj;
	int64_t		a0;
	int64_t		b0;
	const uint8_t *inv_a;
	const uint8_t *inv_b;
	int			self_mode;
	bool		finished;		/* t holds coefficients (pairwise data) */
};

/* Coefficient (i, j) of a tile view, NaN where the pair has none. */
static __device__ __forceinline__ double
PearsonTileCoefficient(const PearsonTileView &v, int64_t i, int64_t j)
{
	const double g = v.t[i * v.nj + j];
	const int64_t a = v.a0 + i;
	const int64_t b = v.b0 + j;

	if (v.finished)
		return g;
	if (v.inv_a[a] || v.inv_b[b] || PearsonMasked(v.self_mode, a, b))
		return NAN;
	return odp_pearson_clamp(g);
}

/* Pointers to one panel's scaled values and mask at its first series. */
struct PearsonPlanes
{
	const double *xs;
	const double *mk;
};

/*
 * Pairwise data: turns the six sum tiles (ni x nj each, consecutive) into
 * coefficients in tiles[0], recomputing ill-conditioned pairs from the
 * panels' values (xa: rows from series a0, yb: rows from series b0).
 */
static __global__ void
PearsonFinishPairwise(double *tiles, int64_t ni, int64_t nj, int64_t a0,
					  int64_t b0, int self_mode, double min_n, PearsonPlanes xa,
					  PearsonPlanes yb, int32_t dims)
{
	const int64_t i = blockIdx.y;
	const int64_t a = a0 + i;
	const int64_t stride = ni * nj;

	for (int64_t j = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; j < nj;
		 j += (int64_t) gridDim.x * blockDim.x)
	{
		const int64_t b = b0 + j;
		const int64_t e = i * nj + j;
		double		r = NAN;

		if (!PearsonMasked(self_mode, a, b))
		{
			int			got = odp_pearson_from_sums(tiles[e + stride], tiles[e + 2 * stride],
													tiles[e + 3 * stride], tiles[e + 4 * stride],
													tiles[e + 5 * stride], tiles[e], min_n, &r);

			if (got < 0)
				got = odp_pearson_pair_exact(xa.xs + i * dims, xa.mk + i * dims,
											 yb.xs + j * dims, yb.mk + j * dims,
											 dims, min_n, &r) ? 1 : 0;
			if (got == 0)
				r = NAN;
		}
		tiles[e] = r;
	}
}

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

/* ---- host side ---- */

/* Blocks for a grid-stride loop over n items, at least one. */
static unsigned
PearsonBlocks(const GpuPearson *g, int64_t n)
{
	int64_t		blocks = (n + PEARSON_THREADS - 1) / PEARSON_THREADS;
	int64_t		cap = (int64_t) g->dev.sm_count * 16;

	if (blocks > cap)
		blocks = cap;
	return (unsigned) (blocks > 0 ? blocks : 1);
}

/* Waits for the stream; returns its error status. */
static OdpStatus
PearsonSync(GpuPearson *g, const char *what)
{
	OdpStatus	status = ODP_OK;

	ODP_CUDA_TRY(g->ctx, cudaStreamSynchronize(g->stream), what);
cleanup:
	return status;
}

/* Polls the cancel callback (the stream idle). */
static OdpStatus
PearsonPoll(GpuPearson *g)
{
	if (odp_cancel_requested(g->ctx))
		return odp_fail(g->ctx, ODP_ERR_CANCELLED, "canceled");
	return ODP_OK;
}

/* Device bytes of temporary storage CUB needs for this call's steps. */
static OdpStatus
PearsonTempBytes(GpuPearson *g, size_t *bytes)
{
	OdpStatus	status = ODP_OK;
	size_t		b = 0;

	*bytes = 0;
	if (!g->job->top)
	{
		thrust::counting_iterator<uint32_t> in(0);
		PearsonOverThreshold pred;

		memset(&pred, 0, sizeof(pred));
		ODP_CUDA_TRY(g->ctx, cub::DeviceSelect::If(NULL, b, in, (uint32_t *) NULL,
												   (int64_t *) NULL,
												   g->plan.T * g->plan.W, pred,
												   g->stream),
					 "sizing the pair selection");
		*bytes = b;
	}
	if (g->job->p->method == ODP_PEARSON_METHOD_SPEARMAN)
	{
		const int	n = (int) (g->plan.prep_rows * g->dims);

		b = 0;
		ODP_CUDA_TRY(g->ctx, cub::DeviceSegmentedRadixSort::SortPairs(
						 NULL, b, (const double *) NULL, (double *) NULL,
						 (const int32_t *) NULL, (int32_t *) NULL, n,
						 (int) g->plan.prep_rows, (const int32_t *) NULL,
						 (const int32_t *) NULL + 1, 0, 64, g->stream),
					 "sizing the ranking sort");
		if (b > *bytes)
			*bytes = b;
	}
cleanup:
	return status;
}

/* Device bytes the plan in g->plan needs, CUB's temporary storage included. */
static OdpStatus
PearsonPlanBytes(GpuPearson *g, double *bytes)
{
	const GpuPearsonPlan *pl = &g->plan;
	const OdpPearsonJob *job = g->job;
	const double dims = (double) g->dims;
	const double tile = (double) pl->T * (double) pl->W;
	const double prep = (double) pl->prep_rows * dims;
	const double rows = (double) (g->x.rows + (g->self ? 0 : g->y.rows));
	double		b = (double) ODP_BLAS_WORKSPACE + rows;
	size_t		temp;
	OdpStatus	status;

	if (pl->resident)
		b += 8.0 * dims * rows * pl->nplanes;
	else
		b += 8.0 * dims * pl->nplanes * ((double) pl->T + (double) pl->W + (double) pl->prep_rows);
	b += 8.0 * tile * pl->ntiles;
	if (job->top)
		b += (pl->triangle_top ? 8.0 * tile : 0.0) +
			(double) pl->state_rows * (16.0 * job->k + 4.0);
	else
		b += 12.0 * tile + 8.0;
	if (g->pairwise)
		b += prep;
	if (job->p->method == ODP_PEARSON_METHOD_SPEARMAN)
		b += 16.0 * prep + 4.0 * ((double) pl->prep_rows + 1.0);
	if ((status = PearsonTempBytes(g, &temp)) != ODP_OK)
		return status;
	/* and the arena's rounding of about 20 allocations */
	*bytes = b + (double) temp + 20.0 * ODP_GPU_ALLOC_ALIGN;
	return ODP_OK;
}

/* Sets the plan's derived sizes: T within its limits, the list rows. */
static void
PearsonPlanClamp(GpuPearson *g)
{
	GpuPearsonPlan *pl = &g->plan;

	if (pl->T > PEARSON_MAX_T)
		pl->T = PEARSON_MAX_T;
	/*
	 * Over the upper triangle a row block also computes the lower half of
	 * its diagonal block: taller blocks waste more (T = 1024 computes 6%
	 * more than the triangle at 16,384 series, T = 4096 25%) than their
	 * larger products gain.
	 */
	if (g->self && (!g->job->top || pl->triangle_top) && pl->T > PEARSON_MAX_T_TRIANGLE)
		pl->T = PEARSON_MAX_T_TRIANGLE;
	if (pl->T >= 128 && pl->T < g->x.rows)
		pl->T -= pl->T % 64;
	if (pl->T > g->x.rows)
		pl->T = g->x.rows;
	if (pl->T < 1)
		pl->T = 1;
	if (pl->W > g->ys->rows)
		pl->W = g->ys->rows;
	if (pl->W < 1)
		pl->W = 1;
	pl->state_rows = !g->job->top ? 0 : (pl->triangle_top ? g->x.rows : pl->T);
}

/*
 * Chooses resident or staged planes and the tile sizes from the budget
 * (see the file header): resident with the largest T that fits (every
 * series' list on the device for a self top-k if that fits too), else
 * staged panels, shrunk until they fit.  ODP_ERR_GPU_OOM when not even
 * one series at a time fits.
 */
static OdpStatus
PearsonPlan(GpuPearson *g)
{
	GpuPearsonPlan *pl = &g->plan;
	const int64_t mx = g->x.rows;
	const int64_t my = g->ys->rows;
	const double budget = (double) g->dev.budget;
	int64_t		elems;
	double		bytes;
	OdpStatus	status;

	pl->nplanes = g->pairwise ? PEARSON_PLANES : 1;
	pl->ntiles = g->pairwise ? PEARSON_SUMS : 1;
	/* a tile's pairs are also held on the host (12 and 24 bytes a pair) */
	elems = g->job->top ? PEARSON_TILE_ELEMS : PEARSON_PAIR_TILE_ELEMS;

	if ((double) elems > PEARSON_TILE_FLOP / (2.0 * g->dims * pl->ntiles))
		elems = (int64_t) (PEARSON_TILE_FLOP / (2.0 * g->dims * pl->ntiles));
	pl->prep_rows = PEARSON_PREP_ELEMS / g->dims;
	if (pl->prep_rows > (mx > my ? mx : my))
		pl->prep_rows = mx > my ? mx : my;
	if (pl->prep_rows < 1)
		pl->prep_rows = 1;

	/* resident: whole rows of partners, T as large as fits */
	pl->resident = true;
	/* a part of a split call keeps its own rows' lists only */
	for (int triangle = g->job->top && g->self && g->job->row_end == 0 ? 1 : 0;
		 triangle >= 0; triangle--)
	{
		pl->triangle_top = triangle == 1;
		pl->W = my;
		pl->T = elems / my;
		while (pl->T >= 1)
		{
			PearsonPlanClamp(g);
			if ((status = PearsonPlanBytes(g, &bytes)) != ODP_OK)
				return status;
			if (bytes <= budget)
				return ODP_OK;
			if (pl->T == 1)
				break;
			pl->T = pl->T * 3 / 4;
		}
	}

	/* staged: panels of about equal sides, and smaller preparation chunks */
	pl->resident = false;
	pl->triangle_top = false;
	pl->T = pl->W = (int64_t) sqrt((double) elems);
	if (pl->prep_rows > 4096)
		pl->prep_rows = 4096;
	for (;;)
	{
		PearsonPlanClamp(g);
		if ((status = PearsonPlanBytes(g, &bytes)) != ODP_OK)
			return status;
		if (bytes <= budget)
			return ODP_OK;
		if (pl->T == 1 && pl->W == 1 && pl->prep_rows == 1)
			return odp_fail(g->ctx, ODP_ERR_GPU_OOM,
							"the GPU memory budget of %zu bytes is too small to correlate series of %d values",
							g->dev.budget, g->dims);
		pl->T = pl->T * 3 / 4;
		pl->W = pl->W * 3 / 4;
		pl->prep_rows = pl->prep_rows * 3 / 4 > 1 ? pl->prep_rows * 3 / 4 : 1;
	}
}

/* Allocates the device and host buffers the plan needs. */
static OdpStatus
PearsonAllocate(GpuPearson *g)
{
	const GpuPearsonPlan *pl = &g->plan;
	OdpContext *ctx = g->ctx;
	const size_t dims = (size_t) g->dims;
	const size_t tile = (size_t) pl->T * (size_t) pl->W;
	const size_t prep = (size_t) pl->prep_rows * dims;
	OdpStatus	status;
	void	   *p;
	GpuPearsonSide *sides[2] = {&g->x, &g->y};

	for (int s = 0; s < (g->self ? 1 : 2); s++)
	{
		GpuPearsonSide *side = sides[s];
		const size_t n = (size_t) side->rows * dims;

		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, (size_t) side->rows,
									   "the constant-series flags", &p)) != ODP_OK)
			return status;
		side->invalid = (uint8_t *) p;
		if (pl->resident)
		{
			/* one block, so that a prepared chunk's planes are pstride apart */
			if ((status = OdpGpuArenaAlloc(ctx, &g->arena,
										   n * pl->nplanes * sizeof(double),
										   "the prepared series", &p)) != ODP_OK)
				return status;
			for (int q = 0; q < pl->nplanes; q++)
				side->plane[q] = (double *) p + q * n;
		}
		else
		{
			for (int q = 0; q < pl->nplanes; q++)
				if ((side->host[q] = (double *) malloc(n * sizeof(double))) == NULL)
					return odp_fail(ctx, ODP_ERR_HOST_OOM,
									"out of host memory for %zu prepared values", n);
		}
	}
	if ((status = OdpGpuArenaAlloc(ctx, &g->arena, ODP_BLAS_WORKSPACE,
								   "the cuBLAS workspace", &p)) != ODP_OK)
		return status;
	if ((status = OdpBlasBegin(ctx, g->blas, g->stream, p, &g->handle)) != ODP_OK)
		return status;
	if ((status = OdpGpuArenaAlloc(ctx, &g->arena, tile * pl->ntiles * sizeof(double),
								   "the correlation tiles", &p)) != ODP_OK)
		return status;
	g->tiles = (double *) p;
	if (!pl->resident)
	{
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena,
									   (size_t) pl->nplanes * pl->T * dims * sizeof(double),
									   "a panel of series", &p)) != ODP_OK)
			return status;
		g->panel_a = (double *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena,
									   (size_t) pl->nplanes * pl->W * dims * sizeof(double),
									   "a panel of partners", &p)) != ODP_OK)
			return status;
		g->panel_b = (double *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena,
									   (size_t) pl->nplanes * prep * sizeof(double),
									   "the series being prepared", &p)) != ODP_OK)
			return status;
		g->d_stage = (double *) p;
	}
	if (g->pairwise)
	{
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, prep, "the missing-value flags",
									   &p)) != ODP_OK)
			return status;
		g->d_miss = (uint8_t *) p;
	}
	if (g->job->p->method == ODP_PEARSON_METHOD_SPEARMAN)
	{
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, prep * sizeof(double),
									   "the sorted series", &p)) != ODP_OK)
			return status;
		g->d_sorted = (double *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, 2 * prep * sizeof(int32_t),
									   "the value positions", &p)) != ODP_OK)
			return status;
		g->d_pos = (int32_t *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena,
									   ((size_t) pl->prep_rows + 1) * sizeof(int32_t),
									   "the series offsets", &p)) != ODP_OK)
			return status;
		g->d_offsets = (int32_t *) p;
	}
	if ((status = PearsonTempBytes(g, &g->temp_bytes)) != ODP_OK)
		return status;
	if ((status = OdpGpuArenaAlloc(ctx, &g->arena, g->temp_bytes, "CUB temporary storage",
								   &p)) != ODP_OK)
		return status;
	g->d_temp = p;
	if (g->job->top)
	{
		const size_t n = (size_t) pl->state_rows * g->job->k;

		if (pl->triangle_top)
		{
			if ((status = OdpGpuArenaAlloc(ctx, &g->arena, tile * sizeof(double),
										   "the transposed tile", &p)) != ODP_OK)
				return status;
			g->trans = (double *) p;
		}
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, n * sizeof(double),
									   "the top-k lists", &p)) != ODP_OK)
			return status;
		g->s_key = (double *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, n * sizeof(int64_t),
									   "the top-k partners", &p)) != ODP_OK)
			return status;
		g->s_tag = (int64_t *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, (size_t) pl->state_rows * sizeof(int32_t),
									   "the top-k list lengths", &p)) != ODP_OK)
			return status;
		g->s_count = (int32_t *) p;
		g->h_key = (double *) malloc(n * sizeof(double));
		g->h_tag = (int64_t *) malloc(n * sizeof(int64_t));
		g->h_count = (int32_t *) malloc((size_t) pl->state_rows * sizeof(int32_t));
		if (!g->h_key || !g->h_tag || !g->h_count)
			return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %zu top-k entries", n);
	}
	else
	{
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, tile * sizeof(uint32_t),
									   "the selected pairs", &p)) != ODP_OK)
			return status;
		g->d_sel = (uint32_t *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, tile * sizeof(double),
									   "the selected coefficients", &p)) != ODP_OK)
			return status;
		g->d_selr = (double *) p;
		if ((status = OdpGpuArenaAlloc(ctx, &g->arena, sizeof(int64_t),
									   "the pair count", &p)) != ODP_OK)
			return status;
		g->d_nsel = (int64_t *) p;
	}
	return ODP_OK;
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

	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out, m->data + (size_t) s0 * g->dims,
									  n * sizeof(double), cudaMemcpyHostToDevice,
									  g->stream),
				 "copying the series to the GPU");
	if (g->pairwise)
	{
		if (m->missing != NULL)
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g->d_miss, m->missing + (size_t) s0 * g->dims,
											  n, cudaMemcpyHostToDevice, g->stream),
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
static void
PearsonUnpin(GpuPearson *g)
{
	OdpGpuUnpinHost(g->ctx, g->pinned);
	g->pinned = NULL;
}

/* Prepares every series of side: into its device planes, or its host planes. */
static OdpStatus
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

/*
 * Points planes[] at series [s0, s0 + n) of side on the device: into its
 * resident planes, or (staged) after copying them into panel, which has
 * room for panel_rows series per plane.
 */
static OdpStatus
PearsonPanel(GpuPearson *g, const GpuPearsonSide *side, int64_t s0, int64_t n,
			 double *panel, int64_t panel_rows, const double **planes)
{
	OdpStatus	status = ODP_OK;
	const size_t dims = (size_t) g->dims;
	double		t0;

	if (g->plan.resident)
	{
		for (int q = 0; q < g->plan.nplanes; q++)
			planes[q] = side->plane[q] + (size_t) s0 * dims;
		return ODP_OK;
	}
	t0 = odp_now_ms();
	for (int q = 0; q < g->plan.nplanes; q++)
	{
		double	   *dst = panel + (size_t) q * panel_rows * dims;

		ODP_CUDA_TRY(g->ctx, cudaMemcpyAsync(dst, side->host[q] + (size_t) s0 * dims,
											 (size_t) n * dims * sizeof(double),
											 cudaMemcpyHostToDevice, g->stream),
					 "copying a panel of series to the GPU");
		planes[q] = dst;
	}
	status = PearsonSync(g, "copying a panel of series to the GPU");
	g->ctx->transfer_ms += odp_now_ms() - t0;
cleanup:
	return status;
}

/* out (ni x nj, row-major) = rows of aside (ni) . rows of bside (nj)^T. */
static OdpStatus
PearsonGemm(GpuPearson *g, const double *aside, int64_t ni, const double *bside,
			int64_t nj, double *out)
{
	const double one = 1.0;
	const double zero = 0.0;
	OdpStatus	status = ODP_OK;

	/* column-major: out^T (nj x ni) = bside^T (nj x dims) . aside (dims x ni) */
	ODP_BLAS_TRY(g->ctx, g->blas,
				 g->blas->dgemm(g->handle, CUBLAS_OP_T, CUBLAS_OP_N, (int) nj, (int) ni,
								g->dims, &one, bside, g->dims, aside, g->dims, &zero,
								out, (int) nj),
				 "the correlation matrix product (cublasDgemm)");
cleanup:
	return status;
}

/*
 * Enqueues the products of the tile rows [a0, a0 + ni) x partners
 * [b0, b0 + nj) into g->tiles, from the planes A of the rows and B of the
 * partners (pairwise data: the six sums, then their coefficients), and
 * returns how its consumers read it.
 */
static OdpStatus
PearsonTileProducts(GpuPearson *g, const double *const *A, int64_t a0, int64_t ni,
					const double *const *B, int64_t b0, int64_t nj, int self_mode,
					PearsonTileView *view)
{
	OdpContext *ctx = g->ctx;
	const int64_t stride = ni * nj;
	int64_t		gx = (nj + PEARSON_THREADS - 1) / PEARSON_THREADS;
	dim3		grid((unsigned) (gx < 65535 ? gx : 65535), (unsigned) ni);
	OdpStatus	status;

	view->t = g->tiles;
	view->nj = nj;
	view->a0 = a0;
	view->b0 = b0;
	view->inv_a = g->x.invalid;
	view->inv_b = g->ys->invalid;
	view->self_mode = self_mode;
	view->finished = g->pairwise;
	if (!g->pairwise)
	{
		status = PearsonGemm(g, A[0], ni, B[0], nj, g->tiles);
		PEARSON_TRACE(g->stream, PEARSON_T_GEMM);
		return status;
	}
	/* Sxy, n, Sx, Sy, Sxx, Syy (pearson_math.h) */
	if ((status = PearsonGemm(g, A[0], ni, B[0], nj, g->tiles)) != ODP_OK ||
		(status = PearsonGemm(g, A[2], ni, B[2], nj, g->tiles + stride)) != ODP_OK ||
		(status = PearsonGemm(g, A[0], ni, B[2], nj, g->tiles + 2 * stride)) != ODP_OK ||
		(status = PearsonGemm(g, A[2], ni, B[0], nj, g->tiles + 3 * stride)) != ODP_OK ||
		(status = PearsonGemm(g, A[1], ni, B[2], nj, g->tiles + 4 * stride)) != ODP_OK ||
		(status = PearsonGemm(g, A[2], ni, B[1], nj, g->tiles + 5 * stride)) != ODP_OK)
		return status;
	PEARSON_TRACE(g->stream, PEARSON_T_GEMM);
	{
		PearsonPlanes xa = {A[3], A[2]};
		PearsonPlanes yb = {B[3], B[2]};

		PearsonFinishPairwise<<<grid, PEARSON_THREADS, 0, g->stream>>>(
			g->tiles, ni, nj, a0, b0, self_mode, g->min_n, xa, yb, g->dims);
	}
	ODP_CUDA_TRY(ctx, cudaGetLastError(), "finishing the coefficients");
	ODP_CUDA_TRY(ctx, ODP_LAUNCH_SYNC(g->stream), "finishing the coefficients");
	PEARSON_TRACE(g->stream, PEARSON_T_FINISH);
	status = ODP_OK;
cleanup:
	return status;
}

/* A tile whose selected pairs wait in host memory (h_sel, h_selr). */
typedef struct PearsonTaken
{
	int64_t		count;			/* pairs; 0: none waiting */
	int64_t		a0;				/* the tile's first series and partner */
	int64_t		b0;
	int64_t		nj;				/* its width */
	bool		block_end;		/* the last tile of its row block */
} PearsonTaken;

/* Enqueues the selection of the tile's pairs over the threshold. */
static OdpStatus
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
static OdpStatus
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
static OdpStatus
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

/* Enqueues the merge of a tile view's ni rows into the lists of state rows row0 .. */
static OdpStatus
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
static OdpStatus
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

/*
 * The tile loop (see the file header).  Pairs are pipelined: while the GPU
 * computes tile t, the host turns tile t - 1's pairs into rows and hands
 * finished row blocks to the caller.
 */
static OdpStatus
PearsonRun(GpuPearson *g)
{
	OdpContext *ctx = g->ctx;
	const OdpPearsonJob *job = g->job;
	const GpuPearsonPlan *pl = &g->plan;
	const int64_t mx = g->x.rows;
	const int64_t my = g->ys->rows;
	const int64_t row_end = job->row_end > 0 ? job->row_end : mx;
	const bool	triangle = g->self && (!job->top || pl->triangle_top);
	const int	self_mode = !g->self ? PEARSON_SELF_NONE :
		(job->top ? PEARSON_SELF_OTHER : PEARSON_SELF_UPPER);
	PearsonTaken	taken;
	OdpStatus	status = ODP_OK;

	memset(&taken, 0, sizeof(taken));
	if (job->top && pl->triangle_top)
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(g->s_count, 0, (size_t) mx * sizeof(int32_t),
										  g->stream),
					 "clearing the top-k lists");
	for (int64_t i0 = job->row_begin; i0 < row_end; i0 += pl->T)
	{
		const int64_t ni = i0 + pl->T < row_end ? pl->T : row_end - i0;
		const int64_t jstart = triangle ? i0 : 0;
		const double *A[PEARSON_PLANES] = {NULL, NULL, NULL, NULL};

		if ((status = PearsonPanel(g, &g->x, i0, ni, g->panel_a, pl->T, A)) != ODP_OK)
			return status;
		if (job->top && !pl->triangle_top)
			ODP_CUDA_TRY(ctx, cudaMemsetAsync(g->s_count, 0, (size_t) ni * sizeof(int32_t),
											  g->stream),
						 "clearing the top-k lists");
		for (int64_t j0 = jstart; j0 < my; j0 += pl->W)
		{
			const int64_t nj = j0 + pl->W < my ? pl->W : my - j0;
			const double *B[PEARSON_PLANES] = {NULL, NULL, NULL, NULL};
			PearsonTileView view;

			if ((status = PearsonPanel(g, g->ys, j0, nj, g->panel_b, pl->W, B)) != ODP_OK ||
				(status = PearsonTileProducts(g, A, i0, ni, B, j0, nj, self_mode, &view)) != ODP_OK)
				return status;
			if (!job->top)
			{
				/* the GPU works on this tile while the host takes the last one's pairs */
				if ((status = PearsonSelectPairs(g, &view, ni)) != ODP_OK ||
					(status = PearsonTakePairs(g, &taken)) != ODP_OK ||
					(status = PearsonFetchPairs(g, &view, &taken)) != ODP_OK)
					return status;
				taken.block_end = j0 + nj >= my;
			}
			else
			{
				/* the partners' side: the tile's columns past the row block */
				const int64_t off = i0 + ni > j0 ? i0 + ni - j0 : 0;

				status = PearsonTakeTop(g, &view, ni, pl->triangle_top ? i0 : 0);
				if (status == ODP_OK && pl->triangle_top && nj > off)
				{
					const double one = 1.0;
					const double zero = 0.0;
					PearsonTileView tv = view;

					ODP_BLAS_TRY(ctx, g->blas,
								 g->blas->dgeam(g->handle, CUBLAS_OP_T, CUBLAS_OP_N,
												(int) ni, (int) (nj - off), &one,
												g->tiles + off, (int) nj, &zero, g->trans,
												(int) ni, g->trans, (int) ni),
								 "transposing a tile (cublasDgeam)");
					tv.t = g->trans;
					tv.nj = ni;
					tv.a0 = j0 + off;
					tv.b0 = i0;
					tv.inv_a = g->ys->invalid;
					tv.inv_b = g->x.invalid;
					status = PearsonTakeTop(g, &tv, nj - off, j0 + off);
				}
				/* one tile is bounded work (PEARSON_TILE_FLOP): wait, to poll */
				if (status == ODP_OK)
					status = PearsonSync(g, "computing a correlation tile");
			}
			if (status != ODP_OK)
				return status;
			ctx->chunks++;
			if ((status = PearsonPoll(g)) != ODP_OK)
				return status;
		}
		if (job->top && !pl->triangle_top &&
			(status = PearsonTakeLists(g, i0, ni)) != ODP_OK)
			return status;
	}
	if (!job->top)
		status = PearsonTakePairs(g, &taken);
	else if (pl->triangle_top)
		status = PearsonTakeLists(g, 0, mx);
cleanup:
	return status;
}

/* Frees everything the call holds; safe on any partial state. */
static void
PearsonRelease(GpuPearson *g)
{
	GpuPearsonSide *sides[2] = {&g->x, &g->y};

	if (g->stream != NULL)
		(void) cudaStreamSynchronize(g->stream);
	PearsonUnpin(g);
	if (g->handle != NULL)

		(void) g->blas->destroy(g->handle);
	OdpGpuArenaRelease(&g->arena);
	if (g->stream != NULL)
		(void) cudaStreamDestroy(g->stream);
	(void) cudaGetLastError();
	for (int s = 0; s < 2; s++)
		for (int q = 0; q < PEARSON_PLANES; q++)
			free(sides[s]->host[q]);
	free(g->h_sel);
	free(g->h_selr);
	free(g->h_key);
	free(g->h_tag);
	free(g->h_count);
	odp_pearson_pairs_free(&g->pairs);
}

/* See pearson_internal.h. */
OdpStatus
odp_gpu_pearson(OdpContext *ctx, const OdpPearsonJob *job)
{
	const OdpPearsonProblem *p = job->p;
	GpuPearson		g;
	OdpStatus	status;
	double		start = odp_now_ms();
	double		emit_before = job->emitter ? job->emitter->ms : 0.0;

	memset(&g, 0, sizeof(g));
	g.ctx = ctx;
	g.job = job;
	g.self = p->y == NULL;
	g.pairwise = p->x->missing != NULL || (p->y != NULL && p->y->missing != NULL);
	g.dims = p->x->dims;
	g.min_n = odp_pearson_min_positions(p->min_periods);
	g.x.m = p->x;
	g.x.rows = p->x->rows;
	g.y.m = p->y;
	g.y.rows = p->y ? p->y->rows : 0;
	g.ys = g.self ? &g.x : &g.y;

	PEARSON_TRACE(NULL, -1);
	if ((status = OdpGpuBegin(ctx, &g.dev)) != ODP_OK ||
		(status = OdpBlasLoad(ctx, &g.blas)) != ODP_OK)
		goto cleanup;
	OdpGpuArenaInit(&g.arena, g.dev.budget);
	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	if ((status = PearsonPlan(&g)) != ODP_OK)
		goto cleanup;
	if (!g.plan.resident)
		odp_gpu_pearson_staged_runs++;
	if ((status = PearsonAllocate(&g)) != ODP_OK)
		goto cleanup;
	PEARSON_TRACE(g.stream, PEARSON_T_SETUP);
	if ((status = PearsonPrepare(&g, &g.x)) != ODP_OK ||
		(!g.self && (status = PearsonPrepare(&g, &g.y)) != ODP_OK))
		goto cleanup;
	PEARSON_TRACE(g.stream, PEARSON_T_PREP);
	if ((status = PearsonRun(&g)) != ODP_OK)
		goto cleanup;

cleanup:
	PearsonRelease(&g);
	ctx->compute_ms = odp_now_ms() - start - ctx->transfer_ms -
		(job->emitter ? job->emitter->ms - emit_before : 0.0);
	return status;
}

/*
 * See odp_pearson.h: the GPU path needs cuBLAS, loaded at run time
 * (gpu_blas.cuh).
 */
extern "C" OdpStatus
odp_gpu_pearson_available(OdpContext *ctx)
{
	const OdpBlas *blas;
	OdpStatus	status;
	int			count = 0;

	status = odp_gpu_probe(ctx, &count, NULL, NULL);
	if (status != ODP_OK)
		return status;
	return OdpBlasLoad(ctx, &blas);
}
