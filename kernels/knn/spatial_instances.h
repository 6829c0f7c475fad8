/*-------------------------------------------------------------------------
 *
 * spatial_instances.h
 *	  The two instances of spatial_body.h, one place for both paths: float32
 *	  rows (spatial32_) measured by odp_distance and float64 rows
 *	  (spatial64_) by odp_distance64, so that the CPU and the GPU search
 *	  with the same distance.  With ODP_SPATIAL_CPU defined, each instance
 *	  also gets the CPU driver (spatial_cpu_body.h).
 *
 * Include it once per file, after spatial.h and odp_distance.h.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial_instances.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SPATIAL_INSTANCES_H
#define ODP_SPATIAL_INSTANCES_H

#define ODP_SP_T float
#define ODP_SP_NAME(x) spatial32_##x
#define ODP_SP_DIST(m, a, b, n) odp_distance((m), (a), (b), (n), 0.0f, 0.0f)
#include "knn/spatial_body.h"
#ifdef ODP_SPATIAL_CPU
#define ODP_SPC_ROWS(m) ((m)->data)
#define ODP_SPC_SUM odp_sum_ascending
#include "knn/spatial_cpu_body.h"
#endif
#undef ODP_SP_T
#undef ODP_SP_NAME
#undef ODP_SP_DIST

#define ODP_SP_T double
#define ODP_SP_NAME(x) spatial64_##x
#define ODP_SP_DIST(m, a, b, n) odp_distance64((m), (a), (b), (n), 0.0, 0.0)
#include "knn/spatial_body.h"
#ifdef ODP_SPATIAL_CPU
#define ODP_SPC_ROWS(m) ((m)->data64)
#define ODP_SPC_SUM odp_sum_ascending64
#include "knn/spatial_cpu_body.h"
#endif
#undef ODP_SP_T
#undef ODP_SP_NAME
#undef ODP_SP_DIST

#endif							/* ODP_SPATIAL_INSTANCES_H */
