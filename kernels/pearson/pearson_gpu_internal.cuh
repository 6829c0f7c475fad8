/*-------------------------------------------------------------------------
 *
 * pearson_gpu_internal.cuh
 *	  What the files of the correlations' GPU path share (pearson_gpu.cu
 *	  and the files of its steps): the constants, the state of one call,
 *	  the tile views the consumers read, the host helpers, the benchmark
 *	  builds' stage timing, and the functions one file gives another.
 *
 * The design is in pearson_gpu.cu's opening comment.  Every kernel is
 * defined in the file whose host function launches it, and each CUB
 * algorithm is run (and sized) from one file only, so that its kernels
 * are made once.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_gpu_internal.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_PEARSON_GPU_INTERNAL_CUH
#define ODP_PEARSON_GPU_INTERNAL_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "gpu/gpu_blas.cuh"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "pearson/pearson_internal.h"
#include "pearson/pearson_math.h"

#define PEARSON_THREADS		256
#define PEARSON_PLANES			4		/* c, c^2, mask, scaled values (pairwise) */

/* How the self mask of a tile is applied. */
enum
{
	PEARSON_SELF_NONE = 0,			/* x against y: every pair */
	PEARSON_SELF_UPPER,			/* pairs of a self correlation: b > a */
	PEARSON_SELF_OTHER				/* top-k of a self correlation: b != a */
};

/* One side of the problem on the device. */
typedef struct GpuPearsonSide
{
	const OdpMatrix64 *m;
	int64_t		rows;
	double	   *plane[PEARSON_PLANES];	/* resident: rows x dims each */
	double	   *host[PEARSON_PLANES];	/* staged: prepared planes in host memory */
	uint8_t    *invalid;		/* device, rows: constant series (complete) */
} GpuPearsonSide;

/* The plan of one call: sizes chosen from the memory budget. */
typedef struct GpuPearsonPlan
{
	int			nplanes;		/* 1 complete, 3 pairwise */
	int			ntiles;			/* 1 complete, 6 pairwise */
	bool		resident;		/* planes on the device */
	bool		triangle_top;	/* top-k lists of every series on the device */
	int64_t		T;				/* tile rows */
	int64_t		W;				/* tile columns */
	int64_t		prep_rows;		/* series per preparation chunk */
	int64_t		state_rows;		/* top-k lists on the device */
} GpuPearsonPlan;

/* Everything one call holds; released by GpuPearsonRelease. */
typedef struct GpuPearson
{
	OdpContext *ctx;
	const OdpPearsonJob *job;
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream;
	const OdpBlas *blas;
	cublasHandle_t handle;
	GpuPearsonPlan plan;
	GpuPearsonSide x;
	GpuPearsonSide y;
	GpuPearsonSide *ys;			/* &x for a self correlation, else &y */
	bool		self;
	bool		pairwise;
	int32_t		dims;
	double		min_n;

	/* device buffers */
	double	   *tiles;			/* ntiles x T x W */
	double	   *trans;			/* T x W, triangle top-k */
	double	   *panel_a;		/* staged: nplanes x T x dims */
	double	   *panel_b;		/* staged: nplanes x W x dims */
	uint8_t    *d_miss;			/* prep: prep_rows x dims missing flags */
	double	   *d_stage;		/* staged prep: nplanes x prep_rows x dims */
	double	   *d_sorted;		/* Spearman: prep_rows x dims */
	int32_t    *d_pos;			/* Spearman: 2 x prep_rows x dims */
	int32_t    *d_offsets;		/* Spearman: prep_rows + 1 */
	void	   *d_temp;			/* CUB temporary storage */
	size_t		temp_bytes;
	uint32_t   *d_sel;			/* pairs: T x W selected indexes */
	double	   *d_selr;			/* pairs: their coefficients */
	int64_t    *d_nsel;			/* pairs: how many */
	double	   *s_key;			/* top-k lists: state_rows x k */
	int64_t    *s_tag;
	int32_t    *s_count;		/* state_rows */

	/* host buffers */
	uint32_t   *h_sel;
	double	   *h_selr;
	int64_t		h_cap;
	double	   *h_key;			/* top-k lists copied back */
	int64_t    *h_tag;
	int32_t    *h_count;
	OdpPearsonPairs pairs;			/* the current row block's pairs */
	void	   *pinned;			/* an input page-locked for its copy, or NULL */
} GpuPearson;

/*
 * Stage timing for benchmarks (-DODP_PEARSON_TRACE): each stage waits for
 * the stream and adds its wall time; each call writes its device's times
 * to stderr as it ends (pearson_gpu.cu).  Compiled out otherwise.  The
 * times are inline variables, one copy for every file of the path, and
 * one per thread, so that a split's parts time their own stages.
 */
#ifdef ODP_PEARSON_TRACE
enum
{
	PEARSON_T_SETUP, PEARSON_T_PREP, PEARSON_T_GEMM, PEARSON_T_FINISH, PEARSON_T_SELECT,
	PEARSON_T_TOP, PEARSON_T_HOST, PEARSON_T_COUNT
};
inline thread_local double pearson_t_ms[PEARSON_T_COUNT];
inline thread_local double pearson_t_last;

