/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Each framework's save, replayed as the file operations its source does
 * them, cut off at every point: before each operation, and in the middle
 * of each write. After every cut the decision retention and the plugin
 * take (efa_retention_plan, keep 1) must resume from the newest complete
 * checkpoint and never delete it, and never delete the save being
 * written (a rank on another node may still be writing it).
 *
 * Each save goes into a directory that already holds the framework's
 * previous, complete save. The sequences and where they come from:
 *
 * Hugging Face Trainer, transformers src/transformers/trainer.py at
 * 000945a9b726: Trainer._save_checkpoint calls save_model -> _save, which
 * makes checkpoint-N (os.makedirs), writes the model through
 * save_pretrained (config.json, generation_config.json, then the weights'
 * shards and their index), the processing class (tokenizer files) and
 * training_args.bin; then _save_optimizer_and_scheduler (optimizer.pt,
 * scheduler.pt), _save_rng_state on every rank (rng_state_R.pth), and
 * last TrainerState.save_to_json (trainer_state.json); then
 * _rotate_checkpoints removes the older checkpoint with shutil.rmtree.
 *
 * DeepSpeed, deepspeed/runtime/engine.py at edaa7221267: save_checkpoint
 * (line 4749) makes the tag's directory (_create_checkpoint_file, 5218),
 * _save_checkpoint writes mp_rank_00_model_states.pt (5239-5266),
 * _save_zero_checkpoint each rank's zero_pp_rank_R_mp_rank_00_optim_states.pt
 * and rank 0 copies zero_to_fp32.py into the save directory (5409-5427),
 * then rank 0 opens 'latest' for writing and writes the tag (4840-4842).
 *
 * Megatron-LM, megatron/training/checkpointing.py at d98e8a64dd:
 * save_checkpoint (605) has each rank make its directory and torch.save
 * iter_NNNNNNN/mp_rank_RR/model_optim_rng.pt (1016-1017), a barrier
 * (1025), then rank 0's iter_finalize_fn opens the tracker
 * latest_checkpointed_iteration.txt for writing and writes the iteration
 * (1083-1084).
 *
 * PyTorch Distributed Checkpoint, torch/distributed/checkpoint/filesystem.py
 * at 0140b62d8b: _FileSystemWriter.write_data writes each rank's
 * __R_0.distcp; finish() writes .metadata.tmp, removes an old .metadata
 * and renames .metadata.tmp to .metadata. torchtitan names the
 * directories step-N.
 *
 * NeMo, nemo/lightning/pytorch/callbacks/model_checkpoint.py at
 * 8cfedd7203: _save_checkpoint (559) touches NAME-unfinished first
 * (set_checkpoint_unfinished_marker, 478, at 575), the checkpoint IO
 * writes NAME/weights (a distributed checkpoint), io_dump writes
 * NAME/context (620-621), the finalize callback removes the marker (652,
 * remove_checkpoint_unfinished_marker 497); a top-k removal
 * (_remove_checkpoint, 673) touches the old one's marker before removing
 * it (687). The name is nemo/collections/llm/recipes/log/default.py's
 * "{model_name}--{val_loss:.2f}-{step}-{consumed_samples}" as Lightning
 * formats it (metric names inserted).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/checkpoint/retention.h"
#include "tap.h"
#include "tmpdir.h"

enum op_kind {
	MKDIR,		/* a directory */
	WRITE,		/* a new file: cut, it holds half its bytes */
	REWRITE,	/* open(O_TRUNC) then write: cut, it is empty */
	RENAME,		/* path -> to */
	UNLINK,
	RMDIR,
};

struct op {
	enum op_kind kind;
	const char *path;	/* relative to the save directory */
	const char *to;		/* RENAME's target; WRITE's and REWRITE's text */
};

struct save {
	const char *framework;
	const struct op *previous;	/* the complete save already there */
	size_t nprevious;
	const char *previous_name;
	const struct op *ops;		/* the save cut off */
	size_t nops;
	size_t complete_after;		/* ops done when the new save is whole */
	const char *name;
	/* A cut inside this REWRITE leaves the directory-wide mark empty: no
	 * framework (nor the framework itself) can tell what is complete. */
	bool blind_rewrite;
};

#define COUNT(v) (sizeof(v) / sizeof((v)[0]))
#define SAVE(fw, prev, prevname, ops, after, name, blind) \
	{ fw, prev, COUNT(prev), prevname, ops, COUNT(ops), after, name, blind }

static const char weights[] = "0123456789abcdef0123456789abcdef";

