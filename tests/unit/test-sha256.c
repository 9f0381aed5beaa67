/* SPDX-License-Identifier: MIT */
/* SHA-256 against the FIPS 180-4 / NIST example vectors. */
#include "base/sha256.h"
#include "base/util.h"
#include "unit.h"

static const char *hex(const void *data, size_t len, size_t step)
{
	static char out[65];
	struct sha256 c;
	sha256_init(&c);
	for (size_t off = 0; off < len; off += step)
		sha256_update(&c, (const char *)data + off, len - off < step ? len - off : step);
	sha256_final_hex(&c, out);
	return out;
}

int main(void)
{
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	CHECK_STR(hex("", 0, 1), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CHECK_STR(hex("abc", 3, 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK_STR(hex(two, strlen(two), 7),
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	CHECK_STR(hex(two, strlen(two), 64),
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	char *million = xmalloc(1000000);
	memset(million, 'a', 1000000);
	CHECK_STR(hex(million, 1000000, 4096),
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	CHECK_STR(hex(million, 55, 55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	CHECK_STR(hex(million, 56, 56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	free(million);
	return unit_done();
}
