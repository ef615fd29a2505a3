/* SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/node/efadv_abi.h"
#include "common/node/rdma.h"

/*
 * aws-ofi-nccl's platform table (src/platform-aws.cpp, platform_data_map,
 * v1.21.1), in its order: an exact name or a POSIX extended regex, first
 * match wins, and whether the plugin requires GPUDirect RDMA there. One
 * change: the plugin's "inf" entry is "^inf.*", added for Inf2e (commit
 * 71a1e68c, "neuron: add inf2e.32xlarge"); it also matches inf1, whose EFA
 * has no RDMA read (AWS's EFA documentation: RDMA read on Nitro v4 and
 * later), so it is narrowed to inf2 here.
 */
static const struct {
	const char *name;
	const char *regex;
	bool gdr;
} platforms[] = {
	{ "p4d.24xlarge", NULL, true },
	{ "p4de.24xlarge", NULL, true },
	{ "p3dn.24xlarge", NULL, false },
	{ "p5.4xlarge", NULL, false },
	{ "p5/p5e", "^p5(e?\\..*)", true },
	{ "p5en/p6-b200", "^(p5en|p6-b200).*", true },
	{ "p6-b300", "^p6-b300.*", true },
	{ "p-series", "^p([5-9]|[0-9]{2,}).*", true },
	{ "g5.48xlarge", NULL, false },
	{ "g7e.8xlarge", NULL, false },
	{ "g7e", "^g7e\\.(12|24|48)xlarge", true },
	{ "Trainium Family", "^trn.*", true },
	{ "inf", "^inf2.*", true },
};

const char *efa_platform_gdr(const char *type)
{
	for (size_t i = 0; type && i < sizeof(platforms) / sizeof(platforms[0]); i++) {
		regex_t re;
		bool match;

		if (!platforms[i].regex) {
			match = !strcmp(type, platforms[i].name);
		} else {
			if (regcomp(&re, platforms[i].regex, REG_EXTENDED | REG_NOSUB))
				continue;
			match = !regexec(&re, type, 0, NULL, 0);
			regfree(&re);
		}
		if (match)
			return platforms[i].gdr ? platforms[i].name : NULL;
	}
	return NULL;
}

/* libibverbs/verbs.h's device list calls, and efadv_query_device
 * (efadv_abi.h), looked up in the node's own libefa at run time. */
struct verbs {
	void **(*get_device_list)(int *num);
	void (*free_device_list)(void **list);
	const char *(*get_device_name)(void *device);
	void *(*open_device)(void *device);
	int (*close_device)(void *context);
	int (*query)(void *context, struct efadv_device_attr *attr, uint32_t inlen);
};

/*
 * Where the node's package manager or the EFA installer puts libefa:
 * Debian and Ubuntu's multiarch directory, RHEL and Amazon Linux's lib64.
 */
const char *const efa_libefa_dirs[] = {
#if defined(__x86_64__)
	"/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
	"/usr/lib/aarch64-linux-gnu",
#endif
	"/usr/lib64", "/usr/lib", "/opt/amazon/efa/lib64", "/opt/amazon/efa/lib", NULL,
};

static void *open_libefa(const char *root, char *why, size_t size)
{
	const char *prefix = strcmp(root, "/") ? root : "";
	char path[4096];

	for (const char *const *dir = efa_libefa_dirs; *dir; dir++) {
		void *lib;

		snprintf(path, sizeof(path), "%s%s/libefa.so.1", prefix, *dir);
		if (access(path, R_OK))
			continue;
		lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (lib)
			return lib;
		snprintf(why, size, "%s does not load (%s)", path, dlerror());
		return NULL;
	}
	snprintf(why, size, "no libefa.so.1 (rdma-core) on this node to ask the device");
	return NULL;
}

static bool bind_verbs(void *lib, struct verbs *v)
{
	/* libefa's handle reaches libibverbs, which it links. */
	*(void **)&v->get_device_list = dlsym(lib, "ibv_get_device_list");
	*(void **)&v->free_device_list = dlsym(lib, "ibv_free_device_list");
	*(void **)&v->get_device_name = dlsym(lib, "ibv_get_device_name");
	*(void **)&v->open_device = dlsym(lib, "ibv_open_device");
	*(void **)&v->close_device = dlsym(lib, "ibv_close_device");
	*(void **)&v->query = dlsym(lib, "efadv_query_device");
	return v->get_device_list && v->free_device_list && v->get_device_name &&
	       v->open_device && v->close_device && v->query;
}

/* The first device efadv_query_device answers for (others are not EFA). */
static enum efa_rdma_read ask_devices(const struct verbs *v, char *why, size_t size)
{
	enum efa_rdma_read answer = EFA_RDMA_READ_UNKNOWN;
	int n = 0;
	void **list = v->get_device_list(&n);

	snprintf(why, size, "no EFA device answered efadv_query_device");
	for (int i = 0; list && i < n && answer == EFA_RDMA_READ_UNKNOWN; i++) {
		struct efadv_device_attr attr;
		void *ctx = v->open_device(list[i]);

		if (!ctx)
			continue;
		memset(&attr, 0, sizeof(attr));
		if (!v->query(ctx, &attr, sizeof(attr))) {
			bool yes = attr.device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ;

			answer = yes ? EFA_RDMA_READ_YES : EFA_RDMA_READ_NO;
			snprintf(why, size, "%s reports %sRDMA read (efadv_query_device)",
				 v->get_device_name(list[i]), yes ? "" : "no ");
		}
		v->close_device(ctx);
	}
	if (list)
		v->free_device_list(list);
	return answer;
}

enum efa_rdma_read efa_device_rdma_read(const char *root, char *why, size_t size)
{
	enum efa_rdma_read answer = EFA_RDMA_READ_UNKNOWN;
	struct verbs v;
	void *lib = open_libefa(root, why, size);

	if (!lib)
		return answer;
	if (bind_verbs(lib, &v))
		answer = ask_devices(&v, why, size);
	else
		snprintf(why, size, "libefa.so.1 lacks efadv_query_device or the verbs calls");
	dlclose(lib);
	return answer;
}

enum efa_rdma_read efa_rdma_read_discover(const char *root, const char *type,
					  char *why, size_t size)
{
	const char *entry = efa_platform_gdr(type);
	enum efa_rdma_read answer;
	char device[256];

	if (entry) {
		snprintf(why, size, "aws-ofi-nccl's platform table runs GPUDirect RDMA on %s (entry \"%s\")",
			 type, entry);
		return EFA_RDMA_READ_YES;
	}
	answer = efa_device_rdma_read(root, device, sizeof(device));

	snprintf(why, size, "%s; aws-ofi-nccl's platform table lists no GPUDirect RDMA for %s",
		 device, type ? type : "an unknown instance type");
	return answer;
}
