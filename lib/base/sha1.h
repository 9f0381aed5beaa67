/* SPDX-License-Identifier: MIT */
/* SHA-1 (FIPS 180-4), only to name things as OpenSSH names them (ControlPath's %C is
 * the SHA-1 of "%l%h%p%r"): not for anything that must resist collisions. */
#ifndef DISPATCH_SHA1_H
#define DISPATCH_SHA1_H

#include <stddef.h>
#include <stdint.h>

struct sha1 {
	uint32_t h[5];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
};

void sha1_init(struct sha1 *c);
void sha1_update(struct sha1 *c, const void *data, size_t len);
void sha1_final(struct sha1 *c, unsigned char out[20]);
/* The digest as 40 lower-case hex digits and a NUL. */
void sha1_final_hex(struct sha1 *c, char out[41]);

#endif
