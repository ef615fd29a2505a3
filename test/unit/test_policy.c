/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster/constraint.h"
#include "common/cluster/partition_default.h"
#include "common/cluster/policy.h"
#include "common/cluster/resume.h"
#include "tap.h"

static char *both[] = { "az-b", "az-a", NULL };
static char *one[] = { "az-a", NULL };

static void constraint(const char *user, char **zones, int want_rc, const char *want,
		       const char *desc)
{
	struct efa_error err = { 0 };
	char *out = NULL;
	int rc = efa_constraint_single_zone(user, zones, "az-", &out, &err);

	is_int(rc, want_rc, "%s", desc);
	if (want_rc == EFA_CONSTRAINT_SET)
		is_str(out, want, "  -> %s", want);
	else if (want_rc == EFA_CONSTRAINT_REFUSE)
		has_str(err.msg, want, "  message");
	free(out);
}

/*
 * Slurm's grammar, row by row: the table the integration test also checks
 * against the real slurmctld (test/fixtures/constraints.tsv).
 */
static void test_constraint_table(void)
{
	static char *zones[] = { "az-us-west-2a", "az-us-west-2b", NULL };
	FILE *f = fopen(FIXTURES "/constraints.tsv", "r");
	char line[1024];
	int rows = 0;

	ok(f != NULL, "the constraint table opens");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *user, *policy, *save = NULL;

		if (*line == '#' || *line == '\n')
			continue;
		user = strtok_r(line, "\t\n", &save);
		policy = strtok_r(NULL, "\t\n", &save);
		if (!policy) {
			ok(0, "a row has a constraint and a policy: %s", user);
			continue;
		}
		if (!strcmp(user, "-"))
			user = NULL;
		if (!strncmp(policy, "set:", 4))
			constraint(user, zones, EFA_CONSTRAINT_SET, policy + 4, user ? user : "(none)");
		else if (!strcmp(policy, "keep"))
			constraint(user, zones, EFA_CONSTRAINT_KEEP, NULL, user);
		else if (!strncmp(policy, "refuse:", 7))
			constraint(user, zones, EFA_CONSTRAINT_REFUSE, policy + 7, user);
		else
			ok(0, "row %s: policy %s is keep, set: or refuse:", user, policy);
		rows++;
	}
	fclose(f);
	ok(rows >= 50, "the table has %d rows", rows);
}

static void test_constraints(void)
{
	constraint(NULL, both, EFA_CONSTRAINT_SET, "[az-b|az-a]", "no constraint: the zone bracket, best first");
	constraint("", one, EFA_CONSTRAINT_SET, "[az-a]", "one zone: a one-item bracket");
	constraint("efa&k8s/az-a", both, EFA_CONSTRAINT_KEEP, NULL, "a Slinky zone pinned: kept");
	constraint("k8s/az-a|az-a", both, EFA_CONSTRAINT_KEEP, NULL,
		   "  the same zone with and without Slinky's prefix is one zone");
	constraint("[k8s/az-a|az-b]&efa", both, EFA_CONSTRAINT_KEEP, NULL, "  in a matching OR too");
	constraint("[rack1|rack2]", one, EFA_CONSTRAINT_SET, "[rack1|rack2]&az-a",
		   "a bracket of the user's own and one zone: a plain AND");
	constraint("[rack1|rack2]|efa", one, EFA_CONSTRAINT_REFUSE, "already has a [...] set",
		   "  not when the bracket is joined with '|'");
	constraint("[rack1|rack2]", both, EFA_CONSTRAINT_REFUSE, "Slurm allows one per job",
		   "  several zones cannot be added to it");
	constraint("(a&b)|c", both, EFA_CONSTRAINT_SET, "(a&b)|c&[az-b|az-a]",
		   "user parentheses: no second level (Slurm reads left to right)");
	{
		char *odd[] = { "az-x[1]", "az-a", "az-b|c", "!az-c", "az-d e", NULL };
		char *only_odd[] = { "az-&", NULL };

		constraint(NULL, odd, EFA_CONSTRAINT_SET, "[az-a]",
			   "zone features that would break the syntax are left out");
		constraint(NULL, only_odd, EFA_CONSTRAINT_REFUSE, "no zone feature usable",
			   "  and none left is a refusal");
	}
	test_constraint_table();
}

