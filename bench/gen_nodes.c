/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A slurmrestd GET /slurm/v0.0.N/nodes answer for a large cluster, in the
 * shape a real server answers in for that API version, with every field a
 * real node has: the same keys in the same order, at every level, with
 * values of the same shapes as the answers recorded from real servers in
 * test/fixtures/rest/ (Slurm 22.05.8 for v0.0.38, 24.11.5 for v0.0.40 to
 * v0.0.42, 26.05.3 for v0.0.43 to v0.0.45).
 *
 *   gen_nodes NODES ZONES PARTITIONS VERSION > nodes.json
 *
 * VERSION: 38, 40, 41, 42, 43, 44 or 45, what libslurmrest speaks and a
 * real answer was recorded for (none for v0.0.39).
 *
 * Node i is in zone i % ZONES and in three partitions, so every partition
 * has usable nodes in every zone; every 97th node is drained and every
 * 89th is down. Every node is a p5.48xlarge (192 CPUs, 8 GPUs, 2 TB).
 */
#include <stdio.h>
#include <stdlib.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* What a field's value is made of. */
enum value {
	RAW,		/* .raw, the same on every node */
	ZERO,		/* the number 0 */
	NAME,		/* gpu-000042 (name, hostname) */
	ADDRESS,
	FEATURES,	/* its zone, efa, its instance type */
	PARTITIONS,
	STATE,		/* idle, allocated or down; drained as a flag */
	STATE_FLAGS,	/* v0.0.38's separate flags: ["DRAIN"] */
	REASON,
	REASON_TIME,
	REASON_USER,	/* "root" when drained, else .raw */
	BOOT_TIME,
	LAST_BUSY,
	START_TIME,
	CPU_LOAD,
	FREE_MEMORY,
	ALLOC_CPUS,
	IDLE_CPUS,
	INSTANCE_ID,
	RELEASE,	/* the node's slurmd: the server's release */
};

/* How it is written. */
enum shape {
	PLAIN,		/* numbers as numbers, lists as arrays, states in capitals */
	SET,		/* a number as {"set": true, "infinite": false, "number": N} */
	STRING,		/* v0.0.38: a list as "a,b", a state as "idle" */
};

struct field {
	const char *key;
	enum value value;
	enum shape shape;
	const char *raw;	/* RAW: the value; REASON_USER: when not drained */
	int since, until;	/* the versions that have it; 0: every one */
};

/* A field every version has: a value made per node, or raw JSON. */
#define V(key, value, shape) { key, value, shape, NULL, 0, 0 }
#define R(key, json) { key, RAW, PLAIN, json, 0, 0 }

#define OS "\"Linux 6.1.0-18-cloud-amd64 #1 SMP PREEMPT_DYNAMIC\""
#define GRES "\"gpu:h100:8(S:0-1)\""
#define GRES_USED "\"gpu:h100:0(IDX:N/A)\""
#define TRES "\"cpu=192,mem=2000000M,billing=192,gres/gpu=8\""

/* Slurm 22.05's v0.0.38 (openapi/v0.0.38). */
static const struct field v38_fields[] = {
	R("architecture", "\"x86_64\""),
	R("burstbuffer_network_address", "\"\""),
	R("boards", "1"),
	V("boot_time", BOOT_TIME, PLAIN),
	R("comment", "\"\""),
	R("cores", "48"),
	R("cpu_binding", "0"),
	V("cpu_load", CPU_LOAD, PLAIN),
	R("extra", "\"\""),
	V("free_memory", FREE_MEMORY, PLAIN),
	R("cpus", "192"),
	V("last_busy", LAST_BUSY, PLAIN),
	V("features", FEATURES, STRING),
	V("active_features", FEATURES, STRING),
	R("gres", GRES),
	R("gres_drained", "\"N/A\""),
	R("gres_used", GRES_USED),
	R("mcs_label", "\"\""),
	V("name", NAME, PLAIN),
	R("next_state_after_reboot", "\"invalid\""),
	V("address", ADDRESS, PLAIN),
	V("hostname", NAME, PLAIN),
	V("state", STATE, STRING),
	V("state_flags", STATE_FLAGS, PLAIN),
	R("next_state_after_reboot_flags", "[]"),
	R("operating_system", OS),
	R("owner", "null"),
	V("partitions", PARTITIONS, PLAIN),
	R("port", "6818"),
	R("real_memory", "2000000"),
	V("reason", REASON, PLAIN),
	V("reason_changed_at", REASON_TIME, PLAIN),
	{ "reason_set_by_user", REASON_USER, PLAIN, "null", 0, 0 },
	V("slurmd_start_time", START_TIME, PLAIN),
	R("sockets", "2"),
	R("threads", "2"),
	R("temporary_disk", "0"),
	R("weight", "1"),
	R("tres", TRES),
	V("slurmd_version", RELEASE, PLAIN),
	R("alloc_memory", "0"),
	V("alloc_cpus", ALLOC_CPUS, PLAIN),
	V("idle_cpus", IDLE_CPUS, PLAIN),
	R("tres_used", "null"),
	R("tres_weighted", "0"),
};

