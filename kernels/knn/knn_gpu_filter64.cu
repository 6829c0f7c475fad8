/*-------------------------------------------------------------------------
 *
 * knn_gpu_filter64.cu
 *	  One device's part of the float64 k-NN filter (knn_wide_filter.c,
 *	  where the bound is proven, steps 1 to 5): the float64 rows go up
 *	  once; their float32 copies and error norms R are made on the device
 *	  (step 1); the float32 k-NN runs on those copies where they lie
 *	  (OdpKnnRunAll with rows on the device); and each finished chunk of
 *	  float32 lists is measured again in float64, cut to its k nearest and
 *	  certified on the device (steps 3 to 5), so that only the k nearest
 *	  and a certificate per query come back.
 *
 * The refinement: a block per query (a warp for lists of up to 32
 * entries) computes odp_distance64 of the listed pairs (odp_dist_step64
 * in index order, odp_dist_finish64, the rows' odp_row_norm64 for cosine;
 * no FMA, the ODP_D* helpers round every operation as the CPU does), and
 * each entry's rank among the list by (distance, index) places it: the
 * lists hold distinct indexes, so the ranks are 0 .. kp-1 and those below
 * k are the sorted top k.
 *
 * The bounds themselves (R, the maxima, LB) need not match the CPU bit for
 * bit: each is pushed outward by far more than any rounding or
 * contraction can move it, and a query they fail to certify only takes
 * the exact kernel.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/knn/knn_gpu_filter64.cu
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_check.cuh"
#include "gpu/gpu_runtime.cuh"
#include "include/odp_distance.h"
#include "knn/knn_gpu_run.cuh"
#include "knn/knn_internal.h"

/* Queries refined per launch, so that the cancel callback is polled. */
#define F64_QUERIES_PER_LAUNCH	((int64_t) 1 << 16)
/* Rows converted per block (a warp each). */
#define F64_CONVERT_WARPS		8

/* The maxima the conversion reduces (doubles >= 0 as ordered bit patterns). */
enum
{
	F64_MAX_C,					/* largest |c| */
	F64_MAX_R_CAND,				/* largest R of a candidate */
	F64_MAX_NORM,				/* largest row norm (cosine) */
	F64_MAXIMA
};

/* x, less than the exact value of the operation that rounded to it. */
static __device__ double
F64Down(double x)
{
	return x - fabs(x) * 0x1p-50 - 0x1p-1000;
}

/* x, more than the exact value of the operation that rounded to it. */
static __device__ double
F64Up(double x)
{
	return x + fabs(x) * 0x1p-50 + 0x1p-1000;
}

/*
 * LB of one query (steps 3 and 4 of knn_wide_filter.c) from t, the kp-th
 * float32 distance of its list, and r, its R plus the candidates' largest.
 */
static __device__ double
F64Lower(OdpMetric metric, int dims, double t, double r)
{
	const double D = (double) dims;
	const double g = F64Up(2.0 * (D + 4.0) * 0x1p-24);
	const double a0 = F64Up(D * 0x1p-60);
	const double g64 = F64Up(2.0 * (D + 4.0) * 0x1p-53);
	const double a64 = 0x1p-500;
	double		l,
				lb;

	l = F64Down(t - a0);
	if (!(l > 0.0))
		return -INFINITY;
	l = F64Down(F64Down(l / F64Up(1.0 + g)) - F64Up(r));
	if (!(l > 0.0))
		return -INFINITY;
	if (metric == ODP_METRIC_SQEUCLIDEAN)
		lb = F64Down(F64Down(F64Down(l * l) * F64Down(1.0 - g64)) - a64);
	else if (metric == ODP_METRIC_COSINE)
		lb = F64Down(F64Down(F64Down(l * l) * 0.5) - F64Up((2.0 * D + 16.0) * 0x1p-52));
	else
		lb = F64Down(F64Down(l * F64Down(1.0 - g64)) - a64);
	return lb - fabs(lb) * 0x1p-40;
}

