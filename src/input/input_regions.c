/*-------------------------------------------------------------------------
 *
 * input_regions.c
 *	  Regions for the interval matching: which columns hold them (range
 *	  types, box, contrib cube, pairs of lower and upper columns) and how
 *	  their bounds become the order-preserving keys the engine compares.
 *
 * A dimension's bounds are compared exactly in their own domain: integers,
 * dates and timestamps as 64-bit integers (a timestamp is an integer count
 * of microseconds, so two that differ by one stay apart), real, double
 * precision and numeric as float64, a numeric bound only when a float64
 * holds it exactly (any other is an error that says so).  NaN is an
 * error; infinities are values, below or above every other one, and an
 * unbounded end is beyond them (as range types have it).
 *
 * Ranges keep their bounds' inclusivity, infinity and emptiness as engine
 * flags, except where the type compares them as sets of integers (a range
 * type with a canonical function, such as int4range, int8range and
 * daterange, and pairs of integer or date columns, which such types would
 * hold): there an excluded bound becomes the included one next to it, as
 * the canonical function does, so that most integer data needs no flags.
 * A box's and a cube's intervals are closed; a box is compared with the
 * geometric types' tolerance, as box && compares it.
 *
 * Map of this file.  From top to bottom:
 *	- types: which types hold regions and bounds (OdpBoundKindOf,
 *	  OdpRegionKindOf, ...);
 *	- resolving the columns: OdpResolveRegionColumns and its checks;
 *	- bounds: their keys (OdpBoundKey), canonical integer intervals, storing
 *	  an interval; ranges read in place or deserialised (OdpRangeInterval),
 *	  multiranges, boxes, cubes and pairs;
 *	- a row: OdpRegionsAddRow (deformed), OdpRegionsAddTuple (from the
 *	  tuple's bytes, input_direct.c); the dimensions' description.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/input/input_regions.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "input/input_checks.h"
#include "odp_engine.h"
#include "odp_order.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgrprotos.h"
#include "utils/geo_decls.h"
#include "utils/lsyscache.h"
#include "utils/multirangetypes.h"
#include "utils/numeric.h"
#include "utils/rangetypes.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

/* contrib cube's on-disk layout (cubedata.h): header, then coordinates */
typedef struct OdpCube
{
	int32		vl_len_;
	uint32		header;			/* dimensions, and the point bit */
	double		x[FLEXIBLE_ARRAY_MEMBER];
} OdpCube;

#define ODP_CUBE_POINT_BIT	0x80000000
#define ODP_CUBE_DIM_MASK	0x7fffffff

static const char *const odp_region_types_hint =
"Name columns of a range type (int4range, int8range, numrange, daterange, tsrange, tstzrange) "
"or of a multirange type (int4multirange, ...), a box or a cube column, or pairs of lower and upper columns, with dims => '{...}'.";

/* ---- types ---- */

/*
 * The bound kind of a scalar type, a numeric type (as OdpValueKindOf
 * classifies it) or a date or timestamp; false if bounds cannot have it.
 */
static bool
OdpBoundKindOf(Oid typid, OdpBoundKind *kind)
{
	static const OdpBoundKind numeric[] = {
		[ODP_VALUE_INT2] = ODP_BOUND_INT2,
		[ODP_VALUE_INT4] = ODP_BOUND_INT4,
		[ODP_VALUE_INT8] = ODP_BOUND_INT8,
		[ODP_VALUE_FLOAT4] = ODP_BOUND_FLOAT4,
		[ODP_VALUE_FLOAT8] = ODP_BOUND_FLOAT8,
		[ODP_VALUE_NUMERIC] = ODP_BOUND_NUMERIC,
	};
	OdpValueKind vkind;

	if (OdpValueKindOf(typid, &vkind))
	{
		*kind = numeric[vkind];
		return true;
	}
	switch (getBaseType(typid))
	{
		case DATEOID:
			*kind = ODP_BOUND_DATE;
			return true;
		case TIMESTAMPOID:
			*kind = ODP_BOUND_TIMESTAMP;
			return true;
		case TIMESTAMPTZOID:
			*kind = ODP_BOUND_TIMESTAMPTZ;
			return true;
		default:
			return false;
	}
}

/* The domain bounds of a kind are compared in. */
static OdpBoundDomain
OdpDomainOf(OdpBoundKind kind)
{
	switch (kind)
	{
		case ODP_BOUND_INT2:
		case ODP_BOUND_INT4:
		case ODP_BOUND_INT8:
			return ODP_DOMAIN_INTEGER;
		case ODP_BOUND_FLOAT4:
		case ODP_BOUND_FLOAT8:
		case ODP_BOUND_NUMERIC:
			return ODP_DOMAIN_FLOAT;
		case ODP_BOUND_DATE:
			return ODP_DOMAIN_DATE;
		case ODP_BOUND_TIMESTAMP:
			return ODP_DOMAIN_TIMESTAMP;
		case ODP_BOUND_TIMESTAMPTZ:
			return ODP_DOMAIN_TIMESTAMPTZ;
	}
	return ODP_DOMAIN_FLOAT;	/* keep compiler quiet */
}

