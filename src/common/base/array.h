/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arrays that grow one element at a time: a directory's entries, EC2's
 * instances, a topology's blocks (thousands of each). Their capacity is
 * their length rounded up to a power of two, so it needs no field of its
 * own, and reaching n elements moves the array log2(n) times, not n.
 */
#ifndef EFA_ARRAY_H
#define EFA_ARRAY_H

#include <stdint.h>
#include <stdlib.h>

/*
 * Makes room for element n (counting from 0) of the array at *arrayp
 * (elements of size bytes; NULL while empty), which only ever grows
 * through this call. 0, or -1 on ENOMEM with the array as it was.
 */
static inline int efa_array_room(void *arrayp, size_t n, size_t size)
{
	void **array = arrayp;
	size_t cap = n ? 2 * n : 1;
	void *grown;

	if (n & (n - 1))
		return 0;	/* not a power of two: there is room already */
	if (cap > SIZE_MAX / size || !(grown = realloc(*array, cap * size)))
		return -1;
	*array = grown;
	return 0;
}

#endif
