/*-------------------------------------------------------------------------
 *
 * spatial.h
 *	  The spatial path of the distance analytics on low-dimensional rows:
 *	  exact k nearest neighbours through a tree of bounding boxes over the
 *	  candidates, on the CPU (spatial_cpu.c) and the GPU (spatial_gpu.cu).
 *
 * The tree.  A k-d tree in the shape of a heap: the leaves are runs of
 * ODP_SPATIAL_LEAF consecutive rows, padded with empty ones to a power of
 * two, and node v's children are 2v + 1 and 2v + 2, so a node's rows are
 * a fixed range of positions.  The rows are put in place level by level:
 * every node's rows split at the position of its children's boundary
 * along the level's dimension (dimensions in turn), the smaller ones to
 * the left, so that siblings' boxes do not overlap.  On the GPU a level
 * is one CUB radix sort of (node, value) over all rows; on the CPU a
 * selection per node.  Each node holds its box, the smallest and largest
 * value of each dimension among its rows, and the smallest row index
 * among them.  The split only makes the boxes small; no result depends on
 * it.  A join's queries run in the Morton order of their coordinates
 * (quantised in the frame of the candidates' box) on the GPU, so that a
 * warp's queries search the same boxes.
 *
 * Exactness.  A query's bound for a box is the metric's distance
 * (odp_distance.h, the same function and operations as for a row) from
 * the query to the point of the box nearest it, the query clamped into
 * the box.  Per dimension, the clamped point's difference is no larger
 * than any row's in the box, and every rounded operation on the way
 * (subtract, square or absolute value, add or max, square root) is
 * monotone, so the bound never exceeds the computed distance of any row
 * in the box.  A node is skipped only when its bound is larger than the
 * k-th best distance, or equal to it with every row index in the node
 * larger than the k-th best's: no row in it can enter the list, ranked by
 * distance, ties by smaller index, as every path ranks.  So the lists are
 * the brute force's, row for row, with the same distances bit for bit,
 * and scores sum the same floats in the same order.  Ties by the million
 * (copies of one point, integer lattices) cost little: the index bound
 * skips the copies a list no longer needs.
 *
 * Which metrics.  The four whose bound above holds: euclidean, squared
 * euclidean, manhattan and chebyshev.  Cosine and the inner product keep
 * the brute force.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SPATIAL_H
#define ODP_SPATIAL_H

#include <math.h>

#include "include/odp_engine.h"
#include "include/odp_hostdev.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define ODP_SPATIAL_MAX_DIMS	3	/* dimensions the path takes */
#define ODP_SPATIAL_MAX_K		128 /* neighbours per list it keeps */
#define ODP_SPATIAL_LEAF		16	/* rows per leaf */
#define ODP_SPATIAL_STACK		64	/* pending nodes of one search (depth
									 * <= 27 holds at most depth + 1) */
#define ODP_SPATIAL_EMPTY		UINT32_MAX	/* smallest index of an empty
											 * node */

/*
 * Auto's rule.  The tree was faster than the brute force at every size
 * measured, from 512 rows, in 1 to 3 dimensions and at k = 5 and 50: on
 * the CPU from 300 rows on (2 cores, 2026-11-28: 3x at 512 rows, 16x at
 * 8,192, up to k = 128), on the GPU 0.4-2.4 ms against 3.8-11.8 ms from
 * 512 to 32,768 rows (H200, 2026-11-29, engine calls).  A handful of
 * queries against a table is cheaper without building a tree for them.
 */
#define ODP_SPATIAL_AUTO_MIN_ROWS		256
#define ODP_SPATIAL_AUTO_MIN_QUERIES	256

/*
 * Auto's check after the tree is built, on a call whose brute force costs
 * enough distances to be worth it (queries x rows >= PROBE_MIN_WORK, and
 * PROBE_MIN_QUERIES queries, so that the check itself stays small): the
 * PROBE_QUERIES queries spread evenly over the call's order are searched
 * first, and where they average more than rows / PROBE_RATIO distances the
 * path declines and the brute force runs the call.  A distance of the
 * search costs about 7 of the brute force's on 2 CPU cores and 45 on the
 * H200 (2026-11-29, ADBench skin, k = 50: the tree's steps and the lists
 * around it), so near that ratio the tree stops winning.  Queries in the middle of a ring of rows, every
 * box about as near as their k-th neighbour, are such a call.  A self
 * join's queries are its rows, whose neighbours lie near them in any
 * arrangement of 1 to 3 dimensions; top outliers under auto take the tree
 * without the probe, and fall back to auto's other methods only where the
 * tree does not fit the GPU.
 */
