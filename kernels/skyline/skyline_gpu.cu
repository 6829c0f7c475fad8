/*-------------------------------------------------------------------------
 *
 * skyline_gpu.cu
 *	  GPU path of the skyline: the presort on the device (CUB radix sorts
 *	  and scans) and the block loop of skyline_internal.h.
 *
 * Presort.  Every (feature, row) value becomes a 64-bit order-preserving
 * key; one radix sort over all of them orders the values, a second stable
 * sort by feature groups them per feature, and a scan of "differs from
 * the previous value" flags gives the dense ranks.  The rows are then
 * ordered by their key (skyline_math.h) and their ranks gathered row-major
 * in that order.
 *
 * Block loop.  One thread holds one row of the block; a CTA compares 256
 * rows with a tile of 256 partners, whose masks it holds in shared
 * memory, with the AND of each 32 of them; the few pairs the masks let
 * through read the partner's ranks from global memory (L2).  The grid
 * runs row tiles fastest, so the strongest pruners (the first window
 * tiles) are met first, and a row that reached band dominators is skipped
 * by every later CTA.  Counts go to the rows with one atomic add per CTA
 * and row.
 *
 * Plans.  Resident: the presort and the whole window on the device.
 * Staged, when that does not fit the budget: the presort on the host
 * (skyline.c), blocks copied in one at a time, the window on the device
 * as far as it fits and the rest streamed through a buffer, segment by
 * segment, for every block.  Same rows either way.
 *
 * Split (skyline_split.c).  A part of a split call runs this whole loop on
 * its device; of a block met by a large window it counts every parts-th
 * CTA's rows, and SkyShare adds the parts' counts after each step.
 *
 * Map of this file.  The declarations come first, then the two sections
 * that the divider comments name:
 *	- declarations: the constants (SKY_*), the test counters
 *	  (odp_gpu_sky_staged_runs, odp_gpu_sky_streamed_rows) and the state
 *	  of a call, GpuSky;
 *	- kernels: the presort (SkyValueKeys, SkyFeatureKeys, SkyRankFlags,
 *	  SkyScatterRanks, SkyFeatureStats, SkyKeysMasks, SkyGatherRows), the
 *	  block loop's counts (SkyDominates, SkyCount), the window's growth
 *	  (SkyMemberFlags, SkyAppendWindow), the mask order (SkyMaskKeys) and
 *	  the result (SkyScatterResult);
 *	- host side: helpers (SkyGrid, SkyAlloc), the plan and buffers
 *	  (SkyTempBytes, SkyPlan, SkyAllocate), SkyPresortDevice, the block
 *	  loop (SkyLaunchCount, SkyUploadRows, SkySortByMask, SkyShare,
 *	  SkyRunBlock), SkyRelease and the entry points odp_gpu_skyline and
 *	  odp_gpu_skyline_part.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "skyline/skyline_internal.h"
#include "skyline/skyline_math.h"

#define SKY_QTHREADS	256		/* rows of a block per CTA */
#define SKY_TILE		256		/* partners per CTA */
#define SKY_REG_DIMS	16		/* row ranks in registers up to this */
#define SKY_GRID_Y_MAX	65535
#define SKY_MIN_BLOCK	32
#define SKY_BLOCK_BYTES	((size_t) 64 << 20)	/* rank bytes of a block at most */

/* Test counters: staged runs, and window rows streamed from the host. */
extern "C" int64_t odp_gpu_sky_staged_runs;
extern "C" int64_t odp_gpu_sky_streamed_rows;
int64_t		odp_gpu_sky_staged_runs = 0;
int64_t		odp_gpu_sky_streamed_rows = 0;

typedef struct GpuSky
{
	OdpContext *ctx;
	const OdpSkylineProblem *p;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream;
	int64_t		rows;
	int			dims;
	int			band;
	bool		resident;
	int64_t		block;			/* rows per block */
	void	   *pinned;			/* the input while it is page-locked */

	/* resident: every row's ranks and mask in key order, and the order */
	uint32_t   *d_ranks;
	uint64_t   *d_masks;
	uint32_t   *d_order;

	/* staged: the host presort and a block buffer */
	OdpSkyPrep	prep;
	uint32_t   *d_branks;
	uint64_t   *d_bmasks;

	int32_t    *d_counts;		/* per position */
	int32_t    *d_c1;			/* the block's counts after step 1 */
	uint8_t    *d_flags;
	int32_t    *d_sel;
	int32_t    *d_sel2;			/* the selection sorted by mask */
	int32_t    *d_perm;			/* the block's positions in mask order */
	uint64_t   *d_selkey[2];
	int32_t    *d_nsel;
	void	   *d_temp;
	size_t		temp_bytes;
	unsigned long long *d_tests;	/* per slot: pair tests, full tests */

	/* the window: on the device up to wcap rows, then on the host */
	uint32_t   *d_wranks;
	uint64_t   *d_wmasks;
	int64_t		wcap;
	int64_t		wn;
	uint32_t   *h_wranks;
	uint64_t   *h_wmasks;
	int64_t		hwn;
	uint32_t   *d_seg_ranks;	/* streaming buffer: block rows */
	uint64_t   *d_seg_masks;
	int32_t    *h_sel;
	int32_t    *h_counts;

	/* a split call's part (skyline_split.c), or team NULL */
	OdpSkyTeam *team;
	int			part;
	int			team_parts;
	int64_t		meetings;		/* the part's so far */
	int32_t    *h_mine;			/* the block's counts: this part's */
	int32_t    *h_sum;			/* ... every part's, added up */
	int32_t    *h_base;			/* ... as the step began */
} GpuSky;

/* ---- kernels ---- */

/*
 * Item i = d * rows + r: the key of value (r, d) and its item index; the
 * smallest row with a value not finite goes to *bad.
 */
__global__ void
SkyValueKeys(const double *__restrict__ x, const uint8_t *__restrict__ maximize,
			 int64_t rows, int dims, uint64_t *key, uint32_t *item,
			 unsigned long long *bad)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= rows * dims)
		return;
	{
		int			d = (int) (i / rows);
		int64_t		r = i - (int64_t) d * rows;
		double		v = x[r * dims + d];

		if (!isfinite(v))
			atomicMin(bad, (unsigned long long) r);
		key[i] = odp_order_float64(odp_sky_value(v, maximize != NULL && maximize[d]));
		item[i] = (uint32_t) i;
	}
}

