/*-------------------------------------------------------------------------
 *
 * intervals_match.c
 *	  Region matching on one device (odp_iv_match): the chunk driver both
 *	  paths run under (see intervals_internal.h for the algorithm), after
 *	  the preparation of intervals_prep.c.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/intervals/intervals_match.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "intervals/intervals_internal.h"

/* See intervals_internal.h. */
int64_t		odp_iv_test_capacity = 0;
int64_t		odp_iv_test_rows = 0;

/* Pairs handed to the caller per call. */
#define IV_EMIT_PAIRS	65536

/* ---- the chunk driver ---- */

/* The state of one matching call. */
typedef struct IvDriver
{
	OdpContext *ctx;
	OdpIvPrep  *prep;
	OdpIvBackend *be;
	bool		count_only;
	int64_t		b_rows;			/* live B rows per load */
	int64_t		loaded0;		/* the loaded B range, or -1 */
	int64_t		loaded1;
	OdpIntervalPairFn emit;
	void	   *emit_arg;
	int64_t		total;			/* pairs counted or emitted */
	int64_t		candidates;
	int32_t		runs;
	int64_t    *ea;				/* IV_EMIT_PAIRS each: rows handed over */
	int64_t    *eb;
	int64_t		en;
	double		emit_ms;		/* spent in the caller's receiver */
} IvDriver;

/* Hands the buffered pairs to the caller; false when it stopped us. */
static OdpStatus
iv_flush(IvDriver *dr)
{
	bool		go_on;

	if (dr->en == 0)
		return ODP_OK;
	go_on = dr->emit(dr->emit_arg, dr->ea, dr->eb, dr->en);
	if (!go_on)
		return odp_fail(dr->ctx, ODP_ERR_CANCELLED,
						"the receiver of the pairs asked to stop");
	dr->total += dr->en;
	dr->en = 0;
	if (odp_cancel_requested(dr->ctx))
		return odp_fail(dr->ctx, ODP_ERR_CANCELLED, "the matching was cancelled");
	return ODP_OK;
}

/*
 * Buffers the pairs of n sorted keys, as rows, flushing as the buffer
 * fills.  Its time, the receiver's included, is output, not compute.
 */
static OdpStatus
iv_emit_keys(IvDriver *dr, const uint64_t *keys, int64_t n)
{
	const int	bb = dr->prep->b_bits;
	const uint64_t bmask = ((uint64_t) 1 << bb) - 1;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	for (int64_t i = 0; i < n; i++)
	{
		dr->ea[dr->en] = odp_iv_live_row(&dr->prep->a, (int64_t) (keys[i] >> bb));
		dr->eb[dr->en] = odp_iv_live_row(&dr->prep->b, (int64_t) (keys[i] & bmask));
		if (++dr->en == IV_EMIT_PAIRS && (status = iv_flush(dr)) != ODP_OK)
			break;
	}
	dr->emit_ms += odp_now_ms() - t0;
	return status;
}

/* Loads live B positions [b0, b1) unless they are loaded already. */
static OdpStatus
iv_load(IvDriver *dr, int64_t b0, int64_t b1)
{
	OdpStatus	status;

	if (dr->loaded0 == b0 && dr->loaded1 == b1)
		return ODP_OK;
	dr->loaded0 = dr->loaded1 = -1;
	if ((status = dr->be->load(dr->be->self, b0, b1)) != ODP_OK)
		return status;
	dr->loaded0 = b0;
	dr->loaded1 = b1;
	return ODP_OK;
}

/* A piece of one chunk of A's pairs: the sorted keys of one B range. */
typedef struct IvPiece
{
	uint64_t   *keys;
	int64_t		n;
	int64_t		at;				/* merge position */
} IvPiece;

/* Copies the kept keys of the last run into a new piece. */
static OdpStatus
iv_take_piece(IvDriver *dr, int64_t n, IvPiece *piece)
{
	OdpStatus	status;

	piece->n = n;
	piece->at = 0;
	piece->keys = malloc(sizeof(uint64_t) * (size_t) (n > 0 ? n : 1));
	if (piece->keys == NULL)
		return odp_fail(dr->ctx, ODP_ERR_HOST_OOM,
						"out of host memory for %lld pairs", (long long) n);
	for (int64_t off = 0; off < n; off += dr->be->block)
	{
		const uint64_t *k;
		int64_t		m = n - off < dr->be->block ? n - off : dr->be->block;

		if ((status = dr->be->keys(dr->be->self, off, m, &k)) != ODP_OK)
			return status;
		memcpy(piece->keys + off, k, sizeof(uint64_t) * (size_t) m);
	}
	return ODP_OK;
}

/*
 * Emits pieces (sorted keys of consecutive B ranges) merged by a: for
 * each a, its pairs of piece 0, then of piece 1, and so on, which is
 * (a, b) order as the ranges ascend.
 */
