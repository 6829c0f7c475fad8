/*-------------------------------------------------------------------------
 *
 * distributed_shards.h
 *	  Finds where a sharded table's rows live: the leaves of a partitioned
 *	  table that are postgres_fdw foreign tables (nodes) or local tables.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed_shards.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef ODP_DISTRIBUTED_SHARDS_H
#define ODP_DISTRIBUTED_SHARDS_H

#include "input/input.h"
#include "nodes/pg_list.h"

/* One shard: a leaf partition, on a node or local. */
typedef struct OdpShard
{
	Oid			relid;			/* the leaf (a foreign or a plain table) */
	bool		remote;
	char	   *desc;			/* for messages: node "server" or the table */

	/* remote: the foreign server and the names on the node, quoted */
	Oid			serverid;
	char	   *server_name;
	char	   *source;			/* schema.table */
	char	   *id_column;
	List	   *features;		/* C strings */

	/* local: the leaf's qualified name */
	char	   *local_source;
} OdpShard;

/* The shards of the table a call names. */
typedef struct OdpShardSet
{
	Oid			relid;
	char	   *desc;			/* the table, for messages */
	char	   *id_column;		/* resolved on the table, local names */
	List	   *features;
	bool		float64;		/* the distances' precision, as reading the
								 * table would give it (the nodes are told) */
	int			count;
	int			remote_count;
	OdpShard   *shards;
} OdpShardSet;

/*
 * Whether spec names a table whose rows a call computes on its nodes:
 * odp_gpu.distributed is on; the source is a partitioned table whose
 * leaves are postgres_fdw foreign tables or plain tables, at least one
 * foreign, every level partitioned by the id column alone (so that every
 * id lives in one shard), and no row-level security on it; or a single
 * postgres_fdw foreign table.  The distances' precision is the one
 * reading the table would give (its column types under
 * odp_gpu.distance_precision), and every node computes in it.  Checks the
 * caller's privileges on the table and its columns as reading it would.
 * Fills *set when true.
 */
extern bool OdpFindShards(const OdpInputSpec *spec, OdpShardSet *set);

/* A spec that reads a local shard in-process, for its checked parent. */
extern void OdpLocalShardSpec(const OdpShardSet *set, const OdpShard *shard,
							  const OdpInputSpec *like, OdpInputSpec *spec);

#endif							/* ODP_DISTRIBUTED_SHARDS_H */
