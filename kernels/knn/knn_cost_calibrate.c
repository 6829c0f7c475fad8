/*-------------------------------------------------------------------------
 *
 * knn_cost_calibrate.c
 *	  Times the engine's own k-NN calls on generated rows to fill the
 *	  cost model's terms for this host (odp_knn_cost_calibrate,
 *	  odp_cost.h).
 *
 * Each group of terms comes from calls that differ in one factor, so
 * that the terms follow from a small linear system: the CPU's three from
 * a single query (every term once) and from 16 queries at two widths,
 * many queries over a few narrow rows (what a query's list costs to take
 * candidates in), a tiny call (the fixed cost), and the speed-up from one
 * query over 128 MB on one thread and on every core; the GPU's from a
 * tiny call (the fixed cost; again from page-locked host memory, what
 * such a call costs beyond its copy), the few-query path
 * at one and eight queries, the tiles at two widths, then at 64 queries
 * (a candidate's cost beyond its terms).  Each call is timed
 * twice, the faster kept (the GPU's fixed costs five times, after 30 ms
 * of calls that warm it); the GPU's are made on a copy of the rows held
 * on the device, as the table cache's are.  A term the noise makes
 * negative counts as zero.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_cost_calibrate.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "include/odp_cost.h"
#include "include/odp_knn.h"
#include "include/odp_resident.h"
#include "knn/knn_internal.h"

#define CAL_K			10
#define CAL_TAG			UINT64_MAX	/* no table cache copy has it */
#define CAL_CPU_ROWS	(1 << 17)
#define CAL_SMALL_ROWS	(1 << 15)
#define CAL_TINY_ROWS	1024	/* the fixed cost's */
#define CAL_SELECT_QUERIES 256	/* the lists' intake's: queries */
#define CAL_SELECT_DIMS	2		/* and dimensions */
#define CAL_HOST_CALL_ROWS 16384	/* the GPU's fixed cost's rows */
#define CAL_HOST_CALL_DIMS 4		/* and dimensions */
#define CAL_BIG_ROWS	(1 << 19)	/* the speed-up's: past every cache */
#define CAL_GPU_ROWS	(1 << 20)
#define CAL_GPU_TILE_ROWS (1 << 16)
#define CAL_GPU_TILE_QUERIES 2048
#define CAL_DIMS		64
#define CAL_NARROW		8
#define CAL_COPY_BYTES	((size_t) 256 << 20)
#define CAL_REPS		2		/* a time is the best of so many calls */
#define CAL_FIXED_REPS	5		/* and a fixed cost's */
#define CAL_GPU_WARM_MS	30.0

typedef struct CalRun
{
	OdpContext *ctx;			/* the caller's, for path and device */
	const float *rows;			/* CAL_BIG_ROWS x CAL_DIMS, CAL_GPU_ROWS on a GPU */
	const double *rows64;		/* CAL_SMALL_ROWS x CAL_DIMS, or NULL */
	OdpResidentArray resident;	/* the GPU calls' copy of rows */
	bool		on_device;
	int			reps;			/* calls a time is the best of */
	double	   *dist;
	int64_t    *index;
} CalRun;

/* Fills n floats with values in [0, 1) from a fixed seed. */
static void
cal_fill(float *v, size_t n)
{
	uint64_t	x = 0x9E3779B97F4A7C15ull;

	for (size_t i = 0; i < n; i++)
	{
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = (float) (x >> 40) * (1.0f / 16777216.0f);
	}
}

/*
 * The faster of two calls of queries (the first rows, read as width
 * dims) against rows rows, on the run's path and threads; -1 on failure.
 */
static double
cal_time(CalRun *r, int64_t queries, int64_t rows, int dims, bool wide, int threads)
{
	double		best = -1.0;

	for (int rep = 0; rep < r->reps; rep++)
	{
		OdpContext	ctx = *r->ctx;
		OdpMatrix	q = {0},
					c = {0};
		double		t0;

		ctx.cpu_threads = threads;
		ctx.resident = r->on_device ? &r->resident : NULL;
		ctx.nresident = r->on_device ? 1 : 0;
		ctx.spatial = ODP_SPATIAL_OFF;
		q.rows = queries;
		c.rows = rows;
		q.dims = c.dims = dims;
		if (wide)
			q.data64 = c.data64 = r->rows64;
		else
			q.data = c.data = r->rows;
		t0 = odp_now_ms();
		if (odp_compute_knn(&ctx, &q, &c, ODP_METRIC_SQEUCLIDEAN, CAL_K, false,
							r->dist, r->index) != ODP_OK)
		{
			memcpy(r->ctx->message, ctx.message, sizeof(ctx.message));
			return -1.0;
		}
		t0 = odp_now_ms() - t0;
		if (best < 0 || t0 < best)
			best = t0;
	}
	return best;
}

