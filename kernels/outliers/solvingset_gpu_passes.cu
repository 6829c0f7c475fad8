/*-------------------------------------------------------------------------
 *
 * solvingset_gpu_passes.cu
 *	  SolvingSet's GPU backend, the two passes: the exact step (every
 *	  candidate's k nearest other rows, its weight) and the update step
 *	  (every row's partial list against the batch, its upper bound), each
 *	  a run of the shared k-NN primitive over a gathered batch.
 *
 * Map of this file: the tuning knobs of the split and the compaction
 * (odp_gpu_ss_split, odp_gpu_ss_compact), the kernels (SsGatherKernel,
 * SsWeightKernel, SsUpperKernel, SsCompactKernel), the compaction
 * (SsCompact), the gather (SsGather), exact() (SsSplitFor, SsExactFrom,
 * SsExact) and update() (SsBatchProblem, SsUpperBounds, SsUpdateFrom,
 * SsUpdate).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_gpu_passes.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gpu/gpu_check.cuh"
#include "include/odp_distance.h"
#include "knn/knn_merge.h"
#include "outliers/solvingset_gpu_internal.cuh"

/* Most candidate ranges the exact step splits all rows into. */
#define SS_MAX_SPLIT	16

/*
 * Candidate-range split of the exact step: -1 chooses by occupancy, 0 or
 * 1 disables it, larger values force that many ranges.  A tuning knob for
 * the benchmark harness (test/bench/outliers_engine_bench.c), not an interface.
 */
extern "C" int odp_gpu_ss_split;
int			odp_gpu_ss_split = -1;

/*
 * Compaction of the update step's queries to the active rows: when the
 * active rows fall to this share of the rows it updates, it keeps only
 * them (0 disables; a tuning knob for the harness like the one above).
 */
extern "C" double odp_gpu_ss_compact;
double		odp_gpu_ss_compact = 0.75;

/*
 * Copies the rows cand[0 .. nc) of data (and their norms) into copies
 * consecutive blocks of pad rows each of dst; rows nc .. pad-1 of every
 * block repeat row cand[0] (they are computed and never read).  One
 * thread per (copy, row, dimension).
 */
static __global__ void
SsGatherKernel(const float *data, const float *norms, int dims,
			   const int64_t *cand, int64_t nc, int64_t pad, int copies,
			   float *dst, float *dst_norms)
{
	const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int64_t per_copy = pad * dims;
	int64_t		r;
	int			d;
	int64_t		src;

	if (t >= per_copy * copies)
		return;
	r = (t % per_copy) / dims;
	d = (int) (t % dims);
	src = cand[r < nc ? r : 0];
	dst[t] = data[src * dims + d];
	if (norms != NULL && d == 0)
		dst_norms[t / dims] = norms[src];
}

/*
 * Exact weight of query i: merges its copies' (k + 1)-lists (copy s at
 * state row s * pad + i, each sorted by (distance, index), the copies'
 * index ranges disjoint), skips the entry of the row itself (cand[i])
 * and sums the first k others in order, as odp_sum_ascending does.  Sets
 * *bad when a list is short of what its candidate range guarantees.
 * With lists (a batch given by value) it writes the k distances there
 * instead, +inf padded.
 */
static __global__ void
SsWeightKernel(const float *dist, const int64_t *index, const int32_t *count,
			   const int64_t *cand, int64_t nc, int64_t pad, int copies,
			   int k, double *weight, float *lists, int *bad)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const int	k1 = k + 1;
	int			pos[SS_MAX_SPLIT];
	int			len[SS_MAX_SPLIT];
	int64_t		self;
	double		s = 0.0;
	int			taken = 0;

	if (i >= nc)
		return;
	self = cand[i];
	for (int c = 0; c < copies; c++)
	{
		pos[c] = 0;
		len[c] = count[(c * pad + i)];
	}
	while (taken < k)
	{
		const int	c = odp_merge_next(dist + i * k1, index + i * k1, pad * k1,
									   copies, pos, len);
		int64_t		at;

		if (c < 0 && lists != NULL)
		{
			/* a batch given by value: the matrix may hold fewer rows */
			for (; taken < k; taken++)
				lists[i * k + taken] = INFINITY;
			return;
		}
		if (c < 0)
		{
			atomicExch(bad, 1);
			weight[i] = 0.0;
			return;
		}
		at = (c * pad + i) * k1 + pos[c];
		pos[c]++;
		if (index[at] == self)
			continue;
		if (lists != NULL)
			lists[i * k + taken] = dist[at];
		else
			s += (double) dist[at];
		taken++;
	}
	if (lists == NULL)
		weight[i] = s;
}