/* Whether typid (a base type) is contrib's cube. */
static bool
OdpIsCubeType(Oid typid)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	bool		cube = false;

	if (!HeapTupleIsValid(tup))
		return false;
	{
		Form_pg_type t = (Form_pg_type) GETSTRUCT(tup);
		char	   *input = get_func_name(t->typinput);

		cube = strcmp(NameStr(t->typname), "cube") == 0 && t->typlen == -1 &&
			input != NULL && strcmp(input, "cube_in") == 0;
	}
	ReleaseSysCache(tup);
	return cube;
}

/* How a column holds regions or bounds (OdpRegionKindOf). */
typedef struct OdpRegionType
{
	OdpRegionKind kind;
	OdpBoundKind bound;			/* of a pair column, or of the bounds */
	TypeCacheEntry *range;		/* ranges and multiranges: the range type's */
	TypeCacheEntry *multirange; /* multiranges: the type's */
} OdpRegionType;

/*
 * The range type tc's bound kind; a subtype that is not a bound type, or
 * that the range orders other than by the type's default ordering, is an
 * error naming column col.
 */
static OdpBoundKind
OdpRangeBoundKind(const OdpColumn *col, TypeCacheEntry *tc)
{
	Oid			sub = tc->rngelemtype->type_id;
	TypeCacheEntry *subtc = lookup_type_cache(sub, TYPECACHE_CMP_PROC);
	OdpBoundKind bound;

	if (!OdpBoundKindOf(sub, &bound))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" is a range of %s, whose bounds odp_gpu cannot compare",
						col->name, format_type_be(sub)),
				 errhint("%s", odp_region_types_hint)));
	if (tc->rng_cmp_proc_finfo.fn_oid != subtc->cmp_proc)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("range type %s of column \"%s\" orders its bounds by a non-default operator class",
						format_type_be(tc->type_id), col->name),
				 errhint("Cast the column to a range type that orders its bounds as %s does by default.",
						 format_type_be(sub))));
	return bound;
}

/*
 * Classifies column col for regions into *t: RANGE, MULTIRANGE, BOX or
 * CUBE for a column that holds regions, PAIR for a scalar that can be a
 * bound, and false for anything else.
 */
static bool
OdpRegionKindOf(const OdpColumn *col, OdpRegionType *t)
{
	Oid			base = getBaseType(col->typid);

	memset(t, 0, sizeof(*t));
	if (type_is_multirange(base))
	{
		t->multirange = lookup_type_cache(base, TYPECACHE_MULTIRANGE_INFO);
		t->range = lookup_type_cache(t->multirange->rngtype->type_id, TYPECACHE_RANGE_INFO);
		t->kind = ODP_REGION_MULTIRANGE;
		t->bound = OdpRangeBoundKind(col, t->range);
		return true;
	}
	if (type_is_range(base))
	{
		t->range = lookup_type_cache(base, TYPECACHE_RANGE_INFO);
		t->kind = ODP_REGION_RANGE;
		t->bound = OdpRangeBoundKind(col, t->range);
		return true;
	}
	if (base == BOXOID || OdpIsCubeType(base))
	{
		t->kind = base == BOXOID ? ODP_REGION_BOX : ODP_REGION_CUBE;
		t->bound = ODP_BOUND_FLOAT8;
		return true;
	}
	if (!col->is_array && OdpBoundKindOf(base, &t->bound))
	{
		t->kind = ODP_REGION_PAIR;
		return true;
	}
	return false;
}

/* ---- resolving the columns ---- */

/* Ensure dims names at least one column, none of them null. */
static void
OdpEnsureDimsNames(int nnames, const bool *nulls)
{
	if (nnames == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("dims must name at least one column"),
				 errhint("Pass NULL to use every range column of the source.")));
	for (int i = 0; i < nnames; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("dims must not contain null elements")));
}

/* Ensure a region column is neither the id column nor listed twice. */
static void
OdpEnsureRegionColumnOnce(const OdpColumnPlan *plan, const OdpColumn *col,
						  const OdpColumn *id)
{
	if (col->pos == id->pos)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("id column \"%s\" cannot be a dimension", col->name),
				 errhint("Remove it from dims, or name another id column with id_column => '...'.")));
	for (int i = 0; i < plan->nfeatures; i++)
		if (plan->features[i].pos == col->pos)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("column \"%s\" is listed more than once in dims", col->name)));
}

/*
 * Appends a region column of type t (and, for a pair, its upper column,
 * whose bound kind is upper_bound) to plan.
 */
