/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm_steps.h"

#include <stdlib.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/util.h"
#include "sched/slurm/slurm.h"

#define STEPS_FORMAT \
	"JobID,State,ExitCode,Elapsed,MaxRSS,MaxVMSize,AveCPU,TRESUsageInTot,NodeList,JobName"
#define STEPS_FIELDS 10

void slurm_steps_command(struct strbuf *sb, char *const *ids)
{
	marker_echo(sb, MARK_STEPS);
	strbuf_adds(sb, "sacct -n -P -j ");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, " -o '" STEPS_FORMAT "'\n");
	marker_status(sb, MARK_STEPS_EXIT, "?");
}

long long slurm_parse_size(const char *s)
{
	if (!s || !*s)
		return -1;
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0) || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	double mult = 1;
	const char *units = "KMGTP";
	if (*end) {
		const char *u = strchr(units, *end);
		if (!u || !*u || end[1])
			return -1;
		for (const char *p = units; p <= u; p++)
			mult *= 1024;
	}
	v *= mult;
	if (v > 9e18)
		return -1;
	return (long long)(v + 0.5);
}

/* "123.batch" -> job "123", step "batch"; "123" -> step "". False when the job part
 * is not digits with an optional _TASK or +N. */
static bool split_id(const char *id, char **job, char **step)
{
	size_t n = strcspn(id, ".");
	size_t d = 0;
	while (d < n && id[d] >= '0' && id[d] <= '9')
		d++;
	if (d == 0)
		return false;
	for (size_t i = d; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || id[i] == '_' || id[i] == '+' ||
		      id[i] == '[' || id[i] == ']' || id[i] == '-' || id[i] == ','))
			return false;
	*job = xstrndup(id, n);
	*step = xstrdup(id[n] ? id + n + 1 : "");
	return true;
}

struct scan {
	struct job_step *steps;
	size_t n;
	bool in;
};

static void one(void *data, char *line)
{
	struct scan *s = data;
	if (marker_value(line, MARK_STEPS)) {
		s->in = true;
		return;
	}
	if (!s->in)
		return;
	char *f[STEPS_FIELDS]; /* the last, the name: the rest of the line, '|' and all */
	struct job_step st = { 0 };
	if (!slurm_split_fields(line, f, STEPS_FIELDS) || !f[1][0] || !split_id(f[0], &st.job, &st.step))
		return;
	st.id = xstrdup(f[0]);
	st.state = xstrndup(f[1], strcspn(f[1], " "));
	slurm_parse_exit_code(f[2], &st.exit_code, &st.exit_signal);
	st.elapsed = slurm_format_duration(f[3]);
	st.max_rss = xstrdup(f[4]);
	st.max_rss_bytes = slurm_parse_size(f[4]);
	st.max_vmsize = xstrdup(f[5]);
	st.max_vmsize_bytes = slurm_parse_size(f[5]);
	st.ave_cpu = xstrdup(f[6]);
	st.tres_usage = xstrdup(f[7]);
	st.nodes = xstrdup(f[8]);
	st.name = xstrdup(f[9]);
	s->steps = xrealloc(s->steps, (s->n + 1) * sizeof(*s->steps));
	s->steps[s->n++] = st;
}

size_t slurm_parse_steps(const char *out, struct job_step **steps)
{
	struct scan s = { 0 };
	each_line(out, one, &s);
	*steps = s.steps;
	return s.n;
}