static OdpStatus
iv_emit_merged(IvDriver *dr, IvPiece *pieces, int npieces)
{
	const int	bb = dr->prep->b_bits;
	OdpStatus	status;

	for (;;)
	{
		uint64_t	a = UINT64_MAX;

		for (int j = 0; j < npieces; j++)
			if (pieces[j].at < pieces[j].n && (pieces[j].keys[pieces[j].at] >> bb) < a)
				a = pieces[j].keys[pieces[j].at] >> bb;
		if (a == UINT64_MAX)
			return ODP_OK;
		for (int j = 0; j < npieces; j++)
		{
			int64_t		e = pieces[j].at;

			while (e < pieces[j].n && (pieces[j].keys[e] >> bb) == a)
				e++;
			if ((status = iv_emit_keys(dr, pieces[j].keys + pieces[j].at,
									   e - pieces[j].at)) != ODP_OK)
				return status;
			pieces[j].at = e;
		}
	}
}

/* Frees the pieces' keys and the array. */
static void
iv_free_pieces(IvPiece *pieces, int npieces)
{
	if (pieces == NULL)
		return;
	for (int q = 0; q < npieces; q++)
		free(pieces[q].keys);
	free(pieces);
}

/*
 * Counts or emits the pairs of live A positions [a0, a1) against live B
 * positions [b0, b1), loaded b_step at a time, with scheme.  A run that
 * overflows is retried on halves of the A range, or, for one region of
 * A, with loads of half the size.
 */
static OdpStatus
iv_process(IvDriver *dr, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
		   int64_t b_step, OdpIvScheme scheme)
{
	int64_t		nloads = (b1 - b0 + b_step - 1) / b_step;
	IvPiece    *pieces = NULL;
	int			npieces = 0;
	OdpStatus	status = ODP_OK;

	if (!dr->count_only && nloads > 1)
	{
		pieces = calloc((size_t) nloads, sizeof(IvPiece));
		if (pieces == NULL)
			return odp_fail(dr->ctx, ODP_ERR_HOST_OOM, "out of host memory");
	}
	for (int64_t j = 0; j < nloads; j++)
	{
		int64_t		l0 = b0 + j * b_step;
		int64_t		l1 = l0 + b_step < b1 ? l0 + b_step : b1;
		OdpIvRun	run;
		int64_t		found = 0,
					cands = 0;

		/* one set in ranges: a B range wholly before the A range pairs nothing */
		if (scheme == ODP_IV_SELF_CROSS && l1 - 1 <= a0)
			continue;
		if ((status = iv_load(dr, l0, l1)) != ODP_OK)
			break;
		run.a0 = a0;
		run.a1 = a1;
		run.scheme = scheme;
		run.count_only = dr->count_only;
		run.capacity = dr->be->capacity;
		if ((status = dr->be->run(dr->be->self, &run, &found, &cands)) != ODP_OK)
			break;
		dr->runs++;
		dr->ctx->chunks++;
		if (odp_cancel_requested(dr->ctx))
		{
			status = odp_fail(dr->ctx, ODP_ERR_CANCELLED, "the matching was cancelled");
			break;
		}
		if (!dr->count_only && found > run.capacity)
		{
			/* too many pairs for one run: start this range again, smaller */
			OdpIvScheme sub = scheme == ODP_IV_SELF ? ODP_IV_SELF_CROSS : scheme;

			iv_free_pieces(pieces, npieces);
			if (a1 - a0 > 1)
			{
				int64_t		mid = a0 + (a1 - a0) / 2;

				if ((status = iv_process(dr, a0, mid, b0, b1, b_step, sub)) != ODP_OK)
					return status;
				return iv_process(dr, mid, a1, b0, b1, b_step, sub);
			}
			if (l1 - l0 < 2)
				return odp_fail(dr->ctx, ODP_ERR_INTERNAL,
								"one pair overflows a run of capacity %lld",
								(long long) run.capacity);
			return iv_process(dr, a0, a1, b0, b1, (l1 - l0 + 1) / 2, sub);
		}
		dr->candidates += cands;
		if (dr->count_only)
			dr->total += found;
		else if (pieces != NULL)
		{
			if ((status = iv_take_piece(dr, found, &pieces[npieces++])) != ODP_OK)
				break;
		}
		else
		{
			/* one load: stream the kept keys out */
			for (int64_t off = 0; off < found && status == ODP_OK; off += dr->be->block)
			{
				const uint64_t *k;
				int64_t		m = found - off < dr->be->block ? found - off : dr->be->block;

				if ((status = dr->be->keys(dr->be->self, off, m, &k)) == ODP_OK)
					status = iv_emit_keys(dr, k, m);
			}
			if (status != ODP_OK)
				break;
		}
	}
	if (status == ODP_OK && pieces != NULL)
		status = iv_emit_merged(dr, pieces, npieces);
	iv_free_pieces(pieces, npieces);
	return status;
}