static void
OdpAddRegionColumn(OdpColumnPlan *plan, const OdpRegionType *t,
				   OdpBoundKind upper_bound, const OdpColumn *col,
				   const OdpColumn *upper, int *dims)
{
	OdpRegionColumn *rc = &plan->region[plan->nregions++];

	rc->kind = t->kind;
	rc->feature = plan->nfeatures;
	rc->dim = *dims;
	rc->bound = t->bound;
	rc->upper_bound = upper_bound;
	rc->range = t->range;
	rc->multirange = t->multirange;
	rc->ndims = t->kind == ODP_REGION_BOX ? 2 : (t->kind == ODP_REGION_CUBE ? -1 : 1);
	/* integer-valued intervals as a canonical range type holds them */
	if (t->range != NULL)
		rc->canonical = OidIsValid(t->range->rng_canonical_finfo.fn_oid);
	else
		rc->canonical = t->kind == ODP_REGION_PAIR &&
			(OdpDomainOf(t->bound) == ODP_DOMAIN_INTEGER || OdpDomainOf(t->bound) == ODP_DOMAIN_DATE);
	plan->exact_bounds |= t->bound == ODP_BOUND_NUMERIC || upper_bound == ODP_BOUND_NUMERIC;
	plan->pieces |= t->kind == ODP_REGION_MULTIRANGE;
	plan->features[plan->nfeatures++] = *col;
	if (upper != NULL)
		plan->features[plan->nfeatures++] = *upper;
	*dims = rc->ndims < 0 ? -1 : *dims + rc->ndims;
}

/* Ensure a cube comes last, so that every other dimension has its place. */
static void
OdpEnsureCubeLast(const OdpColumnPlan *plan, const OdpColumn *col)
{
	if (plan->nregions > 0 && plan->region[plan->nregions - 1].kind == ODP_REGION_CUBE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("column \"%s\" follows a cube column in dims", col->name),
				 errhint("Name the cube column last.")));
}

/*
 * Resolves the region columns of a source whose columns are cols (id
 * resolved already) into plan: the columns spec->features (dims) names, in
 * order, a range, box or cube column each, or two scalar columns of one
 * domain, lower then upper; by default every range column, else the one
 * box or cube column.
 */
void
OdpResolveRegionColumns(const OdpColumn *cols, int ncols, const OdpColumn *id,
						const OdpInputSpec *spec, const char *desc,
						OdpColumnPlan *plan)
{
	int			dims = 0;

	plan->regions = true;
	plan->pair_flags = spec->pair_flags;
	plan->features = palloc0(sizeof(OdpColumn) * Max(ncols, 1));
	plan->region = palloc0(sizeof(OdpRegionColumn) * Max(ncols, 1));

	if (spec->features != NULL)
	{
		Datum	   *names;
		bool	   *nulls;
		int			nnames;

		nnames = OdpColumnNames(spec->features, "dims", &names, &nulls);
		OdpEnsureDimsNames(nnames, nulls);
		for (int i = 0; i < nnames; i++)
		{
			const OdpColumn *col = OdpFindColumn(cols, ncols, TextDatumGetCString(names[i]),
												 "column", desc, false);
			const OdpColumn *upper = NULL;
			OdpRegionType t;
			OdpBoundKind ubound = ODP_BOUND_FLOAT8;

			OdpEnsureRegionColumnOnce(plan, col, id);
			OdpEnsureCubeLast(plan, col);
			if (!OdpRegionKindOf(col, &t))
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("column \"%s\" has type %s, which holds neither regions nor bounds",
								col->name, format_type_be(col->typid)),
						 errhint("%s", odp_region_types_hint)));
			if (t.kind == ODP_REGION_PAIR)
			{
				OdpRegionType ut;

				if (i + 1 == nnames)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("column \"%s\" has no upper column in dims", col->name),
							 errdetail("A column of type %s is a lower bound; the column after it in dims is its upper bound.",
									   format_type_be(col->typid)),
							 errhint("Name lower and upper columns in pairs, for example dims => '{lo,hi}'.")));
				upper = OdpFindColumn(cols, ncols, TextDatumGetCString(names[++i]),
									  "column", desc, false);
				OdpEnsureRegionColumnOnce(plan, upper, id);
				if (upper->pos == col->pos ||
					!OdpRegionKindOf(upper, &ut) ||
					ut.kind != ODP_REGION_PAIR ||
					OdpDomainOf(ut.bound) != OdpDomainOf(t.bound))
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("upper column \"%s\" has type %s but lower column \"%s\" has type %s",
									upper->name, format_type_be(upper->typid),
									col->name, format_type_be(col->typid)),
							 errhint("Pair a lower column with an upper column of a comparable type: both integers, both real, double precision or numeric, both dates, both timestamps or both timestamps with time zone.")));
				ubound = ut.bound;
			}
			OdpAddRegionColumn(plan, &t, upper != NULL ? ubound : t.bound, col, upper, &dims);
		}
	}
	else
	{
		const OdpColumn *shape = NULL;
		int			nshapes = 0;

		for (int i = 0; i < ncols; i++)
		{
			OdpRegionType t;

			if (cols[i].pos == id->pos || !OdpRegionKindOf(&cols[i], &t))
				continue;
			if (t.kind == ODP_REGION_RANGE || t.kind == ODP_REGION_MULTIRANGE)
				OdpAddRegionColumn(plan, &t, t.bound, &cols[i], NULL, &dims);
			else if (t.kind != ODP_REGION_PAIR)
			{
				nshapes++;
				if (shape == NULL)
					shape = &cols[i];
			}
		}
		if (plan->nregions == 0 && nshapes > 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has %d box or cube columns", desc, nshapes),
					 errhint("Name the one to match with dims => '{%s}'.", shape->name)));
		if (plan->nregions == 0 && nshapes == 1)
		{
			OdpRegionType t;

			(void) OdpRegionKindOf(shape, &t);
			OdpAddRegionColumn(plan, &t, t.bound, shape, NULL, &dims);
		}
		if (plan->nregions == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("%s has no range, multirange, box or cube column", desc),
					 errhint("%s", odp_region_types_hint)));
	}
	if (dims > ODP_MAX_INTERVAL_DIMS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("regions of %d dimensions, more than the maximum of %d",
						dims, ODP_MAX_INTERVAL_DIMS)));
}

