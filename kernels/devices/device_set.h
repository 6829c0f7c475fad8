/*-------------------------------------------------------------------------
 *
 * device_set.h
 *	  The set of GPUs one call spreads its work over: which devices, the
 *	  memory budget of each part, one host thread per part, cancel across
 *	  all of them, and one status for the caller.
 *
 * An analytic that spreads its work resolves the set (OdpDeviceSetResolve)
 * and, where it has more than one part, splits its problem into as many
 * independent sub-problems and runs them with OdpDeviceSetRun: part p runs
 * on its own thread with its own OdpContext, whose gpu_id is the part's
 * device and whose gpu_memory_limit is the part's budget, through the very
 * GPU path one device runs (which makes the part's device current, creates
 * its stream, takes every allocation from its own arena and frees it on
 * every path).  A set of one part is run exactly as before the set
 * existed, by the caller, on its own thread.
 *
 * Threads.  The parts' threads start with every signal blocked and never
 * call the caller's callbacks: the caller's thread polls ctx->cancel while
 * they run and relays a stop through an atomic flag that the parts' own
 * cancel callbacks read, so every part stops at its next poll (between
 * tiles, as one device does).  When a part fails, the others are stopped
 * the same way and the call reports the first part's real failure, with
 * the device named; the caller's thread may also run a pump (e.g. to hand
 * pairs to the caller in order, pair_relay.h) while it waits.  The parts
 * share the caller's inputs and copy them unpinned (gpu_runtime.cuh,
 * OdpGpuPinHost).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/devices/device_set.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DEVICE_SET_H
#define ODP_DEVICE_SET_H

#include "common/engine_internal.h"

#ifdef __cplusplus
extern "C"
{
#endif

/* The parts of one call, each a device ordinal with its budget. */
typedef struct OdpDeviceSet
{
	int			count;			/* parts, 1 .. ODP_MAX_GPUS */
	int			ids[ODP_MAX_GPUS];	/* CUDA ordinal of each part */
	size_t		budget[ODP_MAX_GPUS];	/* the part's gpu_memory_limit */
} OdpDeviceSet;

/*
 * Resolves ctx's device list into *set: probes CUDA, checks every ordinal
 * (ODP_ERR_INVALID_ARGUMENT naming a missing one, ODP_ERR_NO_GPU without a
 * usable GPU).  A device named once keeps ctx->gpu_memory_limit as its
 * budget (OdpGpuBegin then caps it at 90% of its free memory, as for one
 * device); a device named c times gives each of its parts a c-th of
 * min(limit, 90% of its free memory).
 */
extern OdpStatus OdpDeviceSetResolve(OdpContext *ctx, OdpDeviceSet *set);

/*
 * Runs part p of a split call on its own thread.  pctx is the part's
 * context (device, budget, cancel); fn reports failure in it.  May run
 * concurrently with the other parts: fn must touch only its own outputs.
 */
typedef OdpStatus (*OdpPartFn) (void *arg, int part, OdpContext *pctx);

/*
 * Called on the caller's thread, about every millisecond, while parts
 * run; returning false stops every part (the call then ends with
 * ODP_ERR_CANCELLED, "the receiver stopped the call").  Called once with
 * stop set when the run is being stopped (cancel, or a part failed): it
 * must then release any part waiting on it and return false.
 */
typedef bool (*OdpPumpFn) (void *arg, bool stop);

/*
 * Runs fn for every part of set concurrently, one thread each, and waits
 * for all of them, polling ctx's cancel callback (and pump, when not NULL)
 * meanwhile.  Returns ODP_OK when every part succeeded; otherwise the
 * first part's failure by part order that was not merely a stop (its
 * message prefixed with the device), else ODP_ERR_CANCELLED.  ctx's
 * timings become the slowest part's, its chunks the sum.
 */
extern OdpStatus OdpDeviceSetRun(OdpContext *ctx, const OdpDeviceSet *set,
								 OdpPartFn fn, void *arg, OdpPumpFn pump,
								 void *pump_arg);

/*
 * The inputs a split's parts share, page-locked once for every device
 * (the parts never page-lock them themselves: OdpGpuPinHost), and the time
 * that took.  Zero it, pin each input, run the parts, then release.
 */
typedef struct OdpSharedInputs
{
	int			count;
	void	   *pinned[2];
	double		ms;
} OdpSharedInputs;

/* Page-locks bytes at ptr for every device, where it repays (at most two). */
extern void OdpSharedInputsPin(OdpContext *ctx, OdpSharedInputs *in,
							   const void *ptr, size_t bytes);

/*
 * Unlocks them after OdpDeviceSetRun, whose timings are its parts': the
 * locking's time is added to ctx->transfer_ms, as is the unlocking's.
 */
extern void OdpSharedInputsRelease(OdpContext *ctx, OdpSharedInputs *in);

/*
 * Whether a call whose one device's compute is estimated at
 * one_device_ms spreads over set: set has several parts and the estimate
 * reaches ctx->split_min_ms (below it, two H200s measured no faster).
 */
extern bool OdpDeviceSetWorth(const OdpContext *ctx, const OdpDeviceSet *set,
							  double one_device_ms);

/*
 * A meeting place of a split call's parts (opaque): every part attends
 * every meeting, and none goes on before all have come.
 */
typedef struct OdpMeeting OdpMeeting;

/* A meeting place for parts parts; NULL without memory. */
extern OdpMeeting *odp_meeting_make(int parts);
extern void odp_meeting_free(OdpMeeting *m);

/*
 * Waits until every part has come to this meeting: true, or false when
 * the run was stopped meanwhile (a part failed or the call was cancelled:
 * pctx's cancel callback, as OdpDeviceSetRun sets it).
 */
extern bool odp_meeting_attend(OdpContext *pctx, OdpMeeting *m);

/*
 * Splits rows 0 .. rows-1 into parts contiguous ranges, part p taking
 * [first[p], first[p + 1]); with triangle, ranges are sized so that each
 * holds about the same share of the pairs (a, b), a < b, whose a lies in
 * it.  Boundaries are multiples of align (>= 1) where the rows allow.
 * first must hold parts + 1 entries.
 */
extern void OdpSplitRows(int64_t rows, int parts, bool triangle,
						 int64_t align, int64_t *first);

#ifdef __cplusplus
}
#endif

#endif							/* ODP_DEVICE_SET_H */
