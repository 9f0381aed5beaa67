/* SPDX-License-Identifier: MIT */
/* Deterministic test data for the compression tests (test-pgzip, test-deflate-walk). */
#ifndef DISPATCH_TEST_DATA_H
#define DISPATCH_TEST_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

enum test_data { DATA_TEXT, DATA_NOISE, DATA_ZEROS, DATA_MIXED };

/* n bytes (xmalloc'ed) of text-like data (ten words: compressible), noise, zeros, or
 * the three in turn every 50,000 bytes (DATA_MIXED). */
static inline unsigned char *test_data(size_t n, enum test_data kind)
{
	static const char *words[] = { "slurm ", "job ", "partition ", "gpu ", "node\n", "the ",
				       "queue ", "dispatch ", "42 ", "sbatch " };
	unsigned char *p = xmalloc(n ? n : 1);
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < n;) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		enum test_data k = kind != DATA_MIXED ? kind : (enum test_data)(i / 50000 % 3);
		if (k == DATA_NOISE)
			p[i++] = (unsigned char)x;
		else if (k == DATA_ZEROS)
			p[i++] = 0;
		else
			for (const char *w = words[x % ARRAY_SIZE(words)]; *w && i < n; w++)
				p[i++] = (unsigned char)*w;
	}
	return p;
}

#endif
