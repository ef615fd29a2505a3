/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a checkpoint directory holds a whole save: by the mark each
 * training framework leaves when a save has ended, written after
 * everything else of it.
 *
 * - A marker file the job writes itself, last: EFA_CKPT_COMPLETE_MARKER
 *   inside the checkpoint directory.
 * - NeMo and Lightning (NeMo's ModelCheckpoint, UNFINISHED_CHECKPOINT_SUFFIX):
 *   a file NAME-unfinished beside the checkpoint (NAME without .nemo, .ckpt
 *   or -EMA) exists while it is being saved.
 * - Megatron-LM: latest_checkpointed_iteration.txt in the save directory
 *   (get_checkpoint_tracker_filename) names the last iteration saved
 *   whole; iter_N above it is not.
 * - Hugging Face Trainer: checkpoint-N gets trainer_state.json
 *   (TRAINER_STATE_NAME) after the model, optimizer, scheduler and RNG
 *   state (_save_checkpoint); training_args.bin (TRAINING_ARGS_NAME) comes
 *   with the model, first, and says the directory is the Trainer's.
 * - PyTorch Distributed Checkpoint (FileSystemWriter): .metadata is written
 *   by finish(), after every rank's .distcp files.
 *
 * A directory none of these speaks for is unknown: counted as complete,
 * as retention always did.
 */
#ifndef EFA_CKPT_COMPLETE_H
#define EFA_CKPT_COMPLETE_H

#include <stdbool.h>

#define EFA_CKPT_COMPLETE_MARKER ".checkpoint-complete"
#define EFA_MEGATRON_TRACKER "latest_checkpointed_iteration.txt"

enum efa_ckpt_state {
	EFA_CKPT_UNKNOWN,	/* no framework's mark to go by */
	EFA_CKPT_COMPLETE,
	EFA_CKPT_INCOMPLETE,
};

/* What the checkpoint directory (parentfd) holds for all its checkpoints. */
struct efa_ckpt_marks {
	bool megatron;		/* a Megatron-LM tracker was read */
	long megatron_iteration;	/* the iteration it names; -1: "release" */
};

/* Reads the directory-wide marks (the Megatron tracker) once. */
void efa_ckpt_marks_read(int parentfd, struct efa_ckpt_marks *m);

/*
 * The state of the checkpoint name (a directory in parentfd), with why
 * pointing at a static reason. Reads a bounded number of its entries and
 * follows no link.
 */
enum efa_ckpt_state efa_ckpt_state_of(int parentfd, const char *name,
				      const struct efa_ckpt_marks *m, const char **why);

const char *efa_ckpt_state_name(enum efa_ckpt_state s);

#endif