/*
 * Upper bound of every row: the ascending sum of its partial k-list when
 * it is full, +inf otherwise.
 */
static __global__ void
SsUpperKernel(const float *dist, const int32_t *count, int64_t rows, int k,
			  double *upper)
{
	const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (p >= rows)
		return;
	upper[p] = count[p] == k ? odp_sum_ascending(dist + p * k, k) : INFINITY;
}

/*
 * Moves state entry pos[j] of src to entry j of dst, for j < n (the
 * update queries kept by a compaction).
 */
static __global__ void
SsCompactKernel(const float *sd, const int64_t *si, const int32_t *sn,
				const int64_t *pos, int64_t n, int k,
				float *dd, int64_t *di, int32_t *dn)
{
	const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t		j;
	int			e;

	if (t >= n * k)
		return;
	j = t / k;
	e = (int) (t % k);
	dd[t] = sd[pos[j] * k + e];
	di[t] = si[pos[j] * k + e];
	if (e == 0)
		dn[j] = sn[pos[j]];
}

/*
 * Keeps only the active rows among the update queries when they are few
 * enough (odp_gpu_ss_compact): copies their state into the other state
 * buffer, gathers their rows into d_q, and swaps.  The discarded rows are
 * inactive for good (the driver never reactivates a row), so their upper
 * bounds are no longer needed.
 */
static OdpStatus
SsCompact(GpuSs *ss, const uint8_t *active)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int64_t		n = 0;
	OdpKnnState tmp;
	double		t0 = odp_now_ms();

	for (int64_t j = 0; j < ss->nq; j++)
	{
		const int64_t r = ss->compacted ? ss->h_qrow[j] : j;

		if (active[r])
		{
			ss->h_pos[n] = j;
			ss->h_qrow[n] = r;	/* n <= j: never overwrites an unread id */
			n++;
		}
	}
	if (n == ss->nq)
		return ODP_OK;
	ss->compacted = true;
	ss->nq = n;
	if (n == 0)
		return ODP_OK;
	/* old positions first: the state moves before the ids replace them */
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_qrow, ss->h_pos, (size_t) n * sizeof(int64_t), ss->stream),
				 "copying SolvingSet active rows to the GPU");
	SsCompactKernel<<<(unsigned) ((n * ss->k + 255) / 256), 256, 0, ss->stream>>>(ss->upd_state.dist, ss->upd_state.index, ss->upd_state.count, ss->d_qrow, n, ss->k, ss->alt_state.dist, ss->alt_state.index, ss->alt_state.count);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet compaction kernel");
	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_qrow, ss->h_qrow, (size_t) n * sizeof(int64_t), ss->stream),
				 "copying SolvingSet active rows to the GPU");
	SsGatherKernel<<<(unsigned) ((n * ss->dims + 255) / 256), 256, 0, ss->stream>>>(ss->d_data, ss->d_norms, ss->dims, ss->d_qrow, n, n, 1, ss->d_q, ss->d_qnorm);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet gather kernel");
	/* the host buffers are rewritten before the next use: wait for them */
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "compacting the SolvingSet state");
	tmp = ss->upd_state;
	ss->upd_state = ss->alt_state;
	ss->alt_state = tmp;
	ss->alt_state.rows = ss->rows;
cleanup:
	ctx->compute_ms += odp_now_ms() - t0;
	return status;
}

/*
 * Uploads cand[0 .. nc) and gathers those rows into copies blocks of the
 * gather buffer.
 */
OdpStatus
SsGather(GpuSs *ss, const float *src, const float *src_norms, const int64_t *cand,
		 int64_t nc, int64_t pad, int copies)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	const int64_t total = pad * ss->dims * copies;
	double		t0 = odp_now_ms();

	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, ss->d_cand, cand, (size_t) nc * sizeof(int64_t), ss->stream),
				 "copying SolvingSet candidates to the GPU");
	SsGatherKernel<<<(unsigned) ((total + 255) / 256), 256, 0, ss->stream>>>(src, src_norms, ss->dims, ss->d_cand, nc, pad, copies, ss->d_gather, ss->d_gnorm);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet gather kernel");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	return status;
}

/*
 * How many candidate ranges the exact step uses for nq queries: enough
 * query blocks for at most one full wave of the primitive (two blocks per
 * multiprocessor), each range at least a few thousand rows.
 */
