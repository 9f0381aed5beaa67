/* SPDX-License-Identifier: MIT */
/* Base64 (RFC 4648), as OpenSSH key and known_hosts files use it. */
#ifndef DISPATCH_BASE64_H
#define DISPATCH_BASE64_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* Append the encoding of data; pad false drops the trailing '=' (ssh fingerprints). */
void base64_encode(struct strbuf *sb, const void *data, size_t len, bool pad);
/* Append the decoding of text (len bytes; whitespace skipped). Returns -1 on bad input. */
int base64_decode(struct strbuf *sb, const char *text, size_t len);

#endif
