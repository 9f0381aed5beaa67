/* SPDX-License-Identifier: MIT */
/*
 * The libraries dispatch runs with, for `dispatch -V` and bug reports: each one's
 * version as the library loaded at run time reports it (an rpath gone wrong, or a
 * distribution upgrade, shows here), beside the headers dispatch was built with.
 */
#ifndef DISPATCH_VERSIONS_H
#define DISPATCH_VERSIONS_H

#include <stdbool.h>
#include <stddef.h>

struct dp_library_version {
	const char *name;     /* "libssh2", "libgit2", ... */
	const char *runtime;  /* what the loaded library says: "1.11.1" */
	const char *built;    /* what its headers said at build time */
	bool linked_static;   /* part of the binary (-Dstatic_libssh2), not a shared library */
};

/* libssh2, OpenSSL, libgit2, libarchive, zlib, SQLite, libyaml, in that order; *n
 * is set to their count. Static storage: not thread-safe on the first call. */
const struct dp_library_version *library_versions(size_t *n);

#endif
