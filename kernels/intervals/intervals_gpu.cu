/*-------------------------------------------------------------------------
 *
 * intervals_gpu.cu
 *	  GPU path of the region matching: the sorted structures, the windows
 *	  and the candidates of intervals_internal.h on the device.
 *
 * Structures.  A range of one side's positions is copied in, its sweep
 * lower bounds sorted with their live positions (CUB radix sort), and the
 * sweep upper bounds and the test dimensions gathered in that order,
 * test-dimension-major, so that consecutive candidates of a window are
 * consecutive in memory.
 *
 * A run.  One thread per driver finds its window (odp_iv_window) and a
 * CUB scan turns the window lengths into offsets.  When every candidate
 * is a pair (one exact dimension), each block of the expansion kernel
 * writes a tile of consecutive pair slots, finding the driver of each by
 * a binary search over the offsets of the few drivers the tile spans.
 * Otherwise the candidates are tested.  A block holds 256 consecutive
 * drivers of one set, whose windows in sorted order nearly coincide: it
 * walks the union of their windows in tiles of 256 targets loaded once
 * into shared memory, and every warp steps through the part of the tile
 * its drivers need, each thread testing the target all 32 read at once
 * (a broadcast) against its own driver's bounds, held in registers.  A
 * block whose windows are far apart (the union much longer than the
 * windows) lets each thread walk its own window instead, the warp in
 * step.  A warp gathers its pairs in shared memory and appends 32 at a
 * time with one atomic add.  The keys are sorted with a CUB radix sort
 * over their key_bits bits and copied back a block at a time.
 *
 * Memory.  The structures are planned once: both sides resident when they
 * fit in half of the budget, else ranges of equal size that do; the rest
 * may hold pairs (keys and the sort's second buffer), allocated run by
 * run as large as the run needs: the pair count where every candidate is
 * one, else at first what the sample foresees and 2^20 more and, when
 * more are found, the number found (the candidates are then tested
 * again).
 *
 * Map of this file.  The declarations come first, then the two sections
 * that the divider comments name:
 *	- declarations: the constants (IV_*), the test counter
 *	  odp_gpu_iv_loads and the state: GpuIvSorted (one side's range on the
 *	  device), IvSetArgs (what a kernel needs of one driver set), GpuIv;
 *	- kernels: building a structure (IvStageKeys, IvGather), the windows
 *	  (IvWindows), the pair slots when every candidate is a pair
 *	  (IvExpand), a warp's appends (IvAppend, IvFinish) and the tests
 *	  (IvTestTiled, test dimensions in registers; IvTestWide, any number);
 *	- host side: helpers (iv_blocks, iv_line, iv_set_args), the memory
 *	  plan (gpu_iv_temp_bytes, gpu_iv_plan, gpu_iv_capacity,
 *	  gpu_iv_reserve_pairs), the structures (gpu_iv_build, and the load
 *	  callback gpu_iv_load), a run (gpu_iv_poll, gpu_iv_test_set,
 *	  gpu_iv_test_all, and the run callback gpu_iv_run with its body
 *	  gpu_iv_run_timed), the keys and release callbacks (gpu_iv_keys,
 *	  gpu_iv_release), the allocation (gpu_iv_setup) and the
 *	  constructor, odp_gpu_iv_backend.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "intervals/intervals_internal.h"
#include "intervals/intervals_math.h"

#define IV_THREADS		256
#define IV_WARPS		(IV_THREADS / 32)
#define IV_TILE			(IV_THREADS * 8)	/* pair slots per expansion block */
#define IV_WARP_BUF		64
#define IV_LAUNCH_ITEMS	((int64_t) 1 << 30)	/* pair slots or candidates per launch */
#define IV_TARGETS		256		/* targets per shared-memory tile */
#define IV_REG_TESTS	8		/* test dimensions held in registers */
#define IV_FIRST_PAIRS	((int64_t) 1 << 20)	/* pair slots a first testing pass adds */
#define IV_MAX_SORT		(((int64_t) 1 << 31) - 1)	/* items one CUB sort takes */
#define IV_MAX_PAIRS	((int64_t) 1 << 27)	/* pairs one run keeps: 2 GB with the
											 * sort's buffer, sorted in a tenth of
											 * a second on an H100, so that a
											 * cancel (polled between runs) stops
											 * a call well within a second */

/* Test counter: structures of B built (loads). */
extern "C" int64_t odp_gpu_iv_loads;
int64_t		odp_gpu_iv_loads = 0;

/* One side's range on the device, in sweep order. */
typedef struct GpuIvSorted
{
	int64_t		n;
	uint64_t   *lo;
	uint64_t   *hi;
	uint32_t   *pos;			/* live positions */
	uint64_t   *tlo;			/* ntest x n */
	uint64_t   *thi;
} GpuIvSorted;

/* What a kernel needs of one driver set and its targets. */
typedef struct IvSetArgs
{
	const uint64_t *dlo;
	const uint64_t *dhi;
	const uint32_t *dpos;
	const uint64_t *dtlo;
	const uint64_t *dthi;
	int64_t		dn;
	const uint64_t *tlo_sweep;
	const uint32_t *tpos;
	const uint64_t *ttlo;
	const uint64_t *tthi;
	int64_t		tn;
} IvSetArgs;

typedef struct GpuIv
{
	OdpContext *ctx;
	const OdpIvPrep *prep;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream;
	bool		stream_made;
	void	   *pinned[4];		/* page-locked inputs */
	int			ntest;
	int		   *test_dim;		/* host */
	int		   *d_test_dim;
	uint8_t    *d_test_box;
	int64_t		rows_cap;		/* rows of a structure */
	int64_t		drivers_cap;
	int64_t		capacity;

	uint64_t   *d_stage_lo;		/* rows_cap x dims */
	uint64_t   *d_stage_hi;
	uint64_t   *d_skeys;		/* sort scratch */
	uint32_t   *d_svals;
	GpuIvSorted as;
	GpuIvSorted bs;
	uint32_t   *d_wstart;
	int64_t    *d_wlen;
	int64_t    *d_woff;
	uint64_t   *d_keys;			/* pair slots, allocated as runs need them */
	int64_t		keys_cap;
	uint64_t   *d_keys_alt;		/* the sort's second buffer */
	void	   *d_ktemp;		/* the pair sort's scratch */
	size_t		ktemp_bytes;
	uint64_t   *keys_cur;		/* the sorted keys: d_keys or d_keys_alt */
	int64_t		nkeys;
	void	   *d_temp;			/* scratch of the structure sorts and scan */
	size_t		temp_bytes;
	unsigned long long *d_count;
	uint64_t   *h_block;		/* page-locked, ODP_IV_KEY_BLOCK keys, once needed */
	double	   *sort_ms;
	double	   *match_ms;
} GpuIv;

