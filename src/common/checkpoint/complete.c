/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/checkpoint/complete.h"

/* Entries of a checkpoint read to find a DCP shard: a bound, not a scan. */
#define ENTRIES_LOOKED_AT 4096
#define NAME_MAX_HERE 4096

static bool has(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
}

void efa_ckpt_marks_read(int parentfd, struct efa_ckpt_marks *m)
{
	char text[64];
	ssize_t n;
	int fd;

	memset(m, 0, sizeof(*m));
	fd = openat(parentfd, EFA_MEGATRON_TRACKER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	text[strcspn(text, " \t\r\n")] = '\0';
	if (!strcmp(text, "release")) {
		m->megatron = true;
		m->megatron_iteration = -1;
	} else {
		char *end;
		long it = strtol(text, &end, 10);

		if (end != text && !*end && it >= 0) {
			m->megatron = true;
			m->megatron_iteration = it;
		}
	}
}

/* NeMo's marker: NAME less .nemo, .ckpt and -EMA, then -unfinished. */
static bool nemo_unfinished(int parentfd, const char *name)
{
	static const char *const suffixes[] = { ".nemo", ".ckpt", "-EMA" };
	char marker[NAME_MAX_HERE];
	size_t len = strlen(name);

	if (len + sizeof("-unfinished") > sizeof(marker))
		return false;
	memcpy(marker, name, len + 1);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t s = strlen(suffixes[i]);

		if (len > s && !strcmp(marker + len - s, suffixes[i]))
			marker[len -= s] = '\0';
	}
	memcpy(marker + len, "-unfinished", sizeof("-unfinished"));
	return has(parentfd, marker);
}

/* Megatron's iter_N (seven digits as it writes them, any number read). */
static bool megatron_iteration(const char *name, long *it)
{
	char *end;

	if (strncmp(name, "iter_", 5) || name[5] < '0' || name[5] > '9')
		return false;
	*it = strtol(name + 5, &end, 10);
	return !*end;
}

static bool dcp_shards(int fd)
{
	int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	struct dirent *e;
	bool found = false;
	int looked = 0;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return false;
	}
	while (!found && looked++ < ENTRIES_LOOKED_AT && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		found = len > 7 && !strcmp(e->d_name + len - 7, ".distcp");
	}
	closedir(d);
	return found;
}

enum efa_ckpt_state efa_ckpt_state_of(int parentfd, const char *name,
				      const struct efa_ckpt_marks *m, const char **why)
{
	enum efa_ckpt_state state = EFA_CKPT_UNKNOWN;
	long it;
	int fd;

	*why = "no framework's end-of-save mark in it";
	if (nemo_unfinished(parentfd, name)) {
		*why = "its -unfinished marker is beside it (NeMo, Lightning): the save did not end";
		return EFA_CKPT_INCOMPLETE;
	}
	if (m->megatron && megatron_iteration(name, &it)) {
		if (m->megatron_iteration >= 0 && it <= m->megatron_iteration) {
			*why = EFA_MEGATRON_TRACKER " names it or a later iteration";
			return EFA_CKPT_COMPLETE;
		}
		*why = "newer than the iteration " EFA_MEGATRON_TRACKER " names";
		return EFA_CKPT_INCOMPLETE;
	}
	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return EFA_CKPT_UNKNOWN;
	if (has(fd, EFA_CKPT_COMPLETE_MARKER)) {
		*why = "the job's own " EFA_CKPT_COMPLETE_MARKER " is in it";
		state = EFA_CKPT_COMPLETE;
	} else if (!strncmp(name, "checkpoint-", 11) && has(fd, "trainer_state.json")) {
		*why = "trainer_state.json, which the Hugging Face Trainer writes last, is in it";
		state = EFA_CKPT_COMPLETE;
	} else if (!strncmp(name, "checkpoint-", 11) && has(fd, "training_args.bin")) {
		/* The Trainer's _save writes training_args.bin with the model,
		 * first: the Trainer's, begun and not ended. */
		*why = "the Hugging Face Trainer's training_args.bin without the trainer_state.json it writes last";
		state = EFA_CKPT_INCOMPLETE;
	} else if (has(fd, ".metadata")) {
		*why = ".metadata, which PyTorch Distributed Checkpoint writes last, is in it";
		state = EFA_CKPT_COMPLETE;
	} else if (dcp_shards(fd)) {
		*why = "PyTorch Distributed Checkpoint shards (.distcp) without the .metadata written last";
		state = EFA_CKPT_INCOMPLETE;
	}
	close(fd);
	return state;
}

const char *efa_ckpt_state_name(enum efa_ckpt_state s)
{
	return s == EFA_CKPT_COMPLETE ? "complete" : s == EFA_CKPT_INCOMPLETE ? "incomplete" : "unknown";
}