static struct efa_config *config(const char *text)
{
	struct efa_config *cfg = NULL;
	struct efa_error err;

	if (efa_config_parse(text, strlen(text), "efa.conf", &cfg, &err))
		printf("# %s\n", err.msg);
	return cfg;
}

static void add(struct efa_cluster *c, const char *name, const char *zone, const char *state,
		const char *partition)
{
	char *features[] = { (char *)zone, NULL }, *states[] = { (char *)state, NULL };
	char *parts[] = { (char *)partition, "all", NULL };
	struct efa_error err;

	efa_cluster_add_node(c, name, features, states, parts, &err);
}

static void test_policy(void)
{
	struct efa_config *cfg = config(
		"SnapshotMaxAge=60\n"
		"PartitionName=gpu SingleZone=yes EFA=required CheckpointRoot=/fsx/ckpt\n"
		"PartitionName=cpu EFA=off\n"
		"PartitionName=opt SingleZone=yes EFA=optional\n");
	struct efa_cluster c = { .zone_prefix = strdup("az-"), .generated = 1000 };
	struct efa_job_request req = { .partition = "gpu", .min_nodes = 2, .max_nodes = 2,
				       .user = "alice", .job_name = "llama" };
	struct efa_decision d;

	require(ok(cfg != NULL, "the policy's efa.conf parses"));
	add(&c, "n1", "az-a", "idle", "gpu");
	add(&c, "n2", "az-a", "drain", "gpu");
	add(&c, "n3", "az-b", "idle", "gpu");
	add(&c, "n4", "az-b", "allocated", "gpu");
	add(&c, "n5", "az-c", "idle", "cpu");
	add(&c, "n6", "az-c", "idle", "cpu");

	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_CHANGE, "gpu -N2: changed");
	is_str(d.features, "[az-b]", "  only the zone with 2 usable gpu nodes (az-c is not in gpu)");
	is_str(d.checkpoint_dir, "/fsx/ckpt/alice/llama", "  the default checkpoint directory");
	has_str(d.detail, "-> '[az-b]'", "  the change in the debug detail");
	is_str(d.log, "", "  nothing for the default log level: it is routine");
	efa_decision_clear(&d);

	req.min_nodes = 3;
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "gpu -N3: no zone can hold it");
	has_str(d.message, "no Availability Zone in partition gpu has 3 usable nodes", "  says so");
	has_str(d.message, "the largest, b, has 2", "  naming the largest zone");
	efa_decision_clear(&d);

	req.min_nodes = 1;
	req.max_nodes = 1;
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	ok(d.features == NULL, "a one-node job gets no zone constraint");
	efa_decision_clear(&d);

	req.max_nodes = 0;
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_str(d.features, "[az-b|az-a]", "no maximum: zones that can hold the minimum, best first");
	efa_decision_clear(&d);

	req.efa = "off";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "--efa=off in an EFA=required partition: refused");
	efa_decision_clear(&d);
	req.efa = "maybe";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	has_str(d.message, "invalid --efa value 'maybe'", "a bad --efa value from the environment: refused");
	efa_decision_clear(&d);
	req.efa = "(null)";
	req.partition = "cpu";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	has_str(d.message, "partition cpu has no EFA (EFA=off)", "--efa in an EFA=off partition: refused");
	efa_decision_clear(&d);
	req.efa = NULL;
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_ACCEPT, "cpu without --efa: accepted unchanged");
	efa_decision_clear(&d);
	req.partition = "nosuch";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_ACCEPT, "a partition efa.conf does not name: accepted unchanged");
	efa_decision_clear(&d);

	req.partition = "gpu";
	req.checkpoint_dir = "/fsx/ckpt/../other";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "--checkpoint-dir escaping the root with ..: refused");
	has_str(d.message, "/fsx/ckpt", "  naming the root");
	efa_decision_clear(&d);
	req.checkpoint_dir = NULL;

	efa_policy_decide(cfg, &c, NULL, 1100, &req, &d);
	is_int(d.verdict, EFA_VERDICT_CHANGE, "a stale snapshot with OnSnapshotMissing=accept: accepted");
	ok(d.features == NULL, "  without a zone constraint");
	has_str(d.log, "100 s old", "  and logged for the admin");
	is_str(d.detail, "", "  no change to detail");
	efa_decision_clear(&d);
	efa_policy_decide(cfg, NULL, "no zone snapshot at /x", 1010, &req, &d);
	has_str(d.log, "no zone snapshot at /x", "a missing snapshot: logged with its reason");
	efa_decision_clear(&d);
	cfg->on_snapshot_missing = EFA_ON_MISSING_REJECT;
	efa_policy_decide(cfg, NULL, "no zone snapshot at /x", 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "OnSnapshotMissing=reject: refused");
	has_str(d.message, "Retry in a minute", "  telling the user to retry");
	efa_decision_clear(&d);

	req.partition = "opt";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "SingleZone on a partition whose nodes have no zone feature: refused");
	has_str(d.message, "has no node with a zone feature (az-<zone>)", "  telling admins what to fix");
	efa_decision_clear(&d);

	efa_cluster_clear(&c);
	efa_config_free(cfg);
}