/* ---- kernels ---- */

/* keys[i] = the sweep lower bound of staged row i, vals[i] = its live position. */
__global__ void
IvStageKeys(const uint64_t *__restrict__ stage_lo, int dims, int sweep, int64_t n,
			int64_t l0, uint64_t *keys, uint32_t *vals)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	keys[i] = stage_lo[i * dims + sweep];
	vals[i] = (uint32_t) (l0 + i);
}

/*
 * The sweep upper bounds and test dimensions of the sorted rows, upper
 * bounds of box dimensions as their comparison positions.
 */
__global__ void
IvGather(const uint64_t *__restrict__ stage_lo, const uint64_t *__restrict__ stage_hi,
		 int dims, int sweep, bool sweep_box, const uint32_t *__restrict__ pos,
		 int64_t l0, int64_t n, const int *__restrict__ test_dim,
		 const uint8_t *__restrict__ test_box, int ntest, uint64_t *hi,
		 uint64_t *tlo, uint64_t *thi)
{
	int64_t		i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	{
		const int64_t base = ((int64_t) pos[i] - l0) * dims;
		uint64_t	h = stage_hi[base + sweep];

		hi[i] = sweep_box ? odp_iv_box_upper(h) : h;
		for (int k = 0; k < ntest; k++)
		{
			h = stage_hi[base + test_dim[k]];
			tlo[k * n + i] = stage_lo[base + test_dim[k]];
			thi[k * n + i] = test_box[k] ? odp_iv_box_upper(h) : h;
		}
	}
}

/* Set and index of driver g. */
__device__ __forceinline__ int
IvSetOf(int64_t g, int64_t nd0, int64_t *i)
{
	if (g >= nd0)
	{
		*i = g - nd0;
		return 1;
	}
	*i = g;
	return 0;
}

/* Every driver's window: start and length. */
__global__ void
IvWindows(IvSetArgs s0, IvSetArgs s1, int64_t nd0, int64_t ndrivers,
		  OdpIvScheme scheme, uint32_t *wstart, int64_t *wlen)
{
	int64_t		g = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (g > ndrivers)
		return;
	if (g == ndrivers)
	{
		wlen[g] = 0;			/* the scan's last offset is the total */
		return;
	}
	{
		int64_t		i,
					st,
					en;
		int			set = IvSetOf(g, nd0, &i);
		const IvSetArgs *s = set ? &s1 : &s0;

		odp_iv_window(scheme, set, i, s->dlo[i], s->dhi[i], s->tlo_sweep, s->tn,
					  &st, &en);
		wstart[g] = (uint32_t) st;
		wlen[g] = en - st;
	}
}

/*
 * Pair slots [k0, k1) when every candidate is a pair: slot k belongs to
 * the driver g with woff[g] <= k < woff[g + 1].
 */
__global__ void
IvExpand(IvSetArgs s0, IvSetArgs s1, int64_t nd0, int64_t ndrivers,
		 const int64_t *__restrict__ woff, const uint32_t *__restrict__ wstart,
		 int64_t k0, int64_t k1, OdpIvScheme scheme, int b_bits, uint64_t *keys)
{
	__shared__ int64_t g_range[2];
	const uint64_t *off = (const uint64_t *) woff;
	int64_t		t0 = k0 + (int64_t) blockIdx.x * IV_TILE;
	int64_t		t1 = t0 + IV_TILE < k1 ? t0 + IV_TILE : k1;

	if (threadIdx.x == 0)
	{
		g_range[0] = odp_iv_search(off, 0, ndrivers + 1, (uint64_t) t0, true) - 1;
		g_range[1] = odp_iv_search(off, g_range[0], ndrivers + 1, (uint64_t) (t1 - 1), true);
	}
	__syncthreads();
	for (int64_t k = t0 + threadIdx.x; k < t1; k += blockDim.x)
	{
		int64_t		g = odp_iv_search(off, g_range[0], g_range[1], (uint64_t) k, true) - 1;
		int64_t		i;
		int			set = IvSetOf(g, nd0, &i);
		const IvSetArgs *s = set ? &s1 : &s0;
		int64_t		t = (int64_t) wstart[g] + (k - woff[g]);
		uint64_t	key = 0;

		(void) odp_iv_pair_key(scheme, set, s->dpos[i], s->tpos[t], b_bits, &key);
		keys[k] = key;
	}
}

/*
 * A warp's pairs: each lane with m set adds key; every 32 gathered go out
 * with one atomic add on *count (slots past capacity are counted, not
 * written).  wcount is the warp's gathered count, the same in every lane.
 */
__device__ __forceinline__ void
IvAppend(uint64_t *wbuf, int &wcount, bool m, uint64_t key, uint64_t *keys,
		 int64_t capacity, unsigned long long *count)
{
	const int	lane = threadIdx.x & 31;
	unsigned	b = __ballot_sync(0xffffffffu, m);

	if (b == 0)
		return;
	if (m)
		wbuf[wcount + __popc(b & ((1u << lane) - 1))] = key;
	wcount += __popc(b);
	if (wcount >= 32)
	{
		unsigned long long base = 0;
		uint64_t	carry = 0;

		__syncwarp();
		if (lane == 0)
			base = atomicAdd(count, 32ull);
		base = __shfl_sync(0xffffffffu, base, 0);
		if (base + lane < (unsigned long long) capacity)
			keys[base + lane] = wbuf[lane];
		if (lane < wcount - 32)
			carry = wbuf[32 + lane];
		__syncwarp();
		if (lane < wcount - 32)
			wbuf[lane] = carry;
		__syncwarp();
		wcount -= 32;
	}
}