/*
 * Step 1 for rows [0, rows): y = fl32(c), c the row less the centre mu
 * (cosine, mu NULL: the row divided by its norm), and R, the metric's
 * norm of the per-coordinate bound e on |y - (x - mu)|, made an upper
 * bound of the sums' own rounding; folds |c|, R (cand_r) and the norms
 * into maxima.  A warp per row.
 */
static __global__ void
F64ConvertKernel(const double *x, const double *norms, const double *mu,
				 int64_t rows, int dims, OdpMetric metric, float *y, double *r,
				 bool cand_r, unsigned long long *maxima)
{
	const int	lane = threadIdx.x & 31;
	const int64_t row = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	const bool	cosine = mu == NULL;
	double		acc = 0.0,
				top = 0.0,
				n = 1.0;

	if (row < rows)
	{
		const double *xr = x + row * dims;
		float	   *yr = y + row * dims;

		n = cosine ? norms[row] : 1.0;
		for (int d = lane; d < dims; d += 32)
		{
			const double c = cosine ? __ddiv_rn(xr[d], n) : __dsub_rn(xr[d], mu[d]);
			const double ac = fabs(c);
			/* beyond float32's range: refused once the maxima are seen */
			const float f = ac < 0x1p100 ? __double2float_rn(c) : 0.0f;
			const double e = fabs((double) f - c) + (cosine ? 0.0 : ac * 0x1p-52);

			yr[d] = f;
			top = fmax(top, ac);
			if (metric == ODP_METRIC_CHEBYSHEV)
				acc = fmax(acc, e);
			else if (metric == ODP_METRIC_MANHATTAN)
				acc += e;
			else
				acc += e * e;
		}
	}
	for (int o = 16; o > 0; o >>= 1)
	{
		const double a = __shfl_xor_sync(0xffffffffu, acc, o);

		top = fmax(top, __shfl_xor_sync(0xffffffffu, top, o));
		acc = metric == ODP_METRIC_CHEBYSHEV ? fmax(acc, a) : acc + a;
	}
	if (lane == 0 && row < rows)
	{
		double		rr = metric == ODP_METRIC_CHEBYSHEV || metric == ODP_METRIC_MANHATTAN ?
			acc : sqrt(acc);

		rr = rr * (1.0 + 0x1p-30) + 0x1p-500 +
			(cosine ? ((double) dims + 8.0) * 0x1p-52 : 0.0);
		r[row] = rr;
		atomicMax(&maxima[F64_MAX_C], (unsigned long long) __double_as_longlong(top));
		if (cand_r)
			atomicMax(&maxima[F64_MAX_R_CAND], (unsigned long long) __double_as_longlong(rr));
		if (cosine)
			atomicMax(&maxima[F64_MAX_NORM], (unsigned long long) __double_as_longlong(n));
	}
}

/* The device side of one part: rows, copies and bounds. */
typedef struct F64Part
{
	const OdpFilter64 *f;
	int64_t		first;			/* the part's query rows [first, first + nq) */
	int64_t		nq;
	int64_t		avail;			/* candidates a query may list */
	const double *q64;			/* the part's query rows (self join: c64 + first) */
	const double *qn;
	const double *qr;			/* R of the part's queries */
	const double *c64;
	const double *cn;
	double		rmax;
	double		refine_ms;
	double		stage_d2h_ms;
} F64Part;

/*
 * Refines queries [q0, q0 + gridDim.x) of the run (see the file's
 * comment); list row i = q - q0 of the float32 lists.  Shared memory: kp
 * doubles, then kp int64_t indexes.  Writes row i of out_dist, out_index
 * (k each) and certified[i], and where sums is not NULL sums[i], the
 * list's odp_sum_ascending64 (the outlier score).
 */