#define ODP_SPATIAL_PROBE_QUERIES		64
#define ODP_SPATIAL_PROBE_MIN_QUERIES	4096
#define ODP_SPATIAL_PROBE_MIN_WORK		67108864.0
#define ODP_SPATIAL_PROBE_RATIO			32

/* Whether auto probes a call of nq queries over n rows first. */
ODP_HD bool
odp_spatial_probe_wanted(OdpSpatialMode mode, int64_t nq, int64_t n)
{
	return mode == ODP_SPATIAL_AUTO && nq >= ODP_SPATIAL_PROBE_MIN_QUERIES &&
		(double) nq * (double) n >= ODP_SPATIAL_PROBE_MIN_WORK;
}

/* The position, in the call's order of nq queries, of probe query i. */
ODP_HD int64_t
odp_spatial_probe_query(int i, int64_t nq)
{
	return (int64_t) i * (nq / ODP_SPATIAL_PROBE_QUERIES);
}

/* Whether the probe's evals distances over n rows decline the path. */
ODP_HD bool
odp_spatial_probe_declines(int64_t evals, int64_t n)
{
	return evals > ODP_SPATIAL_PROBE_QUERIES * (n / ODP_SPATIAL_PROBE_RATIO);
}

/*
 * What a spatial search writes: a list per query (dist and index, rows x
 * k, best first) or a score per query (the sum of its list, ascending).
 */
typedef struct OdpSpatialOut
{
	double	   *dist;			/* or NULL */
	int64_t    *index;			/* with dist */
	double	   *scores;			/* or NULL */
} OdpSpatialOut;

/* The box frame queries are quantised in for their Morton codes. */
typedef struct OdpSpatialFrame
{
	int32_t		dims;
	double		lo[ODP_SPATIAL_MAX_DIMS];	/* halves of the box's bounds */
	double		scale[ODP_SPATIAL_MAX_DIMS];	/* steps per unit */
} OdpSpatialFrame;

/*
 * Whether the spatial path takes this call: on ctx->spatial, the metric,
 * the dimensions and k, and under auto the sizes.
 */
extern bool odp_spatial_chosen(const OdpContext *ctx, OdpMetric metric,
							   int32_t dims, int64_t queries, int64_t cands,
							   int32_t k);

/* Whether the spatial path can run the call at all (method => 'spatial'). */
extern bool odp_spatial_possible(OdpMetric metric, int32_t dims, int32_t k);

/*
 * Exact k-NN of queries among cands (self_join: the same matrix, each row
 * skipping itself) on ctx->device, into out; arguments checked by the
 * caller.  Sets ctx->spatial_used and ctx->spatial_distances.  Under auto
 * the probe above may decline the call: ODP_OK with ctx->spatial_used 0
 * and nothing written, for the caller's brute force to run it.
 */
extern OdpStatus odp_spatial_knn(OdpContext *ctx, const OdpMatrix *queries,
								 const OdpMatrix *cands, OdpMetric metric,
								 int32_t k, bool self_join,
								 const OdpSpatialOut *out);

/*
 * Whether the caller runs the brute force after odp_spatial_knn returned
 * status: auto's probe declined the call, or, under auto, the tree did not
 * fit the GPU's budget (the brute force works in chunks).
 */
ODP_HD bool
odp_spatial_gave_way(const OdpContext *ctx, OdpStatus status)
{
	return (status == ODP_OK && !ctx->spatial_used) ||
		(status == ODP_ERR_GPU_OOM && ctx->spatial != ODP_SPATIAL_ON);
}

extern OdpStatus odp_cpu_spatial_knn(OdpContext *ctx, const OdpMatrix *queries,
									 const OdpMatrix *cands, OdpMetric metric,
									 int32_t k, bool self_join,
									 const OdpSpatialOut *out);
extern OdpStatus odp_gpu_spatial_knn(OdpContext *ctx, const OdpMatrix *queries,
									 const OdpMatrix *cands, OdpMetric metric,
									 int32_t k, bool self_join,
									 const OdpSpatialOut *out);

