/* SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config/efa_conf.h"
#include "tap.h"

static struct efa_config *parse(const char *text, struct efa_error *err)
{
	struct efa_config *cfg = NULL;

	if (efa_config_parse(text, strlen(text), "efa.conf", &cfg, err))
		return NULL;
	return cfg;
}

/* Expects text to be rejected with a message containing want. */
static void rejects(const char *text, const char *want)
{
	struct efa_error err = { 0 };
	struct efa_config *cfg = parse(text, &err);

	ok(!cfg, "rejects: %s", text);
	has_str(err.msg, want, "  message names the problem (%s)", want);
	efa_config_free(cfg);
}

static void test_defaults(void)
{
	struct efa_error err;
	struct efa_config *cfg = parse("# only a comment\n\n   \n", &err);

	require(ok(cfg != NULL, "empty file parses"));
	is_str(cfg->zone_feature_prefix, "az-", "ZoneFeaturePrefix defaults to az-");
	is_int(cfg->snapshot_max_age, 300, "SnapshotMaxAge defaults to 300 s");
	is_int(cfg->on_snapshot_missing, EFA_ON_MISSING_ACCEPT, "OnSnapshotMissing defaults to accept");
	is_int(cfg->topology, EFA_TOPOLOGY_NONE, "Topology defaults to none");
	is_int(cfg->container_host_libraries, EFA_NO, "ContainerHostLibraries defaults to no (ABI risk)");
	is_int(cfg->checkpoint_timeout, 30, "CheckpointTimeout defaults to 30 s");
	is_int(cfg->fallback_after, 60, "FallbackAfter defaults to 60 s");
	is_str(cfg->topology_feature_prefixes[0], "nn1-", "layer 1 prefix first");
	is_str(cfg->topology_feature_prefixes[3], "nn4-", "layer 4 prefix last");
	ok(cfg->topology_feature_prefixes[4] == NULL, "four default layers (EC2 gives 3 or 4)");
	is_str(cfg->capacity_block_feature_prefix, "cb-", "CapacityBlockFeaturePrefix defaults to cb-");
	ok(cfg->instance_type == NULL, "instance type detected unless set");
	is_int(cfg->npartitions, 0, "no partitions");
	is_int(cfg->checkpoint_mode, 0700, "CheckpointMode defaults to 0700");
	is_str(cfg->checkpoint_env, "CHECKPOINT_DIR", "CheckpointEnv defaults to CHECKPOINT_DIR");
	is_int(cfg->health_min_locked_memory, 0, "HealthMinLockedMemory defaults to 0: not judged");
	efa_config_free(cfg);
}

/* Sizes as limits.conf and systemd's LimitMEMLOCK= write them. */
static void test_sizes(void)
{
	static const struct {
		const char *text;
		long bytes;
	} cases[] = {
		{ "HealthMinLockedMemory=unlimited\n", EFA_BYTES_UNLIMITED },
		{ "HealthMinLockedMemory=infinity\n", EFA_BYTES_UNLIMITED },
		{ "HealthMinLockedMemory=65536\n", 65536 },
		{ "HealthMinLockedMemory=64K\n", 65536 },
		{ "HealthMinLockedMemory=8M\n", 8L << 20 },
		{ "HealthMinLockedMemory=16GiB\n", 16L << 30 },
		{ "HealthMinLockedMemory=2t\n", 2L << 40 },
	};
	struct efa_error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct efa_config *cfg = parse(cases[i].text, &err);

		require(ok(cfg != NULL, "%.*s parses", (int)strlen(cases[i].text) - 1, cases[i].text));
		is_int(cfg->health_min_locked_memory, cases[i].bytes, "  as %ld bytes", cases[i].bytes);
		efa_config_free(cfg);
	}
}

