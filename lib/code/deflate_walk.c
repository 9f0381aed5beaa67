/* SPDX-License-Identifier: MIT */
/*
 * Walking a deflate stream (see deflate_walk.h). A code is looked up in a table
 * indexed by the next PRIMARY bits of the stream (codes are stored bit-reversed, so
 * the low bits come first); a code longer than that goes on in a subtable indexed by
 * the bits after them. An entry says how long the code is, what it stands for and how
 * many extra bits follow; a 64-bit buffer holds a whole length and distance pair (at
 * most 15 + 5 + 15 + 13 bits) and the next code after it.
 */
#include <string.h>

#include "code/deflate_walk.h"
#include "base/util.h"

#define PRIMARY 10
#define MAXBITS 15
/* Subtables: at most one per symbol whose code is longer than PRIMARY, of at most
 * 2^(MAXBITS - PRIMARY) entries each. */
#define TABLE_SIZE ((1 << PRIMARY) + 288 * (1 << (MAXBITS - PRIMARY)))

/* An entry: the code's length (bits 0-3), its kind (4-7), the extra bits after it
 * (8-11) and a value (16-31): a length or distance base, a code length, or where a
 * subtable starts. */
enum kind { K_BAD, K_LIT, K_END, K_LEN, K_DIST, K_SUB };
#define ENTRY(kind, extra, value) ((uint32_t)(kind) << 4 | (uint32_t)(extra) << 8 | (uint32_t)(value) << 16)
#define E_BITS(e) ((e) & 15)
#define E_KIND(e) ((e) >> 4 & 15)
#define E_EXTRA(e) ((e) >> 8 & 15)
#define E_VALUE(e) ((e) >> 16)

struct table {
	unsigned sub_bits;      /* longest code - PRIMARY, or 0 */
	uint32_t e[TABLE_SIZE];
};

struct deflate_walk {
	uint32_t litlen_sym[288], dist_sym[32], codelen_sym[19];
	struct table fixed_litlen, fixed_dist, litlen, dist, codelen;
};

struct reader {
	const unsigned char *in;
	size_t len;
	uint64_t pos, end;      /* in bits; pos may pass end, which is then an error */
};

/* The 64 bits from byte pos / 8 on, shifted down by pos % 8 (so at least 57 of them
 * are the stream's), zeros past the end. */
