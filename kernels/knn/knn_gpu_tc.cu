/*-------------------------------------------------------------------------
 *
 * knn_gpu_tc.cu
 *	  Exact k-NN for the metrics that are matrix products (euclidean,
 *	  squared euclidean, cosine, inner product) through a tensor-core
 *	  filter.
 *
 * The canonical distance (odp_distance.h: float32, dimension by dimension,
 * no FMA) costs 3 SIMT operations per dimension; a tensor core computes
 * a dot product many times faster, but not bit for bit.  So the tensor
 * cores only filter, and every result is still canonical:
 *
 *	1. Threshold: each query's exact k-th distance over a strided sample of
 *	   S candidates (the shared SIMT primitive, k + 1 for a self join).  It
 *	   bounds the final k-th distance from above.
 *	2. Filter (TcFilterKernel): FP16 mma.sync tiles of 128 queries x 128
 *	   candidates (on the H100, TcFilterWgKernel: warpgroup products of
 *	   256 queries x 128) give the dot products q.c of copies of the rows scaled
 *	   by a power of two 2^e and rounded to half precision (centred on the
 *	   candidates' mean for the euclidean metrics, which changes no
 *	   distance; divided by their norms for cosine).  With a rigorous
 *	   bound E on the error (below), L = |q|^2 + |c|^2 - 2 q.c - E
 *	   (cosine: 1 - q.c - E, inner product: -q.c - E) is a lower bound of
 *	   the canonical value, and a candidate whose L reaches the threshold
 *	   is appended to the query's list (TC_CAP entries).  Every term of L
 *	   but the product is a per-query or per-candidate constant, so the
 *	   test is one FMA and one comparison per pair; where the products
 *	   start from the candidate's term (TcFilterRegKernel, rows of up to
 *	   32 padded dimensions), one maximum per pair.  A self join there
 *	   tests each pair of rows once for both rows (the symmetric filter:
 *	   half the products, a second test per pair).
 *	3. Refine (TcRefineKernel): one warp per query computes the canonical
 *	   distance of every listed candidate and keeps the k smallest by
 *	   (distance, index), exactly what the SIMT primitive keeps, through
 *	   a bitwise search for the k-th smallest (no sort of the list).
 * Every candidate of the true k nearest has distance <= threshold, so its
 * L passes: the lists hold all of them, and the result is exact.  A query
 * whose list overflows (many equal distances, as with many copies of a
 * row) scans every candidate instead (TcScanKernel), alone.
 *
 * The bound.  Half precision has TF32's 11-bit significand: rounding a
 * normal value errs by at most 2^-11 relatively, so a product by at most
 * 2^-10 + 2^-22; the scaling puts the largest magnitude in [2^14, 2^15),
 * far from overflow, and a value that falls into the subnormal range
 * errs by at most eta = 2^-25 absolutely, which adds at most
 * eta (1 + 2^-11) sqrt(D) (|q| + |c|) + D eta^2 to a dot product.  The
 * tensor core's float32 accumulation of D exact products errs by about
 * D 2^-23 of the sum of their magnitudes; the float32 norms, centring,
 * normalisation and the canonical sum itself by D 2^-24 or 2^-24
 * relatively.  With |q.c| <= |q||c| <= (|q|^2 + |c|^2) / 2, the relative
 * part stays below TC_REL(D) (|q|^2 + |c|^2), TC_REL(D) = 2^-8 + D 2^-20,
 * about twice the sum of the worst cases (cosine: TC_REL(D) in units of
 * 1; inner product: in units of |q||c|), and the absolute part is
 * counted twice over (TC_KAPPA).  A generous E costs only a few more
 * exact distances.
 *
 * The files.  This one holds the host driver: eligibility, the sample's
 * size, the choice of filter kernel, and TcSearch, which runs the steps
 * query chunk by query chunk.  The kernels are in files of their own,
 * each with the host function that launches it or hands it over:
 * knn_gpu_tc_prep.cu (centring, scale, half copies, sample, the
 * symmetric filter's terms), knn_gpu_tc_mma.cu (TcFilterKernel),
 * knn_gpu_tc_reg.cu (TcFilterRegKernel), knn_gpu_tc_wg.cu
 * (TcFilterWgKernel and its probe) and knn_gpu_tc_refine.cu
 * (TcRefineKernel, TcScanKernel); what they share is in
 * knn_gpu_tc_internal.cuh.
 *
 * A team (knn_internal.h): a self join split over devices by its pairs.
 * Each part runs the symmetric filter over every row, but finds the
 * thresholds of its own rows only (the parts exchange them through the
 * host), tests its share of the tile groups (TcTeamGroups), refines every
 * row's partial lists, and merges the other parts' lists of its own rows
 * into its result (TcTeamMerge).  Where the symmetric filter does not
 * serve every row on some part, the parts agree at the team's join to
 * compute their own rows alone.
 *
 * Map of this file: the search's constants (TC_*), the test counters
 * (odp_gpu_knn_tc_*), OdpKnnTcEligible, TcSampleSize, TcSymmetric, the
 * benchmark builds' trace (TC_MARK), the team's helpers
 * (odp_gpu_knn_team_fits, TcWholeRows, TcTeamGroups, TcTeamMerge),
 * TcSearch (one metric's launches, query chunk by query chunk) and the
 * entry point OdpKnnTcSearch.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_tc.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "knn/knn_gpu_tc_internal.cuh"
#include "knn/knn_internal.h"

#define TC_QRES_MAX		256		/* padded dimensions up to which a block's
								 * queries stay in shared memory */
