/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compact snapshot: what the bridge loads must be what the JSON says,
 * and a compact file that is damaged, stale or foreign must never be
 * used.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "common/cluster/snapshot.h"
#include "common/cluster/zones.h"
#include "tap.h"
#include "tmpdir.h"

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_strv(char *const *a, char *const *b)
{
	size_t i = 0;

	if (!a || !b)
		return !a && !b;
	for (; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return !a[i] && !b[i];
}

/* Every field the decisions read; "" when equal, else the first that is not. */
static const char *differ(const struct efa_cluster *a, const struct efa_cluster *b)
{
	static char why[256];

	if (a->generated != b->generated || !same_str(a->source, b->source) ||
	    !same_str(a->slurm_version, b->slurm_version) || !same_str(a->api_version, b->api_version) ||
	    !same_str(a->zone_prefix, b->zone_prefix) || !same_str(a->block_prefix, b->block_prefix) ||
	    a->nlayers != b->nlayers || !same_strv(a->layer_prefixes, b->layer_prefixes))
		return "the cluster's own fields";
	if (a->nnodes != b->nnodes || a->nzones != b->nzones)
		return "the counts";
	for (size_t i = 0; i < a->nzones; i++) {
		const struct efa_cluster_zone *x = &a->zones[i], *y = &b->zones[i];

		if (strcmp(x->name, y->name) || strcmp(x->feature, y->feature) || x->nodes != y->nodes ||
		    x->usable != y->usable || !same_strv(x->partitions, y->partitions))
			goto zone;
		for (size_t p = 0; x->partitions && x->partitions[p]; p++)
			if (x->part_nodes[p] != y->part_nodes[p] || x->part_usable[p] != y->part_usable[p])
				goto zone;
		continue;
zone:
		snprintf(why, sizeof(why), "zone %s", x->name);
		return why;
	}
	for (size_t i = 0; i < a->nnodes; i++) {
		const struct efa_cluster_node *x = &a->nodes[i], *y = &b->nodes[i];
		bool layers = (!x->layers && !y->layers) || (x->layers && y->layers);

		for (size_t l = 0; layers && x->layers && l < a->nlayers; l++)
			layers = same_str(x->layers[l], y->layers[l]);
		if (strcmp(x->name, y->name) || !same_str(x->zone, y->zone) ||
		    !same_str(x->zone_feature, y->zone_feature) || strcmp(x->state, y->state) ||
		    x->usable != y->usable || x->zone_conflict != y->zone_conflict ||
		    !same_strv(x->partitions, y->partitions) || !layers || !same_str(x->block, y->block)) {
			snprintf(why, sizeof(why), "node %s", x->name);
			return why;
		}
	}
	return "";
}

/* c written as sync writes it: the JSON, then its compact form. */
static int write_both(const struct efa_cluster *c, const char *json)
{
	struct efa_error err = { 0 };

	return efa_snapshot_write(c, json, &err) || efa_snapshot_write_compact(c, json, &err);
}

/* Round trip: the JSON read, written as sync does, loaded back. */
static void round_trip(const char *what, const char *text, const char *json)
{
	struct efa_cluster a, b;
	struct efa_error err = { 0 };
	char note[1024];

	require(ok(!efa_snapshot_parse(text, strlen(text), what, &a, &err), "%s: the JSON reads (%s)",
		   what, err.msg));
	require(ok(!write_both(&a, json), "  written, with its compact form"));
	require(ok(!efa_snapshot_load(json, &b, note, sizeof(note), &err), "  loaded (%s)", err.msg));
	is_str(note, "", "  from the compact form");
	ok(b.arena != NULL, "  in one allocation");
	is_str(differ(&a, &b), "", "  the same cluster as the JSON's");
	efa_cluster_clear(&a);
	efa_cluster_clear(&b);
}

/* A cluster with everything a node can have: layers, a block, no zone,
 * two zones, drained, several partitions. */
static void build(struct efa_cluster *c)
{
	char *prefixes[] = { "nn1-", "nn2-", "nn3-", NULL };
	char *f1[] = { "az-a", "nn1-x", "nn2-y", "nn3-z", "cb-u1", NULL };
	char *f2[] = { "az-a", "nn1-x", "nn2-y", NULL };
	char *f3[] = { "k8s/az-b", "nn1-x", "nn1-w", NULL };
	char *f4[] = { "az-a", "az-b", NULL };
	char *f5[] = { "efa", NULL };
	char *idle[] = { "idle", NULL }, *drain[] = { "idle", "drain", NULL };
	char *gpu[] = { "gpu", "all", NULL }, *cpu[] = { "cpu", NULL }, *none[] = { NULL };
	struct efa_error err;

	memset(c, 0, sizeof(*c));
	c->generated = 1795990000;
	c->source = strdup("unix:/run/slurmrestd.sock");
	c->api_version = strdup("v0.0.41");
	c->zone_prefix = strdup("az-");
	require(ok(!efa_cluster_set_layers(c, prefixes, "cb-") &&
		   !efa_cluster_add_node(c, "n1", f1, idle, gpu, &err) &&
		   !efa_cluster_add_node(c, "n2", f2, drain, gpu, &err) &&
		   !efa_cluster_add_node(c, "n3", f3, idle, cpu, &err) &&
		   !efa_cluster_add_node(c, "n4", f4, idle, gpu, &err) &&
		   !efa_cluster_add_node(c, "n5", f5, idle, none, &err), "a cluster built"));
}

static void test_round_trips(void)
{
	struct efa_cluster c, b;
	struct efa_error err = { 0 };
	char *text, note[1024];
	size_t len;

	require(ok(!efa_read_file(SRCDIR "/test/fuzz/seeds/snapshot/cluster.json", 1 << 20, &text,
				  &len, &err), "the seed snapshot (%s)", err.msg));
	round_trip("the seed snapshot", text, tmp_at("seed.json"));
	free(text);
	build(&c);
	require(ok(!write_both(&c, tmp_at("built.json")), "the built cluster written"));
	require(ok(!efa_snapshot_load(tmp_at("built.json"), &b, note, sizeof(note), &err),
		   "  loaded (%s)", err.msg));
	is_str(differ(&c, &b), "", "  the same cluster as sync's, two zones on a node included");
	ok(b.nodes[3].zone_conflict && !b.nodes[3].usable, "  the node in two zones is not usable");
	is_str(b.nodes[0].layers[2], "z", "  layers");
	is_str(b.nodes[0].block, "u1", "  the block");
	ok(!b.nodes[4].zone && !b.nodes[4].partitions[0], "  a node with no zone and no partition");
	efa_cluster_clear(&b);
	require(ok(!efa_snapshot_write(&c, tmp_at("built.json"), &err), "the JSON written alone"));
	ok(!efa_snapshot_load(tmp_at("built.json"), &b, note, sizeof(note), &err), "  loads");
	has_str(note, "another version of the JSON", "  from the JSON: the compact form is older");
	efa_cluster_clear(&b);
	efa_cluster_clear(&c);
	memset(&c, 0, sizeof(c));
	round_trip("an empty cluster", "{\"format\": 1, \"generated\": 5, \"nodes\": []}",
		   tmp_at("empty.json"));
}

/* Loads json; the compact form must have been ignored, with a note. */
static void ignored(const char *json, const struct efa_cluster *want, const char *why,
		    const char *what)
{
	struct efa_cluster got;
	struct efa_error err = { 0 };
	char note[1024];

	if (!efa_snapshot_load(json, &got, note, sizeof(note), &err)) {
		ok(!got.arena && !strcmp(differ(want, &got), "") && strstr(note, why),
		   "%s: ignored, the JSON read (%s)", what, note);
		efa_cluster_clear(&got);
	} else {
		ok(0, "%s: ignored, the JSON read (%s)", what, err.msg);
	}
}

static void put(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	require(ok(f && fwrite(data, 1, len, f) == len && !fclose(f), "%s written", path));
}

static void test_corruption(void)
{
	const char *json = tmp_at("c.json"), *bin = tmp_at("c.bin");
	struct efa_cluster c, want;
	struct efa_error err = { 0 };
	char *good, *bad;
	size_t len, missed = 0, tried = 0;

	build(&c);
	require(ok(!write_both(&c, json), "a snapshot to damage"));
	require(ok(!efa_snapshot_read(json, &want, &err), "  its JSON reads"));
	require(ok(!efa_read_file(bin, 1 << 20, &good, &len, &err), "  its compact form reads"));
	require(ok((bad = malloc(len + 1)) != NULL, "  memory"));
	/* Every byte, each of its bits: the file checked without the JSON's
	 * identity, as the fuzzer does, so that only the content decides. */
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			struct efa_cluster got;

			memcpy(bad, good, len);
			bad[i] ^= (char)(1 << bit);
			tried++;
			if (!efa_snapshot_compact_parse(bad, len, "bad", NULL, &got, &err)) {
				missed++;
				efa_cluster_clear(&got);
			}
		}
	is_int(missed, 0, "each of %zu one-bit changes is refused", tried);
	for (size_t cut = 0; cut < len; cut += cut < 160 ? 1 : 97) {
		struct efa_cluster got;

		if (!efa_snapshot_compact_parse(good, cut, "cut", NULL, &got, &err)) {
			missed++;
			efa_cluster_clear(&got);
		}
	}
	is_int(missed, 0, "a file cut short anywhere is refused");
	/* The same, as the bridge loads it: the JSON read instead, noted. */
	memcpy(bad, good, len);
	bad[len / 2] ^= 1;
	put(bin, bad, len);
	ignored(json, &want, "checksum", "a changed byte");
	put(bin, good, len - 1);
	ignored(json, &want, "cut short", "a file cut short");
	memcpy(bad, good, len);
	bad[len] = 0;
	put(bin, bad, len + 1);
	ignored(json, &want, "cut short or grown", "a byte too many");
	put(bin, "", 0);
	ignored(json, &want, "not a compact snapshot", "an empty file");
	memcpy(bad, good, len);
	bad[0] = 'X';
	put(bin, bad, len);
	ignored(json, &want, "not a compact snapshot", "another magic");
	memcpy(bad, good, len);
	bad[12] ^= 0x7f;	/* the format version */
	put(bin, bad, len);
	ignored(json, &want, "compact format", "another format version");
	memcpy(bad, good, len);
	bad[8] = good[11], bad[9] = good[10], bad[10] = good[9], bad[11] = good[8];
	put(bin, bad, len);
	ignored(json, &want, "byte order", "another byte order");
	put(bin, good, len);
	require(ok(!utimensat(AT_FDCWD, json, NULL, 0),
		   "the JSON touched after its compact form"));
	ignored(json, &want, "another version of the JSON", "a compact form older than its JSON");
	unlink(bin);
	ignored(json, &want, "cannot open", "no compact form");
	free(good);
	free(bad);
	efa_cluster_clear(&want);
	efa_cluster_clear(&c);
}

