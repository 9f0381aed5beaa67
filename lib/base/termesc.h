/* SPDX-License-Identifier: MIT */
/*
 * Text from another party (a server's file names, another user's records) shown on a
 * terminal: bytes that a terminal would act on are written out instead.
 */
#ifndef DISPATCH_TERMESC_H
#define DISPATCH_TERMESC_H

#include <stddef.h>

#include "base/strbuf.h"

/* The one escaping function for text from elsewhere on a terminal: len bytes of s
 * (NULs included) appended as printable text: control characters (C0, DEL, and C1
 * written in UTF-8), bytes that are not UTF-8, and backslashes become \xNN (\\ for a
 * backslash, \n \t \r \e for the common ones); other UTF-8 is kept. */
void strbuf_add_escaped(struct strbuf *sb, const char *s, size_t len);
/* The same, as a new string (caller frees). */
char *term_escape(const char *s, size_t len);
/* A NUL-terminated string (NULL as ""), as a new string (caller frees). */
char *printable(const char *s);
void strbuf_add_printable(struct strbuf *sb, const char *s);

#endif
