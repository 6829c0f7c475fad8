/*-------------------------------------------------------------------------
 *
 * spatial_body.h
 *	  The spatial path's tree and search (spatial.h) for one precision of
 *	  the rows, shared by the CPU (spatial_cpu.c) and the GPU
 *	  (spatial_gpu.cu): one definition of the boxes, the bound, the
 *	  pruning and the ranking, so both paths return the same lists.
 *
 * Include it with
 *
 *	  #define ODP_SP_T type				-- float, double
 *	  #define ODP_SP_NAME(x) name		-- the instance's name of x
 *	  #define ODP_SP_DIST(m, a, b, n)	-- odp_distance or odp_distance64,
 *										   norms 0 (no cosine here)
 *	  #include "knn/spatial_body.h"
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/spatial_body.h
 *
 *-------------------------------------------------------------------------
 */
#if !defined(ODP_SP_T) || !defined(ODP_SP_NAME) || !defined(ODP_SP_DIST)
#error "define the ODP_SP_ macros before including spatial_body.h"
#endif

/* A built tree (spatial.h), in host or device memory. */
typedef struct ODP_SP_NAME(Tree)
{
	int64_t		n;				/* rows */
	int32_t		dims;
	int64_t		first_leaf;		/* heap index of leaf 0 */
	const ODP_SP_T *pts;		/* n x dims, in tree order */
	const uint32_t *order;		/* tree position -> row index */
	const ODP_SP_T *lo;			/* nodes x dims */
	const ODP_SP_T *hi;
	const uint32_t *nmin;		/* nodes: smallest row index, or EMPTY */
} ODP_SP_NAME(Tree);

/* The box of leaf j (heap node first_leaf + j) from its rows. */
ODP_HD void
ODP_SP_NAME(leaf_box) (const ODP_SP_T *pts, const uint32_t *order, int64_t n,
					   int dims, int64_t first_leaf, int64_t j,
					   ODP_SP_T *lo, ODP_SP_T *hi, uint32_t *nmin)
{
	const int64_t v = first_leaf + j;
	const int64_t a = j * ODP_SPATIAL_LEAF;
	const int64_t b = a + ODP_SPATIAL_LEAF < n ? a + ODP_SPATIAL_LEAF : n;
	uint32_t	m;

	if (a >= n)
	{
		nmin[v] = ODP_SPATIAL_EMPTY;
		for (int d = 0; d < dims; d++)
			lo[v * dims + d] = hi[v * dims + d] = 0;
		return;
	}
	m = order[a];
	for (int d = 0; d < dims; d++)
		lo[v * dims + d] = hi[v * dims + d] = pts[a * dims + d];
	for (int64_t r = a + 1; r < b; r++)
	{
		for (int d = 0; d < dims; d++)
		{
			ODP_SP_T	x = pts[r * dims + d];

			if (x < lo[v * dims + d])
				lo[v * dims + d] = x;
			if (x > hi[v * dims + d])
				hi[v * dims + d] = x;
		}
		if (order[r] < m)
			m = order[r];
	}
	nmin[v] = m;
}

/* The box of inner node v from its two children's. */
ODP_HD void
ODP_SP_NAME(merge_box) (int dims, int64_t v, ODP_SP_T *lo, ODP_SP_T *hi,
						uint32_t *nmin)
{
	const int64_t l = 2 * v + 1;
	const int64_t r = l + 1;

	if (nmin[r] == ODP_SPATIAL_EMPTY || nmin[l] == ODP_SPATIAL_EMPTY)
	{
		/* padding is at the end: an empty left child has an empty sibling */
		const int64_t c = nmin[r] == ODP_SPATIAL_EMPTY ? l : r;

		nmin[v] = nmin[c];
		for (int d = 0; d < dims; d++)
		{
			lo[v * dims + d] = lo[c * dims + d];
			hi[v * dims + d] = hi[c * dims + d];
		}
		return;
	}
	nmin[v] = nmin[l] < nmin[r] ? nmin[l] : nmin[r];
	for (int d = 0; d < dims; d++)
	{
		lo[v * dims + d] = lo[l * dims + d] < lo[r * dims + d] ? lo[l * dims + d] : lo[r * dims + d];
		hi[v * dims + d] = hi[l * dims + d] > hi[r * dims + d] ? hi[l * dims + d] : hi[r * dims + d];
	}
}

