/*-------------------------------------------------------------------------
 *
 * solvingset_gpu_internal.cuh
 *	  What the files of SolvingSet's GPU backend share (solvingset_gpu.cu
 *	  and the files of its steps): the backend's state, the constants
 *	  more than one of them reads, and the functions one file gives
 *	  another.
 *
 * The design is in solvingset_gpu.cu's opening comment.  Every kernel is
 * defined in the file of the step it serves, beside the host function
 * that launches it.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/outliers/solvingset_gpu_internal.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SOLVINGSET_GPU_INTERNAL_CUH
#define ODP_SOLVINGSET_GPU_INTERNAL_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_runtime.cuh"
#include "knn/knn_gpu.cuh"
#include "outliers/solvingset_internal.h"

/* Largest candidate buffer of the single pass (SsBufferWeightKernel). */
#define SS_FUSED_CAP		4096

/*
 * Process-wide counts of single-pass batches and of candidates whose
 * buffer overflowed, for the tests and the harness to see which way the
 * work went.
 */
extern "C" int64_t odp_gpu_ss_fused_batches;
extern "C" int64_t odp_gpu_ss_overflowed;

/* Everything the backend holds between calls. */
typedef struct GpuSs
{
	OdpContext *ctx;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream;
	int64_t		rows;
	int32_t		dims;
	int32_t		k;
	OdpMetric	metric;
	bool		cosine;
	int32_t		cap;			/* candidates per primitive call */
	int64_t		qcap;			/* query rows the exact buffers hold */
	float	   *d_data;			/* rows x dims, resident */
	float	   *d_norms;		/* rows, cosine only */
	int64_t    *d_cand;			/* cap candidate row indexes */
	float	   *d_gather;		/* qcap x dims */
	float	   *d_gnorm;		/* qcap, cosine only */
	OdpKnnState exact_state;	/* qcap rows, k + 1 */
	double	   *d_weight;		/* cap */
	OdpKnnState upd_state;		/* nq used rows, k, persistent */
	OdpKnnState alt_state;		/* rows, k: compaction target, then swapped */
	int64_t		nq;				/* rows the update step serves */
	bool		compacted;		/* queries are d_q, row ids in h_qrow */
	int64_t    *h_qrow;			/* nq row ids of the update queries */
	int64_t    *h_pos;			/* compaction: kept entries' old positions */
	double	   *h_upper;		/* nq upper bounds, before scattering */
	int64_t    *d_qrow;			/* rows: row ids, then old positions */
	float	   *d_q;			/* rows x dims: compacted query rows */
	float	   *d_qnorm;		/* rows, cosine only */
	double	   *d_upper;		/* rows */
	int		   *d_bad;			/* set by a kernel when an invariant fails */
	int64_t		cand_seen;		/* running base of update candidate indexes */
	bool		upd_ready;		/* upd_state was reset */

	/* single pass (SsExactUpdate); fused false leaves all of these unset */
	bool		fused;
	int32_t		fcap;			/* distances per candidate buffer */
	int32_t		fbatch;			/* candidates per call */
	uint8_t    *d_active;		/* rows */
	float	   *d_bound;		/* fbatch: each candidate's bound */
	float	   *d_limit;		/* fbatch: scratch of the primitive */
	int32_t    *d_fcount;		/* fbatch */
	float	   *d_fbuf;			/* fbatch x fcap */
	int32_t    *h_fcount;		/* fbatch */
	int64_t    *h_over;			/* fbatch: overflowed candidates' rows */
	double	   *h_overw;		/* fbatch: their weights */
	int64_t    *h_overpos;		/* fbatch: their positions in the batch */
	int		   *d_unbounded;	/* set when a candidate's list is short */
	double	   *d_keys;			/* rows x 2: selection keys in and out */
	int64_t    *d_rowid;		/* rows x 2: row ids in (ascending) and out */
	void	   *d_sort_tmp;		/* CUB's temporary storage */
	size_t		sort_tmp_bytes;
	int32_t    *d_nact;			/* active rows after pruning */

	/* batches given by value (SsExternal), allocated on first use */
	int64_t		ext_cap;		/* candidates the buffers below hold */
	float	   *d_ext;			/* ext_cap x dims candidate vectors */
	float	   *d_ext_norms;	/* ext_cap, cosine only */
	int64_t    *d_own;			/* ext_cap: a candidate's row, or -1 */
	float	   *d_lists;		/* ext_cap x k */
	int64_t    *h_iota;			/* ext_cap: 0, 1, ... (gather positions) */
	float	   *h_ext_norms;	/* ext_cap, cosine only */
	int64_t    *d_own2;			/* ext_cap: own rows of overflowed candidates */
	float	   *d_ext_bound;	/* ext_cap: row bounds (SsRowBounds) */
} GpuSs;

