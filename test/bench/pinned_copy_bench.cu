/*-------------------------------------------------------------------------
 *
 * pinned_copy_bench.cu
 *	  The bus's host-to-device speed, the reference for the data-path
 *	  benchmark's transfer phase (test/bench/datapath_bench.sh): a plain
 *	  cudaMemcpy from cudaHostAlloc'd (pinned) memory, and from malloc'd
 *	  (pageable) memory for comparison, of 64 MB and 512 MB, each the best
 *	  of 5 copies after one untimed copy.
 *
 * Prints one line per measure, "NAME GB/s" (GB = 10^9 bytes):
 *	  pinned_64MB 52.10
 *	  pinned_512MB 53.02
 *	  pageable_64MB 21.40
 *	  pageable_512MB 20.93
 * on device 0 (CUDA_VISIBLE_DEVICES picks another); exits 1 with a
 * message on stderr where CUDA fails.
 *
 * Build: nvcc -O2 -o pinned_copy_bench test/bench/pinned_copy_bench.cu
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/bench/pinned_copy_bench.cu
 *
 *-------------------------------------------------------------------------
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 5

static void
check(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "pinned_copy_bench: %s: %s\n", what, cudaGetErrorString(err));
	exit(1);
}

/*
 * The best of REPS copies of bytes from host to dev, in GB/s; events on
 * the stream time the copy alone, not the call's return.
 */
static double
best_gbps(void *dev, const void *host, size_t bytes)
{
	cudaEvent_t start,
				stop;
	float		best_ms = -1;

	check(cudaEventCreate(&start), "cudaEventCreate");
	check(cudaEventCreate(&stop), "cudaEventCreate");
	/* the first copy of a buffer pays its first touch, not the bus */
	check(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
	for (int i = 0; i < REPS; i++)
	{
		float		ms;

		check(cudaEventRecord(start, 0), "cudaEventRecord");
		check(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
		check(cudaEventRecord(stop, 0), "cudaEventRecord");
		check(cudaEventSynchronize(stop), "cudaEventSynchronize");
		check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
		if (best_ms < 0 || ms < best_ms)
			best_ms = ms;
	}
	cudaEventDestroy(start);
	cudaEventDestroy(stop);
	return (double) bytes / (best_ms / 1000.0) / 1e9;
}

int
main(void)
{
	const size_t sizes[] = {(size_t) 64 << 20, (size_t) 512 << 20};
	const size_t largest = sizes[1];
	void	   *dev;
	void	   *pinned;
	void	   *pageable;

	check(cudaSetDevice(0), "cudaSetDevice");
	check(cudaMalloc(&dev, largest), "cudaMalloc");
	check(cudaHostAlloc(&pinned, largest, cudaHostAllocDefault), "cudaHostAlloc");
	pageable = malloc(largest);
	if (pageable == NULL)
	{
		fprintf(stderr, "pinned_copy_bench: out of host memory\n");
		return 1;
	}
	/* written once, so that no copy reads pages never touched */
	memset(pinned, 1, largest);
	memset(pageable, 1, largest);

	for (int s = 0; s < 2; s++)
		printf("pinned_%zuMB %.2f\n", sizes[s] >> 20, best_gbps(dev, pinned, sizes[s]));
	for (int s = 0; s < 2; s++)
		printf("pageable_%zuMB %.2f\n", sizes[s] >> 20, best_gbps(dev, pageable, sizes[s]));

	free(pageable);
	check(cudaFreeHost(pinned), "cudaFreeHost");
	check(cudaFree(dev), "cudaFree");
	return 0;
}
