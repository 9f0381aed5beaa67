/* SPDX-License-Identifier: MIT */
/*
 * Why pending SLURM jobs wait, with the numbers (status, queue): one remote script
 * for all of them over the command's connection (lib/sched/slurm/slurm_pending.h).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "sched/slurm/slurm_pending.h"
#include "sched/slurm/slurm_why.h"
#include "transport/ssh.h"

size_t job_pending_fetch(struct ssh_session *ss, char *const *ids, bool limits,
			 struct slurm_pending **jobs)
{
	struct dp_error err = { 0 };
	size_t n;
	if (slurm_pending_fetch(ss, ids, limits, jobs, &n, &err) < 0)
		warning_msg("no detail on why the pending jobs wait: %s", err.msg);
	return n;
}

cJSON *job_pending_json(const char *reason, const struct slurm_pending *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "reason", reason);
	json_add_str_or_null(o, "words", slurm_pending_words(reason));
	json_add_str_or_null(o, "text", p ? p->text : NULL);
	if (p)
		cJSON_AddItemToObject(o, "detail", cJSON_Duplicate(p->detail, true));
	else
		cJSON_AddNullToObject(o, "detail");
	return o;
}
