/*-------------------------------------------------------------------------
 *
 * solvingset_gpu_external.cu
 *	  SolvingSet's GPU backend, batches given by value (the distributed
 *	  form: candidates of other shards, with their own rows where they
 *	  have one here): uploaded once, then the single pass where every
 *	  bound is known, else the two passes, both gathering from them.
 *
 * Map of this file: the buffers (SsExternalReserve), the upload
 * (SsExternalUpload), the single pass of such a batch (SsExternalFused),
 * the rows' bounds (SsRowBounds) and external() (SsExternal).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_gpu_external.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpu/gpu_check.cuh"
#include "include/odp_distance.h"
#include "outliers/solvingset_gpu_internal.cuh"

/* Makes the buffers of batches given by value hold nc candidates. */
static OdpStatus
SsExternalReserve(GpuSs *ss, int64_t nc)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int64_t    *iota;
	float	   *norms = NULL;

	if (nc <= ss->ext_cap)
		return ODP_OK;
	OdpGpuArenaFree(&ss->arena, ss->d_ext);
	OdpGpuArenaFree(&ss->arena, ss->d_ext_norms);
	OdpGpuArenaFree(&ss->arena, ss->d_own);
	OdpGpuArenaFree(&ss->arena, ss->d_lists);
	OdpGpuArenaFree(&ss->arena, ss->d_own2);
	OdpGpuArenaFree(&ss->arena, ss->d_ext_bound);
	ss->d_ext = NULL;
	ss->d_ext_norms = NULL;
	ss->d_own = NULL;
	ss->d_lists = NULL;
	ss->d_own2 = NULL;
	ss->d_ext_bound = NULL;
	ss->ext_cap = 0;
	iota = (int64_t *) realloc(ss->h_iota, sizeof(int64_t) * (size_t) nc);
	if (iota != NULL)
		ss->h_iota = iota;
	if (ss->cosine)
	{
		norms = (float *) realloc(ss->h_ext_norms, sizeof(float) * (size_t) nc);
		if (norms != NULL)
			ss->h_ext_norms = norms;
	}
	if (iota == NULL || (ss->cosine && norms == NULL))
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld SolvingSet candidates", (long long) nc);
	for (int64_t i = 0; i < nc; i++)
		ss->h_iota[i] = i;
	status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * ss->dims * sizeof(float),
							  "the candidates of other shards", (void **) &ss->d_ext);
	if (status == ODP_OK && ss->cosine)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(float),
								  "the norms of other shards' candidates",
								  (void **) &ss->d_ext_norms);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(int64_t),
								  "the candidates' own rows", (void **) &ss->d_own);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * ss->k * sizeof(float),
								  "the candidates' neighbour lists", (void **) &ss->d_lists);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(int64_t),
								  "the candidates' own rows", (void **) &ss->d_own2);
	if (status == ODP_OK)
		status = OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) nc * sizeof(float),
								  "the rows' bounds", (void **) &ss->d_ext_bound);
	if (status == ODP_OK)
		ss->ext_cap = nc;
	return status;
}

/* Uploads a batch given by value: vectors (and norms), own rows. */
static OdpStatus
SsExternalUpload(GpuSs *ss, const float *vectors, const int64_t *own, int32_t nc)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	for (int32_t i = 0; i < nc && ss->cosine; i++)
		ss->h_ext_norms[i] = odp_row_norm(vectors + (size_t) i * ss->dims, ss->dims);
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_ext, vectors, (size_t) nc * ss->dims * sizeof(float), ss->stream),
				 "copying candidates to the GPU");
	if (ss->cosine)
		ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_ext_norms, ss->h_ext_norms,
										  (size_t) nc * sizeof(float), ss->stream),
					 "copying candidate norms to the GPU");
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_own, own, (size_t) nc * sizeof(int64_t), ss->stream),
				 "copying candidates to the GPU");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	return status;
}

/*
 * The single pass for a batch given by value, every bound known (from
 * the candidates' home nodes): SsExactUpdate's pass with the candidates'
 * own rows (-1 for another shard's) and their bounds uploaded, the
 * buffers turned into k-lists of the distances under the bound, and an
 * overflowed buffer's candidate taken by the exact step.
 */