static __global__ void
F64RefineKernel(const double *q64, const double *qn, const double *qr,
				const double *c64, const double *cn, int dims,
				OdpMetric metric, int kp, int k, int64_t avail, double rmax,
				const float *dist32, const int64_t *list, const int32_t *count,
				double *out_dist, int64_t *out_index, unsigned char *certified,
				double *sums)
{
	extern __shared__ double f64_smem[];
	double	   *sd = f64_smem;
	int64_t    *si = (int64_t *) (sd + kp);
	const int64_t i = blockIdx.x;
	const double *qrow = q64 + i * dims;
	const int	n = count[i] < kp ? count[i] : kp;

	for (int e = threadIdx.x; e < n; e += blockDim.x)
	{
		const int64_t j = list[i * kp + e];
		const double *crow = c64 + j * dims;
		double		acc = 0.0;

		for (int d = 0; d < dims; d++)
			acc = odp_dist_step64(metric, acc, qrow[d], crow[d]);
		sd[e] = odp_dist_finish64(metric, acc, qn ? qn[i] : 0.0, cn ? cn[j] : 0.0);
		si[e] = j;
	}
	if (n < k && threadIdx.x == 0)
		certified[i] = 0;
	__syncthreads();
	for (int e = threadIdx.x; e < n; e += blockDim.x)
	{
		const double de = sd[e];
		const int64_t ie = si[e];
		int			rank = 0;

		for (int g = 0; g < n; g++)
			if (sd[g] < de || (sd[g] == de && si[g] < ie))
				rank++;
		if (rank < k)
		{
			out_dist[i * k + rank] = de;
			out_index[i * k + rank] = ie;
		}
		if (rank == k - 1)
		{
			double		lower;

			if (n >= avail)
				lower = INFINITY;
			else if (n < kp)
				lower = -INFINITY;
			else
				lower = F64Lower(metric, dims, (double) dist32[i * kp + kp - 1],
								 F64Up(qr[i] + rmax));
			certified[i] = lower > de ? 1 : 0;
		}
	}
	if (sums != NULL)
	{
		/* the list's writes above are visible to the block after this */
		__syncthreads();
		if (threadIdx.x == 0)
			sums[i] = n < k ? 0.0 : odp_sum_ascending64(out_dist + i * k, k);
	}
}

/*
 * OdpKnnRunAll's finish hook: refines query rows [q0, q0 + nq) of the
 * float32 run and copies their k nearest (or their sums) and certificates
 * to the host.  scratch: nq * k doubles, nq * k indexes, nq sums, nq
 * certificates.
 */
