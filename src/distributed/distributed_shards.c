/*-------------------------------------------------------------------------
 *
 * distributed_shards.c
 *	  Finding the shards of a table (see distributed_shards.h).
 *
 * The rules are those that make a distributed call return exactly what a
 * call over the pulled rows returns: each id in exactly one shard (every
 * partitioning level keyed by the id column), the rows a query on the
 * table would read (no policies on the table, which a node cannot apply;
 * a foreign partition is read by the node with the mapped role's rights
 * and policies, as postgres_fdw reads it), and names on the node taken
 * from the foreign table's options (schema_name, table_name, column_name)
 * as postgres_fdw takes them.  Anything else is read as before.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/distributed/distributed_shards.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "distributed/distributed_shards.h"
#include "foreign/foreign.h"
#include "settings.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/rls.h"

/* Whether a partitioned table's key is the single column named id. */
static bool
ShardKeyIsId(Oid relid, const char *id)
{
	Relation	rel = relation_open(relid, NoLock);
	PartitionKey key = RelationGetPartitionKey(rel);
	bool		ok;

	ok = key != NULL && key->partnatts == 1 && key->partattrs[0] > 0 &&
		strcmp(NameStr(TupleDescAttr(RelationGetDescr(rel),
									 key->partattrs[0] - 1)->attname), id) == 0;
	relation_close(rel, NoLock);
	return ok;
}

/* A foreign table's option, or NULL. */
static char *
ShardOption(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = (DefElem *) lfirst(lc);

		if (strcmp(d->defname, name) == 0)
			return defGetString(d);
	}
	return NULL;
}

/* The column's name on the node (its column_name option, else its own). */
static char *
ShardRemoteColumn(Oid relid, const char *name)
{
	AttrNumber	attnum = get_attnum(relid, name);
	char	   *remote;

	if (attnum == InvalidAttrNumber)
		elog(ERROR, "odp_gpu: column \"%s\" missing in a partition", name);
	remote = ShardOption(GetForeignColumnOptions(relid, attnum), "column_name");
	return remote != NULL ? remote : pstrdup(name);
}

/*
 * Fills shard for the foreign table relid when it belongs to postgres_fdw;
 * returns false otherwise.
 */
static bool
ShardRemote(Oid relid, const OdpShardSet *set, OdpShard *shard)
{
	ForeignTable *ft = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(ft->serverid);
	ForeignDataWrapper *fdw = GetForeignDataWrapper(server->fdwid);
	char	   *nsp;
	char	   *rel;
	ListCell   *lc;

	if (strcmp(fdw->fdwname, "postgres_fdw") != 0)
		return false;
	nsp = ShardOption(ft->options, "schema_name");
	rel = ShardOption(ft->options, "table_name");
	if (nsp == NULL)
		nsp = get_namespace_name(get_rel_namespace(relid));
	if (rel == NULL)
		rel = get_rel_name(relid);
	shard->relid = relid;
	shard->remote = true;
	shard->serverid = server->serverid;
	shard->server_name = pstrdup(server->servername);
	shard->desc = psprintf("node \"%s\"", server->servername);
	shard->source = quote_qualified_identifier(nsp, rel);
	shard->id_column = ShardRemoteColumn(relid, set->id_column);
	shard->features = NIL;
	foreach(lc, set->features)
		shard->features = lappend(shard->features,
								  ShardRemoteColumn(relid, (char *) lfirst(lc)));
	return true;
}

bool
OdpFindShards(const OdpInputSpec *spec, OdpShardSet *set)
{
	Oid			relid;
	char		relkind;
	List	   *members;
	ListCell   *lc;
	int			i = 0;

	memset(set, 0, sizeof(*set));
	if (!odp_distributed)
		return false;

	/*
	 * A look at the catalog first: a plain table, a view or a query is read
	 * as before, without resolving its columns twice.
	 */
	relid = OdpSourceRelid(spec->source);
	relkind = OidIsValid(relid) ? get_rel_relkind(relid) : '\0';
	if (relkind != RELKIND_PARTITIONED_TABLE && relkind != RELKIND_FOREIGN_TABLE)
		return false;
	if (!OdpResolveSource(spec, &relid, &set->id_column, &set->features,
						  &set->float64))
		return false;
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return false;
	set->relid = relid;
	set->desc = psprintf("table %s",
						 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													get_rel_name(relid)));
	members = find_all_inheritors(relid, AccessShareLock, NULL);
	set->shards = palloc0(sizeof(OdpShard) * list_length(members));
	foreach(lc, members)
	{
		Oid			member = lfirst_oid(lc);
		OdpShard   *shard = &set->shards[i];

		switch (get_rel_relkind(member))
		{
			case RELKIND_PARTITIONED_TABLE:
				if (!ShardKeyIsId(member, set->id_column))
					return false;
				continue;
			case RELKIND_FOREIGN_TABLE:
				if (!ShardRemote(member, set, shard))
					return false;
				set->remote_count++;
				break;
			case RELKIND_RELATION:
				shard->relid = member;
				shard->remote = false;
				shard->local_source =
					quote_qualified_identifier(get_namespace_name(get_rel_namespace(member)),
											   get_rel_name(member));
				shard->desc = psprintf("partition %s", shard->local_source);
				break;
			default:
				return false;
		}
		i++;
	}
	set->count = i;
	return set->remote_count > 0;
}

void
OdpLocalShardSpec(const OdpShardSet *set, const OdpShard *shard,
				  const OdpInputSpec *like, OdpInputSpec *spec)
{
	Datum	   *names;
	ListCell   *lc;
	int			i = 0;

	*spec = *like;
	spec->source = cstring_to_text(shard->local_source);
	spec->id_column = cstring_to_text(set->id_column);
	names = palloc(sizeof(Datum) * Max(list_length(set->features), 1));
	foreach(lc, set->features)
		names[i++] = CStringGetTextDatum((char *) lfirst(lc));
	spec->features = construct_array(names, i, TEXTOID, -1, false, TYPALIGN_INT);
	spec->checked_parent = set->relid;
	spec->empty_ok = true;
}
