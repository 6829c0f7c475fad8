/*-------------------------------------------------------------------------
 *
 * solvingset_gpu.cu
 *	  GPU backend of SolvingSet (seed 001, section 3.5): the two
 *	  distance-heavy steps of a candidate batch, on the shared k-NN
 *	  primitive (knn_gpu.cu).
 *
 * The driver (solvingset.c) owns pruning, candidate choice and the
 * solving set; this file only answers exact() and update() of the
 * OdpSsBackend contract (solvingset_internal.h).
 *
 * Design, re-thought for a modern GPU rather than the paper's Fermi-era
 * kernels (per-thread heaps, an m x N distance matrix in device memory):
 *	- The matrix stays resident in device memory for the whole
 *	  computation, and so does the update state: every row's k smallest
 *	  distances to the candidates seen so far (an OdpKnnState over all
 *	  rows, reset once, accumulated across batches).  No distance matrix
 *	  is ever stored: the primitive fuses distances and selection.
 *	- exact(): the candidate rows are gathered on the device from an
 *	  uploaded index list, and the primitive runs with them as queries
 *	  against all rows, keeping k + 1 neighbours and no self-exclusion
 *	  (the gathered queries have no contiguous global indexes).  The
 *	  (k + 1)-list of all rows, minus the row itself where it occurs, is
 *	  exactly the k-list of the other rows, ties and duplicates included,
 *	  so the weight kernel skips the entry whose index is the candidate's
 *	  own and sums the first k others with odp_sum_ascending's loop: the
 *	  same doubles as the CPU path.  A batch of a few thousand queries is
 *	  a fraction of one wave of thread blocks, so the candidate rows are
 *	  split into ranges, each served by its own copy of the queries
 *	  (OdpKnnProblem.cand_split), and the weight kernel merges the
 *	  per-range lists, which are sorted by (distance, index) and
 *	  disjoint, into the global order.
 *	- update(): queries are all rows, candidates the gathered batch, with
 *	  global candidate indexes made unique across batches by a running
 *	  base (the primitive's merge needs unique keys; the upper bound only
 *	  needs the distances).  A kernel then writes upper[p] for every row.
 *	  A candidate's own list receives its distance 0 to itself, which is
 *	  harmless: it is in the solving set and its upper bound is unused.
 *	- Single pass (SsExactUpdate, from the second batch on, k <= 128):
 *	  exact() and update() in one primitive call over all rows x the
 *	  batch, each distance computed once; a candidate's weight comes from
 *	  the distances under its own partial list's k-th (a buffer per
 *	  candidate, SsBufferWeightKernel).  Pruning and the next batch are
 *	  then chosen on the device (SsSelect), so the upper bounds never
 *	  travel to the host.  Measured on the H100 (Poker stand-in, 1M x 10,
 *	  k = 50): 1.73 s with two passes and host selection, 1.13 s this way.
 *	- Two-pass mode only (k > 128, or no room for the single pass'
 *	  buffers): inactive rows are dropped from the update queries once they are a
 *	  quarter of them (SsCompact): the active rows' states move into a
 *	  second state buffer and their rows into a query buffer, and their
 *	  upper bounds are scattered back on the host.  The driver never
 *	  reactivates a row, so nothing dropped is needed again.
 *
 * Memory: rows x dims floats of input, rows x (12 k + 4) bytes of update
 * state, and per batch slot a few hundred bytes.  When that exceeds the
 * budget the constructor fails with ODP_ERR_GPU_OOM, and the driver falls
 * back to brute force, which chunks.
 *
 * The files.  This one holds the backend's constructor (the plan against
 * the memory budget, the buffers, the upload) and its release; the steps
 * are in files of their own, each with the kernels it launches:
 * solvingset_gpu_passes.cu (the two passes: exact() and update()),
 * solvingset_gpu_fused.cu (the single pass, exact_update()),
 * solvingset_gpu_external.cu (batches given by value: external() and
 * row_bounds()) and solvingset_gpu_select.cu (the selection on the
 * device, select()); what they share is in solvingset_gpu_internal.cuh.
 *
 * Map of this file: the batch size (SS_MAX_BATCH), the single pass' knob
 * odp_gpu_ss_fused_cap and batch (SS_FUSED_BATCH), SsRelease and the
 * constructor, odp_gpu_ss_backend.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_gpu.cu
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpu/gpu_check.cuh"
#include "outliers/solvingset_gpu_internal.cuh"

/* Candidates handled per primitive call; larger batches are chunked. */
#define SS_MAX_BATCH	32768

/*
 * Single pass (SsExactUpdate): distances a candidate's buffer holds.  -1
 * picks SS_FUSED_CAP, 0 disables the single pass, a positive value (at
 * most SS_FUSED_CAP) forces that capacity: the tests force small ones so
 * that buffers overflow.  A tuning knob like those of
 * solvingset_gpu_passes.cu.
 */
extern "C" int odp_gpu_ss_fused_cap;
int			odp_gpu_ss_fused_cap = -1;

/* Candidates per single-pass primitive call. */
#define SS_FUSED_BATCH		16384