/* ---- bounds ---- */

/* Ensure a bound is not NaN. */
static inline void
OdpEnsureBoundNotNaN(double v, const OdpColumn *col, int64 id)
{
	if (unlikely(isnan(v)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("column \"%s\" has a NaN bound in the row with id %lld",
						col->name, (long long) id),
				 errhint("%s", ODP_BAD_VALUE_HINT)));
}

/*
 * The key of a bound value of kind (odp_order.h); a numeric's is
 * provisional, its value kept in *kept (input_exact.c), which is NULL for
 * every other bound.
 */
static uint64
OdpBoundKey(OdpReader *r, OdpBoundKind kind, Datum v, const OdpColumn *col,
			int64 id, Numeric *kept)
{
	double		d;

	*kept = NULL;
	switch (kind)
	{
		case ODP_BOUND_INT2:
			return odp_order_int64(DatumGetInt16(v));
		case ODP_BOUND_INT4:
			return odp_order_int64(DatumGetInt32(v));
		case ODP_BOUND_INT8:
			return odp_order_int64(DatumGetInt64(v));
		case ODP_BOUND_DATE:
			return odp_order_int64(DatumGetDateADT(v));
		case ODP_BOUND_TIMESTAMP:
		case ODP_BOUND_TIMESTAMPTZ:
			return odp_order_int64(DatumGetTimestamp(v));
		case ODP_BOUND_FLOAT4:
			d = (double) DatumGetFloat4(v);
			break;
		case ODP_BOUND_FLOAT8:
			d = DatumGetFloat8(v);
			break;
		case ODP_BOUND_NUMERIC:
			{
				uint64		key = 0;

				if (!OdpExactKey(r, v, &key, kept))
					OdpEnsureBoundNotNaN(NAN, col, id);
				return key;
			}
		default:
			elog(ERROR, "bound of unexpected kind %d", (int) kind);
			return 0;			/* keep compiler quiet */
	}
	OdpEnsureBoundNotNaN(d, col, id);
	return odp_order_float64(d);
}

/* One interval of a row: its bounds' keys, flags and numeric values. */
typedef struct OdpInterval
{
	uint64		lo;
	uint64		hi;
	uint8		f;				/* ODP_BOUND_* */
	Numeric		lo_num;			/* input_exact.c; NULL: the key is exact, or
								 * the reader keeps no numerics */
	Numeric		hi_num;
	bool		lo_numeric;		/* the bound is a numeric */
	bool		hi_numeric;
} OdpInterval;

/*
 * An integer-valued interval (canonical) gets included bounds instead of
 * excluded ones, and is empty when none is left.
 */
static inline void
OdpCanonicalize(OdpInterval *iv, bool canonical)
{
	if (!canonical)
		return;
	if ((iv->f & ODP_BOUND_LOWER_EXCLUSIVE) && !(iv->f & ODP_BOUND_LOWER_INFINITE))
	{
		/* no integer lies between v and v + 1 */
		if (iv->lo == UINT64_MAX)
			iv->f |= ODP_BOUND_EMPTY;
		else
			iv->lo++;
		iv->f &= ~ODP_BOUND_LOWER_EXCLUSIVE;
	}
	if ((iv->f & ODP_BOUND_UPPER_EXCLUSIVE) && !(iv->f & ODP_BOUND_UPPER_INFINITE))
	{
		if (iv->hi == 0)
			iv->f |= ODP_BOUND_EMPTY;
		else
			iv->hi--;
		iv->f &= ~ODP_BOUND_UPPER_EXCLUSIVE;
	}
	if (!(iv->f & (ODP_BOUND_LOWER_INFINITE | ODP_BOUND_UPPER_INFINITE)) && iv->lo > iv->hi)
		iv->f |= ODP_BOUND_EMPTY;
}

