/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for rdma-core's libefa.so.1, for the tests of the RDMA-read
 * question (src/common/node/rdma.c): the verbs calls it answers through
 * and efadv_query_device, declared as rdma-core's public headers declare
 * them (libibverbs/verbs.h, providers/efa/efadv.h). What the devices say
 * comes from the environment:
 *   FAKEEFA_DEVICES  how many devices the list holds (default 1)
 *   FAKEEFA_CAPS     their device_caps (default 1: RDMA read)
 *   FAKEEFA_QUERY    "fail": efadv_query_device answers EOPNOTSUPP, as
 *                    for a device that is not EFA
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/node/efadv_abi.h"

struct fake_device {
	char name[32];
};

struct fake_context {
	struct fake_device *device;
};

/* The calls rdma-core exports, as libibverbs and libefa export them. */
struct fake_device **ibv_get_device_list(int *num);
void ibv_free_device_list(struct fake_device **list);
const char *ibv_get_device_name(struct fake_device *device);
struct fake_context *ibv_open_device(struct fake_device *device);
int ibv_close_device(struct fake_context *ctx);
int efadv_query_device(struct fake_context *ctx, struct efadv_device_attr *attr, uint32_t inlen);

static long env_long(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : dflt;
}

struct fake_device **ibv_get_device_list(int *num)
{
	long n = env_long("FAKEEFA_DEVICES", 1);
	struct fake_device **list = calloc((size_t)n + 1, sizeof(*list));

	if (!list)
		return NULL;
	for (long i = 0; i < n; i++) {
		if (!(list[i] = calloc(1, sizeof(**list))))
			break;
		snprintf(list[i]->name, sizeof(list[i]->name), "rdmap%lds0", i);
	}
	if (num)
		*num = (int)n;
	return list;
}

void ibv_free_device_list(struct fake_device **list)
{
	for (size_t i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

const char *ibv_get_device_name(struct fake_device *device)
{
	return device->name;
}

struct fake_context *ibv_open_device(struct fake_device *device)
{
	struct fake_context *ctx = calloc(1, sizeof(*ctx));

	if (ctx)
		ctx->device = device;
	return ctx;
}

int ibv_close_device(struct fake_context *ctx)
{
	free(ctx);
	return 0;
}

int efadv_query_device(struct fake_context *ctx, struct efadv_device_attr *attr, uint32_t inlen)
{
	const char *query = getenv("FAKEEFA_QUERY");

	(void)ctx;
	if (query && !strcmp(query, "fail"))
		return EOPNOTSUPP;
	if (inlen < offsetof(struct efadv_device_attr, max_rdma_size))
		return EINVAL;
	memset(attr, 0, inlen);
	attr->device_caps = (uint32_t)env_long("FAKEEFA_CAPS", 1);
	return 0;
}
