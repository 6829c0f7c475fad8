/*-------------------------------------------------------------------------
 *
 * service_engine_proc.h
 *	  The worker's side of the engine process: start, messages, end, kill
 *	  (service_engine_proc.c).  Only the service's worker calls these.
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

#endif							/* ODP_SERVICE_ENGINE_PROC_H */
