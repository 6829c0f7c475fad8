/*-------------------------------------------------------------------------
 *
 * distributed_conn.c
 *	  libpq connections to the nodes of a distributed call (distributed_conn.h).
 *
 * The connection is built as postgres_fdw builds it: the foreign server's
 * libpq options, then the caller's user mapping's; a non-superuser must
 * give a password there and the node must have asked for it, unless a
 * superuser set password_required 'false' in the mapping.  Messages name
 * the foreign server, never the options: no connection string or password
 * reaches an error, a NOTICE or the log.
 *
 * Everything is asynchronous, so that all nodes work at once and the
 * calling backend stays responsive: connecting (PQconnectStartParams and
 * PQconnectPoll), sending (non-blocking, flushed as the socket allows) and
 * receiving are driven by one wait on every node's socket and the
 * backend's latch, which serves cancel and statement_timeout.  Closing
 * cancels a command still running, so a node stops working as soon as the
 * call ends, whichever way it ends.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed_conn.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/defrem.h"
#include "distributed/distributed_conn.h"
#include "distributed/distributed_wire.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bswap.h"
#include "portability/instr_time.h"
#include "settings.h"
#include "storage/latch.h"
#include "utils/builtins.h"

struct OdpNodeConn
{
	const OdpShard *shard;
	PGconn	   *conn;
	PostgresPollingStatusType polling;	/* while connecting */
	bool		connected;
	bool		ready;			/* its socket fired in the last wait */
	bool		busy;			/* a command in flight */
	bool		flushing;		/* its parameters not all sent */
	PGresult   *result;			/* the last command's result */
	char	   *schema;			/* odp_gpu's schema on the node, quoted */
	int64		bytes;
};