/* The feature of each value-sorted item, and its place in that order. */
__global__ void
SkyFeatureKeys(const uint32_t *__restrict__ item, int64_t n, int64_t rows,
			   uint16_t *feature, uint32_t *place)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= n)
		return;
	feature[t] = (uint16_t) (item[t] / rows);
	place[t] = (uint32_t) t;
}

/* Flag 1 where a feature's sorted run starts or the value changes. */
__global__ void
SkyRankFlags(const uint32_t *__restrict__ place, const uint64_t *__restrict__ key,
			 int64_t n, int64_t rows, uint32_t *flag)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= n)
		return;
	flag[t] = (t % rows == 0) || key[place[t]] != key[place[t - 1]];
}

/* Dense rank of each item, column-major (d * rows + r). */
__global__ void
SkyScatterRanks(const uint32_t *__restrict__ place, const uint32_t *__restrict__ item,
				const uint32_t *__restrict__ scan, int64_t n, int64_t rows,
				uint32_t *rank_cols)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= n)
		return;
	rank_cols[item[place[t]]] = scan[t] - scan[t / rows * rows];
}

/* Per feature: the largest rank and the mask thresholds. */
__global__ void
SkyFeatureStats(const uint32_t *__restrict__ scan, int64_t rows, int dims,
				int bits, uint32_t *max_rank, uint32_t *thresholds)
{
	int			d = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t *s;

	if (d >= dims)
		return;
	s = scan + (int64_t) d * rows;
	max_rank[d] = s[rows - 1] - s[0];
	if (d < odp_sky_mask_dims(dims))
		for (int b = 0; b < bits; b++)
			thresholds[d * bits + b] = s[odp_sky_threshold_pos(rows, b, bits)] - s[0];
}

/* Per row: the presort key and the mask. */
__global__ void
SkyKeysMasks(const uint32_t *__restrict__ rank_cols, const uint32_t *__restrict__ max_rank,
			 const uint32_t *__restrict__ thresholds, int64_t rows, int dims,
			 int bits, uint64_t *key, uint32_t *row, uint64_t *mask)
{
	int64_t		r = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int	mdims = odp_sky_mask_dims(dims);
	uint64_t	k = 0,
				m = 0;

	if (r >= rows)
		return;
	for (int d = 0; d < dims; d++)
	{
		uint32_t	rank = rank_cols[(int64_t) d * rows + r];

		k += (uint64_t) rank * odp_sky_weight(max_rank[d]);
		if (d < mdims)
			m |= odp_sky_mask_bits(rank, thresholds + d * bits, bits, d);
	}
	key[r] = k;
	row[r] = (uint32_t) r;
	mask[r] = m;
}

/* Ranks and masks in key order, row-major. */
__global__ void
SkyGatherRows(const uint32_t *__restrict__ rank_cols, const uint64_t *__restrict__ mask,
			  const uint32_t *__restrict__ order, int64_t rows, int dims,
			  uint32_t *ranks, uint64_t *masks)
{
	int64_t		e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (e >= rows * dims)
		return;
	{
		int64_t		pos = e / dims;
		int			d = (int) (e - pos * dims);
		uint32_t	r = order[pos];

		ranks[e] = rank_cols[(int64_t) d * rows + r];
		if (d == 0)
			masks[pos] = mask[r];
	}
}

/* Partners per group whose masks are ANDed for a group test. */
#define SKY_GROUP		32
#define SKY_GROUPS		(SKY_TILE / SKY_GROUP)

/* Mask bits (the top ones) the rows and members are ordered by. */
#define SKY_ORDER_BITS	16

/* Window size, in blocks, from which a block's rows are put in mask order. */
#define SKY_PERM_MIN_WINDOW	4

/* Slots of the test counters (pair tests, full tests) CTAs add to. */
#define SKY_TEST_SLOTS	64

/*
 * Whether partner rank row pr dominates the row's ranks: odp_sky_dominates,
 * with the row's ranks held in registers (qreg) up to QREG features.
 */
template <int QREG>
static __device__ __forceinline__ bool
SkyDominates(const uint32_t *pr, const uint32_t *qreg, const uint32_t *__restrict__ qr,
			 int dims)
{
	bool		strict = false;

	if constexpr (QREG > 0)
	{
#pragma unroll
		for (int d = 0; d < QREG; d++)
		{
			if (d < dims)
			{
				uint32_t	a = pr[d];

				if (a > qreg[d])
					return false;
				strict |= a < qreg[d];
			}
		}
	}
	else
		return odp_sky_dominates(pr, qr, dims);
	return strict;
}

/*
 * Adds to qcount[q] the partners in tile blockIdx.y (+ tile0) that
 * dominate row q, stopping at band; partners flagged by pfilter >= band
 * get an all-ones mask (skipped by nearly every row; comparing them
 * anyway changes no count below band).  triangular: partners and rows are
 * the same rows, and row q only meets partners before it.
 *
 * The masks of each group of 32 partners are ANDed: a bit every partner
 * of the group has and the row lacks rules out the whole group with one
 * test.  The window's members are appended sorted by mask, so the
 * partners of a group share the leading features' thresholds; and the
 * rows are taken in mask order too (qperm, or NULL for their own order),
 * so that the rows of a warp tend to rule out the same groups and the
 * warp skips them together.  Of a split block (skyline_split.c), part
 * counts the slots of every parts-th CTA from the part-th on.
 */
