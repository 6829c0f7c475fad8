/*-------------------------------------------------------------------------
 *
 * input_source.c
 *	  What a source is: a query or the name of a relation; the relation it
 *	  names, its row estimate, its description, and whether two sources are
 *	  the same data.
 *
 * Text that starts (after white space and opening parentheses) with the
 * keyword SELECT, WITH, VALUES or TABLE is a query; anything else must
 * parse as a possibly qualified relation name, the way regclass parses it
 * (OdpParseSourceName, the one parser of names every function here uses).
 * Text that is neither is rejected before any catalog access.  A relation
 * is opened with AccessShareLock, held to the end of the transaction, and
 * unsupported relkinds and other sessions' temporary tables are rejected
 * before any column is looked at.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_source.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "input/input_internal.h"
#include "nodes/value.h"
#include "parser/scansup.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

/* Ensure the source text names a relation. */
static inline void
OdpEnsureSourceIsName(bool ok, const char *source)
{
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source \"%s\" is neither a table name nor a query",
						source),
				 errhint("Pass a table or view name such as 'public.points', or a query starting with SELECT, WITH, VALUES or TABLE.")));
}

/* Ensure the relation is of a kind that can be read. */
static inline void
OdpEnsureReadableRelkind(Relation rel)
{
	char		relkind = rel->rd_rel->relkind;

	if (relkind != RELKIND_RELATION &&
		relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_VIEW &&
		relkind != RELKIND_MATVIEW &&
		relkind != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot read rows from relation \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail_relkind_not_supported(relkind),
				 errhint("Name a table, view, materialized view or foreign table, or pass a query.")));
}

/* Ensure the relation is not another session's temporary table. */
static inline void
OdpEnsureNotOtherTemp(Relation rel)
{
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
}

/* ---- source classification ---- */

/* Returns whether c can continue an SQL keyword or unquoted identifier. */
static inline bool
OdpIsIdentChar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_' || c == '$' || IS_HIGHBIT_SET(c);
}

/*
 * Returns whether source is a query: after white space and opening
 * parentheses it starts with SELECT, WITH, VALUES or TABLE as a word.
 */
bool
OdpSourceIsQuery(const char *source)
{
	static const char *const keywords[] = {"select", "with", "values", "table"};
	const char *p = source;

	while (*p != '\0' && (scanner_isspace(*p) || *p == '('))
		p++;
	for (int i = 0; i < lengthof(keywords); i++)
	{
		size_t		len = strlen(keywords[i]);

		if (pg_strncasecmp(p, keywords[i], len) == 0 &&
			!OdpIsIdentChar(p[len]))
			return true;
	}
	return false;
}

/*
 * Parses source as a possibly qualified relation name, as regclass does
 * (unquoted parts folded to lower case, quoted ones kept), into a list of
 * String nodes; NIL if it is not a name.  Every function that takes a
 * source as a name parses it here.
 */
static List *
OdpParseSourceName(const char *source)
{
	char	   *raw = pstrdup(source);
	List	   *parts = NIL;
	List	   *names = NIL;
	ListCell   *lc;

	if (!SplitIdentifierString(raw, '.', &parts))
		return NIL;
	foreach(lc, parts)
		names = lappend(names, makeString((char *) lfirst(lc)));
	return names;
}

/*
 * Returns the RangeVar of the relation source names; raises 22023 if it
 * is not a name, and makeRangeVarFromNameList's error if it has more than
 * three parts.
 */
static RangeVar *
OdpSourceRangeVar(const char *source)
{
	List	   *names = OdpParseSourceName(source);

	OdpEnsureSourceIsName(names != NIL, source);
	return makeRangeVarFromNameList(names);
}

/* See input.h. */
Oid
OdpSourceRelid(const text *source)
{
	char	   *raw = text_to_cstring(source);
	List	   *names;

	if (OdpSourceIsQuery(raw))
		return InvalidOid;
	names = OdpParseSourceName(raw);
	if (names == NIL || list_length(names) > 3)
		return InvalidOid;
	return RangeVarGetRelid(makeRangeVarFromNameList(names), NoLock, true);
}

/*
 * The planner's row estimate of the relation source names (pg_class's
 * reltuples), or -1 when source is a query, names nothing, names a
 * relation never analysed, or is not a name at all.  The planner calls
 * it while estimating, so it raises no error of its own (but see
 * OdpSourceRelid in input.h).
 */