static OdpStatus
F64Finish(void *arg, OdpContext *ctx, cudaStream_t stream, int64_t q0, int64_t nq,
		  const float *dist, const int64_t *index, const int32_t *count,
		  void *scratch)
{
	F64Part    *p = (F64Part *) arg;
	const OdpFilter64 *f = p->f;
	const int	dims = f->cands->dims;
	const int	k = f->k;
	double	   *d_dist = (double *) scratch;
	int64_t    *d_index = (int64_t *) (d_dist + (size_t) nq * k);
	double	   *d_sums = (double *) (d_index + (size_t) nq * k);
	unsigned char *d_cert = (unsigned char *) (d_sums + nq);
	const int64_t base = q0 - p->first;
	const int	threads = f->kp <= 32 ? 32 : 128;
	const size_t smem = (size_t) f->kp * (sizeof(double) + sizeof(int64_t));
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	for (int64_t b = 0; b < nq; b += F64_QUERIES_PER_LAUNCH)
	{
		const int64_t nb = nq - b < F64_QUERIES_PER_LAUNCH ? nq - b : F64_QUERIES_PER_LAUNCH;

		if (odp_cancel_requested(ctx))
			return odp_fail(ctx, ODP_ERR_CANCELLED, "k-NN computation cancelled by request");
		F64RefineKernel<<<(unsigned) nb, threads, smem, stream>>>(p->q64 + (base + b) * dims,
																  p->qn ? p->qn + base + b : NULL,
																  p->qr + base + b, p->c64, p->cn,
																  dims, f->metric, f->kp, k,
																  p->avail, p->rmax,
																  dist + b * f->kp,
																  index + b * f->kp,
																  count + b,
																  d_dist + b * k,
																  d_index + b * k,
																  d_cert + b,
																  f->sums ? d_sums + b : NULL);
		ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the float64 refinement");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "refining in float64");
	}
	ctx->compute_ms += odp_now_ms() - t0;
	p->refine_ms += odp_now_ms() - t0;

	t0 = odp_now_ms();
	if (f->sums != NULL)
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(f->sums + q0, d_sums, (size_t) nq * sizeof(double),
										  cudaMemcpyDeviceToHost, stream),
					 "copying the refined sums from the GPU");
	else
	{
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(f->dist + (size_t) q0 * k, d_dist,
										  (size_t) nq * k * sizeof(double),
										  cudaMemcpyDeviceToHost, stream),
					 "copying the refined lists from the GPU");
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(f->index + (size_t) q0 * k, d_index,
										  (size_t) nq * k * sizeof(int64_t),
										  cudaMemcpyDeviceToHost, stream),
					 "copying the refined lists from the GPU");
	}
	ODP_CUDA_TRY(ctx, cudaMemcpyAsync(f->certified + q0, d_cert, (size_t) nq,
									  cudaMemcpyDeviceToHost, stream),
				 "copying the certificates from the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the refined lists from the GPU");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	p->refine_ms += odp_now_ms() - t0;
	return status;
}

/* Uploads n float64 values (pinned for the copy where that pays). */
static OdpStatus
F64Upload(OdpContext *ctx, cudaStream_t stream, double *dst, const double *src, size_t n)
{
	OdpStatus	status = ODP_OK;
	void	   *pinned = OdpGpuPinHost(ctx, src, n * sizeof(double));
	double		t0 = odp_now_ms();

	ODP_CUDA_TRY(ctx, OdpGpuCopyIn(ctx, dst, src, n * sizeof(double), stream),
				 "copying the float64 rows to the GPU");
	ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "copying the float64 rows to the GPU");
cleanup:
	ctx->transfer_ms += odp_now_ms() - t0;
	OdpGpuUnpinHost(ctx, pinned);
	return status;
}

/* Converts rows of x (step 1) on stream; see F64ConvertKernel. */
static OdpStatus
F64Convert(OdpContext *ctx, cudaStream_t stream, const double *x, const double *norms,
		   const double *mu, int64_t rows, int dims, OdpMetric metric, float *y,
		   double *r, bool cand_r, unsigned long long *maxima)
{
	const int	threads = 32 * F64_CONVERT_WARPS;
	const int64_t blocks = (rows + F64_CONVERT_WARPS - 1) / F64_CONVERT_WARPS;
	OdpStatus	status = ODP_OK;

	if (rows == 0)
		return ODP_OK;
	F64ConvertKernel<<<(unsigned) blocks, threads, 0, stream>>>(x, norms, mu, rows, dims,
																metric, y, r, cand_r,
																maxima);
	ODP_CUDA_TRY_LAUNCH(ctx, stream, "launching the float32 conversion");
cleanup:
	return status;
}

