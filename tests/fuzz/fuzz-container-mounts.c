/* SPDX-License-Identifier: MIT */
/*
 * container_mounts_parse (container_mounts, --container-mounts), aborting on a broken
 * property: a list that parses gives items whose SRC and DST hold no ',' or ':' and
 * are absolute (/, ~/ or $), and container_mounts_valid agrees; a failure is DPE_INPUT
 * with a message and appends nothing.
 */
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"
#include "container/container.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool good_path(const char *p)
{
	return (p[0] == '/' || p[0] == '~' || p[0] == '$') && !strpbrk(p, ",:");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct container_mount *m = NULL;
	size_t n = 0;
	struct dp_error err = { 0 };
	int r = container_mounts_parse(text, "fuzz", &m, &n, &err);
	if (r < 0) {
		if (n != 0 || m || err.kind != DPE_INPUT || !err.msg[0] || container_mounts_valid(text))
			abort();
	} else {
		if (n == 0 || !container_mounts_valid(text))
			abort();
		for (size_t i = 0; i < n; i++)
			if (!good_path(m[i].src) || !good_path(m[i].dst))
				abort();
	}
	container_mounts_free(m, n);
	free(text);
	return 0;
}
