/* SPDX-License-Identifier: MIT */
/* The deflate walker against zlib's inflate (Z_BLOCK): on what libdeflate writes at
 * every level and zlib at every level and strategy, on every cut-short prefix, and on
 * hand-made blocks for each rule a stream can break (block type, stored length, code
 * sets over-subscribed or incomplete, zlib's one code of one bit, no end-of-block code,
 * bit length repeats, too many codes, a distance back past the start). */
#include <libdeflate.h>

#include "code/deflate_walk.h"
#include "../helpers/test-data.h"
#include "../helpers/zlib-final.h"
#include "unit.h"

static struct deflate_walk *dw;

/* The walker and zlib agree on in: both refuse it, or both find the same final block.
 * Returns the walker's answer. */
static int agree(const unsigned char *in, size_t len, uint64_t *header, uint64_t *end)
{
	uint64_t h = 0, e = 0, zh = 0, ze = 0;
	int r = deflate_walk_final(dw, in, len, &h, &e);
	int zr = zlib_final(in, len, &zh, &ze);
	bool same = r == zr && (r < 0 || (h == zh && e == ze));
	if (!same)
		printf("#   %zu bytes: walk %d (%llu, %llu), zlib %d (%llu, %llu)\n", len, r,
		       (unsigned long long)h, (unsigned long long)e, zr, (unsigned long long)zh,
		       (unsigned long long)ze);
	CHECK(same);
	*header = h;
	*end = e;
	return r;
}

/* A whole stream: walked to its last byte, and every shorter prefix refused. */
static void check_stream(const unsigned char *in, size_t len, const char *what)
{
	uint64_t h, e;
	printf("# %s: %zu bytes\n", what, len);
	CHECK_INT(agree(in, len, &h, &e), 0);
	CHECK_INT((e + 7) / 8, len);
	CHECK(h < e);
	size_t step = len > 64 ? len / 61 : 1;
	for (size_t n = 0; n < len; n += step)
		CHECK_INT(agree(in, n, &h, &e), -1);
}

static void libdeflate_levels(void)
{
	static const char *kinds[] = { "text", "noise", "zeros", "mixed" };
	size_t sizes[] = { 0, 1, 3000, 200000, 1 << 20 };
	for (int kind = 0; kind < 4; kind++)
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			size_t n = sizes[i];
			unsigned char *in = test_data(n, (enum test_data)kind);
			for (int level = 0; level <= 12; level++) {
				if (n == 1 << 20 && level % 4 != 2)
					continue;       /* every level on the smaller ones */
				struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
				CHECK(c != NULL);
				size_t cap = libdeflate_deflate_compress_bound(c, n);
				unsigned char *out = xmalloc(cap);
				size_t len = libdeflate_deflate_compress(c, in, n, out, cap);
				CHECK(len > 0);
				char what[80];
				snprintf(what, sizeof(what), "libdeflate level %d, %zu bytes of %s",
					 level, n, kinds[kind]);
				check_stream(out, len, what);
				free(out);
				libdeflate_free_compressor(c);
			}
			free(in);
		}
}

/* zlib's streams have what libdeflate's lack: blocks cut by flushes (empty stored
 * blocks), fixed codes everywhere (Z_FIXED), codes for literals only. */
static void zlib_strategies(void)
{
	static const int strategies[] = { Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE,
					  Z_FIXED };
	size_t n = 300000;
	unsigned char *in = test_data(n, DATA_MIXED);
	size_t cap = compressBound((uLong)n) + 1024;
	unsigned char *out = xmalloc(cap);
	for (int level = 0; level <= 9; level++)
		for (size_t s = 0; s < ARRAY_SIZE(strategies); s++) {
			z_stream z = { 0 };
			CHECK(deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategies[s]) == Z_OK);
			z.next_out = out;
			z.avail_out = (uInt)cap;
			z.next_in = in;
			z.avail_in = 100000;
			CHECK(deflate(&z, Z_FULL_FLUSH) == Z_OK);
			z.avail_in = (uInt)(n - 100000);
			CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
			char what[80];
			snprintf(what, sizeof(what), "zlib level %d, strategy %d", level, strategies[s]);
			check_stream(out, z.total_out, what);
			deflateEnd(&z);
		}
	free(out);
	free(in);
}

