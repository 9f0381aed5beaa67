/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4), for content hashes of snapshots: small and dependency-free. */
#ifndef DISPATCH_SHA256_H
#define DISPATCH_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, unsigned char out[32]);
/* The digest as 64 lower-case hex digits and a NUL. */
void sha256_final_hex(struct sha256 *c, char out[65]);

#endif