/*
 * v0.0.40 and later (openapi/slurmctld, data_parser/v0.0.N): against
 * v0.0.38, times are {"set", "infinite", "number"}, lists and the state are
 * arrays (the flags in the state), free_memory is free_mem, idle_cpus is
 * alloc_idle_cpus, slurmd_version is version, owner, reason_set_by_user and
 * tres_used are "" rather than null, and the order differs. Then v0.0.41
 * adds gpu_spec and res_cores_per_gpu; v0.0.42 answers as v0.0.41 (in
 * 24.11 and 26.05 alike); v0.0.43 adds tls_cert_last_renewal, cert_flags
 * and topology; v0.0.44 answers as v0.0.43; v0.0.45 drops external_sensors,
 * power and tres_weighted and adds suspend_time.
 */
static const struct field v40_fields[] = {
	R("architecture", "\"x86_64\""),
	R("burstbuffer_network_address", "\"\""),
	R("boards", "1"),
	V("boot_time", BOOT_TIME, SET),
	{ "tls_cert_last_renewal", ZERO, SET, NULL, 43, 0 },
	{ "cert_flags", RAW, PLAIN, "[]", 43, 0 },
	R("cluster_name", "\"\""),
	R("cores", "48"),
	R("specialized_cores", "0"),
	R("cpu_binding", "0"),
	V("cpu_load", CPU_LOAD, PLAIN),
	V("free_mem", FREE_MEMORY, SET),
	R("cpus", "192"),
	R("effective_cpus", "192"),
	R("specialized_cpus", "\"\""),
	R("energy", "{\"average_watts\":0,\"base_consumed_energy\":0,\"consumed_energy\":0,"
		    "\"current_watts\":{\"set\":true,\"infinite\":false,\"number\":0},"
		    "\"previous_consumed_energy\":0,\"last_collected\":0}"),
	{ "external_sensors", RAW, PLAIN, "{}", 0, 44 },
	R("extra", "\"\""),
	{ "power", RAW, PLAIN, "{}", 0, 44 },
	V("features", FEATURES, PLAIN),
	V("active_features", FEATURES, PLAIN),
	{ "gpu_spec", RAW, PLAIN, "\"\"", 41, 0 },
	R("gres", GRES),
	R("gres_drained", "\"N/A\""),
	R("gres_used", GRES_USED),
	V("instance_id", INSTANCE_ID, PLAIN),
	R("instance_type", "\"p5.48xlarge\""),
	V("last_busy", LAST_BUSY, SET),
	R("mcs_label", "\"\""),
	R("specialized_memory", "0"),
	V("name", NAME, PLAIN),
	R("next_state_after_reboot", "[\"INVALID\"]"),
	V("address", ADDRESS, PLAIN),
	V("hostname", NAME, PLAIN),
	V("state", STATE, PLAIN),
	R("operating_system", OS),
	R("owner", "\"\""),
	V("partitions", PARTITIONS, PLAIN),
	R("port", "6818"),
	R("real_memory", "2000000"),
	{ "res_cores_per_gpu", RAW, PLAIN, "0", 41, 0 },
	R("comment", "\"\""),
	V("reason", REASON, PLAIN),
	V("reason_changed_at", REASON_TIME, SET),
	{ "reason_set_by_user", REASON_USER, PLAIN, "\"\"", 0, 0 },
	V("resume_after", ZERO, SET),
	R("reservation", "\"\""),
	{ "suspend_time", RAW, PLAIN, "{\"set\":false,\"infinite\":true,\"number\":0}", 45, 0 },
	R("alloc_memory", "0"),
	V("alloc_cpus", ALLOC_CPUS, PLAIN),
	V("alloc_idle_cpus", IDLE_CPUS, PLAIN),
	R("tres_used", "\"\""),
	{ "tres_weighted", RAW, PLAIN, "0", 0, 44 },
	V("slurmd_start_time", START_TIME, SET),
	R("sockets", "2"),
	R("threads", "2"),
	R("temporary_disk", "0"),
	R("weight", "1"),
	{ "topology", RAW, PLAIN, "\"\"", 43, 0 },
	R("tres", TRES),
	V("version", RELEASE, PLAIN),
};

