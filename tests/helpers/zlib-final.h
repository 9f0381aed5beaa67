/* SPDX-License-Identifier: MIT */
/*
 * The reference for lib/code/deflate_walk: what zlib's inflate says about a raw
 * deflate stream when it stops at every block boundary (Z_BLOCK), its output thrown
 * away (this is how pgzip found libdeflate's final block before the walker). For the
 * unit test and the fuzz target.
 */
#ifndef DISPATCH_TEST_ZLIB_FINAL_H
#define DISPATCH_TEST_ZLIB_FINAL_H

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

/* 0 and the bit offsets of the final block's header and of its end, or -1 when
 * inflate refuses in or wants more of it. */
static inline int zlib_final(const unsigned char *in, size_t len, uint64_t *header,
			     uint64_t *end)
{
	z_stream s = { 0 };
	unsigned char out[1 << 15];
	if (inflateInit2(&s, -15) != Z_OK)
		abort();
	s.next_in = (unsigned char *)in;
	s.avail_in = (uInt)len;
	uint64_t next = 0;      /* where the block inflate reaches next starts */
	int rc = -1;
	for (;;) {
		s.next_out = out;
		s.avail_out = sizeof(out);
		if (inflate(&s, Z_BLOCK) != Z_OK)
			break;  /* refused, or wants more input: Z_BLOCK stops before the end */
		if (!(s.data_type & 128))
			continue;       /* not at a block boundary: the output was full */
		uint64_t at = (uint64_t)s.total_in * 8 - (unsigned)(s.data_type & 7);
		if (!(s.data_type & 64)) {
			next = at;
			continue;
		}
		*header = next;
		*end = at;
		rc = 0;
		break;
	}
	inflateEnd(&s);
	return rc;
}

#endif