/* The determinant of a 3 x 3 matrix. */
static double
cal_det3(double m[3][3])
{
	return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
		m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
		m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

/*
 * The solution of the 3 x 3 system a x = b by Cramer's rule, a negative
 * term counted as zero (false: singular).
 */
static bool
cal_solve3(double a[3][3], const double b[3], double x[3])
{
	double		det = cal_det3(a);

	if (det == 0.0)
		return false;
	for (int j = 0; j < 3; j++)
	{
		double		m[3][3];

		memcpy(m, a, sizeof(m));
		for (int i = 0; i < 3; i++)
			m[i][j] = b[i];
		x[j] = cal_det3(m) / det;
		if (x[j] < 0)
			x[j] = 0;
	}
	return true;
}

/* The CPU's terms, one thread, and the speed-up of every core. */
static bool
cal_cpu(CalRun *r, OdpKnnCostModel *m)
{
	const double rows_a = CAL_CPU_ROWS,
				rows_b = CAL_SMALL_ROWS;
	double		a[3][3] = {
		{rows_a * CAL_DIMS, rows_a * CAL_DIMS, rows_a},
		{rows_b * CAL_DIMS, 16 * rows_b * CAL_DIMS, 16 * rows_b},
		{rows_b * CAL_NARROW, 16 * rows_b * CAL_NARROW, 16 * rows_b}};
	double		t[3],
				x[3],
				one,
				all,
				wide,
				tiny,
				select;

	r->ctx->device = ODP_DEVICE_CPU;
	r->on_device = false;
	t[0] = cal_time(r, 1, CAL_CPU_ROWS, CAL_DIMS, false, 1);
	t[1] = cal_time(r, 16, CAL_SMALL_ROWS, CAL_DIMS, false, 1);
	t[2] = cal_time(r, 16, CAL_SMALL_ROWS, CAL_NARROW, false, 1);
	wide = r->rows64 ? cal_time(r, 16, CAL_SMALL_ROWS, CAL_DIMS, true, 1) : -1.0;
	tiny = cal_time(r, 1, CAL_TINY_ROWS, CAL_NARROW, false, 1);
	select = cal_time(r, CAL_SELECT_QUERIES, CAL_TINY_ROWS, CAL_SELECT_DIMS, false, 1);
	one = all = 1;
	if (m->cpu_cores > 1)
	{
		one = cal_time(r, 1, CAL_BIG_ROWS, CAL_DIMS, false, 1);
		all = cal_time(r, 1, CAL_BIG_ROWS, CAL_DIMS, false, m->cpu_cores);
	}
	if (t[0] <= 0 || t[1] <= 0 || t[2] <= 0 || one <= 0 || all <= 0 || tiny <= 0)
		return false;
	for (int i = 0; i < 3; i++)
		t[i] *= 1e6;			/* ns */
	if (!cal_solve3(a, t, x))
		return false;
	m->cpu_value_ns = x[0];
	m->cpu_term_ns = x[1];
	m->cpu_pair_ns = x[2];
	/*
	 * What a list's intake costs a candidate: many queries over a few
	 * narrow rows, where about a twentieth of the candidates enter a list
	 * (the terms above come from rows so many that almost none does).
	 * The rest of that call is the terms alone.
	 */
	if (select > 0)
	{
		const OdpKnnCostShape shape = {.queries = CAL_SELECT_QUERIES, .rows = CAL_TINY_ROWS,
			.dims = CAL_SELECT_DIMS, .k = CAL_K, .metric = ODP_METRIC_SQEUCLIDEAN, .threads = 1};
		OdpKnnCostModel terms = *m;
		OdpKnnCostEstimate without;

		terms.cpu_call_ms = 0;
		terms.cpu_list_ns = 0;
		odp_knn_cost_estimate(&terms, &shape, &without);
		m->cpu_list_ns = (select - without.cpu_ms) * 1e6 /
			(CAL_SELECT_QUERIES * odp_knn_cost_list_entries(CAL_TINY_ROWS, CAL_K));
		if (m->cpu_list_ns < 0)
			m->cpu_list_ns = 0;
	}
	/* what a tiny call costs beyond its terms and its list: setting up */
	m->cpu_call_ms = tiny - (CAL_TINY_ROWS * (CAL_NARROW * (x[0] + x[1]) + x[2]) +
							 odp_knn_cost_list_entries(CAL_TINY_ROWS, CAL_K) * m->cpu_list_ns) / 1e6;
	if (m->cpu_call_ms < 0)
		m->cpu_call_ms = 0;
	m->cpu_speedup = one / all;
	if (m->cpu_speedup < 1.0)
		m->cpu_speedup = 1.0;
	if (wide > 0)
	{
		double		narrow = t[1] - rows_b * CAL_DIMS * x[0];
		double		wide_ns = wide * 1e6 - rows_b * CAL_DIMS * x[0];

		if (narrow > 0 && wide_ns > 0)
			m->cpu_wide = wide_ns / narrow;
	}
	return true;
}

/* The GPU's terms, on the rows' copy on the device, and the copy's speed. */
static bool
cal_gpu(CalRun *r, OdpKnnCostModel *m, const void *scratch, size_t scratch_bytes)
{
	const double rows = CAL_GPU_ROWS,
				trows = CAL_GPU_TILE_ROWS,
				tq = CAL_GPU_TILE_QUERIES;
	double		call,
				tcall,
				one,
				eight,
				t64,
				t8,
				tsmall,
				twide = -1;
	OdpContext	ctx = *r->ctx;

	if (odp_resident_make(&ctx, CAL_TAG, ctx.gpu_id, r->rows,
						  sizeof(float) * CAL_GPU_ROWS * CAL_DIMS) != ODP_OK ||
		!odp_resident_find(CAL_TAG, &r->resident))
	{
		memcpy(r->ctx->message, ctx.message, sizeof(ctx.message));
		return false;
	}
	r->on_device = true;
	r->ctx->device = ODP_DEVICE_GPU;
	/*
	 * The modules load, and the clocks rise from idle: timed at once, a
	 * call's fixed cost came out twice what the same call costs warm.
	 */
	for (double until = odp_now_ms() + CAL_GPU_WARM_MS; odp_now_ms() < until;)
		if (cal_time(r, 1, CAL_GPU_ROWS, CAL_DIMS, false, 1) < 0)
			break;
	r->reps = CAL_FIXED_REPS;
	call = cal_time(r, 1, CAL_HOST_CALL_ROWS, CAL_HOST_CALL_DIMS, false, 1);
	tcall = cal_time(r, 64, 1024, CAL_NARROW, false, 1);
	r->reps = CAL_REPS;
	one = cal_time(r, 1, CAL_GPU_ROWS, CAL_DIMS, false, 1);
	eight = cal_time(r, 8, CAL_GPU_ROWS, CAL_DIMS, false, 1);
	t64 = cal_time(r, CAL_GPU_TILE_QUERIES, CAL_GPU_TILE_ROWS, CAL_DIMS, false, 1);
	t8 = cal_time(r, CAL_GPU_TILE_QUERIES, CAL_GPU_TILE_ROWS, CAL_NARROW, false, 1);
	tsmall = cal_time(r, 64, CAL_GPU_ROWS, CAL_DIMS, false, 1);
	odp_resident_drop(CAL_TAG);
	r->on_device = false;
	if (r->rows64 != NULL)
		twide = cal_time(r, CAL_GPU_TILE_QUERIES, CAL_SMALL_ROWS, CAL_DIMS, true, 1);
	if (call <= 0 || tcall <= 0 || one <= 0 || eight <= 0 || t64 <= 0 || t8 <= 0 ||
		tsmall <= 0)
		return false;
	m->gpu_call_ms = call;
	m->gpu_tile_call_ms = tcall;
	/* few: one = V fv + R fp, eight = V fv + 8 R fp */
	m->gpu_few_pair_ns = (eight - one) * 1e6 / (7 * rows);
	if (m->gpu_few_pair_ns < 0)
		m->gpu_few_pair_ns = 0;
	m->gpu_few_value_ns = ((one - call) * 1e6 - rows * m->gpu_few_pair_ns) / (rows * CAL_DIMS);
	if (m->gpu_few_value_ns < 0)
		m->gpu_few_value_ns = 0;
	/* tiles: t = Q R D term + Q R pair, at D = 64 and D = 8 */
	m->gpu_term_ns = (t64 - t8) * 1e6 / (tq * trows * (CAL_DIMS - CAL_NARROW));
	if (m->gpu_term_ns < 0)
		m->gpu_term_ns = 0;
	m->gpu_pair_ns = ((t8 - tcall) * 1e6 - tq * trows * CAL_NARROW * m->gpu_term_ns) /
		(tq * trows);
	if (m->gpu_pair_ns < 0)
		m->gpu_pair_ns = 0;
	/* tiles of few queries: what a candidate costs beyond its terms */
	m->gpu_tile_value_ns = ((tsmall - tcall) * 1e6 -
							64 * rows * (CAL_DIMS * m->gpu_term_ns + m->gpu_pair_ns)) /
		(rows * CAL_DIMS);
	if (m->gpu_tile_value_ns < 0)
		m->gpu_tile_value_ns = 0;
	if (twide > tcall)
	{
		/* the float64 tiles against the float32 terms of the same shape */
		double		narrow = tq * CAL_SMALL_ROWS *
			(CAL_DIMS * m->gpu_term_ns + m->gpu_pair_ns) / 1e6;

		if (narrow > 0)
			m->gpu_wide = (twide - tcall - CAL_SMALL_ROWS * CAL_DIMS * 8.0 /
						   (m->copy_gbps * 1e6)) / narrow;
		if (m->gpu_wide < 1)
			m->gpu_wide = 1;
	}
	if (scratch != NULL && scratch_bytes >= CAL_COPY_BYTES)
	{
		ctx = *r->ctx;
		ctx.transfer_ms = 0;
		if (odp_resident_make(&ctx, CAL_TAG, ctx.gpu_id, scratch, CAL_COPY_BYTES) == ODP_OK)
		{
			odp_resident_drop(CAL_TAG);
			if (ctx.transfer_ms > 0)
				m->copy_gbps = CAL_COPY_BYTES / (ctx.transfer_ms * 1e6);
		}

		/*
		 * The fixed cost's call again, its rows in the page-locked host
		 * memory (read only: whatever values it holds): what it costs
		 * beyond the copy (device memory for the rows, the copy's wait).
		 */
		{
			const float *own = r->rows;
			double		host;

			r->rows = (const float *) scratch;
			r->reps = CAL_FIXED_REPS;
			host = cal_time(r, 1, CAL_HOST_CALL_ROWS, CAL_HOST_CALL_DIMS, false, 1);
			r->reps = CAL_REPS;
			r->rows = own;
			if (host > 0 && m->copy_gbps > 0)
			{
				m->gpu_host_call_ms = host - call - CAL_HOST_CALL_ROWS * CAL_HOST_CALL_DIMS *
					sizeof(float) / (m->copy_gbps * 1e6);
				if (m->gpu_host_call_ms < 0)
					m->gpu_host_call_ms = 0;
			}
		}
	}
	return true;
}

/* See odp_cost.h. */
OdpStatus
odp_knn_cost_calibrate(OdpContext *ctx, OdpKnnCostModel *m,
					   const void *scratch, size_t scratch_bytes)
{
	OdpKnnCostModel out;
	CalRun		r;
	OdpContext	run = *ctx;
	bool		gpu = ctx->device == ODP_DEVICE_GPU;
	size_t		floats = (size_t) (gpu ? CAL_GPU_ROWS : CAL_BIG_ROWS) * CAL_DIMS;
	double		t0 = odp_now_ms();
	bool		ok;
	float	   *rows;
	double	   *rows64;

	odp_knn_cost_builtin(&out);
	*m = out;
	rows = malloc(sizeof(float) * floats);
	rows64 = malloc(sizeof(double) * CAL_SMALL_ROWS * CAL_DIMS);
	memset(&r, 0, sizeof(r));
	r.reps = CAL_REPS;
	r.dist = malloc(sizeof(double) * CAL_GPU_TILE_QUERIES * CAL_K);
	r.index = malloc(sizeof(int64_t) * CAL_GPU_TILE_QUERIES * CAL_K);
	if (rows == NULL || r.dist == NULL || r.index == NULL)
	{
		free(rows);
		free(rows64);
		free(r.dist);
		free(r.index);
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory to time the k-NN paths");
	}
	cal_fill(rows, floats);
	if (rows64 != NULL)
		for (size_t i = 0; i < (size_t) CAL_SMALL_ROWS * CAL_DIMS; i++)
			rows64[i] = rows[i];
	r.ctx = &run;
	r.rows = rows;
	r.rows64 = rows64;
	ok = cal_cpu(&r, &out);
	if (ok)
		out.source = ODP_COST_CALIBRATED_CPU;
	if (ok && gpu && cal_gpu(&r, &out, scratch, scratch_bytes))
		out.source = ODP_COST_CALIBRATED;
	free(rows);
	free(rows64);
	free(r.dist);
	free(r.index);
	out.calibrate_ms = odp_now_ms() - t0;
	/* the CPU's terms serve even where the GPU's could not be timed */
	if (ok)
		*m = out;
	if (!ok || (gpu && out.source != ODP_COST_CALIBRATED))
		return odp_fail(ctx, ODP_ERR_INTERNAL, "timing the k-NN paths failed: %s",
						run.message);
	return ODP_OK;
}
