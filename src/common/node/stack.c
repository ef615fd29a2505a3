/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "common/node/libpath.h"
#include "common/node/stack.h"

#define INSTALLED_MAX 65536
#define LIBDIRS_MAX 8
#define MULTIARCH_SUFFIX "-linux-gnu"

const char *const efa_stack_roots[] = { "/opt/amazon", "/opt/aws-ofi-nccl", NULL };
const char efa_stack_record[] = "/opt/amazon/efa_installed_packages";

void efa_stack_clear(struct efa_stack *stack)
{
	free(stack->installer);
	free(stack->libfabric);
	free(stack->rdma_core);
	free(stack->ofi_nccl);
	free(stack->efa_driver);
	free(stack->kernel);
	efa_strv_free(stack->libdirs);
	memset(stack, 0, sizeof(*stack));
}

/* Package names the installer has used for each component, deb and rpm. */
static const struct {
	const char *package;
	size_t offset;
} packages[] = {
	{ "libfabric-aws", offsetof(struct efa_stack, libfabric) },
	{ "libfabric1-aws", offsetof(struct efa_stack, libfabric) },
	{ "rdma-core", offsetof(struct efa_stack, rdma_core) },
	{ "libnccl-ofi", offsetof(struct efa_stack, ofi_nccl) },
	{ "aws-ofi-nccl", offsetof(struct efa_stack, ofi_nccl) },
	{ "efa", offsetof(struct efa_stack, efa_driver) },
};

/*
 * Splits a package file name into name and version: deb
 * "libfabric1-aws_2.1.0amzn5.0_amd64", rpm
 * "libfabric-aws-1.16.1amzn3.0-1.amzn2.x86_64". The version starts at the
 * first '_' or at the first '-' followed by a digit.
 */
static int split_package(const char *pkg, size_t len, size_t *name_len,
			 const char **version, size_t *version_len)
{
	const char *end = pkg + len, *v = NULL, *c;

	for (c = pkg; c < end; c++) {
		if (*c == '_' || (*c == '-' && c + 1 < end && isdigit((unsigned char)c[1]))) {
			v = c + 1;
			break;
		}
	}
	if (!v || v == end)
		return -1;
	*name_len = (size_t)(c - pkg);
	*version = v;
	for (c = v; c < end && *c != '_' && *c != '-'; c++)
		;
	*version_len = (size_t)(c - v);
	return 0;
}

static int take_package(struct efa_stack *stack, const char *pkg, size_t len)
{
	const char *version;
	size_t name_len, version_len;

	if (split_package(pkg, len, &name_len, &version, &version_len))
		return 0;
	for (size_t i = 0; i < sizeof(packages) / sizeof(packages[0]); i++) {
		char **field = (char **)((char *)stack + packages[i].offset);

		if (strlen(packages[i].package) != name_len ||
		    strncmp(packages[i].package, pkg, name_len) || *field)
			continue;
		*field = strndup(version, version_len);
		return *field ? 0 : -1;
	}
	return 0;
}

int efa_stack_parse_installed(const char *text, struct efa_stack *stack)
{
	static const char header[] = "# EFA installer version:";
	const char *p = text;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (!strncmp(p, header, sizeof(header) - 1) && !stack->installer) {
			const char *v = p + sizeof(header) - 1;
			size_t vlen;

			while (*v == ' ' || *v == '\t')
				v++;
			for (vlen = 0; v + vlen < p + len && !isspace((unsigned char)v[vlen]); vlen++)
				;
			if (vlen && !(stack->installer = strndup(v, vlen)))
				return -1;
		} else if (*p != '#') {
			const char *w = p, *end = p + len;

			while (w < end) {
				size_t wlen;

				while (w < end && isspace((unsigned char)*w))
					w++;
				for (wlen = 0; w + wlen < end && !isspace((unsigned char)w[wlen]); wlen++)
					;
				if (wlen && take_package(stack, w, wlen))
					return -1;
				w += wlen;
			}
		}
		p += len + (eol ? 1 : 0);
	}
	return 0;
}

/* A directory holding at least one shared library. */
static bool has_libraries(const struct efa_sysfs *fs, const char *dir)
{
	char **entries = efa_sysfs_list(fs, "%s", dir);
	bool found = false;

	if (!entries)
		return false;
	for (char **e = entries; *e && !found; e++)
		found = !strncmp(*e, "lib", 3) && strstr(*e, ".so");
	efa_strv_free(entries);
	return found;
}

