/* SPDX-License-Identifier: MIT */
/*
 * Text from another party (a server's file names, another user's records) shown on a
 * terminal: bytes that a terminal would act on are written out instead.
 */
#ifndef DISPATCH_TERMESC_H
#define DISPATCH_TERMESC_H

#include <stddef.h>

/* len bytes of s (NULs included) as printable text: control characters (C0, DEL,
 * and C1 written in UTF-8), bytes that are not UTF-8, and backslashes become \xNN
 * (\\ for a backslash, \n \t \r \e for the common ones); other UTF-8 is kept. */
char *term_escape(const char *s, size_t len);

#endif
