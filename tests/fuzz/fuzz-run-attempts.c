/* SPDX-License-Identifier: MIT */
/*
 * A run's attempts read from a reply (lib/jobs/run_attempts.h), aborting on a broken
 * property: every attempt taken has a state of capitals, a node of host-name
 * characters or none, the gave-up reason no control character, and the texts and
 * JSON are built without a crash.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/run_attempts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	strbuf_add(&rr.out, (const char *)data, size);
	remote_reply_parse(&rr);
	const struct sched_job j = { .id = "7", .stage_dir = "/s", .run_id = "run-1", .max_restarts = 3 };
	struct job_state js = { .state = strdup("RUNNING") };
	run_attempts_take(&rr, &j, &js);
	for (size_t i = 0; i < js.nattempts; i++) {
		const struct job_attempt *a = &js.attempts[i];
		if (!a->state[0] || strspn(a->state, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(a->state))
			abort();
		if (a->node && strspn(a->node, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					       "0123456789._-") != strlen(a->node))
			abort();
		if (a->attempt < 0)
			abort();
	}
	for (const char *p = js.gave_up; p && *p; p++) /* shown escaped: no terminal control */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	free(job_state_state_text(&js));
	free(job_state_attempts_text(&js));
	cJSON *o = cJSON_CreateObject();
	job_state_json_run(o, &js);
	cJSON_Delete(o);
	job_state_release(&js);
	remote_reply_release(&rr);
	return 0;
}
