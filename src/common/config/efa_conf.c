/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "common/config/efa_conf.h"
#include "common/config/kvline.h"
#include "common/config/signal.h"

#define DEFAULT_CHECKPOINT_TIMEOUT 30
/* A minute: long past a framework's start-up, short of any training run. */
#define DEFAULT_FALLBACK_AFTER 60
#define DEFAULT_HEALTH_RETURN_PASSES 3
/* Below the 60 s slurmd gives a health check in 22.05 and 24.11, and the
 * default HealthCheckTimeout= of 25.05 on, with room to drain. */
#define DEFAULT_HEALTH_TIMEOUT 50
#define DEFAULT_SNAPSHOT_MAX_AGE 300
/* An instance stopped and started gets new network nodes; EC2 gives an
 * UltraServer's capacityBlockId a while after launch. */
#define DEFAULT_EC2_MAX_AGE 900
/* Around PyTorch's customary 29500, away from the ephemeral range. */
#define DEFAULT_MASTER_PORT_LO 29500
#define DEFAULT_MASTER_PORT_HI 29999

enum value_type {
	V_STRING,
	V_PATH,		/* absolute path */
	V_CHOICE,
	V_COUNT,	/* non-negative integer */
	V_DURATION,	/* seconds, or with an s/m/h/d suffix */
	V_LIST,		/* comma-separated, no empty items */
	V_PORTS,	/* LO-HI, two longs */
	V_MODE,		/* octal permission bits, owner rwx */
	V_ENV_NAME,	/* an environment variable's name */
	V_API_VERSION,	/* an OpenAPI version of slurmrestd, "v0.0.45" */
	V_BYTES,	/* bytes, with K/M/G/T (1024s), or "unlimited" */
	V_SIGNAL,	/* SIG[@SECONDS], as sbatch --signal takes them */
	V_FRACTION,	/* a decimal from 0 to 1 */
};

struct choice {
	const char *name;
	int value;
};

struct key {
	const char *name;
	enum value_type type;
	size_t offset;
	const struct choice *choices;
	long max;		/* V_COUNT: the largest value; 0: no limit */
};

static const struct choice on_missing_choices[] = {
	{ "accept", EFA_ON_MISSING_ACCEPT },
	{ "reject", EFA_ON_MISSING_REJECT },
	{ NULL, 0 },
};

static const struct choice topology_choices[] = {
	{ "none", EFA_TOPOLOGY_NONE },
	{ "tree", EFA_TOPOLOGY_TREE },
	{ "block", EFA_TOPOLOGY_BLOCK },
	{ NULL, 0 },
};

static const struct choice topology_format_choices[] = {
	{ "auto", EFA_TOPOLOGY_FORMAT_AUTO },
	{ "conf", EFA_TOPOLOGY_FORMAT_CONF },
	{ "yaml", EFA_TOPOLOGY_FORMAT_YAML },
	{ NULL, 0 },
};

static const struct choice source_choices[] = {
	{ "features", EFA_SOURCE_FEATURES },
	{ "kubernetes", EFA_SOURCE_KUBERNETES },
	{ "ec2", EFA_SOURCE_EC2 },
	{ NULL, 0 },
};

/* "optional" is the admin's word for the user-facing --efa=auto. */
static const struct choice part_efa_choices[] = {
	{ "required", EFA_MODE_REQUIRED },
	{ "optional", EFA_MODE_AUTO },
	{ "off", EFA_MODE_OFF },
	{ NULL, 0 },
};

static const struct choice yes_no_choices[] = {
	{ "yes", EFA_YES },
	{ "no", EFA_NO },
	{ NULL, 0 },
};

static const struct choice rank_order_choices[] = {
	{ "slurm", EFA_RANK_ORDER_SLURM },
	{ "topology", EFA_RANK_ORDER_TOPOLOGY },
	{ NULL, 0 },
};

static const struct choice hang_action_choices[] = {
	{ "notify", EFA_HANG_NOTIFY },
	{ "requeue", EFA_HANG_REQUEUE },
	{ "cancel", EFA_HANG_CANCEL },
	{ NULL, 0 },
};