static inline uint64_t peek_at(const struct reader *r, uint64_t pos)
{
	size_t i = (size_t)(pos >> 3);
	uint64_t w = 0;
	if (i + 8 <= r->len) {
		const unsigned char *p = r->in + i;
		w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
		    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
		    (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
	} else {
		for (unsigned k = 0; k < 8 && i + k < r->len; k++)
			w |= (uint64_t)r->in[i + k] << (8 * k);
	}
	return w >> (pos & 7);
}

static inline uint64_t peek(const struct reader *r)
{
	return peek_at(r, r->pos);
}

static inline uint32_t lookup(const struct table *t, uint64_t w)
{
	uint32_t e = t->e[w & ((1u << PRIMARY) - 1)];
	if (E_KIND(e) == K_SUB)
		e = t->e[E_VALUE(e) + ((w >> PRIMARY) & ((1u << t->sub_bits) - 1))];
	return e;
}

static unsigned reverse(unsigned code, unsigned bits)
{
	unsigned r = 0;
	for (unsigned i = 0; i < bits; i++, code >>= 1)
		r = r << 1 | (code & 1);
	return r;
}

/* Fills t for the code lengths lens[0..n), symbol s's entry from sym[s]. -1 for what
 * zlib's inflate_table refuses: over-subscribed lengths, or incomplete ones unless
 * they are a single code of one bit (never for the code length code, codelen). A set
 * of no codes at all is taken: every lookup fails. (zlib reads every length as 0 with
 * such a code length code, and then fails at the missing end-of-block code.) */
static int build(struct table *t, const uint8_t *lens, unsigned n, const uint32_t *sym,
		 bool codelen)
{
	unsigned count[MAXBITS + 1] = { 0 }, next[MAXBITS + 1];
	for (unsigned s = 0; s < n; s++)
		count[lens[s]]++;
	int left = 1;
	unsigned max = 0;
	for (unsigned len = 1; len <= MAXBITS; len++) {
		left = 2 * left - (int)count[len];
		if (left < 0)
			return -1;
		if (count[len])
			max = len;
	}
	if (left > 0 && max != 0 && (codelen || max != 1))
		return -1;

	for (unsigned i = 0; i < 1u << PRIMARY; i++)
		t->e[i] = ENTRY(K_BAD, 0, 0);
	t->sub_bits = max > PRIMARY ? max - PRIMARY : 0;
	unsigned free_at = 1u << PRIMARY;
	next[1] = 0;
	for (unsigned len = 1; len < MAXBITS; len++)
		next[len + 1] = (next[len] + count[len]) << 1;
	for (unsigned s = 0; s < n; s++) {
		unsigned len = lens[s];
		if (len == 0)
			continue;
		unsigned code = reverse(next[len]++, len);
		uint32_t e = sym[s] | len;
		if (len <= PRIMARY) {
			for (unsigned i = code; i < 1u << PRIMARY; i += 1u << len)
				t->e[i] = e;
			continue;
		}
		uint32_t *head = &t->e[code & ((1u << PRIMARY) - 1)];
		if (E_KIND(*head) != K_SUB) {
			*head = ENTRY(K_SUB, 0, free_at);
			for (unsigned i = 0; i < 1u << t->sub_bits; i++)
				t->e[free_at + i] = ENTRY(K_BAD, 0, 0);
			free_at += 1u << t->sub_bits;
		}
		for (unsigned i = code >> PRIMARY; i < 1u << t->sub_bits; i += 1u << (len - PRIMARY))
			t->e[E_VALUE(*head) + i] = e;
	}
	return 0;
}

struct deflate_walk *deflate_walk_new(void)
{
	static const uint16_t len_base[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
					       31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
					       227, 258 };
	static const uint16_t dist_base[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97,
						129, 193, 257, 385, 513, 769, 1025, 1537, 2049,
						3073, 4097, 6145, 8193, 12289, 16385, 24577 };
	struct deflate_walk *dw = xcalloc(1, sizeof(*dw));
	for (unsigned s = 0; s < 288; s++) {
		unsigned i = s - 257;
		dw->litlen_sym[s] = s < 256   ? ENTRY(K_LIT, 0, 0)
				    : s == 256 ? ENTRY(K_END, 0, 0)
				    : s < 286  ? ENTRY(K_LEN, i >= 8 && i < 28 ? i / 4 - 1 : 0,
						       len_base[i])
					       : ENTRY(K_BAD, 0, 0);
	}
	for (unsigned s = 0; s < 32; s++)
		dw->dist_sym[s] = s < 30 ? ENTRY(K_DIST, s >= 4 ? s / 2 - 1 : 0, dist_base[s])
					 : ENTRY(K_BAD, 0, 0);
	for (unsigned s = 0; s < 19; s++)
		dw->codelen_sym[s] = ENTRY(K_LIT, 0, s);

	uint8_t lens[288];
	memset(lens, 8, 144);
	memset(lens + 144, 9, 112);
	memset(lens + 256, 7, 24);
	memset(lens + 280, 8, 8);
	build(&dw->fixed_litlen, lens, 288, dw->litlen_sym, false);
	memset(lens, 5, 32);
	build(&dw->fixed_dist, lens, 32, dw->dist_sym, false);
	return dw;
}

void deflate_walk_free(struct deflate_walk *dw)
{
	free(dw);
}

/* A stored block, from after its 3 header bits: *out grows by its length. (Here and
 * in the header, a block cut short reads zeros and goes on; the caller finds it out.) */
static int stored(struct reader *r, uint64_t *out)
{
	r->pos = (r->pos + 7) & ~(uint64_t)7;
	uint64_t w = peek(r);
	unsigned n = w & 0xffff, check = (w >> 16) & 0xffff;
	if (n != (~check & 0xffff))
		return -1;
	r->pos += 32 + 8 * (uint64_t)n;
	*out += n;
	return 0;
}

/* A dynamic block's header: the code length code, then the literal/length and distance
 * code lengths it codes, into dw->litlen and dw->dist. */
static int dynamic_header(struct deflate_walk *dw, struct reader *r)
{
	static const uint8_t order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
					   11, 4, 12, 3, 13, 2, 14, 1, 15 };
	uint64_t w = peek(r);
	unsigned nlit = (w & 31) + 257, ndist = (w >> 5 & 31) + 1, ncode = (w >> 10 & 15) + 4;
	r->pos += 14;
	if (nlit > 286 || ndist > 30)
		return -1;
	uint8_t lens[286 + 30] = { 0 };
	w = peek(r);            /* 19 lengths of 3 bits: 57 bits */
	for (unsigned i = 0; i < ncode; i++)
		lens[order[i]] = (uint8_t)(w >> (3 * i) & 7);
	r->pos += 3 * ncode;
	if (build(&dw->codelen, lens, 19, dw->codelen_sym, true) < 0)
		return -1;

	unsigned have = 0, total = nlit + ndist;
	while (have < total) {
		w = peek(r);
		uint32_t e = lookup(&dw->codelen, w);
		unsigned n = E_BITS(e), sym = E_VALUE(e), repeat, value = 0;
		if (E_KIND(e) == K_BAD)
			return -1;
		if (sym < 16) {
			repeat = 1;
			value = sym;
		} else if (sym == 16) {
			if (have == 0)
				return -1;
			value = lens[have - 1];
			repeat = 3 + (w >> n & 3);
			n += 2;
		} else if (sym == 17) {
			repeat = 3 + (w >> n & 7);
			n += 3;
		} else {
			repeat = 11 + (w >> n & 127);
			n += 7;
		}
		r->pos += n;
		if (repeat > total - have)
			return -1;
		memset(lens + have, (int)value, repeat);
		have += repeat;
	}
	if (lens[256] == 0)
		return -1;      /* no end-of-block code */
	if (build(&dw->litlen, lens, nlit, dw->litlen_sym, false) < 0 ||
	    build(&dw->dist, lens + nlit, ndist, dw->dist_sym, false) < 0)
		return -1;
	return 0;
}

