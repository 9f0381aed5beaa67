/* SPDX-License-Identifier: MIT */
/* The job YAML reader: any bytes give a spec or an error, never a crash or a leak;
 * a spec that validates also generates scripts for both host types. */
#include <stdint.h>

#include "jobs/jobscript.h"
#include "inventory/jobspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jobspec js = { 0 };
	struct dp_error err;
	if (jobspec_parse_yaml(&js, "fuzz.yaml", (const char *)data, size, &err) == 0 &&
	    jobspec_validate(&js, &err) == 0) {
		struct inv_cluster c = { .name = "c", .root = "/r", .work = "/w", .mount = "redis://m" };
		struct inv_host h = { .name = "h", .type = INV_HOST_SLURM, .cluster = &c };
		struct jobscript_target t = { .host = &h, .bootstrap_path = "/w/b.sh" };
		struct jobscript s;
		if (jobscript_generate(&js, &t, &s, &err) == 0)
			jobscript_release(&s);
		h.type = INV_HOST_PLAIN;
		if (jobscript_generate(&js, &t, &s, &err) == 0)
			jobscript_release(&s);
	}
	jobspec_release(&js);
	return 0;
}