#define TC_SMEM_TWO_BLOCKS	(110 * 1024)	/* shared bytes a block may take so
											 * that two fit an SM */
#define TC_MAX_TILES	32		/* candidate tiles one filter block sweeps */
#define TC_MIN_CANDS	32768	/* fewer: the SIMT primitive is as fast */
#define TC_MIN_QUERIES	128		/* fewer: the threshold pass and the half
								 * copy of every candidate cost more than
								 * the SIMT primitive's few tiles */
#define TC_QUERY_CHUNK	262144	/* queries whose lists are held at once */
#define TC_PROBE_QUERIES 16384	/* first chunk when giving up is allowed */
#define TC_NEST_MIN_SAMPLE	16384	/* a sample this large gets its thresholds
									 * through the filter too */
#define TC_SCAN_QUERIES	1024	/* overflowed queries per launch of the scan */
#define TC_LAUNCH_WORK	((int64_t) 1 << 38)	/* pair-dimensions per launch */

/*
 * Query chunks the filter finished, and samples whose thresholds it
 * found, for the tests (not thread-safe).
 */
extern "C" int64_t odp_gpu_knn_tc_chunks;
extern "C" int64_t odp_gpu_knn_tc_samples;
extern "C" int64_t odp_gpu_knn_tc_scans;
extern "C" int64_t odp_gpu_knn_tc_give_ups;
extern "C" int64_t odp_gpu_knn_tc_symmetric;
extern "C" int64_t odp_gpu_knn_tc_warpgroup;
int64_t		odp_gpu_knn_tc_chunks = 0;
int64_t		odp_gpu_knn_tc_samples = 0;
int64_t		odp_gpu_knn_tc_scans = 0;	/* queries whose list overflowed */
extern "C" int64_t odp_gpu_knn_tc_team;
int64_t		odp_gpu_knn_tc_team = 0;	/* team parts that shared the pairs */
int64_t		odp_gpu_knn_tc_give_ups = 0;	/* searches past tc_max_overflow */
int64_t		odp_gpu_knn_tc_symmetric = 0;	/* self joins filtered symmetrically */
int64_t		odp_gpu_knn_tc_warpgroup = 0;	/* searches through TcFilterWgKernel */
/* Tests: candidate tiles per filter block when > 0 (the ring wraps many times). */
extern "C" int odp_gpu_knn_tc_block_tiles;
int			odp_gpu_knn_tc_block_tiles = 0;

/* See knn_gpu_tc.cuh. */
bool
OdpKnnTcEligible(const OdpKnnProblem *p, int32_t k)
{
	if (p->metric != ODP_METRIC_EUCLIDEAN && p->metric != ODP_METRIC_SQEUCLIDEAN &&
		p->metric != ODP_METRIC_COSINE && p->metric != ODP_METRIC_INNER_PRODUCT)
		return false;
	return k <= TC_MAX_K && p->nc >= TC_MIN_CANDS && p->nq >= TC_MIN_QUERIES &&
		p->dims >= 4 &&
		p->cand_bound == NULL && p->cand_split == 0 && !p->ascending_candidates;
}

/*
 * Sample size for ks sample neighbours: lists expected an eighth full.
 * Measured on the H100, 1e6 x 32 all-kNN k = 10 (per 262,144 queries:
 * thresholds, filter, refine): a quarter full 20, 100, 21 ms; an eighth
 * 27, 88, 10 ms (fewer appends, half the exact distances); a twelfth
 * 34, 84, 7 ms.  Batch 1e4 x 1e6 x 128: 18.8 ms against 16.1.  The
 * symmetric filter (sym), whose appends scatter over every list, gains
 * from lists an eleventh full at k = 10 (2026-11-27, all 1e6 queries at
 * once: thresholds 105-108, filter 247, refine 19.7 ms against 90-91,
 * 262 and 24.7); a sample grows with k and its savings do not, so from
 * 16 sample neighbours on the eighth stays.
 */
static int64_t
TcSampleSize(int64_t nc, int ks, bool sym)
{
	int64_t		s = (int64_t) (sym && ks < 16 ? 11 : 8) * ks * nc / TC_CAP;

#ifdef ODP_TC_TRACE
	if (getenv("ODP_TC_SAMPLE"))	/* benchmark builds: times the default */
		s = (int64_t) (atof(getenv("ODP_TC_SAMPLE")) * (double) s);
#endif
	if (s < 4096)
		s = 4096;
	return s < nc ? s : nc;
}

/*
 * Whether the caller's self join gets the symmetric filter (SYM of
 * TcFilterRegKernel): one pass over the pairs of rows i < j instead of
 * two, for the metrics whose weights fold into the products and rows
 * the register-resident filter takes.  Every query's list is then held
 * at once, so only where they take at most half of the memory left; and
 * not where the search may give up, whose probe is one small chunk.
 */
template <OdpMetric M>
static bool
TcSymmetric(const OdpKnnProblem *p, const OdpGpuArena *arena, int dp, int depth)
{
	const size_t lists = (size_t) p->nq * (TC_CAP + 4) * sizeof(int32_t);
	const size_t left = arena->budget > arena->used ? arena->budget - arena->used : 0;

#ifdef ODP_TC_TRACE
	if (getenv("ODP_TC_SYM") && strcmp(getenv("ODP_TC_SYM"), "0") == 0)
		return false;			/* benchmark builds compare with the chunked filter */
#endif
	return M != ODP_METRIC_INNER_PRODUCT && (dp == 16 || dp == 32) && depth == 0 &&
		p->exclude_self && p->queries == p->cands && p->query_base == p->cand_base &&
		p->nq == p->nc && p->tc_max_overflow <= 0.0 &&
		(arena->budget == 0 || lists <= left / 2);
}