/* Sends a warp's last gathered pairs, or adds its count. */
__device__ __forceinline__ void
IvFinish(uint64_t *wbuf, int wcount, bool counting, unsigned long long local,
		 uint64_t *keys, int64_t capacity, unsigned long long *count)
{
	const int	lane = threadIdx.x & 31;

	if (counting)
	{
		for (int o = 16; o > 0; o >>= 1)
			local += __shfl_down_sync(0xffffffffu, local, o);
		if (lane == 0 && local > 0)
			atomicAdd(count, local);
		return;
	}
	if (wcount > 0)
	{
		unsigned long long base = 0;

		__syncwarp();
		if (lane == 0)
			base = atomicAdd(count, (unsigned long long) wcount);
		base = __shfl_sync(0xffffffffu, base, 0);
		if (lane < wcount && base + lane < (unsigned long long) capacity)
			keys[base + lane] = wbuf[lane];
	}
}

/*
 * The drivers [g0, g1) of set (all in s) test their windows' candidates
 * (see the file header); T >= ntest test dimensions, held in registers.
 * COUNT adds the pairs to *count; otherwise their keys are appended.
 */
template <int T, bool COUNT>
__global__ void __launch_bounds__(IV_THREADS)
IvTestTiled(IvSetArgs s, int set, int64_t i0, int64_t g0, int64_t g1,
			const int64_t *__restrict__ woff, const uint32_t *__restrict__ wstart,
			int ntest, OdpIvScheme scheme, int b_bits,
			uint64_t *keys, int64_t capacity, unsigned long long *count)
{
	__shared__ uint64_t tl[T][IV_TARGETS];
	__shared__ uint64_t th[T][IV_TARGETS];
	__shared__ uint32_t tp[IV_TARGETS];
	__shared__ uint64_t wbuf[IV_WARPS][IV_WARP_BUF];
	__shared__ unsigned long long u_lo,
				u_hi,
				u_sum,
				u_active;
	const int	warp = threadIdx.x >> 5;
	int64_t		g = g0 + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	bool		active = g < g1;
	int64_t		i = g - g0 + i0;
	uint64_t	st = active ? wstart[g] : 0;
	uint64_t	len = active ? (uint64_t) (woff[g + 1] - woff[g]) : 0;
	uint64_t	dl[T],
				dh[T];
	uint64_t	dpos = active ? s.dpos[i] : 0;
	unsigned long long local = 0;
	int			wcount = 0;

#pragma unroll
	for (int k = 0; k < T; k++)
	{
		dl[k] = active && k < ntest ? s.dtlo[k * s.dn + i] : 0;
		dh[k] = active && k < ntest ? s.dthi[k * s.dn + i] : 0;
	}
	if (threadIdx.x == 0)
	{
		u_lo = ~0ull;
		u_hi = 0;
		u_sum = 0;
		u_active = 0;
	}
	__syncthreads();
	if (len > 0)
	{
		atomicMin(&u_lo, st);
		atomicMax(&u_hi, st + len);
		atomicAdd(&u_sum, len);
		atomicAdd(&u_active, 1ull);
	}
	__syncthreads();

	if (u_active > 0 && (u_hi - u_lo) * u_active <= 4 * u_sum + u_active * IV_TARGETS)
	{
		/* tiles of the union, shared by the block */
		for (uint64_t base = u_lo; base < u_hi; base += IV_TARGETS)
		{
			int			cnt = (int) (u_hi - base < IV_TARGETS ? u_hi - base : IV_TARGETS);
			int64_t		from = (int64_t) (st > base ? st : base) - (int64_t) base;
			int64_t		to = (int64_t) (st + len < base + cnt ? st + len : base + cnt) - (int64_t) base;
			int			my_lo = (int) from,
						my_hi = (int) to,
						w_lo,
						w_hi;

			__syncthreads();
			for (int j = threadIdx.x; j < cnt; j += blockDim.x)
			{
#pragma unroll
				for (int k = 0; k < T; k++)
				{
					if (k < ntest)
					{
						tl[k][j] = s.ttlo[k * s.tn + base + j];
						th[k][j] = s.tthi[k * s.tn + base + j];
					}
				}
				tp[j] = s.tpos[base + j];
			}
			__syncthreads();
			if (len == 0 || to <= from)
			{
				my_lo = IV_TARGETS;
				my_hi = 0;
			}
			w_lo = __reduce_min_sync(0xffffffffu, my_lo);
			w_hi = __reduce_max_sync(0xffffffffu, my_hi);
			for (int j = w_lo; j < w_hi; j++)
			{
				bool		m = j >= my_lo && j < my_hi;
				uint64_t	key = 0;

#pragma unroll
				for (int k = 0; k < T; k++)
					if (k < ntest)
						m = m && dl[k] <= th[k][j] && tl[k][j] <= dh[k];
				m = m && odp_iv_pair_key(scheme, set, dpos, tp[j], b_bits, &key);
				if (COUNT)
					local += m;
				else
					IvAppend(wbuf[warp], wcount, m, key, keys, capacity, count);
			}
		}
	}
	else
	{
		/* windows far apart: each thread its own, the warp in step */
		uint32_t	maxlen = __reduce_max_sync(0xffffffffu, (uint32_t) len);

		for (uint32_t it = 0; it < maxlen; it++)
		{
			bool		m = it < len;
			uint64_t	key = 0;
			int64_t		t = (int64_t) st + it;

#pragma unroll
			for (int k = 0; k < T; k++)
				if (k < ntest)
					m = m && dl[k] <= s.tthi[k * s.tn + t] && s.ttlo[k * s.tn + t] <= dh[k];
			m = m && odp_iv_pair_key(scheme, set, dpos, s.tpos[t], b_bits, &key);
			if (COUNT)
				local += m;
			else
				IvAppend(wbuf[warp], wcount, m, key, keys, capacity, count);
		}
	}
	IvFinish(wbuf[warp], wcount, COUNT, local, keys, capacity, count);
}

/*
 * The same for any number of test dimensions, reading the driver's from
 * memory, each thread its own window.
 */
