/*-------------------------------------------------------------------------
 *
 * skyline.c
 *	  Skyline and k-skyband (odp_compute_skyline): argument checks and
 *	  dispatch to the CPU path or to the GPU path spread over the call's
 *	  devices.  Both start from the presort of skyline_presort.c.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/skyline/skyline.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "skyline/skyline_internal.h"

/* See odp_skyline.h. */
OdpStatus
odp_compute_skyline(OdpContext *ctx, const OdpSkylineProblem *p,
					int32_t *dominated_by, OdpSkylineStats *stats)
{
	const OdpMatrix64 *m;
	OdpSkylineStats local;
	OdpStatus	status;

	if (ctx == NULL)
		return ODP_ERR_INVALID_ARGUMENT;
	ctx->message[0] = '\0';
	ctx->transfer_ms = ctx->compute_ms = 0.0;
	ctx->chunks = 0;
	if (p == NULL || p->points == NULL || p->points->data == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing rows");
	if (dominated_by == NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT, "missing output buffer");
	m = p->points;
	if (m->rows < 1 || m->rows > ODP_MAX_ROWS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%lld rows: the skyline needs 1 .. %lld",
						(long long) m->rows, (long long) ODP_MAX_ROWS);
	if (m->dims < 1 || m->dims > ODP_MAX_DIMS)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"%d features: the skyline needs 1 .. %d",
						(int) m->dims, ODP_MAX_DIMS);
	if (m->missing != NULL)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"the skyline needs every value (no missing values)");
	if (p->band < 1)
		return odp_fail(ctx, ODP_ERR_INVALID_ARGUMENT,
						"band must be at least 1, not %d", (int) p->band);

	memset(&local, 0, sizeof(local));
	if (ctx->device == ODP_DEVICE_GPU)
		status = odp_split_skyline(ctx, p, dominated_by, &local);
	else
		status = odp_cpu_skyline(ctx, p, dominated_by, &local);
	if (status == ODP_OK)
	{
		local.members = 0;
		for (int64_t i = 0; i < m->rows; i++)
			local.members += dominated_by[i] < p->band;
	}
	if (stats != NULL)
		*stats = local;
	return status;
}
