/* SPDX-License-Identifier: MIT */
/*
 * Run-time library versions. libssh2 and OpenSSL are asked through transport/
 * (they stay inside that folder); the others only through their version calls.
 */
#include <archive.h>
#include <git2.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>
#include <zlib.h>

#include "transport/ssh.h"
#include "versions.h"

#ifdef DISPATCH_LIBSSH2_STATIC
#define LIBSSH2_STATIC true
#else
#define LIBSSH2_STATIC false
#endif
#ifndef DISPATCH_LIBYAML_BUILT
#define DISPATCH_LIBYAML_BUILT "unknown"
#endif

/* "libarchive 3.6.2" -> "3.6.2" */
static const char *after_name(const char *s, const char *name)
{
	size_t len = strlen(name);
	if (s && strncmp(s, name, len) == 0 && s[len] == ' ')
		return s + len + 1;
	return s ? s : "unknown";
}

const struct dp_library_version *library_versions(size_t *n)
{
	static char git[32];
	static struct dp_library_version v[7];
	int major = 0, minor = 0, rev = 0;

	if (git_libgit2_version(&major, &minor, &rev) == 0)
		snprintf(git, sizeof(git), "%d.%d.%d", major, minor, rev);
	else
		snprintf(git, sizeof(git), "unknown");
	v[0] = (struct dp_library_version){ "libssh2", ssh_library_version(),
					    ssh_library_build_version(), LIBSSH2_STATIC };
	v[1] = (struct dp_library_version){ "openssl", ssh_crypto_version(),
					    ssh_crypto_build_version(), false };
	v[2] = (struct dp_library_version){ "libgit2", git, LIBGIT2_VERSION, false };
	v[3] = (struct dp_library_version){ "libarchive",
					    after_name(archive_version_string(), "libarchive"),
					    ARCHIVE_VERSION_ONLY_STRING, false };
	v[4] = (struct dp_library_version){ "zlib", zlibVersion(), ZLIB_VERSION, false };
	v[5] = (struct dp_library_version){ "sqlite", sqlite3_libversion(), SQLITE_VERSION, false };
	v[6] = (struct dp_library_version){ "libyaml", yaml_get_version_string(),
					    DISPATCH_LIBYAML_BUILT, false };
	*n = sizeof(v) / sizeof(v[0]);
	return v;
}
