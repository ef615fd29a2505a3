/* SPDX-License-Identifier: Apache-2.0 */
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

/* A complete checkpoint (a test of other states sets them). */
#define E(n, s, ns, link) { .name = (char *)(n), .mtime = { (s), (ns) }, .is_link = (link), \
			    .is_dir = !(link), .state = EFA_CKPT_COMPLETE }
#define COUNT(v) (sizeof(v) / sizeof((v)[0]))

/* The names select marked, in array order: "a,b". */
static const char *selected(struct efa_retention_entry *v, size_t n, long keep)
{
	static char out[512];

	out[0] = '\0';
	efa_retention_select(v, n, keep);
	for (size_t i = 0; i < n; i++)
		if (v[i].remove)
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
				 out[0] ? "," : "", v[i].name);
	return out;
}

static void test_match(void)
{
	static const char *const yes[] = {
		"checkpoint-100", "checkpoint_5", "step-3", "step_3", "global_step500",
		"iter_0000100", "checkpoint-",
		"llama--val_loss=1.95-step=199-consumed_samples=1600.0",
		"megatron_gpt--val_loss=2.3100-epoch=0-last",
	};
	static const char *const no[] = {
		"checkpoint", "latest", "mystep_1", "Checkpoint-1", "iter-5", "model.pt",
		"latest_checkpointed_iteration.txt", ".checkpoint-1",
		"--val_loss=1", "run--notes", "llama-val_loss=1.95",
	};

	for (size_t i = 0; i < COUNT(yes); i++)
		ok(efa_retention_match(yes[i]), "'%s' is a checkpoint", yes[i]);
	for (size_t i = 0; i < COUNT(no); i++)
		ok(!efa_retention_match(no[i]), "'%s' is not", no[i]);
}

static void test_select(void)
{
	struct efa_retention_entry six[] = {
		E("checkpoint-4", 400, 0, false), E("checkpoint-1", 100, 0, false),
		E("checkpoint-6", 600, 0, false), E("checkpoint-2", 200, 0, false),
		E("checkpoint-5", 500, 0, false), E("checkpoint-3", 300, 0, false),
	};
	struct efa_retention_entry ties[] = {
		E("step_10", 100, 0, false), E("step_9", 100, 0, false),
		E("step_100", 100, 0, false), E("step_8", 99, 999999999, false),
	};
	struct efa_retention_entry nsec[] = {
		E("checkpoint-b", 100, 5, false), E("checkpoint-a", 100, 7, false),
	};
	struct efa_retention_entry steps[] = {
		E("checkpoint-100", 900, 0, false), E("checkpoint-200", 100, 0, false),
		E("checkpoint-300", 50, 0, false),
	};
	struct efa_retention_entry mixed[] = {
		E("notes.txt", 1, 0, false), E("latest", 2, 0, false),
		E("global_step1", 10, 0, false), E("global_step2", 20, 0, false),
		E("model.pt", 3, 0, false),
	};
	struct efa_retention_entry files[] = {
		E("checkpoint_notes.txt", 1, 0, false), E("step_log.txt", 2, 0, false),
		E("checkpoint-1", 100, 0, false), E("checkpoint-2", 200, 0, false),
	};
	struct efa_retention_entry links[] = {
		E("checkpoint-latest", 900, 0, true), E("checkpoint-old", 1, 0, true),
		E("checkpoint-1", 100, 0, false), E("checkpoint-2", 200, 0, false),
		E("checkpoint-3", 300, 0, false),
	};

	is_str(selected(six, COUNT(six), 3), "checkpoint-1,checkpoint-2,checkpoint-3",
	       "keep 3 of 6: the 3 oldest go, by modification time");
	is_int(efa_retention_select(six, COUNT(six), 3), 3, "  select says how many");
	is_str(selected(six, COUNT(six), 5), "checkpoint-1", "keep 5 of 6: the oldest goes");
	is_str(selected(six, COUNT(six), 6), "", "keep 6 of 6: nothing goes");
	is_str(selected(six, COUNT(six), 100), "", "keep more than there are: nothing goes");
	is_str(selected(six, COUNT(six), 0), "", "keep 0: nothing goes (retention off)");
	is_str(selected(six, COUNT(six), -1), "", "keep unset: nothing goes");
	is_str(selected(six, 0, 3), "", "an empty directory");
	is_str(selected(ties, COUNT(ties), 1), "step_10,step_9,step_8",
	       "equal times: the later name in version order is newer (step_100 > step_10 > step_9)");
	is_str(selected(ties, COUNT(ties), 2), "step_9,step_8", "  keep 2 of the tie");
	is_str(selected(nsec, COUNT(nsec), 1), "checkpoint-b", "nanoseconds count before names");
	is_str(selected(steps, COUNT(steps), 1), "checkpoint-100,checkpoint-200",
	       "names carrying steps: the highest step is newest, whatever the times (a rotation cut off touches the older one)");
	is_str(selected(mixed, COUNT(mixed), 1), "global_step1",
	       "names that do not match are neither counted nor deleted");
	is_str(selected(mixed, COUNT(mixed), 2), "", "  two checkpoints, keep 2: nothing goes");
	files[0].is_dir = files[1].is_dir = false;
	is_str(selected(files, COUNT(files), 1), "checkpoint-1",
	       "files named like checkpoints (checkpoint_notes.txt, step_log.txt) are neither counted nor deleted");
	is_str(selected(links, COUNT(links), 2), "checkpoint-1",
	       "links are neither counted nor deleted, even when oldest or newest");
}