/* Another slurm-efa's file: its usability came from other rules. */
static void test_release(void)
{
	const char *json = tmp_at("r.json"), *bin = tmp_at("r.bin");
	struct efa_cluster c, want;
	struct efa_error err = { 0 };
	char *data, *at;
	size_t len;

	build(&c);
	require(ok(!write_both(&c, json) && !efa_snapshot_read(json, &want, &err) &&
		   !efa_read_file(bin, 1 << 20, &data, &len, &err), "a snapshot of this release"));
	/* The release is the first string: change it, then seal the file
	 * again as its writer would. */
	at = memmem(data, len, PACKAGE_VERSION, strlen(PACKAGE_VERSION));
	require(ok(at != NULL, "  names its release"));
	at[0] = at[0] == '9' ? '8' : '9';
	{
		uint64_t sum = efa_snapshot_compact_sum(data + 32, len - 32);

		memcpy(data + 24, &sum, sizeof(sum));
	}
	put(bin, data, len);
	ignored(json, &want, "another slurm-efa release", "a file of another release");
	free(data);
	efa_cluster_clear(&want);
	efa_cluster_clear(&c);
}

/*
 * slurmctld reads the snapshot: one that others than its writer can change
 * is not trusted (the node cache's rule, with sync's own user allowed).
 */