static OdpStatus
SsExternalFused(GpuSs *ss, const float *vectors, const int64_t *own,
				const float *bounds, int32_t nc, const uint8_t *active,
				float *lists, double *upper, int64_t *distances)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	OdpKnnProblem prob;
	int64_t		nover = 0;
	int			bad = 0;
	float	   *over_lists = NULL;
	double		t0;

	odp_gpu_ss_fused_batches++;
	ODP_TRY(SsExternalUpload(ss, vectors, own, nc));
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_bound, bounds, (size_t) nc * sizeof(float), ss->stream),
				 "copying candidate bounds to the GPU");
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_active, active, (size_t) ss->rows, ss->stream),
				 "copying SolvingSet active rows to the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;
	ODP_TRY(SsGather(ss, ss->d_ext, ss->d_ext_norms, ss->h_iota, nc, nc, 1));
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_fcount, 0, (size_t) nc * sizeof(int32_t),
									  ss->stream),
				 "clearing the SolvingSet candidate buffers");
	SsBatchProblem(ss, ss->d_data, ss->d_norms, ss->rows, nc, &prob);
	prob.cand_bound = ss->d_bound;
	prob.cand_self = ss->d_own;
	prob.cand_limit = ss->d_limit;
	prob.cand_count = ss->d_fcount;
	prob.cand_buf = ss->d_fbuf;
	prob.cand_cap = ss->fcap;
	prob.query_active = ss->d_active;
	ODP_TRY(OdpKnnAccumulate(ctx, &ss->dev, ss->stream, &prob, &ss->upd_state,
							&ctx->compute_ms));
	ctx->chunks++;
	ss->cand_seen += nc;
	*distances += (int64_t) nc * ss->rows;

	t0 = odp_now_ms();
	SsLaunchBufferWeight(ss, nc, ss->d_own, ss->d_lists);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet buffer list kernel");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(lists, ss->d_lists, (size_t) nc * ss->k * sizeof(float),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet neighbour lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->h_fcount, ss->d_fcount, (size_t) nc * sizeof(int32_t),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet neighbour lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, ss->d_bad, sizeof(int), cudaMemcpyDeviceToHost,
									  ss->stream),
				 "copying SolvingSet neighbour lists from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream), "computing SolvingSet neighbour lists");
	ctx->compute_ms += odp_now_ms() - t0;
	if (bad != 0)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"a SolvingSet candidate's buffer lacks its distance to itself on the GPU");

	/* overflowed buffers: those candidates by the exact step, full lists */
	for (int32_t i = 0; i < nc; i++)
		if (ss->h_fcount[i] > ss->fcap)
		{
			ss->h_over[nover] = i;
			ss->h_overpos[nover++] = own[i];
		}
	odp_gpu_ss_overflowed += nover;
	if (nover > 0)
	{
		over_lists = (float *) malloc(sizeof(float) * (size_t) nover * ss->k);
		if (over_lists == NULL)
			return odp_fail(ctx, ODP_ERR_HOST_OOM,
							"out of host memory for %lld neighbour lists", (long long) nover);
		ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_own2, ss->h_overpos,
										  (size_t) nover * sizeof(int64_t), ss->stream),
					 "copying candidates to the GPU");
		ODP_TRY(SsExactFrom(ss, ss->d_ext, ss->d_ext_norms, ss->h_over, ss->d_own2,
						   (int32_t) nover, NULL, over_lists, distances));
		for (int64_t j = 0; j < nover; j++)
			memcpy(lists + (size_t) ss->h_over[j] * ss->k, over_lists + (size_t) j * ss->k,
				   sizeof(float) * ss->k);
	}
	status = SsUpperBounds(ss, upper);
cleanup:
	free(over_lists);
	return status;
}

/*
 * See OdpSsBackend.row_bounds in solvingset_internal.h: the last entry of a
 * full sorted partial list, read on the device; +inf everywhere where the
 * single pass is off or on failure (the batch then takes two passes).
 */
void
SsRowBounds(void *self, const int64_t *rows, int64_t n, float *out)
{
	GpuSs	   *ss = (GpuSs *) self;
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;

	for (int64_t i = 0; i < n; i++)
		out[i] = INFINITY;
	if (!ss->fused || !ss->upd_ready || ss->compacted || n > ss->cap)
		return;
	ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	ODP_TRY(SsExternalReserve(ss, n));
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_cand, rows, (size_t) n * sizeof(int64_t), ss->stream),
				 "copying SolvingSet rows to the GPU");
	SsLaunchBounds(ss, n, ss->d_ext_bound);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet bound kernel");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(out, ss->d_ext_bound, (size_t) n * sizeof(float),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet bounds from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream), "reading SolvingSet bounds");
cleanup:
	if (status != ODP_OK)
	{
		for (int64_t i = 0; i < n; i++)
			out[i] = INFINITY;
		ctx->message[0] = '\0';
	}
}

/*
 * See OdpSsBackend.external in solvingset_internal.h: the vectors are
 * uploaded once and both steps gather from them (positions 0, 1, ...),
 * the exact step skipping a candidate's own row by index.
 */
OdpStatus
SsExternal(void *self, const float *vectors, const int64_t *own, const float *bounds,
		   int32_t nc, const uint8_t *active, float *lists, double *upper,
		   int64_t *distances)
{
	GpuSs	   *ss = (GpuSs *) self;
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	bool		fused = bounds != NULL && ss->fused && ss->upd_ready && nc <= ss->fbatch;

	if (nc <= 0)
		return ODP_OK;
	ODP_CUDA_RETURN(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	ODP_TRY(SsExternalReserve(ss, nc));
	for (int32_t i = 0; i < nc && fused; i++)
		fused = isfinite(bounds[i]);
	if (fused)
		return SsExternalFused(ss, vectors, own, bounds, nc, active, lists, upper,
							   distances);
	ODP_TRY(SsExternalUpload(ss, vectors, own, nc));
	ODP_TRY(SsExactFrom(ss, ss->d_ext, ss->d_ext_norms, ss->h_iota, ss->d_own, nc, NULL,
					   lists, distances));
	if (odp_cancel_requested(ctx))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
	status = SsUpdateFrom(ss, ss->d_ext, ss->d_ext_norms, ss->h_iota, nc, active, upper,
						  distances);
cleanup:
	return status;
}