/* Hugging Face Trainer. */
static const struct op hf_100[] = {
	{ MKDIR, "checkpoint-100", NULL },
	{ WRITE, "checkpoint-100/config.json", "{}" },
	{ WRITE, "checkpoint-100/model.safetensors", weights },
	{ WRITE, "checkpoint-100/training_args.bin", weights },
	{ WRITE, "checkpoint-100/optimizer.pt", weights },
	{ WRITE, "checkpoint-100/trainer_state.json", "{\n  \"global_step\": 100\n}\n" },
};
static const struct op hf_200[] = {
	{ MKDIR, "checkpoint-200", NULL },
	{ WRITE, "checkpoint-200/config.json", "{\"model_type\": \"llama\"}" },
	{ WRITE, "checkpoint-200/generation_config.json", "{}" },
	{ WRITE, "checkpoint-200/model-00001-of-00002.safetensors", weights },
	{ WRITE, "checkpoint-200/model-00002-of-00002.safetensors", weights },
	{ WRITE, "checkpoint-200/model.safetensors.index.json", "{}" },
	{ WRITE, "checkpoint-200/tokenizer_config.json", "{}" },
	{ WRITE, "checkpoint-200/training_args.bin", weights },
	{ WRITE, "checkpoint-200/optimizer.pt", weights },
	{ WRITE, "checkpoint-200/scheduler.pt", weights },
	{ WRITE, "checkpoint-200/rng_state_0.pth", weights },
	{ WRITE, "checkpoint-200/rng_state_1.pth", weights },
	/* TrainerState.save_to_json: json.dumps(indent=2, sort_keys=True) + "\n". */
	{ WRITE, "checkpoint-200/trainer_state.json",
	  "{\n  \"best_metric\": null,\n  \"global_step\": 200,\n  \"log_history\": [\n    {\n      \"loss\": 1.5\n    }\n  ]\n}\n" },
	/* _rotate_checkpoints (save_total_limit=1): rmtree of the older one. */
	{ UNLINK, "checkpoint-100/config.json", NULL },
	{ UNLINK, "checkpoint-100/trainer_state.json", NULL },
	{ UNLINK, "checkpoint-100/model.safetensors", NULL },
	{ UNLINK, "checkpoint-100/training_args.bin", NULL },
	{ UNLINK, "checkpoint-100/optimizer.pt", NULL },
	{ RMDIR, "checkpoint-100", NULL },
};

/* DeepSpeed. */
static const struct op ds_100[] = {
	{ MKDIR, "global_step100", NULL },
	{ WRITE, "global_step100/mp_rank_00_model_states.pt", weights },
	{ WRITE, "global_step100/zero_pp_rank_0_mp_rank_00_optim_states.pt", weights },
	{ WRITE, "global_step100/zero_pp_rank_1_mp_rank_00_optim_states.pt", weights },
	{ WRITE, "zero_to_fp32.py", "#!/usr/bin/env python\n" },
	{ REWRITE, "latest", "global_step100" },
};
static const struct op ds_200[] = {
	{ MKDIR, "global_step200", NULL },
	{ WRITE, "global_step200/mp_rank_00_model_states.pt", weights },
	{ WRITE, "global_step200/zero_pp_rank_0_mp_rank_00_optim_states.pt", weights },
	{ WRITE, "global_step200/zero_pp_rank_1_mp_rank_00_optim_states.pt", weights },
	{ REWRITE, "zero_to_fp32.py", "#!/usr/bin/env python\n" },
	{ REWRITE, "latest", "global_step200" },
};

/* Megatron-LM. */
static const struct op mg_100[] = {
	{ MKDIR, "iter_0000100", NULL },
	{ MKDIR, "iter_0000100/mp_rank_00", NULL },
	{ WRITE, "iter_0000100/mp_rank_00/model_optim_rng.pt", weights },
	{ MKDIR, "iter_0000100/mp_rank_01", NULL },
	{ WRITE, "iter_0000100/mp_rank_01/model_optim_rng.pt", weights },
	{ REWRITE, "latest_checkpointed_iteration.txt", "100" },
};
static const struct op mg_200[] = {
	{ MKDIR, "iter_0000200", NULL },
	{ MKDIR, "iter_0000200/mp_rank_00", NULL },
	{ WRITE, "iter_0000200/mp_rank_00/model_optim_rng.pt", weights },
	{ MKDIR, "iter_0000200/mp_rank_01", NULL },
	{ WRITE, "iter_0000200/mp_rank_01/model_optim_rng.pt", weights },
	{ REWRITE, "latest_checkpointed_iteration.txt", "200" },
};

