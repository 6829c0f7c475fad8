/*-------------------------------------------------------------------------
 *
 * pearson.c
 *	  Pearson and Spearman correlation of series (odp_compute_pearson_pairs,
 *	  odp_compute_pearson_top): argument checks and dispatch to the CPU
 *	  path or to the GPU path spread over the call's devices.
 *
 * Both paths compute the coefficients as pearson_math.h defines them and
 * agree to within rounding (about 1e-15); the lists of odp_compute_pearson_top
 * rank exactly by the coefficients each path computed, ties by the
 * smaller row.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "pearson/pearson_internal.h"
#include "pearson/pearson_math.h"

/* Checks one input matrix of a correlation call. */
static OdpStatus
pearson_check_matrix(OdpContext *ctx, const OdpMatrix64 *m, const char *what)
{
	if (m == NULL || m->data == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing %s", what);
	if (m->rows < 1 || m->rows > ODP_MAX_ROWS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%lld %s: correlation needs 1 .. %lld",
						(long long) m->rows, what, (long long) ODP_MAX_ROWS);
	if (m->dims < ODP_PEARSON_MIN_POSITIONS || m->dims > ODP_MAX_SERIES_LEN)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"the %s have %d values each; correlation needs %d .. %d",
						what, (int) m->dims, ODP_PEARSON_MIN_POSITIONS,
						ODP_MAX_SERIES_LEN);
	return ODP_OK;
}

/* Checks the problem shared by both entry points and resets ctx's outputs. */
static OdpStatus
pearson_check_problem(OdpContext *ctx, const OdpPearsonProblem *p)
{
	OdpStatus	status;

	ctx->message[0] = '\0';
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	if (p == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing problem");
	if ((status = pearson_check_matrix(ctx, p->x, "series")) != ODP_OK)
		return status;
	if (p->y != NULL)
	{
		if ((status = pearson_check_matrix(ctx, p->y, "other series")) != ODP_OK)
			return status;
		if (p->y->dims != p->x->dims)
			return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
							"series have %d values but the other series %d",
							(int) p->x->dims, (int) p->y->dims);
	}
	if (p->method != ODP_PEARSON_METHOD_PEARSON && p->method != ODP_PEARSON_METHOD_SPEARMAN)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "unknown correlation method %d",
						(int) p->method);
	if (p->method == ODP_PEARSON_METHOD_SPEARMAN &&
		(p->x->missing != NULL || (p->y != NULL && p->y->missing != NULL)))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"Spearman correlation needs complete series (no missing values)");
	if (p->min_periods < 1)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"min_periods must be at least 1, not %d", (int) p->min_periods);
	return ODP_OK;
}

/* Runs a checked job on ctx->device. */
static OdpStatus
pearson_run(OdpContext *ctx, const OdpPearsonJob *job)
{
	if (ctx->device == ODP_DEVICE_GPU)
		return odp_split_pearson(ctx, job);
	return odp_cpu_pearson(ctx, job);
}

/* See odp_pearson.h. */
OdpStatus
odp_compute_pearson_pairs(OdpContext *ctx, const OdpPearsonProblem *p,
						  double min_abs_r, OdpPearsonPairFn emit, void *emit_arg,
						  int64_t *pairs)
{
	OdpPearsonJob	job;
	OdpPearsonEmitter emitter;
	OdpStatus	status;

	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	if ((status = pearson_check_problem(ctx, p)) != ODP_OK)
		return status;
	if (emit == NULL || pairs == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing pair receiver");
	if (!(min_abs_r >= 0.0 && min_abs_r <= 1.0))
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"min_abs_r must lie in [0, 1], not %g", min_abs_r);

	memset(&emitter, 0, sizeof(emitter));
	emitter.fn = emit;
	emitter.arg = emit_arg;
	memset(&job, 0, sizeof(job));
	job.p = p;
	job.min_abs_r = min_abs_r;
	job.emitter = &emitter;
	status = pearson_run(ctx, &job);
	*pairs = emitter.emitted;
	return status;
}

/* See odp_pearson.h. */
OdpStatus
odp_compute_pearson_top(OdpContext *ctx, const OdpPearsonProblem *p, int32_t k,
						OdpPearsonRank rank, int64_t *other, double *r)
{
	OdpPearsonJob	job;
	OdpStatus	status;

	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	if ((status = pearson_check_problem(ctx, p)) != ODP_OK)
		return status;
	if (other == NULL || r == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing output buffer");
	if (k < 1 || k > ODP_MAX_K)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"k = %d is out of range 1 .. %d", (int) k, ODP_MAX_K);
	if (rank != ODP_PEARSON_RANK_ABS && rank != ODP_PEARSON_RANK_POSITIVE &&
		rank != ODP_PEARSON_RANK_NEGATIVE)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "unknown ranking %d", (int) rank);

	memset(&job, 0, sizeof(job));
	job.p = p;
	job.top = true;
	job.k = k;
	job.rank = rank;
	job.other = other;
	job.r = r;
	return pearson_run(ctx, &job);
}