static int write_file(const char *rel, const char *text)
{
	int fd = open(tmp_at(rel), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	return close(fd) || n != (ssize_t)strlen(text) ? -1 : 0;
}

static int make_file(const char *rel)
{
	return write_file(rel, "");
}

/* The mtime of tmp_at(rel) itself (not of a link's target). */
static int age(const char *rel, long sec)
{
	struct timespec t[2] = { { sec, 0 }, { sec, 0 } };

	return utimensat(AT_FDCWD, tmp_at(rel), t, AT_SYMLINK_NOFOLLOW);
}

static bool exists(const char *rel)
{
	struct stat st;

	return !lstat(tmp_at(rel), &st);
}

struct report {
	char removed[512];
	char errors[512];
};

static void collect(void *ctx, const char *name, const char *error)
{
	struct report *r = ctx;
	char *to = error ? r->errors : r->removed;

	snprintf(to + strlen(to), 512 - strlen(to), "%s%s", to[0] ? "," : "", error ? error : name);
}

static void test_apply(void)
{
	static const char *const kept[] = {
		"d/checkpoint_2", "d/checkpoint-4", "d/checkpoint-5", "d/global_step6", "d/notes.txt",
		"d/checkpoint-latest", "d/iter_0", "outside/keep.txt", "outside/deep", "d/step_0",
	};
	static const char *const oldest_first[] = {
		"d/checkpoint-1", "d/checkpoint_2", "d/step_3", "d/checkpoint-4",
		"d/checkpoint-5", "d/global_step6",
	};
	struct report r = { "", "" };
	struct efa_error err = { 0 };
	char deep[512];
	int fd;

	tmp_setup(mkdir(tmp_at("d"), 0700), "mkdir d");
	tmp_setup(mkdir(tmp_at("outside"), 0700), "mkdir outside");
	tmp_setup(mkdir(tmp_at("outside/deep"), 0700), "mkdir outside/deep");
	tmp_setup(make_file("outside/keep.txt"), "outside/keep.txt");
	/* checkpoint-1: a tree holding links out of it. */
	tmp_setup(mkdir(tmp_at("d/checkpoint-1"), 0700), "mkdir d/checkpoint-1");
	tmp_setup(mkdir(tmp_at("d/checkpoint-1/shard"), 0700), "mkdir d/checkpoint-1/shard");
	tmp_setup(make_file("d/checkpoint-1/shard/rank0.pt"), "d/checkpoint-1/shard/rank0.pt");
	tmp_setup(symlink(tmp_at("outside"), tmp_at("d/checkpoint-1/escape")), "link d/checkpoint-1/escape -> outside");
	tmp_setup(symlink(tmp_at("outside/keep.txt"), tmp_at("d/checkpoint-1/shard/file")),
	      "link d/checkpoint-1/shard/file -> outside/keep.txt");
	tmp_setup(make_file("d/checkpoint_2"), "a file d/checkpoint_2");
	tmp_setup(make_file("d/checkpoint-1/" EFA_CKPT_COMPLETE_MARKER), "d/checkpoint-1 marked complete");
	tmp_setup(mkdir(tmp_at("d/step_3"), 0700) || make_file("d/step_3/" EFA_CKPT_COMPLETE_MARKER),
		  "d/step_3, complete");
	tmp_setup(mkdir(tmp_at("d/checkpoint-4"), 0700) ||
		  make_file("d/checkpoint-4/" EFA_CKPT_COMPLETE_MARKER), "d/checkpoint-4, complete");
	tmp_setup(make_file("d/checkpoint-5"), "a file d/checkpoint-5");
	tmp_setup(mkdir(tmp_at("d/global_step6"), 0700) ||
		  make_file("d/global_step6/" EFA_CKPT_COMPLETE_MARKER), "d/global_step6, complete");
	tmp_setup(mkdir(tmp_at("d/step_0"), 0700), "d/step_0, which no mark speaks for");
	tmp_setup(make_file("d/notes.txt"), "d/notes.txt");
	tmp_setup(symlink("checkpoint-5", tmp_at("d/checkpoint-latest")), "link d/checkpoint-latest");
	tmp_setup(symlink(tmp_at("outside"), tmp_at("d/iter_0")), "link d/iter_0 -> outside");
	for (size_t i = 0; i < COUNT(oldest_first); i++)
		tmp_setup(age(oldest_first[i], 1000 * (long)(i + 1)), oldest_first[i]);
	tmp_setup(age("d/notes.txt", 1), "d/notes.txt is oldest");
	tmp_setup(age("d/checkpoint-latest", 2), "the links are older than every checkpoint");
	tmp_setup(age("d/iter_0", 3), "d/iter_0 too");

	fd = open(tmp_at("d"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(efa_retention_apply(fd, 3, collect, &r, &err) == 0, "retention keeps 3 (%s)", err.msg);
	is_str(r.errors, "", "  without errors");
	is_str(r.removed, "checkpoint-1",
	       "  reports the oldest of the 4 checkpoint directories removed, files named like checkpoints not counted");
	ok(!exists("d/checkpoint-1"), "  and it is gone, a directory tree with all it held");
	for (size_t i = 0; i < COUNT(kept); i++)
		ok(exists(kept[i]), "  %s is still there", kept[i]);

	r.removed[0] = '\0';
	ok(efa_retention_apply(fd, 3, collect, &r, &err) == 0 && !r.removed[0],
	   "run again with 3 left: nothing goes");
	ok(efa_retention_remove(fd, "checkpoint-latest", &err) == -1, "a name that is now a link is not removed");
	has_str(err.msg, "checkpoint-latest became a symbolic link: left alone", "  and said so");
	ok(exists("d/checkpoint-latest"), "  the link is still there");
	ok(efa_retention_remove(fd, "checkpoint-5", &err) == -1, "a file is not removed, whatever its name");
	has_str(err.msg, "checkpoint-5 is not a directory: left alone", "  and said so");
	ok(exists("d/checkpoint-5"), "  the file is still there");

	/* A tree deeper than the removal follows. */
	snprintf(deep, sizeof(deep), "d/checkpoint-4");
	for (int i = 0; i < 70 && strlen(deep) + 3 < sizeof(deep); i++) {
		strcat(deep, "/x");
		if (mkdir(tmp_at(deep), 0700))
			break;
	}
	ok(efa_retention_remove(fd, "checkpoint-4", &err) == -1, "a tree nested too deep is refused");
	has_str(err.msg, "nested more than 64 directories deep", "  and said so");
	close(fd);
}

/*
 * Completeness: each framework's end-of-save mark, read from the
 * directory (complete.h); retention counts only what is whole.
 */
static void test_complete(void)
{
	struct efa_ckpt_marks marks;
	const char *why;
	int fd;

	tmp_setup(mkdir(tmp_at("c"), 0700), "mkdir c");
	/* Hugging Face: trainer_state.json is written last. */
	tmp_setup(mkdir(tmp_at("c/checkpoint-100"), 0700) || make_file("c/checkpoint-100/training_args.bin") ||
		  write_file("c/checkpoint-100/trainer_state.json", "{\n  \"global_step\": 100\n}\n"),
		  "a whole Trainer checkpoint");
	tmp_setup(mkdir(tmp_at("c/checkpoint-150"), 0700) ||
		  write_file("c/checkpoint-150/trainer_state.json", "{\n  \"global_step\": 150,\n  \"log"),
		  "a Trainer checkpoint whose trainer_state.json was cut off");
	tmp_setup(mkdir(tmp_at("c/checkpoint-200"), 0700) || make_file("c/checkpoint-200/training_args.bin"),
		  "a Trainer checkpoint cut off before trainer_state.json");
	tmp_setup(mkdir(tmp_at("c/checkpoint-300"), 0700), "an empty checkpoint-N: the Trainer's, just made");
	tmp_setup(mkdir(tmp_at("c/step_9"), 0700) || make_file("c/step_9/model.pt"),
		  "a directory of no known framework");
	/* PyTorch DCP: .metadata after the shards. */
	tmp_setup(mkdir(tmp_at("c/step-1"), 0700) || make_file("c/step-1/__0_0.distcp") ||
		  make_file("c/step-1/.metadata"), "a whole DCP checkpoint");
	tmp_setup(mkdir(tmp_at("c/step-2"), 0700) || make_file("c/step-2/__0_0.distcp"),
		  "DCP shards without .metadata");
	/* NeMo: NAME-unfinished beside it while saving. */
	tmp_setup(mkdir(tmp_at("c/step_3"), 0700) || make_file("c/step_3-unfinished"),
		  "a checkpoint with its -unfinished marker");
	/* The job's own marker. */
	tmp_setup(mkdir(tmp_at("c/step_4"), 0700) || make_file("c/step_4/" EFA_CKPT_COMPLETE_MARKER),
		  "a checkpoint the job marked complete");
	/* Megatron: the tracker names the last whole iteration. */
	tmp_setup(mkdir(tmp_at("c/iter_0000100"), 0700) || mkdir(tmp_at("c/iter_0000200"), 0700),
		  "two Megatron iterations");
	{
		FILE *f = fopen(tmp_at("c/" EFA_MEGATRON_TRACKER), "w");

		tmp_setup(!f || fputs("100\n", f) < 0 || fclose(f), "the tracker naming 100");
	}
	fd = open(tmp_at("c"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	efa_ckpt_marks_read(fd, &marks);
	ok(marks.megatron && marks.megatron_iteration == 100, "the Megatron tracker is read");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "checkpoint-100", &marks, &why)), "complete",
	       "Trainer: trainer_state.json there: complete");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "checkpoint-150", &marks, &why)), "incomplete",
	       "Trainer: trainer_state.json cut off: incomplete");
	has_str(why, "cut off", "  saying why");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "checkpoint-200", &marks, &why)), "incomplete",
	       "Trainer: training_args.bin without trainer_state.json: incomplete");
	has_str(why, "trainer_state.json", "  saying why");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "checkpoint-300", &marks, &why)), "incomplete",
	       "Trainer: checkpoint-N just made, nothing in it yet: incomplete");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "step_9", &marks, &why)), "unknown",
	       "no framework's files: unknown");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "step-1", &marks, &why)), "complete",
	       "DCP: .metadata there: complete");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "step-2", &marks, &why)), "incomplete",
	       "DCP: shards without .metadata: incomplete");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "step_3", &marks, &why)), "incomplete",
	       "NeMo: NAME-unfinished beside it: incomplete");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "step_4", &marks, &why)), "complete",
	       "the job's " EFA_CKPT_COMPLETE_MARKER ": complete");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "iter_0000100", &marks, &why)), "complete",
	       "Megatron: the tracker's iteration: complete");
	is_str(efa_ckpt_state_name(efa_ckpt_state_of(fd, "iter_0000200", &marks, &why)), "incomplete",
	       "Megatron: an iteration past the tracker's: incomplete");
	close(fd);
}