static void test_full(void)
{
	const char *text =
		"# site settings\n"
		"InstanceType=p5.48xlarge   # override DMI\n"
		"ProfileDir=/etc/slurm/efa-profiles\n"
		"RestURL=unix:/run/slurmrestd/slurmrestd.sock RestUser=slurmrest\n"
		"restTokenFile=/etc/slurm/efa.jwt RestCAFile=/etc/slurm/rest-ca.pem\n"
		"Snapshot=/var/lib/slurm-efa/snapshot.json SnapshotMaxAge=5m\n"
		"ZoneFeaturePrefix = k8s/az-\n"
		"OnSnapshotMissing=REJECT\n"
		"Topology=tree TopologyFeaturePrefixes=k8s/nn1-,k8s/nn2-\n"
		"TopologyFile=/etc/slurm/topology.conf TopologyFormat=yaml\n"
		"TopologyReload= \"scontrol reconfigure\"\n"
		"CheckpointMode=0750 CheckpointEnv=CKPT_DIR_2\n"
		"PartitionName=DEFAULT SingleZone=yes\n"
		"ResumeExpedite=yes FallbackAfter=2m\n"
		"PartitionName=gpu EFA=required CheckpointRoot=/fsx/checkpoints CheckpointKeep=3 Resume=2 "
		"CheckpointSignal=SIGusr1@300\n"
		"PartitionName=cpu EFA =off SingleZone=no\n"
		"PartitionName=dev EFA=optional CheckpointRoot=/scratch CheckpointFS=any\n";
	struct efa_error err = { 0 };
	struct efa_config *cfg = parse(text, &err);
	const struct efa_partition *p;

	require(ok(cfg != NULL, "full file parses (%s)", err.msg));
	is_str(cfg->instance_type, "p5.48xlarge", "InstanceType, comment stripped");
	is_str(cfg->rest_url, "unix:/run/slurmrestd/slurmrestd.sock", "RestURL");
	is_str(cfg->rest_user, "slurmrest", "two keys on one line");
	is_str(cfg->rest_token_file, "/etc/slurm/efa.jwt", "keys are case-insensitive");
	is_str(cfg->rest_ca_file, "/etc/slurm/rest-ca.pem", "RestCAFile");
	is_int(cfg->snapshot_max_age, 300, "5m is 300 s");
	is_str(cfg->zone_feature_prefix, "k8s/az-", "blanks around '=', as slurm.conf allows");
	is_int(cfg->fallback_after, 120, "FallbackAfter=2m is 120 s");
	is_int(cfg->on_snapshot_missing, EFA_ON_MISSING_REJECT, "values are case-insensitive");
	is_int(cfg->topology, EFA_TOPOLOGY_TREE, "Topology=tree");
	is_int(cfg->topology_format, EFA_TOPOLOGY_FORMAT_YAML, "TopologyFormat=yaml");
	is_str(cfg->topology_feature_prefixes[1], "k8s/nn2-", "prefix list");
	ok(cfg->topology_feature_prefixes[2] == NULL, "list replaces the default");
	is_str(cfg->topology_reload, "scontrol reconfigure", "quoted value keeps spaces, after a blank");
	is_int(cfg->checkpoint_mode, 0750, "CheckpointMode is octal");
	is_str(cfg->checkpoint_env, "CKPT_DIR_2", "CheckpointEnv");
	is_int(cfg->npartitions, 3, "DEFAULT is not a partition");

	p = efa_config_partition(cfg, "gpu");
	require(ok(p != NULL, "gpu partition found"));
	is_int(p->efa, EFA_MODE_REQUIRED, "gpu EFA=required");
	is_int(p->single_zone, EFA_YES, "gpu inherits SingleZone from DEFAULT");
	is_str(p->checkpoint_root, "/fsx/checkpoints", "gpu CheckpointRoot");
	is_int(p->checkpoint_fs, EFA_CKPT_FS_LUSTRE, "CheckpointFS defaults to lustre with a root");
	is_int(p->checkpoint_keep, 3, "CheckpointKeep");
	is_int(p->resume, 2, "Resume");
	is_int(p->checkpoint_signal.number, SIGUSR1, "CheckpointSignal: SIGusr1 is USR1");
	is_int(p->checkpoint_signal.seconds, 300, "  300 s before the limit");
	is_int(cfg->resume_expedite, EFA_YES, "ResumeExpedite=yes");

	p = efa_config_partition(cfg, "cpu");
	require(ok(p != NULL, "cpu partition found"));
	is_int(p->efa, EFA_MODE_OFF, "cpu EFA=off (written EFA =off)");
	is_int(p->single_zone, EFA_NO, "partition overrides DEFAULT");
	ok(p->checkpoint_root == NULL, "no checkpoint root");
	is_int(p->checkpoint_keep, -1, "keep everything by default");
	is_int(p->resume, EFA_RESUME_UNSET, "no Resume= by default");
	is_int(p->checkpoint_signal.number, 0, "no CheckpointSignal= by default");

	p = efa_config_partition(cfg, "dev");
	require(ok(p != NULL, "dev partition found"));
	is_int(p->efa, EFA_MODE_AUTO, "optional means auto");
	is_int(p->checkpoint_fs, EFA_CKPT_FS_ANY, "CheckpointFS=any");
	ok(efa_config_partition(cfg, "nope") == NULL, "unknown partition is NULL");
	efa_config_free(cfg);
}

