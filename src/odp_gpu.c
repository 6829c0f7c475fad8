/*-------------------------------------------------------------------------
 *
 * odp_gpu.c
 *	  Module entry: magic block and _PG_init.
 *
 * _PG_init only defines settings.  CUDA is initialised lazily in the
 * backend that first needs it (engine_glue.c), never here: the library
 * may be preloaded into the postmaster, and a CUDA context does not
 * survive fork.
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
#include "settings.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* Defines the odp_gpu.* settings when the library is loaded. */
void
_PG_init(void)
{
	OdpDefineSettings();
}
