/*-------------------------------------------------------------------------
 *
 * service_engine_proc.c
 *	  The worker's side of the engine process (service_engine.h): starts
 *	  the program, exchanges messages with it, sees it end, kills it, and
 *	  fails the requests it ran when it ends; the watchdog.
 *
 * The worker's loop (service_worker.c) turns it: queue and admission are
 * there, the process's life here.
 * The program is exec'd, so it inherits no mapping of the server's: only
 * the three descriptors it is given.  It dies with the worker
 * (PR_SET_PDEATHSIG), so a stopping or crashing worker leaves none behind.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_engine_proc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "service/service.h"
#include "settings.h"
#include "service/service_engine.h"
#include "service/service_engine_proc.h"
#include "service/service_shmem.h"
#include "service/service_staging.h"
#include "utils/timestamp.h"

static int	engine_sock = -1;	/* the worker's end of the socket pair */
static pid_t engine_pid = 0;

/* Moves fd to a descriptor above the engine's fixed ones (closed on exec). */
static int
EngineHighFd(int fd)
{
	return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 64);
}

/*
 * The child between fork and exec: only async-signal-safe calls.  Gives
 * the program its three descriptors and default signals, closes the rest.
 */
static void
EngineExec(const char *path, int sock, int area, int staging)
{
	char	   *argv[] = {ODP_ENGINE_TITLE, NULL};
	sigset_t	none;
	static const int defaults[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
	SIGCHLD, SIGPIPE, SIGALRM, SIGURG, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};

	/*
	 * A group of its own: the postmaster sends SIGINT, SIGTERM and SIGQUIT
	 * to its children's groups, and the worker, not the postmaster, stops
	 * the engine process; it dies with the worker.
	 */
	(void) setsid();
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the worker died before the line above: nothing to serve */
	if (getppid() == 1)
		_exit(0);
	sock = EngineHighFd(sock);
	area = EngineHighFd(area);
	staging = EngineHighFd(staging);
	if (sock < 0 || area < 0 ||
		dup2(sock, ODP_ENGINE_FD_SOCKET) < 0 || dup2(area, ODP_ENGINE_FD_AREA) < 0 ||
		(staging >= 0 && dup2(staging, ODP_ENGINE_FD_STAGING) < 0))
		_exit(126);
	if (staging < 0)
		(void) close(ODP_ENGINE_FD_STAGING);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, ODP_ENGINE_FD_STAGING + 1, ~0U, 0) != 0)