static void test_errors(void)
{
	rejects("InstanceType=p5.48xlarge\nFoo=bar\n", "efa.conf:2: unknown key 'Foo'");
	rejects("SnapshotMaxAge=soon\n", "efa.conf:1: invalid SnapshotMaxAge=soon");
	rejects("SnapshotMaxAge=-5\n", "invalid SnapshotMaxAge=-5");
	rejects("SnapshotMaxAge=5x\n", "invalid SnapshotMaxAge=5x");
	rejects("Topology=mesh\n", "invalid Topology=mesh: use none|tree|block");
	rejects("ContainerHostLibraries=maybe\n", "invalid ContainerHostLibraries=maybe: use yes|no");
	rejects("CheckpointTimeout=soon\n", "invalid CheckpointTimeout=soon: use a whole number of seconds");
	rejects("FallbackAfter=-1\n", "invalid FallbackAfter=-1: use a whole number of seconds");
	rejects("TopologyFormat=json\n", "invalid TopologyFormat=json: use auto|conf|yaml");
	rejects("OnSnapshotMissing=maybe\n", "use accept|reject");
	rejects("Snapshot=relative/path\n", "must be an absolute path");
	rejects("InstanceType=a\nInstanceType=b\n", "efa.conf:2: InstanceType given twice");
	rejects("InstanceType\n", "expected Key=Value, found 'InstanceType'");
	rejects("InstanceType= ProfileDir=/opt\n", "InstanceType: empty value");
	rejects("ProfileDir =/opt RestUser= RestURL=unix:/x\n", "RestUser: empty value");
	rejects("InstanceType = # none\n", "InstanceType: empty value");
	rejects("InstanceType=\n", "InstanceType: empty value");
	rejects("=x\n", "missing key before '='");
	rejects("TopologyReload=\"scontrol reconfigure\n", "unterminated quoted value");
	rejects("TopologyReload=\"a\"b\n", "text after closing quote");
	rejects("TopologyFeaturePrefixes=a,,b\n", "empty item in list");
	rejects("\n\nPartitionName=gpu EFA=sometimes\n",
		"efa.conf:3: invalid EFA=sometimes: use required|optional|off");
	rejects("PartitionName=gpu InstanceType=p5\n", "InstanceType is a global key");
	rejects("EFA=required\n", "EFA is a partition key");
	rejects("PartitionName=gpu Bogus=1\n", "unknown partition key 'Bogus'");
	rejects("PartitionName=gpu\nPartitionName=gpu\n", "efa.conf:2: PartitionName=gpu appears twice");
	rejects("PartitionName=gpu EFA=off EFA=required\n", "EFA given twice for partition gpu");
	rejects("PartitionName=gpu CheckpointKeep=3d\n", "invalid CheckpointKeep=3d");
	rejects("PartitionName=gpu CheckpointKeep=100001\n", "invalid CheckpointKeep=100001: at most 100000");
	rejects("\nPartitionName=gpu Resume=101\n", "efa.conf:2: invalid Resume=101: at most 100");
	rejects("PartitionName=gpu Resume=-1\n", "invalid Resume=-1: use a whole number");
	rejects("PartitionName=gpu Resume=two\n", "invalid Resume=two");
	rejects("Resume=2\n", "Resume is a partition key");
	rejects("\nPartitionName=gpu CheckpointSignal=USR3@300\n",
		"efa.conf:2: invalid CheckpointSignal=USR3@300: unknown signal 'USR3'");
	rejects("PartitionName=gpu CheckpointSignal=KILL@300\n",
		"invalid CheckpointSignal=KILL@300: signal 'KILL' cannot be caught");
	rejects("PartitionName=gpu CheckpointSignal=19\n", "signal '19' cannot be caught");
	rejects("PartitionName=gpu CheckpointSignal=USR1@65536\n",
		"invalid time '65536' after '@': use whole seconds before the time limit, 0 to 65535");
	rejects("PartitionName=gpu CheckpointSignal=USR1@5m\n", "invalid time '5m'");
	rejects("PartitionName=gpu CheckpointSignal=USR1@\n", "invalid time ''");
	rejects("PartitionName=gpu CheckpointSignal=@300\n", "unknown signal ''");
	rejects("PartitionName=gpu CheckpointSignal=0\n", "unknown signal '0'");
	rejects("CheckpointSignal=USR1\n", "CheckpointSignal is a partition key");
	rejects("ResumeExpedite=maybe\n", "invalid ResumeExpedite=maybe: use yes|no");
	rejects("HealthReturnPasses=10001\n", "invalid HealthReturnPasses=10001: at most 10000");
	rejects("\nHealthRetransTimeouts=1000000001\n",
		"efa.conf:2: invalid HealthRetransTimeouts=1000000001: at most 1000000000");
	rejects("HealthMinLockedMemory=8X\n",
		"invalid HealthMinLockedMemory=8X: use a size in bytes (or with K, M, G, T) or unlimited");
	rejects("HealthMinLockedMemory=-1\n", "invalid HealthMinLockedMemory=-1");
	rejects("HealthMinLockedMemory=99999999999T\n", "invalid HealthMinLockedMemory=99999999999T");
	rejects("HealthImpairedConnections=-5\n", "invalid HealthImpairedConnections=-5: use a whole number");
	rejects("HealthUnresponsiveRemotes=lots\n", "invalid HealthUnresponsiveRemotes=lots");
	rejects("PartitionName=gpu CheckpointRoot=fsx\n", "must be an absolute path");
	rejects("PartitionName=a PartitionName=b\n", "one PartitionName per line");
	rejects("CheckpointMode=0600\n", "invalid CheckpointMode=0600: use octal permission bits that give the owner rwx");
	rejects("CheckpointMode=0789\n", "invalid CheckpointMode=0789");
	rejects("CheckpointMode=01777\n", "invalid CheckpointMode=01777");
	rejects("CheckpointMode=u+rwx\n", "invalid CheckpointMode=u+rwx");
	rejects("CheckpointEnv=CHECKPOINT-DIR\n", "invalid CheckpointEnv=CHECKPOINT-DIR: use a variable name");
	rejects("CheckpointEnv=1DIR\n", "invalid CheckpointEnv=1DIR");
	rejects("PartitionName=gpu CheckpointMode=0700\n", "CheckpointMode is a global key");

	{
		struct efa_error err;
		struct efa_config *cfg = NULL;

		ok(efa_config_parse("A=b\0c", 5, "efa.conf", &cfg, &err) == -1,
		   "NUL byte rejected");
		has_str(err.msg, "NUL byte", "  and said so");
	}
}

