/*-------------------------------------------------------------------------
 *
 * gpu_pieces.cu
 *	  Device copies of an input made piece by piece as it arrives
 *	  (include/odp_resident.h, OdpPieceCopies): the GPU service's inputs
 *	  that stream through a slot's page-locked ring.
 *
 * Each piece is one asynchronous copy per device, queued before the
 * engine thread copies the same piece to its host buffer: the bus moves
 * it while the CPU does, and the wait after the host copy rarely waits.
 * Any CUDA error marks the copies failed; the call then copies its host
 * buffer as it would without them, and a sticky error shows there.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_pieces.cu
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include <cuda_runtime.h>

#include "common/engine_internal.h"
#include "gpu/gpu_runtime.cuh"
#include "include/odp_resident.h"

struct OdpPieceCopies
{
	int			n;
	int			ordinal[ODP_MAX_GPUS];
	char	   *copy[ODP_MAX_GPUS];
	cudaStream_t stream[ODP_MAX_GPUS];
	size_t		bytes;
	bool		failed;
};

/* Marks the copies failed and clears the error (a sticky one stays). */
static bool
PiecesFailed(OdpPieceCopies *pc)
{
	(void) cudaGetLastError();
	pc->failed = true;
	return false;
}

/* See odp_resident.h. */
extern "C" OdpPieceCopies *
odp_piece_copies_begin(const int *ordinals, int n, size_t bytes, const void *source,
					   size_t source_bytes)
{
	OdpPieceCopies *pc;

	if (n <= 0 || n > ODP_MAX_GPUS || bytes == 0 || !OdpGpuHostLocked(source, source_bytes))
		return NULL;
	pc = (OdpPieceCopies *) calloc(1, sizeof(OdpPieceCopies));
	if (pc == NULL)
		return NULL;
	pc->bytes = bytes;
	for (int i = 0; i < n; i++)
	{
		if (cudaSetDevice(ordinals[i]) != cudaSuccess ||
			cudaMalloc((void **) &pc->copy[i], bytes) != cudaSuccess)
			break;
		pc->ordinal[i] = ordinals[i];
		pc->n = i + 1;
		if (cudaStreamCreateWithFlags(&pc->stream[i], cudaStreamNonBlocking) != cudaSuccess)
			break;
	}
	if (pc->n < n || pc->stream[n - 1] == NULL)
	{
		(void) PiecesFailed(pc);
		odp_piece_copies_end(pc);
		return NULL;
	}
	return pc;
}

/* See odp_resident.h. */
extern "C" bool
odp_piece_copies_add(OdpPieceCopies *pc, size_t offset, const void *src, size_t len)
{
	if (pc->failed || offset > pc->bytes || len > pc->bytes - offset)
		return PiecesFailed(pc);
	for (int i = 0; i < pc->n; i++)
	{
		if (cudaSetDevice(pc->ordinal[i]) != cudaSuccess ||
			cudaMemcpyAsync(pc->copy[i] + offset, src, len, cudaMemcpyHostToDevice,
							pc->stream[i]) != cudaSuccess)
			return PiecesFailed(pc);
	}
	return true;
}

/* See odp_resident.h. */
extern "C" bool
odp_piece_copies_wait(OdpPieceCopies *pc)
{
	for (int i = 0; i < pc->n; i++)
	{
		if (pc->stream[i] != NULL &&
			(cudaSetDevice(pc->ordinal[i]) != cudaSuccess ||
			 cudaStreamSynchronize(pc->stream[i]) != cudaSuccess))
			return PiecesFailed(pc);
	}
	return !pc->failed;
}

/* See odp_resident.h. */
extern "C" int
odp_piece_copies_views(OdpPieceCopies *pc, const void *host, OdpResidentArray *out)
{
	if (!odp_piece_copies_wait(pc))
		return 0;
	for (int i = 0; i < pc->n; i++)
	{
		out[i].host = (const char *) host;
		out[i].bytes = pc->bytes;
		out[i].copy = pc->copy[i];
		out[i].ordinal = pc->ordinal[i];
	}
	return pc->n;
}

/* See odp_resident.h. */
extern "C" void
odp_piece_copies_end(OdpPieceCopies *pc)
{
	if (pc == NULL)
		return;
	for (int i = 0; i < pc->n; i++)
	{
		if (cudaSetDevice(pc->ordinal[i]) != cudaSuccess)
			continue;
		if (pc->stream[i] != NULL)
		{
			(void) cudaStreamSynchronize(pc->stream[i]);
			(void) cudaStreamDestroy(pc->stream[i]);
		}
		(void) cudaFree(pc->copy[i]);
	}
	(void) cudaGetLastError();
	free(pc);
}