template <int QREG>
__global__ void __launch_bounds__(SKY_QTHREADS)
SkyCount(const uint32_t *__restrict__ qranks, const uint64_t *__restrict__ qmasks,
		 int32_t *qcount, int64_t nq, const int32_t *__restrict__ qperm,
		 const uint32_t *__restrict__ pranks, const uint64_t *__restrict__ pmasks,
		 const int32_t *__restrict__ pfilter, int64_t np, int64_t tile0,
		 int dims, int band, bool triangular, int part, int parts,
		 unsigned long long *tests)
{
	__shared__ uint64_t smask[SKY_TILE];
	__shared__ uint64_t sgroup[SKY_GROUPS];
	__shared__ unsigned long long spairs[SKY_QTHREADS / 32];
	__shared__ unsigned long long sfull[SKY_QTHREADS / 32];
	const int64_t slot = ((int64_t) blockIdx.x * parts + part) * SKY_QTHREADS + threadIdx.x;
	const int64_t q = qperm != NULL && slot < nq ? qperm[slot] : slot;
	const int64_t p0 = (tile0 + blockIdx.y) * SKY_TILE;
	const int64_t pend = p0 + SKY_TILE < np ? p0 + SKY_TILE : np;
	const int	lane = threadIdx.x & 31;
	int32_t		c0 = band;
	unsigned long long pairs = 0,
				full = 0;
	bool		active;

	if (q < nq)
		c0 = __ldcg(qcount + q);
	active = c0 < band && p0 < pend && (!triangular || q > p0);
	if (!__syncthreads_or(active))
		return;
	for (int j = threadIdx.x; j < SKY_TILE; j += SKY_QTHREADS)
	{
		uint64_t	m = ~(uint64_t) 0;

		if (p0 + j < pend && (pfilter == NULL || pfilter[p0 + j] < band))
			m = pmasks[p0 + j];
		smask[j] = m;
	}
	__syncthreads();
	for (int grp = threadIdx.x >> 5; grp < SKY_GROUPS; grp += SKY_QTHREADS / 32)
	{
		uint64_t	m = smask[grp * SKY_GROUP + lane];
		uint32_t	lo = __reduce_and_sync(0xffffffffu, (uint32_t) m);
		uint32_t	hi = __reduce_and_sync(0xffffffffu, (uint32_t) (m >> 32));

		if (lane == 0)
			sgroup[grp] = ((uint64_t) hi << 32) | lo;
	}
	__syncthreads();

	if (active)
	{
		const uint64_t mq = qmasks[q];
		const uint32_t *qr = qranks + q * dims;
		uint32_t	qreg[QREG > 0 ? QREG : 1];
		int64_t		jend = pend - p0;
		const int32_t need = band - c0;
		int32_t		c = 0;

		if constexpr (QREG > 0)
		{
#pragma unroll
			for (int d = 0; d < QREG; d++)
				qreg[d] = d < dims ? qr[d] : 0;
		}
		if (triangular && q - p0 < jend)
			jend = q - p0;
		for (int grp = 0; grp * SKY_GROUP < jend && c < need; grp++)
		{
			const int	gend = (int) (jend < (grp + 1) * SKY_GROUP ? jend : (grp + 1) * SKY_GROUP);

			if (sgroup[grp] & ~mq)
				continue;
			for (int j = grp * SKY_GROUP; j < gend; j++)
			{
				pairs++;
				if (smask[j] & ~mq)
					continue;
				full++;
				if (SkyDominates<QREG>(pranks + (p0 + j) * dims, qreg, qr, dims) &&
					++c >= need)
					break;
			}
		}
		if (c > 0)
			atomicAdd(qcount + q, c);
	}
	/* one add per CTA, spread over slots: one shared counter would serialise */
	for (int off = 16; off > 0; off >>= 1)
	{
		pairs += __shfl_down_sync(0xffffffffu, pairs, off);
		full += __shfl_down_sync(0xffffffffu, full, off);
	}
	if (lane == 0)
	{
		spairs[threadIdx.x >> 5] = pairs;
		sfull[threadIdx.x >> 5] = full;
	}
	__syncthreads();
	if (threadIdx.x == 0)
	{
		const int	at = (int) ((blockIdx.x + blockIdx.y) % SKY_TEST_SLOTS);

		pairs = full = 0;
		for (int w = 0; w < SKY_QTHREADS / 32; w++)
		{
			pairs += spairs[w];
			full += sfull[w];
		}
		if (pairs > 0)
		{
			atomicAdd(tests + 2 * at, pairs);
			atomicAdd(tests + 2 * at + 1, full);
		}
	}
}

/* Flags the block's rows still in the band. */
__global__ void
SkyMemberFlags(const int32_t *__restrict__ count, int64_t n, int band, uint8_t *flag)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		flag[i] = count[i] < band;
}

/* Appends the selected block rows to the device window. */
__global__ void
SkyAppendWindow(const uint32_t *__restrict__ branks, const uint64_t *__restrict__ bmasks,
				const int32_t *__restrict__ sel, int64_t take, int dims,
				uint32_t *wranks, uint64_t *wmasks)
{
	int64_t		e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (e >= take * dims)
		return;
	{
		int64_t		i = e / dims;
		int			d = (int) (e - i * dims);
		int64_t		src = sel[i];

		wranks[e] = branks[src * dims + d];
		if (d == 0)
			wmasks[i] = bmasks[src];
	}
}

/*
 * Sort keys of block rows by mask: key[i] is the mask of block row sel[i]
 * (sel NULL: row i, whose position then goes to index[i]).
 */
__global__ void
SkyMaskKeys(const uint64_t *__restrict__ bmasks, const int32_t *__restrict__ sel,
			int64_t n, uint64_t *key, int32_t *index)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		key[i] = bmasks[sel != NULL ? sel[i] : i];
		if (sel == NULL)
			index[i] = (int32_t) i;
	}
}

/* dominated_by of every input row, from the counts in key order. */
__global__ void
SkyScatterResult(const int32_t *__restrict__ counts, const uint32_t *__restrict__ order,
				 int64_t rows, int band, int32_t *out)
{
	int64_t		pos = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (pos < rows)
		out[order[pos]] = counts[pos] < band ? counts[pos] : band;
}

/* ---- host side ---- */

static inline unsigned int
SkyGrid(int64_t n, int threads)
{
	return (unsigned int) ((n + threads - 1) / threads);
}

/* Allocates from the call's arena. */
template <typename T>
static OdpStatus
SkyAlloc(GpuSky *g, size_t count, const char *what, T **ptr)
{
	size_t		bytes;

	if (!OdpSizeMul(count > 0 ? count : 1, sizeof(T), &bytes))
		return odp_fail(g->ctx, ODP_ERR_LIMIT, "%s: size overflows", what);
	return OdpGpuArenaAlloc(g->ctx, &g->arena, bytes, what, (void **) ptr);
}

