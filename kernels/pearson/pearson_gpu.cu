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
 *
 * The files.  This one holds the plan (resident or staged, the tile
 * sizes, from the memory budget), the buffers, the tile loop and the
 * entry points; the steps are in files of their own, each with the
 * kernels it launches: pearson_gpu_prep.cu (the preparation),
 * pearson_gpu_tiles.cu (the products), pearson_gpu_pairs.cu (the pairs
 * over a threshold) and pearson_gpu_top.cu (the top-k lists); what they
 * share is in pearson_gpu_internal.cuh.
 *
 * Map of this file: the plan's constants (PEARSON_*), the test counter
 * odp_gpu_pearson_staged_runs, the benchmark builds' printing of the
 * stage times (PearsonTracePrint), the plan and its buffers
 * (PearsonTempBytes, PearsonPlanBytes, PearsonPlanClamp, PearsonPlan,
 * PearsonAllocate), the tile loop PearsonRun, PearsonRelease and the
 * entry points odp_gpu_pearson and odp_gpu_pearson_available.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "pearson/pearson_gpu_internal.cuh"

#define PEARSON_SUMS			6		/* Sxy, n, Sx, Sy, Sxx, Syy */
#define PEARSON_MAX_T			4096	/* tile rows */
#define PEARSON_MAX_T_TRIANGLE	1024	/* tile rows over an upper triangle */
#define PEARSON_TILE_ELEMS		((int64_t) 1 << 26)
#define PEARSON_PAIR_TILE_ELEMS ((int64_t) 1 << 25)	/* when pairs are kept */
#define PEARSON_TILE_FLOP		((double) ((int64_t) 1 << 39))
#define PEARSON_PREP_ELEMS		((int64_t) 1 << 26)	/* values per prepared chunk */

/* Calls that staged their series in host memory, for the tests (not thread-safe). */
extern "C" int64_t odp_gpu_pearson_staged_runs;
int64_t		odp_gpu_pearson_staged_runs = 0;

#ifdef ODP_PEARSON_TRACE
#include <stdio.h>
static const char *const pearson_t_names[PEARSON_T_COUNT] = {
	"setup", "prepare", "gemm", "finish", "select", "top-k", "host"
};

/* Prints and clears this thread's stage times, of a call on device. */
static void
PearsonTracePrint(int device)
{
	fprintf(stderr, "pearson stages [gpu %d]: ", device);
	for (int s = 0; s < PEARSON_T_COUNT; s++)
	{
		fprintf(stderr, "%s%s %.2f ms", s ? ", " : "", pearson_t_names[s], pearson_t_ms[s]);
		pearson_t_ms[s] = 0.0;
	}
	fprintf(stderr, "\n");
}
#endif

/* Device bytes of temporary storage CUB needs for this call's steps. */
static OdpStatus
PearsonTempBytes(GpuPearson *g, size_t *bytes)
{
	OdpStatus	status;
	size_t		b = 0;

	*bytes = 0;
	if (!g->job->top && (status = PearsonSelectBytes(g, bytes)) != ODP_OK)
		return status;
	if (g->job->p->method == ODP_PEARSON_METHOD_SPEARMAN)
	{
		if ((status = PearsonRankBytes(g, &b)) != ODP_OK)
			return status;
		if (b > *bytes)
			*bytes = b;
	}
	return ODP_OK;
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

/*
 * Frees everything the call holds; safe on any partial state.  The cuBLAS
 * handle is kept for the next call unless the call ended in a GPU error.
 */
static void
PearsonRelease(GpuPearson *g, OdpStatus status)
{
	GpuPearsonSide *sides[2] = {&g->x, &g->y};

	if (g->stream != NULL)
		(void) cudaStreamSynchronize(g->stream);
	PearsonUnpin(g);
	if (g->handle != NULL)
		OdpBlasEnd(g->blas, g->handle, status != ODP_ERR_GPU);
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
	PearsonRelease(&g, status);
#ifdef ODP_PEARSON_TRACE
	PearsonTracePrint(g.dev.id);
#endif
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
