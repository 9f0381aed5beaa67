/* SPDX-License-Identifier: MIT */
/* Small helpers shared by every module: allocation, cleanup handles, string vectors. */
#ifndef DISPATCH_UTIL_H
#define DISPATCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* Allocation never fails silently: out of memory aborts (the only way lib/ stops). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) _printf_(1, 2);

static inline bool streq(const char *a, const char *b) { return strcmp(a, b) == 0; }
static inline bool streq_ptr(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}
static inline bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}
/* What follows prefix in s, or NULL when s does not start with it (git's skip_prefix). */
static inline const char *after_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Cleanup helpers, one per handle type. */
static inline void freep(void *p) { free(*(void **)p); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_close_ _cleanup_(closep)

/* NULL-terminated string vectors (strv), as systemd. */
size_t strv_len(char *const *v);
void strv_push(char ***v, char *s);          /* takes ownership of s */
void strv_add(char ***v, const char *s);     /* copies s */
bool strv_contains(char *const *v, const char *s);
char **strv_copy(char *const *v);
void strv_free(char **v);
static inline void strv_freep(char ***v) { strv_free(*v); }
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/* Parse a whole decimal number into *out; false on junk, overflow or out of range. */
bool parse_long(const char *s, long min, long max, long *out);

/* The candidate closest to word (edit distance), or NULL when none is close. */
const char *suggest_word(const char *word, const char *const *candidates, size_t n);

/* Write all of buf to fd, through short writes and EINTR; 0, or -1 with errno set. */
int write_all(int fd, const void *buf, size_t len);

/* Read a whole file (NUL-terminated); NULL with errno set on failure. */
char *read_file(const char *path, size_t *len);

/* Seconds on a monotonic clock (for intervals and deadlines). */
double monotonic_seconds(void);

/* n bytes for people: "512 B", "12.3 MiB". */
void format_bytes(char *buf, size_t size, double n);

#endif