/* Bytes of CUB temporary storage the block loop and the presort need. */
static OdpStatus
SkyTempBytes(GpuSky *g, int64_t cells, size_t *bytes)
{
	size_t		a = 0,
				b = 0,
				c = 0,
				s = 0;
	thrust::counting_iterator<int32_t> iota(0);

	ODP_CUDA_RETURN(g->ctx, cub::DeviceSelect::Flagged(NULL, s, iota, (uint8_t *) NULL,
													   (int32_t *) NULL, (int32_t *) NULL,
													   g->block),
					"sizing the skyline's selection");
	{
		size_t		m = 0;
		cub::DoubleBuffer<uint64_t> k64(NULL, NULL);
		cub::DoubleBuffer<int32_t> v32(NULL, NULL);

		ODP_CUDA_RETURN(g->ctx, cub::DeviceRadixSort::SortPairs(NULL, m, k64, v32, g->block),
						"sizing the skyline's member sort");
		if (m > s)
			s = m;
	}
	if (g->resident)
	{
		cub::DoubleBuffer<uint64_t> k64(NULL, NULL);
		cub::DoubleBuffer<uint32_t> v32(NULL, NULL);
		cub::DoubleBuffer<uint16_t> k16(NULL, NULL);

		ODP_CUDA_RETURN(g->ctx, cub::DeviceRadixSort::SortPairs(NULL, a, k64, v32, cells),
						"sizing the skyline's value sort");
		ODP_CUDA_RETURN(g->ctx, cub::DeviceRadixSort::SortPairs(NULL, b, k16, v32, cells),
						"sizing the skyline's feature sort");
		ODP_CUDA_RETURN(g->ctx, cub::DeviceScan::InclusiveSum(NULL, c, (uint32_t *) NULL,
															  (uint32_t *) NULL, cells),
						"sizing the skyline's rank scan");
	}
	*bytes = s;
	if (a > *bytes)
		*bytes = a;
	if (b > *bytes)
		*bytes = b;
	if (c > *bytes)
		*bytes = c;
	return ODP_OK;
}

/*
 * Chooses the plan: resident when the presort's buffers and a window of
 * every row fit the budget and the cells fit 32-bit indexes, else staged
 * with blocks and a window sized to the budget; sets the CUB scratch size
 * the plan needs (temp_bytes).
 */
static OdpStatus
SkyPlan(GpuSky *g)
{
	const int64_t cells = g->rows * (int64_t) g->dims;
	const size_t row_bytes = (size_t) g->dims * 4 + 8;
	size_t		need;
	size_t		temp = 0;
	OdpStatus	status;

	g->block = (int64_t) (SKY_BLOCK_BYTES / ((size_t) g->dims * 4));
	if (g->block > ODP_SKY_GPU_BLOCK)
		g->block = ODP_SKY_GPU_BLOCK;
	if (g->block < SKY_MIN_BLOCK)
		g->block = SKY_MIN_BLOCK;
	if (g->block > g->rows)
		g->block = g->rows;

	g->resident = cells < ((int64_t) 1 << 31);
	if (g->resident)
	{
		if ((status = SkyTempBytes(g, cells, &temp)) != ODP_OK)
			return status;
		/* values; keys 2x8; items 2x4; features 2x2; places 2x4; scan; rank
		 * columns; sorted ranks; window ranks; per row about 60 bytes */
		need = (size_t) cells * (8 + 16 + 8 + 4 + 8 + 4 + 4 + 4 + 4) +
			(size_t) g->rows * 60 + temp + ((size_t) 1 << 20);
		g->resident = need <= g->dev.budget;
	}
	if (g->resident)
	{
		g->wcap = g->rows;
		g->temp_bytes = temp;
		return ODP_OK;
	}

	/* staged: counts, then the block, the segment buffer and the window */
	{
		size_t		fixed = (size_t) g->rows * 4 + ((size_t) 64 << 10);
		size_t		per_block_row = 2 * row_bytes + 37;
		size_t		left;

		if (g->dev.budget <= fixed)
			return odp_fail(g->ctx, ODP_ERR_GPU_OOM,
							"the GPU budget of %zu bytes is too small for the skyline's %lld counts",
							g->dev.budget, (long long) g->rows);
		left = g->dev.budget - fixed;
		if ((size_t) g->block * per_block_row > left / 2)
			g->block = (int64_t) (left / 2 / per_block_row);
		if (g->block < SKY_MIN_BLOCK)
			return odp_fail(g->ctx, ODP_ERR_GPU_OOM,
							"the GPU budget of %zu bytes is too small for blocks of %d rows of %d features",
							g->dev.budget, SKY_MIN_BLOCK, g->dims);
		if ((status = SkyTempBytes(g, 0, &temp)) != ODP_OK)
			return status;
		g->temp_bytes = temp;
		left -= (size_t) g->block * per_block_row;
		left = left > temp + 8 * ODP_GPU_ALLOC_ALIGN ? left - temp - 8 * ODP_GPU_ALLOC_ALIGN : 0;
		g->wcap = (int64_t) (left / row_bytes);
		if (g->wcap > g->rows)
			g->wcap = g->rows;
	}
	return ODP_OK;
}

/* Allocates the block loop's buffers (and the resident plan's rows). */
static OdpStatus
SkyAllocate(GpuSky *g)
{
	OdpStatus	status;

	if ((status = SkyAlloc(g, g->rows, "skyline counts", &g->d_counts)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline step counts", &g->d_c1)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline flags", &g->d_flags)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline selection", &g->d_sel)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline selection", &g->d_sel2)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline row order", &g->d_perm)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline selection keys", &g->d_selkey[0])) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline selection keys", &g->d_selkey[1])) != ODP_OK ||
		(status = SkyAlloc(g, 1, "skyline selection count", &g->d_nsel)) != ODP_OK ||
		(status = SkyAlloc(g, 2 * SKY_TEST_SLOTS, "skyline test counters", &g->d_tests)) != ODP_OK ||
		(status = OdpGpuArenaAlloc(g->ctx, &g->arena, g->temp_bytes > 0 ? g->temp_bytes : 1,
								   "skyline scratch", &g->d_temp)) != ODP_OK)
		return status;
	if (g->wcap > 0 &&
		((status = SkyAlloc(g, (size_t) g->wcap * g->dims, "skyline window", &g->d_wranks)) != ODP_OK ||
		 (status = SkyAlloc(g, g->wcap, "skyline window masks", &g->d_wmasks)) != ODP_OK))
		return status;
	if (g->resident)
		return ODP_OK;
	if ((status = SkyAlloc(g, (size_t) g->block * g->dims, "skyline block", &g->d_branks)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline block masks", &g->d_bmasks)) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) g->block * g->dims, "skyline window segment", &g->d_seg_ranks)) != ODP_OK ||
		(status = SkyAlloc(g, g->block, "skyline window segment masks", &g->d_seg_masks)) != ODP_OK)
		return status;
	g->h_sel = (int32_t *) malloc(sizeof(int32_t) * (size_t) g->block);
	g->h_counts = (int32_t *) malloc(sizeof(int32_t) * (size_t) g->rows);
	if (g->h_sel == NULL || g->h_counts == NULL)
		return odp_fail(g->ctx, ODP_ERR_HOST_OOM, "out of host memory for the skyline's counts");
	return ODP_OK;
}

