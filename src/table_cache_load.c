/*-------------------------------------------------------------------------
 *
 * table_cache_load.c
 *	  odp_gpu_table_cache_load(): reads a table into the table cache
 *	  (service/table_cache.h) ahead of the first call that needs it, as
 *	  that call's read would, so that the call finds it there.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/table_cache_load.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "args.h"
#include "fmgr.h"
#include "input/input.h"
#include "odp_engine.h"
#include "service/table_cache.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(odp_gpu_table_cache_load);

/*
 * odp_gpu_table_cache_load(relation regclass, form text DEFAULT
 * 'distance', id_column text DEFAULT NULL, features text[] DEFAULT NULL,
 * bounds text DEFAULT '[]') -> the rows kept.  form says how the calls to
 * come read the table: 'distance' (outliers and k-NN: in the precision
 * the features are stored in), 'float64' (correlations, the skyline),
 * 'regions' (the matching; features are its dims, bounds its bounds).
 */
Datum
odp_gpu_table_cache_load(PG_FUNCTION_ARGS)
{
	OdpInputSpec spec;
	OdpInput	in;
	char	   *form;

	OdpArgNotNull(fcinfo, 0, "relation");
	OdpArgNotNull(fcinfo, 1, "form");
	memset(&spec, 0, sizeof(spec));
	spec.source = OdpArgSource(fcinfo, 0);
	spec.id_column = OdpArgOptText(fcinfo, 2);
	spec.features = OdpArgOptArray(fcinfo, 3);
	form = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strcmp(form, "distance") == 0)
		spec.values = ODP_VALUES_DISTANCE;
	else if (strcmp(form, "float64") == 0)
	{
		spec.values = ODP_VALUES_FLOAT8;
		spec.max_dims = ODP_MAX_SERIES_LEN;
	}
	else if (strcmp(form, "regions") == 0)
	{
		spec.values = ODP_VALUES_REGIONS;
		spec.pair_flags = OdpArgBounds(fcinfo, 4);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown form \"%s\"", form),
				 errhint("Use 'distance' (outliers, k-NN), 'float64' (correlations, skyline) or 'regions' (matching).")));
	if (!OdpTableCacheEnabled())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the table cache is not available"),
				 errhint("It needs shared_preload_libraries = 'odp_gpu', odp_gpu.staging_size and odp_gpu.table_cache_share above 0, and odp_gpu.table_cache on.")));
	OdpReadInput(&spec, &in);
	if (!in.cached && !in.cache_kept)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s was not kept in the table cache", in.source_desc),
				 errdetail("%s.", in.cache_why != NULL ? in.cache_why : "it could not be")));
	PG_RETURN_INT64(in.rows);
}
