/* SPDX-License-Identifier: Apache-2.0 */
/*
 * FNV-1a, the one non-cryptographic hash slurm-efa uses: for the node
 * cache's keys and checksums, the compact snapshot's string table and the
 * digests of the values a step records in SLURM_EFA_SET. Inline: a step
 * hashes every variable of every task.
 */
#ifndef EFA_HASH_H
#define EFA_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EFA_FNV1A64_SEED 0xcbf29ce484222325ull
#define EFA_FNV1A32_SEED 2166136261u

/* Continues the 64-bit hash h over len bytes (h = EFA_FNV1A64_SEED to start). */
static inline uint64_t efa_fnv1a64(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/*
 * FNV-1a's step over 8-byte words (the last, shorter one zero-padded),
 * for a checksum of kilobytes read on every step (the node cache): an
 * eighth of the multiplications. Not the same value as efa_fnv1a64. Each
 * step is a bijection of h, so one changed word always changes the sum.
 */
static inline uint64_t efa_fnv1a64_words(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w ^ ((uint64_t)len << 59)) * 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t efa_fnv1a64_str(const char *s)
{
	uint64_t h = EFA_FNV1A64_SEED;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* The 32-bit hash of a string: what SLURM_EFA_SET's digests have always
 * been, so a record an earlier release wrote still reads. */
static inline uint32_t efa_fnv1a32_str(const char *s)
{
	uint32_t h = EFA_FNV1A32_SEED;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

#endif