/* Stores interval d of the reader's row. */
static inline void
OdpStoreInterval(OdpReader *r, int64 row, int d, const OdpInterval *iv)
{
	const Size	at = (Size) row * (Size) r->dims + d;

	r->lower[at] = iv->lo;
	r->upper[at] = iv->hi;
	r->bflags[at] = iv->f;
	r->any_bflag |= iv->f != 0;
	if (r->exact != NULL)
	{
		r->exact[at * 2] = iv->lo_num;
		r->exact[at * 2 + 1] = iv->hi_num;
	}
	if (r->plan->exact_bounds && !(iv->f & ODP_BOUND_EMPTY))
	{
		if (!(iv->f & ODP_BOUND_LOWER_INFINITE))
			r->exact_dims[d] |= iv->lo_numeric ? ODP_EXACT_NUMERIC : ODP_EXACT_OTHER;
		if (!(iv->f & ODP_BOUND_UPPER_INFINITE))
			r->exact_dims[d] |= iv->hi_numeric ? ODP_EXACT_NUMERIC : ODP_EXACT_OTHER;
	}
}

/* Stores the closed interval [lo, hi] of keys of float64 values. */
static inline void
OdpStoreClosed(OdpReader *r, int d, double lo, double hi)
{
	OdpInterval iv = {odp_order_float64(lo), odp_order_float64(hi), 0, NULL, NULL, false, false};

	OdpStoreInterval(r, r->slot, d, &iv);
}

/*
 * The key of the bound of a fixed-width, by-value subtype that follows
 * struct offset *at of a range whose body (shifted by the 4-byte header)
 * has len bytes, the flags byte last: aligns *at for the subtype, checks
 * the bound lies within the body, and moves *at past it.
 */
static uint64
OdpRangeBoundInPlace(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
					 const char *body, Size len, Size *at, int64 id)
{
	const TypeCacheEntry *sub = rc->range->rngelemtype;
	Size		offset;
	Datum		value;
	Numeric		kept;

	*at = att_align_nominal(*at, sub->typalign);
	offset = *at - VARHDRSZ;
	if (offset + sub->typlen > len - 1)
		elog(ERROR, "corrupt range in column \"%s\"", col->name);
	*at += sub->typlen;
	switch (sub->typlen)
	{
		case 2:
			{
				int16		v;

				memcpy(&v, body + offset, sizeof(v));
				value = Int16GetDatum(v);
				break;
			}
		case 4:
			{
				int32		v;

				memcpy(&v, body + offset, sizeof(v));
				value = Int32GetDatum(v);
				break;
			}
		default:
			{
				int64		v;

				memcpy(&v, body + offset, sizeof(v));
				value = Int64GetDatum(v);
				break;
			}
	}
	return OdpBoundKey(r, rc->bound, value, col, id, &kept);
}

/* Whether rc's ranges are read in place (a by-value subtype). */
static inline bool
OdpRangeInPlace(const OdpRegionColumn *rc)
{
	const TypeCacheEntry *sub = rc->range->rngelemtype;

	return sub->typbyval && sub->typlen > 0 && sub->typlen <= (int16) sizeof(Datum);
}

/*
 * The interval (zeroed by the caller) of a range read in place from its
 * body of len bytes, past the varlena header (OdpRangeInterval).
 */
static inline void
OdpRangeBodyInterval(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
					 const char *body, Size len, int64 id, OdpInterval *iv)
{
	char		flags;
	Size		at = sizeof(RangeType);

	if (len < sizeof(Oid) + 1)
		elog(ERROR, "corrupt range in column \"%s\"", col->name);
	flags = body[len - 1];
	if (flags & RANGE_EMPTY)
	{
		iv->f = ODP_BOUND_EMPTY;
		return;
	}
	if (RANGE_HAS_LBOUND(flags))
	{
		iv->lo = OdpRangeBoundInPlace(r, rc, col, body, len, &at, id);
		iv->f |= (flags & RANGE_LB_INC) ? 0 : ODP_BOUND_LOWER_EXCLUSIVE;
	}
	else
		iv->f |= ODP_BOUND_LOWER_INFINITE;
	if (RANGE_HAS_UBOUND(flags))
	{
		iv->hi = OdpRangeBoundInPlace(r, rc, col, body, len, &at, id);
		iv->f |= (flags & RANGE_UB_INC) ? 0 : ODP_BOUND_UPPER_EXCLUSIVE;
	}
	else
		iv->f |= ODP_BOUND_UPPER_INFINITE;
	OdpCanonicalize(iv, rc->canonical);
}

/* The interval of a range's deserialised bounds. */
static void
OdpBoundsInterval(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
				  const RangeBound *lower, const RangeBound *upper, int64 id,
				  OdpInterval *iv)
{
	iv->lo_numeric = iv->hi_numeric = rc->bound == ODP_BOUND_NUMERIC;
	if (lower->infinite)
		iv->f |= ODP_BOUND_LOWER_INFINITE;
	else
	{
		iv->lo = OdpBoundKey(r, rc->bound, lower->val, col, id, &iv->lo_num);
		iv->f |= lower->inclusive ? 0 : ODP_BOUND_LOWER_EXCLUSIVE;
	}
	if (upper->infinite)
		iv->f |= ODP_BOUND_UPPER_INFINITE;
	else
	{
		iv->hi = OdpBoundKey(r, rc->bound, upper->val, col, id, &iv->hi_num);
		iv->f |= upper->inclusive ? 0 : ODP_BOUND_UPPER_EXCLUSIVE;
	}
	OdpCanonicalize(iv, rc->canonical);
}