static const struct choice repair_action_choices[] = {
	{ "none", EFA_REPAIR_NONE },
	{ "reboot", EFA_REPAIR_REBOOT },
	{ "replace", EFA_REPAIR_REPLACE },
	{ "reboot,replace", EFA_REPAIR_REBOOT_REPLACE },
	{ NULL, 0 },
};

static const struct choice ckpt_fs_choices[] = {
	{ "lustre", EFA_CKPT_FS_LUSTRE },
	{ "any", EFA_CKPT_FS_ANY },
	{ NULL, 0 },
};

#define GKEY(n, t, f, c) { n, t, offsetof(struct efa_config, f), c, 0 }
#define PKEY(n, t, f, c) { n, t, offsetof(struct efa_partition, f), c, 0 }
#define GCOUNT(n, f, max) { n, V_COUNT, offsetof(struct efa_config, f), NULL, max }
#define GLIMIT(n, t, f, max) { n, t, offsetof(struct efa_config, f), NULL, max }
#define PCOUNT(n, f, max) { n, V_COUNT, offsetof(struct efa_partition, f), NULL, max }

static const struct key global_keys[] = {
	GKEY("InstanceType", V_STRING, instance_type, NULL),
	GKEY("ProfileDir", V_PATH, profile_dir, NULL),
	GKEY("NodeCacheDir", V_PATH, node_cache_dir, NULL),
	GKEY("RestURL", V_STRING, rest_url, NULL),
	GKEY("RestUser", V_STRING, rest_user, NULL),
	GKEY("RestTokenFile", V_PATH, rest_token_file, NULL),
	GKEY("RestCAFile", V_PATH, rest_ca_file, NULL),
	GKEY("RestAPIVersion", V_API_VERSION, rest_api_version, NULL),
	GKEY("Snapshot", V_PATH, snapshot, NULL),
	GKEY("SnapshotMaxAge", V_DURATION, snapshot_max_age, NULL),
	GKEY("ZoneFeaturePrefix", V_STRING, zone_feature_prefix, NULL),
	GKEY("OnSnapshotMissing", V_CHOICE, on_snapshot_missing, on_missing_choices),
	GKEY("Topology", V_CHOICE, topology, topology_choices),
	GKEY("TopologyFeaturePrefixes", V_LIST, topology_feature_prefixes, NULL),
	GKEY("CapacityBlockFeaturePrefix", V_STRING, capacity_block_feature_prefix, NULL),
	GKEY("TopologyFile", V_PATH, topology_file, NULL),
	GKEY("TopologyFormat", V_CHOICE, topology_format, topology_format_choices),
	GKEY("TopologyReload", V_STRING, topology_reload, NULL),
	GKEY("ZoneSource", V_CHOICE, zone_source, source_choices),
	GKEY("TopologySource", V_CHOICE, topology_source, source_choices),
	GKEY("Ec2Endpoint", V_STRING, ec2_endpoint, NULL),
	GKEY("Ec2Region", V_STRING, ec2_region, NULL),
	GKEY("Ec2MaxAge", V_DURATION, ec2_max_age, NULL),
	GKEY("KubernetesURL", V_STRING, kubernetes_url, NULL),
	GKEY("KubernetesTokenFile", V_PATH, kubernetes_token_file, NULL),
	GKEY("KubernetesCAFile", V_PATH, kubernetes_ca_file, NULL),
	GKEY("KubernetesNamespace", V_STRING, kubernetes_namespace, NULL),
	GKEY("WriteFeatures", V_CHOICE, write_features, yes_no_choices),
	GKEY("AllowPlainHTTP", V_CHOICE, allow_plain_http, yes_no_choices),
	GKEY("ForceEnv", V_LIST, force_env, NULL),
	GKEY("DistributedEnv", V_CHOICE, distributed_env, yes_no_choices),
	GKEY("ContainerHostLibraries", V_CHOICE, container_host_libraries, yes_no_choices),
	GKEY("MasterPortRange", V_PORTS, master_ports, NULL),
	GKEY("CheckpointMode", V_MODE, checkpoint_mode, NULL),
	GKEY("CheckpointTimeout", V_DURATION, checkpoint_timeout, NULL),
	GKEY("CheckpointEnv", V_ENV_NAME, checkpoint_env, NULL),
	GCOUNT("HealthReturnPasses", health_return_passes, EFA_HEALTH_PASSES_MAX),
	GLIMIT("HealthTimeout", V_DURATION, health_timeout, EFA_HEALTH_TIMEOUT_MAX),
	GKEY("HealthMinLockedMemory", V_BYTES, health_min_locked_memory, NULL),
	GCOUNT("HealthRetransTimeouts", health_retrans_timeouts, EFA_HEALTH_COUNTER_MAX),
	GCOUNT("HealthUnresponsiveRemotes", health_unresponsive_remotes, EFA_HEALTH_COUNTER_MAX),
	GCOUNT("HealthImpairedConnections", health_impaired_connections, EFA_HEALTH_COUNTER_MAX),
	GKEY("HealthGres", V_CHOICE, health_gres, yes_no_choices),
	GKEY("ResumeExpedite", V_CHOICE, resume_expedite, yes_no_choices),
	GKEY("HangCheckInterval", V_DURATION, hang_check_interval, NULL),
	GKEY("SickLinks", V_CHOICE, sick_links, yes_no_choices),
	GKEY("SickLinkDrain", V_CHOICE, sick_link_drain, yes_no_choices),
	GKEY("SickLinkFloor", V_FRACTION, sick_link_floor, NULL),
	GCOUNT("SickLinkFactor", sick_link_factor, 1000),
	GKEY("MetricsDir", V_PATH, metrics_dir, NULL),
	GKEY("FallbackAfter", V_DURATION, fallback_after, NULL),
	GKEY("JobRecord", V_CHOICE, job_record, yes_no_choices),
	GKEY("RepairAction", V_CHOICE, repair_action, repair_action_choices),
	GKEY("RepairWindow", V_DURATION, repair_window, NULL),
	GCOUNT("RepairMax", repair_max, EFA_REPAIR_MAX_LIMIT),
	{ NULL, 0, 0, NULL, 0 },
};

