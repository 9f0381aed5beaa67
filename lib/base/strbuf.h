/* SPDX-License-Identifier: MIT */
/* Growable strings (git's strbuf): buf is always NUL-terminated. */
#ifndef DISPATCH_STRBUF_H
#define DISPATCH_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/util.h"

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT { .buf = strbuf_empty, .len = 0, .alloc = 0 }
extern char strbuf_empty[];

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb);     /* caller frees; sb is reset */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) _printf_(2, 0);

/* s with its control characters escaped (\n, \t, \xHH; DEL too): the one way text
 * from a remote host or another user (job names, records, reasons) reaches a
 * terminal, so that it can neither forge lines nor send escape sequences. */
static inline void strbuf_releasep(struct strbuf *sb) { strbuf_release(sb); }
#define _cleanup_strbuf_ _cleanup_(strbuf_releasep)

#endif