template <bool COUNT>
__global__ void __launch_bounds__(IV_THREADS)
IvTestWide(IvSetArgs s, int set, int64_t i0, int64_t g0, int64_t g1,
		   const int64_t *__restrict__ woff, const uint32_t *__restrict__ wstart,
		   int ntest, OdpIvScheme scheme, int b_bits, uint64_t *keys,
		   int64_t capacity, unsigned long long *count)
{
	__shared__ uint64_t wbuf[IV_WARPS][IV_WARP_BUF];
	const int	warp = threadIdx.x >> 5;
	int64_t		g = g0 + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	bool		active = g < g1;
	int64_t		i = g - g0 + i0;
	uint32_t	st = active ? wstart[g] : 0;
	uint32_t	len = active ? (uint32_t) (woff[g + 1] - woff[g]) : 0;
	uint32_t	maxlen = __reduce_max_sync(0xffffffffu, len);
	unsigned long long local = 0;
	int			wcount = 0;

	for (uint32_t it = 0; it < maxlen; it++)
	{
		bool		m = false;
		uint64_t	key = 0;

		if (it < len)
		{
			int64_t		t = (int64_t) st + it;

			m = odp_iv_test(s.dtlo, s.dthi, s.dn, i, s.ttlo, s.tthi, s.tn, t, ntest) &&
				odp_iv_pair_key(scheme, set, s.dpos[i], s.tpos[t], b_bits, &key);
		}
		if (COUNT)
			local += m;
		else
			IvAppend(wbuf[warp], wcount, m, key, keys, capacity, count);
	}
	IvFinish(wbuf[warp], wcount, COUNT, local, keys, capacity, count);
}

/* ---- host side ---- */

static int64_t
iv_blocks(int64_t n, int threads)
{
	return (n + threads - 1) / threads;
}

/* Bytes a buffer takes in the block: whole 256-byte lines. */
static size_t
iv_line(size_t bytes)
{
	return (bytes + 255) / 256 * 256;
}

/* The kernel arguments of drivers d against targets t. */
static IvSetArgs
iv_set_args(const GpuIvSorted *d, const GpuIvSorted *t)
{
	IvSetArgs	a;

	a.dlo = d->lo;
	a.dhi = d->hi;
	a.dpos = d->pos;
	a.dtlo = d->tlo;
	a.dthi = d->thi;
	a.dn = d->n;
	a.tlo_sweep = t->lo;
	a.tpos = t->pos;
	a.ttlo = t->tlo;
	a.tthi = t->thi;
	a.tn = t->n;
	return a;
}

/* Bytes of CUB scratch for the structure sorts (rows) and the window scan. */
static OdpStatus
gpu_iv_temp_bytes(GpuIv *gv, int64_t rows, int64_t drivers, size_t *bytes)
{
	size_t		a = 0,
				c = 0;
	cub::DoubleBuffer<uint64_t> k(NULL, NULL);
	cub::DoubleBuffer<uint32_t> v(NULL, NULL);

	ODP_CUDA_RETURN(gv->ctx, cub::DeviceRadixSort::SortPairs(NULL, a, k, v, (int) rows, 0, 64, gv->stream),
					"sizing the sort of the lower bounds");
	ODP_CUDA_RETURN(gv->ctx, cub::DeviceScan::ExclusiveSum(NULL, c, (int64_t *) NULL, (int64_t *) NULL,
														   drivers + 1, gv->stream),
					"sizing the scan of the windows");
	*bytes = a > c ? a : c;
	return ODP_OK;
}

/*
 * Plans the structures: both sides resident when they take at most half
 * the budget, else equal ranges that do; pairs may take the rest
 * (gpu_iv_capacity).
 */
static OdpStatus
gpu_iv_plan(GpuIv *gv, OdpIvBackend *be)
{
	const OdpIvPrep *prep = gv->prep;
	const int64_t na = prep->a.nlive,
				nb = prep->b.nlive;
	const double per_struct = 20.0 + 16.0 * gv->ntest;		/* per row */
	const double per_build = 16.0 * prep->dims + 12.0;		/* per row */
	const double per_driver = 20.0;
	const double budget = (double) gv->dev.budget;
	int64_t		rows = na > nb ? na : nb;
	double		need = (na + nb) * per_struct + rows * per_build + (na + nb + 1) * per_driver;

	if (need > budget / 2)
	{
		rows = (int64_t) (budget / 2 / (2 * per_struct + per_build + 2 * per_driver));
		if (rows < 1)
			return odp_fail(gv->ctx, ODP_ERR_GPU_OOM,
							"GPU memory budget of %zu bytes is too small for region matching",
							gv->dev.budget);
	}
	if (rows > IV_MAX_SORT)
		rows = IV_MAX_SORT;
	be->a_rows_max = na < rows ? na : rows;
	be->b_rows_max = nb < rows ? nb : rows;
	gv->rows_cap = rows;
	gv->drivers_cap = be->a_rows_max + be->b_rows_max;
	return gpu_iv_temp_bytes(gv, rows, gv->drivers_cap, &gv->temp_bytes);
}

/*
 * The pairs the budget left after the structures can hold: keys, the
 * sort's second buffer and scratch, each allocation rounded.
 */
static OdpStatus
gpu_iv_capacity(GpuIv *gv, OdpIvBackend *be)
{
	const double slack = ODP_GPU_ALLOC_ALIGN + 3 * 256;
	double		left = (double) gv->dev.budget - (double) gv->arena.used - slack;
	int64_t		cap = (int64_t) (left / 16.0);

	for (int round = 0; round < 2 && cap > 0; round++)
	{
		/* the pair sort's scratch comes out of the pairs' share */
		cub::DoubleBuffer<uint64_t> k(NULL, NULL);
		size_t		ktemp = 0;

		if (cap > IV_MAX_SORT)
			cap = IV_MAX_SORT;
		ODP_CUDA_RETURN(gv->ctx, cub::DeviceRadixSort::SortKeys(NULL, ktemp, k, (int) cap, 0, 64,
																gv->stream),
						"sizing the sort of the pairs");
		cap = (int64_t) ((left - (double) OdpGpuRounded(ktemp)) / 16.0);
	}
	if (cap > IV_MAX_PAIRS)
		cap = IV_MAX_PAIRS;
	if (cap < 1024)
		return odp_fail(gv->ctx, ODP_ERR_GPU_OOM,
						"GPU memory budget of %zu bytes leaves no room for pairs in region matching",
						gv->dev.budget);
	gv->capacity = cap;
	be->capacity = cap;
	return ODP_OK;
}