/* PyTorch Distributed Checkpoint (torchtitan's step-N). */
static const struct op dcp_100[] = {
	{ MKDIR, "step-100", NULL },
	{ WRITE, "step-100/__0_0.distcp", weights },
	{ WRITE, "step-100/__1_0.distcp", weights },
	{ WRITE, "step-100/.metadata.tmp", weights },
	{ RENAME, "step-100/.metadata.tmp", "step-100/.metadata" },
};
static const struct op dcp_200[] = {
	{ MKDIR, "step-200", NULL },
	{ WRITE, "step-200/__0_0.distcp", weights },
	{ WRITE, "step-200/__1_0.distcp", weights },
	{ WRITE, "step-200/.metadata.tmp", weights },
	{ RENAME, "step-200/.metadata.tmp", "step-200/.metadata" },
};

/* NeMo 2 (Lightning ModelCheckpoint with NeMo's markers). */
#define NEMO1 "llama--val_loss=2.10-step=99-consumed_samples=800.0"
#define NEMO2 "llama--val_loss=1.95-step=199-consumed_samples=1600.0"
static const struct op nemo_1[] = {
	{ WRITE, NEMO1 "-unfinished", "" },
	{ MKDIR, NEMO1, NULL },
	{ MKDIR, NEMO1 "/weights", NULL },
	{ WRITE, NEMO1 "/weights/__0_0.distcp", weights },
	{ WRITE, NEMO1 "/weights/.metadata", weights },
	{ MKDIR, NEMO1 "/context", NULL },
	{ WRITE, NEMO1 "/context/io.json", "{}" },
	{ UNLINK, NEMO1 "-unfinished", NULL },
};
static const struct op nemo_2[] = {
	{ WRITE, NEMO2 "-unfinished", "" },
	{ MKDIR, NEMO2, NULL },
	{ MKDIR, NEMO2 "/weights", NULL },
	{ WRITE, NEMO2 "/weights/__0_0.distcp", weights },
	{ WRITE, NEMO2 "/weights/__1_0.distcp", weights },
	{ WRITE, NEMO2 "/weights/.metadata", weights },
	{ WRITE, NEMO2 "/weights/common.pt", weights },
	{ MKDIR, NEMO2 "/context", NULL },
	{ WRITE, NEMO2 "/context/io.json", "{}" },
	{ WRITE, NEMO2 "/context/model.yaml", "{}" },
	{ UNLINK, NEMO2 "-unfinished", NULL },
	/* save_top_k=1: the older one is marked, then removed. */
	{ WRITE, NEMO1 "-unfinished", "" },
	{ UNLINK, NEMO1 "/weights/.metadata", NULL },
	{ UNLINK, NEMO1 "/weights/__0_0.distcp", NULL },
	{ RMDIR, NEMO1 "/weights", NULL },
	{ UNLINK, NEMO1 "/context/io.json", NULL },
	{ RMDIR, NEMO1 "/context", NULL },
	{ RMDIR, NEMO1, NULL },
	{ UNLINK, NEMO1 "-unfinished", NULL },
};

static const struct save saves[] = {
	SAVE("Hugging Face Trainer", hf_100, "checkpoint-100", hf_200, 13, "checkpoint-200", false),
	SAVE("DeepSpeed", ds_100, "global_step100", ds_200, 6, "global_step200", true),
	SAVE("Megatron-LM", mg_100, "iter_0000100", mg_200, 6, "iter_0000200", true),
	SAVE("PyTorch DCP", dcp_100, "step-100", dcp_200, 5, "step-200", false),
	SAVE("NeMo", nemo_1, NEMO1, nemo_2, 11, NEMO2, false),
};

static int write_file(int dirfd, const char *path, const char *text, size_t len, bool trunc)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_CLOEXEC | (trunc ? O_TRUNC : O_EXCL), 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = len ? write(fd, text, len) : 0;
	return close(fd) || n != (ssize_t)len ? -1 : 0;
}

/* Does op; cut: only its first half (a write cut off), where it has one. */
static int run_op(int dirfd, const struct op *op, bool cut)
{
	switch (op->kind) {
	case MKDIR:
		return mkdirat(dirfd, op->path, 0700);
	case WRITE:
		return write_file(dirfd, op->path, op->to, strlen(op->to) / (cut ? 2 : 1), false);
	case REWRITE:
		return write_file(dirfd, op->path, op->to, cut ? 0 : strlen(op->to), true);
	case RENAME:
		return renameat(dirfd, op->path, dirfd, op->to);
	case UNLINK:
		return unlinkat(dirfd, op->path, 0);
	case RMDIR:
		return unlinkat(dirfd, op->path, AT_REMOVEDIR);
	}
	return -1;
}