/* sbatch -p a,b: the job may run in either, so each one's policy holds. */
static void test_partition_lists(void)
{
	struct efa_config *cfg = config(
		"SnapshotMaxAge=60\n"
		"PartitionName=train SingleZone=yes CheckpointRoot=/fsx/ckpt\n"
		"PartitionName=big SingleZone=yes CheckpointRoot=/fsx/other\n"
		"PartitionName=cpu EFA=off\n");
	struct efa_cluster c = { .zone_prefix = strdup("az-"), .generated = 1000 };
	struct efa_job_request req = { .partition = "free,train", .min_nodes = 2, .max_nodes = 2,
				       .user = "alice", .job_name = "llama" };
	struct efa_decision d;

	require(ok(cfg != NULL, "efa.conf with partitions train, big and cpu parses"));
	add(&c, "n1", "az-a", "idle", "train");
	add(&c, "n2", "az-a", "idle", "train");
	add(&c, "n3", "az-b", "idle", "big");
	add(&c, "n4", "az-b", "idle", "big");
	add(&c, "n5", "az-b", "idle", "free");
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_CHANGE, "-p free,train: train's policy holds though free has none");
	is_str(d.features, "[az-a]", "  one zone that train can hold the job in");
	is_str(d.checkpoint_dir, "/fsx/ckpt/alice/llama", "  and train's checkpoint directory");
	efa_decision_clear(&d);

	req.partition = "train,big";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_str(d.features, "[az-a|az-b]", "-p train,big: a zone either can hold it in, as a matching OR");
	ok(d.checkpoint_dir == NULL, "  their roots differ: the node decides the directory");
	has_str(d.log, "the node decides", "  and the log says why");
	efa_decision_clear(&d);

	req.min_nodes = req.max_nodes = 3;
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "-p train,big -N3: neither can hold it in one zone");
	has_str(d.message, "no Availability Zone in partition train,big has 3 usable nodes", "  naming both");
	efa_decision_clear(&d);

	req.min_nodes = req.max_nodes = 2;
	req.partition = "train,cpu";
	req.efa = "required";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "-p train,cpu --efa: refused, since cpu refuses it");
	has_str(d.message, "partition cpu has no EFA", "  naming the partition");
	efa_decision_clear(&d);

	req.efa = NULL;
	req.partition = "train";
	req.array = true;
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_str(d.checkpoint_dir, "/fsx/ckpt/alice/llama_%a", "a job array: each task's own directory, as a pattern");
	efa_decision_clear(&d);
	req.array = false;

	req.partition = "free,train";
	req.checkpoint_dir = "/elsewhere/run";
	efa_policy_decide(cfg, &c, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "a --checkpoint-dir outside a listed partition's root is refused");
	efa_decision_clear(&d);
	efa_cluster_clear(&c);
	efa_config_free(cfg);
}