static const struct key partition_keys[] = {
	PKEY("EFA", V_CHOICE, efa, part_efa_choices),
	PKEY("SingleZone", V_CHOICE, single_zone, yes_no_choices),
	PKEY("CheckpointRoot", V_PATH, checkpoint_root, NULL),
	PKEY("CheckpointFS", V_CHOICE, checkpoint_fs, ckpt_fs_choices),
	PCOUNT("CheckpointKeep", checkpoint_keep, EFA_CKPT_KEEP_MAX),
	PCOUNT("Resume", resume, EFA_RESUME_MAX),
	PKEY("RankOrder", V_CHOICE, rank_order, rank_order_choices),
	PKEY("CheckpointSignal", V_SIGNAL, checkpoint_signal, NULL),
	PKEY("HangAfter", V_DURATION, hang_after, NULL),
	PKEY("HangAction", V_CHOICE, hang_action, hang_action_choices),
	PKEY("RepairAction", V_CHOICE, repair_action, repair_action_choices),
	PCOUNT("RepairMax", repair_max, EFA_REPAIR_MAX_LIMIT),
	{ NULL, 0, 0, NULL, 0 },
};

#define KEY_PARTITION_NAME "PartitionName"

struct parser {
	const char *name;
	unsigned line;
	struct efa_config *cfg;
	struct efa_partition defaults;	/* from PartitionName=DEFAULT */
	struct efa_error *err;
	uint64_t global_seen;
};

static void partition_clear(struct efa_partition *p)
{
	free(p->name);
	free(p->checkpoint_root);
	memset(p, 0, sizeof(*p));
}

static void partition_init(struct efa_partition *p)
{
	memset(p, 0, sizeof(*p));
	p->efa = EFA_MODE_UNSET;
	p->single_zone = EFA_UNSET;
	p->checkpoint_fs = EFA_CKPT_FS_UNSET;
	p->checkpoint_keep = -1;
	p->resume = EFA_RESUME_UNSET;
	p->repair_action = EFA_REPAIR_UNSET;
	p->repair_max = -1;
}