/* The presort on the device: ranks, keys, order, rows in key order. */
static OdpStatus
SkyPresortDevice(GpuSky *g)
{
	OdpContext *ctx = g->ctx;
	const int64_t n = g->rows * (int64_t) g->dims;
	const int	bits = odp_sky_bits_per_dim(g->dims);
	double	   *d_x;
	uint8_t    *d_max = NULL;
	uint64_t   *k64[2];
	uint32_t   *v32[2];
	uint16_t   *k16[2];
	uint32_t   *place[2];
	uint32_t   *scan;
	uint32_t   *rank_cols;
	uint32_t   *max_rank;
	uint32_t   *thr;
	uint64_t   *rkey[2];
	uint32_t   *rrow[2];
	uint64_t   *rmask;
	OdpStatus	status;
	double		t0;
	int			end_bit = 32;

	if ((status = SkyAlloc(g, (size_t) n, "skyline values", &d_x)) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline value keys", &k64[0])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline value keys", &k64[1])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline items", &v32[0])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline items", &v32[1])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline features", &k16[0])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline features", &k16[1])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline places", &place[0])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline places", &place[1])) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline rank scan", &scan)) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline rank columns", &rank_cols)) != ODP_OK ||
		(status = SkyAlloc(g, (size_t) n, "skyline ranks", &g->d_ranks)) != ODP_OK ||
		(status = SkyAlloc(g, g->rows, "skyline masks", &g->d_masks)) != ODP_OK ||
		(status = SkyAlloc(g, g->rows, "skyline order", &g->d_order)) != ODP_OK ||
		(status = SkyAlloc(g, g->dims, "skyline largest ranks", &max_rank)) != ODP_OK ||
		(status = SkyAlloc(g, ODP_SKY_MASK_BITS, "skyline thresholds", &thr)) != ODP_OK ||
		(status = SkyAlloc(g, g->rows, "skyline row keys", &rkey[0])) != ODP_OK ||
		(status = SkyAlloc(g, g->rows, "skyline row keys", &rkey[1])) != ODP_OK ||
		(status = SkyAlloc(g, g->rows, "skyline rows", &rrow[0])) != ODP_OK ||
		(status = SkyAlloc(g, g->rows, "skyline rows", &rrow[1])) != ODP_OK ||
		(status = SkyAlloc(g, g->rows, "skyline row masks", &rmask)) != ODP_OK)
		return status;
	if (g->p->maximize != NULL &&
		(status = SkyAlloc(g, g->dims, "skyline directions", &d_max)) != ODP_OK)
		return status;

	g->pinned = OdpGpuPinHost(ctx, g->p->points->data, sizeof(double) * (size_t) n);
	t0 = odp_now_ms();
	ODP_CUDA_RETURN(ctx, OdpGpuCopyIn(ctx, d_x, g->p->points->data, sizeof(double) * (size_t) n, g->stream),
					"copying the skyline's rows to the GPU");
	if (d_max != NULL)
		ODP_CUDA_RETURN(ctx, OdpGpuCopyIn(ctx, d_max, g->p->maximize, g->dims, g->stream),
						"copying the skyline's directions to the GPU");
	ODP_CUDA_RETURN(ctx, cudaStreamSynchronize(g->stream), "copying the skyline's rows to the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;
	OdpGpuUnpinHost(ctx, g->pinned);
	g->pinned = NULL;

	ODP_CUDA_RETURN(ctx, OdpGpuCopyIn(ctx, g->d_tests, &g->rows, sizeof(int64_t), g->stream),
					"checking the skyline's values");
	SkyValueKeys<<<SkyGrid(n, 256), 256, 0, g->stream>>>(d_x, d_max, g->rows, g->dims,
														 k64[0], v32[0], g->d_tests);
	ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "building the skyline's value keys");
	{
		cub::DoubleBuffer<uint64_t> keys(k64[0], k64[1]);
		cub::DoubleBuffer<uint32_t> items(v32[0], v32[1]);
		size_t		tb = g->temp_bytes;

		ODP_CUDA_RETURN(ctx, cub::DeviceRadixSort::SortPairs(g->d_temp, tb, keys, items, n,
															 0, 64, g->stream),
						"sorting the skyline's values");
		k64[0] = keys.Current();
		v32[0] = items.Current();
	}
	if (g->dims > 1)
	{
		int			fbits = 1;

		while ((1 << fbits) < g->dims)
			fbits++;
		SkyFeatureKeys<<<SkyGrid(n, 256), 256, 0, g->stream>>>(v32[0], n, g->rows,
															   k16[0], place[0]);
		ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "building the skyline's feature keys");
		{
			cub::DoubleBuffer<uint16_t> keys(k16[0], k16[1]);
			cub::DoubleBuffer<uint32_t> vals(place[0], place[1]);
			size_t		tb = g->temp_bytes;

			ODP_CUDA_RETURN(ctx, cub::DeviceRadixSort::SortPairs(g->d_temp, tb, keys, vals, n,
																 0, fbits, g->stream),
							"grouping the skyline's values by feature");
			place[0] = vals.Current();
		}
	}
	else
	{
		/* one feature: the value order is the feature's order */
		SkyFeatureKeys<<<SkyGrid(n, 256), 256, 0, g->stream>>>(v32[0], n, g->rows,
															   k16[0], place[0]);
		ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "ordering the skyline's values");
	}
	SkyRankFlags<<<SkyGrid(n, 256), 256, 0, g->stream>>>(place[0], k64[0], n, g->rows, scan);
	ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "flagging the skyline's distinct values");
	{
		size_t		tb = g->temp_bytes;

		ODP_CUDA_RETURN(ctx, cub::DeviceScan::InclusiveSum(g->d_temp, tb, scan, scan, n,
														   g->stream),
						"ranking the skyline's values");
	}
	SkyScatterRanks<<<SkyGrid(n, 256), 256, 0, g->stream>>>(place[0], v32[0], scan, n,
															g->rows, rank_cols);
	ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "storing the skyline's ranks");
	SkyFeatureStats<<<SkyGrid(g->dims, 128), 128, 0, g->stream>>>(scan, g->rows, g->dims,
																  bits, max_rank, thr);
	ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "measuring the skyline's features");
	SkyKeysMasks<<<SkyGrid(g->rows, 256), 256, 0, g->stream>>>(rank_cols, max_rank, thr,
															   g->rows, g->dims, bits,
															   rkey[0], rrow[0], rmask);
	ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "computing the skyline's keys");
	while (end_bit < 64 && ((uint64_t) g->dims << 32) >> end_bit != 0)
		end_bit++;
	{
		cub::DoubleBuffer<uint64_t> keys(rkey[0], rkey[1]);
		cub::DoubleBuffer<uint32_t> rowsb(rrow[0], rrow[1]);
		size_t		tb = g->temp_bytes;

		ODP_CUDA_RETURN(ctx, cub::DeviceRadixSort::SortPairs(g->d_temp, tb, keys, rowsb,
															 g->rows, 0, end_bit, g->stream),
						"sorting the skyline's rows by key");
		ODP_CUDA_RETURN(ctx, cudaMemcpyAsync(g->d_order, rowsb.Current(),
											 sizeof(uint32_t) * (size_t) g->rows,
											 cudaMemcpyDeviceToDevice, g->stream),
						"keeping the skyline's order");
	}
	SkyGatherRows<<<SkyGrid(n, 256), 256, 0, g->stream>>>(rank_cols, rmask, g->d_order,
														  g->rows, g->dims, g->d_ranks,
														  g->d_masks);
	ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "ordering the skyline's rows");
	return ODP_OK;
}

