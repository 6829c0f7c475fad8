/*-------------------------------------------------------------------------
 *
 * test_pieces.c
 *	  Engine tests of the device copies made piece by piece
 *	  (odp_piece_copies_*, include/odp_resident.h), as the GPU service
 *	  makes them of an input streaming through its page-locked ring: the
 *	  pieces pass through a small page-locked "ring" here, a k-NN join then
 *	  reads the copy on the device, and its rows are the reference's.  The
 *	  host buffer is overwritten before the join, so equal rows show that
 *	  the device copy, not the host buffer, was read.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/test_pieces.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/odp_knn.h"
#include "include/odp_resident.h"
#include "test_util.h"

#define RING_BYTES	((size_t) 256 * 1024)

/*
 * Sends bytes at src through ring in pieces of half of it, alternating
 * halves, into the copies and dst, as the service's engine thread does;
 * returns how many device copies the call may list (views).
 */
static int
send_in_pieces(OdpPieceCopies *pc, char *ring, const char *src, char *dst, size_t bytes,
			   OdpResidentArray *views)
{
	size_t		half = RING_BYTES / 2;

	for (size_t done = 0, p = 0; done < bytes; p++)
	{
		size_t		n = bytes - done < half ? bytes - done : half;
		char	   *at = ring + (p % 2) * half;

		memcpy(at, src + done, n);
		if (!odp_piece_copies_add(pc, done, at, n))
			return 0;
		memcpy(dst + done, at, n);
		if (!odp_piece_copies_wait(pc))
			return 0;
		done += n;
	}
	return odp_piece_copies_views(pc, dst, views);
}

/* Every piece copy test; skipped without a GPU. */
void
run_piece_copy_tests(void)
{
	const int64_t nq = 300,
				nc = 60000;
	const int	dims = 16,
				k = 10;
	const size_t bytes = sizeof(float) * (size_t) nc * dims;
	OdpContext	ctx;
	char	   *ring;
	float	   *cx,
			   *qx,
			   *host,
			   *other,
			   *rd;
	int64_t    *ri,
			   *ix;
	double	   *d;
	OdpPieceCopies *pc;
	OdpResidentArray views[ODP_MAX_GPUS];
	int			nviews;
	int64_t		bad = 0;
	int			ordinal = 0;

	if (!gpu_ok)
	{
		printf("# piece copies: skipped, no GPU (%s)\n", gpu_reason);
		return;
	}
	ctx = make_ctx(ODP_DEVICE_GPU);
	ring = aligned_alloc(4096, RING_BYTES);
	check(ring != NULL && odp_gpu_host_rings(&ctx, ring, RING_BYTES) == ODP_OK,
		  "piece copies: a ring of 256 kB is page-locked (%s)", ctx.message);
	/* memory that is not page-locked gives no copies */
	other = make_data(GEN_UNIFORM, 1024, 1);
	check(odp_piece_copies_begin(&ordinal, 1, bytes, other, 4096) == NULL,
		  "piece copies: none from pageable memory");
	free(other);

	cx = make_data(GEN_UNIFORM, nc, dims);
	qx = make_data(GEN_UNIFORM, nq, dims);
	rd = xmalloc(sizeof(float) * (size_t) nq * k);
	ri = xmalloc(sizeof(int64_t) * (size_t) nq * k);
	{
		OdpMatrix	q = {qx, nq, dims};
		OdpMatrix	c = {cx, nc, dims};

		reference_knn(&q, &c, ODP_METRIC_EUCLIDEAN, k, false, rd, ri);
	}
	host = xmalloc(bytes);
	pc = odp_piece_copies_begin(&ordinal, 1, bytes, ring, RING_BYTES);
	check(pc != NULL, "piece copies: a copy of %zu bytes starts on device 0", bytes);
	if (pc == NULL)
		return;
	nviews = send_in_pieces(pc, ring, (const char *) cx, (char *) host, bytes, views);
	check(nviews == 1 && memcmp(host, cx, bytes) == 0,
		  "piece copies: %zu bytes arrive in %zu pieces, on the host and on the device",
		  bytes, (bytes + RING_BYTES / 2 - 1) / (RING_BYTES / 2));

	/* other values in the host buffer: the join must read the device's */
	other = make_data(GEN_UNIFORM, nc, dims);
	memcpy(host, other, bytes);
	free(other);
	d = xmalloc(sizeof(double) * (size_t) nq * k);
	ix = xmalloc(sizeof(int64_t) * (size_t) nq * k);
	ctx.resident = views;
	ctx.nresident = nviews;
	{
		OdpMatrix	q = {qx, nq, dims};
		OdpMatrix	c = {host, nc, dims};
		OdpStatus	st = odp_compute_knn(&ctx, &q, &c, ODP_METRIC_EUCLIDEAN, k, false, d, ix);

		for (int64_t t = 0; st == ODP_OK && t < nq * k; t++)
		{
			const double wide = rd[t];

			if (ix[t] != ri[t] || memcmp(&d[t], &wide, sizeof(double)) != 0)
				bad++;
		}
		check(st == ODP_OK && bad == 0,
			  "piece copies: a k-NN join of %lld queries reads the device copy, not the host buffer "
			  "(%lld of %lld rows differ; %s)", (long long) nq, (long long) bad,
			  (long long) (nq * k), st == ODP_OK ? "ok" : ctx.message);
	}
	odp_piece_copies_end(pc);
	free(d);
	free(ix);
	free(host);
	free(cx);
	free(qx);
	free(rd);
	free(ri);
	/* the ring stays page-locked for the process's life, as the service's */
}
