/*-------------------------------------------------------------------------
 *
 * pearson_gpu_tiles.cu
 *	  The correlations' GPU products: a tile of coefficients as cuBLAS
 *	  DGEMMs of the prepared planes, and for pairwise data the six sums
 *	  turned into coefficients in place (PearsonFinishPairwise).
 *
 * Map of this file: the planes a pairwise tile's exact recomputation
 * reads (PearsonPlanes), PearsonFinishPairwise, a panel of series on the
 * device (PearsonPanel), one product (PearsonGemm) and a tile's products
 * (PearsonTileProducts).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu_tiles.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "pearson/pearson_gpu_internal.cuh"

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
 * Points planes[] at series [s0, s0 + n) of side on the device: into its
 * resident planes, or (staged) after copying them into panel, which has
 * room for panel_rows series per plane.
 */
OdpStatus
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

		ODP_CUDA_TRY(g->ctx, OdpGpuCopyIn(g->ctx, dst, side->host[q] + (size_t) s0 * dims,
											 (size_t) n * dims * sizeof(double), g->stream),
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
OdpStatus
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