/*
 * The distance from q to the nearest point of node v's box: q clamped
 * into the box, through the rows' own distance function.
 */
ODP_HD		ODP_SP_T
ODP_SP_NAME(bound) (const ODP_SP_NAME(Tree) *t, OdpMetric m, const ODP_SP_T *q,
					int64_t v)
{
	ODP_SP_T	c[ODP_SPATIAL_MAX_DIMS];
	const ODP_SP_T *lo = t->lo + v * t->dims;
	const ODP_SP_T *hi = t->hi + v * t->dims;

	for (int d = 0; d < t->dims; d++)
		c[d] = q[d] < lo[d] ? lo[d] : (q[d] > hi[d] ? hi[d] : q[d]);
	return ODP_SP_DIST(m, q, c, t->dims);
}

/* Whether (d, i) ranks before (e, j): smaller distance, ties by index. */
ODP_HD bool
ODP_SP_NAME(before) (ODP_SP_T d, uint32_t i, ODP_SP_T e, uint32_t j)
{
	return d < e || (d == e && i < j);
}

/*
 * Whether a node of bound b and smallest index nmin can hold no row that
 * enters a full list whose last entry is (kd, ki).
 */
ODP_HD bool
ODP_SP_NAME(skip) (ODP_SP_T b, uint32_t nmin, ODP_SP_T kd, uint32_t ki)
{
	return b > kd || (b == kd && nmin > ki);
}

/*
 * Offers leaf v's rows to the list (bd, bi, *cnt of k; skipping row
 * self): each enters at its rank, distance first, ties by smaller index.
 * Returns the distances computed.
 */
ODP_HD int64_t
ODP_SP_NAME(scan_leaf) (const ODP_SP_NAME(Tree) *t, OdpMetric m, const ODP_SP_T *q,
						int64_t self, int k, int64_t v, ODP_SP_T *bd, uint32_t *bi,
						int *cnt)
{
	const int	dims = t->dims;
	const int64_t a = (v - t->first_leaf) * ODP_SPATIAL_LEAF;
	const int64_t e = a + ODP_SPATIAL_LEAF < t->n ? a + ODP_SPATIAL_LEAF : t->n;
	int64_t		evals = 0;

	for (int64_t r = a; r < e; r++)
	{
		const uint32_t idx = t->order[r];
		ODP_SP_T	d;
		int			pos;

		if ((int64_t) idx == self)
			continue;
		d = ODP_SP_DIST(m, q, t->pts + r * dims, dims);
		evals++;
		if (*cnt < k)
			pos = (*cnt)++;
		else if (ODP_SP_NAME(before) (d, idx, bd[k - 1], bi[k - 1]))
			pos = k - 1;
		else
			continue;
		while (pos > 0 && ODP_SP_NAME(before) (d, idx, bd[pos - 1], bi[pos - 1]))
		{
			bd[pos] = bd[pos - 1];
			bi[pos] = bi[pos - 1];
			pos--;
		}
		bd[pos] = d;
		bi[pos] = idx;
	}
	return evals;
}

/*
 * Searches the subtree of node top, whose bound is btop, depth first,
 * nearer child first, into the list (bd, bi, *cnt of k); returns the
 * distances computed.
 */