/* See OdpSsBackend.release in solvingset_internal.h. */
static void
SsRelease(void *self)
{
	GpuSs	   *ss = (GpuSs *) self;

	if (ss == NULL)
		return;
	(void) cudaSetDevice(ss->dev.id);
	if (ss->stream != NULL)
	{
		/* nothing may still write into memory we are about to free */
		(void) cudaStreamSynchronize(ss->stream);
		(void) cudaStreamDestroy(ss->stream);
	}
	OdpGpuArenaRelease(&ss->arena);
	(void) cudaGetLastError();
	free(ss->h_qrow);
	free(ss->h_pos);
	free(ss->h_upper);
	free(ss->h_fcount);
	free(ss->h_over);
	free(ss->h_overw);
	free(ss->h_overpos);
	free(ss->h_iota);
	free(ss->h_ext_norms);
	free(ss);
}

/*
 * GPU SolvingSet backend for m; arguments validated by the driver
 * (1 <= k < rows, k < ODP_MAX_K, norms set exactly for cosine).  Uploads
 * the matrix and allocates every buffer now, so that the batches cannot
 * fail for memory; on failure nothing stays allocated.
 */
extern "C" OdpStatus
odp_gpu_ss_backend(OdpContext *ctx, const OdpMatrix *m, OdpMetric metric,
				   int32_t k, const float *norms, OdpSsBackend *backend)
{
	OdpStatus	status = ODP_OK;
	GpuSs	   *ss;
	size_t		need;
	size_t		row_bytes;
	int64_t		cap_pad;
	double		t0;

	memset(backend, 0, sizeof(*backend));
	if ((metric == ODP_METRIC_COSINE) != (norms != NULL) ||
		k < 1 || k >= ODP_MAX_K || k >= m->rows)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"invalid SolvingSet backend arguments (k %d, rows %lld)",
						k, (long long) m->rows);
	ss = (GpuSs *) calloc(1, sizeof(GpuSs));
	if (ss == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for the GPU SolvingSet backend");
	ss->ctx = ctx;
	ss->rows = m->rows;
	ss->dims = m->dims;
	ss->k = k;
	ss->metric = metric;
	ss->cosine = (metric == ODP_METRIC_COSINE);
	OdpGpuArenaInit(&ss->arena, 0);
	memset(&ss->exact_state, 0, sizeof(ss->exact_state));
	memset(&ss->upd_state, 0, sizeof(ss->upd_state));

	status = OdpGpuBegin(ctx, &ss->dev);
	if (status != ODP_OK)
	{
		free(ss);
		return status;
	}
	ss->arena.budget = ss->dev.budget;
	ss->nq = m->rows;
	ss->h_qrow = (int64_t *) malloc(sizeof(int64_t) * (size_t) m->rows);
	ss->h_pos = (int64_t *) malloc(sizeof(int64_t) * (size_t) m->rows);
	ss->h_upper = (double *) malloc(sizeof(double) * (size_t) m->rows);
	if (!ss->h_qrow || !ss->h_pos || !ss->h_upper)
	{
		status = odp_fail(ctx, ODP_ERR_HOST_OOM,
						  "out of host memory for the GPU SolvingSet backend");
		goto cleanup;
	}
	ss->cap = m->rows < SS_MAX_BATCH ? (int32_t) m->rows : SS_MAX_BATCH;
	cap_pad = SsPad(ss->cap);
	ss->qcap = cap_pad;

	/* check the plan against the budget first, for a clear message */
	row_bytes = (size_t) m->dims * sizeof(float) + (ss->cosine ? sizeof(float) : 0);
	need = (size_t) m->rows * (2 * row_bytes + 2 * OdpKnnStateBytesPerRow(k) +
							   sizeof(double) + sizeof(int64_t)) +
		(size_t) ss->qcap * (row_bytes + OdpKnnStateBytesPerRow(k + 1)) +
		(size_t) ss->cap * (sizeof(int64_t) + sizeof(double)) +
		16 * ODP_GPU_ALLOC_ALIGN;
	/* the single pass, when k allows and its buffers fit beside the rest */
	if (k <= ODP_KNN_FAST_MAX_K && odp_gpu_ss_fused_cap != 0)
	{
		size_t		fneed;

		ss->fcap = odp_gpu_ss_fused_cap < 0 || odp_gpu_ss_fused_cap > SS_FUSED_CAP ?
			SS_FUSED_CAP : odp_gpu_ss_fused_cap;
		ss->fbatch = ss->cap < SS_FUSED_BATCH ? ss->cap : SS_FUSED_BATCH;
		/* the selection's sort needs about one more copy of its input */
		ss->sort_tmp_bytes = 0;
		if (SsSortBytes(m->rows, &ss->sort_tmp_bytes) != cudaSuccess)
		{
			(void) cudaGetLastError();	/* not sticky: keep it from later checks */
			ss->sort_tmp_bytes = (size_t) m->rows * 32;
		}
		fneed = (size_t) m->rows * (1 + 2 * sizeof(double) + 2 * sizeof(int64_t)) +
			ss->sort_tmp_bytes +
			(size_t) ss->fbatch * ((size_t) ss->fcap * sizeof(float) + 3 * sizeof(float)) +
			10 * ODP_GPU_ALLOC_ALIGN;
		ss->fused = need + fneed <= ss->dev.budget;
		if (ss->fused)
			need += fneed;
	}
	if (need > ss->dev.budget)
	{
		status = odp_fail(ctx, ODP_ERR_GPU_OOM,
						"GPU memory budget of %zu bytes is too small for SolvingSet on %lld rows of %d dimensions with k = %d: %zu bytes are needed (brute force needs less)",
						ss->dev.budget, (long long) m->rows, m->dims, k, need);
		goto cleanup;
	}

	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&ss->stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * m->dims * sizeof(float),
							"the input rows", (void **) &ss->d_data));
	if (ss->cosine)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(float),
								"the row norms", (void **) &ss->d_norms));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->cap * sizeof(int64_t),
							"the SolvingSet candidates", (void **) &ss->d_cand));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena,
							(size_t) ss->qcap * m->dims * sizeof(float),
							"the SolvingSet candidate rows", (void **) &ss->d_gather));
	if (ss->cosine)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena,
								(size_t) ss->qcap * sizeof(float),
								"the SolvingSet candidate norms", (void **) &ss->d_gnorm));
	ODP_TRY(OdpKnnStateAlloc(ctx, &ss->arena, ss->qcap, k + 1,
							&ss->exact_state));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->cap * sizeof(double),
							"the SolvingSet weights", (void **) &ss->d_weight));
	ODP_TRY(OdpKnnStateAlloc(ctx, &ss->arena, m->rows, k, &ss->upd_state));
	ODP_TRY(OdpKnnStateAlloc(ctx, &ss->arena, m->rows, k, &ss->alt_state));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(int64_t),
							"the SolvingSet active rows", (void **) &ss->d_qrow));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * m->dims * sizeof(float),
							"the SolvingSet active row data", (void **) &ss->d_q));
	if (ss->cosine)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(float),
								"the SolvingSet active row norms", (void **) &ss->d_qnorm));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * sizeof(double),
							"the SolvingSet upper bounds", (void **) &ss->d_upper));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, sizeof(int), "an error flag",
							(void **) &ss->d_bad));
	if (ss->fused)
	{
		ss->h_fcount = (int32_t *) malloc(sizeof(int32_t) * (size_t) ss->fbatch);
		ss->h_over = (int64_t *) malloc(sizeof(int64_t) * (size_t) ss->fbatch);
		ss->h_overw = (double *) malloc(sizeof(double) * (size_t) ss->fbatch);
		ss->h_overpos = (int64_t *) malloc(sizeof(int64_t) * (size_t) ss->fbatch);
		if (!ss->h_fcount || !ss->h_over || !ss->h_overw || !ss->h_overpos)
		{
			status = odp_fail(ctx, ODP_ERR_HOST_OOM,
							  "out of host memory for the GPU SolvingSet backend");
			goto cleanup;
		}
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows,
								"the SolvingSet active flags", (void **) &ss->d_active));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->fbatch * sizeof(float),
								"the SolvingSet candidate bounds", (void **) &ss->d_bound));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->fbatch * sizeof(float),
								"the SolvingSet candidate limits", (void **) &ss->d_limit));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) ss->fbatch * sizeof(int32_t),
								"the SolvingSet candidate counts", (void **) &ss->d_fcount));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena,
								(size_t) ss->fbatch * ss->fcap * sizeof(float),
								"the SolvingSet candidate buffers", (void **) &ss->d_fbuf));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, sizeof(int), "a SolvingSet flag",
								(void **) &ss->d_unbounded));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, sizeof(int32_t), "a SolvingSet counter",
								(void **) &ss->d_nact));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * 2 * sizeof(double),
								"the SolvingSet selection keys", (void **) &ss->d_keys));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, (size_t) m->rows * 2 * sizeof(int64_t),
								"the SolvingSet selection rows", (void **) &ss->d_rowid));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &ss->arena, ss->sort_tmp_bytes > 0 ? ss->sort_tmp_bytes : 1,
								"the SolvingSet selection sort", &ss->d_sort_tmp));
		SsLaunchRowIds(ss->stream, ss->d_rowid, m->rows);
		ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet selection setup");
	}
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(ss->d_bad, 0, sizeof(int), ss->stream),
				 "clearing an error flag");

	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_data, m->data,
									  (size_t) m->rows * m->dims * sizeof(float), ss->stream),
				 "copying the input rows to the GPU");
	if (ss->cosine)
		ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_norms, norms,
										  (size_t) m->rows * sizeof(float), ss->stream),
					 "copying the row norms to the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "copying the input rows to the GPU");
	ctx->transfer_ms += odp_now_ms() - t0;

	backend->self = ss;
	backend->exact = SsExact;
	backend->update = SsUpdate;
	backend->exact_update = SsExactUpdate;
	backend->select = SsSelect;
	backend->external = SsExternal;
	backend->row_bounds = SsRowBounds;
	backend->release = SsRelease;
	return ODP_OK;

cleanup:
	SsRelease(ss);
	return status;
}