/*
 * The interval of a range value.  A range of a fixed-width, by-value
 * subtype (integers, dates, timestamps, real, double precision) is read in
 * place from the packed varlena, as range_serialize lays it out: the range
 * type's OID, each present bound aligned for its type (offsets as in the
 * 4-byte-header form, whose body the packed one shares), and the flags in
 * the last byte; so the common short value is neither copied nor
 * deserialised.  Other subtypes (numeric) go through range_deserialize.
 */
static void
OdpRangeInterval(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
				 Datum value, int64 id, OdpInterval *iv)
{
	memset(iv, 0, sizeof(*iv));
	if (OdpRangeInPlace(rc))
	{
		struct varlena *raw = (struct varlena *) DatumGetPointer(value);
		struct varlena *v = pg_detoast_datum_packed(raw);

		OdpRangeBodyInterval(r, rc, col, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), id, iv);
		if (v != raw)
			pfree(v);
	}
	else
	{
		RangeBound	lower,
					upper;
		bool		empty;

		range_deserialize(rc->range, DatumGetRangeTypeP(value), &lower, &upper, &empty);
		if (empty)
			iv->f = ODP_BOUND_EMPTY;
		else
			OdpBoundsInterval(r, rc, col, &lower, &upper, id, iv);
	}
}

/*
 * The intervals of a multirange value, one per range (*n of them, in the
 * row context), or one empty interval for an empty multirange: it
 * overlaps nothing, as && has it.
 */
static OdpInterval *
OdpMultirangeIntervals(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
					   Datum value, int64 id, int *n)
{
	MultirangeType *mr = DatumGetMultirangeTypeP(value);
	OdpInterval *ivs;

	*n = Max((int) mr->rangeCount, 1);
	ivs = palloc0(sizeof(OdpInterval) * *n);
	if (mr->rangeCount == 0)
		ivs[0].f = ODP_BOUND_EMPTY;
	for (uint32 i = 0; i < mr->rangeCount; i++)
	{
		RangeBound	lower,
					upper;

		multirange_get_bounds(rc->range, mr, i, &lower, &upper);
		OdpBoundsInterval(r, rc, col, &lower, &upper, id, &ivs[i]);
	}
	return ivs;
}

/* Reads a box value into intervals d (x) and d + 1 (y). */
static void
OdpReadBox(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
		   Datum value, int64 id)
{
	BOX		   *box = DatumGetBoxP(value);

	OdpEnsureBoundNotNaN(box->low.x, col, id);
	OdpEnsureBoundNotNaN(box->low.y, col, id);
	OdpEnsureBoundNotNaN(box->high.x, col, id);
	OdpEnsureBoundNotNaN(box->high.y, col, id);
	/* box_in puts the smaller coordinates in low */
	OdpStoreClosed(r, rc->dim, Min(box->low.x, box->high.x), Max(box->low.x, box->high.x));
	OdpStoreClosed(r, rc->dim + 1, Min(box->low.y, box->high.y), Max(box->low.y, box->high.y));
}

/* The detoasted cube of value, checked, with its dimensions and point bit. */
static OdpCube *
OdpCubeOf(Datum value, const OdpColumn *col, int *n, bool *point)
{
	OdpCube    *cube = (OdpCube *) PG_DETOAST_DATUM(value);
	Size		size = VARSIZE(cube);

	if (size < offsetof(OdpCube, x))
		elog(ERROR, "corrupt cube in column \"%s\"", col->name);
	*n = (int) (cube->header & ODP_CUBE_DIM_MASK);
	*point = (cube->header & ODP_CUBE_POINT_BIT) != 0;
	if (size < offsetof(OdpCube, x) + sizeof(double) * (Size) *n * (*point ? 1 : 2))
		elog(ERROR, "corrupt cube in column \"%s\"", col->name);
	return cube;
}

/*
 * Sets the reader's dimensions from the first row's cube (the last
 * region column), which must have 1 .. the maximum dimensions left.
 */
static void
OdpSetCubeDims(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
			   Datum value, int64 id)
{
	int			n;
	bool		point;

	(void) OdpCubeOf(value, col, &n, &point);
	if (n < 1 || rc->dim + n > ODP_MAX_INTERVAL_DIMS)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("column \"%s\" has a cube of %d dimension%s in the row with id %lld",
						col->name, n, n == 1 ? "" : "s", (long long) id),
				 errhint("Give every cube between 1 and %d dimensions.",
						 ODP_MAX_INTERVAL_DIMS - rc->dim)));
	OdpReaderSetDims(r, rc->dim + n);
}

/*
 * Reads a cube value, which must have as many dimensions as the first
 * row's.  cube && compares each coordinate's interval from the smaller
 * to the larger of its two corners.
 */