/*
 * Launches SkyCount of rows q (nq) against partners p (np), tile by tile;
 * of a split block, this part's share of the rows.
 */
static OdpStatus
SkyLaunchCount(GpuSky *g, const uint32_t *qr, const uint64_t *qm, int32_t *qc,
			   int64_t nq, const int32_t *perm, const uint32_t *pr, const uint64_t *pm,
			   const int32_t *pf, int64_t np, bool triangular, bool split)
{
	const int64_t tiles = (np + SKY_TILE - 1) / SKY_TILE;
	const int	parts = split ? g->team_parts : 1;
	const int	part = split ? g->part : 0;
	const int64_t ctas = (SkyGrid(nq, SKY_QTHREADS) + parts - 1) / parts;

	for (int64_t t0 = 0; t0 < tiles; t0 += SKY_GRID_Y_MAX)
	{
		dim3		grid((unsigned int) ctas,
						 (unsigned int) (tiles - t0 < SKY_GRID_Y_MAX ? tiles - t0 : SKY_GRID_Y_MAX));

		if (g->dims <= 8)
			SkyCount<8><<<grid, SKY_QTHREADS, 0, g->stream>>>(qr, qm, qc, nq, perm, pr, pm, pf, np, t0,
																 g->dims, g->band, triangular,
																 part, parts, g->d_tests);
		else if (g->dims <= SKY_REG_DIMS)
			SkyCount<SKY_REG_DIMS><<<grid, SKY_QTHREADS, 0, g->stream>>>(qr, qm, qc, nq, perm, pr, pm, pf,
																			np, t0, g->dims, g->band,
																			triangular, part, parts, g->d_tests);
		else
			SkyCount<0><<<grid, SKY_QTHREADS, 0, g->stream>>>(qr, qm, qc, nq, perm, pr, pm, pf, np, t0,
																 g->dims, g->band, triangular,
																 part, parts, g->d_tests);
		ODP_CUDA_RETURN_LAUNCH(g->ctx, g->stream, "counting dominators");
	}
	return ODP_OK;
}

/* Copies n rank rows and their masks from the host (staged plan). */
static OdpStatus
SkyUploadRows(GpuSky *g, const uint32_t *ranks, const uint64_t *masks, int64_t n,
			  uint32_t *d_ranks, uint64_t *d_masks)
{
	double		t0 = odp_now_ms();

	ODP_CUDA_RETURN(g->ctx, OdpGpuCopyIn(g->ctx, d_ranks, ranks, sizeof(uint32_t) * (size_t) g->dims * n, g->stream),
					"copying the skyline's rows to the GPU");
	ODP_CUDA_RETURN(g->ctx, OdpGpuCopyIn(g->ctx, d_masks, masks, sizeof(uint64_t) * (size_t) n, g->stream),
					"copying the skyline's rows to the GPU");
	g->ctx->transfer_ms += odp_now_ms() - t0;
	return ODP_OK;
}

/*
 * Orders n block rows by the top SKY_ORDER_BITS bits of their masks (two
 * radix passes instead of eight): with identity, rows 0 .. n-1 into *vals;
 * else the block positions already in *vals.  *vals ends up holding the
 * sorted positions; it and g->d_sel2, the sort's other buffer, may swap.
 */
static OdpStatus
SkySortByMask(GpuSky *g, const uint64_t *bm, int64_t n, bool identity, int32_t **vals)
{
	cub::DoubleBuffer<uint64_t> keys(g->d_selkey[0], g->d_selkey[1]);
	cub::DoubleBuffer<int32_t> rows(*vals, g->d_sel2);
	size_t		tb = g->temp_bytes;

	SkyMaskKeys<<<SkyGrid(n, 256), 256, 0, g->stream>>>(bm, identity ? NULL : *vals, n,
														g->d_selkey[0], *vals);
	ODP_CUDA_RETURN_LAUNCH(g->ctx, g->stream, "ordering the skyline's rows by mask");
	ODP_CUDA_RETURN(g->ctx, cub::DeviceRadixSort::SortPairs(g->d_temp, tb, keys, rows, n,
															64 - SKY_ORDER_BITS, 64, g->stream),
					"ordering the skyline's rows by mask");
	if (rows.Current() != *vals)
	{
		g->d_sel2 = *vals;
		*vals = rows.Current();
	}
	return ODP_OK;
}

/*
 * A split block's meeting after a step: this part's counts of the block
 * (bc, its rows counted from g->h_base) go to the team, and bc becomes the
 * sum of every part's; base_zero: the step began from zeros.
 */
static OdpStatus
SkyShare(GpuSky *g, int32_t *bc, int64_t nb, bool base_zero)
{
	OdpContext *ctx = g->ctx;

	ODP_CUDA_RETURN(ctx, cudaMemcpyAsync(g->h_mine, bc, sizeof(int32_t) * (size_t) nb,
										 cudaMemcpyDeviceToHost, g->stream),
					"sharing the skyline's counts");
	ODP_CUDA_RETURN(ctx, cudaStreamSynchronize(g->stream), "sharing the skyline's counts");
	if (!odp_sky_team_add(ctx, g->team, g->part, g->meetings++, g->h_mine,
						  base_zero ? NULL : g->h_base, nb, g->h_sum))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "the skyline was cancelled");
	memcpy(g->h_base, g->h_sum, sizeof(int32_t) * (size_t) nb);
	ODP_CUDA_RETURN(ctx, cudaMemcpyAsync(bc, g->h_sum, sizeof(int32_t) * (size_t) nb,
										 cudaMemcpyHostToDevice, g->stream),
					"sharing the skyline's counts");
	return ODP_OK;
}