/* See knn_internal.h. */
extern "C" OdpStatus
odp_gpu_knn64_filter_rows(OdpContext *ctx, const OdpFilter64 *f, int64_t first,
						  int64_t count, double stage_ms[3], bool *refused)
{
	const OdpMatrix *qm = f->queries;
	const OdpMatrix *cm = f->cands;
	const int	dims = cm->dims;
	const int64_t nc = cm->rows;
	const int64_t nq = count;
	const bool	cosine = f->metric == ODP_METRIC_COSINE;
	const bool	self = f->self_join;
	const size_t cand_bytes = (size_t) nc * dims * (sizeof(double) + sizeof(float)) +
		(size_t) nc * sizeof(double) * (cosine ? 2 : 1);
	const size_t query_bytes = self ? 0 :
		(size_t) nq * dims * (sizeof(double) + sizeof(float)) +
		(size_t) nq * sizeof(double) * (cosine ? 2 : 1);
	OdpGpuDevice dev;
	OdpGpuArena arena;
	cudaStream_t stream = NULL;
	OdpStatus	status = ODP_OK;
	double	   *d_c64 = NULL,
			   *d_cn = NULL,
			   *d_cr = NULL,
			   *d_q64 = NULL,
			   *d_qn = NULL,
			   *d_qr = NULL,
			   *d_mu = NULL;
	float	   *d_c32 = NULL,
			   *d_q32 = NULL;
	unsigned long long *d_max = NULL;
	double		maxima[F64_MAXIMA];
	double		t0 = odp_now_ms(),
				reserved;
	F64Part		part;
	OdpKnnRunOf<float> run;
	OdpMatrix	q32 = {0},
				c32 = {0};
	bool		eligible;

	*refused = false;
	memset(&arena, 0, sizeof(arena));
	stage_ms[0] = stage_ms[1] = stage_ms[2] = 0.0;
	if ((status = OdpGpuBegin(ctx, &dev)) != ODP_OK)
		return status;
	OdpGpuArenaInit(&arena, dev.budget);
	/* the copies may take half the budget; the float32 run, the rest */
	reserved = (double) cand_bytes + (double) query_bytes + 16.0 * ODP_GPU_ALLOC_ALIGN +
		(double) dims * sizeof(double);
	if (dev.budget != 0 && reserved > (double) dev.budget / 2.0)
	{
		*refused = true;
		return ODP_OK;
	}

	ODP_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				 "creating a CUDA stream");
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) nc * dims * sizeof(double),
							 "float64 candidate rows", (void **) &d_c64));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) nc * dims * sizeof(float),
							 "float32 copies of the candidates", (void **) &d_c32));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) nc * sizeof(double),
							 "the candidates' error bounds", (void **) &d_cr));
	if (cosine)
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) nc * sizeof(double),
								 "candidate norms", (void **) &d_cn));
	if (!self)
	{
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) (nq > 0 ? nq : 1) * dims * sizeof(double),
								 "float64 query rows", (void **) &d_q64));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) (nq > 0 ? nq : 1) * dims * sizeof(float),
								 "float32 copies of the queries", (void **) &d_q32));
		ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) (nq > 0 ? nq : 1) * sizeof(double),
								 "the queries' error bounds", (void **) &d_qr));
		if (cosine)
			ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) (nq > 0 ? nq : 1) * sizeof(double),
									 "query norms", (void **) &d_qn));
	}
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, (size_t) dims * sizeof(double),
							 "the centre", (void **) &d_mu));
	ODP_TRY(OdpGpuArenaAlloc(ctx, &arena, sizeof(unsigned long long) * F64_MAXIMA,
							 "the rows' maxima", (void **) &d_max));

	/* step 1: the rows up once, their float32 copies and R made here */
	ODP_TRY(F64Upload(ctx, stream, d_c64, cm->data64, (size_t) nc * dims));
	if (cosine)
		ODP_TRY(F64Upload(ctx, stream, d_cn, f->cnorms, (size_t) nc));
	if (!self && nq > 0)
	{
		ODP_TRY(F64Upload(ctx, stream, d_q64, qm->data64 + (size_t) first * dims,
						  (size_t) nq * dims));
		if (cosine)
			ODP_TRY(F64Upload(ctx, stream, d_qn, f->qnorms + first, (size_t) nq));
	}
	if (!cosine)
		ODP_TRY(F64Upload(ctx, stream, d_mu, f->mu, (size_t) dims));
	{
		double		t1 = odp_now_ms();

		ODP_CUDA_TRY(ctx, cudaMemsetAsync(d_max, 0, sizeof(unsigned long long) * F64_MAXIMA,
										  stream), "clearing the rows' maxima");
		ODP_TRY(F64Convert(ctx, stream, d_c64, d_cn, cosine ? NULL : d_mu, nc, dims,
						   f->metric, d_c32, d_cr, true, d_max));
		if (!self)
			ODP_TRY(F64Convert(ctx, stream, d_q64, d_qn, cosine ? NULL : d_mu, nq, dims,
							   f->metric, d_q32, d_qr, false, d_max));
		ODP_CUDA_TRY(ctx, cudaMemcpyAsync(maxima, d_max, sizeof(maxima),
										  cudaMemcpyDeviceToHost, stream),
					 "copying the rows' maxima from the GPU");
		ODP_CUDA_TRY(ctx, cudaStreamSynchronize(stream), "making the float32 copies");
		ctx->compute_ms += odp_now_ms() - t1;
	}

	/* eligibility (knn_wide_filter.c): no overflow in float64 or float32 */
	{
		double		bigx,
					mumax = 0.0;
		const double bigy = maxima[F64_MAX_C];

		for (int d = 0; !cosine && d < dims; d++)
			mumax = fabs(f->mu[d]) > mumax ? fabs(f->mu[d]) : mumax;
		bigx = cosine ? maxima[F64_MAX_NORM] : bigy * (1.0 + 0x1p-40) + mumax;
		bigx *= 1.0 + 0x1p-40;
		if (f->metric == ODP_METRIC_MANHATTAN || f->metric == ODP_METRIC_CHEBYSHEV)
			eligible = (double) dims * 2.0 * bigy < 0x1p120;
		else
			eligible = (double) dims * 4.0 * bigy * bigy < 0x1p120;
		eligible = eligible && bigx < 0x1p240;
	}
	stage_ms[0] = odp_now_ms() - t0;
	if (!eligible)
	{
		*refused = true;
		goto cleanup;
	}

	/* steps 2 to 5: the float32 k-NN on the copies, refined chunk by chunk */
	memset(&part, 0, sizeof(part));
	part.f = f;
	part.first = first;
	part.nq = nq;
	part.avail = nc - (self ? 1 : 0);
	part.q64 = self ? d_c64 + (size_t) first * dims : d_q64;
	part.qn = cosine ? (self ? d_cn + first : d_qn) : NULL;
	part.qr = self ? d_cr + first : d_qr;
	part.c64 = d_c64;
	part.cn = d_cn;
	part.rmax = maxima[F64_MAX_R_CAND];
	c32.rows = nc;
	c32.dims = dims;
	q32.rows = self ? nc : qm->rows;
	q32.dims = dims;
	memset(&run, 0, sizeof(run));
	run.queries = self ? &c32 : &q32;
	run.cands = &c32;
	run.self_join = self;
	/* cosine runs euclidean on the unit rows; L1 and Linf keep their own */
	run.metric = f->metric == ODP_METRIC_MANHATTAN || f->metric == ODP_METRIC_CHEBYSHEV ?
		f->metric : ODP_METRIC_EUCLIDEAN;
	run.k = f->kp;
	run.first_query = first;
	run.query_count = nq;
	run.finish_bytes_per_row = (size_t) f->k * (sizeof(double) + sizeof(int64_t)) +
		sizeof(double) + 1;
	run.finish = F64Finish;
	run.finish_arg = &part;
	run.device_cands = d_c32;
	run.device_queries = self ? NULL : d_q32;
	run.reserved_bytes = arena.used;
	t0 = odp_now_ms();
	ODP_TRY(OdpKnnRunAll<float>(ctx, &run));
	stage_ms[2] = part.refine_ms;
	stage_ms[1] = odp_now_ms() - t0 - part.refine_ms;

cleanup:
	if (stream != NULL)
	{
		(void) cudaStreamSynchronize(stream);
		(void) cudaStreamDestroy(stream);
	}
	OdpGpuArenaRelease(&arena);
	return status;
}
