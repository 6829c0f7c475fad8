/*-------------------------------------------------------------------------
 *
 * distributed_conn.h
 *	  Connections from the calling server to the nodes of a distributed
 *	  call: asynchronous libpq, all nodes at once.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed_conn.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DISTRIBUTED_CONN_H
#define ODP_DISTRIBUTED_CONN_H

#include "distributed/distributed_shards.h"

typedef struct OdpNodeConn OdpNodeConn;

/*
 * Connects to the server of every remote shard (count of them) at once,
 * with the caller's user mapping and postgres_fdw's rules for passwords,
 * finds odp_gpu on each and checks its protocol, and sets the precision
 * of the distances there (float64, else float32) to the calling
 * server's.  nodes (count entries,
 * NULL) is filled as connections open, so that OdpNodesClose, which the
 * caller must reach on every path (PG_FINALLY), closes them all, also
 * when connecting fails half-way.
 */
extern void OdpNodesConnect(const OdpShard *const *shards, int count,
							bool float64, OdpNodeConn **nodes);

/* odp_gpu's schema on the node, quoted, for qualified calls. */
extern const char *OdpNodeSchema(const OdpNodeConn *node);

/*
 * Sends one command with binary results; text parameters are NULL-length
 * (lengths NULL), binary ones given lengths and formats 1.  A command
 * without parameters goes by the simple protocol (it may hold several
 * statements) and its results come as text.
 */
extern void OdpNodeSend(OdpNodeConn *node, const char *sql, int nparams,
						const char *const *values, const int *lengths,
						const int *formats);

/*
 * Waits until every node with a command in flight has its result,
 * raising the first error a node reports (naming the node) or a lost
 * connection; interrupts (cancel, statement_timeout) are served.
 */
extern void OdpNodesWait(OdpNodeConn **nodes, int count);

/* The last result's value (row 0, column col) and its length. */
extern const char *OdpNodeValue(const OdpNodeConn *node, int col, int *len);

/* Bytes sent and received since connecting (parameters and results). */
extern int64 OdpNodeBytes(const OdpNodeConn *node);

/*
 * Closes every connection (NULL entries skipped), cancelling a command
 * still in flight so that the node stops working on it.  Never raises.
 */
extern void OdpNodesClose(OdpNodeConn **nodes, int count);

#endif							/* ODP_DISTRIBUTED_CONN_H */
