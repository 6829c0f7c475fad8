/*-------------------------------------------------------------------------
 *
 * knn_gpu_run.cu
 *	  Host driver of the shared GPU k-NN primitive (see knn_gpu_run.cuh).
 *
 * Chunking.  With B the budget (OdpGpuBegin), R the bytes of a row and S
 * the bytes of a query row's state (plus the finish hook's scratch), the
 * plan is, in order of preference:
 *	- everything resident: one query chunk, one candidate chunk;
 *	- all candidates resident (at most half of B) and the queries taken
 *	  in chunks sized by the rest (for a self join the queries are the
 *	  resident candidates themselves);
 *	- half of B for a candidate chunk, half for a query chunk with its
 *	  state; the candidate chunks are streamed past every query chunk.
 * The state of a query chunk persists across its candidate chunks and
 * the primitive's merge is exact whatever the order, so every plan gives
 * the same lists.  ctx->chunks counts the query x candidate chunk pairs.
 *
 * Few queries.  A query set of fewer thread blocks than the GPU runs at
 * once (a single k-NN query, a hundred) would leave most multiprocessors
 * idle, so the queries are stacked in copies, each copy sees one range of
 * the candidates (OdpKnnProblem.cand_split), and a merge kernel combines
 * the copies' lists (disjoint index ranges) into one per query.  Same
 * lists, in a fraction of the time.
 *
 * Rows of either precision.  The driver is a template over the rows'
 * type T: float rows (data) go through knn_gpu.cu's kernel, with the
 * exact integer path and the tensor-core filter tried first on resident
 * candidates; double rows (data64) through knn_gpu_wide.cu's kernel, whose
 * state holds double distances.  Plans, uploads, copies and hooks are the
 * same code for both.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_run.cu
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "knn/knn_gpu_int.cuh"
#include "knn/knn_gpu_run.cuh"
#include "knn/knn_gpu_tc.cuh"
#include "knn/knn_gpu_wide.cuh"
#include "knn/knn_merge.h"

/* Smallest chunk, in rows, that the plan accepts before giving up. */
#define RUN_MIN_CHUNK	64

/* Allocations of one call, counted against the budget as slack. */
#define RUN_ALLOCS		14

/* Most candidate ranges (query copies) for small query sets. */
#define RUN_MAX_COPIES	32

/* Fewest candidates per range: shorter ranges cost more than they gain. */
#define RUN_MIN_RANGE	4096

/* Sizes the chunk plan decided. */
typedef struct RunPlan
{
	int64_t		query_chunk;	/* query rows per chunk */
	int64_t		cand_chunk;		/* candidate rows per chunk */
	bool		separate_queries;	/* query rows need their own buffer */
	int			copies;			/* query copies, one per candidate range */
	int64_t		pad;			/* rows per copy (whole thread blocks) */
} RunPlan;

/* The host rows of m in the precision T: data or data64. */
static inline const float *
RunRows(const OdpMatrix *m, const float *)
{
	return m->data;
}

static inline const double *
RunRows(const OdpMatrix *m, const double *)
{
	return m->data64;
}

/* knn_merge.h's merge step for the distances' type. */
static __device__ __forceinline__ int
RunMergeNext(const float *dist, const int64_t *index, int64_t stride,
			 int nlists, const int *pos, const int *len)
{
	return odp_merge_next(dist, index, stride, nlists, pos, len);
}

static __device__ __forceinline__ int
RunMergeNext(const double *dist, const int64_t *index, int64_t stride,
			 int nlists, const int *pos, const int *len)
{
	return odp_merge_next64(dist, index, stride, nlists, pos, len);
}

/*
 * The fast paths on resident candidates, float32 rows only: the exact
 * integer path for integer rows, else the tensor-core filter, where they
 * apply; *done says whether one of them filled the state.
 */
