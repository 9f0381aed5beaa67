/* SPDX-License-Identifier: MIT */
#include "sched/plain/plainjob_ask.h"

#include "transport/ssh.h"

int plainjob_ask_one(struct ssh_session *ss, const struct plainjob_ref *job,
		     struct plainjob_status **ps, size_t *n, struct strbuf *errout, int *status,
		     struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	*ps = NULL;
	*n = 0;
	plainjob_status_command(&cmd, job, 1);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, errout, status, err) < 0)
		return -1;
	*n = plainjob_parse_status(out.buf, ps);
	return 0;
}
