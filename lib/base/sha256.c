/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include <openssl/evp.h>

#include "base/sha256.h"

/* The context is memory only: a failure here is out of memory, as xmalloc treats it. */
void sha256_init(struct sha256 *c)
{
	c->ctx = EVP_MD_CTX_new();
	if (!c->ctx || !EVP_DigestInit_ex(c->ctx, EVP_sha256(), NULL))
		abort();
}

void sha256_update(struct sha256 *c, const void *data, size_t len)
{
	if (!EVP_DigestUpdate(c->ctx, data, len))
		abort();
}

void sha256_final(struct sha256 *c, unsigned char out[32])
{
	if (!EVP_DigestFinal_ex(c->ctx, out, NULL))
		abort();
	sha256_release(c);
}

void sha256_final_hex(struct sha256 *c, char out[65])
{
	unsigned char d[32];
	sha256_final(c, d);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void sha256_release(struct sha256 *c)
{
	EVP_MD_CTX_free(c->ctx);
	c->ctx = NULL;
}