ODP_HD int64_t
ODP_SP_NAME(descend) (const ODP_SP_NAME(Tree) *t, OdpMetric m, const ODP_SP_T *q,
					  int64_t self, int k, int64_t top, ODP_SP_T btop,
					  ODP_SP_T *bd, uint32_t *bi, int *cnt)
{
	int64_t		stack_v[ODP_SPATIAL_STACK];
	ODP_SP_T	stack_b[ODP_SPATIAL_STACK];
	int			sp = 1;
	int64_t		evals = 0;

	stack_v[0] = top;
	stack_b[0] = btop;
	while (sp > 0)
	{
		const int64_t v = stack_v[--sp];
		const ODP_SP_T b = stack_b[sp];

		if (*cnt == k && ODP_SP_NAME(skip) (b, t->nmin[v], bd[k - 1], bi[k - 1]))
			continue;
		if (v >= t->first_leaf)
			evals += ODP_SP_NAME(scan_leaf) (t, m, q, self, k, v, bd, bi, cnt);
		else
		{
			const int64_t l = 2 * v + 1;
			const int64_t r = l + 1;
			const bool	has_r = t->nmin[r] != ODP_SPATIAL_EMPTY;
			const ODP_SP_T bl = ODP_SP_NAME(bound) (t, m, q, l);
			const ODP_SP_T br = has_r ? ODP_SP_NAME(bound) (t, m, q, r) : bl;
			const bool	keep_l = !(*cnt == k && ODP_SP_NAME(skip) (bl, t->nmin[l], bd[k - 1], bi[k - 1]));
			const bool	keep_r = has_r &&
				!(*cnt == k && ODP_SP_NAME(skip) (br, t->nmin[r], bd[k - 1], bi[k - 1]));

			/* the nearer child on top; on a tie the left, smaller indexes */
			if (keep_l && keep_r && bl <= br)
			{
				stack_v[sp] = r;
				stack_b[sp++] = br;
				stack_v[sp] = l;
				stack_b[sp++] = bl;
			}
			else if (keep_l && keep_r)
			{
				stack_v[sp] = l;
				stack_b[sp++] = bl;
				stack_v[sp] = r;
				stack_b[sp++] = br;
			}
			else if (keep_l)
			{
				stack_v[sp] = l;
				stack_b[sp++] = bl;
			}
			else if (keep_r)
			{
				stack_v[sp] = r;
				stack_b[sp++] = br;
			}
		}
	}
	return evals;
}

/*
 * The k nearest rows of the tree to q (skipping row self; -1: none) into
 * bd and bi, best first; returns the distances computed.  The tree holds
 * at least k rows besides self.
 */
ODP_HD int64_t
ODP_SP_NAME(search) (const ODP_SP_NAME(Tree) *t, OdpMetric m, const ODP_SP_T *q,
					 int64_t self, int k, ODP_SP_T *bd, uint32_t *bi)
{
	int			cnt = 0;

	return ODP_SP_NAME(descend) (t, m, q, self, k, 0, 0, bd, bi, &cnt);
}

/*
 * The same for the tree's own row at position p, itself skipped, from its
 * leaf upwards: the leaf first, then each ancestor's other child.  A
 * self join's query so skips the descent from the root to its own leaf,
 * whose boxes all hold it (bound 0) and could never be skipped.  The list
 * is the search's: a node is left out only by the same rule.
 */
ODP_HD int64_t
ODP_SP_NAME(search_own) (const ODP_SP_NAME(Tree) *t, OdpMetric m, int64_t p, int k,
						 ODP_SP_T *bd, uint32_t *bi)
{
	const ODP_SP_T *q = t->pts + p * t->dims;
	const int64_t self = (int64_t) t->order[p];
	int64_t		v = t->first_leaf + p / ODP_SPATIAL_LEAF;
	int			cnt = 0;
	int64_t		evals;

	evals = ODP_SP_NAME(scan_leaf) (t, m, q, self, k, v, bd, bi, &cnt);
	for (; v > 0; v = (v - 1) / 2)
	{
		const int64_t s = (v & 1) ? v + 1 : v - 1;

		if (t->nmin[s] != ODP_SPATIAL_EMPTY)
			evals += ODP_SP_NAME(descend) (t, m, q, self, k, s,
										   ODP_SP_NAME(bound) (t, m, q, s),
										   bd, bi, &cnt);
	}
	return evals;
}