/*
 * Phase timings and list fill on stderr, for benchmark builds
 * (-DODP_TC_TRACE): each mark waits for the stream.
 */
#ifdef ODP_TC_TRACE
#include <stdio.h>
#include <stdlib.h>
#define TC_MARK(name) \
	do { \
		double		now_; \
		(void) cudaStreamSynchronize(stream); \
		now_ = odp_now_ms(); \
		fprintf(stderr, "tc[gpu %d]%s: %-10s %8.2f ms\n", dev->id, depth > 0 ? " (sample)" : "", (name), now_ - trace_t); \
		trace_t = now_; \
	} while (0)
#else
#define TC_MARK(name) ((void) 0)
#endif

/* See knn_internal.h: the self joins TcSymmetric serves, memory aside. */
extern "C" bool
odp_gpu_knn_team_fits(int64_t rows, int32_t dims, OdpMetric metric, int32_t k)
{
	return (metric == ODP_METRIC_EUCLIDEAN || metric == ODP_METRIC_SQEUCLIDEAN ||
			metric == ODP_METRIC_COSINE) &&
		dims >= 4 && dims <= 32 && k >= 1 && k <= TC_MAX_K &&
		rows >= TC_MIN_CANDS && rows >= TC_MIN_QUERIES;
}

/* A team part's problem widened to every row: the self join of its candidates. */
static OdpKnnProblem
TcWholeRows(const OdpKnnProblem *own)
{
	OdpKnnProblem whole = *own;

	whole.queries = own->cands;
	whole.query_norms = own->cand_norms;
	whole.query_base = own->cand_base;
	whole.nq = own->nc;
	return whole;
}

/* Padded dimensions of rows of dims: up to 16 take one k-step of the products. */
static int
TcPaddedDims(int dims)
{
	return dims <= 16 ? 16 : (dims + TC_BK - 1) / TC_BK * TC_BK;
}

/*
 * The query blocks (of qbm rows, qtiles in all) the symmetric filter's
 * group g of tiles candidate tiles has work for: those up to its last
 * tile.
 */
static int64_t
TcGroupBlocks(int64_t g, int64_t tiles, int qbm, int64_t qtiles)
{
	const int64_t end = (g + 1) * tiles * TC_BN;	/* first row after the group */

	return (end + qbm - 1) / qbm < qtiles ? (end + qbm - 1) / qbm : qtiles;
}

/*
 * The symmetric filter's groups [*first, *last) that team part part
 * tests: about a parts-th of the work, a group's its query blocks plus a
 * share of its own (with the blocks alone as weights, the part of the
 * first groups filtered 1.03 times as long as the other: 128 ms against
 * 124.7 on two H200s, 2026-11-29).
 */
static double
TcGroupWork(int64_t g, int64_t tiles, int qbm, int64_t qtiles)
{
	return (double) TcGroupBlocks(g, tiles, qbm, qtiles) + (double) qtiles / 64.0;
}

static void
TcTeamGroups(int64_t groups, int64_t tiles, int qbm, int64_t qtiles, int parts,
			 int part, int64_t *first, int64_t *last)
{
	double		total = 0.0,
				done = 0.0;

	for (int64_t g = 0; g < groups; g++)
		total += TcGroupWork(g, tiles, qbm, qtiles);
	*first = groups;
	*last = groups;
	for (int64_t g = 0; g < groups; g++)
	{
		if (*first == groups && done >= total * part / parts)
			*first = g;
		if (done >= total * (part + 1) / parts && part + 1 < parts)
		{
			*last = g;
			break;
		}
		done += TcGroupWork(g, tiles, qbm, qtiles);
	}
	if (*first > *last)
		*first = *last;
}

/*
 * A teamed part's end: shows the others its lists of every row (fst),
 * gathers every part's lists of its own rows [r0, r0 + rn) from their
 * devices (its own included) into rd/ri/rc, part after part, and merges
 * them into state.
 */
static OdpStatus
TcTeamMerge(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
			OdpKnnTeam *team, int part, int64_t r0, int64_t rn,
			const OdpKnnState *fst, OdpKnnState *state, float *rd,
			int64_t *ri, int32_t *rc, int *d_short)
{
	OdpStatus	status = ODP_OK;
	const int	k = state->k;
	int			short_rows = 0;

	team->device[part] = dev->id;
	team->dist[part] = fst->dist;
	team->index[part] = fst->index;
	team->count[part] = fst->count;
	if (!odp_meeting_attend(ctx, team->meeting))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
	for (int q = 0; q < team->parts; q++)
	{
		/*
		 * Through the driver, without peer access: enabling it made every
		 * later allocation of the process map into the peer, and a
		 * threshold search's allocations took 27 ms instead of 1 (two
		 * H200s, 2026-11-29), more than the copies gain.
		 */
		ODP_CUDA_TRY(ctx, cudaMemcpyPeerAsync(rd + q * rn * k, dev->id, team->dist[q] + r0 * k,
											  team->device[q], (size_t) rn * k * sizeof(float), stream),
					 "copying another device's lists");
		ODP_CUDA_TRY(ctx, cudaMemcpyPeerAsync(ri + q * rn * k, dev->id, team->index[q] + r0 * k,
											  team->device[q], (size_t) rn * k * sizeof(int64_t), stream),
					 "copying another device's lists");
		ODP_CUDA_TRY(ctx, cudaMemcpyPeerAsync(rc + q * rn, dev->id, team->count[q] + r0,
											  team->device[q], (size_t) rn * sizeof(int32_t), stream),
					 "copying another device's lists");
	}
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying another device's lists");
	/* the others may free their lists once every part has its copies */
	if (!odp_meeting_attend(ctx, team->meeting))
		return odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_short, 0, sizeof(int), stream), "clearing flags");
	TcLaunchTeamMerge(stream, rd, ri, rc, team->parts, rn, k, state->dist, state->index,
					  state->count, d_short);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the lists' merge kernel");
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&short_rows, d_short, sizeof(int), cudaMemcpyDeviceToHost, stream),
				 "merging the devices' lists");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "merging the devices' lists");
	if (short_rows != 0)
		return odp_fail(ctx, ODP_ERR_INTERNAL,
						"the tensor-core filter kept fewer than k = %d candidates for %d rows",
						k, short_rows);