static int add_libdir(const struct efa_sysfs *fs, struct efa_stack *stack, size_t *n,
		      const char *dir)
{
	int fabric = 0, plugin = 0;

	if (*n == LIBDIRS_MAX)
		return 0;
	stack->libdirs[*n] = strdup(dir);
	if (!stack->libdirs[*n])
		return -1;
	(*n)++;
	if ((!stack->has_libfabric && (fabric = efa_lib_in_dir(fs, dir, EFA_LIB_FABRIC)) < 0) ||
	    (!stack->has_net_plugin && (plugin = efa_lib_in_dir(fs, dir, EFA_LIB_NET_PLUGIN)) < 0))
		return -1;
	stack->has_libfabric = stack->has_libfabric || fabric;
	stack->has_net_plugin = stack->has_net_plugin || plugin;
	return 0;
}

/* The library directories of one install prefix: RPMs use lib64 (the
 * aws-ofi-nccl spec's %{_libdir} under /opt/amazon/ofi-nccl), Debian
 * packages lib or a multiarch lib/<triplet> (x86_64-linux-gnu,
 * aarch64-linux-gnu, ...). */
static int prefix_libdirs(const struct efa_sysfs *fs, struct efa_stack *stack, size_t *n,
			  const char *prefix)
{
	char *lib64 = NULL, *lib = NULL, *dir = NULL;
	char **entries = NULL;
	int rc = -1;

	if (asprintf(&lib64, "%s/lib64", prefix) < 0) {
		lib64 = NULL;
		goto out;
	}
	if (asprintf(&lib, "%s/lib", prefix) < 0) {
		lib = NULL;
		goto out;
	}
	if (has_libraries(fs, lib64) && add_libdir(fs, stack, n, lib64))
		goto out;
	entries = efa_sysfs_list(fs, "%s", lib);
	if (!entries)
		goto out;
	for (char **e = entries; *e; e++) {
		size_t elen = strlen(*e);

		if (elen <= strlen(MULTIARCH_SUFFIX) ||
		    strcmp(*e + elen - strlen(MULTIARCH_SUFFIX), MULTIARCH_SUFFIX))
			continue;
		if (asprintf(&dir, "%s/%s", lib, *e) < 0) {
			dir = NULL;
			goto out;
		}
		if (has_libraries(fs, dir) && add_libdir(fs, stack, n, dir))
			goto out;
		free(dir);
		dir = NULL;
	}
	if (has_libraries(fs, lib) && add_libdir(fs, stack, n, lib))
		goto out;
	rc = 0;
out:
	free(dir);
	efa_strv_free(entries);
	free(lib);
	free(lib64);
	return rc;
}

/*
 * efa_stack_prefixes: libfabric first, then the NCCL plugin: the order aws-ofi-nccl's own
 * set-up scripts use. The plugin's prefixes: the EFA installer's packages
 * (/opt/amazon/ofi-nccl, installer 1.29+), the NGC-container packages
 * libnccl-ofi-ngc-v1/-v2 (/opt/amazon/aws-ofi-nccl: aws-ofi-nccl's
 * contrib/debian-template/rules), and builds from source into
 * /opt/aws-ofi-nccl (older AMIs and containers).
 */
const char *const efa_stack_prefixes[] = {
	"/opt/amazon/efa", "/opt/amazon/ofi-nccl", "/opt/amazon/aws-ofi-nccl",
	"/opt/aws-ofi-nccl", NULL,
};

static int discover_libdirs(const struct efa_sysfs *fs, struct efa_stack *stack)
{
	size_t n = 0;

	stack->libdirs = calloc(LIBDIRS_MAX + 1, sizeof(*stack->libdirs));
	if (!stack->libdirs)
		return -1;
	for (const char *const *p = efa_stack_prefixes; *p; p++)
		if (prefix_libdirs(fs, stack, &n, *p))
			return -1;
	return 0;
}

/*
 * aws-ofi-nccl logs its autoconf PACKAGE_STRING when NCCL loads it, so the
 * library holds "Using aws-ofi-nccl 1.5.0aws" (releases up to 1.7) or
 * "Initializing aws-ofi-nccl 1.11.0-aws" (1.8 on; src/nccl_ofi_net.c and
 * nccl_ofi_api.c of each tag). A plugin built from source or installed
 * from the NGC packages is in no installer record: this is its version.
 * The file is read in pieces, at most PLUGIN_READ_MAX bytes of it.
 */
#define PLUGIN_READ_MAX (64u * 1024 * 1024)
#define PLUGIN_CHUNK 65536
#define PLUGIN_NAME "aws-ofi-nccl "
#define VERSION_MAX 32

static bool version_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_' || c == '+';
}

