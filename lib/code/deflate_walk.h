/* SPDX-License-Identifier: MIT */
/*
 * Walking a raw deflate stream (RFC 1951) without inflating it: every Huffman code is
 * decoded, no byte is produced, no window is kept. pgzip uses it to find where the
 * final block of libdeflate's output starts, to make it non-final; zlib's inflate
 * with Z_BLOCK answered the same question at twice the cost (bench/README.md).
 *
 * The walk accepts exactly the streams zlib's inflate accepts, and stops where it
 * stops: it checks what zlib checks (block types, stored lengths, too many length or
 * distance codes, bit length repeats, over-subscribed or incomplete codes but zlib's
 * one code of one bit, the end-of-block code, invalid codes, distances back past the
 * start). Any input is safe: the time is linear in its length and nothing is
 * allocated while walking.
 */
#ifndef DISPATCH_DEFLATE_WALK_H
#define DISPATCH_DEFLATE_WALK_H

#include <stddef.h>
#include <stdint.h>

struct deflate_walk;

/* The decoding tables (about 200 KiB), reused by every walk; xmalloc'ed. */
struct deflate_walk *deflate_walk_new(void);
void deflate_walk_free(struct deflate_walk *dw);

/* Walks in[0..len) from its first block to the end of its final one. Returns 0 and
 * the bit offsets (from in's first byte, bit 0 the least significant) of the final
 * block's header and of the bit after its end-of-block code; -1 when in does not hold
 * a complete deflate stream (invalid, or cut short). Bytes after the final block are
 * not looked at. */
int deflate_walk_final(struct deflate_walk *dw, const unsigned char *in, size_t len,
		       uint64_t *final_header, uint64_t *end);

#endif