void efa_config_free(struct efa_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->path);
	free(cfg->instance_type);
	free(cfg->profile_dir);
	free(cfg->node_cache_dir);
	free(cfg->metrics_dir);
	free(cfg->rest_url);
	free(cfg->rest_user);
	free(cfg->rest_token_file);
	free(cfg->rest_ca_file);
	free(cfg->rest_api_version);
	free(cfg->snapshot);
	free(cfg->zone_feature_prefix);
	free(cfg->capacity_block_feature_prefix);
	efa_strv_free(cfg->topology_feature_prefixes);
	free(cfg->topology_file);
	free(cfg->topology_reload);
	free(cfg->ec2_endpoint);
	free(cfg->ec2_region);
	free(cfg->kubernetes_url);
	free(cfg->kubernetes_token_file);
	free(cfg->kubernetes_ca_file);
	free(cfg->kubernetes_namespace);
	efa_strv_free(cfg->force_env);
	free(cfg->checkpoint_env);
	for (size_t i = 0; i < cfg->npartitions; i++)
		partition_clear(&cfg->partitions[i]);
	free(cfg->partitions);
	free(cfg);
}

static char **list_split(const char *value)
{
	size_t n = 1;
	char **list;
	const char *start = value;

	for (const char *c = value; *c; c++)
		n += (*c == ',');
	list = calloc(n + 1, sizeof(*list));
	if (!list)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *end = strchr(start, ',');
		size_t len = end ? (size_t)(end - start) : strlen(start);

		list[i] = strndup(start, len);
		if (!list[i]) {
			efa_strv_free(list);
			return NULL;
		}
		start += len + 1;
	}
	return list;
}

struct efa_config *efa_config_defaults(void)
{
	struct efa_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	cfg->profile_dir = strdup(DATADIR "/slurm-efa/profiles");
	cfg->node_cache_dir = strdup(EFA_NODE_CACHE_DIR);
	cfg->snapshot = strdup(LOCALSTATEDIR "/lib/slurm-efa/snapshot.json");
	cfg->zone_feature_prefix = strdup("az-");
	/* EC2 gives 3 or 4 layers, by instance type. */
	cfg->topology_feature_prefixes = list_split("nn1-,nn2-,nn3-,nn4-");
	cfg->capacity_block_feature_prefix = strdup("cb-");
	cfg->snapshot_max_age = DEFAULT_SNAPSHOT_MAX_AGE;
	cfg->ec2_max_age = DEFAULT_EC2_MAX_AGE;
	cfg->on_snapshot_missing = EFA_ON_MISSING_ACCEPT;
	cfg->topology = EFA_TOPOLOGY_NONE;
	cfg->distributed_env = EFA_YES;
	cfg->write_features = EFA_NO;
	cfg->container_host_libraries = EFA_NO;
	cfg->allow_plain_http = EFA_NO;
	cfg->resume_expedite = EFA_NO;
	cfg->hang_check_interval = EFA_HANG_CHECK_INTERVAL_DEFAULT;
	cfg->sick_links = EFA_NO;
	cfg->sick_link_drain = EFA_NO;
	cfg->sick_link_floor = 0.01;
	cfg->sick_link_factor = 10;
	cfg->repair_action = EFA_REPAIR_NONE;
	cfg->repair_window = EFA_REPAIR_WINDOW_DEFAULT;
	cfg->repair_max = EFA_REPAIR_MAX_DEFAULT;
	cfg->health_gres = EFA_NO;
	cfg->job_record = EFA_NO;
	cfg->master_ports.lo = DEFAULT_MASTER_PORT_LO;
	cfg->master_ports.hi = DEFAULT_MASTER_PORT_HI;
	cfg->checkpoint_mode = 0700;
	cfg->checkpoint_timeout = DEFAULT_CHECKPOINT_TIMEOUT;
	cfg->fallback_after = DEFAULT_FALLBACK_AFTER;
	cfg->health_return_passes = DEFAULT_HEALTH_RETURN_PASSES;
	cfg->health_timeout = DEFAULT_HEALTH_TIMEOUT;
	cfg->checkpoint_env = strdup("CHECKPOINT_DIR");
	if (!cfg->profile_dir || !cfg->node_cache_dir || !cfg->snapshot || !cfg->zone_feature_prefix ||
	    !cfg->capacity_block_feature_prefix ||
	    !cfg->topology_feature_prefixes || !cfg->checkpoint_env) {
		efa_config_free(cfg);
		return NULL;
	}
	return cfg;
}