static OdpStatus
RunFastSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
			  const OdpKnnProblem *prob, OdpKnnState *state, size_t left,
			  bool *done)
{
	OdpStatus	status;

	/* a team's rows are not integers (knn_split.c looks): the filter's */
	status = prob->team != NULL ? ODP_OK :
		OdpKnnIntSearch(ctx, dev, stream, prob, state, left, done, &ctx->compute_ms);
	if (status == ODP_OK && !*done)
		status = OdpKnnTcSearch(ctx, dev, stream, prob, state, left, done,
								&ctx->compute_ms);
	return status;
}

/* Float64 rows have no fast path: the exact kernel computes every pair. */
static OdpStatus
RunFastSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
			  const OdpKnnProblemOf<double> *prob,
			  OdpKnnStateOf<double> *state, size_t left, bool *done)
{
	(void) ctx;
	(void) dev;
	(void) stream;
	(void) prob;
	(void) state;
	(void) left;
	*done = false;
	return ODP_OK;
}

/*
 * Query i's k smallest over its copies' lists (copy s at state row
 * s * pad + i, disjoint ascending index ranges), written to row i of the
 * output.  One thread per query.
 */
template <typename T>
static __global__ void
RunMergeCopiesKernel(const T *dist, const int64_t *index,
					 const int32_t *count, int64_t nq, int64_t pad,
					 int copies, int k, T *out_d, int64_t *out_i,
					 int32_t *out_n)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int			pos[RUN_MAX_COPIES];
	int			len[RUN_MAX_COPIES];
	int			n = 0;

	if (i >= nq)
		return;
	for (int c = 0; c < copies; c++)
	{
		pos[c] = 0;
		len[c] = count[c * pad + i];
	}
	while (n < k)
	{
		const int	c = RunMergeNext(dist + i * k, index + i * k, pad * k,
									 copies, pos, len);

		if (c < 0)
			break;
		out_d[i * k + n] = dist[(c * pad + i) * k + pos[c]];
		out_i[i * k + n] = index[(c * pad + i) * k + pos[c]];
		pos[c]++;
		n++;
	}
	out_n[i] = n;
}

/* Sets p[0 .. n) to v. */
template <typename T>
static __global__ void
RunFillKernel(T *p, int64_t n, T v)
{
	const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v;
}

/*
 * Decides the chunk sizes under budget bytes.  Fails with
 * ODP_ERR_GPU_OOM, giving the smallest workable budget, when even
 * RUN_MIN_CHUNK-row chunks do not fit.
 */
