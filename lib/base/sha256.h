/* SPDX-License-Identifier: MIT */
/* SHA-256, for content hashes of snapshots: OpenSSL's EVP digest (libcrypto is linked
 * anyway, and uses the CPU's SHA instructions where it has them). */
#ifndef DISPATCH_SHA256_H
#define DISPATCH_SHA256_H

#include <stddef.h>

struct evp_md_ctx_st;

struct sha256 {
	struct evp_md_ctx_st *ctx;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
/* The digest; the context is released (sha256_init starts it again). */
void sha256_final(struct sha256 *c, unsigned char out[32]);
/* The digest as 64 lower-case hex digits and a NUL. */
void sha256_final_hex(struct sha256 *c, char out[65]);
/* Release a context that will not be finished (nothing when it was). */
void sha256_release(struct sha256 *c);

#endif