struct release {
	const char *release, *major, *minor, *micro;
};

static const struct release slurm_22_05 = { "22.05.8", "22", "5", "8" };
static const struct release slurm_24_11 = { "24.11.5", "24", "11", "5" };
static const struct release slurm_26_05 = { "26.05.3", "26", "05", "3" };

struct api;

/* The answer around its nodes: what comes before them and after. */
struct dialect {
	const struct field *fields;
	size_t nfields;
	void (*head)(const struct api *api);
	void (*tail)(const struct api *api);
};

struct api {
	int version;
	const struct dialect *dialect;
	const struct release *slurm;	/* the Slurm that served the recorded answer */
};

/* v0.0.38: meta (numbers in "Slurm"), errors, then the nodes. */
static void v38_head(const struct api *api)
{
	printf("{\"meta\":{\"plugin\":{\"type\":\"openapi/v0.0.%d\",\"name\":\"Slurm OpenAPI v0.0.%d\"},"
	       "\"Slurm\":{\"version\":{\"major\":%s,\"micro\":%s,\"minor\":%s},\"release\":\"%s\"}},"
	       "\"errors\":[],\"nodes\":[", api->version, api->version,
	       api->slurm->major, api->slurm->micro, api->slurm->minor, api->slurm->release);
}

static void v38_tail(const struct api *api)
{
	(void)api;
	printf("]}\n");
}

/* v0.0.40+: the nodes, then last_update, meta (strings in "slurm"), errors, warnings. */
static void v40_head(const struct api *api)
{
	(void)api;
	printf("{\"nodes\":[");
}

static void v40_tail(const struct api *api)
{
	printf("],\"last_update\":{\"set\":true,\"infinite\":false,\"number\":1700001000},"
	       "\"meta\":{\"plugin\":{\"type\":\"openapi/slurmctld\",\"name\":\"Slurm OpenAPI slurmctld\","
	       "\"data_parser\":\"data_parser/v0.0.%d\",\"accounting_storage\":\"\"},"
	       "\"client\":{\"source\":\"[localhost]:6820(fd:9)\",\"user\":\"root\",\"group\":\"root\"},"
	       "\"command\":[],"
	       "\"slurm\":{\"version\":{\"major\":\"%s\",\"micro\":\"%s\",\"minor\":\"%s\"},"
	       "\"release\":\"%s\",\"cluster\":\"bench\"}},"
	       "\"errors\":[],\"warnings\":[]}\n", api->version,
	       api->slurm->major, api->slurm->micro, api->slurm->minor, api->slurm->release);
}

static const struct dialect v38 = { v38_fields, N(v38_fields), v38_head, v38_tail };
static const struct dialect v40 = { v40_fields, N(v40_fields), v40_head, v40_tail };

/* v0.0.42 is served by 24.11 (its newest) and 26.05 alike, in the same shape. */
static const struct api apis[] = {
	{ 38, &v38, &slurm_22_05 },
	{ 40, &v40, &slurm_24_11 },
	{ 41, &v40, &slurm_24_11 },
	{ 42, &v40, &slurm_24_11 },
	{ 43, &v40, &slurm_26_05 },
	{ 44, &v40, &slurm_26_05 },
	{ 45, &v40, &slurm_26_05 },
};

static void number(enum shape shape, long long v)
{
	if (shape == SET)
		printf("{\"set\":true,\"infinite\":false,\"number\":%lld}", v);
	else
		printf("%lld", v);
}

static void list(enum shape shape, const char *const *v, int n)
{
	if (shape == STRING) {
		putchar('"');
		for (int i = 0; i < n; i++)
			printf("%s%s", i ? "," : "", v[i]);
		putchar('"');
		return;
	}
	putchar('[');
	for (int i = 0; i < n; i++)
		printf("%s\"%s\"", i ? "," : "", v[i]);
	putchar(']');
}

