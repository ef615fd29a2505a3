/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/cluster/snapshot.h"
#include "common/base/strutil.h"
#include "common/cluster/zones.h"
#include "tap.h"

static void test_zone_of(void)
{
	char *plain[] = { "efa", "az-us-west-2a", NULL };
	char *slinky[] = { "k8s/p5", "k8s/az-us-east-1b", NULL };
	char *two[] = { "az-a", "az-b", NULL };
	char *same[] = { "az-a", "k8s/az-a", NULL };
	char *none[] = { "efa", "az-", NULL };
	const char *feature;
	bool conflict;

	is_str(efa_zone_of(plain, "az-", &feature, &conflict), "us-west-2a", "zone from az-<zone>");
	is_str(feature, "az-us-west-2a", "  the feature itself");
	is_str(efa_zone_of(slinky, "az-", &feature, &conflict), "us-east-1b", "Slinky's k8s/ prefix is understood");
	is_str(feature, "k8s/az-us-east-1b", "  and the feature kept whole for constraints");
	is_str(efa_zone_of(slinky, "k8s/az-", &feature, &conflict), "us-east-1b", "a prefix that names k8s/ itself");
	ok(efa_zone_of(none, "az-", &feature, &conflict) == NULL, "a bare prefix is no zone");
	efa_zone_of(two, "az-", &feature, &conflict);
	ok(conflict, "two zones on one node are a conflict");
	efa_zone_of(same, "az-", &feature, &conflict);
	ok(!conflict, "the same zone twice is not");
}

static void test_usable(void)
{
	char *idle[] = { "idle", NULL }, *mixed[] = { "mixed", NULL };
	char *drain[] = { "idle", "drain", NULL }, *down[] = { "down", NULL };
	char *nr[] = { "allocated", "not_responding", NULL }, *empty[] = { NULL };

	ok(efa_state_usable(idle) && efa_state_usable(mixed), "idle and mixed nodes are usable");
	ok(!efa_state_usable(drain), "a drained node is not");
	ok(!efa_state_usable(down), "a down node is not");
	ok(!efa_state_usable(nr), "a node not responding is not");
	ok(!efa_state_usable(empty), "no state is not usable");
}

/* The cluster test_snapshot wrote to path, read back. */
static void read_back(const char *path)
{
	struct efa_cluster back;
	struct efa_error err = { 0 };

	require(ok(efa_snapshot_read(path, &back, &err) == 0, "snapshot read back (%s)", err.msg));
	require(is_int(back.nnodes, 4, "  four nodes"));
	is_int(back.generated, 1795990000, "  generation time");
	is_str(back.nodes[1].state, "idle+drain", "  state");
	ok(!back.nodes[1].usable && back.nodes[0].usable, "  usability");
	require(ok(efa_cluster_zone(&back, "a"), "  zone a is there"));
	is_int(efa_cluster_zone(&back, "a")->usable, 1, "  zone counts rebuilt");
	is_str(back.nodes[2].zone, "b", "  Slinky zone");
	efa_cluster_clear(&back);
}

/* An allocator of Jansson's whose fail_at-th allocation fails. */
static size_t allocs, fail_at;

static void *counted_malloc(size_t size)
{
	return ++allocs == fail_at ? NULL : malloc(size);
}

