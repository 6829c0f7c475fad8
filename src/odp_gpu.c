/*-------------------------------------------------------------------------
 *
 * odp_gpu.c
 *	  Module entry: magic block and _PG_init.
 *
 * _PG_init defines settings and, when the library is preloaded, the GPU
 * service's shared memory and worker (src/service/).  CUDA is never
 * initialised here: the postmaster runs this when preloading, and a CUDA
 * context does not survive fork.  The service's worker initialises it;
 * without preloading, the backend that first needs it (engine_glue.c).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/odp_gpu.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "backend_staging.h"
#include "service/service.h"
#include "settings.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* Defines the odp_gpu.* settings; registers the service when preloaded. */
void
_PG_init(void)
{
	OdpDefineSettings();
	OdpServiceDefineSettings();
	OdpBackendStagingDefineSetting();
	MarkGUCPrefixReserved("odp_gpu");
	if (process_shared_preload_libraries_in_progress)
		OdpServiceRegister();
}
