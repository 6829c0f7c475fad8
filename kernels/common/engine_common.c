/*-------------------------------------------------------------------------
 *
 * engine_common.c
 *	  Status messages, metric names, clocks and cancellation shared by
 *	  every analytic and both paths of the engine.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/common/engine_common.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <math.h>
#include <stdlib.h>

#include "common/engine_internal.h"
#include "include/odp_distance.h"

static const char *const metric_names[ODP_METRIC_COUNT] = {
	"euclidean", "sqeuclidean", "manhattan", "chebyshev", "cosine",
	"inner_product"
};

/* Formats a message into ctx and returns status unchanged. */
OdpStatus
odp_fail(OdpContext *ctx, OdpStatus status, const char *fmt,...)
{
	va_list		ap;

	if (ctx == NULL)
		return status;
	va_start(ap, fmt);
	vsnprintf(ctx->message, sizeof(ctx->message), fmt, ap);
	va_end(ap);
	return status;
}

/* Asks the caller whether to stop; a context without callback never stops. */
bool
odp_cancel_requested(OdpContext *ctx)
{
	return ctx->cancel != NULL && ctx->cancel(ctx->cancel_arg);
}

/* Returns a monotonic clock reading in milliseconds. */
double
odp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Looks a metric up by its SQL name (exact, lower case). */
bool
odp_metric_from_name(const char *name, OdpMetric *metric)
{
	for (int i = 0; i < ODP_METRIC_COUNT; i++)
	{
		if (strcmp(name, metric_names[i]) == 0)
		{
			*metric = (OdpMetric) i;
			return true;
		}
	}
	return false;
}

/* Returns the SQL name of a metric. */
const char *
odp_metric_name(OdpMetric metric)
{
	if ((int) metric < 0 || (int) metric >= ODP_METRIC_COUNT)
		return "unknown";
	return metric_names[metric];
}

/* See odp_engine.h. */
bool
odp_metric_is_distance(OdpMetric metric)
{
	return metric != ODP_METRIC_INNER_PRODUCT;
}

/*
 * A row norm's checks for cosine: a zero vector has no direction, and an
 * infinite norm would make the distance NaN, which has no order.
 */
static OdpStatus
norm_check(OdpContext *ctx, double norm, const char *what, int64_t row,
		   const char *precision)
{
	if (norm == 0.0)
		return odp_fail(ctx, ODP_ERR_DATA,
						"%s %lld is a zero vector, for which cosine distance is undefined",
						what, (long long) row);
	if (isinf(norm))
		return odp_fail(ctx, ODP_ERR_DATA,
						"the norm of %s %lld overflows %s precision",
						what, (long long) row, precision);
	return ODP_OK;
}

/* See engine_internal.h. */
OdpStatus
odp_matrix_norms(OdpContext *ctx, const OdpMatrix *m, const char *what,
				 float **norms_out)
{
	float	   *norms;
	OdpStatus	status;

	*norms_out = NULL;
	norms = malloc(sizeof(float) * (size_t) m->rows);
	if (norms == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %lld row norms",
						(long long) m->rows);
	for (int64_t i = 0; i < m->rows; i++)
	{
		norms[i] = odp_row_norm(m->data + i * m->dims, m->dims);
		if ((status = norm_check(ctx, norms[i], what, i, "single")) != ODP_OK)
		{
			free(norms);
			return status;
		}
	}
	*norms_out = norms;
	return ODP_OK;
}

/* See engine_internal.h: odp_matrix_norms in float64. */
OdpStatus
odp_matrix_norms64(OdpContext *ctx, const OdpMatrix *m, const char *what,
				   double **norms_out)
{
	double	   *norms;
	OdpStatus	status;

	*norms_out = NULL;
	norms = malloc(sizeof(double) * (size_t) m->rows);
	if (norms == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for %lld row norms",
						(long long) m->rows);
	for (int64_t i = 0; i < m->rows; i++)
	{
		norms[i] = odp_row_norm64(m->data64 + i * m->dims, m->dims);
		if ((status = norm_check(ctx, norms[i], what, i, "double")) != ODP_OK)
		{
			free(norms);
			return status;
		}
	}
	*norms_out = norms;
	return ODP_OK;
}

/* Returns a short English name for a status, for logs and tests. */
const char *
odp_status_name(OdpStatus status)
{
	switch (status)
	{
		case ODP_OK:
			return "ok";
		case ODP_ERR_INVALID_ARGUMENT:
			return "invalid argument";
		case ODP_ERR_DATA:
			return "invalid data";
		case ODP_ERR_LIMIT:
			return "limit exceeded";
		case ODP_ERR_HOST_OOM:
			return "out of host memory";
		case ODP_ERR_GPU_OOM:
			return "out of GPU memory";
		case ODP_ERR_NO_GPU:
			return "no usable GPU";
		case ODP_ERR_GPU:
			return "GPU failure";
		case ODP_ERR_CANCELLED:
			return "cancelled";
		case ODP_ERR_INTERNAL:
			return "internal error";
	}
	return "unknown status";
}

/* See engine_internal.h. */
int
odp_device_first(const OdpContext *ctx)
{
	if (ctx->gpu_count == 0)
		return ctx->gpu_id;
	if (ctx->gpu_count == ODP_GPUS_ALL)
		return 0;
	return ctx->gpu_ids[0];
}