double
OdpSourceRowEstimate(const text *source)
{
	return OdpRelationRowEstimate(OdpSourceRelid(source));
}

/* See input.h. */
double
OdpRelationRowEstimate(Oid relid)
{
	HeapTuple	tuple;
	double		rows = -1;

	if (!OidIsValid(relid))
		return -1;
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_class rel = (Form_pg_class) GETSTRUCT(tuple);

		if (rel->reltuples >= 0 && rel->relkind != RELKIND_VIEW)
			rows = rel->reltuples;
		ReleaseSysCache(tuple);
	}
	return rows;
}

/* Whether two optional text arguments are both absent or equal. */
static bool
OdpSameText(const text *a, const text *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/*
 * Whether two specs name the same data: the same options, and the same
 * source text or two names of the same relation.  Names that do not
 * resolve are not the same (reading them reports the error).
 */
bool
OdpSameSource(const OdpInputSpec *a, const OdpInputSpec *b)
{
	char	   *sa;
	char	   *sb;
	Oid			ra;
	Oid			rb;

	if (!OdpSameText(a->id_column, b->id_column) || a->values != b->values ||
		a->pair_flags != b->pair_flags)
		return false;
	if ((a->features == NULL) != (b->features == NULL) ||
		(a->features != NULL &&
		 (VARSIZE(a->features) != VARSIZE(b->features) ||
		  memcmp(a->features, b->features, VARSIZE(a->features)) != 0)))
		return false;
	if (OdpSameText(a->source, b->source))
		return true;
	sa = text_to_cstring(a->source);
	sb = text_to_cstring(b->source);
	if (OdpSourceIsQuery(sa) || OdpSourceIsQuery(sb))
		return false;
	ra = RangeVarGetRelid(OdpSourceRangeVar(sa), NoLock, true);
	rb = RangeVarGetRelid(OdpSourceRangeVar(sb), NoLock, true);
	return OidIsValid(ra) && ra == rb;
}

/*
 * Opens the relation source names (source is no query), locked with
 * AccessShareLock until the end of the transaction: close it with
 * relation_close(rel, NoLock).  Raises 22023 if source is not a name, the
 * usual errors if no such relation exists, and rejects relkinds that
 * cannot be read and other sessions' temporary tables.  Checks no
 * privilege (OdpCheckAnyPrivilege does).
 */
Relation
OdpOpenSourceRelation(const char *source)
{
	RangeVar   *rv = OdpSourceRangeVar(source);
	Oid			relid;
	Relation	rel;

	/* a qualified name raises the usual error */
	relid = RangeVarGetRelid(rv, AccessShareLock, rv->schemaname == NULL);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"%s\" does not exist", rv->relname),
				 errdetail("An unqualified name is looked up in search_path, which was %s when the call ran; "
						   "pg_restore runs with an empty one.",
						   namespace_search_path[0] != '\0' &&
						   strcmp(namespace_search_path, "\"\"") != 0 ?
						   namespace_search_path : "empty"),
				 errhint("Schema-qualify it, as in 'schema.%s', or pass the relation as regclass "
						 "('%s'::regclass), which also follows it through ALTER TABLE ... RENAME "
						 "and SET SCHEMA.", rv->relname, rv->relname)));
	rel = relation_open(relid, NoLock);
	OdpEnsureReadableRelkind(rel);
	OdpEnsureNotOtherTemp(rel);
	return rel;
}

/* Returns e.g. "table \"public\".\"points\"", for messages. */
char *
OdpRelationDesc(Relation rel)
{
	const char *kind;

	switch (rel->rd_rel->relkind)
	{
		case RELKIND_PARTITIONED_TABLE:
			kind = "partitioned table";
			break;
		case RELKIND_VIEW:
			kind = "view";
			break;
		case RELKIND_MATVIEW:
			kind = "materialized view";
			break;
		case RELKIND_FOREIGN_TABLE:
			kind = "foreign table";
			break;
		default:
			kind = "table";
			break;
	}
	return psprintf("%s \"%s\".\"%s\"", kind,
					get_namespace_name(RelationGetNamespace(rel)),
					RelationGetRelationName(rel));
}
