/* SPDX-License-Identifier: MIT */
/*
 * The deflate walker (lib/code/deflate_walk.c) against zlib's inflate with Z_BLOCK.
 * Aborts when they disagree on:
 *  - the input itself taken as a deflate stream (refused by both, or the same final
 *    block found);
 *  - the input's bytes after the first compressed by libdeflate at the level the
 *    first byte picks (0-12), and by zlib at the level and strategy it picks; such a
 *    stream must also be walked whole, to its last byte.
 */
#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "code/deflate_walk.h"
#include "../helpers/zlib-final.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_SIZE = 1 << 17 };

static struct deflate_walk *dw;

static void cleanup(void)
{
	deflate_walk_free(dw);
}

/* The same answer from both; returns it. */
static int same(const unsigned char *in, size_t len, uint64_t *end)
{
	uint64_t h = 0, e = 0, zh = 0, ze = 0;
	int r = deflate_walk_final(dw, in, len, &h, &e);
	if (zlib_final(in, len, &zh, &ze) != r || (r == 0 && (h != zh || e != ze)))
		abort();
	*end = e;
	return r;
}

static void whole(const unsigned char *in, size_t len)
{
	uint64_t end;
	if (same(in, len, &end) < 0 || (end + 7) / 8 != len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_SIZE)
		return 0;
	if (!dw) {
		dw = deflate_walk_new();
		atexit(cleanup);
	}
	uint64_t end;
	same(data, size, &end);
	if (size == 0)
		return 0;

	const unsigned char *in = data + 1;
	size_t n = size - 1;
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(data[0] % 13);
	size_t cap = libdeflate_deflate_compress_bound(c, n) + compressBound((uLong)n) + 64;
	unsigned char *out = malloc(cap);
	if (!c || !out)
		abort();
	whole(out, libdeflate_deflate_compress(c, in, n, out, cap));
	libdeflate_free_compressor(c);

	static const int strategies[] = { Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE,
					  Z_FIXED };
	z_stream z = { 0 };
	if (deflateInit2(&z, data[0] % 10, Z_DEFLATED, -15, 8, strategies[data[0] / 10 % 5]) != Z_OK)
		abort();
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	whole(out, z.total_out);
	deflateEnd(&z);
	free(out);
	return 0;
}