/*
 * Makes room for n pairs: slots, the sort's second buffer and scratch,
 * one block of the arena replacing a smaller one; n is at most the
 * planned capacity.
 */
static OdpStatus
gpu_iv_reserve_pairs(GpuIv *gv, int64_t n)
{
	cub::DoubleBuffer<uint64_t> k(NULL, NULL);
	size_t		bytes = 0;
	char	   *block = NULL;
	OdpStatus	status;

	if (n <= gv->keys_cap)
		return ODP_OK;
	OdpGpuArenaFree(&gv->arena, gv->d_keys);
	gv->d_keys = gv->d_keys_alt = NULL;
	gv->d_ktemp = NULL;
	gv->keys_cap = 0;
	ODP_CUDA_RETURN(gv->ctx, cub::DeviceRadixSort::SortKeys(NULL, bytes, k, (int) n, 0, 64, gv->stream),
					"sizing the sort of the pairs");
	if ((status = OdpGpuArenaAlloc(gv->ctx, &gv->arena,
								   2 * iv_line(sizeof(uint64_t) * (size_t) n) + iv_line(bytes),
								   "the pairs and their sort", (void **) &block)) != ODP_OK)
		return status;
	gv->d_keys = (uint64_t *) block;
	gv->d_keys_alt = (uint64_t *) (block + iv_line(sizeof(uint64_t) * (size_t) n));
	gv->d_ktemp = block + 2 * iv_line(sizeof(uint64_t) * (size_t) n);
	gv->ktemp_bytes = bytes;
	gv->keys_cap = n;
	return ODP_OK;
}

/* Builds *out from live positions [l0, l1) of side. */
static OdpStatus
gpu_iv_build(GpuIv *gv, const OdpIvSide *side, int64_t l0, int64_t l1,
			 GpuIvSorted *out)
{
	const OdpIvPrep *prep = gv->prep;
	const int	dims = prep->dims;
	const int64_t n = l1 - l0;
	size_t		bytes = sizeof(uint64_t) * (size_t) n * dims;
	OdpStatus	status = ODP_OK;
	cub::DoubleBuffer<uint64_t> k(out->lo, gv->d_skeys);
	cub::DoubleBuffer<uint32_t> v(out->pos, gv->d_svals);
	double		t0 = odp_now_ms();

	out->n = n;
	if (n == 0)
		return ODP_OK;
	ODP_CUDA_RETURN(gv->ctx, OdpGpuCopyIn(gv->ctx, gv->d_stage_lo, side->lo + l0 * dims, bytes, gv->stream),
					"copying lower bounds to the GPU");
	ODP_CUDA_RETURN(gv->ctx, OdpGpuCopyIn(gv->ctx, gv->d_stage_hi, side->hi + l0 * dims, bytes, gv->stream),
					"copying upper bounds to the GPU");
	ODP_CUDA_RETURN(gv->ctx, cudaStreamSynchronize(gv->stream), "copying bounds to the GPU");
	gv->ctx->transfer_ms += odp_now_ms() - t0;

	IvStageKeys<<<iv_blocks(n, IV_THREADS), IV_THREADS, 0, gv->stream>>>(
		gv->d_stage_lo, dims, prep->sweep, n, l0, out->lo, out->pos);
	ODP_CUDA_RETURN_LAUNCH(gv->ctx, gv->stream, "preparing the sort of lower bounds");
	ODP_CUDA_RETURN(gv->ctx, cub::DeviceRadixSort::SortPairs(gv->d_temp, gv->temp_bytes, k, v, (int) n,
															 0, 64, gv->stream),
					"sorting lower bounds");
	if (k.Current() != out->lo)
	{
		ODP_CUDA_RETURN(gv->ctx, cudaMemcpyAsync(out->lo, k.Current(), sizeof(uint64_t) * n,
												 cudaMemcpyDeviceToDevice, gv->stream),
						"moving sorted lower bounds");
		ODP_CUDA_RETURN(gv->ctx, cudaMemcpyAsync(out->pos, v.Current(), sizeof(uint32_t) * n,
												 cudaMemcpyDeviceToDevice, gv->stream),
						"moving sorted positions");
	}
	IvGather<<<iv_blocks(n, IV_THREADS), IV_THREADS, 0, gv->stream>>>(
		gv->d_stage_lo, gv->d_stage_hi, dims, prep->sweep, prep->box[prep->sweep] != 0,
		out->pos, l0, n, gv->d_test_dim, gv->d_test_box, gv->ntest, out->hi, out->tlo, out->thi);
	ODP_CUDA_RETURN_LAUNCH(gv->ctx, gv->stream, "gathering the sorted regions");
	return status;
}

/* Waits for the stream. */
static OdpStatus
gpu_iv_sync(GpuIv *gv)
{
	ODP_CUDA_RETURN(gv->ctx, cudaStreamSynchronize(gv->stream), "waiting for the GPU");
	return ODP_OK;
}

/* Backend load. */
static OdpStatus
gpu_iv_load(void *self, int64_t b0, int64_t b1)
{
	GpuIv	   *gv = (GpuIv *) self;
	double		t0 = odp_now_ms(),
				x0 = gv->ctx->transfer_ms;
	OdpStatus	status;

	odp_gpu_iv_loads++;
	status = gpu_iv_build(gv, &gv->prep->b, b0, b1, &gv->bs);
	if (status == ODP_OK)
		status = gpu_iv_sync(gv);
	*gv->match_ms += odp_now_ms() - t0 - (gv->ctx->transfer_ms - x0);
	return status;
}

/* Reads one int64 the device wrote, synchronising. */
static OdpStatus
gpu_iv_read_int64(GpuIv *gv, const void *dptr, int64_t *out, const char *what)
{
	ODP_CUDA_RETURN(gv->ctx, cudaMemcpyAsync(out, dptr, sizeof(int64_t), cudaMemcpyDeviceToHost,
											 gv->stream), what);
	ODP_CUDA_RETURN(gv->ctx, cudaStreamSynchronize(gv->stream), what);
	return ODP_OK;
}