static void
OdpReadCube(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *col,
			Datum value, int64 id)
{
	int			n;
	bool		point;
	OdpCube    *cube = OdpCubeOf(value, col, &n, &point);

	if (n != r->dims - rc->dim)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("cubes have different numbers of dimensions"),
				 errdetail("Column \"%s\" has a cube of %d dimension%s in the row with id %lld, but of %d in the first row read.",
						   col->name, n, n == 1 ? "" : "s", (long long) id, r->dims - rc->dim),
				 errhint("Give every cube the same number of dimensions, for example with cube_subset or cube_enlarge in a query source.")));
	for (int i = 0; i < n; i++)
	{
		double		ll = cube->x[i];
		double		ur = point ? ll : cube->x[n + i];

		OdpEnsureBoundNotNaN(ll, col, id);
		OdpEnsureBoundNotNaN(ur, col, id);
		OdpStoreClosed(r, rc->dim + i, Min(ll, ur), Max(ll, ur));
	}
	if ((Pointer) cube != DatumGetPointer(value))
		pfree(cube);
}

/*
 * Reads a pair of columns into interval d: bounds as the plan's bounds
 * option says; a lower above the upper is an error, as the range
 * constructors make it.
 */
static void
OdpReadPair(OdpReader *r, const OdpRegionColumn *rc, const OdpColumn *locol,
			const OdpColumn *hicol, Datum lov, Datum hiv, int64 id)
{
	OdpInterval iv = {0};
	int			order;

	iv.lo = OdpBoundKey(r, rc->bound, lov, locol, id, &iv.lo_num);
	iv.hi = OdpBoundKey(r, rc->upper_bound, hiv, hicol, id, &iv.hi_num);
	iv.lo_numeric = rc->bound == ODP_BOUND_NUMERIC;
	iv.hi_numeric = rc->upper_bound == ODP_BOUND_NUMERIC;
	iv.f = r->plan->pair_flags;
	order = OdpCompareExact(iv.lo, iv.lo_num, iv.hi, iv.hi_num);
	if (order > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("lower bound \"%s\" is above upper bound \"%s\" in the row with id %lld",
						locol->name, hicol->name, (long long) id),
				 errhint("Swap the columns in dims, or filter out such rows in a query source.")));
	/* equal bounds not both included hold nothing, as in a range */
	if (order == 0 && iv.f != 0)
		iv.f = ODP_BOUND_EMPTY;
	OdpCanonicalize(&iv, rc->canonical);
	OdpStoreInterval(r, r->slot, rc->dim, &iv);
}

/* Most pieces one row's multiranges may make (their ranges' product). */
#define ODP_MAX_ROW_PIECES	1000000

/* A multirange column's intervals in the row being read. */
typedef struct OdpRowPieces
{
	const OdpRegionColumn *rc;
	OdpInterval *ivs;
	int			n;
} OdpRowPieces;

/*
 * Appends pieces 1 .. of the row just stored (piece 0): one for every
 * combination of its multiranges' ranges (mr, nmr of them), each a copy
 * of piece 0 with those ranges' intervals.
 */
static void
OdpAddPieces(OdpReader *r, const OdpRowPieces *mr, int nmr, int64 id)
{
	int64		pieces = 1;
	int64		first = r->rows - 1;
	const OdpColumn *col = &r->plan->features[mr[0].rc->feature];

	for (int k = 0; k < nmr; k++)
	{
		pieces *= mr[k].n;
		if (pieces > ODP_MAX_ROW_PIECES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("the multiranges of the row with id %lld make more than %d pieces",
							(long long) id, ODP_MAX_ROW_PIECES),
					 errdetail("A region with multiranges is matched as every combination of their ranges, one per dimension; column \"%s\" has %d ranges.",
							   col->name, mr[0].n),
					 errhint("Match fewer multirange columns at once, or fewer ranges in a query source (range_merge gives a multirange's hull).")));
	}
	for (int64 p = 1; p < pieces; p++)
	{
		const Size	width = (Size) r->dims;
		int64		digits = p;

		if (unlikely(r->rows >= r->capacity))
			OdpReaderGrow(r);
		memcpy(r->lower + r->rows * width, r->lower + first * width, width * sizeof(uint64));
		memcpy(r->upper + r->rows * width, r->upper + first * width, width * sizeof(uint64));
		memcpy(r->bflags + r->rows * width, r->bflags + first * width, width);
		if (r->exact != NULL)
			memcpy(r->exact + r->rows * width * 2, r->exact + first * width * 2,
				   width * 2 * sizeof(Numeric));
		for (int k = 0; k < nmr; k++)
		{
			OdpStoreInterval(r, r->rows, mr[k].rc->dim, &mr[k].ivs[digits % mr[k].n]);
			digits /= mr[k].n;
		}
		OdpReaderPushId(r, id, true);
	}
}

/*
 * Reads the regions of one row (values and isnull by column position - 1)
 * into the reader's next rows: one, or with multiranges one per piece,
 * ids included.  Call with room for one row.
 */