/* A bit buffer for walk_codes: bits holds the stream from bit next * 8 - have on, all
 * 64 of its bits (zeros past the end), have of them counted. */
struct bitbuf {
	uint64_t bits;
	unsigned have;
	size_t next;            /* the byte after the last one counted */
};

/* Tops the buffer up to at least 56 counted bits (libdeflate's refill: the load lands
 * at bit have; the bytes that do not fit whole are loaded again next time). */
static inline void refill(const struct reader *r, struct bitbuf *b)
{
	b->bits |= peek_at(r, (uint64_t)b->next * 8) << b->have;
	b->next += (63 - b->have) >> 3;
	b->have |= 56;
}

/* A block's codes up to its end-of-block code; *out counts the bytes they stand for
 * (a distance may not reach back past the first). The next code's entry is looked up
 * as soon as the current one is consumed, before the refill (the buffer holds at
 * least 64 - 48 bits past it, and a code takes at most 15): the lookups then follow
 * each other without waiting for a load from the stream. */
static int walk_codes(struct reader *r, const struct table *litlen, const struct table *dist,
		      uint64_t *out)
{
	uint64_t done = *out;
	struct bitbuf b = { 0, 0, (size_t)(r->pos >> 3) };
	refill(r, &b);
	b.bits >>= r->pos & 7;
	b.have -= r->pos & 7;
	refill(r, &b);
	uint32_t e = lookup(litlen, b.bits);
	for (;;) {
		unsigned n = E_BITS(e);
		if (E_KIND(e) == K_LIT) {
			done++;
		} else if (E_KIND(e) == K_LEN) {
			unsigned length = E_VALUE(e) + (unsigned)(b.bits >> n & ((1u << E_EXTRA(e)) - 1));
			n += E_EXTRA(e);
			uint32_t d = lookup(dist, b.bits >> n);
			if (E_KIND(d) != K_DIST)
				return -1;
			n += E_BITS(d);
			unsigned back = E_VALUE(d) + (unsigned)(b.bits >> n & ((1u << E_EXTRA(d)) - 1));
			n += E_EXTRA(d);
			if (back > done)
				return -1;
			done += length;
		} else if (E_KIND(e) == K_END) {
			r->pos = (uint64_t)b.next * 8 - b.have + n;
			*out = done;
			return 0;
		} else {
			return -1;
		}
		b.bits >>= n;
		b.have -= n;
		e = lookup(litlen, b.bits);
		if ((uint64_t)b.next * 8 - b.have > r->end)
			return -1;      /* cut short: what follows the end reads as zeros */
		refill(r, &b);
	}
}

int deflate_walk_final(struct deflate_walk *dw, const unsigned char *in, size_t len,
		       uint64_t *final_header, uint64_t *end)
{
	struct reader r = { in, len, 0, (uint64_t)len * 8 };
	uint64_t out = 0;
	for (;;) {
		uint64_t header = r.pos;
		uint64_t w = peek(&r);
		bool final = w & 1;
		unsigned type = w >> 1 & 3;
		r.pos += 3;
		int ok = -1;
		if (type == 0)
			ok = stored(&r, &out);
		else if (type == 1)
			ok = walk_codes(&r, &dw->fixed_litlen, &dw->fixed_dist, &out);
		else if (type == 2 && dynamic_header(dw, &r) == 0)
			ok = walk_codes(&r, &dw->litlen, &dw->dist, &out);
		if (ok < 0 || r.pos > r.end)
			return -1;
		if (final) {
			*final_header = header;
			*end = r.pos;
			return 0;
		}
	}
}