/* Whether name is a libpq connection option. */
static bool
ConnIsLibpqOption(const char *name)
{
	static PQconninfoOption *options = NULL;

	if (options == NULL)
	{
		options = PQconndefaults();
		if (options == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not get libpq's default connection options.")));
	}
	for (PQconninfoOption *o = options; o->keyword != NULL; o++)
		if (strcmp(o->keyword, name) == 0 && strchr(o->dispchar, 'D') == NULL)
			return true;
	return false;
}

/*
 * Appends the libpq options among list to keywords/values; from_server
 * leaves out user and password, which belong to user mappings.
 */
static int
ConnAddOptions(List *list, bool from_server, const char **keywords,
			   const char **values, int n)
{
	ListCell   *lc;

	foreach(lc, list)
	{
		DefElem    *d = (DefElem *) lfirst(lc);

		if (!ConnIsLibpqOption(d->defname) ||
			strcmp(d->defname, "client_encoding") == 0 ||
			strcmp(d->defname, "fallback_application_name") == 0 ||
			(from_server && (strcmp(d->defname, "user") == 0 ||
							 strcmp(d->defname, "password") == 0)))
			continue;
		keywords[n] = d->defname;
		values[n] = defGetString(d);
		n++;
	}
	return n;
}

/* Whether the mapping lets a non-superuser connect without a password. */
static bool
ConnPasswordRequired(const UserMapping *um)
{
	ListCell   *lc;

	foreach(lc, um->options)
	{
		DefElem    *d = (DefElem *) lfirst(lc);

		if (strcmp(d->defname, "password_required") == 0)
			return defGetBoolean(d);
	}
	return true;
}

static void
ConnRequirePassword(const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
			 errmsg("password is required"),
			 errdetail("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

/* Starts connecting node to its shard's server. */
static void
ConnStart(OdpNodeConn *node)
{
	ForeignServer *server = GetForeignServer(node->shard->serverid);
	UserMapping *um = GetUserMapping(GetUserId(), server->serverid);
	int			max = list_length(server->options) + list_length(um->options) + 4;
	const char **keywords = palloc(sizeof(char *) * max);
	const char **values = palloc(sizeof(char *) * max);
	bool		has_password = false;
	bool		has_timeout = false;
	int			n = 0;

	n = ConnAddOptions(server->options, true, keywords, values, n);
	n = ConnAddOptions(um->options, false, keywords, values, n);
	for (int i = 0; i < n; i++)
	{
		if (strcmp(keywords[i], "password") == 0 && values[i][0] != '\0')
			has_password = true;
		if (strcmp(keywords[i], "connect_timeout") == 0)
			has_timeout = true;
	}
	if (!superuser_arg(um->userid) && !has_password && ConnPasswordRequired(um))
		ConnRequirePassword("Non-superusers must provide a password in the user mapping.",
							NULL);
	keywords[n] = "fallback_application_name";
	values[n++] = "odp_gpu";
	keywords[n] = "client_encoding";
	values[n++] = GetDatabaseEncodingName();
	if (!has_timeout)
	{
		keywords[n] = "connect_timeout";
		values[n++] = psprintf("%d", odp_node_connect_timeout);
	}
	keywords[n] = NULL;
	values[n] = NULL;

	node->conn = PQconnectStartParams(keywords, values, false);
	if (node->conn == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory connecting to node \"%s\"", node->shard->server_name)));
	node->polling = PGRES_POLLING_WRITING;
	if (PQstatus(node->conn) == CONNECTION_BAD)
		node->polling = PGRES_POLLING_FAILED;
}

/* The first line of libpq's message for node, for an errdetail. */
static char *
ConnMessage(const OdpNodeConn *node)
{
	char	   *msg = pstrdup(node->conn ? PQerrorMessage(node->conn) : "");
	char	   *nl;

	while ((nl = strrchr(msg, '\n')) != NULL && nl[1] == '\0')
		*nl = '\0';
	return msg;
}

static void
ConnFailed(const OdpNodeConn *node, bool lost)
{
	ereport(ERROR,
			(errcode(lost ? ERRCODE_CONNECTION_FAILURE : ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
			 lost ?
			 errmsg("lost the connection to node \"%s\"", node->shard->server_name) :
			 errmsg("could not connect to node \"%s\"", node->shard->server_name),
			 errdetail_internal("%s", ConnMessage(node)),
			 errhint("Check that the foreign server \"%s\" is up and that odp_gpu is installed there.",
					 node->shard->server_name)));
}

/*
 * Waits for a socket event of a node in nodes (what each needs), the
 * latch, or timeout_ms (-1: none); then serves interrupts.
 */
static void
ConnWait(OdpNodeConn **nodes, int count, long timeout_ms)
{
	WaitEventSet *set = CreateWaitEventSet(CurrentMemoryContext, count + 2);
	WaitEvent  *events = palloc(sizeof(WaitEvent) * (count + 2));
	int			fired;

	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (int i = 0; i < count; i++)
	{
		OdpNodeConn *node = nodes[i];
		uint32		wanted = 0;

		if (node == NULL || node->conn == NULL || PQsocket(node->conn) < 0)
			continue;
		if (!node->connected)
			wanted = node->polling == PGRES_POLLING_READING ? WL_SOCKET_READABLE :
				node->polling == PGRES_POLLING_WRITING ? WL_SOCKET_WRITEABLE : 0;
		else if (node->busy)
			wanted = WL_SOCKET_READABLE | (node->flushing ? WL_SOCKET_WRITEABLE : 0);
		node->ready = false;
		if (wanted != 0)
			AddWaitEventToSet(set, wanted, PQsocket(node->conn), NULL, node);
	}
	fired = WaitEventSetWait(set, timeout_ms, events, count + 2, PG_WAIT_EXTENSION);
	for (int i = 0; i < fired; i++)
		if (events[i].user_data != NULL)
			((OdpNodeConn *) events[i].user_data)->ready = true;
	FreeWaitEventSet(set);
	pfree(events);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* Raises the error a node's result reports, naming the node. */
static void
ConnResultError(OdpNodeConn *node, PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	int			code;
	char	   *msg;
	char	   *det;
	char	   *hnt;

	if (PQstatus(node->conn) == CONNECTION_BAD || state == NULL || primary == NULL)
	{
		if (res)
			PQclear(res);
		ConnFailed(node, true);
	}
	code = MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4]);
	msg = pstrdup(primary);
	det = detail ? pstrdup(detail) : NULL;
	hnt = hint ? pstrdup(hint) : NULL;
	PQclear(res);
	ereport(ERROR,
			(errcode(code),
			 errmsg("node \"%s\": %s", node->shard->server_name, msg),
			 det ? errdetail_internal("%s", det) : 0,
			 hnt ? errhint("%s", hnt) : 0));
}

/* Runs sql on every node and waits; a result per node in node->result. */
static void
ConnRunAll(OdpNodeConn **nodes, int count, const char *const *sql)
{
	for (int i = 0; i < count; i++)
		OdpNodeSend(nodes[i], sql[i], 0, NULL, NULL, NULL);
	OdpNodesWait(nodes, count);
}

void
OdpNodesConnect(const OdpShard *const *shards, int count, bool float64,
				OdpNodeConn **nodes)
{
	const char **sql = palloc(sizeof(char *) * Max(count, 1));
	instr_time	start;
	long		limit_ms = (long) odp_node_connect_timeout * 1000L;
	bool		pending = true;

	INSTR_TIME_SET_CURRENT(start);
	for (int i = 0; i < count; i++)
	{
		nodes[i] = palloc0(sizeof(OdpNodeConn));
		nodes[i]->shard = shards[i];
	}
	/* the caller closes what is open if anything below fails */
	for (int i = 0; i < count; i++)
		ConnStart(nodes[i]);
	while (pending)
	{
		instr_time	now;
		long		waited;

		pending = false;
		for (int i = 0; i < count; i++)
		{
			OdpNodeConn *node = nodes[i];

			if (node->connected)
				continue;
			/* libpq wants the socket ready before each poll */
			if (node->polling != PGRES_POLLING_FAILED && node->ready)
				node->polling = PQconnectPoll(node->conn);
			if (node->polling == PGRES_POLLING_FAILED)
				ConnFailed(node, false);
			if (node->polling == PGRES_POLLING_OK)
			{
				UserMapping *um = GetUserMapping(GetUserId(), node->shard->serverid);

				node->connected = true;
				if (!superuser_arg(um->userid) && ConnPasswordRequired(um) &&
					!PQconnectionUsedPassword(node->conn))
					ConnRequirePassword("Non-superuser cannot connect if the server does not request a password.",
										"Target server's authentication method must be changed or set the password_required=false in the user mapping attributes.");
				if (PQsetnonblocking(node->conn, 1) != 0)
					ConnFailed(node, true);
				continue;
			}
			pending = true;
		}
		if (!pending)
			break;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		waited = (long) INSTR_TIME_GET_MILLISEC(now);
		if (waited >= limit_ms + 1000)
		{
			for (int i = 0; i < count; i++)
				if (!nodes[i]->connected)
					ereport(ERROR,
							(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
							 errmsg("could not connect to node \"%s\": timed out",
									nodes[i]->shard->server_name)));
		}
		ConnWait(nodes, count, Min(1000L, limit_ms + 1000 - waited));
	}

	/* where odp_gpu lives on each node, and whether it speaks our protocol */
	for (int i = 0; i < count; i++)
		sql[i] = "SET search_path = pg_catalog; "
			"SELECT pg_catalog.quote_ident(n.nspname), e.extversion "
			"FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
			"WHERE e.extname = 'odp_gpu'";
	ConnRunAll(nodes, count, sql);
	for (int i = 0; i < count; i++)
	{
		if (PQntuples(nodes[i]->result) != 1)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("odp_gpu is not installed on node \"%s\"", shards[i]->server_name),
					 errhint("Run CREATE EXTENSION odp_gpu in the database the foreign server names, "
							 "or set odp_gpu.distributed = off to read the rows through postgres_fdw.")));
		nodes[i]->schema = pstrdup(PQgetvalue(nodes[i]->result, 0, 0));
		sql[i] = psprintf("SELECT %s.odp_node_protocol()", nodes[i]->schema);
	}
	ConnRunAll(nodes, count, sql);
	for (int i = 0; i < count; i++)
	{
		int			len;
		int32		protocol = pg_strtoint32(OdpNodeValue(nodes[i], 0, &len));

		if (protocol != ODP_NODE_PROTOCOL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("node \"%s\" speaks odp_gpu node protocol %d, this server %d",
							shards[i]->server_name, protocol, ODP_NODE_PROTOCOL),
					 errhint("Install the same odp_gpu version on every node.")));
		/* the nodes compute in this call's precision, not their own rule */
		sql[i] = psprintf("SELECT pg_catalog.set_config('odp_gpu.distance_precision', '%s', false)",
						  float64 ? "float64" : "float32");
	}
	ConnRunAll(nodes, count, sql);
}

