/*-------------------------------------------------------------------------
 *
 * gpu_wgmma.cuh
 *	  Hopper (sm_90a) primitives: warpgroup matrix products from shared
 *	  memory (wgmma), bulk copies from global memory (the TMA unit) and the
 *	  shared-memory barriers (mbarrier) that say when a copy has landed or
 *	  a slot may be refilled.
 *
 * Only code compiled for sm_90a has them: everywhere else
 * ODP_GPU_HAVE_WGMMA is 0 and the functions are empty, so a kernel built
 * on them must never be launched there.  A caller learns which code its
 * device runs from a kernel that returns ODP_GPU_HAVE_WGMMA (a build for
 * sm_90 alone would run the compute_90 code on an H100, without them).
 *
 * Operands sit in shared memory as "core matrices" of 8 rows x 16 bytes
 * (8 halves), each 128 contiguous bytes, without swizzling: for a K-major
 * operand the leading byte offset is the distance between core matrices
 * adjacent in K (128 here: a row group's K-chunks follow each other), the
 * stride byte offset the distance between row groups.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_wgmma.cuh
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_GPU_WGMMA_CUH
#define ODP_GPU_WGMMA_CUH

#include <stdint.h>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ODP_GPU_HAVE_WGMMA 1
#else
#define ODP_GPU_HAVE_WGMMA 0
#endif

/*
 * Descriptor of a K-major half-precision operand at shared address addr
 * whose row groups of 8 lie sbo bytes apart (K-chunks 128 bytes apart).
 */
static __device__ __forceinline__ uint64_t
OdpWgDesc(uint32_t addr, uint32_t sbo)
{
	return (uint64_t) ((addr & 0x3FFFF) >> 4) |
		((uint64_t) (128 >> 4) << 16) |
		((uint64_t) (sbo >> 4) << 32);
}

/*
 * d (+)= A B^T for A 64 x 16 and B 128 x 16 halves (descriptors da, db),
 * float32 accumulation; accumulate = 0 ignores d's values.  Thread t of
 * the warpgroup holds, for column block j, d[j][0..1] = row (t / 32) * 16
 * + (t % 32) / 4, columns 8 j + 2 (t % 4) + 0..1, and d[j][2..3] the same
 * columns 8 rows further (the m16n8 accumulator layout, per warp).
 */
static __device__ __forceinline__ void
OdpWgMma64x128(float (&d)[16][4], uint64_t da, uint64_t db, int accumulate)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
				 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
				 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
				 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
				 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
				 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
				 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
				 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),
				   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
				   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),
				   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
				   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),
				   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
				   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),
				   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),
				   "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),
				   "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),
				   "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]),
				   "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),
				   "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),
				   "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),
				   "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),
				   "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
				 : "l"(da), "l"(db), "r"(accumulate));
#endif
}

/* Orders the warpgroup's register accesses before the products that follow. */
static __device__ __forceinline__ void
OdpWgFence(void)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}

/* Closes the products issued so far into a group. */
static __device__ __forceinline__ void
OdpWgCommit(void)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}

/* Waits until at most N groups of products run. */
template <int N>
static __device__ __forceinline__ void
OdpWgWait(void)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
#endif
}

/*
 * Initialises n shared-memory barriers from addr on (8 bytes each), each
 * completing a phase after count arrivals.
 */
static __device__ __forceinline__ void
OdpMbarInit(uint32_t addr, int n, int count)
{
#if ODP_GPU_HAVE_WGMMA
	for (int i = 0; i < n; i++)
		asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(addr + 8 * i), "r"(count) : "memory");
#endif
}

/* Makes the initialised barriers visible to the copy unit (then a block barrier). */
static __device__ __forceinline__ void
OdpMbarInitFence(void)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/*
 * Arrives at the barrier, announcing bytes (0: none) that copies will
 * bring in this phase.
 */
static __device__ __forceinline__ void
OdpMbarArrive(uint32_t addr, uint32_t bytes)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(addr), "r"(bytes) : "memory");
#endif
}

/*
 * Waits until the barrier's phase of the given parity has completed: the
 * try-wait instruction retried, inside the assembly.
 */
static __device__ __forceinline__ void
OdpMbarWait(uint32_t addr, uint32_t parity)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("{\n.reg .pred p;\n"
				 "ODP_MBAR_WAIT:\n"
				 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
				 "@!p bra ODP_MBAR_WAIT;\n}\n"
				 :: "r"(addr), "r"(parity) : "memory");
#endif
}

/*
 * Copies bytes (a multiple of 16, both addresses 16-byte aligned) from
 * global src to shared dst; their arrival completes the barrier's
 * transaction count.
 */
static __device__ __forceinline__ void
OdpBulkCopy(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
#if ODP_GPU_HAVE_WGMMA
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
				 :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
#endif
}

#endif							/* ODP_GPU_WGMMA_CUH */