/* --efa-resume and Resume=: the bridge turns Slurm's requeue on. */
static void test_resume(void)
{
	struct efa_config *cfg = config(
		"PartitionName=train Resume=3\n"
		"PartitionName=short Resume=1\n"
		"PartitionName=dev EFA=optional\n");
	struct efa_config *fast = config("ResumeExpedite=yes\nPartitionName=train Resume=2\n");
	struct efa_job_request req = { .partition = "dev", .user = "alice" };
	struct efa_decision d;

	require(ok(cfg && fast, "efa.conf with Resume= parses"));
	efa_policy_decide(cfg, NULL, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_ACCEPT, "no --efa-resume, no Resume=: unchanged");
	ok(!d.requeue, "  requeue left as Slurm has it");
	efa_decision_clear(&d);

	req.resume = "2";
	efa_policy_decide(cfg, NULL, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_CHANGE, "--efa-resume=2: changed");
	ok(d.requeue && !d.expedite, "  requeue on, not expedited");
	is_int(d.resume, 2, "  up to 2 times");
	has_str(d.detail, "resumable up to 2 times", "  in the debug detail");
	efa_decision_clear(&d);

	req.resume = "0";
	req.partition = "train";
	efa_policy_decide(cfg, NULL, NULL, 1010, &req, &d);
	ok(!d.requeue && d.verdict == EFA_VERDICT_ACCEPT, "--efa-resume=0 wins over the partition's Resume=3");
	efa_decision_clear(&d);

	req.resume = NULL;
	efa_policy_decide(cfg, NULL, NULL, 1010, &req, &d);
	ok(d.requeue && d.resume == 3, "the partition's Resume=3 applies without the option");
	efa_decision_clear(&d);

	req.partition = "short,train";
	efa_policy_decide(cfg, NULL, NULL, 1010, &req, &d);
	ok(d.requeue && d.resume == 3, "-p short,train: requeue on (the node applies its partition's)");
	efa_decision_clear(&d);

	req.resume = "many";
	efa_policy_decide(cfg, NULL, NULL, 1010, &req, &d);
	is_int(d.verdict, EFA_VERDICT_REJECT, "--efa-resume=many (a slurmrestd job) is refused");
	has_str(d.message, "efa: invalid --efa-resume value 'many'", "  with the reason");
	efa_decision_clear(&d);

	req.resume = NULL;
	req.partition = "train";
	efa_policy_decide(fast, NULL, NULL, 1010, &req, &d);
	ok(d.requeue && d.expedite, "ResumeExpedite=yes: expedited");
	efa_decision_clear(&d);

	{
		const struct efa_partition *train = efa_config_partition(cfg, "train");

		is_int(efa_resume_limit(EFA_RESUME_UNSET, train), 3, "limit: the partition's");
		is_int(efa_resume_limit(1, train), 1, "limit: the option wins");
		is_int(efa_resume_limit(EFA_RESUME_UNSET, NULL), 0, "limit: none");
		is_int(efa_resume_run(2, 0), EFA_RESUME_MORE, "first run of --efa-resume=2: more to come");
		is_int(efa_resume_run(2, 1), EFA_RESUME_MORE, "after one node failure: one more");
		is_int(efa_resume_run(2, 2), EFA_RESUME_LAST, "after two: the last");
		is_int(efa_resume_run(2, 3), EFA_RESUME_OVER, "after three: past the limit, it ends");
	}
	{
		/* Runs 0 and 2 were preempted, run 5 requeued by hand; runs 1,
		 * 3 and 4 ended by node failures (nobody recorded them). */
		const struct efa_record_requeue rq[] = {
			{ 0, EFA_REQUEUE_PREEMPTION }, { 2, EFA_REQUEUE_PREEMPTION },
			{ 5, EFA_REQUEUE_REQUEST },
		};

		is_int((long)efa_resume_node_failures(0, rq, 3), 0, "the first run: no failures");
		is_int((long)efa_resume_node_failures(1, rq, 3), 0,
		       "run 1 after a preemption: no node failure");
		is_int((long)efa_resume_node_failures(3, rq, 3), 1,
		       "run 3: one of its three restarts a node failure");
		is_int((long)efa_resume_node_failures(5, rq, 3), 3,
		       "run 5: three node failures (run 5's own requeue is not yet one)");
		is_int((long)efa_resume_node_failures(6, rq, 3), 3,
		       "run 6: the requeue by hand does not count");
		is_int((long)efa_resume_node_failures(4, NULL, 0), 4,
		       "no record: every restart counts, never more resumes than asked");
		is_int(efa_resume_run(1, efa_resume_node_failures(3, rq, 3)), EFA_RESUME_LAST,
		       "--efa-resume=1, two preemptions and one node failure: its last run");
	}
	efa_config_free(cfg);
	efa_config_free(fast);
}