static void test_snapshot(void)
{
	char dir[] = "/tmp/efa-snap.XXXXXX", path[256], bad[256];
	struct efa_cluster c = { .zone_prefix = strdup("az-"), .source = strdup("unix:/x.sock"),
				 .generated = 1795990000 };
	struct efa_cluster back;
	struct efa_error err = { 0 };
	char *f1[] = { "az-a", "efa", NULL }, *f2[] = { "k8s/az-b", NULL }, *f3[] = { "efa", NULL };
	char *idle[] = { "idle", NULL }, *drain[] = { "idle", "drain", NULL };
	char *gpu[] = { "gpu", NULL }, *both[] = { "gpu", "cpu", NULL };
	struct stat st;
	FILE *f;
	int rc;

	ok(!efa_cluster_add_node(&c, "n1", f1, idle, both, &err), "node added");
	efa_cluster_add_node(&c, "n2", f1, drain, gpu, &err);
	efa_cluster_add_node(&c, "n3", f2, idle, gpu, &err);
	efa_cluster_add_node(&c, "n4", f3, idle, gpu, &err);
	require(is_int(c.nzones, 2, "two zones"));
	is_str(c.zones[0].name, "a", "zones sorted");
	is_int(c.zones[0].nodes, 2, "zone a: two nodes");
	is_int(c.zones[0].usable, 1, "  one usable");
	is_str(c.zones[0].partitions[0], "cpu", "  partitions sorted");
	is_str(c.zones[1].feature, "k8s/az-b", "zone b's feature");
	ok(c.nodes[3].zone == NULL, "a node without a zone feature");
	{
		size_t nodes, usable;

		efa_zone_in_partition(&c.zones[0], "cpu", &nodes, &usable);
		ok(nodes == 1 && usable == 1, "zone a in partition cpu: 1 node, 1 usable");
		efa_zone_in_partition(&c.zones[0], "gpu", &nodes, &usable);
		ok(nodes == 2 && usable == 1, "zone a in partition gpu: 2 nodes, 1 usable");
		efa_zone_in_partition(&c.zones[1], "cpu", &nodes, &usable);
		ok(nodes == 0 && usable == 0, "zone b has no cpu nodes");
	}

	/* Made only now, so that the require() above leaves nothing behind. */
	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/snapshot.json", dir);
	ok(efa_snapshot_write(&c, path, &err) == 0, "snapshot written (%s)", err.msg);
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "  mode 0644 for slurmctld to read");
	read_back(path);

	snprintf(bad, sizeof(bad), "%s/bad.json", dir);
	f = fopen(bad, "w");
	fputs("{\"format\": 1, \"generated\": 5, \"nodes\": [{\"name\": \"x\"", f);
	fclose(f);
	ok(efa_snapshot_read(bad, &back, &err) == -1, "a truncated snapshot is refused");
	has_str(err.msg, "run slurm-efa sync", "  saying what to do");
	f = fopen(bad, "w");
	fputs("{\"format\": 9, \"generated\": 5, \"nodes\": []}", f);
	fclose(f);
	ok(efa_snapshot_read(bad, &back, &err) == -1, "another format is refused");
	has_str(err.msg, "snapshot format 9", "  naming it");
	f = fopen(bad, "w");
	fputs("{\"format\": 1, \"generated\": 5, \"nodes\": [{\"name\": \"x\", \"state\": \"idle\"}]}", f);
	fclose(f);
	ok(efa_snapshot_read(bad, &back, &err) == -1, "a node without partitions is refused");
	/* Every allocation in turn fails: the write is an error, or the file
	 * is the whole snapshot, never a part reported as written. */
	{
		size_t fails = 0, whole = 0;

		for (fail_at = 1; fail_at < 2000; fail_at++) {
			allocs = 0;
			unlink(path);
			json_set_alloc_funcs(counted_malloc, free);
			rc = efa_snapshot_write(&c, path, &err);
			json_set_alloc_funcs(malloc, free);
			if (rc) {
				fails++;
				continue;
			}
			if (efa_snapshot_read(path, &back, &err) || back.nnodes != c.nnodes ||
			    back.nzones != c.nzones) {
				printf("# allocation %zu failed, yet the write succeeded: %s\n", fail_at, err.msg);
				break;
			}
			efa_cluster_clear(&back);
			whole++;
			if (allocs < fail_at)
				break;	/* no allocation failed: done */
		}
		ok(fails > 0 && whole > 0 && allocs < fail_at,
		   "an allocation failure at any point fails the write: %zu failed, the rest whole", fails);
		fail_at = 0;
	}
	snprintf(bad, sizeof(bad), "%s/missing/snapshot.json", dir);
	ok(efa_snapshot_write(&c, bad, &err) == -1, "writing into a missing directory fails");
	has_str(err.msg, "does the directory exist", "  saying what to check");
	efa_cluster_clear(&c);
	snprintf(bad, sizeof(bad), "rm -rf %s", dir);
	if (system(bad))
		printf("# could not remove %s\n", dir);
}

static char *joined(char **v)
{
	static char buf[512];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; v && v[i]; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", v[i]);
	efa_strv_free(v);
	return buf;
}

static char **placed(char *const *features, const char *zone, bool replace_zone,
		     char *const *layers, const char *block, bool replace_layers)
{
	static char *const prefixes[] = { "nn1-", "nn2-", "nn3-", "nn4-", NULL };
	struct efa_cluster c = { .zone_prefix = "az-" };
	struct efa_placement p = {
		.zone = zone, .replace_zone = replace_zone,
		.layers = layers, .block = block, .replace_layers = replace_layers,
	};
	char **v;

	efa_cluster_set_layers(&c, prefixes, "cb-");
	v = efa_features_placed(features, &c, &p);
	c.zone_prefix = NULL;
	efa_cluster_clear(&c);
	return v;
}

static void test_placed(void)
{
	char *features[] = { "efa", "az-us-west-2a", "nn1-x", "k8s/nn2-y", "gpu", "nn3-z", "nn4-w",
			     "cb-old", NULL };
	char *gap[] = { "nn-1", NULL, "nn-3", "nn-4", NULL };
	char *three[] = { "nn-1", "nn-2", "nn-3", NULL, NULL };
	char *none[] = { NULL, NULL, NULL, NULL, NULL };

	is_str(joined(placed(features, "us-east-1b", true, gap, NULL, false)),
	       "efa,az-us-east-1b,nn1-x,k8s/nn2-y,gpu,nn3-z,nn4-w,cb-old",
	       "the zone replaced in place, layers and block kept");
	is_str(joined(placed(features, NULL, true, gap, NULL, false)),
	       "efa,az-us-west-2a,nn1-x,k8s/nn2-y,gpu,nn3-z,nn4-w,cb-old",
	       "an unknown zone keeps the node's own zone feature");
	is_str(joined(placed(features, "us-east-1b", false, gap, "cb-1", true)),
	       "efa,az-us-west-2a,nn1-nn-1,k8s/nn2-y,gpu,nn3-nn-3,nn4-nn-4,cb-cb-1",
	       "layers and block replaced in place, a layer missing above the deepest kept, the zone kept");
	is_str(joined(placed(features, NULL, false, three, NULL, true)),
	       "efa,az-us-west-2a,nn1-nn-1,nn2-nn-2,gpu,nn3-nn-3",
	       "3 layers where the node had 4: the 4th goes, and so does a block the source does not give");
	is_str(joined(placed(features, NULL, false, none, "cb-1", true)),
	       "efa,az-us-west-2a,nn1-x,k8s/nn2-y,gpu,nn3-z,nn4-w,cb-old",
	       "no layer given: the node's own layers and block stand");
	is_str(joined(placed((char *[]){ "efa", NULL }, "b", true, three, "u1", true)),
	       "efa,az-b,nn1-nn-1,nn2-nn-2,nn3-nn-3,cb-u1", "  features a node lacks go last");
	is_str(joined(placed(NULL, "a", true, NULL, NULL, true)), "az-a",
	       "no features, no layers: only the zone");
}

int main(void)
{
	test_zone_of();
	test_usable();
	test_placed();
	test_snapshot();
	return done_testing();
}
