/* SPDX-License-Identifier: MIT */
#include "hostrun.h"

#include "base/util.h"

/* --timeout S bounds connecting too: a host that does not answer uses up S, not
 * ConnectTimeout times the attempts. */
int hostrun_open(const struct ssh_ctx *sc, struct ssh_ctx *bounded, const char *host,
		 double timeout, struct ssh_session **s, struct dp_error *err)
{
	*bounded = *sc;
	bounded->deadline = timeout > 0 ? monotonic_seconds() + timeout : 0;
	if (ssh_session_open(bounded, host, s, err) == 0)
		return 0;
	if (bounded->deadline > 0 && monotonic_seconds() >= bounded->deadline) {
		_cleanup_free_ char *cause = xstrdup(err->msg);
		dp_err(err, DPE_TIMEOUT, "--timeout of %g s ran out while connecting to '%s' (%s)",
		       timeout, host, cause);
	}
	return -1;
}

/* The command ran out of what --timeout left it: say so with the whole timeout. */
void hostrun_timed_out(struct dp_error *err, const char *host, double timeout)
{
	if (err->kind == DPE_TIMEOUT)
		dp_err(err, DPE_TIMEOUT, "command on '%s' timed out after %g s", host, timeout);
}

/* What --timeout leaves for the command once connected; 0 without --timeout. */
double hostrun_time_left(const struct ssh_ctx *bounded)
{
	if (bounded->deadline <= 0)
		return 0;
	double left = bounded->deadline - monotonic_seconds();
	return left > 0.001 ? left : 0.001;
}