/* One block of rows b0 .. b0+nb-1: both steps, then the window grows. */
static OdpStatus
SkyRunBlock(GpuSky *g, int64_t b0, int64_t nb)
{
	OdpContext *ctx = g->ctx;
	const size_t dims = (size_t) g->dims;
	const uint32_t *br;
	const uint64_t *bm;
	int32_t    *bc = g->d_counts + b0;
	int32_t		nsel = 0;
	int64_t		take;
	const int32_t *perm;
	OdpStatus	status;
	thrust::counting_iterator<int32_t> iota(0);
	/* every part decides alike: the window is the same on every part */
	const bool	split = g->team != NULL && g->wn + g->hwn >= odp_sky_split_window;

	if (g->resident)
	{
		br = g->d_ranks + (size_t) b0 * dims;
		bm = g->d_masks + b0;
	}
	else
	{
		if ((status = SkyUploadRows(g, g->prep.ranks + (size_t) b0 * dims, g->prep.masks + b0,
									nb, g->d_branks, g->d_bmasks)) != ODP_OK)
			return status;
		br = g->d_branks;
		bm = g->d_bmasks;
	}

	/*
	 * The rows in mask order, for coherent warps, once the window is large
	 * enough to repay the sort; by the mask's top bits only (the leading
	 * features' thresholds), which cost two radix passes instead of eight.
	 */
	perm = NULL;
	if (g->wn + g->hwn >= SKY_PERM_MIN_WINDOW * g->block)
	{
		if ((status = SkySortByMask(g, bm, nb, true, &g->d_perm)) != ODP_OK)
			return status;
		perm = g->d_perm;
	}

	/* step 1: the window on the device, then the part on the host */
	if (g->wn > 0 &&
		(status = SkyLaunchCount(g, br, bm, bc, nb, perm, g->d_wranks, g->d_wmasks, NULL,
								 g->wn, false, split)) != ODP_OK)
		return status;
	for (int64_t s0 = 0; s0 < g->hwn; s0 += g->block)
	{
		int64_t		ns = g->hwn - s0 < g->block ? g->hwn - s0 : g->block;

		if (odp_cancel_requested(ctx))
			return odp_fail(ctx, ODP_ERR_CANCELLED, "the skyline was cancelled");
		if ((status = SkyUploadRows(g, g->h_wranks + (size_t) s0 * dims, g->h_wmasks + s0, ns,
									g->d_seg_ranks, g->d_seg_masks)) != ODP_OK)
			return status;
		odp_gpu_sky_streamed_rows += ns;
		if ((status = SkyLaunchCount(g, br, bm, bc, nb, perm, g->d_seg_ranks,
									 g->d_seg_masks, NULL, ns, false, split)) != ODP_OK)
			return status;
		/* the buffer is refilled next: wait for the launch that reads it */
		ODP_CUDA_RETURN(ctx, cudaStreamSynchronize(g->stream), "streaming the skyline's window");
	}

	if (split && (status = SkyShare(g, bc, nb, true)) != ODP_OK)
		return status;

	/* step 2: the earlier rows of the block still in the band */
	ODP_CUDA_RETURN(ctx, cudaMemcpyAsync(g->d_c1, bc, sizeof(int32_t) * (size_t) nb,
										 cudaMemcpyDeviceToDevice, g->stream),
					"keeping the skyline's counts");
	if ((status = SkyLaunchCount(g, br, bm, bc, nb, perm, br, bm, g->d_c1, nb, true,
								 split)) != ODP_OK)
		return status;
	if (split && (status = SkyShare(g, bc, nb, false)) != ODP_OK)
		return status;

	/* the block's band members join the window */
	SkyMemberFlags<<<SkyGrid(nb, 256), 256, 0, g->stream>>>(bc, nb, g->band, g->d_flags);
	ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "selecting the skyline's members");
	{
		size_t		tb = g->temp_bytes;

		ODP_CUDA_RETURN(ctx, cub::DeviceSelect::Flagged(g->d_temp, tb, iota, g->d_flags, g->d_sel,
														g->d_nsel, nb, g->stream),
						"selecting the skyline's members");
	}
	ODP_CUDA_RETURN(ctx, cudaMemcpyAsync(&nsel, g->d_nsel, sizeof(int32_t),
										 cudaMemcpyDeviceToHost, g->stream),
					"selecting the skyline's members");
	ODP_CUDA_RETURN(ctx, cudaStreamSynchronize(g->stream), "selecting the skyline's members");
	/* by mask, so that a group of partners shares its leading bits */
	if (nsel > 1 && (status = SkySortByMask(g, bm, nsel, false, &g->d_sel)) != ODP_OK)
		return status;
	take = g->wcap - g->wn < nsel ? g->wcap - g->wn : nsel;
	if (take > 0)
	{
		SkyAppendWindow<<<SkyGrid(take * g->dims, 256), 256, 0, g->stream>>>(
			br, bm, g->d_sel, take, g->dims, g->d_wranks + (size_t) g->wn * dims,
			g->d_wmasks + g->wn);
		ODP_CUDA_RETURN_LAUNCH(ctx, g->stream, "growing the skyline's window");
		g->wn += take;
	}
	if (take < nsel)
	{
		/* staged only: the host has the rows; it needs their positions */
		ODP_CUDA_RETURN(ctx, cudaMemcpyAsync(g->h_sel, g->d_sel + take,
											 sizeof(int32_t) * (size_t) (nsel - take),
											 cudaMemcpyDeviceToHost, g->stream),
						"growing the skyline's window");
		ODP_CUDA_RETURN(ctx, cudaStreamSynchronize(g->stream), "growing the skyline's window");
		for (int64_t i = 0; i < nsel - take; i++)
		{
			int64_t		pos = b0 + g->h_sel[i];

			memcpy(g->h_wranks + (size_t) g->hwn * dims, g->prep.ranks + (size_t) pos * dims,
				   sizeof(uint32_t) * dims);
			g->h_wmasks[g->hwn++] = g->prep.masks[pos];
		}
	}
	return ODP_OK;
}

