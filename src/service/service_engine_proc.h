/*-------------------------------------------------------------------------
 *
 * service_engine_proc.h
 *	  The worker's side of the engine process: start, messages, end, kill,
 *	  watchdog (service_engine_proc.c).  Only the service's worker calls
 *	  these.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_engine_proc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_SERVICE_ENGINE_PROC_H
#define ODP_SERVICE_ENGINE_PROC_H

#include "service/service_engine.h"

/*
 * Starts the engine program with the engine area (and the staging area)
 * and a socket to this process; returns its pid, or 0 with why saying
 * why not.  It then initialises its devices and sends READY.
 */
extern int	OdpEngineProcStart(char *why, size_t whylen);

/* The worker's end of the socket, to wait on; -1 when there is none. */
extern int	OdpEngineProcSocket(void);

/* Sends a message; false when the process is gone or going. */
extern bool OdpEngineProcSend(const OdpEngineMsg *msg);

/* Takes one message without waiting; false when none is there. */
extern bool OdpEngineProcReceive(OdpEngineMsg *msg);

/*
 * Whether the process ended (waiting for it when wait), with why saying
 * how; the socket is closed then.  false when it runs or there is none.
 */
extern bool OdpEngineProcReap(bool wait, char *why, size_t whylen);

/* Kills it (SIGKILL); nothing it sends is read from now on. */
extern void OdpEngineProcKill(void);

/* Its pid; 0 when there is none (or it ended and was reaped). */
extern int	OdpEngineProcPid(void);

/*
 * Its life.  OdpEngineStart starts one, telling it the devices to hold
 * (odp_gpu.service_engine, odp_gpu.devices); a failure is logged and
 * retried.  OdpEngineWatch, on every turn of the worker's loop, reaps an
 * ended process, kills a hung one (odp_gpu.engine_timeout) and starts the
 * next when it is due (at once, at most one start a second, backing off
 * after starts that never became ready).  OdpEngineRestart kills the one
 * running, for why.  When a process ends or is killed, the requests it ran
 * fail with a message saying how (the slot's lost), their backends woken,
 * and the server log says so.  OdpEngineReady, at its READY, returns the
 * milliseconds its start took.
 */
extern void OdpEngineStart(void);
extern void OdpEngineWatch(void);
extern void OdpEngineRestart(const char *why);
extern double OdpEngineReady(void);

#endif							/* ODP_SERVICE_ENGINE_PROC_H */
