/* SPDX-License-Identifier: MIT */
/* What an SFTP server sends through a master, as sftp_mux.c parses it: the first
 * byte picks the parser (0 SSH_FXP_VERSION from its type byte, 1 an SSH_FXP_NAME's
 * count and entries, and what sftp_listing_check takes of them and says of the rest,
 * 2 an ATTRS block), the rest is its input. The corpus holds
 * OpenSSH 9.2's sftp-server's own answers (version-*, name-*, attrs-*: captured by
 * speaking SFTP to it over pipes) with that byte in front, and name-hostile, made
 * by hand: a listing with ".", "..", "../x", a NUL, an empty name, a name twice. */
#include <stdint.h>

#include "transport/sftp_fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	switch (data[0] % 3) {
	case 0: {
		uint32_t version;
		bool posix_rename;
		(void)msftp_parse_version(p, n, &version, &posix_rename);
		break;
	}
	case 1: {       /* and what a copy takes of it: no name but a new entry's */
		struct sftp_dirent *e = NULL;
		size_t ne = 0;
		char **names = NULL, **refused = NULL;
		struct fstat_ *sts = NULL;
		(void)msftp_parse_names(p, n, &e, &ne);
		sftp_listing_check("host", "dir", e, ne, &names, &sts, &refused);
		for (char **s = names; s && *s; s++)
			if (!**s || streq(*s, ".") || streq(*s, "..") || strchr(*s, '/') ||
			    (s > names && streq(s[-1], *s)))
				abort();
		for (char **m = refused; m && *m; m++)
			for (const char *c = *m; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					abort();
		if (strv_len(names) + strv_len(refused) > ne)
			abort();
		strv_free(names);
		strv_free(refused);
		free(sts);
		free(e);
		break;
	}
	case 2: {
		struct fstat_ st;
		ssize_t used = msftp_parse_attrs(p, n, &st);
		if (used > (ssize_t)n || (used >= 0 && used < 4) || st.mode > 07777)
			abort();
		break;
	}
	}
	return 0;
}