/* ---- hand-made blocks ---- */

struct bits {
	unsigned char buf[256];
	size_t n;               /* bits written */
};

/* n bits of v, the least significant first (header fields, extra bits). */
static void put(struct bits *b, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, b->n++)
		if (v >> i & 1)
			b->buf[b->n / 8] |= (unsigned char)(1u << (b->n % 8));
}

/* A Huffman code: the most significant bit first. */
static void put_code(struct bits *b, uint32_t code, unsigned len)
{
	while (len-- > 0)
		put(b, code >> len & 1, 1);
}

/* Canonical codes for lens[0..n) (RFC 1951 3.2.2). */
static void canonical(const uint8_t *lens, unsigned n, uint32_t *codes)
{
	unsigned count[16] = { 0 }, next[16] = { 0 };
	for (unsigned s = 0; s < n; s++)
		count[lens[s]]++;
	count[0] = 0;
	for (unsigned len = 1; len < 16; len++)
		next[len] = (next[len - 1] + count[len - 1]) << 1;
	for (unsigned s = 0; s < n; s++)
		if (lens[s])
			codes[s] = next[lens[s]]++;
}

/* The code length code that sends lengths 0-15 as themselves, 4 bits each (and no
 * repeats), unless cl says otherwise. */
static const uint8_t plain_cl[19] = { 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0 };

/* A final dynamic block's header up to its code length code, cl (its 19 lengths);
 * clcode: the codes. */
static void block_start(struct bits *b, unsigned nlit, unsigned ndist, const uint8_t *cl,
			uint32_t *clcode)
{
	static const uint8_t order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
					   11, 4, 12, 3, 13, 2, 14, 1, 15 };
	memset(b, 0, sizeof(*b));
	put(b, 1, 1);
	put(b, 2, 2);
	put(b, nlit - 257, 5);
	put(b, ndist - 1, 5);
	put(b, 19 - 4, 4);
	for (unsigned i = 0; i < 19; i++)
		put(b, cl[order[i]], 3);
	canonical(cl, 19, clcode);
}

/* A final dynamic block's header: nlit literal/length and ndist distance code lengths,
 * lens, each sent as itself with the code length code cl. */
static void dynamic_header(struct bits *b, const uint8_t *cl, const uint8_t *lens, unsigned nlit,
			   unsigned ndist)
{
	uint32_t clcode[19];
	block_start(b, nlit, ndist, cl, clcode);
	for (unsigned i = 0; i < nlit + ndist; i++)
		put_code(b, clcode[lens[i]], cl[lens[i]]);
}

/* A final dynamic block: codes for 'a' (1 bit), end of block and length 3 (2 bits
 * each) unless litlen says otherwise, distance codes dist[0..ndist), then 'a', and
 * with match a copy of length 3 at distance 1, then the end-of-block code. */
static void dynamic_block(struct bits *b, const uint8_t *litlen_over, const uint8_t *dist,
			  unsigned ndist, bool match)
{
	uint8_t lens[257 + 1 + 30] = { 0 };
	unsigned nlit = 258;
	lens['a'] = 1;
	lens[256] = 2;
	lens[257] = 2;
	if (litlen_over)
		memcpy(lens, litlen_over, nlit);
	memcpy(lens + nlit, dist, ndist);
	dynamic_header(b, plain_cl, lens, nlit, ndist);
	uint32_t lit[258] = { 0 }, dcode[30] = { 0 };
	canonical(lens, nlit, lit);
	canonical(lens + nlit, ndist, dcode);
	put_code(b, lit['a'], lens['a']);
	if (match) {
		put_code(b, lit[257], lens[257]);
		put_code(b, dcode[0], lens[nlit]);
	}
	put_code(b, lit[256], lens[256]);
}

