/* SPDX-License-Identifier: MIT */
/* SHA-1 against the FIPS 180 example vectors, fed in pieces of several sizes. */
#include "base/sha1.h"
#include "base/util.h"
#include "unit.h"

static const char *hex(const void *data, size_t len, size_t step)
{
	static char out[41];
	struct sha1 c;
	sha1_init(&c);
	for (size_t off = 0; off < len; off += step)
		sha1_update(&c, (const char *)data + off, len - off < step ? len - off : step);
	sha1_final_hex(&c, out);
	return out;
}

int main(void)
{
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	CHECK_STR(hex("", 0, 1), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	CHECK_STR(hex("abc", 3, 3), "a9993e364706816aba3e25717850c26c9cd0d89d");
	CHECK_STR(hex(two, strlen(two), 7), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	CHECK_STR(hex(two, strlen(two), 64), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	char *million = xmalloc(1000000);
	memset(million, 'a', 1000000);
	CHECK_STR(hex(million, 1000000, 4096), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	/* the padding's edges: the length fits in the last block or needs another */
	CHECK_STR(hex(million, 55, 55), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
	CHECK_STR(hex(million, 56, 56), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
	CHECK_STR(hex(million, 63, 1), "03f09f5b158a7a8cdad920bddc29b81c18a551f5");
	CHECK_STR(hex(million, 64, 64), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
	CHECK_STR(hex(million, 65, 13), "11655326c708d70319be2610e8a57d9a5b959d3b");
	free(million);
	/* ControlPath's %C as OpenSSH 9.2 printed it (ssh -G): "%l%h%p%r" of a config */
	CHECK_STR(hex("vmexample.com2222bob", 20, 5), "3815f17c6f2b5b5e90cd050d7ef77a720e82d39b");
	return unit_done();
}