/* CheckpointSignal=: the --signal sbatch adds to EFA batch jobs. */
/*
 * scontrol show job's text as scontrol's info_job.c writes it, not on one
 * line (the epilog reads the job this way: slurmstepd's spank mode has no
 * authentication for Slurm's API).
 */
static void test_shown_job(void)
{
	static const char head[] =
		"JobId=4412 JobName=train\n"
		"   UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A\n"
		"   Priority=1 Nice=0 Account=efa QOS=normal\n"
		"   JobState=COMPLETING Reason=NonZeroExitCode Dependency=(null)\n"
		"   Requeue=1 Restarts=3 BatchFlag=1 Reboot=0 ExitCode=1:0\n"
		"   RunTime=00:00:09 TimeLimit=UNLIMITED TimeMin=N/A\n";
	static const char tail[] = "   WorkDir=/fsx/alice\n"
		"   StdOut=/fsx/alice/train.out\n   Power=\n";
	char text[1024], *comment;
	unsigned long restarts = 0;

	snprintf(text, sizeof(text), "%s%s", head, tail);
	ok(efa_resume_shown_job(text, &restarts, &comment) == 0 && restarts == 3 && !comment,
	   "scontrol show job: Restarts=3, no AdminComment");
	snprintf(text, sizeof(text), "%s   AdminComment=slurm-efa: checkpoints in /fsx/a b {\"efa\":{\"steps\":[],\"requeues\":[{\"run\":1,\"cause\":\"preemption\"}]}} \n%s",
		 head, tail);
	require(ok(efa_resume_shown_job(text, &restarts, &comment) == 0, "with an AdminComment"));
	is_str(comment,
	       "slurm-efa: checkpoints in /fsx/a b {\"efa\":{\"steps\":[],\"requeues\":[{\"run\":1,\"cause\":\"preemption\"}]}}",
	       "  the whole line, blanks and all, less the blank scontrol ends it with");
	free(comment);
	ok(efa_resume_shown_job("JobId=1\n   Requeue=1 BatchFlag=1\n", &restarts, &comment) == -1,
	   "no restart count: -1");
	ok(efa_resume_shown_job("   Requeue=1 Restarts=x BatchFlag=1\n", &restarts, &comment) == -1,
	   "a restart count that is not a number: -1");
	ok(efa_resume_shown_job("   Requeue=1 Restarts=2x\n", &restarts, &comment) == -1,
	   "  nor one followed by more than a blank");
}