#endif
		for (int fd = ODP_ENGINE_FD_STAGING + 1; fd < 4096; fd++)
			(void) close(fd);
	for (size_t i = 0; i < lengthof(defaults); i++)
		signal(defaults[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(path, argv);
	_exit(127);
}

/* See service_engine_proc.h. */
int
OdpEngineProcStart(char *why, size_t whylen)
{
	char		path[MAXPGPATH];
	int			sv[2];
	pid_t		pid;

	Assert(engine_pid == 0);
	snprintf(path, sizeof(path), "%s/%s", pkglib_path, ODP_ENGINE_PROGRAM);
	if (access(path, X_OK) != 0)
	{
		snprintf(why, whylen, "could not execute %s: %m", path);
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
	{
		snprintf(why, whylen, "could not make a socket pair: %m");
		return 0;
	}
	pid = fork();
	if (pid < 0)
	{
		snprintf(why, whylen, "could not fork: %m");
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	if (pid == 0)
		EngineExec(path, sv[1], odp_engine_area_fd, OdpStagingFd());
	close(sv[1]);
	(void) fcntl(sv[0], F_SETFL, O_NONBLOCK);
	engine_sock = sv[0];
	engine_pid = pid;
	return (int) pid;
}

/* See service_engine_proc.h. */
int
OdpEngineProcSocket(void)
{
	return engine_sock;
}

/* See service_engine_proc.h. */
bool
OdpEngineProcSend(const OdpEngineMsg *msg)
{
	if (engine_sock < 0)
		return false;
	/* a full socket blocks briefly: messages are small and read at once */
	for (;;)
	{
		if (send(engine_sock, msg, sizeof(*msg), MSG_NOSIGNAL) == sizeof(*msg))
			return true;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
		{
			pg_usleep(100);
			continue;
		}
		return false;
	}
}

/* See service_engine_proc.h. */
bool
OdpEngineProcReceive(OdpEngineMsg *msg)
{
	ssize_t		n;

	if (engine_sock < 0)
		return false;
	n = recv(engine_sock, msg, sizeof(*msg), 0);
	return n == (ssize_t) sizeof(*msg);
}

/* Says how a process ended, from its wait status. */
static void
EngineExitText(int status, char *why, size_t whylen)
{
	if (WIFSIGNALED(status))
		snprintf(why, whylen, "was killed by signal %d (%s)", WTERMSIG(status),
				 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		snprintf(why, whylen, "could not be executed (exit code 127)");
	else if (WIFEXITED(status) && WEXITSTATUS(status) == ODP_ENGINE_EXIT_LAYOUT)
		snprintf(why, whylen, "is from another build of odp_gpu than the server's library "
				 "(install one build and restart the server)");
	else
		snprintf(why, whylen, "exited with code %d", WEXITSTATUS(status));
}

/* See service_engine_proc.h. */
bool
OdpEngineProcReap(bool wait, char *why, size_t whylen)
{
	int			status;
	pid_t		r;

	if (engine_pid == 0)
		return false;
	do
		r = waitpid(engine_pid, &status, wait ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	if (r < 0)
		snprintf(why, whylen, "could not be waited for: %m");
	else
		EngineExitText(status, why, whylen);
	engine_pid = 0;
	if (engine_sock >= 0)
		close(engine_sock);
	engine_sock = -1;
	return true;
}

/* See service_engine_proc.h. */
void
OdpEngineProcKill(void)
{
	if (engine_pid != 0)
		(void) kill(engine_pid, SIGKILL);
	/* nothing it sends from now on is read */
	if (engine_sock >= 0)
		close(engine_sock);
	engine_sock = -1;
}

/* See service_engine_proc.h. */
int
OdpEngineProcPid(void)
{
	return (int) engine_pid;
}

/*
 * The process's life as the worker sees it: when it starts (at most one
 * start a second, backing off after starts that never became ready), and
 * what its end does to the requests it ran.
 */

/* Starts at most this often... */
#define ENGINE_START_GAP_MS 1000.0
/* ...and, after starts that never became ready, at most this rarely. */
#define ENGINE_START_BACKOFF_MS 30000.0

static double engine_started_ms = 0.0;
static double engine_next_start_ms = 0.0;
static int	engine_failed_starts = 0;
/* Whether the process has been reported lost since it started. */
static bool engine_lost_reported = false;
static bool engine_ever_started = false;
/* Whether the process running (or last run) said READY. */
static bool engine_was_ready = false;

/*
 * The engine process ended, or was killed (why says how): the requests it
 * ran fail with a message saying so, and their backends are woken; queued
 * ones wait for the next process.
 */
static void
EngineLost(int pid, const char *why)
{
	char		lost[ODP_MESSAGE_LEN];
	int			failed = 0;

	if (engine_lost_reported)
		return;
	engine_lost_reported = true;
	snprintf(lost, sizeof(lost),
			 "the odp_gpu engine process (pid %d) %s while running this call; "
			 "the service starts a new one, and the calls queued behind this one run there",
			 pid, why);
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	OdpService->engine_ready = false;
	OdpService->engine_pid = 0;
	strlcpy(OdpService->engine_last_exit, why, sizeof(OdpService->engine_last_exit));
	for (int i = 0; i < OdpService->nslots; i++)
	{
		OdpServiceSlot *slot = &OdpService->slots[i];

		if (slot->state != ODP_SLOT_RUNNING || atomic_load(&slot->finished))
			continue;
		strlcpy(slot->lost, lost, sizeof(slot->lost));
		atomic_store(&slot->finished, 1);
		if (!atomic_load(&slot->abandoned))
			(void) kill(slot->backend_pid, SIGUSR1);	/* sets its latch */
		failed++;
	}
	/* a new process has new contexts: nothing left to check */
	for (int d = 0; d < OdpService->ndevices; d++)
		OdpService->devices[d].needs_check = OdpService->devices[d].checking = false;
	LWLockRelease(OdpService->lock);
	ereport(LOG,
			(errmsg("odp_gpu service: its engine process (pid %d) %s; %d running request%s failed, "
					"queued requests wait for a new engine process",
					pid, why, failed, failed == 1 ? "" : "s")));
}

/*
 * Tells the engine process, before it starts, which devices to hold: the
 * CPU engine, or those of odp_gpu.devices (every one of the host by
 * default).
 */
static void
EngineWantDevices(void)
{
	int			ids[ODP_DEVICES_MAX];
	int			listed = OdpDeviceList(ids);

	OdpEngine->cpu_engine = odp_service_engine == ODP_SERVICE_ENGINE_CPU;
	OdpEngine->staging_bytes = OdpStagingConfigured() ? OdpStagingBytes() : 0;
	OdpEngine->nwanted = -1;
	if (listed >= 0)
	{
		OdpEngine->nwanted = Min(listed, ODP_MAX_GPUS);
		memcpy(OdpEngine->wanted, ids, sizeof(int) * OdpEngine->nwanted);
	}
	OdpEngine->ndevices = 0;
}

/* See service_engine_proc.h. */
void
OdpEngineStart(void)
{
	char		why[ODP_SERVICE_WHY_LEN];
	int			pid;

	EngineWantDevices();
	atomic_store(&OdpEngine->beat_ms, (int64_t) odp_now_ms());
	engine_started_ms = odp_now_ms();
	engine_lost_reported = false;
	engine_was_ready = false;
	pid = OdpEngineProcStart(why, sizeof(why));
	if (pid == 0)
	{
		engine_failed_starts++;
		engine_next_start_ms = engine_started_ms +
			Min(ENGINE_START_GAP_MS * (1 << Min(engine_failed_starts, 5)), ENGINE_START_BACKOFF_MS);
		ereport(LOG,
				(errmsg("odp_gpu service: could not start its engine process: %s", why)));
		return;
	}
	LWLockAcquire(OdpService->lock, LW_EXCLUSIVE);
	OdpService->engine_pid = pid;
	OdpService->engine_started_at = GetCurrentTimestamp();
	if (engine_ever_started)
		OdpService->engine_restarts++;
	LWLockRelease(OdpService->lock);
	engine_ever_started = true;
}

/*
 * Why the watchdog kills the engine process now, or NULL: it did not
 * finish starting, its main loop or a request stopped moving, for
 * odp_gpu.engine_timeout.
 */
static const char *
EngineHung(double now)
{
	double		limit = odp_engine_timeout_s * 1000.0;

	if (odp_engine_timeout_s <= 0)
		return NULL;
	if (!OdpService->engine_ready)
		return now - engine_started_ms > limit ?
			psprintf("did not finish starting within %d s (odp_gpu.engine_timeout) and was killed",
					 odp_engine_timeout_s) : NULL;
	if (now - (double) atomic_load(&OdpEngine->beat_ms) > limit)
		return psprintf("stopped answering for %d s (odp_gpu.engine_timeout) and was killed",
						odp_engine_timeout_s);
	for (int i = 0; i < OdpService->nslots; i++)
	{
		OdpServiceSlot *slot = &OdpService->slots[i];

		if (slot->state == ODP_SLOT_RUNNING && !atomic_load(&slot->finished) &&
			now - (double) atomic_load(&slot->beat_ms) > limit)
			return psprintf("made no progress on a call for %d s (odp_gpu.engine_timeout) "
							"and was killed", odp_engine_timeout_s);
	}
	return NULL;
}

/* See service_engine_proc.h. */
void
OdpEngineWatch(void)
{
	char		why[ODP_SERVICE_WHY_LEN];
	int			pid = (int) engine_pid;
	double		now = odp_now_ms();
	const char *hung;

	if (pid != 0)
	{
		if (OdpEngineProcReap(false, why, sizeof(why)))
		{
			EngineLost(pid, why);
			if (!engine_was_ready && engine_failed_starts++ > 0)
				engine_next_start_ms = engine_started_ms +
					Min(ENGINE_START_GAP_MS * (1 << Min(engine_failed_starts, 5)),
						ENGINE_START_BACKOFF_MS);
			else
				engine_next_start_ms = Max(now, engine_started_ms + ENGINE_START_GAP_MS);
		}
		else if ((hung = EngineHung(now)) != NULL)
		{
			OdpEngineProcKill();
			EngineLost(pid, hung);
		}
		return;
	}
	if (now >= engine_next_start_ms)
		OdpEngineStart();
}

/* See service_engine_proc.h. */
void
OdpEngineRestart(const char *why)
{
	int			pid = (int) engine_pid;

	if (pid == 0)
		return;
	OdpEngineProcKill();
	EngineLost(pid, why);
}

/* See service_engine_proc.h. */
double
OdpEngineReady(void)
{
	engine_failed_starts = 0;
	engine_was_ready = true;
	return odp_now_ms() - engine_started_ms;
}
