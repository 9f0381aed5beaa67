/* SPDX-License-Identifier: MIT */
/*
 * The pending script's answer (lib/sched/slurm/slurm_pending.c) on any bytes, aborting on a
 * broken property: every job has an id and a reason and a detail object with the
 * expected start; a detail text is one line; every job is found by its id.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sched/slurm/slurm_pending.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct slurm_pending *p;
	size_t n = slurm_pending_parse(text, &p);
	for (size_t i = 0; i < n; i++) {
		if (!*p[i].id || !*p[i].reason || !cJSON_IsObject(p[i].detail) ||
		    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p[i].detail, "expected_start")))
			abort();
		if (p[i].text && strchr(p[i].text, '\n'))
			abort();
		if (!slurm_pending_find(p, n, p[i].id))
			abort();
		char *json = cJSON_PrintUnformatted(p[i].detail);
		if (!json)
			abort();
		free(json);
	}
	slurm_pending_free(p, n);
	free(text);
	return 0;
}
