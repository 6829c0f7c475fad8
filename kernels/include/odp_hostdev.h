/*-------------------------------------------------------------------------
 *
 * odp_hostdev.h
 *	  ODP_HD: marks a helper that the C compiler and nvcc both compile,
 *	  so that the CPU and GPU paths share one definition of it.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/include/odp_hostdev.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_HOSTDEV_H
#define ODP_HOSTDEV_H

#ifdef __CUDACC__
#define ODP_HD static __host__ __device__ __forceinline__
#else
#define ODP_HD static inline
#endif

#endif							/* ODP_HOSTDEV_H */
