/*-------------------------------------------------------------------------
 *
 * odp_engine.h
 *	  Plain C API of the odp_gpu compute engine (CPU and GPU paths): what
 *	  every analytic shares (status, context, matrices, metrics, the GPU
 *	  runtime's probe).  Each analytic's entry points are in its own header
 *	  beside this one: odp_outliers.h, odp_knn.h, odp_pearson.h,
 *	  odp_skyline.h, odp_intervals.h and odp_distributed.h (sharded data).
 *
 * The engine knows nothing of PostgreSQL.  It takes an N x D matrix in
 * row-major order, float32 or float64 for the distance analytics (the
 * precision the caller's data was stored in; OdpMatrix), float64 with
 * optional flags of missing values for the correlations, returns results
 * into buffers the caller
 * owns, and reports failure as a status code plus a message in the
 * context.  It never exits, aborts, longjmps or throws, and it frees all
 * host and device memory it allocated before returning, on every path.
 *
 * Entry points are named odp_compute_<analytic>; the bare SQL names
 * (odp_outlier_scores, ...) belong to the SQL-callable C functions in src/.
 *
 * Row order is meaningful: wherever two results tie, the engine prefers
 * the row with the smaller index.  Callers that want "ties by smaller id"
 * pass rows sorted by ascending id (src/ does).
 *
 * Distances are computed in the matrix's precision (float32 for data,
 * float64 for data64), one dimension after the other in index order and
 * without fused multiply-add, on both paths, so the CPU and the GPU
 * produce bit-identical distances; scores sum the k smallest distances in
 * ascending order in float64.  Both paths therefore return the same
 * scores and the same ranking.
 *
 * Layout of kernels/.  include/ holds this API, the only part of the
 * engine src/ may include.  common/ is the engine's plumbing (messages,
 * cancellation, host threads, host sorts, top-n selection); gpu/ the GPU
 * runtime (device probe and budget, the tracking allocator, cuBLAS loaded
 * at run time, CUDA checks, device primitives every analytic uses) and
 * the no-GPU build of it; devices/ spreads one call over several GPUs (the
 * device set, the ordered pair relay).  Then one folder per analytic,
 * each with its dispatcher (<analytic>.c, which checks arguments and picks
 * the path), its CPU path (_cpu.c), its GPU path (_gpu.cu), its split over
 * devices (_split.c), its no-CUDA stubs (_gpu_disabled.c) and its internal
 * header: knn/, outliers/ (brute force, SolvingSet, distributed
 * SolvingSet), pearson/, skyline/, intervals/.
 *
 * Arrows run one way: an analytic may include devices/, gpu/, common/ and
 * include/; devices/ may include gpu/, common/ and include/; gpu/ common/
 * and include/; common/ include/ only.  outliers/ is built on the k-NN
 * primitive and may include knn/; no other analytic includes another.
 * Within a folder too, no two files call each other: the dispatcher calls
 * the split and the paths, and what several of them share sits in a file
 * of its own below them.  test/checks/layout.sh checks all of this.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_engine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ENGINE_H
#define ODP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

/* Limits the engine enforces; src/ checks them first to report nicely. */
#define ODP_MAX_DIMS		16384		/* features per row */
#define ODP_MAX_K			4096		/* neighbours per row */
#define ODP_MAX_ROWS		(((int64_t) 1 << 31) - 1)	/* rows per input */
#define ODP_MAX_SERIES_LEN	(1 << 20)	/* values per correlated series */
#define ODP_MESSAGE_LEN		512
#define ODP_MAX_GPUS		16			/* entries of a device list */
#define ODP_GPUS_ALL		(-1)		/* OdpContext.gpu_count: every device */

typedef enum OdpStatus
{
	ODP_OK = 0,
	ODP_ERR_INVALID_ARGUMENT,	/* bad k, n, sizes: caller's fault */
	ODP_ERR_DATA,				/* bad values (e.g. zero vector with cosine) */
	ODP_ERR_LIMIT,				/* input over an engine limit */
	ODP_ERR_HOST_OOM,			/* host allocation failed */
	ODP_ERR_GPU_OOM,			/* device allocation failed */
	ODP_ERR_NO_GPU,				/* no usable GPU (no driver, no device, ...) */
	ODP_ERR_GPU,				/* any other CUDA failure */
	ODP_ERR_CANCELLED,			/* the cancel callback asked to stop */
	ODP_ERR_INTERNAL			/* a bug: an invariant did not hold */
} OdpStatus;

typedef enum OdpMetric
{
	ODP_METRIC_EUCLIDEAN = 0,
	ODP_METRIC_SQEUCLIDEAN,
	ODP_METRIC_MANHATTAN,
	ODP_METRIC_CHEBYSHEV,
	ODP_METRIC_COSINE,
	ODP_METRIC_INNER_PRODUCT	/* k-NN only: largest inner product first */
} OdpMetric;

#define ODP_METRIC_COUNT 6

typedef enum OdpDevice
{
	ODP_DEVICE_CPU = 0,
	ODP_DEVICE_GPU
} OdpDevice;