const char *
OdpNodeSchema(const OdpNodeConn *node)
{
	return node->schema;
}

void
OdpNodeSend(OdpNodeConn *node, const char *sql, int nparams,
			const char *const *values, const int *lengths, const int *formats)
{
	if (node->result)
	{
		PQclear(node->result);
		node->result = NULL;
	}
	/* commands without parameters may be several: simple protocol, text */
	if (nparams == 0 ? !PQsendQuery(node->conn, sql) :
		!PQsendQueryParams(node->conn, sql, nparams, NULL, values, lengths,
						   formats, 1))
		ConnFailed(node, true);
	for (int i = 0; i < nparams; i++)
		node->bytes += formats && formats[i] ? lengths[i] : (values[i] ? (int64) strlen(values[i]) : 0);
	node->busy = true;
	node->flushing = true;
}

/* Moves node's command along; raises its error. */
static void
ConnProgress(OdpNodeConn *node)
{
	if (node->flushing)
	{
		int			r = PQflush(node->conn);

		if (r < 0)
			ConnFailed(node, true);
		node->flushing = r > 0;
	}
	if (!PQconsumeInput(node->conn))
		ConnFailed(node, true);
	while (!PQisBusy(node->conn))
	{
		PGresult   *res = PQgetResult(node->conn);

		if (res == NULL)
		{
			node->busy = false;
			return;
		}
		if (PQresultStatus(res) != PGRES_TUPLES_OK &&
			PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			node->busy = false;
			ConnResultError(node, res);
		}
		for (int i = 0; i < PQntuples(res); i++)
			for (int j = 0; j < PQnfields(res); j++)
				node->bytes += PQgetlength(res, i, j);
		if (node->result)
			PQclear(node->result);
		node->result = res;
	}
}