/* The frame of a box (lo and hi: its per-dimension bounds). */
ODP_HD void
odp_spatial_frame(OdpSpatialFrame *f, int32_t dims, const double *lo,
				  const double *hi)
{
	const double top = dims <= 2 ? 4294967295.0 : 2097151.0;

	f->dims = dims;
	for (int d = 0; d < ODP_SPATIAL_MAX_DIMS; d++)
	{
		double		extent = d < dims ? hi[d] * 0.5 - lo[d] * 0.5 : 0.0;

		f->lo[d] = d < dims ? lo[d] * 0.5 : 0.0;
		f->scale[d] = extent > 0.0 && isfinite(top / extent) ? top / extent : 0.0;
	}
}

/* Bits of a Morton code of dims dimensions. */
ODP_HD int
odp_spatial_key_bits(int dims)
{
	return dims == 1 ? 32 : (dims == 2 ? 64 : 63);
}

/* Spreads the low 32 bits of x to the even bits of the result. */
ODP_HD uint64_t
odp_spatial_spread2(uint64_t x)
{
	x &= 0xffffffffULL;
	x = (x | (x << 16)) & 0x0000ffff0000ffffULL;
	x = (x | (x << 8)) & 0x00ff00ff00ff00ffULL;
	x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0fULL;
	x = (x | (x << 2)) & 0x3333333333333333ULL;
	x = (x | (x << 1)) & 0x5555555555555555ULL;
	return x;
}

/* Spreads the low 21 bits of x to every third bit of the result. */
ODP_HD uint64_t
odp_spatial_spread3(uint64_t x)
{
	x &= 0x1fffffULL;
	x = (x | (x << 32)) & 0x1f00000000ffffULL;
	x = (x | (x << 16)) & 0x1f0000ff0000ffULL;
	x = (x | (x << 8)) & 0x100f00f00f00f00fULL;
	x = (x | (x << 4)) & 0x10c30c30c30c30c3ULL;
	x = (x | (x << 2)) & 0x1249249249249249ULL;
	return x;
}

/*
 * The quantised coordinate of value v in dimension d of frame f: steps
 * from the box's low bound, clamped to the code's range (a query outside
 * the box lands on its edge).  Halves keep the largest doubles finite.
 */
ODP_HD uint64_t
odp_spatial_step(const OdpSpatialFrame *f, int d, double v)
{
	const double top = f->dims == 1 ? 4294967295.0 : (f->dims == 2 ? 4294967295.0 : 2097151.0);
#ifdef __CUDA_ARCH__
	double		t = __dmul_rn(__dsub_rn(v * 0.5, f->lo[d]), f->scale[d]);
#else
	double		t = (v * 0.5 - f->lo[d]) * f->scale[d];
#endif

	if (!(t > 0.0))
		return 0;
	if (t >= top)
		return (uint64_t) top;
	return (uint64_t) t;
}

/* The Morton code of a row's values (as doubles) in frame f. */
ODP_HD uint64_t
odp_spatial_key(const OdpSpatialFrame *f, double x, double y, double z)
{
	switch (f->dims)
	{
		case 1:
			return odp_spatial_step(f, 0, x);
		case 2:
			return odp_spatial_spread2(odp_spatial_step(f, 0, x)) |
				(odp_spatial_spread2(odp_spatial_step(f, 1, y)) << 1);
		default:
			return odp_spatial_spread3(odp_spatial_step(f, 0, x)) |
				(odp_spatial_spread3(odp_spatial_step(f, 1, y)) << 1) |
				(odp_spatial_spread3(odp_spatial_step(f, 2, z)) << 2);
	}
}

/* Leaves of n rows, and the heap's first leaf (leaves padded to 2^j). */
ODP_HD int64_t
odp_spatial_leaves(int64_t n)
{
	return (n + ODP_SPATIAL_LEAF - 1) / ODP_SPATIAL_LEAF;
}

ODP_HD int64_t
odp_spatial_first_leaf(int64_t n)
{
	int64_t		p = 1;

	while (p < odp_spatial_leaves(n))
		p <<= 1;
	return p - 1;
}

#ifdef __cplusplus
}
#endif

#endif							/* ODP_SPATIAL_H */
