/*-------------------------------------------------------------------------
 *
 * service_engine_proc.c
 *	  The worker's side of the engine process (service_engine.h): starts
 *	  the program, exchanges messages with it, sees it end, kills it.
 *
 * The worker's loop decides when (service_worker.c); this file knows how.
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
#include "service/service_engine.h"
#include "service/service_engine_proc.h"
#include "service/service_shmem.h"
#include "service/service_staging.h"

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
