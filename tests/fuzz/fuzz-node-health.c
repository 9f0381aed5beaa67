/* SPDX-License-Identifier: MIT */
/*
 * hosts show --health's parsers on any bytes, aborting on a broken property: every
 * sinfo entry has a node without blanks and a state, nodes are listed once, and
 * "Unknown"/"none" are never kept as values; every GPU health row has a UUID or a
 * bus id, and no value is nvidia-smi's "[N/A]".
 */
#include <stdint.h>
#include <stdlib.h>

#include "gpu/node_health.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct node_health *n;
	size_t count = node_health_parse(text, &n);
	for (size_t i = 0; i < count; i++) {
		if (!*n[i].node || strchr(n[i].node, ' ') || !*n[i].state ||
		    (n[i].since && streq(n[i].since, "Unknown")) || (n[i].reason && streq(n[i].reason, "none")))
			abort();
		for (size_t k = 0; k < i; k++)
			if (streq(n[k].node, n[i].node))
				abort();
	}
	node_health_free(n, count);

	struct gpu_health_report r;
	gpu_health_parse(text, &r);
	for (size_t i = 0; i < r.ngpus; i++) {
		if (!r.gpus[i].v[GH_UUID] && !r.gpus[i].v[GH_BUS_ID])
			abort();
		for (int f = 0; f < GH_N; f++)
			if (r.gpus[i].v[f] && r.gpus[i].v[f][0] == '[')
				abort();
	}
	gpu_health_release(&r);
	free(text);
	return 0;
}
