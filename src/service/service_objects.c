/*-------------------------------------------------------------------------
 *
 * service_objects.c
 *	  The GPU service's session-owned objects (service_objects.h).  No
 *	  PostgreSQL here: the engine threads call this file.
 *
 * A singly linked list under one mutex: a session holds a few node states
 * at most, and every use is a whole engine call.  Freeing an object frees
 * its node (device memory included) in the thread that drops it last.
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  src/service/service_objects.c
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdlib.h>

#include "service/service_objects.h"

typedef struct ServiceObject
{
	struct ServiceObject *next;
	int64_t		handle;
	int			owner;
	int			device;
	int			uses;
	bool		dropped;
	OdpSsNode  *node;
	void	   *arrays[ODP_SERVICE_OBJECT_ARRAYS];
	int			narrays;
} ServiceObject;

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;
static ServiceObject *objects = NULL;
static int64_t next_handle = 1;

static void
ObjectFree(ServiceObject *o)
{
	odp_ss_node_free(o->node);
	for (int i = 0; i < o->narrays; i++)
		free(o->arrays[i]);
	free(o);
}

/* Unlinks and returns o if nobody uses it (lock held), else NULL. */
static ServiceObject *
ObjectUnlinkIfIdle(ServiceObject *o)
{
	if (!o->dropped || o->uses > 0)
		return NULL;
	for (ServiceObject **p = &objects; *p != NULL; p = &(*p)->next)
		if (*p == o)
		{
			*p = o->next;
			return o;
		}
	return NULL;
}

static ServiceObject *
ObjectFind(int64_t handle)
{
	for (ServiceObject *o = objects; o != NULL; o = o->next)
		if (o->handle == handle)
			return o;
	return NULL;
}

int64_t
odp_service_object_add(int owner, int device, OdpSsNode *node, void **arrays,
					   int narrays)
{
	ServiceObject *o = calloc(1, sizeof(ServiceObject));

	if (o == NULL || narrays > ODP_SERVICE_OBJECT_ARRAYS)
	{
		free(o);
		return 0;
	}
	o->owner = owner;
	o->device = device;
	o->node = node;
	o->narrays = narrays;
	for (int i = 0; i < narrays; i++)
		o->arrays[i] = arrays[i];
	pthread_mutex_lock(&objects_lock);
	o->handle = next_handle++;
	o->next = objects;
	objects = o;
	pthread_mutex_unlock(&objects_lock);
	return o->handle;
}

OdpSsNode *
odp_service_object_use(int owner, int64_t handle, int *device)
{
	ServiceObject *o;
	OdpSsNode  *node = NULL;

	pthread_mutex_lock(&objects_lock);
	o = ObjectFind(handle);
	if (o != NULL && o->owner == owner && !o->dropped)
	{
		o->uses++;
		node = o->node;
		*device = o->device;
	}
	pthread_mutex_unlock(&objects_lock);
	return node;
}

void
odp_service_object_done(int64_t handle)
{
	ServiceObject *o;
	ServiceObject *idle = NULL;

	pthread_mutex_lock(&objects_lock);
	o = ObjectFind(handle);
	if (o != NULL)
	{
		o->uses--;
		idle = ObjectUnlinkIfIdle(o);
	}
	pthread_mutex_unlock(&objects_lock);
	if (idle != NULL)
		ObjectFree(idle);
}

void
odp_service_object_drop(int owner, int64_t handle)
{
	ServiceObject *o;
	ServiceObject *idle = NULL;

	pthread_mutex_lock(&objects_lock);
	o = ObjectFind(handle);
	if (o != NULL && o->owner == owner)
	{
		o->dropped = true;
		idle = ObjectUnlinkIfIdle(o);
	}
	pthread_mutex_unlock(&objects_lock);
	if (idle != NULL)
		ObjectFree(idle);
}

int
odp_service_objects_reap(bool (*is_dead) (int owner))
{
	ServiceObject *freed = NULL;
	int			n = 0;

	pthread_mutex_lock(&objects_lock);
	for (ServiceObject *o = objects, *next; o != NULL; o = next)
	{
		ServiceObject *idle;

		next = o->next;
		if (o->dropped || !is_dead(o->owner))
			continue;
		o->dropped = true;
		if ((idle = ObjectUnlinkIfIdle(o)) != NULL)
		{
			idle->next = freed;
			freed = idle;
		}
	}
	pthread_mutex_unlock(&objects_lock);
	while (freed != NULL)
	{
		ServiceObject *next = freed->next;

		ObjectFree(freed);
		freed = next;
		n++;
	}
	return n;
}