/* Polls the cancel callback after the stream's work so far. */
static OdpStatus
gpu_iv_poll(GpuIv *gv, const char *what)
{
	ODP_CUDA_RETURN(gv->ctx, cudaStreamSynchronize(gv->stream), what);
	if (odp_cancel_requested(gv->ctx))
		return odp_fail(gv->ctx, ODP_ERR_CANCELLED, "the matching was cancelled");
	return ODP_OK;
}

/*
 * Tests the candidates of drivers [g0, g1) of set (global indexes; the
 * set's own from i0) in slices of about IV_LAUNCH_ITEMS candidates,
 * polling between them; counts into d_count, appending keys unless
 * counting.
 */
static OdpStatus
gpu_iv_test_set(GpuIv *gv, const IvSetArgs *s, int set, int64_t g0, int64_t g1,
				int64_t total, int64_t ndrivers, const OdpIvRun *run, bool counting,
				int64_t capacity)
{
	const OdpIvPrep *prep = gv->prep;
	int64_t		slice = total > 0 ? (int64_t) ((double) ndrivers * IV_LAUNCH_ITEMS / total) : ndrivers;
	OdpStatus	status;

	if (slice < 4096)
		slice = 4096;
	slice = (slice + IV_THREADS - 1) / IV_THREADS * IV_THREADS;
	for (int64_t a = g0; a < g1; a += slice)
	{
		int64_t		b = a + slice < g1 ? a + slice : g1;
		int64_t		i0 = a - g0;
		dim3		grid((unsigned) iv_blocks(b - a, IV_THREADS));

#define IV_TILED(T) \
		do { \
			if (counting) \
				IvTestTiled<T, true><<<grid, IV_THREADS, 0, gv->stream>>>(*s, set, i0, a, b, gv->d_woff, \
					gv->d_wstart, gv->ntest, run->scheme, prep->b_bits, gv->d_keys, capacity, gv->d_count); \
			else \
				IvTestTiled<T, false><<<grid, IV_THREADS, 0, gv->stream>>>(*s, set, i0, a, b, gv->d_woff, \
					gv->d_wstart, gv->ntest, run->scheme, prep->b_bits, gv->d_keys, capacity, gv->d_count); \
		} while (0)
		if (gv->ntest <= 1)
			IV_TILED(1);
		else if (gv->ntest <= 2)
			IV_TILED(2);
		else if (gv->ntest <= 4)
			IV_TILED(4);
		else if (gv->ntest <= IV_REG_TESTS)
			IV_TILED(IV_REG_TESTS);
		else if (counting)
			IvTestWide<true><<<grid, IV_THREADS, 0, gv->stream>>>(*s, set, i0, a, b, gv->d_woff, gv->d_wstart,
				gv->ntest, run->scheme, prep->b_bits, gv->d_keys, capacity, gv->d_count);
		else
			IvTestWide<false><<<grid, IV_THREADS, 0, gv->stream>>>(*s, set, i0, a, b, gv->d_woff, gv->d_wstart,
				gv->ntest, run->scheme, prep->b_bits, gv->d_keys, capacity, gv->d_count);
#undef IV_TILED
		ODP_CUDA_RETURN_LAUNCH(gv->ctx, gv->stream, "testing the candidates");
		if (b < g1 && (status = gpu_iv_poll(gv, "testing the candidates")) != ODP_OK)
			return status;
	}
	return ODP_OK;
}

/* One pass over every driver's candidates; *matched receives the pairs. */
static OdpStatus
gpu_iv_test_all(GpuIv *gv, const IvSetArgs *s0, const IvSetArgs *s1, int64_t nd0,
				int64_t ndrivers, int64_t total, const OdpIvRun *run, bool counting,
				int64_t capacity, int64_t *matched)
{
	OdpStatus	status;

	ODP_CUDA_RETURN(gv->ctx, cudaMemsetAsync(gv->d_count, 0, sizeof(unsigned long long), gv->stream),
					"clearing the pair count");
	if ((status = gpu_iv_test_set(gv, s0, 0, 0, nd0, total, ndrivers, run, counting, capacity)) != ODP_OK)
		return status;
	if (ndrivers > nd0 &&
		(status = gpu_iv_test_set(gv, s1, 1, nd0, ndrivers, total, ndrivers, run, counting, capacity)) != ODP_OK)
		return status;
	return gpu_iv_read_int64(gv, gv->d_count, matched, "reading the number of pairs");
}

static OdpStatus gpu_iv_run_timed(GpuIv *gv, const OdpIvRun *run, int64_t *found,
								  int64_t *candidates);

/* Backend run: see intervals_internal.h. */
static OdpStatus
gpu_iv_run(void *self, const OdpIvRun *run, int64_t *found, int64_t *candidates)
{
	GpuIv	   *gv = (GpuIv *) self;
	double		t0 = odp_now_ms(),
				x0 = gv->ctx->transfer_ms;
	OdpStatus	status = gpu_iv_run_timed(gv, run, found, candidates);

	*gv->match_ms += odp_now_ms() - t0 - (gv->ctx->transfer_ms - x0);
	return status;
}