/* Rounds n up to whole thread blocks of queries of the primitive. */
static inline int64_t
SsPad(int64_t n)
{
	return (n + ODP_KNN_BLOCK_QUERIES - 1) / ODP_KNN_BLOCK_QUERIES * ODP_KNN_BLOCK_QUERIES;
}

/*
 * The two passes (solvingset_gpu_passes.cu): a batch's rows gathered, the
 * exact step over a gathered batch and the backend's exact(), the
 * update's primitive problem, the upper bounds, the update step over a
 * gathered batch and the backend's update().
 */
extern OdpStatus SsGather(GpuSs *ss, const float *src, const float *src_norms,
						  const int64_t *cand, int64_t nc, int64_t pad, int copies);
extern OdpStatus SsExactFrom(GpuSs *ss, const float *src, const float *src_norms,
							 const int64_t *cand, const int64_t *own_dev, int32_t nc_all,
							 double *weight, float *lists, int64_t *distances);
extern OdpStatus SsExact(void *self, const int64_t *cand, int32_t nc_all, double *weight,
						 int64_t *distances);
extern void SsBatchProblem(const GpuSs *ss, const float *queries, const float *query_norms,
						   int64_t nq, int64_t nc, OdpKnnProblem *prob);
extern OdpStatus SsUpperBounds(GpuSs *ss, double *upper);
extern OdpStatus SsUpdateFrom(GpuSs *ss, const float *src, const float *src_norms,
							  const int64_t *cand, int32_t nc_all, const uint8_t *active,
							  double *upper, int64_t *distances);
extern OdpStatus SsUpdate(void *self, const int64_t *cand, int32_t nc_all,
						  const uint8_t *active, double *upper, int64_t *distances);

/*
 * The single pass (solvingset_gpu_fused.cu): the backend's exact_update(),
 * and the launches of its kernels for batches given by value:
 * SsBoundKernel over the nc candidates in d_cand (their bounds into
 * bound), SsBufferWeightKernel over nc candidates' buffers (own and lists
 * as the kernel takes them).
 */
extern OdpStatus SsExactUpdate(void *self, const int64_t *cand, int32_t nc_all,
							   const uint8_t *active, double *weight, double *upper,
							   int64_t *distances);
extern void SsLaunchBounds(GpuSs *ss, int64_t nc, float *bound);
extern void SsLaunchBufferWeight(GpuSs *ss, int64_t nc, const int64_t *own, float *lists);

/*
 * Batches given by value (solvingset_gpu_external.cu): the backend's
 * row_bounds() and external().
 */
extern void SsRowBounds(void *self, const int64_t *rows, int64_t n, float *out);
extern OdpStatus SsExternal(void *self, const float *vectors, const int64_t *own,
							const float *bounds, int32_t nc, const uint8_t *active,
							float *lists, double *upper, int64_t *distances);

/*
 * The selection on the device (solvingset_gpu_select.cu): the backend's
 * select(), the temporary storage of its sort over rows rows (CUB's
 * status), and the launch that fills ids[p] = p, the row ids it sorts.
 */
extern OdpStatus SsSelect(void *self, bool prune, double min_out, int64_t m,
						  uint8_t *active, int64_t *cand, int64_t *nc, bool *done);
extern cudaError_t SsSortBytes(int64_t rows, size_t *bytes);
extern void SsLaunchRowIds(cudaStream_t stream, int64_t *ids, int64_t rows);

#endif							/* ODP_SOLVINGSET_GPU_INTERNAL_CUH */
