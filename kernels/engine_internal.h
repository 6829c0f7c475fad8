/*-------------------------------------------------------------------------
 *
 * engine_internal.h
 *	  Declarations shared inside the engine: messages, cancellation, and
 *	  the per-path entry points behind odp_engine.h.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/engine_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ENGINE_INTERNAL_H
#define ODP_ENGINE_INTERNAL_H

#include "odp_engine.h"

#ifdef __cplusplus
extern "C"
{
#endif

#if defined(__GNUC__)
#define ODP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ODP_PRINTF(f, a)
#endif

/* Records a message in ctx and returns status, for "return odp_fail(...)". */
extern OdpStatus odp_fail(OdpContext *ctx, OdpStatus status,
						  const char *fmt,...) ODP_PRINTF(3, 4);

/* Asks the caller's cancel callback; false when there is none. */
extern bool odp_cancel_requested(OdpContext *ctx);

/*
 * Receives one query's neighbours, sorted ascending by (distance, index);
 * count = min(k, candidates available).  May be called from several
 * threads at once, never twice for one query.
 */
typedef void (*OdpKnnEmitFn) (void *arg, int64_t query, const float *dist,
							  const int64_t *index, int32_t count);

/* Arguments of the CPU k-nearest-neighbour primitive (cpu_knn.c). */
typedef struct OdpCpuKnnArgs
{
	OdpContext *ctx;
	const OdpMatrix *queries;
	const OdpMatrix *candidates;
	const float *query_norms;	/* cosine only, else NULL */
	const float *cand_norms;	/* cosine only, else NULL */
	OdpMetric	metric;
	int32_t		k;
	bool		self_join;		/* queries == candidates: skip the pair (i, i) */
	OdpKnnEmitFn emit;
	void	   *emit_arg;
} OdpCpuKnnArgs;

extern OdpStatus odp_cpu_knn(const OdpCpuKnnArgs *args);

/*
 * Per-path implementations; arguments already validated by the dispatcher
 * (kernels/outliers.c).  norms is NULL unless metric is cosine, then it
 * holds odp_row_norm of every row, none of them zero.
 */
extern OdpStatus odp_cpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										OdpMetric metric, int32_t k,
										const float *norms, double *scores);
extern OdpStatus odp_gpu_outlier_scores(OdpContext *ctx, const OdpMatrix *m,
										OdpMetric metric, int32_t k,
										const float *norms, double *scores);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_ENGINE_INTERNAL_H */