void
OdpNodesWait(OdpNodeConn **nodes, int count)
{
	for (;;)
	{
		bool		busy = false;

		for (int i = 0; i < count; i++)
			if (nodes[i]->busy)
			{
				ConnProgress(nodes[i]);
				busy |= nodes[i]->busy;
			}
		if (!busy)
			return;
		ConnWait(nodes, count, -1);
	}
}

const char *
OdpNodeValue(const OdpNodeConn *node, int col, int *len)
{
	if (node->result == NULL || PQntuples(node->result) != 1 ||
		PQnfields(node->result) <= col || PQgetisnull(node->result, 0, col))
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("unexpected reply from node \"%s\"", node->shard->server_name)));
	*len = PQgetlength(node->result, 0, col);
	return PQgetvalue(node->result, 0, col);
}

int64
OdpNodeBytes(const OdpNodeConn *node)
{
	return node->bytes;
}

void
OdpNodesClose(OdpNodeConn **nodes, int count)
{
	if (nodes == NULL)
		return;
	for (int i = 0; i < count; i++)
	{
		OdpNodeConn *node = nodes[i];

		if (node == NULL || node->conn == NULL)
			continue;
		if (node->busy && PQstatus(node->conn) == CONNECTION_OK)
		{
			PGcancel   *cancel = PQgetCancel(node->conn);
			char		errbuf[256];

			if (cancel != NULL)
			{
				(void) PQcancel(cancel, errbuf, sizeof(errbuf));
				PQfreeCancel(cancel);
			}
		}
		if (node->result)
			PQclear(node->result);
		node->result = NULL;
		PQfinish(node->conn);
		node->conn = NULL;
	}
}
