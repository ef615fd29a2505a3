/*
 * A slurmrestd GET .../nodes answer for a large cluster, in the shape of
 * one API version, with every field a real node has (modelled on Slurm
 * 22.05's v0.0.38 and 24.05's v0.0.41 answers).
 *
 *   gen_nodes NODES ZONES PARTITIONS 38|41 > nodes.json
 *
 * Node i is in zone i % ZONES and in three partitions, so every partition
 * has usable nodes in every zone; every 97th node is drained and every
 * 89th is down.
 */
#include <stdio.h>
#include <stdlib.h>

static void number(int api, const char *key, long long v)
{
	if (api >= 40)
		printf("\"%s\":{\"set\":true,\"infinite\":false,\"number\":%lld},", key, v);
	else
		printf("\"%s\":%lld,", key, v);
}

static void list(int api, const char *key, const char *const *v, int n)
{
	printf("\"%s\":", key);
	if (api < 40) {
		putchar('"');
		for (int i = 0; i < n; i++)
			printf("%s%s", i ? "," : "", v[i]);
		printf("\",");
		return;
	}
	putchar('[');
	for (int i = 0; i < n; i++)
		printf("%s\"%s\"", i ? "," : "", v[i]);
	printf("],");
}

static void node(long i, int zones, int partitions, int api)
{
	char zone[32], parts[3][16], name[32];
	const char *features[] = { zone, "efa", "p5.48xlarge" };
	const char *state = i % 89 == 0 ? "down" : i % 3 ? "idle" : "allocated";
	int drained = i % 97 == 0;
	long p = i / zones;

	snprintf(name, sizeof(name), "gpu-%06ld", i);
	snprintf(zone, sizeof(zone), "az-use1-z%02ld", i % zones);
	for (int k = 0; k < 3; k++)
		snprintf(parts[k], sizeof(parts[k]), "p%02ld", (p + 7 * k) % partitions);
	printf("{\"architecture\":\"x86_64\",\"burstbuffer_network_address\":\"\",\"boards\":1,");
	number(api, "boot_time", 1700000000 + i);
	printf("\"comment\":\"\",\"cores\":48,\"cpu_binding\":0,\"cpu_load\":%ld,\"extra\":\"\",", i % 9600);
	number(api, "free_memory", 1900000 - i % 1000);
	printf("\"cpus\":192,");
	number(api, "last_busy", 1700000500 + i);
	list(api, "features", features, 3);
	list(api, "active_features", features, 3);
	printf("\"gres\":\"gpu:h100:8(S:0-1)\",\"gres_drained\":\"N/A\",\"gres_used\":\"gpu:h100:0(IDX:N/A)\","
	       "\"mcs_label\":\"\",\"name\":\"%s\",\"address\":\"10.%ld.%ld.%ld\",\"hostname\":\"%s\",",
	       name, i >> 16 & 255, i >> 8 & 255, i & 255, name);
	if (api < 40) {
		printf("\"next_state_after_reboot\":\"invalid\",\"state\":\"%s\",\"state_flags\":[%s],"
		       "\"next_state_after_reboot_flags\":[],", state, drained ? "\"DRAIN\"" : "");
	} else {
		printf("\"next_state_after_reboot\":[\"INVALID\"],\"state\":[\"%s\"%s],",
		       i % 89 == 0 ? "DOWN" : i % 3 ? "IDLE" : "ALLOCATED", drained ? ",\"DRAIN\"" : "");
		printf("\"cluster_name\":\"bench\",\"instance_id\":\"i-%016lx\",\"instance_type\":\"p5.48xlarge\","
		       "\"effective_cpus\":192,\"specialized_cores\":0,\"specialized_cpus\":\"\","
		       "\"specialized_memory\":0,\"gpu_spec\":\"\",\"reservation\":\"\",", 0x1000000L + i);
		number(api, "resume_after", 0);
	}
	printf("\"operating_system\":\"Linux 6.1.0-18-cloud-amd64 #1 SMP PREEMPT_DYNAMIC\",\"owner\":null,");
	list(api, "partitions", (const char *const[]){ parts[0], parts[1], parts[2] }, 3);
	printf("\"port\":6818,\"real_memory\":2000000,\"reason\":\"%s\",",
	       drained ? "bench: drained" : "");
	number(api, "reason_changed_at", drained ? 1700000100 : 0);
	printf("\"reason_set_by_user\":%s,", drained ? "\"root\"" : "null");
	number(api, "slurmd_start_time", 1700000010 + i);
	printf("\"sockets\":2,\"threads\":2,\"temporary_disk\":0,\"weight\":1,"
	       "\"tres\":\"cpu=192,mem=2000000M,billing=192,gres/gpu=8\",\"slurmd_version\":\"%s\","
	       "\"alloc_memory\":0,\"alloc_cpus\":%d,\"idle_cpus\":%d,\"tres_used\":null,\"tres_weighted\":0}",
	       api < 40 ? "22.05.8" : "24.05.4", i % 3 ? 0 : 192, i % 3 ? 192 : 0);
}

int main(int argc, char **argv)
{
	long nodes;
	int zones, partitions, api;

	if (argc != 5) {
		fprintf(stderr, "usage: gen_nodes NODES ZONES PARTITIONS 38|41\n");
		return 2;
	}
	nodes = strtol(argv[1], NULL, 10);
	zones = atoi(argv[2]);
	partitions = atoi(argv[3]);
	api = atoi(argv[4]);
	if (nodes < 1 || zones < 1 || partitions < 1 || (api != 38 && api != 41)) {
		fprintf(stderr, "gen_nodes: bad arguments\n");
		return 2;
	}
	printf("{\"meta\":{\"plugin\":{\"type\":\"openapi/v0.0.%d\",\"name\":\"Slurm OpenAPI v0.0.%d\"},", api, api);
	printf(api < 40 ? "\"Slurm\":{\"version\":{\"major\":22,\"micro\":8,\"minor\":5},\"release\":\"22.05.8\"}},"
			: "\"slurm\":{\"version\":{\"major\":\"24\",\"micro\":\"4\",\"minor\":\"05\"},"
			  "\"release\":\"24.05.4\",\"cluster\":\"bench\"}},");
	printf("\"errors\":[],");
	if (api >= 40) {
		printf("\"warnings\":[],");
		number(api, "last_update", 1700001000);
	}
	printf("\"nodes\":[");
	for (long i = 0; i < nodes; i++) {
		if (i)
			putchar(',');
		node(i, zones, partitions, api);
	}
	printf("]}\n");
	return ferror(stdout) ? 1 : 0;
}
