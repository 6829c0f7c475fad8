/*-------------------------------------------------------------------------
 *
 * engine_internal.h
 *	  Plumbing every part of the engine shares: failure messages,
 *	  cancellation, row norms and the device a call starts on.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/engine_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_ENGINE_INTERNAL_H
#define ODP_ENGINE_INTERNAL_H

#include "include/odp_engine.h"

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

/*
 * Every row's norm (odp_row_norm) in a new array *norms that the caller
 * frees, for cosine (engine_common.c); a zero or infinite norm is ODP_ERR_DATA, naming the
 * row as "<what> <index>".  Nothing is left allocated on failure.
 */
extern OdpStatus odp_matrix_norms(OdpContext *ctx, const OdpMatrix *m,
								  const char *what, float **norms);
/* odp_matrix_norms of float64 rows (m->data64): odp_row_norm64 each. */
extern OdpStatus odp_matrix_norms64(OdpContext *ctx, const OdpMatrix *m,
									const char *what, double **norms);

/* Asks the caller's cancel callback; false when there is none. */
extern bool odp_cancel_requested(OdpContext *ctx);

/*
 * The CUDA ordinal of the first device of ctx's device list: ctx->gpu_id
 * when the list is empty (gpu_count 0), device 0 for every device.  The
 * device a one-device analytic uses, and the first part of a split.
 */
extern int	odp_device_first(const OdpContext *ctx);


#ifdef __cplusplus
}
#endif

#endif							/* ODP_ENGINE_INTERNAL_H */