cleanup:
	return status;
}

/*
 * The launches of one metric; see OdpKnnTcSearch.  depth 0 is the
 * caller's problem (for a team part, its own rows, widened to every row
 * where it shares the pairs); at depth 1 it finds the thresholds of depth
 * 0 (the sample's k nearest), itself from a smaller sample through the
 * SIMT primitive.  Returns with *done false, for the caller's other paths,
 * where it does not apply or memory is short.
 */
template <OdpMetric M>
static OdpStatus
TcSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
		 const OdpKnnProblem *own, OdpKnnState *state, OdpGpuArena *arena,
		 bool *done, bool *gave_up, int depth)
{
	OdpStatus	status = ODP_OK;
	/*
	 * A team part's problem is its own rows; where the symmetric filter
	 * serves every row, it works on every row (teamed), finding its own
	 * rows' thresholds and testing its share of the pairs.
	 */
	OdpKnnTeam *const team = depth == 0 ? own->team : NULL;
	const int	part = own->team_part;
	const OdpKnnProblem whole = TcWholeRows(own);
	const bool	teamed = team != NULL && TcSymmetric<M>(&whole, arena, TcPaddedDims(own->dims), depth);
	const OdpKnnProblem *const p = teamed ? &whole : own;
	const int64_t r0 = teamed ? team->first[part] : 0;
	const int64_t rn = teamed ? team->first[part + 1] - r0 : 0;
	const bool	euclid = (M == ODP_METRIC_EUCLIDEAN || M == ODP_METRIC_SQEUCLIDEAN);
	const int	dims = p->dims;
	const int	dp = TcPaddedDims(dims);
	const bool	sym = TcSymmetric<M>(p, arena, dp, depth);
	/* benchmark builds compare with the tile filter: ODP_TC_FILTER=old */
	const TcFilterFn reg_filter =
#ifdef ODP_TC_TRACE
		getenv("ODP_TC_FILTER") && strcmp(getenv("ODP_TC_FILTER"), "old") == 0 && dp > 16 && !sym ? NULL :
#endif
		TcRegFilter<M>(dp, sym);
	const bool	reg = reg_filter != NULL;
	const bool	qres = dp <= TC_QRES_MAX;
	/* the warpgroup filter: stages of 64 dimensions where they divide dp */
	const int	wbk = dp % 64 == 0 ? 64 : 32;
	const int	wslots = dp <= 128 || wbk == 32 ? 8 : 5;
	const bool	wg = !reg && qres &&
#ifdef ODP_TC_TRACE
		!(getenv("ODP_TC_FILTER") && strcmp(getenv("ODP_TC_FILTER"), "mma") == 0) &&
#endif
		TcWgSharedBytes(dp, wbk, wslots) <= dev->smem_per_block &&
		TcWgmmaUsable(dev, stream);
	const int	qbm = reg ? TC_REG_BM : (wg ? TC_WG_BM : TC_BM);	/* queries per block */
	const int	ks = state->k + (p->exclude_self ? 1 : 0);
	const int64_t s = TcSampleSize(p->nc, ks, sym);
	/* the symmetric filter appends to any query's list: all are held */
	const int64_t qchunk = p->nq < TC_QUERY_CHUNK || sym ? p->nq : TC_QUERY_CHUNK;
	const int64_t qchunk_pad = (qchunk + qbm - 1) / qbm * qbm;
	const int	ctiles = (int) ((p->nc + TC_BN - 1) / TC_BN);
	const int64_t nc_pad = (int64_t) ctiles * TC_BN;
	/* 64-dimension stages (half the barriers) where two blocks still fit an SM */
	const int	bk = qres && dp % 64 == 0 &&
		TC_BM * (dp + 8) + TC_STAGES * TC_BN * (64 + 8) <= TC_SMEM_TWO_BLOCKS / 2 ? 64 : 32;
	const size_t smem = reg
		? TC_STAGES * (sizeof(__half) * TC_BN * (dp + 8) + (sym ? 2 : 1) * sizeof(float) * TC_BN)
		: (wg ? TcWgSharedBytes(dp, wbk, wslots)
		   : sizeof(__half) * ((qres ? (size_t) TC_BM * (dp + 8) : 0) +
							   (size_t) TC_STAGES * (qres ? 1 : 2) * TC_BN * (bk + 8)));
	void		(*filter) (const TcArgs) = reg
		? reg_filter
		: (wg ? TcWgFilter<M>(wbk, wslots) : TcTileFilter<M>(qres, bk));
	double	   *d_sum = NULL;
	float	   *d_mean = NULL,
			   *d_cw = NULL,
			   *d_thr = NULL,
			   *d_alpha = NULL,
			   *d_sample = NULL,
			   *d_snorm = NULL,
			   *d_rw = NULL,
			   *d_cv = NULL;
	__half	   *d_ct = NULL,
			   *d_qt = NULL;
	unsigned int *d_max = NULL,
			   *d_range = NULL;
	int32_t    *d_count = NULL,
			   *d_list = NULL,
			   *d_over = NULL;
	int		   *d_flags = NULL;
	int			flags[3] = {0, 0, 0};
	float	   *d_kth = NULL;
	OdpKnnState fst;			/* teamed: every row's lists from this part */
	float	   *d_rd = NULL;		/* teamed: every part's lists of its own rows */
	int64_t    *d_ri = NULL;
	int32_t    *d_rc = NULL;
	int			e = TC_TOP_EXP;
	OdpKnnState sst;
	OdpKnnProblem sp;
	TcArgs		fa;
	TcQueryRowsArgs qa;
	TcRefineArgs ra;
#ifdef ODP_TC_TRACE
	double		trace_t = odp_now_ms();
#endif

	*done = false;
	memset(&fst, 0, sizeof(fst));
	if (team != NULL && !teamed)
	{
		bool		all;

		/* the pairs stay whole: each part computes its own rows */
		if (!odp_knn_team_join(ctx, team, part, false, &all))
			return odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
	}
	if (ks > s || state->k > TC_REFINE_SEL)
		return ODP_OK;
#define TC_ALLOC(ptr, bytes, what) \
	do { \
		if (OdpGpuArenaAlloc(ctx, arena, (bytes), (what), (void **) &(ptr)) != ODP_OK) \
		{ \
			ctx->message[0] = '\0'; \
			return ODP_OK;	/* not enough memory: the caller's path runs */ \
		} \
	} while (0)
	TC_ALLOC(d_ct, (size_t) nc_pad * dp * sizeof(__half), "half candidate rows");
	TC_ALLOC(d_cw, (size_t) nc_pad * sizeof(float), "candidate weights");
	TC_ALLOC(d_qt, (size_t) qchunk_pad * dp * sizeof(__half), "half query rows");
	TC_ALLOC(d_thr, (size_t) qchunk_pad * sizeof(float), "query thresholds");
	TC_ALLOC(d_alpha, (size_t) qchunk_pad * sizeof(float), "query factors");
	TC_ALLOC(d_count, (size_t) qchunk * sizeof(int32_t), "filter counts");
	TC_ALLOC(d_list, (size_t) qchunk * TC_CAP * sizeof(int32_t), "filter lists");
	TC_ALLOC(d_over, (size_t) qchunk * sizeof(int32_t), "overflowed queries");
	TC_ALLOC(d_sample, (size_t) s * dims * sizeof(float), "sample rows");
	if (M == ODP_METRIC_COSINE)
		TC_ALLOC(d_snorm, (size_t) s * sizeof(float), "sample norms");
	if (sym)
	{
		TC_ALLOC(d_rw, (size_t) qchunk_pad * sizeof(float), "row weights");
		TC_ALLOC(d_cv, (size_t) nc_pad * sizeof(float), "mirrored thresholds");
	}
	TC_ALLOC(d_sum, (size_t) dims * sizeof(double), "column sums");
	TC_ALLOC(d_range, (size_t) 2 * dims * sizeof(unsigned int), "column ranges");
	TC_ALLOC(d_mean, (size_t) dims * sizeof(float), "column means");
	TC_ALLOC(d_max, sizeof(unsigned int), "largest magnitude");
	TC_ALLOC(d_flags, 3 * sizeof(int), "flags");
	if (teamed)
	{
		TC_ALLOC(d_kth, (size_t) p->nq * sizeof(float), "the rows' thresholds");
		TC_ALLOC(d_rd, (size_t) team->parts * rn * state->k * sizeof(float), "the parts' distances");
		TC_ALLOC(d_ri, (size_t) team->parts * rn * state->k * sizeof(int64_t), "the parts' neighbours");
		TC_ALLOC(d_rc, (size_t) team->parts * rn * sizeof(int32_t), "the parts' counts");
		if (OdpKnnStateAlloc(ctx, arena, p->nq, state->k, &fst) != ODP_OK)
		{
			ctx->message[0] = '\0';
			return ODP_OK;
		}
	}
	if (OdpKnnStateAlloc(ctx, arena, qchunk, ks, &sst) != ODP_OK)
	{
		ctx->message[0] = '\0';
		return ODP_OK;
	}
#undef TC_ALLOC
	ctx->message[0] = '\0';

	ODP_CUDA_TRY(ctx, OdpGpuFuncSharedAtLeast((const void *) filter, smem),
				 "setting the filter kernel's shared memory size");
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_flags, 0, 3 * sizeof(int), stream), "clearing flags");

	/*
	 * The euclidean metrics centre every row on the candidates' mean; the
	 * same pass finds the candidates' largest centred magnitude.
	 */
	ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_max, 0, sizeof(unsigned int), stream), "clearing the magnitude");
	if (euclid)
	{
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_sum, 0, (size_t) dims * sizeof(double), stream),
					 "clearing column sums");
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_range, 0xff, (size_t) dims * sizeof(unsigned int), stream),
					 "clearing column ranges");
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_range + dims, 0, (size_t) dims * sizeof(unsigned int), stream),
					 "clearing column ranges");
		TcLaunchColumnSums(stream, p->cands, p->nc, dims, d_sum, d_range);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the column sum kernel");
		TcLaunchMeans(stream, d_sum, d_range, dims, p->nc, d_mean, d_max);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the column mean kernel");
	}

	/* the scale 2^e puts the largest magnitude in [2^14, 2^15) */
	if (M != ODP_METRIC_COSINE)
	{
		unsigned int maxbits = 0;
		float		maxabs;

		if (!euclid)
		{
			TcLaunchMaxAbs(stream, dev, p->cands, p->nc, dims, NULL, d_max);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the magnitude kernel");
		}
		if (p->queries != p->cands)
		{
			TcLaunchMaxAbs(stream, dev, p->queries, p->nq, dims, euclid ? d_mean : NULL, d_max);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the magnitude kernel");
		}
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(&maxbits, d_max, sizeof(unsigned int), cudaMemcpyDeviceToHost, stream),
					 "reading the largest magnitude");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "finding the largest magnitude");
		memcpy(&maxabs, &maxbits, sizeof(maxabs));
		if (!(maxabs < INFINITY))
			return ODP_OK;		/* centring overflowed: the caller's path runs */
		e = maxabs > 0.0f ? TC_TOP_EXP - ilogbf(maxabs) : 0;
	}

	/* candidates: half copies and weights, padded to whole tiles; the sample */
	TcLaunchCandRows<M>(stream, p->cands, p->cand_norms, p->nc, nc_pad, dims, dp,
						wg ? TC_BN : 0, wbk, euclid ? d_mean : NULL, e, d_ct, d_cw);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the candidate copy kernel");
	TcLaunchSample(stream, p->cands, p->cand_norms, dims, p->nc, s, d_sample, d_snorm);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the sample kernel");
	TC_MARK("prepare");

	if (teamed)
	{
		bool		all;

		/* every part that got here can: the pairs are shared if all did */
		if (!odp_knn_team_join(ctx, team, part, true, &all))
		{
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
			goto cleanup;
		}
		if (!all)
			return ODP_OK;		/* OdpKnnTcSearch runs the own rows alone */
	}

	/*
	 * A caller that lets the search give up on overflowing lists gets a
	 * small first chunk as a probe, so that giving up costs a sixteenth
	 * of a chunk's filter (the rest of the probe's work is kept).
	 */
	for (int64_t qf = 0, nq = 0; qf < p->nq; qf += nq)
	{
		nq = qf == 0 && depth == 0 && p->tc_max_overflow > 0.0 ? TC_PROBE_QUERIES : qchunk;
		nq = p->nq - qf < nq ? p->nq - qf : nq;
		const int64_t qtiles = (nq + qbm - 1) / qbm;
		int64_t		tiles,
					groups,
					per_launch,
					gfirst,
					glast;

		/* enough blocks to fill the GPU; more tiles per block, fewer query reloads */
		tiles = qtiles * ctiles / (16 * (int64_t) dev->sm_count);
		if (odp_gpu_knn_tc_block_tiles > 0)
			tiles = odp_gpu_knn_tc_block_tiles;
		tiles = tiles < 1 ? 1 : (tiles > TC_MAX_TILES ? TC_MAX_TILES : tiles);
		groups = (ctiles + tiles - 1) / tiles;
		per_launch = TC_LAUNCH_WORK / (qtiles * qbm * tiles * TC_BN * dp);
		per_launch = per_launch < 1 ? 1 : (per_launch > 65535 ? 65535 : per_launch);

		/* 1. thresholds from the sample */
		/* a teamed part finds its own rows' thresholds, the others theirs */
		memset(&sp, 0, sizeof(sp));
		sp.queries = p->queries + (qf + r0) * dims;
		sp.query_norms = M == ODP_METRIC_COSINE ? p->query_norms + qf + r0 : NULL;
		sp.query_base = 0;
		sp.nq = teamed ? rn : nq;
		sp.cands = d_sample;
		sp.cand_norms = d_snorm;
		sp.cand_base = 0;
		sp.nc = s;
		sp.dims = dims;
		sp.metric = M;
		sst.rows = sp.nq;
		{
			bool		sample_done = false;

			/* a large sample goes through the filter itself, with memory of its own */
			if (depth == 0 && s >= TC_NEST_MIN_SAMPLE)
			{
				OdpGpuArena sub;

				OdpGpuArenaInit(&sub, arena->budget == 0 ? 0
								: (arena->budget - arena->used > 1 ? arena->budget - arena->used : 1));
				/*
				 * The sample's lists fill like the caller's (same
				 * expected fill), so too many overflows there mean the
				 * same here, found for a fraction of the cost.
				 */
				sp.tc_max_overflow = p->tc_max_overflow;
				status = TcSearch<M>(ctx, dev, stream, &sp, &sst, &sub, &sample_done,
									 gave_up, depth + 1);
				(void) cudaStreamSynchronize(stream);
				OdpGpuArenaRelease(&sub);
				if (status != ODP_OK || *gave_up)
					goto cleanup;
			}
			if (!sample_done)
			{
				double		ignored = 0.0;

				ODP_TRY(OdpKnnStateReset(ctx, stream, &sst));
				ODP_TRY(OdpKnnAccumulate(ctx, dev, stream, &sp, &sst, &ignored));
			}
		}
		TC_MARK("threshold");
		if (teamed)
		{
			/* the k-th sample distances of every row, each from its part */
			TcLaunchKth(stream, sst.dist, sst.count, ks, rn, d_kth + r0);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the threshold gather kernel");
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(team->kth + r0, d_kth + r0, (size_t) rn * sizeof(float),
											  cudaMemcpyDeviceToHost, stream),
						 "copying the thresholds to the other devices");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the thresholds to the other devices");
			if (!odp_meeting_attend(ctx, team->meeting))
			{
				status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
				goto cleanup;
			}
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(d_kth, team->kth, (size_t) nq * sizeof(float),
											  cudaMemcpyHostToDevice, stream),
						 "copying the other devices' thresholds");
			TC_MARK("exchange");
		}

		/* 2. the filter */
		memset(&qa, 0, sizeof(qa));
		qa.x = p->queries + qf * dims;
		qa.norms = M == ODP_METRIC_COSINE ? p->query_norms + qf : NULL;
		qa.rows = nq;
		qa.padded = qtiles * qbm;
		qa.dims = dims;
		qa.dp = dp;
		qa.tr = wg ? TC_WG_BM : 0;
		qa.bk = dp;
		qa.mean = euclid ? d_mean : NULL;
		qa.e = e;
		qa.dist = sst.dist;
		qa.count = sst.count;
		qa.ks = ks;
		qa.kth = d_kth;
		qa.out = d_qt;
		qa.thr = d_thr;
		qa.alpha = d_alpha;
		qa.bad = d_flags + 1;
		TcLaunchQueryRows<M>(stream, qa);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the query copy kernel");
		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_count, 0, (size_t) nq * sizeof(int32_t), stream),
					 "clearing filter counts");
		if (sym)
		{
			TcLaunchMirror(stream, d_thr, d_cw, nq, qa.padded, nc_pad, d_rw, d_cv);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the mirror kernel");
		}
		TC_MARK("q-prepare");
		memset(&fa, 0, sizeof(fa));
		fa.q = d_qt;
		fa.c = d_ct;
		fa.thr = d_thr;
		fa.alpha = d_alpha;
		fa.cw = d_cw;
		fa.tiles = (int) tiles;
		fa.ctiles = ctiles;
		fa.dp = dp;
		fa.count = d_count;
		fa.list = d_list;
		fa.rw = d_rw;
		fa.cv = d_cv;
		if (teamed)
			TcTeamGroups(groups, tiles, qbm, qtiles, team->parts, part, &gfirst, &glast);
		else
		{
			gfirst = 0;
			glast = groups;
		}
		for (int64_t g0 = gfirst, ng = 0; g0 < glast; g0 += ng)
		{
			int64_t		gx = qtiles;	/* query blocks of the launch */

			ng = glast - g0 < per_launch ? glast - g0 : per_launch;
			if (sym)
			{
				/*
				 * The symmetric filter's group g has work for the query
				 * blocks up to its last tile only: a launch takes groups
				 * until that work reaches a full launch's, and only those
				 * blocks (else its early launches would leave most SMs
				 * idle, and every launch end on a partial wave).
				 */
				const int64_t per_block = (int64_t) qbm * tiles * TC_BN * dp;
				int64_t		work = 0;

				for (ng = 0; g0 + ng < glast && ng < 65535 &&
					 (ng == 0 || work < TC_LAUNCH_WORK); ng++)
				{
					gx = TcGroupBlocks(g0 + ng, tiles, qbm, qtiles);
					work += gx * per_block;
				}
			}
			if (odp_cancel_requested(ctx))
			{
				status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
				goto cleanup;
			}
			fa.group0 = g0;
			filter<<<dim3((unsigned) gx, (unsigned) ng), wg ? TC_WG_THREADS : TC_THREADS, smem, stream>>>(fa);
			ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the tensor-core filter kernel");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "running the tensor-core filter kernel");
		}
		TC_MARK("filter");