template <typename T>
static OdpStatus
RunMakePlan(OdpContext *ctx, const OdpGpuDevice *dev, const OdpKnnRunOf<T> *run,
			RunPlan *plan)
{
	const int64_t nq = run->query_count > 0 ? run->query_count : run->queries->rows;
	const int64_t nc = run->cands->rows;
	const int	dims = run->cands->dims;
	const bool	cosine = run->metric == ODP_METRIC_COSINE;
	const size_t row_bytes = (size_t) dims * sizeof(T) + (cosine ? sizeof(T) : 0);
	const size_t state_bytes = OdpKnnStateBytesPerRow<T>(run->k) + run->finish_bytes_per_row;
	const size_t slack = RUN_ALLOCS * ODP_GPU_ALLOC_ALIGN;
	const int64_t min_q = nq < RUN_MIN_CHUNK ? nq : RUN_MIN_CHUNK;
	const int64_t min_c = nc < RUN_MIN_CHUNK ? nc : RUN_MIN_CHUNK;
	const size_t budget = dev->budget > run->reserved_bytes ?
		dev->budget - run->reserved_bytes : 0;
	size_t		all_c;
	size_t		all_q;
	size_t		all_state;
	size_t		need;
	size_t		avail;

	memset(plan, 0, sizeof(*plan));
	plan->copies = 1;
	if (!OdpSizeMul((size_t) nc, row_bytes, &all_c) ||
		!OdpSizeMul((size_t) nq, row_bytes, &all_q) ||
		!OdpSizeMul((size_t) nq, state_bytes, &all_state))
		return odp_fail(ctx, ODP_ERR_LIMIT,
						"input of %lld x %lld rows of %d dimensions is too large to address",
						(long long) nq, (long long) nc, dims);
	if (run->self_join)
		all_q = 0;
	if (run->device_cands != NULL)
		all_c = 0;
	avail = budget > slack ? budget - slack : 0;
	if (OdpSizeAdd(all_c, all_q, &need) && OdpSizeAdd(need, all_state, &need) &&
		need <= avail)
	{
		plan->query_chunk = nq;
		plan->cand_chunk = nc;
		plan->separate_queries = !run->self_join;
	}
	else if (all_c <= avail / 2)
	{
		plan->cand_chunk = nc;
		plan->separate_queries = !run->self_join;
		plan->query_chunk = (int64_t) ((avail - all_c) /
									   (state_bytes + (run->self_join ? 0 : row_bytes)));
	}
	else
	{
		plan->separate_queries = true;
		plan->cand_chunk = (int64_t) (avail / 2 / row_bytes);
		plan->query_chunk = (int64_t) (avail / 2 / (row_bytes + state_bytes));
	}
	if (plan->cand_chunk > nc)
		plan->cand_chunk = nc;
	if (plan->query_chunk > nq)
		plan->query_chunk = nq;
	if (plan->query_chunk < min_q || plan->cand_chunk < min_c)
		return odp_fail(ctx, ODP_ERR_GPU_OOM,
						"GPU memory budget of %zu bytes is too small for %lld x %lld rows of %d dimensions with k = %d: at least %zu bytes are needed",
						budget, (long long) nq, (long long) nc, dims, run->k,
						slack + (size_t) min_c * row_bytes +
						(size_t) min_q * (row_bytes + state_bytes));
	/* whole thread blocks of queries, except for a final partial one */
	if (plan->query_chunk > ODP_KNN_BLOCK_QUERIES && plan->query_chunk < nq)
		plan->query_chunk -= plan->query_chunk % ODP_KNN_BLOCK_QUERIES;
	plan->pad = plan->query_chunk;

	/*
	 * Few queries, all in one chunk, all candidates resident: one copy of
	 * the queries per candidate range, up to about two blocks per
	 * multiprocessor, if the copies (rows, state, merged lists) fit.
	 */
	if (plan->query_chunk == nq && plan->cand_chunk == nc && !run->self_join)
	{
		const int64_t pad = (nq + ODP_KNN_BLOCK_QUERIES - 1) / ODP_KNN_BLOCK_QUERIES * ODP_KNN_BLOCK_QUERIES;
		const int64_t blocks = pad / ODP_KNN_BLOCK_QUERIES;
		int64_t		copies = 2 * (int64_t) dev->sm_count / blocks;
		const size_t per_copy = (size_t) pad * (row_bytes + OdpKnnStateBytesPerRow<T>(run->k));

		if (copies > RUN_MAX_COPIES)
			copies = RUN_MAX_COPIES;
		if (copies > nc / RUN_MIN_RANGE)
			copies = nc / RUN_MIN_RANGE;
		while (copies > 1 &&
			   all_c + per_copy * (size_t) (copies + 1) + all_state > avail)
			copies--;
		if (copies > 1)
		{
			plan->copies = (int) copies;
			plan->pad = pad;
		}
	}
	return ODP_OK;
}

/*
 * Copies n rows of dims values from rows (and their norms; host or device
 * memory) to dst / dst_norms on stream and waits, adding the time to
 * ctx->transfer_ms.
 */
template <typename T>
static OdpStatus
RunUpload(OdpContext *ctx, cudaStream_t stream, const T *rows, const T *norms,
		  int dims, int64_t n, T *dst, T *dst_norms)
{
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, dst, rows, (size_t) n * dims * sizeof(T), stream),
				 "copying the input rows to the GPU");
	if (norms != NULL)
		ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, dst_norms, norms, (size_t) n * sizeof(T), stream),
					 "copying the row norms to the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream),
				 "copying the input rows to the GPU");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	return status;
}