/*
 * Cancellation callback: return true to ask the engine to stop.  The engine
 * calls it from the caller's thread only, between bounded pieces of work
 * (tiles, kernel launches), never from a worker thread.
 */
typedef bool (*OdpCancelFn) (void *arg);

/*
 * Whether k-NN and outlier calls on low-dimensional rows take the spatial
 * path (kernels/knn/spatial.h): where it measured faster (AUTO, the zeroed
 * default), never, or wherever it can run.
 */
typedef enum OdpSpatialMode
{
	ODP_SPATIAL_AUTO = 0,
	ODP_SPATIAL_OFF,
	ODP_SPATIAL_ON
} OdpSpatialMode;

/*
 * Per-call context.  The caller fills the inputs (zeroing the struct first
 * gives sane defaults) and reads the outputs after the call.
 */
typedef struct OdpContext
{
	/* inputs */
	OdpDevice	device;			/* which path runs */
	int			gpu_id;			/* CUDA device ordinal, when gpu_count is 0 */

	/*
	 * The devices one call spreads its work over: gpu_count 0 means gpu_id
	 * alone (as a zeroed context gives), ODP_GPUS_ALL every device of the
	 * host, else gpu_ids[0 .. gpu_count).  An ordinal may appear more than
	 * once: each entry is then a part of its own, with its own stream and
	 * an equal share of that device's budget (a way to exercise the split
	 * on a host with one GPU).  Analytics that run on one device only
	 * (SolvingSet) use the first entry.  Every split gives the same
	 * results as one device.
	 */
	int			gpu_count;
	int			gpu_ids[ODP_MAX_GPUS];
	size_t		gpu_memory_limit;	/* bytes the GPU path may use on each
									 * device; 0 = 90% of its free memory */
	int			cpu_threads;	/* worker threads for the CPU path; <= 1 = one */
	OdpCancelFn cancel;			/* may be NULL */
	void	   *cancel_arg;
	OdpSpatialMode spatial;		/* the spatial path: auto, off, on */

	/*
	 * A call spreads over several devices only where one device's compute
	 * is estimated at this many milliseconds or more (odp_one_device_ms);
	 * 0, as a zeroed context gives, wherever the list has several entries.
	 */
	double		split_min_ms;

	/*
	 * Copies the engine holds of inputs of this call (odp_resident.h: the
	 * GPU service's copies of table cache arrays), nresident of them; NULL
	 * for any other caller.  A GPU path that copies an input lying in one
	 * to the device that holds it copies on the device instead.
	 */
	const struct OdpResidentArray *resident;
	int			nresident;

	/* outputs */
	char		message[ODP_MESSAGE_LEN];	/* set on failure, may be set on OK */
	double		transfer_ms;	/* host<->device copies (GPU path) */
	double		compute_ms;		/* distance and selection work */
	int64_t		chunks;			/* query x candidate chunks the GPU ran */
	int			gpu_parts;		/* device parts the GPU path's work was
								 * spread over (2 or more), left as the
								 * caller set it where it ran on one */
	int			spatial_used;	/* the call took the spatial path */
	int64_t		spatial_distances;	/* distances that path computed */
	int			batch_queries;	/* k-NN queries of the pass that served a
								 * shared call (odp_knn_shared), 0 else */
	double		batch_wait_ms;	/* that call's wait for the passes before
								 * its own */
} OdpContext;

/*
 * The work an estimate of one device's compute counts (odp_one_device_ms),
 * from rows, other_rows and dims.
 */
typedef enum OdpWorkKind
{
	ODP_WORK_DISTANCES,			/* query rows x candidate rows (other_rows)
								 * x dims */
	ODP_WORK_CORRELATIONS,		/* pairs x series length (dims): rows x
								 * other_rows, or rows' own pairs where
								 * other_rows is 0 */
	ODP_WORK_SKYLINE,			/* rows */
	ODP_WORK_REGIONS			/* rows + other_rows */
} OdpWorkKind;

/*
 * One device's compute for a call of that kind and shape, in milliseconds:
 * the rates measured on one H200 at full size (test/bench/devices_bench.sh,
 * 2026-11-29), the fastest of the analytics of a kind, so that the
 * estimate errs towards one device.  A call is spread over several
 * devices only where it reaches OdpContext.split_min_ms.
 */
extern double odp_one_device_ms(OdpWorkKind kind, int64_t rows, int64_t other_rows,
								int32_t dims);

/*
 * Dense input of the distance analytics: rows x dims, row-major, finite
 * values, in one of two precisions: float32 in data (data64 NULL), or
 * float64 in data64 (data NULL), whose distances are then computed,
 * compared and returned in float64 on every path.  The caller picks the
 * precision its values were stored in: float64 values rounded to float32
 * move neighbours past each other (epoch seconds hold only to 128 s in
 * float32).  Rows are addressed by index 0 .. rows-1.  ids, where given,
 * are the rows' ids, strictly ascending: SolvingSet draws its first
 * candidates by id, so that the same rows give the same run however they
 * are split (odp_distributed.h); NULL stands for ids equal to the indexes.
 */