#ifdef ODP_TC_TRACE
		{
			int32_t    *cnt = (int32_t *) malloc((size_t) nq * sizeof(int32_t));
			double		sum = 0.0;
			int32_t		mx = 0;

			if (cnt != NULL &&
				cudaMemcpy(cnt, d_count, (size_t) nq * sizeof(int32_t), cudaMemcpyDeviceToHost) == cudaSuccess)
			{
				for (int64_t i = 0; i < nq; i++)
				{
					sum += cnt[i];
					mx = cnt[i] > mx ? cnt[i] : mx;
				}
				fprintf(stderr, "tc: lists: mean %.1f, max %d, sample %lld\n",
						sum / (double) nq, (int) mx, (long long) s);
			}
			free(cnt);
			trace_t = odp_now_ms();
		}
#endif
		/* 3. exact distances of the passers */
		memset(&ra, 0, sizeof(ra));
		ra.q = p->queries;
		ra.qn = p->query_norms;
		ra.c = p->cands;
		ra.cn = p->cand_norms;
		ra.q_base = p->query_base + qf;
		ra.q_first = qf;
		ra.c_base = p->cand_base;
		ra.nq = nq;
		ra.dims = dims;
		ra.k = state->k;
		ra.exclude_self = p->exclude_self ? 1 : 0;
		ra.count = d_count;
		ra.list = d_list;
		/* a teamed part's lists hold its share of the pairs: short ones are no fault */
		ra.sd = teamed ? fst.dist : state->dist;
		ra.si = teamed ? fst.index : state->index;
		ra.sn = teamed ? fst.count : state->count;
		ra.overflow = d_flags;
		ra.over = d_over;
		ra.bad = teamed ? d_flags + 2 : d_flags + 1;
		TcLaunchRefine<M>(stream, ra);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the refine kernel");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(flags, d_flags, 2 * sizeof(int), cudaMemcpyDeviceToHost, stream),
					 "reading the filter's flags");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "refining the filter's candidates");
		TC_MARK("refine");
		if (p->tc_max_overflow > 0.0 &&
			(double) flags[0] > p->tc_max_overflow * (double) nq)
		{
#ifdef ODP_TC_TRACE
			fprintf(stderr, "tc%s: %d of %lld lists overflowed: giving up\n",
					depth > 0 ? " (sample)" : "", flags[0], (long long) nq);
#endif
			*gave_up = true;
			goto cleanup;		/* *done stays false */
		}
		if (flags[0] != 0)
		{
			/*
			 * The queries whose list overflowed (listed by the refine
			 * kernel) scan every candidate, a slice of them per launch:
			 * on data of copies that is all of them, and a cancel request
			 * must not wait for a whole chunk.
			 */
			for (int64_t off = 0; off < flags[0]; off += TC_SCAN_QUERIES)
			{
				const int64_t n = flags[0] - off < TC_SCAN_QUERIES ? flags[0] - off : TC_SCAN_QUERIES;

				if (odp_cancel_requested(ctx))
				{
					status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
					goto cleanup;
				}
				TcLaunchScan<M>(stream, ra, d_over + off, n, p->nc);
				ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the scan kernel");
				ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "scanning the overflowed queries");
			}
			ODP_CUDA_TRY(ctx, cudaMemcpyAsync(flags + 1, d_flags + 1, sizeof(int), cudaMemcpyDeviceToHost, stream),
						 "reading the filter's flags");
			ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "scanning the overflowed queries");
			odp_gpu_knn_tc_scans += flags[0];
