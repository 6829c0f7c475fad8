/*-------------------------------------------------------------------------
 *
 * spatial_cpu.c
 *	  The spatial path on the CPU (spatial.h): the tree built on the
 *	  caller's thread, the queries searched on the engine's threads.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial_cpu.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "common/host_threads.h"
#include "include/odp_distance.h"
#include "knn/spatial.h"

/* Queries per task of the search. */
#define ODP_SPATIAL_CPU_BLOCK 1024
/*
 * Subtrees the build's threads take whole, once the levels above them are
 * split (each level's nodes on threads too): enough for the threads to
 * share the rest evenly.
 */
#define ODP_SPATIAL_CPU_SUBTREES 64

#define ODP_SPATIAL_CPU
#include "knn/spatial_instances.h"

/* See spatial.h. */
OdpStatus
odp_cpu_spatial_knn(OdpContext *ctx, const OdpMatrix *queries,
					const OdpMatrix *cands, OdpMetric metric, int32_t k,
					bool self_join, const OdpSpatialOut *out)
{
	if (odp_matrix_is64(cands))
		return spatial64_cpu_run(ctx, queries, cands, metric, k, self_join, out);
	return spatial32_cpu_run(ctx, queries, cands, metric, k, self_join, out);
}