static void test_load(void)
{
	char dir[] = "/tmp/efa-conf-test.XXXXXX", path[64];
	struct efa_config *cfg = NULL;
	struct efa_error err = { 0 };
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/efa.conf", dir);
	ok(efa_config_load(path, &cfg, &err) == -1, "missing explicit file is an error");
	has_str(err.msg, path, "  message names the path");

	f = fopen(path, "w");
	fputs("InstanceType=trn1.32xlarge\nPartitionName=x EFA=off\n", f);
	fclose(f);
	ok(efa_config_load(path, &cfg, &err) == 0, "file loads");
	is_str(cfg ? cfg->path : NULL, path, "path recorded");
	is_str(cfg ? cfg->instance_type : NULL, "trn1.32xlarge", "value from file");
	efa_config_free(cfg);
	cfg = NULL;

	setenv("SLURM_EFA_CONF", path, 1);
	ok(efa_config_find_and_load(NULL, &cfg, &err) == 0, "found through $SLURM_EFA_CONF");
	is_str(cfg ? cfg->path : NULL, path, "  that file");
	efa_config_free(cfg);
	cfg = NULL;
	ok(efa_config_find_and_load("/nonexistent/efa.conf", &cfg, &err) == -1,
	   "explicit path wins over the environment");
	unlink(path);
	ok(efa_config_find_and_load(NULL, &cfg, &err) == -1,
	   "missing file named by the environment is an error");
	unsetenv("SLURM_EFA_CONF");

	ok(efa_config_load(dir, &cfg, &err) == -1, "a directory is refused");
	has_str(err.msg, "not a regular file", "  and said so");
	rmdir(dir);
}

