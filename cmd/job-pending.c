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
	_cleanup_strv_free_ char **asked = NULL;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status;
	*jobs = NULL;
	for (size_t i = 0; ids && ids[i]; i++) {
		/* the pending rest of an array ("41_[2-5%2]"): squeue -j takes its job id */
		_cleanup_free_ char *id = xstrndup(ids[i], strcspn(ids[i], "["));
		if (id[0] && id[strlen(id) - 1] == '_')
			id[strlen(id) - 1] = 0;
		if (!strv_contains(asked, id))
			strv_add(&asked, id);
	}
	if (!asked)
		return 0;
	slurm_pending_command(&cmd, asked, limits);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &err) < 0) {
		warning_msg("no detail on why the pending jobs wait: %s", err.msg);
		return 0;
	}
	return slurm_pending_parse(out.buf, jobs);
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