static bool can_cut(const struct op *op)
{
	return op->kind == WRITE || op->kind == REWRITE;
}

/* Every entry's time set back an hour: the previous save is older. */
static int age_all(int dirfd, const struct op *ops, size_t n)
{
	struct timespec t[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };

	for (size_t i = 0; i < n; i++)
		if (!strchr(ops[i].kind == RENAME ? ops[i].to : ops[i].path, '/') &&
		    utimensat(dirfd, ops[i].kind == RENAME ? ops[i].to : ops[i].path, t,
			      AT_SYMLINK_NOFOLLOW) && errno != ENOENT)
			return -1;
	return 0;
}

static int remove_all(const char *path)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

static bool exists_at(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
}

static const struct efa_retention_entry *find(const struct efa_retention_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].name, name))
			return &p->v[i];
	return NULL;
}

static void noop_report(void *ctx, const char *name, const char *error)
{
	(void)ctx;
	(void)name;
	(void)error;
}

/*
 * One cut: the previous save whole, the new one done up to op done (and
 * op done cut in the middle when cut). Returns the number of checks that
 * failed, each said.
 */
static int judge_cut(const struct save *s, size_t done, bool cut)
{
	const char *dir = tmp_at("save");
	bool whole = done >= s->complete_after;
	bool blind = s->blind_rewrite && cut && s->ops[done].kind == REWRITE &&
		     done + 1 == s->complete_after;
	const char *expect = whole ? s->name : blind ? NULL : s->previous_name;
	const struct efa_retention_entry *e;
	struct efa_retention_plan plan;
	struct efa_error err;
	char where[256];
	int failed = 0, fd;

	snprintf(where, sizeof(where), "%s, cut %s op %zu (%s)", s->framework,
		 cut ? "inside" : "before", done + 1, done < s->nops ? s->ops[done].path : "end");
	if (remove_all(dir) || mkdir(dir, 0700))
		return ok(0, "%s: scratch directory", where), 1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; i < s->nprevious; i++)
		if (run_op(fd, &s->previous[i], false))
			return ok(0, "%s: the previous save, op %zu: %s", where, i + 1, strerror(errno)), 1;
	if (age_all(fd, s->previous, s->nprevious))
		return ok(0, "%s: aging the previous save", where), 1;
	for (size_t i = 0; i < done; i++)
		if (run_op(fd, &s->ops[i], false))
			return ok(0, "%s: op %zu: %s", where, i + 1, strerror(errno)), 1;
	if (cut && run_op(fd, &s->ops[done], true))
		return ok(0, "%s: the cut op: %s", where, strerror(errno)), 1;

	if (efa_retention_plan(fd, 1, &plan, &err)) {
		close(fd);
		return ok(0, "%s: plan: %s", where, err.msg), 1;
	}
	if (!(expect ? plan.resume && !strcmp(plan.resume->name, expect) : !plan.resume)) {
		ok(0, "%s: resume from %s, not %s", where, expect ? expect : "nothing",
		   plan.resume ? plan.resume->name : "nothing");
		failed++;
	}
	if ((e = find(&plan, s->name)) && e->remove) {
		ok(0, "%s: the save being written (%s, %s) is never deleted", where, s->name,
		   efa_ckpt_state_name(e->state));
		failed++;
	}
	if (!whole && (e = find(&plan, s->previous_name)) && e->remove) {
		ok(0, "%s: the last complete save %s is never deleted (%s: %s)", where,
		   s->previous_name, efa_ckpt_state_name(e->state), e->why);
		failed++;
	}
	efa_retention_plan_free(&plan);
	/* What retention really does leaves the resume point there. */
	if (efa_retention_apply(fd, 1, noop_report, NULL, &err) ||
	    (expect && !exists_at(fd, expect))) {
		ok(0, "%s: after retention ran, %s is still there", where, expect);
		failed++;
	}
	close(fd);
	return failed;
}

static void test_save(const struct save *s)
{
	int failed = 0, cuts = 0;

	for (size_t done = 0; done <= s->nops; done++) {
		failed += judge_cut(s, done, false);
		cuts++;
		if (done < s->nops && can_cut(&s->ops[done])) {
			failed += judge_cut(s, done, true);
			cuts++;
		}
	}
	ok(!failed, "%s: at each of %d points a save can be cut off, the resume point is the newest complete save and retention keeps it",
	   s->framework, cuts);
}

int main(void)
{
	if (tmp_open())
		return done_testing();
	for (size_t i = 0; i < COUNT(saves); i++)
		test_save(&saves[i]);
	tmp_close();
	return done_testing();
}
