/*-------------------------------------------------------------------------
 *
 * skyline_band.c
 *	  What the skyline's SQL functions (skyline.c) and the distributed
 *	  skyline (distributed.c) share: the directions argument, parsed and
 *	  checked against the features, and the k-skyband of one source.
 *
 * A file of its own, below both callers, so that calls run one way:
 * skyline.c calls distributed.c for a sharded source, and both call
 * here.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/skyline_band.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "engine_glue.h"
#include "input/input.h"
#include "skyline_band.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/*
 * Parses a directions array (NULL: every feature min) into nentries
 * flags, 1 = max, in palloc'd memory, or NULL for all min.  The length is
 * checked later against the features (OdpSkylineCheckDirections).
 */
uint8 *
OdpSkylineParseDirections(ArrayType *arr, int *nentries)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	uint8	   *maximize;

	*nentries = -1;
	if (arr == NULL)
		return NULL;
	if (ARR_ELEMTYPE(arr) != TEXTOID)
		elog(ERROR, "directions must be a text array");
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("directions must be a one-dimensional array"),
				 errhint("Pass one entry per feature, for example '{min,max}'.")));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	maximize = (uint8 *) palloc(Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		char	   *name;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("directions must not contain nulls"),
					 errdetail("Entry %d is null.", i + 1),
					 errhint("Use min or max for every feature.")));
		name = TextDatumGetCString(elems[i]);
		if (pg_strcasecmp(name, "min") == 0)
			maximize[i] = 0;
		else if (pg_strcasecmp(name, "max") == 0)
			maximize[i] = 1;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown direction \"%s\"", name),
					 errdetail("Entry %d of directions.", i + 1),
					 errhint("Use min (smaller is better) or max (larger is better).")));
	}
	*nentries = n;
	return maximize;
}

/* Ensures directions (nentries >= 0: given) have one entry per feature. */
void
OdpSkylineCheckDirections(int nentries, const OdpInput *in)
{
	if (nentries >= 0 && nentries != in->dims)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("directions has %d entr%s but %s has %d feature%s",
						nentries, nentries == 1 ? "y" : "ies", in->source_desc,
						in->dims, in->dims == 1 ? "" : "s"),
				 errhint("Give one direction (min or max) per feature, per element for an array feature.")));
}

/* See skyline_band.h. */
void
OdpSkylineBandRows(const OdpInputSpec *spec, const uint8 *maximize, int nentries,
				   int32 band, OdpInput *band_rows)
{
	OdpInput	in;
	OdpRunInfo	info;
	int32	   *dominated_by;
	int64		kept = 0;

	OdpReadInput(spec, &in);
	if (in.rows > 0)
		OdpSkylineCheckDirections(nentries, &in);
	*band_rows = in;
	if (in.rows == 0)
		return;
	dominated_by = MemoryContextAllocHuge(CurrentMemoryContext,
										  sizeof(int32) * (Size) in.rows);
	OdpComputeSkyline(&in, maximize, band, dominated_by, &info);
	/* the band is kept in place, in id order: a cached table's rows are shared */
	OdpInputOwnArrays(&in);
	for (int64 r = 0; r < in.rows; r++)
	{
		if (dominated_by[r] >= band)
			continue;
		in.ids[kept] = in.ids[r];
		memmove(in.data64 + kept * in.dims, in.data64 + r * in.dims,
				sizeof(double) * (Size) in.dims);
		kept++;
	}
	*band_rows = in;
	band_rows->rows = kept;
}