/* Runs the whole matching under backend be. */
static OdpStatus
iv_drive(IvDriver *dr)
{
	const OdpIvPrep *prep = dr->prep;
	OdpIvBackend *be = dr->be;
	int64_t		na = prep->a.nlive;
	int64_t		nb = prep->b.nlive;
	int64_t		a_rows = be->a_rows_max;
	OdpStatus	status;
	OdpIvScheme scheme;

	if (odp_iv_test_rows > 0)
	{
		a_rows = a_rows < odp_iv_test_rows ? a_rows : odp_iv_test_rows;
		be->b_rows_max = be->b_rows_max < odp_iv_test_rows ? be->b_rows_max : odp_iv_test_rows;
	}
	if (odp_iv_test_capacity > 0 && be->capacity > odp_iv_test_capacity)
		be->capacity = odp_iv_test_capacity;
	dr->b_rows = be->b_rows_max > 0 ? be->b_rows_max : 1;
	if (!dr->count_only && prep->pair_share > 0.0)
	{
		/*
		 * Ranges of A whose pairs the sample expects to fill half a run, so
		 * that few runs find more than they can hold and are done again.
		 */
		double		per_row = prep->pair_share * (double) nb;
		double		fit = (double) be->capacity / (2.0 * per_row);

		if (fit < (double) a_rows)
			a_rows = (int64_t) fit;
	}
	if (a_rows < 1)
		a_rows = 1;
	if (prep->self)
		scheme = (na <= a_rows && nb <= dr->b_rows) ? ODP_IV_SELF : ODP_IV_SELF_CROSS;
	else
		scheme = ODP_IV_CROSS;
	for (int64_t a0 = 0; a0 < na; a0 += a_rows)
	{
		int64_t		a1 = a0 + a_rows < na ? a0 + a_rows : na;

		if ((status = iv_process(dr, a0, a1, 0, nb, dr->b_rows, scheme)) != ODP_OK)
			return status;
	}
	if (!dr->count_only)
	{
		double		t0 = odp_now_ms();

		status = iv_flush(dr);
		dr->emit_ms += odp_now_ms() - t0;
		return status;
	}
	return ODP_OK;
}

/* See intervals_internal.h. */
OdpStatus
odp_iv_match(OdpContext *ctx, const OdpIntervalProblem *p, bool count_only,
			 OdpIntervalPairFn emit, void *emit_arg, int64_t *pairs,
			 OdpIntervalStats *stats)
{
	OdpIvPrep	prep;
	OdpIvBackend be;
	IvDriver	dr;
	OdpIntervalStats local;
	OdpStatus	status;
	double		t0 = odp_now_ms();
	double		t_setup;
	double		transfer0;

	memset(&local, 0, sizeof(local));
	memset(&be, 0, sizeof(be));
	memset(&dr, 0, sizeof(dr));
	*pairs = 0;
	if ((status = odp_iv_prepare(ctx, p, &prep)) != ODP_OK)
		return status;
	local.prep_ms = odp_now_ms() - t0;
	local.sweep_dim = prep.sweep;
	local.empty = prep.empty;
	if (prep.a.nlive == 0 || prep.b.nlive == 0 || (prep.self && prep.a.nlive < 2))
		goto done;

	t_setup = odp_now_ms();
	transfer0 = ctx->transfer_ms;
	if (ctx->device == ODP_DEVICE_GPU)
		status = odp_gpu_iv_backend(ctx, &prep, &be);
	else
		status = odp_cpu_iv_backend(ctx, &prep, &be);
	local.setup_ms = odp_now_ms() - t_setup - (ctx->transfer_ms - transfer0);
	if (status != ODP_OK)
		goto done;
	dr.ctx = ctx;
	dr.prep = &prep;
	dr.be = &be;
	dr.count_only = count_only;
	dr.loaded0 = dr.loaded1 = -1;
	dr.emit = emit;
	dr.emit_arg = emit_arg;
	if (!count_only)
	{
		dr.ea = malloc(sizeof(int64_t) * IV_EMIT_PAIRS);
		dr.eb = malloc(sizeof(int64_t) * IV_EMIT_PAIRS);
		if (dr.ea == NULL || dr.eb == NULL)
			status = odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory");
	}
	if (status == ODP_OK)
		status = iv_drive(&dr);
	t_setup = odp_now_ms();
	transfer0 = ctx->transfer_ms;
	be.release(be.self);
	local.setup_ms += odp_now_ms() - t_setup - (ctx->transfer_ms - transfer0);
	free(dr.ea);
	free(dr.eb);
	local.pairs = dr.total;
	local.candidates = dr.candidates;
	local.runs = dr.runs;
	local.sort_ms = be.sort_ms;
	local.match_ms = be.match_ms;

done:
	odp_iv_prep_free(&prep);
	/* the receiver's time is the caller's output, not the engine's */
	ctx->compute_ms = odp_now_ms() - t0 - ctx->transfer_ms - dr.emit_ms;
	if (status == ODP_OK)
		*pairs = local.pairs;
	if (stats != NULL)
		*stats = local;
	return status;
}