struct node {
	long i;
	char name[32], zone[32], parts[3][16];
	const char *state, *state_lower;
	int drained;
};

static void value(const struct field *f, const struct node *n, const struct api *api)
{
	const char *features[] = { n->zone, "efa", "p5.48xlarge" };
	const char *parts[] = { n->parts[0], n->parts[1], n->parts[2] };
	long i = n->i;

	switch (f->value) {
	case RAW: fputs(f->raw, stdout); break;
	case ZERO: number(f->shape, 0); break;
	case NAME: printf("\"%s\"", n->name); break;
	case ADDRESS: printf("\"10.%ld.%ld.%ld\"", i >> 16 & 255, i >> 8 & 255, i & 255); break;
	case FEATURES: list(f->shape, features, 3); break;
	case PARTITIONS: list(f->shape, parts, 3); break;
	case STATE:
		if (f->shape == STRING)
			printf("\"%s\"", n->state_lower);
		else
			printf("[\"%s\"%s]", n->state, n->drained ? ",\"DRAIN\"" : "");
		break;
	case STATE_FLAGS: printf("[%s]", n->drained ? "\"DRAIN\"" : ""); break;
	case REASON: printf("\"%s\"", n->drained ? "bench: drained" : ""); break;
	case REASON_TIME: number(f->shape, n->drained ? 1700000100 : 0); break;
	case REASON_USER: fputs(n->drained ? "\"root\"" : f->raw, stdout); break;
	case BOOT_TIME: number(f->shape, 1700000000 + i); break;
	case LAST_BUSY: number(f->shape, 1700000500 + i); break;
	case START_TIME: number(f->shape, 1700000010 + i); break;
	case CPU_LOAD: number(f->shape, i % 9600); break;
	case FREE_MEMORY: number(f->shape, 1900000 - i % 1000); break;
	case ALLOC_CPUS: number(f->shape, i % 3 ? 0 : 192); break;
	case IDLE_CPUS: number(f->shape, i % 3 ? 192 : 0); break;
	case INSTANCE_ID: printf("\"i-%016lx\"", 0x1000000L + i); break;
	case RELEASE: printf("\"%s\"", api->slurm->release); break;
	}
}

static void node(long i, int zones, int partitions, const struct api *api)
{
	const struct dialect *d = api->dialect;
	struct node n = { .i = i, .drained = i % 97 == 0 };
	long p = i / zones;
	int first = 1;

	snprintf(n.name, sizeof(n.name), "gpu-%06ld", i);
	snprintf(n.zone, sizeof(n.zone), "az-use1-z%02ld", i % zones);
	for (int k = 0; k < 3; k++)
		snprintf(n.parts[k], sizeof(n.parts[k]), "p%02ld", (p + 7 * k) % partitions);
	n.state = i % 89 == 0 ? "DOWN" : i % 3 ? "IDLE" : "ALLOCATED";
	n.state_lower = i % 89 == 0 ? "down" : i % 3 ? "idle" : "allocated";
	putchar('{');
	for (size_t k = 0; k < d->nfields; k++) {
		const struct field *f = &d->fields[k];

		if ((f->since && api->version < f->since) || (f->until && api->version > f->until))
			continue;
		printf("%s\"%s\":", first ? "" : ",", f->key);
		value(f, &n, api);
		first = 0;
	}
	putchar('}');
}

int main(int argc, char **argv)
{
	const struct api *api = NULL;
	long nodes;
	int zones, partitions, version;

	if (argc != 5) {
		fprintf(stderr, "usage: gen_nodes NODES ZONES PARTITIONS 38|40|41|42|43|44|45\n");
		return 2;
	}
	nodes = strtol(argv[1], NULL, 10);
	zones = atoi(argv[2]);
	partitions = atoi(argv[3]);
	version = atoi(argv[4]);
	for (size_t k = 0; k < N(apis); k++)
		if (apis[k].version == version)
			api = &apis[k];
	if (nodes < 1 || zones < 1 || partitions < 1 || !api) {
		fprintf(stderr, "gen_nodes: bad arguments\n");
		return 2;
	}
	api->dialect->head(api);
	for (long i = 0; i < nodes; i++) {
		if (i)
			putchar(',');
		node(i, zones, partitions, api);
	}
	api->dialect->tail(api);
	return ferror(stdout) ? 1 : 0;
}
