/*-------------------------------------------------------------------------
 *
 * gpu_resident.c
 *	  The engine's copies of table cache arrays (include/odp_resident.h):
 *	  a list under a lock, the device copies made and freed through the
 *	  GPU runtime (OdpGpuResidentMake, OdpGpuResidentFree), the host ones
 *	  here.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  kernels/gpu/gpu_resident.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine_internal.h"
#include "gpu/gpu_runtime.h"
#include "include/odp_resident.h"

typedef struct ResidentCopy
{
	struct ResidentCopy *next;
	uint64_t	tag;
	OdpResidentArray array;
} ResidentCopy;

static pthread_mutex_t resident_lock = PTHREAD_MUTEX_INITIALIZER;
static ResidentCopy *resident_copies = NULL;

/* The copy of tag and the link that points at it (lock held). */
static ResidentCopy **
ResidentLink(uint64_t tag)
{
	ResidentCopy **link = &resident_copies;

	while (*link != NULL && (*link)->tag != tag)
		link = &(*link)->next;
	return link;
}

/* Frees a copy's memory (unlinked). */
static void
ResidentFree(ResidentCopy *c)
{
	if (c->array.ordinal == ODP_RESIDENT_HOST)
		free((void *) c->array.copy);
	else
		OdpGpuResidentFree(c->array.ordinal, (void *) c->array.copy);
	free(c);
}

/* See odp_resident.h. */
OdpStatus
odp_resident_make(OdpContext *ctx, uint64_t tag, int ordinal, const void *host,
				  size_t bytes)
{
	ResidentCopy *c = calloc(1, sizeof(ResidentCopy));
	void	   *copy = NULL;
	OdpStatus	status = ODP_OK;
	double		t0 = odp_now_ms();

	if (c == NULL)
		return odp_fail(ctx, ODP_ERR_HOST_OOM, "out of host memory for a table cache copy");
	if (ordinal == ODP_RESIDENT_HOST)
	{
		copy = malloc(bytes > 0 ? bytes : 1);
		if (copy == NULL)
			status = odp_fail(ctx, ODP_ERR_HOST_OOM,
							  "out of host memory for a table cache copy of %zu bytes", bytes);
		else
			memcpy(copy, host, bytes);
	}
	else
		status = OdpGpuResidentMake(ctx, ordinal, host, bytes, &copy);
	if (status != ODP_OK)
	{
		free(c);
		return status;
	}
	ctx->transfer_ms += odp_now_ms() - t0;
	c->tag = tag;
	c->array.host = host;
	c->array.bytes = bytes;
	c->array.copy = copy;
	c->array.ordinal = ordinal;
	pthread_mutex_lock(&resident_lock);
	c->next = resident_copies;
	resident_copies = c;
	pthread_mutex_unlock(&resident_lock);
	return ODP_OK;
}

/* See odp_resident.h. */
bool
odp_resident_find(uint64_t tag, OdpResidentArray *out)
{
	ResidentCopy *c;

	pthread_mutex_lock(&resident_lock);
	c = *ResidentLink(tag);
	if (c != NULL)
		*out = c->array;
	pthread_mutex_unlock(&resident_lock);
	return c != NULL;
}

/* See odp_resident.h. */
void
odp_resident_drop(uint64_t tag)
{
	ResidentCopy **link;
	ResidentCopy *c;

	pthread_mutex_lock(&resident_lock);
	link = ResidentLink(tag);
	c = *link;
	if (c != NULL)
		*link = c->next;
	pthread_mutex_unlock(&resident_lock);
	if (c != NULL)
		ResidentFree(c);
}

/* See odp_resident.h. */
void
odp_resident_forget_device(int ordinal)
{
	ResidentCopy **link = &resident_copies;

	pthread_mutex_lock(&resident_lock);
	while (*link != NULL)
	{
		ResidentCopy *c = *link;

		if (c->array.ordinal == ordinal)
		{
			*link = c->next;
			free(c);
		}
		else
			link = &c->next;
	}
	pthread_mutex_unlock(&resident_lock);
}