typedef struct OdpMatrix
{
	const float *data;
	int64_t		rows;
	int32_t		dims;
	const int64_t *ids;
	const double *data64;
} OdpMatrix;

/* Whether m holds float64 rows (data64). */
static inline bool
odp_matrix_is64(const OdpMatrix *m)
{
	return m->data64 != NULL;
}

/* Whether a metric is a distance (every metric but the inner product). */
extern bool odp_metric_is_distance(OdpMetric metric);

/*
 * Selects the n highest scores, ties by smaller id (ids may be NULL: then
 * by smaller index).  Writes min(n, rows) row indexes into order, best
 * first, and returns how many it wrote.  Pure host code, O(rows log n).
 */
extern int64_t odp_top_n(const double *scores, const int64_t *ids,
						 int64_t rows, int64_t n, int64_t *order);

/*
 * Dense float64 input: rows x dims, row-major, one series per row, its
 * values in order.  missing, when not NULL, holds rows x dims flags: a
 * nonzero flag marks a value as absent (its data entry is then ignored).
 * Present values must be finite.
 */
typedef struct OdpMatrix64
{
	const double *data;
	const uint8_t *missing;		/* or NULL: every value present */
	int64_t		rows;
	int32_t		dims;
} OdpMatrix64;

/* Parses "euclidean" etc.; returns false for an unknown name. */
extern bool odp_metric_from_name(const char *name, OdpMetric *metric);
extern const char *odp_metric_name(OdpMetric metric);

/* Monotonic wall clock in milliseconds, for phase timings on both sides. */
extern double odp_now_ms(void);

/*
 * Sorts key[0 .. n) ascending, stably, carrying val[0 .. n) (a radix sort
 * on the caller's thread); false where its scratch cannot be had.
 */
extern bool odp_sort_keys(uint64_t *key, uint32_t *val, int64_t n);

/* Returns a fixed English description of a status. */
extern const char *odp_status_name(OdpStatus status);

/* ---- GPU runtime, shared by every analytic ---- */

typedef struct OdpGpuInfo
{
	int			index;
	char		name[256];
	int			cc_major;
	int			cc_minor;
	int			multiprocessors;
	size_t		total_memory;
	size_t		free_memory;
} OdpGpuInfo;

/*
 * Returns whether the build has a GPU path at all (false when compiled
 * without CUDA).
 */
extern bool odp_gpu_compiled(void);

/* CUDA runtime version the library was built with (e.g. 13000), or 0. */
extern int	odp_gpu_build_version(void);

/*
 * Initialises CUDA lazily in the calling process and counts the devices.
 * On success returns ODP_OK and sets *count (>= 1).  Without a driver or a
 * device it returns ODP_ERR_NO_GPU with the reason in ctx->message.  Safe to
 * call repeatedly; the outcome is cached per process.
 */
extern OdpStatus odp_gpu_probe(OdpContext *ctx, int *count,
							   int *driver_version, int *runtime_version);

/* Fills *info for device ordinal index (after a successful probe). */
extern OdpStatus odp_gpu_device_info(OdpContext *ctx, int index,
									 OdpGpuInfo *info);

/*
 * Checks that device index's context still works; where a fault (an
 * illegal address, a kernel that trapped) poisoned it, destroys it and
 * creates a new one, and sets *rebuilt; where the driver gives the device
 * back only to a new process, returns ODP_ERR_GPU with a message saying
 * "poisoned" (the program must then restart).  A poisoned context fails every
 * later call on the device until then, so a program that keeps one
 * context for many calls (the GPU service) calls this after a call fails
 * with ODP_ERR_GPU, while no other thread uses the device.
 */
extern OdpStatus odp_gpu_device_recover(OdpContext *ctx, int index,
										bool *rebuilt);

/*
 * Declares [ptr, ptr + bytes) the process's staging area, the host memory
 * every call's inputs are written into: it is page-locked for every
 * device, now (eager: the GPU service, as it starts) or by the next GPU
 * call (a backend, which starts CUDA only when a call needs it), and stays
 * locked until another area (or NULL) replaces it; the caller frees the
 * old area only after that.  Copies from it run at the bus's page-locked
 * speed, and the engine never locks pages of it again per call.  A
 * failure to lock leaves the area unlocked (copies pageable) and, when
 * eager, returns ODP_ERR_GPU with the reason.
 */
extern OdpStatus odp_gpu_host_area(OdpContext *ctx, void *ptr, size_t bytes, bool eager);

/*
 * Page-locks [ptr, ptr + bytes) for every device, now and for the
 * process's life: the GPU service's rings, from which the inputs that
 * stream to it go on to the devices piece by piece as they arrive
 * (odp_piece_copies_begin).  ODP_ERR_GPU with the reason where it cannot.
 */
extern OdpStatus odp_gpu_host_rings(OdpContext *ctx, void *ptr, size_t bytes);

/*
 * Poisons device index's context with an illegal memory access, as a
 * faulty kernel would; for tests of odp_gpu_device_recover only.
 */
extern OdpStatus odp_gpu_device_poison(OdpContext *ctx, int index);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_ENGINE_H */