/* Frees everything the call holds. */
static void
SkyRelease(GpuSky *g)
{
	if (g->stream != NULL)
	{
		(void) cudaStreamSynchronize(g->stream);
		(void) cudaStreamDestroy(g->stream);
		g->stream = NULL;
	}
	OdpGpuUnpinHost(g->ctx, g->pinned);
	g->pinned = NULL;
	OdpGpuArenaRelease(&g->arena);
	odp_sky_prep_free(&g->prep);
	free(g->h_wranks);
	free(g->h_wmasks);
	free(g->h_sel);
	free(g->h_counts);
	free(g->h_mine);
	free(g->h_sum);
	free(g->h_base);
	(void) cudaGetLastError();
}

/* See skyline_internal.h. */
extern "C" OdpStatus
odp_gpu_skyline(OdpContext *ctx, const OdpSkylineProblem *p, int32_t *dominated_by,
				OdpSkylineStats *stats)
{
	return odp_gpu_skyline_part(ctx, p, dominated_by, stats, NULL, 0);
}

/* See skyline_internal.h. */
extern "C" OdpStatus
odp_gpu_skyline_part(OdpContext *ctx, const OdpSkylineProblem *p, int32_t *dominated_by,
					 OdpSkylineStats *stats, OdpSkyTeam *team, int part)
{
	GpuSky		g;
	OdpStatus	status;
	unsigned long long tests[2 * SKY_TEST_SLOTS];
	double		start = odp_now_ms();
	double		t0;

	memset(&g, 0, sizeof(g));
	g.ctx = ctx;
	g.p = p;
	g.rows = p->points->rows;
	g.dims = p->points->dims;
	g.band = p->band;
	g.team = team;
	g.part = part;
	if ((status = OdpGpuBegin(ctx, &g.dev)) != ODP_OK)
		goto cleanup;
	OdpGpuArenaInit(&g.arena, g.dev.budget);
	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	if ((status = SkyPlan(&g)) != ODP_OK)
		goto cleanup;
	if (team != NULL)
	{
		bool		stopped;

		/* the parts' blocks must be the same rows: the smallest plan's */
		g.block = odp_sky_team_block(ctx, team, part, g.block, &stopped);
		g.team_parts = odp_sky_team_parts(team);
		g.h_mine = (int32_t *) malloc(sizeof(int32_t) * (size_t) g.block);
		g.h_sum = (int32_t *) malloc(sizeof(int32_t) * (size_t) g.block);
		g.h_base = (int32_t *) malloc(sizeof(int32_t) * (size_t) g.block);
		if (stopped)
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "the skyline was cancelled");
			goto cleanup;
		}
		if (g.h_mine == NULL || g.h_sum == NULL || g.h_base == NULL)
		{
			status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for the skyline's counts");
			goto cleanup;
		}
	}
	if ((status = SkyAllocate(&g)) != ODP_OK)
		goto cleanup;
	t0 = odp_now_ms();
	if (g.resident)
	{
		if ((status = SkyPresortDevice(&g)) != ODP_OK)
			goto cleanup;
		int64_t		bad = g.rows;

		/* the first test counter held the smallest row with a bad value */
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, g.d_tests, sizeof(bad), cudaMemcpyDeviceToHost,
										  g.stream),
					 "checking the skyline's values");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "presorting the skyline's rows");
		if (bad < g.rows)
		{
			status = odp_sky_not_finite(ctx, bad);
			goto cleanup;
		}
	}
	else
	{
		odp_gpu_sky_staged_runs++;
		if ((status = odp_sky_prepare(ctx, p, &g.prep)) != ODP_OK)
			goto cleanup;
		g.h_wranks = (uint32_t *) malloc(sizeof(uint32_t) * (size_t) g.rows * g.dims);
		g.h_wmasks = (uint64_t *) malloc(sizeof(uint64_t) * (size_t) g.rows);
		if (g.h_wranks == NULL || g.h_wmasks == NULL)
		{
			status = odp_fail(ctx, ODP_ERR_HOST_OOM,
							  "out of host memory for the skyline's window");
			goto cleanup;
		}
	}
	stats->presort_ms = odp_now_ms() - t0 - (g.resident ? ctx->transfer_ms : 0.0);
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(g.d_counts, 0, sizeof(int32_t) * (size_t) g.rows, g.stream),
				 "clearing the skyline's counts");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(g.d_tests, 0, sizeof(tests), g.stream),
				 "clearing the skyline's counters");

	t0 = odp_now_ms();
	for (int64_t b0 = 0; b0 < g.rows; b0 += g.block)
	{
		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "the skyline was cancelled");
			goto cleanup;
		}
		if ((status = SkyRunBlock(&g, b0, g.rows - b0 < g.block ? g.rows - b0 : g.block)) != ODP_OK)
			goto cleanup;
		stats->blocks++;
		ctx->chunks++;
	}
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "comparing the skyline's rows");
	stats->loop_ms = odp_now_ms() - t0;

	t0 = odp_now_ms();
	if (dominated_by == NULL)
		;						/* another part of the team writes it */
	else if (g.resident)
	{
		int32_t    *d_out = g.d_c1;

		/* the result needs rows entries: reuse the window's rank memory */
		if ((size_t) g.rows > (size_t) g.block)
			d_out = (int32_t *) g.d_wranks;
		SkyScatterResult<<<SkyGrid(g.rows, 256), 256, 0, g.stream>>>(g.d_counts, g.d_order, g.rows,
																	 g.band, d_out);
		ODP_CUDA_TRY_LAUNCH(ctx, g.stream, "storing the skyline's result");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(dominated_by, d_out, sizeof(int32_t) * (size_t) g.rows,
										  cudaMemcpyDeviceToHost, g.stream),
					 "copying the skyline's result");
	}
	else
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(g.h_counts, g.d_counts, sizeof(int32_t) * (size_t) g.rows,
										  cudaMemcpyDeviceToHost, g.stream),
					 "copying the skyline's result");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(tests, g.d_tests, sizeof(tests), cudaMemcpyDeviceToHost,
									  g.stream),
				 "copying the skyline's counters");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(g.stream), "copying the skyline's result");
	if (!g.resident && dominated_by != NULL)
		for (int64_t pos = 0; pos < g.rows; pos++)
			dominated_by[g.prep.order[pos]] = g.h_counts[pos] < g.band ? g.h_counts[pos] : g.band;
	ctx->transfer_ms += odp_now_ms() - t0;
	for (int slot = 0; slot < SKY_TEST_SLOTS; slot++)
	{
		stats->pair_tests += (int64_t) tests[2 * slot];
		stats->full_tests += (int64_t) tests[2 * slot + 1];
	}
	status = ODP_OK;

cleanup:
	SkyRelease(&g);
	ctx->compute_ms = odp_now_ms() - start - ctx->transfer_ms;
	return status;
}