void
OdpRegionsAddRow(OdpReader *r, const Datum *values, const bool *isnull, int64 id)
{
	const OdpColumnPlan *plan = r->plan;
	OdpRowPieces *mr = NULL;
	int			nmr = 0;
	bool		several = false;

	if (unlikely(r->dims < 0))
	{
		/* the first row: its cube says how many dimensions there are */
		const OdpRegionColumn *rc = &plan->region[plan->nregions - 1];
		const OdpColumn *col = &plan->features[rc->feature];

		Assert(rc->kind == ODP_REGION_CUBE);
		OdpEnsureValueNotNull(isnull[col->pos - 1], col, id);
		OdpSetCubeDims(r, rc, col, values[col->pos - 1], id);
	}
	if (plan->pieces)
		mr = palloc(sizeof(OdpRowPieces) * plan->nregions);
	for (int i = 0; i < plan->nregions; i++)
	{
		const OdpRegionColumn *rc = &plan->region[i];
		const OdpColumn *col = &plan->features[rc->feature];
		int			idx = col->pos - 1;

		OdpEnsureValueNotNull(isnull[idx], col, id);
		switch (rc->kind)
		{
			case ODP_REGION_RANGE:
				{
					OdpInterval iv;

					OdpRangeInterval(r, rc, col, values[idx], id, &iv);
					OdpStoreInterval(r, r->slot, rc->dim, &iv);
					break;
				}
			case ODP_REGION_MULTIRANGE:
				mr[nmr].rc = rc;
				mr[nmr].ivs = OdpMultirangeIntervals(r, rc, col, values[idx], id, &mr[nmr].n);
				OdpStoreInterval(r, r->slot, rc->dim, &mr[nmr].ivs[0]);
				several |= mr[nmr++].n > 1;
				break;
			case ODP_REGION_BOX:
				OdpReadBox(r, rc, col, values[idx], id);
				break;
			case ODP_REGION_CUBE:
				OdpReadCube(r, rc, col, values[idx], id);
				break;
			case ODP_REGION_PAIR:
				{
					const OdpColumn *hicol = &plan->features[rc->feature + 1];

					OdpEnsureValueNotNull(isnull[hicol->pos - 1], hicol, id);
					OdpReadPair(r, rc, col, hicol, values[idx], values[hicol->pos - 1], id);
					break;
				}
		}
	}
	OdpReaderPushId(r, id, false);
	if (several)
		OdpAddPieces(r, mr, nmr, id);
}

/* See input_internal.h: one range column whose ranges are read in place. */
bool
OdpRegionsReadDirect(const OdpColumnPlan *plan)
{
	return plan->regions && plan->nregions == 1 && !plan->pieces &&
		!plan->exact_bounds && plan->region[0].kind == ODP_REGION_RANGE &&
		OdpRangeInPlace(&plan->region[0]);
}

/*
 * See input_internal.h: the row of a heap tuple whose data (past its
 * header) holds id and, at the reader's direct_value_off aligned for it,
 * the range of the only region column, read without deforming the tuple;
 * false, having stored nothing, for a range kept out of line or
 * compressed (the caller then deforms the tuple).
 */
bool
OdpRegionsAddTuple(OdpReader *r, const char *data, int64 id)
{
	const OdpRegionColumn *rc = &r->plan->region[0];
	Size		off = att_align_pointer(r->direct_value_off, r->direct_value_align,
										-1, data + r->direct_value_off);
	const struct varlena *v = (const struct varlena *) (data + off);
	OdpInterval iv;

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		return false;
	memset(&iv, 0, sizeof(iv));
	r->slot = OdpReaderSlot(r, id);
	OdpRangeBodyInterval(r, rc, &r->plan->features[rc->feature],
						 VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), id, &iv);
	OdpStoreInterval(r, r->slot, rc->dim, &iv);
	OdpReaderPushId(r, id, false);
	return true;
}

/* The per-dimension description of plan's regions, dims dimensions. */
OdpRegionDim *
OdpDescribeRegionDims(const OdpColumnPlan *plan, int32 dims)
{
	OdpRegionDim *out = palloc0(sizeof(OdpRegionDim) * Max(dims, 1));

	for (int i = 0; i < plan->nregions; i++)
	{
		const OdpRegionColumn *rc = &plan->region[i];
		const OdpColumn *col = &plan->features[rc->feature];
		int			n = rc->ndims < 0 ? Max(dims - rc->dim, 0) : rc->ndims;

		for (int k = 0; k < n && rc->dim + k < dims; k++)
		{
			OdpRegionDim *d = &out[rc->dim + k];

			d->domain = OdpDomainOf(rc->bound);
			d->box = rc->kind == ODP_REGION_BOX;
			d->column = pstrdup(col->name);
			d->upper_column = rc->kind == ODP_REGION_PAIR ?
				pstrdup(plan->features[rc->feature + 1].name) : NULL;
			d->axis = rc->kind == ODP_REGION_BOX || rc->kind == ODP_REGION_CUBE ? k : -1;
			d->typid = col->typid;
		}
	}
	return out;
}