static void test_checkpoint_signal(void)
{
	struct efa_config *cfg = config(
		"PartitionName=train EFA=required CheckpointSignal=USR1@300\n"
		"PartitionName=free CheckpointSignal=35@0\n"
		"PartitionName=cpu EFA=off CheckpointSignal=TERM\n"
		"PartitionName=plain EFA=required\n");
	struct efa_config *none = config("PartitionName=train EFA=required\n");
	char sig[64], tiny[8];

	ok(efa_policy_any_checkpoint_signal(cfg), "a partition has CheckpointSignal=");
	ok(!efa_policy_any_checkpoint_signal(none), "none has");
	is_int(efa_policy_checkpoint_signal(cfg, "train", NULL, sig, sizeof(sig)), 1,
	       "EFA=required partition, no --efa: signalled");
	is_str(sig, "B:USR1@300", "  sbatch's --signal for the batch shell");
	is_int(efa_policy_checkpoint_signal(cfg, "train", "off", sig, sizeof(sig)), 0,
	       "  --efa=off there: not an EFA job (the bridge refuses it anyway)");
	is_int(efa_policy_checkpoint_signal(cfg, "free", NULL, sig, sizeof(sig)), 0,
	       "partition without EFA=, no --efa: none");
	is_int(efa_policy_checkpoint_signal(cfg, "free", "(null)", sig, sizeof(sig)), 1,
	       "  bare --efa: signalled");
	is_str(sig, "B:35@0", "  a signal Slurm has no name for goes by number, @0 kept");
	is_int(efa_policy_checkpoint_signal(cfg, "free", "sometimes", sig, sizeof(sig)), 0,
	       "  an --efa value the bridge refuses: none");
	is_int(efa_policy_checkpoint_signal(cfg, "cpu", "auto", sig, sizeof(sig)), 0,
	       "EFA=off partition: none");
	is_int(efa_policy_checkpoint_signal(cfg, "plain,cpu,train", "auto", sig, sizeof(sig)), 1,
	       "-p plain,cpu,train --efa=auto: the first that gives one");
	is_str(sig, "B:USR1@300", "  train's");
	is_int(efa_policy_checkpoint_signal(cfg, "other", "auto", sig, sizeof(sig)), 0,
	       "a partition efa.conf does not name: none");
	is_int(efa_policy_checkpoint_signal(cfg, NULL, "auto", sig, sizeof(sig)), 0, "no partition: none");
	is_int(efa_policy_checkpoint_signal(cfg, "train", NULL, tiny, sizeof(tiny)), -1,
	       "a buffer too small: -1");
	efa_config_free(cfg);
	efa_config_free(none);
}

/* The default partition, from "scontrol -o show partition". */
static void test_default_partition(void)
{
	char name[16];

	is_int(efa_default_partition_parse(
		       "PartitionName=cpu AllowGroups=ALL Default=NO Nodes=c[1-2]\n"
		       "PartitionName=gpu AllowGroups=ALL Default=YES Nodes=g[1-4]\n", name, sizeof(name)),
	       0, "the Default=YES line");
	is_str(name, "gpu", "  its name");
	is_int(efa_default_partition_parse("PartitionName=a Default=NO\nPartitionName=b Default=NO", name,
					   sizeof(name)), 1, "none is the default: 1");
	is_int(efa_default_partition_parse("PartitionName=b NotDefault=YES\n", name, sizeof(name)), 1,
	       "  a key that ends in Default= is not Default=");
	is_int(efa_default_partition_parse("", name, sizeof(name)), 1, "  no partitions: 1");
	is_int(efa_default_partition_parse("PartitionName=averyveryverylongname Default=YES\n", name,
					   sizeof(name)), -1, "a name past the buffer: -1");
	is_int(efa_default_partition_parse("Default=YES\nPartitionName=x Default=NO\n", name,
					   sizeof(name)), 1, "a line without a name is skipped");
}

int main(void)
{
	test_constraints();
	test_policy();
	test_partition_lists();
	test_resume();
	test_shown_job();
	test_checkpoint_signal();
	test_default_partition();
	return done_testing();
}