/* The run itself. */
static OdpStatus
gpu_iv_run_timed(GpuIv *gv, const OdpIvRun *run, int64_t *found, int64_t *candidates)
{
	const OdpIvPrep *prep = gv->prep;
	OdpContext *ctx = gv->ctx;
	IvSetArgs	s0,
				s1;
	int64_t		nd0,
				ndrivers,
				total = 0;
	bool		tests = odp_iv_needs_tests(prep, run->scheme);
	OdpStatus	status;

	*found = *candidates = 0;
	gv->nkeys = 0;
	if (run->scheme == ODP_IV_SELF)
	{
		s0 = iv_set_args(&gv->bs, &gv->bs);
		s1 = s0;
		nd0 = ndrivers = gv->bs.n;
	}
	else
	{
		if ((status = gpu_iv_build(gv, &prep->a, run->a0, run->a1, &gv->as)) != ODP_OK)
			return status;
		s0 = iv_set_args(&gv->as, &gv->bs);
		s1 = iv_set_args(&gv->bs, &gv->as);
		nd0 = gv->as.n;
		ndrivers = gv->as.n + gv->bs.n;
	}

	IvWindows<<<iv_blocks(ndrivers + 1, IV_THREADS), IV_THREADS, 0, gv->stream>>>(
		s0, s1, nd0, ndrivers, run->scheme, gv->d_wstart, gv->d_wlen);
	ODP_CUDA_RETURN_LAUNCH(ctx, gv->stream, "finding the windows");
	ODP_CUDA_RETURN(ctx, cub::DeviceScan::ExclusiveSum(gv->d_temp, gv->temp_bytes, gv->d_wlen,
													   gv->d_woff, ndrivers + 1, gv->stream),
					"adding up the windows");
	if ((status = gpu_iv_read_int64(gv, gv->d_woff + ndrivers, &total,
									"reading the number of candidates")) != ODP_OK)
		return status;
	*candidates = total;
	if (odp_cancel_requested(ctx))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "the matching was cancelled");

	if (!tests)
	{
		/* every candidate is a pair */
		*found = total;
		if (run->count_only || total > run->capacity)
			return ODP_OK;
		if ((status = gpu_iv_reserve_pairs(gv, total)) != ODP_OK)
			return status;
		for (int64_t k0 = 0; k0 < total; k0 += IV_LAUNCH_ITEMS)
		{
			int64_t		k1 = k0 + IV_LAUNCH_ITEMS < total ? k0 + IV_LAUNCH_ITEMS : total;

			IvExpand<<<iv_blocks(k1 - k0, IV_TILE), IV_THREADS, 0, gv->stream>>>(
				s0, s1, nd0, ndrivers, gv->d_woff, gv->d_wstart, k0, k1, run->scheme,
				prep->b_bits, gv->d_keys);
			ODP_CUDA_RETURN_LAUNCH(ctx, gv->stream, "writing the pairs");
			if (k1 < total && (status = gpu_iv_poll(gv, "writing the pairs")) != ODP_OK)
				return status;
		}
		gv->nkeys = total;
	}
	else if (run->count_only)
	{
		if ((status = gpu_iv_test_all(gv, &s0, &s1, nd0, ndrivers, total, run, true, 0, found)) != ODP_OK)
			return status;
		return ODP_OK;
	}
	else
	{
		/*
		 * A first pass into room for the pairs the sample foresees (and a
		 * margin); a second one, with room for all, if there were more.
		 */
		double		expect = prep->pair_share * (double) (run->scheme == ODP_IV_SELF ?
														  (double) gv->bs.n * (gv->bs.n - 1) / 2 :
														  (double) gv->as.n * gv->bs.n);
		int64_t		room = (int64_t) (1.25 * expect) + IV_FIRST_PAIRS;
		int64_t		matched = 0;

		if (room > total)
			room = total;
		if (room > run->capacity)
		{
			/* likely too many for this run: count first, allocate nothing */
			if ((status = gpu_iv_test_all(gv, &s0, &s1, nd0, ndrivers, total, run, true, 0,
										  &matched)) != ODP_OK)
				return status;
			*found = matched;
			if (matched > run->capacity)
				return ODP_OK;
			room = 0;			/* the pass below has room for all */
		}
		else
		{
			if ((status = gpu_iv_reserve_pairs(gv, room > 0 ? room : 1)) != ODP_OK ||
				(status = gpu_iv_test_all(gv, &s0, &s1, nd0, ndrivers, total, run, false, room,
										  &matched)) != ODP_OK)
				return status;
			*found = matched;
			if (matched > run->capacity)
				return ODP_OK;
		}
		if (matched > room)
		{
			if ((status = gpu_iv_reserve_pairs(gv, matched)) != ODP_OK ||
				(status = gpu_iv_test_all(gv, &s0, &s1, nd0, ndrivers, total, run, false, matched,
										  &matched)) != ODP_OK)
				return status;
		}
		gv->nkeys = matched;
	}

	/* the pairs in (a, b) order */
	{
		cub::DoubleBuffer<uint64_t> k(gv->d_keys, gv->d_keys_alt);
		double		t0 = odp_now_ms();

		ODP_CUDA_RETURN(ctx, cub::DeviceRadixSort::SortKeys(gv->d_ktemp, gv->ktemp_bytes, k, (int) gv->nkeys,
															0, prep->key_bits, gv->stream),
						"sorting the pairs");
		ODP_CUDA_RETURN(ctx, cudaStreamSynchronize(gv->stream), "sorting the pairs");
		gv->keys_cur = k.Current();
		*gv->sort_ms += odp_now_ms() - t0;
	}
	return ODP_OK;
}

/* Backend keys: copies a block of the sorted keys to the host. */
static OdpStatus
gpu_iv_keys(void *self, int64_t offset, int64_t n, const uint64_t **keys)
{
	GpuIv	   *gv = (GpuIv *) self;
	double		t0 = odp_now_ms();

	if (offset < 0 || n > ODP_IV_KEY_BLOCK || offset + n > gv->nkeys)
		return odp_fail(gv->ctx, ODP_ERR_INTERNAL, "pair keys out of range");
	if (gv->h_block == NULL)
		ODP_CUDA_RETURN(gv->ctx, cudaMallocHost((void **) &gv->h_block, sizeof(uint64_t) * ODP_IV_KEY_BLOCK),
						"allocating a page-locked buffer for the pairs");
	ODP_CUDA_RETURN(gv->ctx, cudaMemcpyAsync(gv->h_block, gv->keys_cur + offset, sizeof(uint64_t) * n,
											 cudaMemcpyDeviceToHost, gv->stream),
					"copying pairs from the GPU");
	ODP_CUDA_RETURN(gv->ctx, cudaStreamSynchronize(gv->stream), "copying pairs from the GPU");
	gv->ctx->transfer_ms += odp_now_ms() - t0;
	*keys = gv->h_block;
	return ODP_OK;
}

/* Backend release: frees everything on every path. */
static void
gpu_iv_release(void *self)
{
	GpuIv	   *gv = (GpuIv *) self;

	if (gv->stream_made)
	{
		(void) cudaStreamSynchronize(gv->stream);
		(void) cudaStreamDestroy(gv->stream);
	}
	OdpGpuArenaRelease(&gv->arena);
	if (gv->h_block != NULL)
		(void) cudaFreeHost(gv->h_block);
	for (int i = 0; i < 4; i++)
		OdpGpuUnpinHost(gv->ctx, gv->pinned[i]);
	(void) cudaGetLastError();
	free(gv->test_dim);
	free(gv);
}

