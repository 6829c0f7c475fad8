/*-------------------------------------------------------------------------
 *
 * pearson_cpu.c
 *	  CPU path of the correlations: series prepared once (ranks, scaling,
 *	  centring), coefficients from blocked, threaded dot products, pairs
 *	  over a threshold handed over in order, top-k lists kept in heaps.
 *
 * Preparation follows pearson_math.h: complete data becomes unit-norm centred
 * series z, so that r = z_a . z_b; data with missing values becomes the
 * centred series c (0 where missing), c^2 and the presence mask m, whose
 * six products give each pair's sums over its common positions.
 *
 * Products are computed in tiles of CPU_PEARSON_ROWS x CPU_PEARSON_COLS series,
 * blocked over the values (CPU_PEARSON_KC at a time, so that the column
 * block stays in the L2 cache) with a 4 x 2 register tile whose sums run
 * over two values at a time in 16-byte vectors.
 *
 * Work: a unit is a block of CPU_PEARSON_ROWS series of x against all the
 * partners it needs (for pairs of a self correlation only those after it:
 * the upper triangle).  Threads take units from a shared counter.  Top-k
 * units write their rows' lists directly.  Pair units keep their pairs
 * per row and are handed over in order by the caller's thread, in waves
 * of a few units per thread, so that memory holds only a wave's pairs.
 * Only the caller's thread polls the cancel callback and calls the pair
 * receiver; workers start with every signal blocked (odp_cpu_workers_start).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/pearson/pearson_cpu.c
 *
 *-------------------------------------------------------------------------
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/host_threads.h"
#include "pearson/pearson_internal.h"
#include "pearson/pearson_math.h"

/* pearson_heap_offer and pearson_heap_sort_ascending over double keys */
#define ODP_HEAP_PREFIX pearson_heap
#define ODP_HEAP_KEY double
#include "common/select_heap.h"

#define CPU_PEARSON_ROWS		32		/* series of x per unit and tile */
#define CPU_PEARSON_COLS		128		/* partner series per tile */
#define CPU_PEARSON_KC			512		/* values per block of the products */
#define CPU_PEARSON_WAVE		4		/* pair units per thread and wave */
#define CPU_PEARSON_MAX_THREADS 256
#define CPU_PEARSON_PLANES		4		/* c, c^2, mask, scaled values (pairwise) */

/* Two doubles, for the products' inner loop (GCC and Clang vectors). */
typedef double CpuV2 __attribute__((vector_size(16)));

/* One side of the problem, prepared. */
typedef struct CpuPearsonSide
{
	int64_t		rows;
	int32_t		dims;

	/*
	 * Complete data: plane 0 holds z (zero for a constant series, which
	 * invalid marks).  Pairwise data: planes 0 .. 3 hold c, c^2, the mask
	 * and the values scaled (for the exact recomputation), each rows x
	 * dims; missing values are 0 in all of them.
	 */
	double	   *plane[CPU_PEARSON_PLANES];
	uint8_t    *invalid;		/* rows; complete data only */
} CpuPearsonSide;

/* Everything the threads share. */
typedef struct CpuPearsonRun
{
	OdpContext *ctx;
	const OdpPearsonJob *job;
	const CpuPearsonSide *x;
	const CpuPearsonSide *y;		/* == x for a self correlation */
	bool		self;
	bool		pairwise;
	double		min_n;
	int64_t		units;

	/* preparation: series handed out by a counter */
	bool		preparing;
	const OdpMatrix64 *prep_in;
	CpuPearsonSide *prep_out;
	int64_t		prep_end;

	/* units of this wave: [next, end); pair lists of units [first, end) */
	atomic_llong next;
	int64_t		first;
	int64_t		end;
	OdpPearsonPairs *lists;		/* (end - first) x CPU_PEARSON_ROWS */

	atomic_int	stop;
	atomic_int	oom;
} CpuPearsonRun;