#ifdef ODP_TC_TRACE
			fprintf(stderr, "tc: %d queries overflowed\n", flags[0]);
#endif
			TC_MARK("scan");
			flags[0] = 0;
			ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_flags, 0, sizeof(int), stream), "clearing flags");
		}
		if (flags[1] != 0)
			return odp_fail(ctx, ODP_ERR_INTERNAL,
							"the tensor-core filter kept fewer than k = %d candidates", state->k);
	}
	if (teamed)
	{
		ODP_TRY(TcTeamMerge(ctx, dev, stream, team, part, r0, rn, &fst, state,
							d_rd, d_ri, d_rc, d_flags + 2));
		TC_MARK("merge");
		/* the parts count at once */
		(void) __atomic_fetch_add(&odp_gpu_knn_tc_team, 1, __ATOMIC_RELAXED);
	}
	*done = true;
	if (sym)
		odp_gpu_knn_tc_symmetric++;
	if (wg)
		odp_gpu_knn_tc_warpgroup++;
	if (depth == 0)
		odp_gpu_knn_tc_chunks++;
	else
		odp_gpu_knn_tc_samples++;
cleanup:
	return status;
}

/* TcSearch of p's metric at depth 0. */
static OdpStatus
TcSearchMetric(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
			   const OdpKnnProblem *p, OdpKnnState *state, OdpGpuArena *arena,
			   bool *done, bool *gave_up)
{
	switch (p->metric)
	{
		case ODP_METRIC_EUCLIDEAN:
			return TcSearch<ODP_METRIC_EUCLIDEAN>(ctx, dev, stream, p, state, arena, done, gave_up, 0);
		case ODP_METRIC_SQEUCLIDEAN:
			return TcSearch<ODP_METRIC_SQEUCLIDEAN>(ctx, dev, stream, p, state, arena, done, gave_up, 0);
		case ODP_METRIC_COSINE:
			return TcSearch<ODP_METRIC_COSINE>(ctx, dev, stream, p, state, arena, done, gave_up, 0);
		case ODP_METRIC_INNER_PRODUCT:
			return TcSearch<ODP_METRIC_INNER_PRODUCT>(ctx, dev, stream, p, state, arena, done, gave_up, 0);
		default:
			return ODP_OK;
	}
}