/* One buffer of the planned block. */
typedef struct IvBuffer
{
	void	  **ptr;
	size_t		bytes;
} IvBuffer;

/*
 * Allocates the planned buffers as one block of the arena (one
 * cudaMalloc instead of twenty: each one costs a call's time) and copies
 * the small tables.
 */
static OdpStatus
gpu_iv_setup(GpuIv *gv)
{
	const OdpIvPrep *prep = gv->prep;
	OdpContext *ctx = gv->ctx;
	size_t		rows = (size_t) gv->rows_cap;
	size_t		stage = rows * (size_t) prep->dims * sizeof(uint64_t);
	size_t		drivers = (size_t) gv->drivers_cap + 1;
	size_t		tcells = rows * (size_t) (gv->ntest > 0 ? gv->ntest : 1);
	size_t		ntest = (size_t) (gv->ntest > 0 ? gv->ntest : 1);
	IvBuffer	buffers[] = {
		{(void **) &gv->d_stage_lo, stage}, {(void **) &gv->d_stage_hi, stage},
		{(void **) &gv->d_skeys, rows * 8}, {(void **) &gv->d_svals, rows * 4},
		{(void **) &gv->as.lo, rows * 8}, {(void **) &gv->as.hi, rows * 8},
		{(void **) &gv->as.pos, rows * 4}, {(void **) &gv->as.tlo, tcells * 8},
		{(void **) &gv->as.thi, tcells * 8},
		{(void **) &gv->bs.lo, rows * 8}, {(void **) &gv->bs.hi, rows * 8},
		{(void **) &gv->bs.pos, rows * 4}, {(void **) &gv->bs.tlo, tcells * 8},
		{(void **) &gv->bs.thi, tcells * 8},
		{(void **) &gv->d_wstart, drivers * 4}, {(void **) &gv->d_wlen, drivers * 8},
		{(void **) &gv->d_woff, drivers * 8}, {&gv->d_temp, gv->temp_bytes},
		{(void **) &gv->d_count, sizeof(unsigned long long)},
		{(void **) &gv->d_test_dim, sizeof(int) * ntest}, {(void **) &gv->d_test_box, ntest},
	};
	const int	nbuffers = (int) (sizeof(buffers) / sizeof(buffers[0]));
	uint8_t    *test_box = (uint8_t *) malloc(ntest);
	char	   *block = NULL;
	size_t		total = 0;
	OdpStatus	status;

	if (test_box == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	for (int k = 0; k < gv->ntest; k++)
		test_box[k] = prep->box[gv->test_dim[k]];
	for (int i = 0; i < nbuffers; i++)
		total += iv_line(buffers[i].bytes);
	if ((status = OdpGpuArenaAlloc(ctx, &gv->arena, total, "the sorted regions and their windows",
								   (void **) &block)) != ODP_OK)
		goto done;
	for (int i = 0; i < nbuffers; i++)
	{
		*buffers[i].ptr = block;
		block += iv_line(buffers[i].bytes);
	}
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, gv->d_test_dim, gv->test_dim, sizeof(int) * gv->ntest, gv->stream), "copying the test dimensions");
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, gv->d_test_box, test_box, (size_t) gv->ntest, gv->stream), "copying the test dimensions");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(gv->stream), "copying the test dimensions");
	status = ODP_OK;

cleanup:
done:
	free(test_box);
	return status;
}

/* See intervals_internal.h. */
OdpStatus
odp_gpu_iv_backend(OdpContext *ctx, const OdpIvPrep *prep, OdpIvBackend *backend)
{
	GpuIv	   *gv = (GpuIv *) calloc(1, sizeof(GpuIv));
	OdpStatus	status;
	size_t		side_bytes;

	memset(backend, 0, sizeof(*backend));
	if (gv == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	gv->ctx = ctx;
	gv->prep = prep;
	gv->sort_ms = &backend->sort_ms;
	gv->match_ms = &backend->match_ms;
	gv->test_dim = (int *) malloc(sizeof(int) * (size_t) prep->dims);
	if (gv->test_dim == NULL)
	{
		free(gv);
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	}
	for (int d = 0; d < prep->dims; d++)
		if (odp_iv_is_test_dim(prep, d))
			gv->test_dim[gv->ntest++] = d;
	if ((status = OdpGpuBegin(ctx, &gv->dev)) != ODP_OK)
	{
		free(gv->test_dim);
		free(gv);
		return status;
	}
	OdpGpuArenaInit(&gv->arena, gv->dev.budget);
	if (cudaStreamCreateWithFlags(&gv->stream, cudaStreamNonBlocking) != cudaSuccess)
	{
		status = OdpGpuFail(ctx, cudaGetLastError(), "creating a CUDA stream", __FILE__, __LINE__);
		gpu_iv_release(gv);
		return status;
	}
	gv->stream_made = true;
	if ((status = gpu_iv_plan(gv, backend)) != ODP_OK ||
		(status = gpu_iv_setup(gv)) != ODP_OK ||
		(status = gpu_iv_capacity(gv, backend)) != ODP_OK)
	{
		gpu_iv_release(gv);
		return status;
	}
	/* large inputs copy faster page-locked */
	side_bytes = sizeof(uint64_t) * (size_t) prep->a.nlive * prep->dims;
	gv->pinned[0] = OdpGpuPinHost(ctx, prep->a.lo, side_bytes);
	gv->pinned[1] = OdpGpuPinHost(ctx, prep->a.hi, side_bytes);
	if (!prep->self)
	{
		side_bytes = sizeof(uint64_t) * (size_t) prep->b.nlive * prep->dims;
		gv->pinned[2] = OdpGpuPinHost(ctx, prep->b.lo, side_bytes);
		gv->pinned[3] = OdpGpuPinHost(ctx, prep->b.hi, side_bytes);
	}
	backend->self = gv;
	backend->block = ODP_IV_KEY_BLOCK;
	backend->load = gpu_iv_load;
	backend->run = gpu_iv_run;
	backend->keys = gpu_iv_keys;
	backend->release = gpu_iv_release;
	return ODP_OK;
}