/* Closes stage s: waits for the stream, adds the time since the last mark. */
static inline void
PearsonTraceMark(cudaStream_t stream, int s)
{
	double		now;

	if (stream != NULL)
		(void) cudaStreamSynchronize(stream);
	now = odp_now_ms();
	if (s >= 0)
		pearson_t_ms[s] += now - pearson_t_last;
	pearson_t_last = now;
}
#define PEARSON_TRACE(stream, s) PearsonTraceMark((stream), (s))
#else
#define PEARSON_TRACE(stream, s) ((void) 0)
#endif

/* Whether the self mask excludes pair (a, b). */
static __device__ __forceinline__ bool
PearsonMasked(int self_mode, int64_t a, int64_t b)
{
	return (self_mode == PEARSON_SELF_UPPER && b <= a) ||
		(self_mode == PEARSON_SELF_OTHER && b == a);
}

/*
 * How the consumers of a tile (the pair selection, the top-k selection)
 * read coefficient (i, j) of ni x nj (row-major) values t.  Pairwise data
 * is finished in place first (PearsonFinishPairwise: r, or NaN for none);
 * complete data is read as the products themselves, which the reader
 * clamps and masks (a constant series, the self mask), so that no pass
 * over the tile is spent on finishing it.  a0, b0: the series of row 0
 * and column 0; inv_a, inv_b their sides' constant-series flags.
 */
struct PearsonTileView
{
	const double *t;
	int64_t		nj;
	int64_t		a0;
	int64_t		b0;
	const uint8_t *inv_a;
	const uint8_t *inv_b;
	int			self_mode;
	bool		finished;		/* t holds coefficients (pairwise data) */
};

/* Coefficient (i, j) of a tile view, NaN where the pair has none. */
static __device__ __forceinline__ double
PearsonTileCoefficient(const PearsonTileView &v, int64_t i, int64_t j)
{
	const double g = v.t[i * v.nj + j];
	const int64_t a = v.a0 + i;
	const int64_t b = v.b0 + j;

	if (v.finished)
		return g;
	if (v.inv_a[a] || v.inv_b[b] || PearsonMasked(v.self_mode, a, b))
		return NAN;
	return odp_pearson_clamp(g);
}

/* A tile whose selected pairs wait in host memory (h_sel, h_selr). */
typedef struct PearsonTaken
{
	int64_t		count;			/* pairs; 0: none waiting */
	int64_t		a0;				/* the tile's first series and partner */
	int64_t		b0;
	int64_t		nj;				/* its width */
	bool		block_end;		/* the last tile of its row block */
} PearsonTaken;

/* Blocks for a grid-stride loop over n items, at least one. */
static inline unsigned
PearsonBlocks(const GpuPearson *g, int64_t n)
{
	int64_t		blocks = (n + PEARSON_THREADS - 1) / PEARSON_THREADS;
	int64_t		cap = (int64_t) g->dev.sm_count * 16;

	if (blocks > cap)
		blocks = cap;
	return (unsigned) (blocks > 0 ? blocks : 1);
}

/* Waits for the stream; returns its error status. */
static inline OdpStatus
PearsonSync(GpuPearson *g, const char *what)
{
	OdpStatus	status = ODP_OK;

	ODP_CUDA_TRY(g->ctx, cudaStreamSynchronize(g->stream), what);
cleanup:
	return status;
}

/* Polls the cancel callback (the stream idle). */
static inline OdpStatus
PearsonPoll(GpuPearson *g)
{
	if (odp_cancel_requested(g->ctx))
		return odp_fail(g->ctx, ODP_ERR_CANCELLED, "canceled");
	return ODP_OK;
}

/*
 * The preparation (pearson_gpu_prep.cu): the ranking sort's temporary
 * storage, every series of a side prepared, and the unlocking of an input
 * PearsonPrepare page-locked.
 */
extern OdpStatus PearsonRankBytes(GpuPearson *g, size_t *bytes);
extern OdpStatus PearsonPrepare(GpuPearson *g, GpuPearsonSide *side);
extern void PearsonUnpin(GpuPearson *g);

/* The products (pearson_gpu_tiles.cu): a panel of series, a tile's products. */
extern OdpStatus PearsonPanel(GpuPearson *g, const GpuPearsonSide *side, int64_t s0,
							  int64_t n, double *panel, int64_t panel_rows,
							  const double **planes);
extern OdpStatus PearsonTileProducts(GpuPearson *g, const double *const *A, int64_t a0,
									 int64_t ni, const double *const *B, int64_t b0,
									 int64_t nj, int self_mode, PearsonTileView *view);

/*
 * The pairs over the threshold (pearson_gpu_pairs.cu): the selection's
 * temporary storage, a tile's selection, its pairs copied back, and the
 * waiting pairs turned into rows and handed over.
 */
extern OdpStatus PearsonSelectBytes(GpuPearson *g, size_t *bytes);
extern OdpStatus PearsonSelectPairs(GpuPearson *g, const PearsonTileView *v, int64_t ni);
extern OdpStatus PearsonFetchPairs(GpuPearson *g, const PearsonTileView *v,
								   PearsonTaken *taken);
extern OdpStatus PearsonTakePairs(GpuPearson *g, PearsonTaken *taken);

/* The top-k lists (pearson_gpu_top.cu): a tile merged in, lists copied out. */
extern OdpStatus PearsonTakeTop(GpuPearson *g, const PearsonTileView *v, int64_t ni,
								int64_t row0);
extern OdpStatus PearsonTakeLists(GpuPearson *g, int64_t first, int64_t n);

#endif							/* ODP_PEARSON_GPU_INTERNAL_CUH */