/* A value and its position, sorted to rank a series. */
typedef struct CpuRankItem
{
	double		v;
	int32_t		i;
} CpuRankItem;

/* One thread's buffers. */
typedef struct CpuPearsonScratch
{
	double	   *tile[6];		/* CPU_PEARSON_ROWS x CPU_PEARSON_COLS each */
	double	   *heap_key;		/* CPU_PEARSON_ROWS x k */
	int64_t    *heap_tag;
	int32_t    *heap_size;
	double	   *rank_v;			/* dims: one series' ranks */
	CpuRankItem *rank_items;	/* dims */
} CpuPearsonScratch;

/* Orders rank items by value, then position (a total order: no NaN). */
static int
cpu_rank_cmp(const void *a, const void *b)
{
	const CpuRankItem *x = (const CpuRankItem *) a;
	const CpuRankItem *y = (const CpuRankItem *) b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/*
 * Writes the average ranks of x[0 .. dims) into rank (ties share the mean
 * of their ranks); items is scratch.
 */
static void
cpu_rank_series(const double *x, int32_t dims, CpuRankItem *items,
				double *rank)
{
	int32_t		s = 0;

	for (int32_t i = 0; i < dims; i++)
	{
		items[i].v = x[i];
		items[i].i = i;
	}
	qsort(items, (size_t) dims, sizeof(CpuRankItem), cpu_rank_cmp);
	while (s < dims)
	{
		int32_t		e = s + 1;
		double		r;

		while (e < dims && items[e].v == items[s].v)
			e++;
		r = odp_pearson_average_rank(s, e);
		for (int32_t i = s; i < e; i++)
			rank[items[i].i] = r;
		s = e;
	}
}

/*
 * Prepares series x (dims values, miss NULL or its missing flags) into
 * row `row` of side out, as pearson_math.h describes.
 */
static void
cpu_prep_series(const double *x, const uint8_t *miss, int32_t dims,
				CpuPearsonSide *out, int64_t row, bool pairwise)
{
	double	   *c = out->plane[0] + row * dims;
	double		amax = 0.0;
	double		first = 0.0;
	double		n = 0.0;
	double		sum = 0.0;
	double		scale;
	double		mean;
	double		delta;
	double		ss = 0.0;
	bool		varies = false;

	for (int32_t i = 0; i < dims; i++)
	{
		if (miss != NULL && miss[i])
			continue;
		if (n == 0.0)
			first = x[i];
		varies |= x[i] != first;
		amax = fmax(amax, fabs(x[i]));
		n += 1.0;
	}
	if (!pairwise && !varies)
	{
		memset(c, 0, sizeof(double) * (size_t) dims);
		out->invalid[row] = 1;
		return;
	}
	scale = amax > 0.0 ? odp_pearson_scale_of(amax) : 1.0;
	for (int32_t i = 0; i < dims; i++)
		if (miss == NULL || !miss[i])
			sum += x[i] * scale;
	mean = n > 0.0 ? sum / n : 0.0;
	sum = 0.0;
	for (int32_t i = 0; i < dims; i++)
	{
		c[i] = (miss == NULL || !miss[i]) ? x[i] * scale - mean : 0.0;
		sum += c[i];
	}
	delta = n > 0.0 ? sum / n : 0.0;
	for (int32_t i = 0; i < dims; i++)
	{
		if (miss == NULL || !miss[i])
			c[i] -= delta;
		ss += c[i] * c[i];
	}
	if (!pairwise)
	{
		double		norm = sqrt(ss);

		for (int32_t i = 0; i < dims; i++)
			c[i] /= norm;
		out->invalid[row] = 0;
		return;
	}
	for (int32_t i = 0; i < dims; i++)
	{
		bool		present = miss == NULL || !miss[i];

		out->plane[1][row * dims + i] = c[i] * c[i];
		out->plane[2][row * dims + i] = present ? 1.0 : 0.0;
		out->plane[3][row * dims + i] = present ? x[i] * scale : 0.0;
	}
}

/* Loads two doubles from a possibly unaligned address. */
static inline CpuV2
cpu_load2(const double *p)
{
	CpuV2		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * G[i * ldg + j] += sum over n in [n0, n1) of A[i][n] * B[j][n] for i < ni,
 * j < nj; rows of A and B are dims long.  4 x 2 register tiles, two values
 * at a time; the edges in plain loops.
 */
static void
cpu_dot_block(const double *A, int ni, const double *B, int nj, int32_t dims,
			  int32_t n0, int32_t n1, double *G, int ldg)
{
	const int32_t nv = n0 + (n1 - n0) / 2 * 2;
	int			i = 0;

	for (; i + 4 <= ni; i += 4)
	{
		const double *a0 = A + (size_t) i * dims;
		const double *a1 = a0 + dims;
		const double *a2 = a1 + dims;
		const double *a3 = a2 + dims;
		int			j = 0;

		for (; j + 2 <= nj; j += 2)
		{
			const double *b0 = B + (size_t) j * dims;
			const double *b1 = b0 + dims;
			CpuV2		s00 = {0, 0}, s01 = {0, 0}, s10 = {0, 0}, s11 = {0, 0},
						s20 = {0, 0}, s21 = {0, 0}, s30 = {0, 0}, s31 = {0, 0};
			double		t[8];

			for (int32_t n = n0; n < nv; n += 2)
			{
				const CpuV2 vb0 = cpu_load2(b0 + n);
				const CpuV2 vb1 = cpu_load2(b1 + n);
				CpuV2		va;

				va = cpu_load2(a0 + n);
				s00 += va * vb0;
				s01 += va * vb1;
				va = cpu_load2(a1 + n);
				s10 += va * vb0;
				s11 += va * vb1;
				va = cpu_load2(a2 + n);
				s20 += va * vb0;
				s21 += va * vb1;
				va = cpu_load2(a3 + n);
				s30 += va * vb0;
				s31 += va * vb1;
			}
			t[0] = s00[0] + s00[1];
			t[1] = s01[0] + s01[1];
			t[2] = s10[0] + s10[1];
			t[3] = s11[0] + s11[1];
			t[4] = s20[0] + s20[1];
			t[5] = s21[0] + s21[1];
			t[6] = s30[0] + s30[1];
			t[7] = s31[0] + s31[1];
			if (nv < n1)
			{
				const double v0 = b0[nv];
				const double v1 = b1[nv];

				t[0] += a0[nv] * v0;
				t[1] += a0[nv] * v1;
				t[2] += a1[nv] * v0;
				t[3] += a1[nv] * v1;
				t[4] += a2[nv] * v0;
				t[5] += a2[nv] * v1;
				t[6] += a3[nv] * v0;
				t[7] += a3[nv] * v1;
			}
			for (int r = 0; r < 4; r++)
			{
				G[(size_t) (i + r) * ldg + j] += t[2 * r];
				G[(size_t) (i + r) * ldg + j + 1] += t[2 * r + 1];
			}
		}
		for (; j < nj; j++)
		{
			const double *b0 = B + (size_t) j * dims;

			for (int r = 0; r < 4; r++)
			{
				const double *ar = a0 + (size_t) r * dims;
				double		s = 0.0;

				for (int32_t n = n0; n < n1; n++)
					s += ar[n] * b0[n];
				G[(size_t) (i + r) * ldg + j] += s;
			}
		}
	}
	for (; i < ni; i++)
	{
		const double *ar = A + (size_t) i * dims;

		for (int j = 0; j < nj; j++)
		{
			const double *bj = B + (size_t) j * dims;
			double		s = 0.0;

			for (int32_t n = n0; n < n1; n++)
				s += ar[n] * bj[n];
			G[(size_t) i * ldg + j] += s;
		}
	}
}

/* G (ni x nj, ld nj) = A . B^T, blocked over the values. */
static void
cpu_dot_tile(const double *A, int ni, const double *B, int nj, int32_t dims,
			 double *G)
{
	memset(G, 0, sizeof(double) * (size_t) ni * nj);
	for (int32_t n0 = 0; n0 < dims; n0 += CPU_PEARSON_KC)
		cpu_dot_block(A, ni, B, nj, dims, n0,
					  n0 + CPU_PEARSON_KC < dims ? n0 + CPU_PEARSON_KC : dims, G, nj);
}

/*
 * Computes the tile of rows [a0, a0 + ni) of x against rows [b0, b0 + nj)
 * of y: complete data, the coefficients' dot products into tile[0];
 * pairwise data, the six sums (pearson_math.h) into tile[0 .. 5] as
 * Sxy, n, Sx, Sy, Sxx, Syy.
 */
static void
cpu_pearson_products(const CpuPearsonRun *run, int64_t a0, int ni, int64_t b0,
					 int nj, double *const *tile)
{
	const int32_t dims = run->x->dims;
	const double *const *xp = (const double *const *) run->x->plane;
	const double *const *yp = (const double *const *) run->y->plane;
	const size_t ax = (size_t) a0 * dims;
	const size_t by = (size_t) b0 * dims;

	cpu_dot_tile(xp[0] + ax, ni, yp[0] + by, nj, dims, tile[0]);
	if (!run->pairwise)
		return;
	cpu_dot_tile(xp[2] + ax, ni, yp[2] + by, nj, dims, tile[1]);
	cpu_dot_tile(xp[0] + ax, ni, yp[2] + by, nj, dims, tile[2]);
	cpu_dot_tile(xp[2] + ax, ni, yp[0] + by, nj, dims, tile[3]);
	cpu_dot_tile(xp[1] + ax, ni, yp[2] + by, nj, dims, tile[4]);
	cpu_dot_tile(xp[2] + ax, ni, yp[1] + by, nj, dims, tile[5]);
}

/*
 * The coefficient of pair (a, b) from element e of the tiles; false when
 * the pair has none.
 */
static inline bool
cpu_pearson_value(const CpuPearsonRun *run, double *const *tile, size_t e,
				  int64_t a, int64_t b, double *r)
{
	int			got;

	if (!run->pairwise)
	{
		if (run->x->invalid[a] || run->y->invalid[b])
			return false;
		*r = odp_pearson_clamp(tile[0][e]);
		return true;
	}
	got = odp_pearson_from_sums(tile[1][e], tile[2][e], tile[3][e], tile[4][e],
								tile[5][e], tile[0][e], run->min_n, r);
	if (got >= 0)
		return got == 1;
	{
		const int32_t dims = run->x->dims;

		return odp_pearson_pair_exact(run->x->plane[3] + (size_t) a * dims,
									  run->x->plane[2] + (size_t) a * dims,
									  run->y->plane[3] + (size_t) b * dims,
									  run->y->plane[2] + (size_t) b * dims,
									  dims, run->min_n, r);
	}
}

/* Whether to stop: another thread failed or the caller cancelled. */
static bool
cpu_pearson_stopping(CpuPearsonRun *run, bool poll)
{
	if (atomic_load_explicit(&run->stop, memory_order_relaxed))
		return true;
	if (poll && odp_cancel_requested(run->ctx))
	{
		atomic_store(&run->stop, 1);
		return true;
	}
	return false;
}

/*
 * Runs unit u: rows [a0, a1) of x against their partners.  Pairs go to
 * lists (one per row), top-k lists to the job's outputs.  Returns false
 * when stopped (cancel, another thread's failure, out of memory).
 */
static bool
cpu_pearson_unit(CpuPearsonRun *run, int64_t u, CpuPearsonScratch *sc,
				 OdpPearsonPairs *lists, bool poll)
{
	const OdpPearsonJob *job = run->job;
	const int64_t a0 = u * CPU_PEARSON_ROWS;
	const int	ni = (int) (a0 + CPU_PEARSON_ROWS < run->x->rows ?
							CPU_PEARSON_ROWS : run->x->rows - a0);
	const int64_t cols = run->y->rows;
	const int32_t k = job->k;

	if (job->top)
		for (int i = 0; i < ni; i++)
			sc->heap_size[i] = 0;

	for (int64_t b0 = (run->self && !job->top) ? a0 : 0; b0 < cols;
		 b0 += CPU_PEARSON_COLS)
	{
		const int	nj = (int) (b0 + CPU_PEARSON_COLS < cols ? CPU_PEARSON_COLS : cols - b0);

		cpu_pearson_products(run, a0, ni, b0, nj, sc->tile);
		for (int i = 0; i < ni; i++)
		{
			const int64_t a = a0 + i;

			for (int j = 0; j < nj; j++)
			{
				const int64_t b = b0 + j;
				double		r;

				if (run->self && (job->top ? b == a : b <= a))
					continue;
				if (!cpu_pearson_value(run, sc->tile, (size_t) i * nj + j, a, b, &r))
					continue;
				if (job->top)
					pearson_heap_offer(sc->heap_key + (size_t) i * k,
									   sc->heap_tag + (size_t) i * k,
									   &sc->heap_size[i], k,
									   odp_pearson_key(r, job->rank), odp_pearson_tag(b, r));
				else if (fabs(r) >= job->min_abs_r &&
						 !odp_pearson_pairs_push(&lists[i], a, b, r))
				{
					atomic_store(&run->oom, 1);
					atomic_store(&run->stop, 1);
					return false;
				}
			}
		}
		/* one tile is bounded work: a cheap place to poll */
		if (cpu_pearson_stopping(run, poll))
			return false;
	}

	if (job->top)
	{
		for (int i = 0; i < ni; i++)
		{
			double	   *hk = sc->heap_key + (size_t) i * k;
			int64_t    *ht = sc->heap_tag + (size_t) i * k;
			int64_t    *other = job->other + (size_t) (a0 + i) * k;
			double	   *rr = job->r + (size_t) (a0 + i) * k;

			pearson_heap_sort_ascending(hk, ht, sc->heap_size[i]);
			for (int32_t q = 0; q < k; q++)
			{
				if (q < sc->heap_size[i])
				{
					other[q] = odp_pearson_tag_row(ht[q]);
					rr[q] = odp_pearson_r_of(hk[q], ht[q], job->rank);
				}
				else
				{
					other[q] = -1;
					rr[q] = 0.0;
				}
			}
		}
	}
	return true;
}

/* Frees one thread's buffers. */
static void
cpu_pearson_scratch_free(CpuPearsonScratch *sc)
{
	for (int t = 0; t < 6; t++)
		free(sc->tile[t]);
	free(sc->heap_key);
	free(sc->heap_tag);
	free(sc->heap_size);
	free(sc->rank_v);
	free(sc->rank_items);
	memset(sc, 0, sizeof(*sc));
}

/* Allocates one thread's buffers; false when out of memory. */
static bool
cpu_pearson_scratch_alloc(const CpuPearsonRun *run, CpuPearsonScratch *sc)
{
	const size_t tile = (size_t) CPU_PEARSON_ROWS * CPU_PEARSON_COLS;
	const int32_t dims = run->job->p->x->dims;

	memset(sc, 0, sizeof(*sc));
	for (int t = 0; t < (run->pairwise ? 6 : 1); t++)
		if ((sc->tile[t] = malloc(sizeof(double) * tile)) == NULL)
			return false;
	if (run->job->top)
	{
		const size_t n = (size_t) CPU_PEARSON_ROWS * run->job->k;

		sc->heap_key = malloc(sizeof(double) * n);
		sc->heap_tag = malloc(sizeof(int64_t) * n);
		sc->heap_size = malloc(sizeof(int32_t) * CPU_PEARSON_ROWS);
		if (!sc->heap_key || !sc->heap_tag || !sc->heap_size)
			return false;
	}
	if (run->job->p->method == ODP_PEARSON_METHOD_SPEARMAN)
	{
		sc->rank_v = malloc(sizeof(double) * (size_t) dims);
		sc->rank_items = malloc(sizeof(CpuRankItem) * (size_t) dims);
		if (!sc->rank_v || !sc->rank_items)
			return false;
	}
	return true;
}

/*
 * Does work until none is left: series to prepare, or units of the
 * current wave.  poll says whether this is the caller's thread.
 */
static void
cpu_pearson_work(CpuPearsonRun *run, bool poll)
{
	CpuPearsonScratch sc;

	if (!cpu_pearson_scratch_alloc(run, &sc))
	{
		atomic_store(&run->oom, 1);
		atomic_store(&run->stop, 1);
		cpu_pearson_scratch_free(&sc);
		return;
	}
	for (;;)
	{
		int64_t		u = atomic_fetch_add(&run->next, 1);

		if (u >= run->end || atomic_load(&run->stop))
			break;
		if (run->preparing)
		{
			const OdpMatrix64 *in = run->prep_in;
			const int32_t dims = in->dims;
			const int64_t s1 = (u + 1) * CPU_PEARSON_ROWS < run->prep_end ?
				(u + 1) * CPU_PEARSON_ROWS : run->prep_end;

			for (int64_t s = u * CPU_PEARSON_ROWS; s < s1; s++)
			{
				const double *v = in->data + (size_t) s * dims;

				if (run->job->p->method == ODP_PEARSON_METHOD_SPEARMAN)
				{
					cpu_rank_series(v, dims, sc.rank_items, sc.rank_v);
					v = sc.rank_v;
				}
				cpu_prep_series(v, in->missing ? in->missing + (size_t) s * dims : NULL,
								dims, run->prep_out, s, run->pairwise);
			}
			if (cpu_pearson_stopping(run, poll))
				break;
		}
		else if (!cpu_pearson_unit(run, u, &sc,
								   run->lists ? run->lists + (u - run->first) * CPU_PEARSON_ROWS : NULL,
								   poll))
			break;
	}
	cpu_pearson_scratch_free(&sc);
}

/* pthread entry: a worker that never polls the cancel callback. */
static void *
cpu_pearson_thread(void *arg)
{
	cpu_pearson_work((CpuPearsonRun *) arg, false);
	return NULL;
}

/* Runs work items [first, end) on nthreads threads (the caller's included). */
static void
cpu_pearson_parallel(CpuPearsonRun *run, int nthreads, int64_t first, int64_t end)
{
	pthread_t	threads[CPU_PEARSON_MAX_THREADS];
	int64_t		items = end - first;
	int			started;

	atomic_store(&run->next, first);
	run->first = first;
	run->end = end;
	if (nthreads > items)
		nthreads = (int) (items > 0 ? items : 1);
	started = odp_cpu_workers_start(threads, nthreads, cpu_pearson_thread, run);
	cpu_pearson_work(run, true);
	odp_cpu_workers_join(threads, started);
}

/* Frees a prepared side. */
static void
cpu_pearson_side_free(CpuPearsonSide *side)
{
	for (int p = 0; p < CPU_PEARSON_PLANES; p++)
		free(side->plane[p]);
	free(side->invalid);
	memset(side, 0, sizeof(*side));
}

/* Prepares matrix m into side (allocating it); false when out of memory. */
static bool
cpu_pearson_prepare(CpuPearsonRun *run, const OdpMatrix64 *m, CpuPearsonSide *side,
					int nthreads)
{
	const size_t n = (size_t) m->rows * (size_t) m->dims;

	memset(side, 0, sizeof(*side));
	side->rows = m->rows;
	side->dims = m->dims;
	for (int p = 0; p < (run->pairwise ? CPU_PEARSON_PLANES : 1); p++)
		if ((side->plane[p] = malloc(sizeof(double) * n)) == NULL)
			return false;
	if ((side->invalid = calloc((size_t) m->rows, 1)) == NULL)
		return false;
	run->preparing = true;
	run->prep_in = m;
	run->prep_out = side;
	run->prep_end = m->rows;
	cpu_pearson_parallel(run, nthreads, 0, (m->rows + CPU_PEARSON_ROWS - 1) / CPU_PEARSON_ROWS);
	run->preparing = false;
	return true;
}

/* See pearson_internal.h. */
OdpStatus
odp_cpu_pearson(OdpContext *ctx, const OdpPearsonJob *job)
{
	const OdpPearsonProblem *p = job->p;
	CpuPearsonRun	run;
	CpuPearsonSide xs;
	CpuPearsonSide ys;
	int			nthreads = ctx->cpu_threads > 1 ? ctx->cpu_threads : 1;
	double		start = odp_now_ms();
	double		emit_before = job->emitter ? job->emitter->ms : 0.0;
	OdpStatus	status = ODP_OK;

	if (nthreads > CPU_PEARSON_MAX_THREADS)
		nthreads = CPU_PEARSON_MAX_THREADS;
	memset(&run, 0, sizeof(run));
	memset(&xs, 0, sizeof(xs));
	memset(&ys, 0, sizeof(ys));
	run.ctx = ctx;
	run.job = job;
	run.self = p->y == NULL;
	run.pairwise = p->x->missing != NULL || (p->y != NULL && p->y->missing != NULL);
	run.min_n = odp_pearson_min_positions(p->min_periods);
	atomic_init(&run.next, 0);
	atomic_init(&run.stop, 0);
	atomic_init(&run.oom, 0);

	if (!cpu_pearson_prepare(&run, p->x, &xs, nthreads) ||
		(!run.self && !cpu_pearson_prepare(&run, p->y, &ys, nthreads)))
		atomic_store(&run.oom, 1);
	run.x = &xs;
	run.y = run.self ? &xs : &ys;
	run.units = (p->x->rows + CPU_PEARSON_ROWS - 1) / CPU_PEARSON_ROWS;

	if (atomic_load(&run.oom) || atomic_load(&run.stop))
		;
	else if (job->top)
		cpu_pearson_parallel(&run, nthreads, 0, run.units);
	else
	{
		const int64_t wave = (int64_t) nthreads * CPU_PEARSON_WAVE;

		run.lists = calloc((size_t) wave * CPU_PEARSON_ROWS, sizeof(OdpPearsonPairs));
		if (run.lists == NULL)
			atomic_store(&run.oom, 1);
		for (int64_t w0 = 0; run.lists != NULL && w0 < run.units; w0 += wave)
		{
			const int64_t w1 = w0 + wave < run.units ? w0 + wave : run.units;

			cpu_pearson_parallel(&run, nthreads, w0, w1);
			if (atomic_load(&run.stop))
				break;
			for (int64_t l = 0; l < (w1 - w0) * CPU_PEARSON_ROWS && status == ODP_OK; l++)
				status = odp_pearson_emit(ctx, job->emitter, &run.lists[l]);
			for (int64_t l = 0; l < (w1 - w0) * CPU_PEARSON_ROWS; l++)
				run.lists[l].count = 0;
			if (status != ODP_OK)
				break;
		}
		if (run.lists != NULL)
			for (int64_t l = 0; l < wave * CPU_PEARSON_ROWS; l++)
				odp_pearson_pairs_free(&run.lists[l]);
		free(run.lists);
	}

	cpu_pearson_side_free(&xs);
	cpu_pearson_side_free(&ys);
	ctx->compute_ms = odp_now_ms() - start -
		(job->emitter ? job->emitter->ms - emit_before : 0.0);
	if (status != ODP_OK)
		return status;
	if (atomic_load(&run.oom))
		return odp_fail(ctx, ODP_ERR_HOST_OOM,
						"out of host memory for the correlation of %lld series of %d values",
						(long long) p->x->rows, (int) p->x->dims);
	if (atomic_load(&run.stop))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "canceled");
	return ODP_OK;
}
