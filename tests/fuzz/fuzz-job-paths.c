/* SPDX-License-Identifier: MIT */
/*
 * dispatch logs' parsers on any bytes, aborting on a broken property: scontrol show
 * job's paths are set only once a job record began and hold no newline; a pattern
 * without "%%" in it, filled in, has no %j, %x, %u, %A or %a left.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sched/slurm/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct slurm_paths p;
	slurm_parse_job_paths(text, &p);
	if (p.records < 0 || ((p.out || p.err) && p.records < 1))
		abort();
	if ((p.out && strchr(p.out, '\n')) || (p.err && strchr(p.err, '\n')) ||
	    (p.user && strchr(p.user, '\n')))
		abort();
	if ((p.acct_out && strchr(p.acct_out, '\n')) || (p.acct_err && strchr(p.acct_err, '\n')) ||
	    (p.acct_name && strchr(p.acct_name, '\n')) || ((p.acct_err || p.acct_name) && !p.acct))
		abort();
	slurm_paths_release(&p);

	char *filled = slurm_expand_pattern(text, "12", "3", "name", "user");
	for (const char *s = filled; (s = strchr(s, '%')); s++)
		if (s[1] == 'j' || s[1] == 'x' || s[1] == 'u' || s[1] == 'A' || s[1] == 'a')
			if (strstr(text, "%%") == NULL)
				abort();
	free(filled);
	free(text);
	return 0;
}