/* See knn_gpu_tc.cuh. */
OdpStatus
OdpKnnTcSearch(OdpContext *ctx, const OdpGpuDevice *dev, cudaStream_t stream,
			   const OdpKnnProblem *p, OdpKnnState *state, size_t budget,
			   bool *done, double *compute_ms)
{
	OdpGpuArena arena;
	OdpStatus	status = ODP_OK;
	bool		gave_up = false;
	double		t0 = odp_now_ms();
	OdpKnnProblem alone;
	bool		all;

	*done = false;
	if (!OdpKnnTcEligible(p, state->k) || state->rows != p->nq)
	{
		/* a team part that cannot run the filter says so at once */
		if (p->team != NULL && !odp_knn_team_join(ctx, p->team, p->team_part, false, &all))
			return odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
		return ODP_OK;
	}
	OdpGpuArenaInit(&arena, budget);
	status = TcSearchMetric(ctx, dev, stream, p, state, &arena, done, &gave_up);
	if (status == ODP_OK && !*done && !gave_up && p->team != NULL)
	{
		/* the pairs were not shared: the part's own rows, alone */
		if (!odp_knn_team_join(ctx, p->team, p->team_part, false, &all))
			status = odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
		else
		{
			(void) cudaStreamSynchronize(stream);
			OdpGpuArenaRelease(&arena);
			OdpGpuArenaInit(&arena, budget);
			alone = *p;
			alone.team = NULL;
			status = TcSearchMetric(ctx, dev, stream, &alone, state, &arena, done, &gave_up);
		}
	}
	if (gave_up)
		odp_gpu_knn_tc_give_ups++;
	/* nothing may still use what is freed */
	(void) cudaStreamSynchronize(stream);
	OdpGpuArenaRelease(&arena);
	*compute_ms += odp_now_ms() - t0;
	return status;
}
