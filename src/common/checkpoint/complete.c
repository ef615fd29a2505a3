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
#define UNFINISHED_SUFFIX "-unfinished"
#define HF_TRAINER_STATE "trainer_state.json"

static bool has(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
}

/*
 * The first line of a small regular file in dirfd, blanks trimmed; false
 * when it is missing, a link, not a plain file, empty or too long (a
 * tracker cut off while rewritten reads as nothing).
 */
static bool read_mark(int dirfd, const char *name, char *text, size_t size)
{
	struct stat st;
	ssize_t n;
	size_t len;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (size_t)st.st_size >= size) {
		close(fd);
		return false;
	}
	n = read(fd, text, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	len = strcspn(text, "\r\n");
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	text[len] = '\0';
	return len > 0;
}

/*
 * Whether the plain file name in dirfd ends with tail: a file written
 * whole by a writer that ends it so, against one cut off mid-write.
 */
static bool file_ends_with(int dirfd, const char *name, const char *tail)
{
	size_t len = strlen(tail);
	char buf[16];
	struct stat st;
	bool whole;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	whole = len < sizeof(buf) && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		st.st_size >= (off_t)len &&
		pread(fd, buf, len, st.st_size - (off_t)len) == (ssize_t)len && !memcmp(buf, tail, len);
	close(fd);
	return whole;
}

/* "PREFIXN" with N all digits: N; else -1. */
static long numbered(const char *name, const char *prefix)
{
	size_t plen = strlen(prefix);
	char *end;
	long n;

	if (strncmp(name, prefix, plen) || name[plen] < '0' || name[plen] > '9')
		return -1;
	errno = 0;
	n = strtol(name + plen, &end, 10);
	return errno || *end ? -1 : n;
}

void efa_ckpt_marks_read(int parentfd, struct efa_ckpt_marks *m)
{
	char text[EFA_CKPT_TAG_MAX];

	memset(m, 0, sizeof(*m));
	m->deepspeed_step = -1;
	if (read_mark(parentfd, EFA_MEGATRON_TRACKER, text, sizeof(text))) {
		char *end;
		long it;

		errno = 0;
		it = strtol(text, &end, 10);
		if (!strcmp(text, "release")) {
			m->megatron = m->megatron_release = true;
		} else if (end != text && !*end && !errno && it >= 0) {
			m->megatron = true;
			m->megatron_iteration = it;
		}
	}
	/* A tag is a directory name of the save directory: one component. */
	if (read_mark(parentfd, EFA_DEEPSPEED_LATEST, text, sizeof(text)) && !strchr(text, '/') &&
	    strcmp(text, ".") && strcmp(text, "..")) {
		m->deepspeed = true;
		memcpy(m->deepspeed_tag, text, strlen(text) + 1);
		m->deepspeed_step = numbered(text, "global_step");
	}
}

/* NeMo's marker: NAME less .ckpt, then less -EMA, then -unfinished
 * (format_checkpoint_unfinished_marker_path). */
static bool nemo_unfinished(int parentfd, const char *name)
{
	char marker[NAME_MAX_HERE];
	size_t len = strlen(name);

	if (len + sizeof(UNFINISHED_SUFFIX) > sizeof(marker))
		return false;
	memcpy(marker, name, len + 1);
	if (len > 5 && !strcmp(marker + len - 5, ".ckpt"))
		marker[len -= 5] = '\0';
	if (len > 4 && !strcmp(marker + len - 4, "-EMA"))
		marker[len -= 4] = '\0';
	memcpy(marker + len, UNFINISHED_SUFFIX, sizeof(UNFINISHED_SUFFIX));
	return has(parentfd, marker);
}

bool efa_ckpt_nemo_name(const char *name)
{
	const char *sep = strstr(name, "--");

	return sep && sep != name && strchr(sep + 2, '=') != NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t len = strlen(s), slen = strlen(suffix);

	return len > slen && !strcmp(s + len - slen, suffix);
}

static bool dcp_begun(int fd)
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
	while (!found && looked++ < ENTRIES_LOOKED_AT && (e = readdir(d)))
		found = ends_with(e->d_name, ".distcp") || !strcmp(e->d_name, ".metadata.tmp");
	closedir(d);
	return found;
}