/*
 * Fills copies 1 .. copies-1 of the query buffer (pad rows each) from
 * copy 0, whose rows nq .. pad-1 are first set to zeros (norm 1): they are
 * computed, never read.
 */
template <typename T>
static OdpStatus
RunReplicateQueries(OdpContext *ctx, cudaStream_t stream, int dims,
					int64_t nq, int64_t pad, int copies, T *rows, T *norms)
{
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	if (pad > nq)
	{
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(rows + nq * dims, 0,
										  (size_t) (pad - nq) * dims * sizeof(T),
										  stream),
					 "padding the query rows");
		if (norms != NULL)
		{
			RunFillKernel<T><<<(unsigned) ((pad - nq + 127) / 128), 128, 0, stream>>>(norms + nq, pad - nq, (T) 1);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "padding the query norms");
		}
	}
	for (int c = 1; c < copies; c++)
	{
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(rows + c * pad * dims, rows,
										  (size_t) pad * dims * sizeof(T),
										  cudaMemcpyDeviceToDevice, stream),
					 "copying the query rows on the GPU");
		if (norms != NULL)
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(norms + c * pad, norms,
											  (size_t) pad * sizeof(T),
											  cudaMemcpyDeviceToDevice, stream),
						 "copying the query norms on the GPU");
	}
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream),
				 "copying the query rows on the GPU");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	return status;
}