static int
SsSplitFor(const GpuSs *ss, int64_t nq)
{
	int64_t		blocks = SsPad(nq) / ODP_KNN_BLOCK_QUERIES;
	int64_t		want = 2 * (int64_t) ss->dev.sm_count;
	int			s;

	if (odp_gpu_ss_split >= 0)
		s = odp_gpu_ss_split < 1 ? 1 : odp_gpu_ss_split;
	else
		s = (int) (want / blocks);	/* whole waves: a partial one costs a full one */
	if (s > SS_MAX_SPLIT)
		s = SS_MAX_SPLIT;
	if (s > ss->qcap / SsPad(nq))
		s = (int) (ss->qcap / SsPad(nq));
	while (s > 1 && ss->rows / s < 4096)
		s--;
	return s < 1 ? 1 : s;
}

/*
 * The exact step over a batch gathered from src (rows cand[] of it; the
 * matrix itself, or the vectors of a batch given by value): every
 * candidate's k nearest rows other than its own, own_dev[i] on the device
 * (NULL: the gathered row cand[i] is its own), into weight or, with
 * lists, as distances.
 */
OdpStatus
SsExactFrom(GpuSs *ss, const float *src, const float *src_norms,
			const int64_t *cand, const int64_t *own_dev, int32_t nc_all,
			double *weight, float *lists, int64_t *distances)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	int			bad = 0;

	ODP_CUDA_RETURN(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	for (int32_t c0 = 0; c0 < nc_all; c0 += ss->cap)
	{
		const int64_t nc = nc_all - c0 < ss->cap ? nc_all - c0 : ss->cap;
		const int64_t pad = SsPad(nc);
		const int	copies = SsSplitFor(ss, nc);
		const int64_t range = (ss->rows + copies - 1) / copies;
		OdpKnnProblem prob;
		double		t0;

		ODP_TRY(SsGather(ss, src, src_norms, cand + c0, nc, pad, copies));
		ss->exact_state.rows = pad * copies;
		ODP_TRY(OdpKnnStateReset(ctx, ss->stream, &ss->exact_state));

		memset(&prob, 0, sizeof(prob));
		prob.queries = ss->d_gather;
		prob.query_norms = ss->d_gnorm;
		prob.query_base = 0;
		prob.nq = pad * copies;
		prob.cands = ss->d_data;
		prob.cand_norms = ss->d_norms;
		prob.cand_base = 0;
		prob.nc = ss->rows;
		prob.dims = ss->dims;
		prob.metric = ss->metric;
		prob.exclude_self = false;
		prob.ascending_candidates = true;
		if (copies > 1)
		{
			prob.cand_split = range;
			prob.split_queries = pad;
		}
		ODP_TRY(OdpKnnAccumulate(ctx, &ss->dev, ss->stream, &prob,
								&ss->exact_state, &ctx->compute_ms));
		ctx->chunks++;
		*distances += nc * ss->rows;

		t0 = odp_now_ms();
		SsWeightKernel<<<(unsigned) ((nc + 127) / 128), 128, 0, ss->stream>>>(ss->exact_state.dist, ss->exact_state.index, ss->exact_state.count, own_dev ? own_dev + c0 : ss->d_cand, nc, pad, copies, ss->k, ss->d_weight, lists ? ss->d_lists : NULL, ss->d_bad);
		ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet weight kernel");
		if (lists != NULL)
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(lists + (size_t) c0 * ss->k, ss->d_lists,
											  (size_t) nc * ss->k * sizeof(float),
											  cudaMemcpyDeviceToHost, ss->stream),
						 "copying SolvingSet neighbour lists from the GPU");
		else
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(weight + c0, ss->d_weight,
											  (size_t) nc * sizeof(double),
											  cudaMemcpyDeviceToHost, ss->stream),
						 "copying SolvingSet weights from the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, ss->d_bad, sizeof(int),
										  cudaMemcpyDeviceToHost, ss->stream),
					 "copying SolvingSet weights from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
					 "computing SolvingSet weights");
		ctx->compute_ms += odp_now_ms() - t0;
		if (bad != 0)
			return odp_fail(ctx, ODP_ERR_INTERNAL,
							"a SolvingSet candidate kept fewer than k = %d neighbours on the GPU",
							ss->k);
	}
cleanup:
	return status;
}

/* See OdpSsBackend.exact in solvingset_internal.h. */
OdpStatus
SsExact(void *self, const int64_t *cand, int32_t nc_all, double *weight,
		int64_t *distances)
{
	GpuSs	   *ss = (GpuSs *) self;

	return SsExactFrom(ss, ss->d_data, ss->d_norms, cand, NULL, nc_all, weight, NULL,
					   distances);
}

/*
 * The primitive problem of an update over a batch: queries (nq rows, and
 * their norms for cosine) against the batch's nc candidate rows gathered
 * in d_gather, whose global indexes continue from cand_seen, so that they
 * ascend across batches (ascending_candidates holds).
 */
