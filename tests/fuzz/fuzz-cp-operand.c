/* SPDX-License-Identifier: MIT */
/*
 * cp operands (sftp_split_operand), aborting on a broken property: a remote operand
 * gives a non-empty host with no '/' outside brackets, host + ":" + path is the input
 * again, and a local one gives nothing back.
 */
#include <stdint.h>

#include "transport/sftp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *arg = xstrndup((const char *)data, size); /* up to the first NUL */
	char *host = NULL, *path = NULL;
	if (sftp_split_operand(arg, &host, &path)) {
		if (!host || !path || !*host)
			abort();
		char *again = xasprintf("%s:%s", host, path);
		if (strcmp(again, arg) != 0)
			abort();
		if (!strchr(host, '[') && strchr(host, '/'))
			abort();
		free(again);
	} else if (host || path) {
		abort();
	}
	free(host);
	free(path);
	free(arg);
	return 0;
}