/* See knn_gpu_run.cuh. */
template <typename T>
OdpStatus
OdpKnnRunAll(OdpContext *ctx, const OdpKnnRunOf<T> *run)
{
	OdpStatus	status = ODP_OK;
	const OdpMatrix *qm = run->queries;
	const OdpMatrix *cm = run->cands;
	const bool	cosine = (run->metric == ODP_METRIC_COSINE);
	const int	dims = cm->dims;
	const int32_t k = run->k;
	const int64_t q_first = run->first_query;
	const int64_t q_end = run->query_count > 0 ? q_first + run->query_count : qm->rows;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	RunPlan		plan;
	OdpKnnStateOf<T> state;
	OdpKnnProblemOf<T> prob;
	cudaStream_t stream = NULL;
	T		   *d_cand = NULL;
	T		   *d_cnorm = NULL;
	T		   *d_query = NULL;
	T		   *d_qnorm = NULL;
	T		   *d_md = NULL;
	int64_t    *d_mi = NULL;
	int32_t    *d_mn = NULL;
	void	   *d_scratch = NULL;
	bool		teamed = false;
	bool		all = false;

	OdpGpuArenaInit(&arena, 0);
	memset(&state, 0, sizeof(state));
	const bool	on_device = run->device_cands != NULL;

	if (on_device ?
		(!run->self_join && run->device_queries == NULL) ||
		cosine != (run->device_cand_norms != NULL) ||
		(!run->self_join && cosine != (run->device_query_norms != NULL)) :
		(RunRows(qm, d_cand) == NULL || RunRows(cm, d_cand) == NULL ||
		 cosine != (run->cand_norms != NULL) || cosine != (run->query_norms != NULL) ||
		 (run->self_join && qm != cm && RunRows(qm, d_cand) != RunRows(cm, d_cand))) ||
		(run->filter_max_overflow > 0.0 &&
		 (run->gave_up == NULL || sizeof(T) != sizeof(float))) ||
		q_first < 0 || q_end > qm->rows || q_first > q_end)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"invalid k-NN run (rows in the run's precision or on the device, norms given exactly for cosine, a filter-only run on float32 rows with gave_up, query rows within the matrix)");
	if (run->gave_up != NULL)
		*run->gave_up = false;
	status = OdpGpuBegin(ctx, &dev);
	if (status != ODP_OK)
		return status;
	/* the caller's reserved bytes are not this run's to allocate */
	arena.budget = dev.budget > run->reserved_bytes ? dev.budget - run->reserved_bytes : 1;
	status = RunMakePlan<T>(ctx, &dev, run, &plan);
	if (status != ODP_OK)
		return status;
	if (on_device && plan.cand_chunk != cm->rows)
		return odp_fail(ctx, ODP_ERR_INTERNAL, "k-NN rows on the device must stay resident");
	/* a team's filter needs every row resident and the part's rows in one chunk */
	teamed = run->team != NULL && plan.cand_chunk == cm->rows && plan.copies == 1 &&
		plan.query_chunk >= q_end - q_first;
	if (run->team != NULL && !teamed &&
		!odp_knn_team_join(ctx, run->team, run->team_part, false, &all))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");

	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	if (on_device)
	{
		d_cand = (T *) run->device_cands;
		d_cnorm = (T *) run->device_cand_norms;
	}
	else
	{
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena,
								 (size_t) plan.cand_chunk * dims * sizeof(T),
								 "the candidate rows", (void **) &d_cand));
		if (cosine)
			ODP_TRY(OdpGpuArenaAlloc(ctx, &arena,
									 (size_t) plan.cand_chunk * sizeof(T),
									 "the candidate norms", (void **) &d_cnorm));
	}
	if (plan.separate_queries)
	{
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena,
								 (size_t) plan.pad * plan.copies * dims * sizeof(T),
								 "the query rows", (void **) &d_query));
		if (cosine)
			ODP_TRY(OdpGpuArenaAlloc(ctx, &arena,
									 (size_t) plan.pad * plan.copies * sizeof(T),
									 "the query norms", (void **) &d_qnorm));
	}
	ODP_TRY(OdpKnnStateAlloc(ctx, &arena, plan.pad * plan.copies, k, &state));
	if (plan.copies > 1)
	{
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) (q_end - q_first) * k * sizeof(T),
								 "the merged k-NN distances", (void **) &d_md));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) (q_end - q_first) * k * sizeof(int64_t),
								 "the merged k-NN indices", (void **) &d_mi));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) (q_end - q_first) * sizeof(int32_t),
								 "the merged k-NN counts", (void **) &d_mn));
	}
	if (run->finish_bytes_per_row > 0)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena,
								 (size_t) plan.query_chunk * run->finish_bytes_per_row,
								 "the k-NN results", &d_scratch));

	/* resident candidates are uploaded once (and serve as self-join queries) */
	if (plan.cand_chunk == cm->rows && !on_device)
		ODP_TRY(RunUpload(ctx, stream, RunRows(cm, d_cand), run->cand_norms, dims,
						  cm->rows, d_cand, d_cnorm));

	for (int64_t q0 = q_first; q0 < q_end; q0 += plan.query_chunk)
	{
		const int64_t nq = q_end - q0 < plan.query_chunk ? q_end - q0 : plan.query_chunk;
		double		t0;

		if (odp_cancel_requested(ctx))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
			goto cleanup;
		}
		memset(&prob, 0, sizeof(prob));
		prob.query_base = q0;
		prob.nq = nq;
		prob.dims = dims;
		prob.metric = run->metric;
		prob.exclude_self = run->self_join;
		prob.tc_max_overflow = run->filter_max_overflow;
		prob.values_only = run->values_only;
		prob.team = teamed ? run->team : NULL;
		prob.team_part = run->team_part;
		if (plan.separate_queries)
		{
			if (on_device)
				ODP_TRY(RunUpload(ctx, stream,
								  run->device_queries + (q0 - q_first) * dims,
								  cosine ? run->device_query_norms + (q0 - q_first) : NULL,
								  dims, nq, d_query, d_qnorm));
			else
				ODP_TRY(RunUpload(ctx, stream, RunRows(qm, d_cand) + q0 * dims,
								  cosine ? run->query_norms + q0 : NULL, dims, nq,
								  d_query, d_qnorm));
			prob.queries = d_query;
			prob.query_norms = d_qnorm;
		}
		else
		{
			prob.queries = d_cand + q0 * dims;
			prob.query_norms = cosine ? d_cnorm + q0 : NULL;
		}

		/* On resident candidates: the fast paths, where they apply. */
		if (plan.cand_chunk == cm->rows)
		{
			const size_t left = dev.budget > arena.used ? dev.budget - arena.used : 0;
			bool		done = false;

			prob.cands = d_cand;
			prob.cand_norms = d_cnorm;
			prob.cand_base = 0;
			prob.nc = cm->rows;
			state.rows = nq;
			ODP_TRY(RunFastSearch(ctx, &dev, stream, &prob, &state, left,
								  &done));
			if (done)
			{
				ctx->chunks++;
				ODP_TRY(run->finish(run->finish_arg, ctx, stream, q0, nq, state.dist,
									state.index, state.count, d_scratch));
				continue;
			}
		}
		if (run->filter_max_overflow > 0.0)
		{
			*run->gave_up = true;
			goto cleanup;
		}

		if (plan.separate_queries)
		{
			if (plan.copies > 1)
			{
				ODP_TRY(RunReplicateQueries(ctx, stream, dims, nq, plan.pad,
											plan.copies, d_query, d_qnorm));
				prob.nq = plan.pad * plan.copies;
				prob.cand_split = (cm->rows + plan.copies - 1) / plan.copies;
				prob.split_queries = plan.pad;
			}
		}
		state.rows = prob.nq;
		ODP_TRY(OdpKnnStateReset(ctx, stream, &state));
		for (int64_t c0 = 0; c0 < cm->rows; c0 += plan.cand_chunk)
		{
			const int64_t nc = cm->rows - c0 < plan.cand_chunk ? cm->rows - c0 : plan.cand_chunk;

			if (plan.cand_chunk != cm->rows)
				ODP_TRY(RunUpload(ctx, stream, RunRows(cm, d_cand) + c0 * dims,
								  cosine ? run->cand_norms + c0 : NULL, dims, nc,
								  d_cand, d_cnorm));
			prob.cands = d_cand;
			prob.cand_norms = d_cnorm;
			prob.cand_base = c0;
			prob.nc = nc;
			ODP_TRY(OdpKnnAccumulate(ctx, &dev, stream, &prob, &state,
									 &ctx->compute_ms));
			ctx->chunks++;
		}
		if (plan.copies > 1)
		{
			t0 = odp_now_ms();
			RunMergeCopiesKernel<T><<<(unsigned) ((nq + 127) / 128), 128, 0, stream>>>(state.dist, state.index, state.count, nq, plan.pad, plan.copies, k, d_md, d_mi, d_mn);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the k-NN merge kernel");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "merging k-NN lists");
			ctx->compute_ms += odp_now_ms() - t0;
			ODP_TRY(run->finish(run->finish_arg, ctx, stream, q0, nq, d_md, d_mi,
								d_mn, d_scratch));
		}
		else
			ODP_TRY(run->finish(run->finish_arg, ctx, stream, q0, nq, state.dist,
								state.index, state.count, d_scratch));
	}

cleanup:
	/* a part that left before the filter joined still meets the others */
	if (run->team != NULL && !run->team->joined[run->team_part])
		(void) odp_knn_team_join(ctx, run->team, run->team_part, false, &all);
	if (stream != NULL)
	{
		/* nothing may still write into memory we are about to free */
		(void) cudaStreamSynchronize(stream);
		(void) cudaStreamDestroy(stream);
	}
	OdpGpuArenaRelease(&arena);
	(void) cudaGetLastError();
	return status;
}

/* float32 rows (OdpKnnRun) and float64 rows. */
template OdpStatus OdpKnnRunAll<float>(OdpContext *, const OdpKnnRunOf<float> *);
template OdpStatus OdpKnnRunAll<double>(OdpContext *, const OdpKnnRunOf<double> *);