void
SsBatchProblem(const GpuSs *ss, const float *queries, const float *query_norms,
			   int64_t nq, int64_t nc, OdpKnnProblem *prob)
{
	memset(prob, 0, sizeof(*prob));
	prob->queries = queries;
	prob->query_norms = query_norms;
	prob->query_base = 0;
	prob->nq = nq;
	prob->cands = ss->d_gather;
	prob->cand_norms = ss->d_gnorm;
	prob->cand_base = ss->cand_seen;
	prob->nc = nc;
	prob->dims = ss->dims;
	prob->metric = ss->metric;
	prob->exclude_self = false;
	prob->ascending_candidates = true;
}

/*
 * Computes the upper bound of every row the update state serves into
 * d_upper and copies them into upper (scattered to their rows when
 * compacted), unless upper is NULL.
 */
OdpStatus
SsUpperBounds(GpuSs *ss, double *upper)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	SsUpperKernel<<<(unsigned) ((ss->nq + 255) / 256), 256, 0, ss->stream>>>(ss->upd_state.dist, ss->upd_state.count, ss->nq, ss->k, ss->d_upper);
	ODP_CUDA_TRY_LAUNCH(ctx, ss->stream, "launching the SolvingSet upper bound kernel");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "computing SolvingSet upper bounds");
	ctx->compute_ms += odp_now_ms() - t0;
	if (upper == NULL)
		return ODP_OK;			/* SsSelect reads them on the device */
	t0 = odp_now_ms();
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(ss->compacted ? ss->h_upper : upper, ss->d_upper,
									  (size_t) ss->nq * sizeof(double),
									  cudaMemcpyDeviceToHost, ss->stream),
				 "copying SolvingSet upper bounds from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(ss->stream),
				 "copying SolvingSet upper bounds from the GPU");
	if (ss->compacted)
		for (int64_t j = 0; j < ss->nq; j++)
			upper[ss->h_qrow[j]] = ss->h_upper[j];
	ctx->transfer_ms += odp_now_ms() - t0;
cleanup:
	return status;
}

/*
 * The update step over a batch gathered from src (rows cand[] of it: the
 * matrix, or the vectors of a batch given by value).
 */
OdpStatus
SsUpdateFrom(GpuSs *ss, const float *src, const float *src_norms,
			 const int64_t *cand, int32_t nc_all, const uint8_t *active,
			 double *upper, int64_t *distances)
{
	OdpContext *ctx = ss->ctx;
	OdpStatus	status = ODP_OK;

	ODP_CUDA_TRY(ctx, cudaSetDevice(ss->dev.id), "selecting the GPU");
	if (!ss->upd_ready)
	{
		ODP_TRY(OdpKnnStateReset(ctx, ss->stream, &ss->upd_state));
		ss->upd_ready = true;
	}
	else if (odp_gpu_ss_compact > 0.0 && !ss->fused)
	{
		int64_t		nact = 0;

		/* compact only when it pays: the copy costs about one batch */
		for (int64_t j = 0; j < ss->nq; j++)
			nact += active[ss->compacted ? ss->h_qrow[j] : j] != 0;
		if ((double) nact <= odp_gpu_ss_compact * (double) ss->nq)
			ODP_TRY(SsCompact(ss, active));
	}
	if (ss->nq == 0)
		return ODP_OK;			/* no active row is left to update */
	ss->upd_state.rows = ss->nq;
	for (int32_t c0 = 0; c0 < nc_all; c0 += ss->cap)
	{
		const int64_t nc = nc_all - c0 < ss->cap ? nc_all - c0 : ss->cap;
		OdpKnnProblem prob;

		ODP_TRY(SsGather(ss, src, src_norms, cand + c0, nc, nc, 1));
		SsBatchProblem(ss, ss->compacted ? ss->d_q : ss->d_data,
					   ss->compacted ? ss->d_qnorm : ss->d_norms, ss->nq, nc, &prob);
		ODP_TRY(OdpKnnAccumulate(ctx, &ss->dev, ss->stream, &prob,
								&ss->upd_state, &ctx->compute_ms));
		ctx->chunks++;
		ss->cand_seen += nc;
		*distances += nc * ss->nq;
	}

	status = SsUpperBounds(ss, upper);
cleanup:
	return status;
}

/* See OdpSsBackend.update in solvingset_internal.h. */
OdpStatus
SsUpdate(void *self, const int64_t *cand, int32_t nc_all,
		 const uint8_t *active, double *upper, int64_t *distances)
{
	GpuSs	   *ss = (GpuSs *) self;

	return SsUpdateFrom(ss, ss->d_data, ss->d_norms, cand, nc_all, active, upper,
						distances);
}