static enum efa_ckpt_state megatron_state(const char *name, const struct efa_ckpt_marks *m,
					  const char **why)
{
	long it = numbered(name, "iter_");

	if (!m->megatron) {
		*why = "a Megatron-LM iteration without a readable " EFA_MEGATRON_TRACKER ", which Megatron rewrites after each whole save";
		return EFA_CKPT_UNKNOWN;
	}
	if (m->megatron_release) {
		*why = EFA_MEGATRON_TRACKER " says release: it names no iteration";
		return EFA_CKPT_UNKNOWN;
	}
	if (it <= m->megatron_iteration) {
		*why = EFA_MEGATRON_TRACKER " names it or a later iteration";
		return EFA_CKPT_COMPLETE;
	}
	*why = "newer than the iteration " EFA_MEGATRON_TRACKER " names: its save did not end";
	return EFA_CKPT_INCOMPLETE;
}

static enum efa_ckpt_state deepspeed_state(const char *name, const struct efa_ckpt_marks *m,
					   const char **why)
{
	long step = numbered(name, "global_step");

	if (m->deepspeed && !strcmp(name, m->deepspeed_tag)) {
		*why = "DeepSpeed's " EFA_DEEPSPEED_LATEST ", written after every rank saved, names it";
		return EFA_CKPT_COMPLETE;
	}
	if (!m->deepspeed || step < 0 || m->deepspeed_step < 0) {
		*why = "a DeepSpeed tag that no readable " EFA_DEEPSPEED_LATEST " orders";
		return EFA_CKPT_UNKNOWN;
	}
	if (step < m->deepspeed_step) {
		*why = "older than the step DeepSpeed's " EFA_DEEPSPEED_LATEST " names";
		return EFA_CKPT_COMPLETE;
	}
	*why = "newer than the step DeepSpeed's " EFA_DEEPSPEED_LATEST " names: its save did not end";
	return EFA_CKPT_INCOMPLETE;
}

/* The rules that look inside the checkpoint (fd). */
static enum efa_ckpt_state inside_state(int fd, const char *name, const char **why)
{
	if (numbered(name, "checkpoint-") >= 0) {
		/* TrainerState.save_to_json: json.dumps(indent=2) + "\n" in
		 * one write; only the outermost object closes at column 0. */
		if (file_ends_with(fd, HF_TRAINER_STATE, "\n}\n")) {
			*why = HF_TRAINER_STATE ", which the Hugging Face Trainer writes last, is in it whole";
			return EFA_CKPT_COMPLETE;
		}
		*why = has(fd, HF_TRAINER_STATE) ?
		       "a Hugging Face Trainer checkpoint whose " HF_TRAINER_STATE " was cut off" :
		       "a Hugging Face Trainer checkpoint without the " HF_TRAINER_STATE " it writes last";
		return EFA_CKPT_INCOMPLETE;
	}
	if (has(fd, ".metadata")) {
		*why = ".metadata, which PyTorch Distributed Checkpoint writes last, is in it";
		return EFA_CKPT_COMPLETE;
	}
	if (dcp_begun(fd)) {
		*why = "PyTorch Distributed Checkpoint shards without the .metadata written last";
		return EFA_CKPT_INCOMPLETE;
	}
	if (efa_ckpt_nemo_name(name)) {
		*why = "named as NeMo names them, and NeMo's -unfinished marker is not beside it";
		return EFA_CKPT_COMPLETE;
	}
	*why = "no framework's end-of-save mark in it";
	return EFA_CKPT_UNKNOWN;
}

enum efa_ckpt_state efa_ckpt_state_of(int parentfd, const char *name,
				      const struct efa_ckpt_marks *m, const char **why)
{
	enum efa_ckpt_state state;
	int fd;

	*why = "no framework's end-of-save mark in it";
	if (nemo_unfinished(parentfd, name)) {
		*why = "its -unfinished marker is beside it (NeMo): the save did not end";
		return EFA_CKPT_INCOMPLETE;
	}
	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*why = "it cannot be opened";
		return EFA_CKPT_UNKNOWN;
	}
	if (has(fd, EFA_CKPT_COMPLETE_MARKER)) {
		*why = "the job's own " EFA_CKPT_COMPLETE_MARKER " is in it";
		state = EFA_CKPT_COMPLETE;
	} else if (numbered(name, "iter_") >= 0) {
		state = megatron_state(name, m, why);
	} else if ((m->deepspeed && !strcmp(name, m->deepspeed_tag)) ||
		   numbered(name, "global_step") >= 0) {
		state = deepspeed_state(name, m, why);
	} else {
		state = inside_state(fd, name, why);
	}
	close(fd);
	return state;
}

const char *efa_ckpt_state_name(enum efa_ckpt_state s)
{
	return s == EFA_CKPT_COMPLETE ? "complete" : s == EFA_CKPT_INCOMPLETE ? "incomplete" : "unknown";
}
