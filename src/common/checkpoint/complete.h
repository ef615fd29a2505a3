/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a checkpoint directory holds a whole save: only a mark that a
 * framework writes after everything else of one save makes a checkpoint
 * complete. Each rule follows the framework's own save, read in its
 * source (the crash-point tests in test/unit/test_complete.c replay each
 * save's file operations and cite them):
 *
 * - The job's own marker, EFA_CKPT_COMPLETE_MARKER inside the checkpoint,
 *   written last by the job.
 * - NeMo (and Lightning through NeMo's ModelCheckpoint): before a save
 *   writes anything it touches NAME-unfinished beside the checkpoint (NAME
 *   without .ckpt, then without -EMA), and removes it once every rank has
 *   finished; a removal marks it the same way first. A checkpoint with
 *   that marker is incomplete; one named the way NeMo names them
 *   (NAME--key=value-..., Lightning's auto-inserted metric names) without
 *   it is complete.
 * - Megatron-LM: latest_checkpointed_iteration.txt in the save directory
 *   is rewritten after every rank saved iter_N: iterations up to the one
 *   it names are complete, later ones incomplete. Without a readable
 *   tracker (none, or cut off while rewritten) iter_N is unknown.
 * - DeepSpeed: the file 'latest' in the save directory is rewritten with
 *   the tag after every rank saved it: the tag it names, and global_stepN
 *   up to its step, are complete; later global_stepN incomplete; without
 *   a readable 'latest', unknown.
 * - Hugging Face Trainer: checkpoint-N gets trainer_state.json last, after
 *   the model (config.json, weights), training_args.bin, optimizer,
 *   scheduler and RNG state, in one write of JSON that ends "\n}\n".
 *   checkpoint-N without it, or with it cut off, is incomplete.
 * - PyTorch Distributed Checkpoint (FileSystemWriter): .metadata is renamed
 *   into place by finish(), after every rank's .distcp files; shards or
 *   .metadata.tmp without it are incomplete.
 *
 * A directory none of these speaks for is unknown: never counted by
 * retention, never deleted by it, never resumed from.
 */
#ifndef EFA_CKPT_COMPLETE_H
#define EFA_CKPT_COMPLETE_H

#include <stdbool.h>

#define EFA_CKPT_COMPLETE_MARKER ".checkpoint-complete"
#define EFA_MEGATRON_TRACKER "latest_checkpointed_iteration.txt"
#define EFA_DEEPSPEED_LATEST "latest"
/* A DeepSpeed tag longer than this is not read (its dirent could not hold it). */
#define EFA_CKPT_TAG_MAX 256

enum efa_ckpt_state {
	EFA_CKPT_UNKNOWN,	/* no framework's mark to go by */
	EFA_CKPT_COMPLETE,
	EFA_CKPT_INCOMPLETE,
};

/* What the checkpoint directory (parentfd) holds for all its checkpoints. */
struct efa_ckpt_marks {
	bool megatron;		/* a Megatron-LM tracker was read */
	bool megatron_release;	/* it says "release": no iteration */
	long megatron_iteration;
	bool deepspeed;		/* DeepSpeed's 'latest' was read */
	char deepspeed_tag[EFA_CKPT_TAG_MAX];
	long deepspeed_step;	/* the tag's N when it is global_stepN, else -1 */
};

/* Reads the directory-wide marks (Megatron's tracker, DeepSpeed's latest) once. */
void efa_ckpt_marks_read(int parentfd, struct efa_ckpt_marks *m);

/*
 * The state of the checkpoint name (a directory in parentfd), with why
 * pointing at a static reason. Reads a bounded number of its entries and
 * follows no link.
 */
enum efa_ckpt_state efa_ckpt_state_of(int parentfd, const char *name,
				      const struct efa_ckpt_marks *m, const char **why);

/* Whether name is one NeMo gives a checkpoint: NAME--key=value... */
bool efa_ckpt_nemo_name(const char *name);

const char *efa_ckpt_state_name(enum efa_ckpt_state s);

#endif