static int parse_error(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int parse_error(struct parser *ps, const char *fmt, ...)
{
	char what[EFA_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return efa_error_set(ps->err, "%s:%u: %s", ps->name, ps->line, what);
}

static const struct key *find_key(const struct key *table, const char *name)
{
	for (const struct key *k = table; k->name; k++)
		if (!strcasecmp(k->name, name))
			return k;
	return NULL;
}

/* A non-negative number, with an s/m/h/d suffix when allow_unit is set. */
static int parse_number(const char *value, bool allow_unit, long *out)
{
	char *end;
	long n, unit = 1;

	errno = 0;
	n = strtol(value, &end, 10);
	if (errno || end == value || n < 0 || !isdigit((unsigned char)*value))
		return -1;
	if (*end) {
		if (!allow_unit)
			return -1;
		if (end[1])
			return -1;
		switch (*end) {
		case 's': unit = 1; break;
		case 'm': unit = 60; break;
		case 'h': unit = 3600; break;
		case 'd': unit = 86400; break;
		default: return -1;
		}
	}
	if (n > LONG_MAX / unit)
		return -1;
	*out = n * unit;
	return 0;
}

/* "64K", "8M", "1G", "65536", "unlimited" (EFA_BYTES_UNLIMITED), as
 * limits.conf and systemd's LimitMEMLOCK= write them. */
static int parse_bytes(const char *value, long *out)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	long n, scale = 1;

	if (!strcmp(value, "unlimited") || !strcmp(value, "infinity")) {
		*out = EFA_BYTES_UNLIMITED;
		return 0;
	}
	errno = 0;
	n = strtol(value, &end, 10);
	if (errno || end == value || n < 0 || !isdigit((unsigned char)*value))
		return -1;
	if (*end) {
		u = strchr(units, toupper((unsigned char)*end));
		if (!u || !*u || (end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B")))
			return -1;
		for (const char *p = units; p <= u; p++)
			scale *= 1024;
	}
	if (n > (EFA_BYTES_UNLIMITED - 1) / scale)
		return -1;
	*out = n * scale;
	return 0;
}

static bool env_name_ok(const char *name)
{
	if (isdigit((unsigned char)name[0]))
		return false;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	return true;
}

/* The form only: which versions a client speaks is the client's to say. */
static bool api_version_ok(const char *value)
{
	const char *digits = value + strlen("v0.0.");

	if (strncmp(value, "v0.0.", strlen("v0.0.")) || !*digits || strlen(digits) > 4)
		return false;
	for (const char *c = digits; *c; c++)
		if (!isdigit((unsigned char)*c))
			return false;
	return true;
}

/*
 * One handler per value type, as Slurm's parse_config.c has one per
 * S_P_ type: each parses value into field (the key's place in the
 * structure being filled) or says what is wrong with the key's name.
 */
static int set_string(struct parser *ps, const struct key *k, void *field, const char *value)
{
	char *copy = strdup(value);

	(void)k;
	if (!copy)
		return efa_error_set(ps->err, "out of memory");
	free(*(char **)field);
	*(char **)field = copy;
	return 0;
}

static int set_path(struct parser *ps, const struct key *k, void *field, const char *value)
{
	if (value[0] != '/')
		return parse_error(ps, "%s=%s: must be an absolute path", k->name, value);
	return set_string(ps, k, field, value);
}

static int set_env_name(struct parser *ps, const struct key *k, void *field, const char *value)
{
	if (!env_name_ok(value))
		return parse_error(ps, "invalid %s=%s: use a variable name (letters, digits and _, not starting with a digit)",
				   k->name, value);
	return set_string(ps, k, field, value);
}

static int set_api_version(struct parser *ps, const struct key *k, void *field, const char *value)
{
	if (!api_version_ok(value))
		return parse_error(ps, "invalid %s=%s: use a slurmrestd OpenAPI version, e.g. v0.0.45",
				   k->name, value);
	return set_string(ps, k, field, value);
}

static int set_choice(struct parser *ps, const struct key *k, void *field, const char *value)
{
	char allowed[256] = "";

	for (const struct choice *c = k->choices; c->name; c++) {
		if (!strcasecmp(c->name, value)) {
			*(int *)field = c->value;
			return 0;
		}
	}
	for (const struct choice *c = k->choices; c->name; c++)
		efa_strlcatf(allowed, sizeof(allowed), "%s%s", c == k->choices ? "" : "|", c->name);
	return parse_error(ps, "invalid %s=%s: use %s", k->name, value, allowed);
}

/* A count, or with duration a number of seconds that may carry a unit. */
static int set_number(struct parser *ps, const struct key *k, void *field, const char *value,
		      bool duration)
{
	if (parse_number(value, duration, (long *)field))
		return parse_error(ps, "invalid %s=%s: use a whole number%s", k->name, value,
				   duration ? " of seconds (or with s, m, h, d)" : "");
	if (k->max && *(long *)field > k->max)
		return parse_error(ps, "invalid %s=%s: at most %ld", k->name, value, k->max);
	return 0;
}

static int set_count(struct parser *ps, const struct key *k, void *field, const char *value)
{
	return set_number(ps, k, field, value, false);
}

static int set_duration(struct parser *ps, const struct key *k, void *field, const char *value)
{
	return set_number(ps, k, field, value, true);
}

static int set_bytes(struct parser *ps, const struct key *k, void *field, const char *value)
{
	if (parse_bytes(value, (long *)field))
		return parse_error(ps, "invalid %s=%s: use a size in bytes (or with K, M, G, T) or unlimited",
				   k->name, value);
	return 0;
}

static int set_fraction(struct parser *ps, const struct key *k, void *field, const char *value)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (errno || end == value || *end || !(v >= 0 && v <= 1))
		return parse_error(ps, "invalid %s=%s: use a decimal from 0 to 1, e.g. 0.01", k->name,
				   value);
	*(double *)field = v;
	return 0;
}

static int set_signal(struct parser *ps, const struct key *k, void *field, const char *value)
{
	struct efa_error why;

	if (efa_signal_parse(value, (struct efa_signal *)field, &why))
		return parse_error(ps, "invalid %s=%s: %s", k->name, value, why.msg);
	return 0;
}

static int set_mode(struct parser *ps, const struct key *k, void *field, const char *value)
{
	unsigned long mode;
	char *end;

	errno = 0;
	mode = strtoul(value, &end, 8);
	/* The job's user must be able to enter and write what is made. */
	if (errno || *end || !isdigit((unsigned char)*value) || mode > 0777 ||
	    (mode & 0700) != 0700)
		return parse_error(ps, "invalid %s=%s: use octal permission bits that give the owner rwx, e.g. 0700 or 0750",
				   k->name, value);
	*(unsigned int *)field = (unsigned int)mode;
	return 0;
}

static int set_ports(struct parser *ps, const struct key *k, void *field, const char *value)
{
	long lo, hi;
	char extra;

	if (sscanf(value, "%ld-%ld%c", &lo, &hi, &extra) != 2 || lo < 1 || hi > 65535 || lo > hi)
		return parse_error(ps, "invalid %s=%s: use LOW-HIGH, ports from 1 to 65535", k->name,
				   value);
	((struct efa_range *)field)->lo = lo;
	((struct efa_range *)field)->hi = hi;
	return 0;
}

static int set_list(struct parser *ps, const struct key *k, void *field, const char *value)
{
	char **list;

	if (value[0] == ',' || value[strlen(value) - 1] == ',' || strstr(value, ",,"))
		return parse_error(ps, "%s=%s: empty item in list", k->name, value);
	list = list_split(value);
	if (!list)
		return efa_error_set(ps->err, "out of memory");
	efa_strv_free(*(char ***)field);
	*(char ***)field = list;
	return 0;
}

static int (*const setters[])(struct parser *ps, const struct key *k, void *field,
			      const char *value) = {
	[V_STRING] = set_string,
	[V_PATH] = set_path,
	[V_CHOICE] = set_choice,
	[V_COUNT] = set_count,
	[V_DURATION] = set_duration,
	[V_LIST] = set_list,
	[V_PORTS] = set_ports,
	[V_MODE] = set_mode,
	[V_ENV_NAME] = set_env_name,
	[V_API_VERSION] = set_api_version,
	[V_BYTES] = set_bytes,
	[V_SIGNAL] = set_signal,
	[V_FRACTION] = set_fraction,
};

static int set_value(struct parser *ps, const struct key *k, void *base, const char *value)
{
	if ((size_t)k->type >= sizeof(setters) / sizeof(setters[0]) || !setters[k->type])
		return parse_error(ps, "%s: internal error: bad key type", k->name);
	return setters[k->type](ps, k, (char *)base + k->offset, value);
}

static int next_pair(struct parser *ps, char **cursor, char **key, char **value)
{
	struct efa_error why;
	int rc = efa_kv_next(cursor, key, value, &why);

	if (rc < 0)
		return parse_error(ps, "%s", why.msg);
	return rc;
}

static int add_partition(struct parser *ps, const char *name,
			 struct efa_partition **out)
{
	struct efa_config *cfg = ps->cfg;
	struct efa_partition *grown, *p;

	if (efa_config_partition(cfg, name))
		return parse_error(ps, "PartitionName=%s appears twice", name);
	grown = realloc(cfg->partitions, (cfg->npartitions + 1) * sizeof(*grown));
	if (!grown)
		return efa_error_set(ps->err, "out of memory");
	cfg->partitions = grown;
	p = &grown[cfg->npartitions];
	*p = ps->defaults;
	p->name = strdup(name);
	p->checkpoint_root = ps->defaults.checkpoint_root ?
			     strdup(ps->defaults.checkpoint_root) : NULL;
	if (!p->name || (ps->defaults.checkpoint_root && !p->checkpoint_root)) {
		free(p->name);
		free(p->checkpoint_root);
		return efa_error_set(ps->err, "out of memory");
	}
	cfg->npartitions++;
	*out = p;
	return 0;
}

static int parse_partition_line(struct parser *ps, char *cursor, const char *name)
{
	struct efa_partition *p = NULL;
	uint64_t seen = 0;
	char *key, *value;
	int rc;

	if (!strcasecmp(name, "DEFAULT"))
		p = &ps->defaults;
	else if (add_partition(ps, name, &p))
		return -1;
	p->line = ps->line;

	while ((rc = next_pair(ps, &cursor, &key, &value)) > 0) {
		const struct key *k = find_key(partition_keys, key);

		if (!k) {
			if (find_key(global_keys, key))
				return parse_error(ps, "%s is a global key, not a partition key: put it on its own line before the PartitionName lines",
						   key);
			if (!strcasecmp(key, KEY_PARTITION_NAME))
				return parse_error(ps, "one PartitionName per line");
			return parse_error(ps, "unknown partition key '%s'", key);
		}
		if (seen & (1ULL << (k - partition_keys)))
			return parse_error(ps, "%s given twice for partition %s", k->name, name);
		seen |= 1ULL << (k - partition_keys);
		if (set_value(ps, k, p, value))
			return -1;
	}
	return rc;
}

static int parse_line(struct parser *ps, char *line)
{
	char *cursor = line, *key, *value;
	int rc;

	rc = next_pair(ps, &cursor, &key, &value);
	if (rc <= 0)
		return rc;
	if (!strcasecmp(key, KEY_PARTITION_NAME))
		return parse_partition_line(ps, cursor, value);
	do {
		const struct key *k = find_key(global_keys, key);

		if (!k) {
			if (find_key(partition_keys, key))
				return parse_error(ps, "%s is a partition key: put it on a PartitionName=NAME line",
						   key);
			return parse_error(ps, "unknown key '%s'", key);
		}
		if (ps->global_seen & (1ULL << (k - global_keys)))
			return parse_error(ps, "%s given twice", k->name);
		ps->global_seen |= 1ULL << (k - global_keys);
		if (set_value(ps, k, ps->cfg, value))
			return -1;
	} while ((rc = next_pair(ps, &cursor, &key, &value)) > 0);
	return rc;
}

/* Settings that depend on other settings, applied and checked once the
 * file is read (a global key may come after the partitions). */
static int finish(struct parser *ps)
{
	struct efa_config *cfg = ps->cfg;

	if (cfg->repair_max < 1)
		return efa_error_set(ps->err, "%s: RepairMax=0: use 1 or more (RepairAction=none turns repairs off)",
				     ps->name);
	if (cfg->hang_check_interval < 1)
		return efa_error_set(ps->err, "%s: HangCheckInterval=%ld: use 1 s or more", ps->name,
				     cfg->hang_check_interval);
	for (size_t i = 0; i < cfg->npartitions; i++) {
		struct efa_partition *p = &cfg->partitions[i];

		if (p->checkpoint_root && p->checkpoint_fs == EFA_CKPT_FS_UNSET)
			p->checkpoint_fs = EFA_CKPT_FS_LUSTRE;
		if (p->hang_action == EFA_HANG_ACTION_UNSET)
			p->hang_action = EFA_HANG_NOTIFY;
		if (p->repair_max == 0)
			return efa_error_set(ps->err, "%s:%u: PartitionName=%s: RepairMax=0: use 1 or more (RepairAction=none turns repairs off)",
					     ps->name, p->line, p->name);
		if (p->hang_after > 0 &&
		    p->hang_after < EFA_HANG_MIN_INTERVALS * cfg->hang_check_interval)
			return efa_error_set(ps->err, "%s:%u: PartitionName=%s: HangAfter=%ld s is under %d HangCheckInterval= (%ld s each): a hang is judged from several samples; raise HangAfter= or lower HangCheckInterval=",
					     ps->name, p->line, p->name, p->hang_after,
					     EFA_HANG_MIN_INTERVALS, cfg->hang_check_interval);
	}
	return 0;
}

int efa_config_parse(const char *text, size_t len, const char *name,
		     struct efa_config **out, struct efa_error *err)
{
	struct parser ps = { .name = name, .err = err };
	char *buf = NULL, *line, *cursor;

	partition_init(&ps.defaults);
	if (memchr(text, '\0', len)) {
		efa_error_set(err, "%s: contains a NUL byte: not a text file", name);
		goto fail;
	}
	ps.cfg = efa_config_defaults();
	buf = strndup(text, len);
	if (!ps.cfg || !buf) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	for (cursor = buf; (line = efa_line_next(&cursor));) {
		ps.line++;
		if (parse_line(&ps, line))
			goto fail;
	}
	if (finish(&ps))
		goto fail;
	partition_clear(&ps.defaults);
	free(buf);
	*out = ps.cfg;
	return 0;
fail:
	partition_clear(&ps.defaults);
	free(buf);
	efa_config_free(ps.cfg);
	return -1;
}

int efa_config_load(const char *path, struct efa_config **out,
		    struct efa_error *err)
{
	struct efa_config *cfg = NULL;
	char *text = NULL;
	size_t len;

	if (efa_read_file(path, EFA_CONFIG_MAX_SIZE, &text, &len, err))
		return -1;
	if (efa_config_parse(text, len, path, &cfg, err))
		goto fail;
	cfg->path = strdup(path);
	if (!cfg->path) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	free(text);
	*out = cfg;
	return 0;
fail:
	free(text);
	efa_config_free(cfg);
	return -1;
}

int efa_config_find_and_load(const char *explicit_path, struct efa_config **out,
			     struct efa_error *err)
{
	const char *path = explicit_path;

	if (!path || !*path)
		path = getenv("SLURM_EFA_CONF");
	if (!path || !*path) {
		path = SYSCONFDIR "/slurm/efa.conf";
		if (access(path, F_OK) && errno == ENOENT) {
			*out = efa_config_defaults();
			return *out ? 0 : efa_error_set(err, "out of memory");
		}
	}
	return efa_config_load(path, out, err);
}

const struct efa_partition *efa_config_partition(const struct efa_config *cfg,
						 const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < cfg->npartitions; i++)
		if (!strcmp(cfg->partitions[i].name, name))
			return &cfg->partitions[i];
	return NULL;
}