static int walk_bits(const struct bits *b, uint64_t *header, uint64_t *end)
{
	return agree(b->buf, (b->n + 7) / 8, header, end);
}

static void hand_made(void)
{
	uint64_t h, e;

	/* An empty fixed block, an empty stored block, both after a non-final stored one. */
	CHECK_INT(agree((const unsigned char *)"\x03\x00", 2, &h, &e), 0);
	CHECK_INT(h, 0);
	CHECK_INT(e, 10);
	CHECK_INT(agree((const unsigned char *)"\x01\x00\x00\xff\xff", 5, &h, &e), 0);
	CHECK_INT(e, 40);
	CHECK_INT(agree((const unsigned char *)"\x00\x00\x00\xff\xff\x03\x00", 7, &h, &e), 0);
	CHECK_INT(h, 40);
	CHECK_INT(e, 50);
	/* Bytes after the final block are not looked at. */
	CHECK_INT(agree((const unsigned char *)"\x03\x00junk", 6, &h, &e), 0);
	CHECK_INT(e, 10);

	/* Block type 3; a stored length whose complement is wrong; nothing at all. */
	CHECK_INT(agree((const unsigned char *)"\x07\x00", 2, &h, &e), -1);
	CHECK_INT(agree((const unsigned char *)"\x01\x01\x00\xff\xffx", 6, &h, &e), -1);
	CHECK_INT(agree((const unsigned char *)"\x01\x01\x00\xfe\xffx", 6, &h, &e), 0);
	CHECK_INT(agree((const unsigned char *)"", 0, &h, &e), -1);

	/* Fixed codes: 'a' then a copy of 3 at distance 1 is fine; the copy first reaches
	 * back past the start. Literal/length 286 and distance 30 are not codes. */
	struct bits b = { 0 };
	put(&b, 1, 1);
	put(&b, 1, 2);
	put_code(&b, 0x30 + 'a', 8);
	put_code(&b, 1, 7);     /* 257: length 3 */
	put_code(&b, 0, 5);     /* distance 1 */
	put_code(&b, 0, 7);     /* end of block */
	CHECK_INT(walk_bits(&b, &h, &e), 0);
	CHECK_INT(e, b.n);
	memset(&b, 0, sizeof(b));
	put(&b, 1, 1);
	put(&b, 1, 2);
	put_code(&b, 1, 7);
	put_code(&b, 0, 5);
	put_code(&b, 0, 7);
	CHECK_INT(walk_bits(&b, &h, &e), -1);
	memset(&b, 0, sizeof(b));
	put(&b, 1, 1);
	put(&b, 1, 2);
	put_code(&b, 0xc0 + 286 - 280, 8);
	put_code(&b, 0, 7);
	CHECK_INT(walk_bits(&b, &h, &e), -1);
	memset(&b, 0, sizeof(b));
	put(&b, 1, 1);
	put(&b, 1, 2);
	put_code(&b, 0x30 + 'a', 8);
	put_code(&b, 1, 7);
	put_code(&b, 30, 5);
	put_code(&b, 0, 7);
	CHECK_INT(walk_bits(&b, &h, &e), -1);

	/* Dynamic codes. One distance code of one bit (incomplete, which zlib allows)... */
	static const uint8_t one_bit[1] = { 1 }, two_bits[1] = { 2 }, none[1] = { 0 };
	dynamic_block(&b, NULL, one_bit, 1, true);
	CHECK_INT(walk_bits(&b, &h, &e), 0);
	CHECK_INT(e, b.n);
	/* ... but not one of two bits; no distance codes at all do for literals only. */
	dynamic_block(&b, NULL, two_bits, 1, true);
	CHECK_INT(walk_bits(&b, &h, &e), -1);
	dynamic_block(&b, NULL, none, 1, false);
	CHECK_INT(walk_bits(&b, &h, &e), 0);
	dynamic_block(&b, NULL, none, 1, true);
	CHECK_INT(walk_bits(&b, &h, &e), -1);

	/* Cut short where zero bits read as 'a': refused, not walked for ever. */
	dynamic_block(&b, NULL, none, 1, false);
	b.n -= 2;
	b.buf[b.n / 8] &= (unsigned char)((1u << (b.n % 8)) - 1);
	CHECK_INT(walk_bits(&b, &h, &e), -1);

	/* Literal/length codes over-subscribed ('a' 0, 'b' 10, end 11, and length 3 with
	 * no room left), incomplete, without an end-of-block code. */
	uint8_t lens[258] = { 0 };
	lens['a'] = 1;
	lens['b'] = 2;
	lens[256] = 2;
	lens[257] = 2;
	dynamic_block(&b, lens, one_bit, 1, false);
	CHECK_INT(walk_bits(&b, &h, &e), -1);
	lens['b'] = 0;
	lens[257] = 0;
	lens[256] = 2;
	dynamic_block(&b, lens, one_bit, 1, false);
	CHECK_INT(walk_bits(&b, &h, &e), -1);
	lens[256] = 0;
	lens[257] = 1;
	dynamic_block(&b, lens, one_bit, 1, true);
	CHECK_INT(walk_bits(&b, &h, &e), -1);

	/* The code length code: repeating the previous length before there is one; a
	 * repeat running past the last length; over-subscribed; 287 literal/length codes. */
	static const uint8_t with_repeats[19] = { 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
						  2, 3, 3 };
	uint32_t clcode[19];
	block_start(&b, 257, 1, with_repeats, clcode);
	put_code(&b, clcode[16], 2);    /* repeat the previous length: there is none */
	put(&b, 0, 2);
	for (int i = 0; i < 40; i++)
		put_code(&b, clcode[0], 5);
	CHECK_INT(walk_bits(&b, &h, &e), -1);
	/* 97 zeros, 1 for 'a', 158 zeros, 1 for the end-of-block code, and the one distance
	 * code length as itself (fine) or as three copies of the previous one: 260 > 258
	 * lengths. */
	for (int copies = 0; copies < 2; copies++) {
		block_start(&b, 257, 1, with_repeats, clcode);
		put_code(&b, clcode[18], 3);
		put(&b, 97 - 11, 7);
		put_code(&b, clcode[1], 5);
		put_code(&b, clcode[18], 3);
		put(&b, 138 - 11, 7);
		put_code(&b, clcode[17], 3);
		put(&b, 10 - 3, 3);
		put_code(&b, clcode[17], 3);
		put(&b, 10 - 3, 3);
		put_code(&b, clcode[1], 5);
		if (copies) {
			put_code(&b, clcode[16], 2);
			put(&b, 0, 2);
		} else {
			put_code(&b, clcode[1], 5);
		}
		put_code(&b, 0, 1);     /* 'a' */
		put_code(&b, 1, 1);     /* end of block */
		CHECK_INT(walk_bits(&b, &h, &e), copies ? -1 : 0);
	}
	static const uint8_t over[19] = { 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	dynamic_header(&b, over, lens, 257, 1);
	CHECK_INT(walk_bits(&b, &h, &e), -1);
	block_start(&b, 287, 1, plain_cl, clcode);
	for (unsigned i = 0; i < 288; i++)
		put_code(&b, i == 'a' || i == 256 ? 1 : 0, 4);
	put_code(&b, 0, 1);     /* 'a' */
	put_code(&b, 1, 1);     /* end of block */
	CHECK_INT(walk_bits(&b, &h, &e), -1);
}

int main(void)
{
	dw = deflate_walk_new();
	hand_made();
	libdeflate_levels();
	zlib_strategies();
	deflate_walk_free(dw);
	return unit_done();
}
