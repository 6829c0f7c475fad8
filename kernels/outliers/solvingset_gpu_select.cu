/*-------------------------------------------------------------------------
 *
 * solvingset_gpu_select.cu
 *	  SolvingSet's GPU backend, the selection on the device (single-pass
 *	  mode): pruning and the choice of the next batch from the upper
 *	  bounds the single pass leaves there, through a stable radix sort.
 *
 * Map of this file: the pruning (SsPruneKernel), the row ids
 * (SsIotaKernel), select() (SsSelect), and for the constructor the sort's
 * temporary storage (SsSortBytes) and the row ids' launch
 * (SsLaunchRowIds).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_gpu_select.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include "common/host_sort.h"
#include "gpu/gpu_check.cuh"
#include "outliers/solvingset_gpu_internal.cuh"

/*
 * Selection on the GPU (SsSelect): prunes active rows whose upper bound
 * is under min_out (when prune) and writes the sort keys, the upper bound
 * of each active row and -inf for the others (upper bounds are sums of
 * distances or +inf, never -inf); counts the active rows into *nact.
 */
static __global__ void
SsPruneKernel(uint8_t *active, const double *upper, int64_t rows, int prune,
			  double min_out, double *keys, int32_t *nact)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	bool		a = false;
	unsigned	n;

	if (p < rows)
	{
		a = active[p] != 0 && !(prune && upper[p] < min_out);
		active[p] = a ? 1 : 0;
		keys[p] = a ? upper[p] : -INFINITY;
	}
	n = __popc(__ballot_sync(0xffffffffu, a));
	if ((threadIdx.x & 31) == 0 && n > 0)
		atomicAdd(nact, (int32_t) n);
}

/* Fills ids[p] = p: the row ids that the selection sorts. */
static __global__ void
SsIotaKernel(int64_t *ids, int64_t rows)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (p < rows)
		ids[p] = p;
}

/*
 * See OdpSsBackend.select in solvingset_internal.h.  In single-pass mode the
 * upper bounds of all rows are on the device after every batch, so
 * pruning and the choice of the next batch run there: a stable radix sort
 * of (upper bound descending, row id), whose stability keeps equal bounds
 * in ascending row order, replaces the host's pass over every row and its
 * selection.  Only the active flags and the chosen rows come back.
 */
OdpStatus
SsSelect(void *self, bool prune, double min_out, int64_t m, uint8_t *active,
		 int64_t *cand, int64_t *nc, bool *done)
{
	GpuSs	   *ss = (GpuSs *) self;
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int32_t		nact = 0;
	size_t		tmp_bytes = ss->sort_tmp_bytes;
	double		t0;

	*done = false;
	if (!ss->fused)
		return ODP_OK;
	ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_active, active, (size_t) ss->rows, ss->stream),
				 "copying SolvingSet active rows to the GPU");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_nact, 0, sizeof(int32_t), ss->stream),
				 "clearing a SolvingSet counter");
	SsPruneKernel<<<(unsigned) ((ss->rows + 255) / 256), 256, 0, ss->stream>>>(ss->d_active, ss->d_upper, ss->rows, prune ? 1 : 0, min_out, ss->d_keys, ss->d_nact);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet prune kernel");
	ODP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairsDescending(ss->d_sort_tmp, tmp_bytes,
																ss->d_keys, ss->d_keys + ss->rows,
																ss->d_rowid, ss->d_rowid + ss->rows,
																ss->rows, 0, 64, ss->stream),
				 "sorting SolvingSet upper bounds");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&nact, ss->d_nact, sizeof(int32_t),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet active rows from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(active, ss->d_active, (size_t) ss->rows,
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet active rows from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "selecting SolvingSet candidates");
	*nc = nact < m ? nact : m;
	if (*nc > 0)
	{
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(cand, ss->d_rowid + ss->rows,
										  (size_t) *nc * sizeof(int64_t),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying SolvingSet candidates from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
					 "copying SolvingSet candidates from the GPU");
	}
	odp_sort_int64(cand, *nc);
	ctx->compute_ms += odp_now_ms() - t0;
	*done = true;
cleanup:
	return status;
}

/* See solvingset_gpu_internal.cuh. */
cudaError_t
SsSortBytes(int64_t rows, size_t *bytes)
{
	return cub::DeviceRadixSort::SortPairsDescending(NULL, *bytes,
													 (double *) NULL, (double *) NULL,
													 (int64_t *) NULL, (int64_t *) NULL,
													 rows, 0, 64);
}

/* See solvingset_gpu_internal.cuh. */
void
SsLaunchRowIds(cudaStream_t stream, int64_t *ids, int64_t rows)
{
	SsIotaKernel<<<(unsigned) ((rows + 255) / 256), 256, 0, stream>>>(ids, rows);
}