/* keep counts only complete checkpoints; an incomplete newest one stays. */
static void test_select_complete(void)
{
	struct efa_retention_entry v[] = {
		E("checkpoint-100", 100, 0, false), E("checkpoint-200", 200, 0, false),
		E("checkpoint-300", 300, 0, false), E("checkpoint-400", 400, 0, false),
	};
	struct efa_retention_entry w[] = {
		E("step-1", 100, 0, false), E("step-2", 200, 0, false),
	};

	v[0].state = EFA_CKPT_COMPLETE;
	v[1].state = EFA_CKPT_INCOMPLETE;	/* a save that died */
	v[2].state = EFA_CKPT_COMPLETE;
	v[3].state = EFA_CKPT_INCOMPLETE;	/* being written now */
	is_str(selected(v, COUNT(v), 1), "checkpoint-100,checkpoint-200",
	       "keep 1: the newest complete one stays, so does the newer incomplete one; the older go");
	is_str(selected(v, COUNT(v), 2), "checkpoint-200",
	       "keep 2: both complete ones stay; the incomplete one older than the newest complete goes");
	is_str(efa_retention_newest(v, COUNT(v))->name, "checkpoint-300",
	       "resume from the newest complete one, not the newer incomplete one");
	w[0].state = EFA_CKPT_INCOMPLETE;
	w[1].state = EFA_CKPT_INCOMPLETE;
	is_str(selected(w, COUNT(w), 1), "", "nothing complete: nothing is deleted");
	ok(efa_retention_newest(w, COUNT(w)) == NULL, "nothing complete: nothing to resume from");
	w[0].state = EFA_CKPT_UNKNOWN;
	w[1].state = EFA_CKPT_COMPLETE;
	is_str(efa_retention_newest(w, COUNT(w))->name, "step-2", "the complete one is resumed from");
	w[0].mtime.tv_sec = 900;
	w[0].name = "step-9";
	is_str(efa_retention_newest(w, COUNT(w))->name, "step-2",
	       "a newer checkpoint no mark speaks for is never resumed from");
	is_str(selected(w, COUNT(w), 1), "", "  nor counted by keep, nor deleted");
	w[0].mtime.tv_sec = 1;
	w[0].name = "step-1";
	is_str(selected(w, COUNT(w), 1), "", "an older one no mark speaks for is never deleted either");
	v[3].mtime.tv_sec = 250;	/* incomplete: newer by step, older by time */
	is_str(selected(v, COUNT(v), 1), "checkpoint-100,checkpoint-200",
	       "an incomplete checkpoint newer by step but older by time may still be written: kept");
	v[1].mtime.tv_sec = 350;	/* incomplete: older by step, newer by time */
	is_str(selected(v, COUNT(v), 1), "checkpoint-100",
	       "  so is one older by step but newer by time");
	w[1].is_link = true;
	ok(efa_retention_newest(w, COUNT(w)) == NULL, "a link is never resumed from");
}

int main(void)
{
	test_match();
	test_select();
	test_select_complete();
	if (tmp_open())
		return done_testing();
	test_apply();
	test_complete();
	tmp_close();
	return done_testing();
}
