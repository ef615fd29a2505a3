/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node's description as the node cache keeps it (nodecache.h): the
 * node (struct efa_node, closeness included when indexed), its profiles or
 * why they did not load, and what it was read from, in one versioned
 * binary file.
 *
 *   "EFANODE\0"  u32 format version  u32 0  u64 payload bytes
 *   u64 FNV-1a of the payload        payload
 *
 * Integers are in the host's byte order (the file never leaves the host);
 * strings are a u32 length and the bytes, 0xffffffff for none. Decoding
 * checks every length and count against what is left, so a corrupt or
 * truncated file is an error, never a crash.
 */
#ifndef EFA_NODEDESC_H
#define EFA_NODEDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "common/env/profile.h"
#include "common/node/node.h"

#define EFA_NODEDESC_VERSION 2	/* 2: the checksum is efa_fnv1a64_words */

enum efa_stamp_kind {
	EFA_STAMP_FILE,		/* device, inode, size, mtime, ctime */
	EFA_STAMP_LISTING,	/* the names in a directory: sysfs and procfs
				 * directories' times do not follow their entries */
};

struct efa_stamp {
	char *path;		/* as opened: under root, or absolute (profiles) */
	enum efa_stamp_kind kind;
	uint64_t v[7];		/* FILE: dev, ino, size, mtime s/ns, ctime s/ns;
				 * LISTING: names' hash, count */
};

/* What a description was read from: it holds while all of this does. */
struct efa_nodedesc_key {
	uint64_t root_dev, root_ino;	/* root= after its links */
	char *boot_id;			/* "" where root has none */
	char *instance_type;		/* efa.conf's InstanceType=, or NULL */
	char *profile_dir;
	struct efa_stamp *stamps;
	size_t nstamps;
};

struct efa_nodedesc {
	/* Decoded: the key's strings are in this one block (the node's and
	 * the profiles' in blocks of their own); NULL: each is allocated on
	 * its own. */
	char *strings;
	struct efa_nodedesc_key key;
	struct efa_node *node;
	struct efa_profiles *profiles;	/* those the node uses (nodecache.h);
					 * NULL: they did not load... */
	char *profiles_error;		/* ...and this says why */
};

/* The file's bytes (malloc'd) for desc. -1 on ENOMEM. */
int efa_nodedesc_encode(const struct efa_nodedesc *desc, char **out, size_t *len);

/* desc from a file's bytes; err says what is wrong with them. */
int efa_nodedesc_decode(const char *buf, size_t len, struct efa_nodedesc *desc,
			struct efa_error *err);

/* Frees what desc holds, node and profiles included (NULL is fine). */
void efa_nodedesc_clear(struct efa_nodedesc *desc);

#endif