static void test_trust(void)
{
	char dir[4096], json[4200], bin[4200];
	struct efa_cluster c, got, want;
	struct efa_error err = { 0 };
	char note[1024];

	snprintf(dir, sizeof(dir), "%s", tmp_at("trust"));
	snprintf(json, sizeof(json), "%s/snapshot.json", dir);
	snprintf(bin, sizeof(bin), "%s/snapshot.bin", dir);
	require(ok(!mkdir(dir, 0755), "a directory for a snapshot"));
	build(&c);
	require(ok(!write_both(&c, json), "  the snapshot written"));
	require(ok(!efa_snapshot_read(json, &want, &err), "  its JSON reads"));
	ok(!efa_snapshot_load(json, &got, note, sizeof(note), &err) && !note[0],
	   "owner-writable only, in a directory only its owner writes: loaded compact (%s)", err.msg);
	efa_cluster_clear(&got);

	chmod(bin, 0666);
	ignored(json, &want, "writable by others than its owner", "a compact form anyone can write");
	chmod(bin, 0644);
	chmod(json, 0664);
	ok(efa_snapshot_load(json, &got, note, sizeof(note), &err) == -1,
	   "a JSON its group can write is refused");
	has_str(err.msg, "snapshot.json is writable by others than its owner: not trusted", "  saying so");
	chmod(json, 0644);

	chmod(dir, 0777);
	ok(efa_snapshot_load(json, &got, note, sizeof(note), &err) == -1,
	   "a snapshot in a directory anyone can write is refused");
	has_str(err.msg, "which others than its owner can write", "  saying so");
	chmod(dir, 01777);
	ok(efa_snapshot_load(json, &got, note, sizeof(note), &err) == -1,
	   "  sticky or not (/tmp)");
	chmod(dir, 0755);

	if (geteuid() == 0) {
		/* sync runs as a user of its own, in a directory of its own. */
		ok(!chown(json, 65534, 65534) && !chown(bin, 65534, 65534), "  (the files given to uid 65534)");
		ok(efa_snapshot_load(json, &got, note, sizeof(note), &err) == -1,
		   "a snapshot of another user in root's directory is refused");
		has_str(err.msg, "is owned by uid 65534, neither root", "  naming its owner");
		ok(!chown(dir, 65534, 65534), "  (the directory given to uid 65534 too)");
		err.msg[0] = '\0';
		ok(!efa_snapshot_load(json, &got, note, sizeof(note), &err) && !note[0],
		   "a snapshot of the user whose directory it is in is loaded (%s)", err.msg);
		efa_cluster_clear(&got);
	}
	efa_cluster_clear(&want);
	efa_cluster_clear(&c);
}

static void test_path(void)
{
	char *p = efa_snapshot_compact_path("/var/lib/slurm-efa/snapshot.json");

	is_str(p, "/var/lib/slurm-efa/snapshot.bin", "snapshot.json: snapshot.bin beside it");
	free(p);
	p = efa_snapshot_compact_path("/srv/zones");
	is_str(p, "/srv/zones.bin", "another name: .bin added");
	free(p);
}

int main(void)
{
	if (tmp_open())
		return done_testing();
	test_path();
	test_round_trips();
	test_corruption();
	test_release();
	test_trust();
	tmp_close();
	return done_testing();
}