static void test_hang(void)
{
	struct efa_error err;
	struct efa_config *cfg;
	const struct efa_partition *p;

	cfg = parse("PartitionName=gpu HangAfter=10m\nPartitionName=cpu\n", &err);
	require(ok(cfg != NULL, "HangAfter= with a suffix"));
	is_int(cfg->hang_check_interval, EFA_HANG_CHECK_INTERVAL_DEFAULT,
	       "HangCheckInterval= defaults to %d s", EFA_HANG_CHECK_INTERVAL_DEFAULT);
	p = efa_config_partition(cfg, "gpu");
	ok(p && p->hang_after == 600 && p->hang_action == EFA_HANG_NOTIFY,
	   "  600 s, HangAction= notify by default");
	p = efa_config_partition(cfg, "cpu");
	ok(p && p->hang_after == 0, "a partition without it: no hang detection");
	efa_config_free(cfg);
	cfg = parse("PartitionName=DEFAULT HangAfter=5 HangAction=cancel\nPartitionName=gpu\n"
		    "HangCheckInterval=1\n", &err);
	require(ok(cfg != NULL, "HangAfter= of the DEFAULT line, HangCheckInterval= after the partitions"));
	p = efa_config_partition(cfg, "gpu");
	ok(p && p->hang_after == 5 && p->hang_action == EFA_HANG_CANCEL, "  the partition has both");
	efa_config_free(cfg);
	rejects("PartitionName=gpu HangAction=reboot\n",
		"efa.conf:1: invalid HangAction=reboot: use notify|requeue|cancel");
	rejects("PartitionName=gpu HangAfter=soon\n", "efa.conf:1: invalid HangAfter=soon");
	rejects("HangCheckInterval=60\nPartitionName=gpu HangAfter=2m\n",
		"efa.conf:2: PartitionName=gpu: HangAfter=120 s is under 3 HangCheckInterval= (60 s each)");
	rejects("HangCheckInterval=0\n", "HangCheckInterval=0: use 1 s or more");

	cfg = parse("SickLinks=yes\nSickLinkFloor=0.05\nSickLinkFactor=4\nSickLinkDrain=yes\n", &err);
	require(ok(cfg != NULL, "the sick-link keys"));
	ok(cfg->sick_links == EFA_YES && cfg->sick_link_floor == 0.05 && cfg->sick_link_factor == 4 &&
	   cfg->sick_link_drain == EFA_YES, "  as given");
	efa_config_free(cfg);
	cfg = parse("", &err);
	require(ok(cfg != NULL, "none given"));
	ok(cfg->sick_links == EFA_NO && cfg->sick_link_floor == 0.01 && cfg->sick_link_factor == 10 &&
	   cfg->sick_link_drain == EFA_NO, "  off; floor 0.01, factor 10, no drain");
	efa_config_free(cfg);
	rejects("SickLinkFloor=1.5\n", "efa.conf:1: invalid SickLinkFloor=1.5: use a decimal from 0 to 1");
	rejects("SickLinkFloor=lots\n", "invalid SickLinkFloor=lots");
	rejects("SickLinks=maybe\n", "invalid SickLinks=maybe: use yes|no");
}

int main(void)
{
	test_defaults();
	test_sizes();
	test_full();
	test_errors();
	test_hang();
	test_load();
	return done_testing();
}
