/* SPDX-License-Identifier: MIT */
/* OpenSSL's block coder (EVP_EncodeBlock, EVP_DecodeBlock) does the work; this file
 * adds what OpenSSH's files need around it: unpadded output for fingerprints, and
 * input with whitespace and without padding. */
#include <openssl/evp.h>

#include "base/base64.h"
#include "base/util.h"

void base64_encode(struct strbuf *sb, const void *data, size_t len, bool pad)
{
	for (size_t off = 0; off < len;) {
		/* In pieces, so that EVP's int lengths never overflow. */
		size_t n = len - off < 3 << 20 ? len - off : 3 << 20;
		strbuf_grow(sb, n / 3 * 4 + 5);
		int w = EVP_EncodeBlock((unsigned char *)sb->buf + sb->len,
					(const unsigned char *)data + off, (int)n);
		sb->len += (size_t)w;
		off += n;
	}
	while (!pad && sb->len && sb->buf[sb->len - 1] == '=')
		sb->len--;
	sb->buf[sb->len] = '\0';
}

static bool is_b64(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

/* The text without whitespace and padding must be whole characters of the alphabet,
 * padding only at the end; then it is padded to a multiple of four for OpenSSL. */
int base64_decode(struct strbuf *sb, const char *text, size_t len)
{
	_cleanup_strbuf_ struct strbuf clean = STRBUF_INIT;
	bool padding = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			padding = true;
			continue;
		}
		if (!is_b64(c) || padding)
			return -1;
		strbuf_addch(&clean, c);
	}
	size_t rest = clean.len % 4;
	if (rest == 1)
		return -1;
	if (clean.len > (size_t)1 << 30)
		return -1;
	size_t npad = rest ? 4 - rest : 0;
	for (size_t i = 0; i < npad; i++)
		strbuf_addch(&clean, '=');
	strbuf_grow(sb, clean.len / 4 * 3 + 1);
	int n = EVP_DecodeBlock((unsigned char *)sb->buf + sb->len, (const unsigned char *)clean.buf,
				(int)clean.len);
	if (n < 0)
		return -1;
	/* EVP_DecodeBlock counts the padding's bytes as zeros: take them off. */
	sb->len += (size_t)n - npad;
	sb->buf[sb->len] = '\0';
	return 0;
}
