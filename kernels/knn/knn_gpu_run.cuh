/*-------------------------------------------------------------------------
 *
 * knn_gpu_run.cuh
 *	  Host driver of the shared GPU k-NN primitive: plans chunks under
 *	  the memory budget, uploads rows, accumulates every query chunk
 *	  against every candidate chunk and hands each finished query chunk's
 *	  lists to the caller, still on the device.
 *
 * Serves the outlier scores (a self join whose lists become sums) and
 * the k-NN query and join (lists copied back as they are).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_run.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_KNN_RUN_CUH
#define ODP_GPU_KNN_RUN_CUH

#include "knn/knn_gpu.cuh"
#include "knn/knn_internal.h"

/*
 * Receives query rows [q0, q0 + nq) once every candidate has been merged:
 * row i's list is dist/index[i * k ..], count[i] entries, ascending (device
 * pointers, valid until the hook returns).  scratch is the hook's own
 * device memory (OdpKnnRun.finish_bytes_per_row per query row of a
 * chunk).  It may launch work and copy on stream, and must leave the
 * stream idle when it returns.  The distances have the rows' type T.
 */
template <typename T>
using OdpKnnFinishFnOf = OdpStatus (*) (void *arg, OdpContext *ctx,
										cudaStream_t stream, int64_t q0,
										int64_t nq, const T *dist,
										const int64_t *index,
										const int32_t *count, void *scratch);
typedef OdpKnnFinishFnOf<float> OdpKnnFinishFn;

/*
 * One run over rows of type T: float (OdpKnnRun: queries->data and
 * cands->data) or double (float64 rows: data64, distances by
 * odp_distance64 through knn_gpu_wide.cu's kernel; no filter-only run).
 */
template <typename T>
struct OdpKnnRunOf
{
	const OdpMatrix *queries;
	const T    *query_norms;	/* host, cosine only */
	const OdpMatrix *cands;
	const T    *cand_norms;		/* host, cosine only */
	bool		self_join;		/* queries == cands: skip the pair (i, i) */
	OdpMetric	metric;
	int32_t		k;				/* <= candidates (minus one for a self join) */
	/*
	 * The query rows this run computes, [first_query, first_query +
	 * query_count) (query_count 0: every row), so that a split call's
	 * parts take disjoint ranges; finish still receives row numbers of
	 * the whole query matrix.
	 */
	int64_t		first_query;
	int64_t		query_count;
	size_t		finish_bytes_per_row;
	OdpKnnFinishFnOf<T> finish;
	void	   *finish_arg;

	/*
	 * Filter only: above 0, the run goes through the tensor-core filter
	 * with this p->tc_max_overflow, and where the filter does not finish a
	 * chunk (not eligible, candidates not resident, too many overflowed
	 * lists) it stops, sets *gave_up and returns ODP_OK: the caller has a
	 * cheaper method for such data.  Chunks already finished were handed
	 * to finish.
	 */
	double		filter_max_overflow;

	/* finish reads the distances only (OdpKnnProblem.values_only) */
	bool		values_only;
	bool	   *gave_up;

	/*
	 * Rows already on the run's device (the float64 filter's float32
	 * copies, made there; queries and cands then need only their rows and
	 * dims): every candidate, and unless a self join the query rows
	 * [first_query, first_query + query_count) in order, with their norms
	 * for cosine.  Nothing of theirs is uploaded, and the plan keeps every
	 * candidate resident.  reserved_bytes of the device's budget are the
	 * caller's (these rows and whatever else it holds).
	 */
	const T    *device_queries;
	const T    *device_query_norms;
	const T    *device_cands;
	const T    *device_cand_norms;
	size_t		reserved_bytes;

	/*
	 * A part of a team (knn_internal.h, float32 self joins): the run's
	 * query rows are the part's own.  Where the candidates are resident
	 * and those rows one chunk, the tensor-core filter joins the team;
	 * otherwise the run joins it saying it cannot, and computes its rows
	 * alone.
	 */
	OdpKnnTeam *team;
	int			team_part;
};
typedef OdpKnnRunOf<float> OdpKnnRun;

/*
 * Runs the whole computation on ctx's GPU (OdpGpuBegin inside); frees
 * every device allocation before returning, on every path.  Adds to
 * ctx->transfer_ms, compute_ms and chunks.  T is float or double.
 */
template <typename T>
extern OdpStatus OdpKnnRunAll(OdpContext *ctx, const OdpKnnRunOf<T> *run);

#endif							/* ODP_GPU_KNN_RUN_CUH */