/* The version after a marker in buf[0..len), or false. */
static bool find_marked_version(const char *buf, size_t len, char *out, size_t size)
{
	static const char *const markers[] = { "Initializing " PLUGIN_NAME, "Using " PLUGIN_NAME };

	for (size_t m = 0; m < sizeof(markers) / sizeof(markers[0]); m++) {
		size_t mlen = strlen(markers[m]);
		const char *hit = memmem(buf, len, markers[m], mlen);
		size_t v = 0;

		if (!hit)
			continue;
		hit += mlen;
		while (hit + v < buf + len && v + 1 < size && version_char(hit[v]))
			v++;
		/* A NUL ends the string in the library; anything else is not
		 * the package string. */
		if (!v || !isdigit((unsigned char)hit[0]) || hit + v == buf + len || hit[v] != '\0')
			continue;
		memcpy(out, hit, v);
		out[v] = '\0';
		return true;
	}
	return false;
}

static bool plugin_file_version(const struct efa_sysfs *fs, const char *dir, const char *name,
				char *out, size_t size)
{
	/* Room for a marker and its version cut by a piece's end. */
	const size_t keep = sizeof("Initializing " PLUGIN_NAME) + VERSION_MAX;
	char *buf = malloc(PLUGIN_CHUNK + keep);
	size_t have = 0, total = 0;
	bool found = false;
	int fd = efa_sysfs_open_regular(fs, "%s/%s", dir, name);

	while (buf && fd >= 0 && !found && total < PLUGIN_READ_MAX) {
		ssize_t got = read(fd, buf + have, PLUGIN_CHUNK);

		if (got <= 0)
			break;
		total += (size_t)got;
		have += (size_t)got;
		found = find_marked_version(buf, have, out, size);
		if (have > keep) {
			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return found;
}

/* The plugin's own version, from the first plugin library in libdirs. */
static int plugin_version(const struct efa_sysfs *fs, struct efa_stack *stack)
{
	char version[VERSION_MAX];

	for (char **d = stack->libdirs; d && *d; d++) {
		char **entries = efa_sysfs_list(fs, "%s", *d);
		bool found = false;

		if (!entries)
			return -1;
		for (char **e = entries; *e && !found; e++)
			found = efa_lib_file(*e, EFA_LIB_NET_PLUGIN) &&
				plugin_file_version(fs, *d, *e, version, sizeof(version));
		efa_strv_free(entries);
		if (found)
			return (stack->ofi_nccl = strdup(version)) ? 0 : -1;
	}
	return 0;
}

int efa_stack_discover_software(const struct efa_sysfs *fs, struct efa_stack *stack)
{
	struct efa_error err;
	char *text = NULL;
	size_t len;
	int rc;

	memset(stack, 0, sizeof(*stack));
	/* A missing, unreadable or oversized record leaves every version
	 * unknown. */
	if (!efa_sysfs_read_file(fs, INSTALLED_MAX, &text, &len, &err, "%s", efa_stack_record)) {
		rc = efa_stack_parse_installed(text, stack);
		free(text);
		if (rc)
			return -1;
	}
	if (discover_libdirs(fs, stack))
		return -1;
	return stack->ofi_nccl ? 0 : plugin_version(fs, stack);
}

int efa_stack_discover(const struct efa_sysfs *fs, struct efa_stack *stack)
{
	char release[256];

	if (efa_stack_discover_software(fs, stack))
		return -1;
	/* The kernel the steps run on: a container sees its host's. */
	if (!efa_sysfs_read(fs, release, sizeof(release), "/proc/sys/kernel/osrelease") && release[0] &&
	    !(stack->kernel = strdup(release)))
		return -1;
	return 0;
}

const char *efa_stack_version(const struct efa_stack *stack, const char *component,
			      bool *known)
{
	static const struct {
		const char *name;
		size_t offset;
	} components[] = {
		{ "installer", offsetof(struct efa_stack, installer) },
		{ "libfabric", offsetof(struct efa_stack, libfabric) },
		{ "rdma-core", offsetof(struct efa_stack, rdma_core) },
		{ "ofi-nccl", offsetof(struct efa_stack, ofi_nccl) },
		{ "efa-driver", offsetof(struct efa_stack, efa_driver) },
		{ "kernel", offsetof(struct efa_stack, kernel) },
	};

	for (size_t i = 0; i < sizeof(components) / sizeof(components[0]); i++) {
		if (strcmp(components[i].name, component))
			continue;
		*known = true;
		return *(char *const *)((const char *)stack + components[i].offset);
	}
	*known = false;
	return NULL;
}

static unsigned long next_number(const char **p)
{
	unsigned long n = 0;

	if (!isdigit((unsigned char)**p)) {
		*p = "";
		return 0;
	}
	while (isdigit((unsigned char)**p)) {
		if (n < 100000000UL)
			n = n * 10 + (unsigned long)(**p - '0');
		(*p)++;
	}
	if (**p == '.' && isdigit((unsigned char)(*p)[1]))
		(*p)++;
	else
		*p = "";	/* the dotted-number prefix ends here */
	return n;
}

int efa_version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		unsigned long x = next_number(&a), y = next_number(&b);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}
