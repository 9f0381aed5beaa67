/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm.h"

#include <stdlib.h>

#include "base/marker.h"
#include "remote/remote.h"
#include "base/shquote.h"

#define SQUEUE_FORMAT "%i|%T|%M|%l|%N|%r"
#define SQUEUE_FIELDS 6
#define SACCT_FORMAT "JobID,State,Elapsed,Timelimit,NodeList,ExitCode,Reason"
#define SACCT_FIELDS 7

/* ---- lines and fields ---- */

bool slurm_split_fields(char *line, char **f, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		char *bar = strchr(line, '|');
		if (!bar)
			return false;
		*bar = '\0';
		f[i] = line;
		line = bar + 1;
	}
	f[n - 1] = line;
	return true;
}

/* A job id as SLURM prints it: digits, then optionally _TASK or _[RANGES]
 * (or +N for heterogeneous components). */
static bool valid_job_id(const char *s)
{
	size_t i = 0;
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0)
		return false;
	if (s[i] == '\0')
		return true;
	if (s[i] != '_' && s[i] != '+')
		return false;
	if (!s[++i])
		return false;
	for (; s[i]; i++)
		if (!strchr("0123456789[]-,:%", s[i]))
			return false;
	return true;
}

/* ---- sbatch ---- */

static bool sbatch_line(const char *l, const char **semi)
{
	size_t i = 0;
	while (l[i] >= '0' && l[i] <= '9')
		i++;
	if (i == 0)
		return false;
	*semi = NULL;
	if (l[i] == '\0')
		return true;
	if (l[i] != ';' || l[i + 1] == '\0')
		return false;
	*semi = l + i;
	for (i++; l[i]; i++)
		if (l[i] == ' ' || l[i] == '\t' || l[i] == '\v' || l[i] == '\f')
			return false;
	return true;
}

struct sbatch_scan {
	char *id, *cluster;
};

static void sbatch_one(void *data, char *line)
{
	struct sbatch_scan *s = data;
	const char *semi;
	if (!sbatch_line(line, &semi))
		return;
	free(s->id);
	free(s->cluster);
	s->id = semi ? xstrndup(line, (size_t)(semi - line)) : xstrdup(line);
	s->cluster = semi ? xstrdup(semi + 1) : NULL;
}

int slurm_parse_sbatch(const char *out, char **job_id, char **cluster)
{
	struct sbatch_scan s = { 0 };
	each_line(out, sbatch_one, &s);
	*job_id = s.id;
	if (cluster)
		*cluster = s.cluster;
	else
		free(s.cluster);
	return s.id ? 0 : -1;
}

void slurm_sbatch_options(struct strbuf *sb, const struct slurm_sbatch *s)
{
	if (s->array) {
		strbuf_adds(sb, " --array=");
		sh_quote(sb, s->array);
	}
	if (s->dependency) {
		strbuf_adds(sb, " --dependency=");
		sh_quote(sb, s->dependency);
	}
}

void slurm_submit_command(struct strbuf *sb, const struct slurm_sbatch *s)
{
	const char *rec = s->record ? s->record : "sbatch";
	/* No HUP or PIPE may stop the shell between sbatch and the status file. */
	strbuf_adds(sb, "trap '' HUP PIPE\nd=");
	sh_quote(sb, s->stage_dir);
	strbuf_adds(sb, "\nr=\"$d\"/");
	sh_quote(sb, rec);
	strbuf_adds(sb, "\ncd -- ");
	sh_quote(sb, s->workdir);
	strbuf_adds(sb, " || { echo '" MARK_SBATCH_EXIT " 1'; exit 1; }\nsbatch --parsable --comment=");
	sh_quote(sb, s->token);
	slurm_sbatch_options(sb, s);
	strbuf_adds(sb, " \"$d/sbatch.sh\"");
	if (s->arg) {
		strbuf_addch(sb, ' ');
		sh_quote(sb, s->arg);
	}
	strbuf_adds(sb,
		" >\"$r.out\" 2>\"$r.err\" </dev/null\n"
		"st=$?\n"
		"echo \"$st\" >\"$r.status.tmp\" && mv -f \"$r.status.tmp\" \"$r.status\"\n"
		"cat \"$r.out\"\n"
		"cat \"$r.err\" >&2\n"
		"echo \"" MARK_SBATCH_EXIT " $st\"\n"
		"exit \"$st\"\n");
}

void slurm_max_array_command(struct strbuf *sb)
{
	marker_print(sb, MARK_MAX_ARRAY,
		     "\"$(scontrol show config 2>/dev/null | grep '^MaxArraySize')\"");
}

long slurm_parse_max_array_size(const char *out)
{
	long v = -1;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *p = marker_value(line, MARK_MAX_ARRAY);
		if (!p)
			p = line;
		if (strncmp(p, "MaxArraySize", 12) != 0)
			continue;
		p += 12;
		p += strspn(p, " \t");
		if (*p++ != '=')
			continue;
		p += strspn(p, " \t");
		size_t len = strspn(p, "0123456789");
		_cleanup_free_ char *num = xstrndup(p, len);
		long n;
		if (len && p[len + strspn(p + len, " \t")] == '\0' && parse_long(num, 0, 100000000, &n))
			v = n;
	}
	line_iter_release(&it);
	return v;
}

/* ---- status ---- */

void slurm_job_release(struct slurm_job *j)
{
	free(j->id);
	free(j->state);
	free(j->reason);
	free(j->elapsed);
	free(j->time_limit);
	free(j->cancelled_by);
	free(j->nodes);
	memset(j, 0, sizeof(*j));
}

void slurm_jobs_free(struct slurm_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		slurm_job_release(&jobs[i]);
	free(jobs);
}

bool slurm_state_active(const char *state)
{
	static const char *const active[] = {
		"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
		"RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "REQUEUE_FED",
		"REQUEUE_HOLD", "SPECIAL_EXIT",
	};
	for (size_t i = 0; i < ARRAY_SIZE(active); i++)
		if (streq(state, active[i]))
			return true;
	return false;
}

void slurm_id_list(struct strbuf *sb, char *const *ids)
{
	_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
	for (size_t i = 0; ids && ids[i]; i++)
		strbuf_addf(&list, "%s%s", i ? "," : "", ids[i]);
	sh_quote(sb, list.buf);
}

/* The ids (of "$q", squeue's answer, and the list asked) that sacct must answer: a
 * job that squeue has as itself, active or COMPLETED (exit 0 by definition), is
 * answered; one it lacks, one that ended otherwise (the exit code is sacct's) and an
 * array's id (tasks may have left the controller while others are listed) are not.
 * One pass over the rows, whatever their number (a sweep's thousands). */
static const char sacct_needed_awk[] =
	"awk -F'|' -v ids=\"$dsq_ids\" '\n"
	"BEGIN { k = split(ids, a, \",\"); for (i = 1; i <= k; i++) want[a[i]] = 1 }\n"
	"{ st = $2; sub(/ .*/, \"\", st)\n"
	"  if ($1 in want) { if (st ~ /^(PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|COMPLETED)$/) answered[$1] = 1; else ended[$1] = 1 }\n"
	"  u = index($1, \"_\"); if (u > 1 && (substr($1, 1, u - 1) in want)) ended[substr($1, 1, u - 1)] = 1 }\n"
	"END { for (i = 1; i <= k; i++) if (!(a[i] in answered) || (a[i] in ended)) printf \"%s%s\", (n++ ? \",\" : \"\"), a[i] }'";

void slurm_status_command(struct strbuf *sb, char *const *ids)
{
	strbuf_adds(sb, "dsq_ids=");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, "\ndsq_q=$(squeue -h -t all -j \"$dsq_ids\" -o '" SQUEUE_FORMAT "')\ndsq_st=$?\n"
		    "[ -z \"$dsq_q\" ] || printf '%s\\n' \"$dsq_q\"\n");
	marker_status(sb, MARK_SQUEUE_EXIT, "dsq_st");
	strbuf_addf(sb, "[ \"$dsq_st\" = 0 ] || dsq_q=\n"
		    "dsq_ids=$(printf '%%s\\n' \"$dsq_q\" | %s)\n", sacct_needed_awk);
	marker_echo(sb, MARK_SACCT);
	strbuf_adds(sb, "if [ -n \"$dsq_ids\" ]; then\n\tsacct -n -P -X -j \"$dsq_ids\" -o '" SACCT_FORMAT "'\n");
	strbuf_adds(sb, "\t");
	marker_status(sb, MARK_SACCT_EXIT, "?");
	strbuf_adds(sb, "else\n\techo \"" MARK_SACCT_EXIT " 0\"\nfi\n");
}

void slurm_squeue_command(struct strbuf *sb, char *const *ids)
{
	strbuf_adds(sb, "squeue -h -t all -j ");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, " -o '" SQUEUE_FORMAT "'\n");
	marker_status(sb, MARK_SQUEUE_EXIT, "?");
}

void slurm_squeue_poll_command(struct strbuf *sb, char *const *ids, const char *known)
{
	/* 23.11.5 and later: the job states alone, one cheap RPC; an older squeue
	 * refuses the option before it asks the controller anything. */
	strbuf_adds(sb, "s=$(squeue --only-job-state -h -t all -j ");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, " -o '%i|%T' 2>/dev/null) && h=$(printf '%s\\n' \"$s\" | sort | cksum) || h=\n");
	marker_print(sb, MARK_SQUEUE_STATES, "\"$h\"");
	strbuf_adds(sb, "if [ -n \"$h\" ] && [ \"$h\" = ");
	sh_quote(sb, known && *known ? known : "-");
	strbuf_adds(sb, " ]; then\n\techo " MARK_SQUEUE_SAME "\n\techo \"" MARK_SQUEUE_EXIT " 0\"\nelse\n\t");
	slurm_squeue_command(sb, ids);
	strbuf_adds(sb, "fi\n");
}

bool slurm_poll_same(const char *out)
{
	_cleanup_free_ char *v = marker_find(out, MARK_SQUEUE_SAME);
	return v != NULL;
}

char *slurm_poll_states(const char *out)
{
	char *v = marker_find(out, MARK_SQUEUE_STATES);
	if (v && !*v) {
		free(v);
		v = NULL;
	}
	return v;
}

void slurm_sacct_command(struct strbuf *sb, char *const *ids)
{
	marker_echo(sb, MARK_SACCT);
	strbuf_adds(sb, "sacct -n -P -X -j ");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, " -o '" SACCT_FORMAT "'\n");
	marker_status(sb, MARK_SACCT_EXIT, "?");
}

void slurm_alloc_command(struct strbuf *sb, char *const *ids)
{
	strbuf_adds(sb, "sacct -n -P -X -j ");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, " -o JobID,ElapsedRaw,AllocTRES,User 2>/dev/null | while IFS= read -r l; do\n"
		    "\tprintf '" MARK_USAGE_ALLOC " %s\\n' \"$l\"\ndone\n");
}

long slurm_tres_gpus(const char *tres)
{
	/* "cpu=2,mem=200M,node=2,billing=2,gres/gpu:a100=2,gres/gpu=2": the untyped
	 * count where it is there, else the typed ones summed */
	long untyped = -1, typed = 0;
	for (const char *p = tres; p && *p;) {
		const char *end = p + strcspn(p, ",");
		const char *v = memchr(p, '=', (size_t)(end - p));
		long n;
		if (v && !strncmp(p, "gres/gpu", 8)) {
			_cleanup_free_ char *num = xstrndup(v + 1, (size_t)(end - v - 1));
			if (parse_long(num, 0, 1000000, &n)) {
				if (v == p + 8)
					untyped = n;
				else if (p[8] == ':')
					typed += n;
			}
		}
		p = *end ? end + 1 : end;
	}
	return untyped >= 0 ? untyped : typed;
}

int slurm_parse_exit(const char *out, const char *what)
{
	return remote_text_exit(out, remote_section_named(what));
}

bool slurm_squeue_failed(int exit_status, const char *err)
{
	if (exit_status == 0)
		return false;
	return !(err && strstr(err, "Invalid job id specified"));
}

char *slurm_format_seconds(long s)
{
	if (s < 0)
		return xstrdup("");
	long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
	if (d)
		return xasprintf("%ld-%02ld:%02ld:%02ld", d, h, m, sec);
	if (h)
		return xasprintf("%ld:%02ld:%02ld", h, m, sec);
	return xasprintf("%ld:%02ld", m, sec);
}

long slurm_parse_duration(const char *text)
{
	long d = 0, part[3];
	size_t n = 0;
	const char *p = text, *dash = strchr(text, '-');
	if (dash) {
		_cleanup_free_ char *days = xstrndup(text, (size_t)(dash - text));
		if (!parse_long(days, 0, 100000, &d))
			return -1;
		p = dash + 1;
	}
	for (;;) {
		size_t len = strspn(p, "0123456789");
		if (len == 0 || len > 4 || n == 3)
			return -1;
		_cleanup_free_ char *num = xstrndup(p, len);
		if (!parse_long(num, 0, 9999, &part[n]))
			return -1;
		n++;
		p += len;
		if (!*p)
			break;
		if (*p++ != ':')
			return -1;
	}
	/* "M:SS", "H:MM:SS"; after "D-" also "D-HH" and "D-HH:MM" (sbatch's forms) */
	long h = 0, m = 0, s = 0;
	if (n == 3) {
		h = part[0], m = part[1], s = part[2];
	} else if (n == 2) {
		if (dash)
			h = part[0], m = part[1];
		else
			m = part[0], s = part[1];
	} else {
		if (!dash)
			return -1;
		h = part[0];
	}
	if (s > 59 || (m > 59 && (n == 3 || dash)))
		return -1;
	return ((d * 24 + h) * 60 + m) * 60 + s;
}

char *slurm_format_duration(const char *text)
{
	long s = slurm_parse_duration(text);
	if (s < 0)
		return xstrdup(text);
	if (s == 365L * 86400)
		return xstrdup("UNLIMITED");
	return slurm_format_seconds(s);
}

/* "CANCELLED by 1000" -> "CANCELLED" */
static char *state_word(const char *s)
{
	size_t n = strcspn(s, " ");
	return xstrndup(s, n);
}

void slurm_parse_exit_code(const char *s, int *code, int *sig)
{
	long c, g;
	const char *colon = strchr(s, ':');
	*code = *sig = -1;
	if (!colon)
		return;
	_cleanup_free_ char *a = xstrndup(s, (size_t)(colon - s));
	if (parse_long(a, 0, 255, &c) && parse_long(colon + 1, 0, 255, &g)) {
		*code = (int)c;
		*sig = (int)g;
	}
}

struct status_scan {
	struct slurm_job *jobs;
	size_t n;
	bool in_sacct;
};

static void status_one(void *data, char *line)
{
	struct status_scan *s = data;
	char *f[SACCT_FIELDS];
	if (streq(line, MARK_SACCT)) {
		s->in_sacct = true;
		return;
	}
	size_t nf = s->in_sacct ? SACCT_FIELDS : SQUEUE_FIELDS;
	if (!slurm_split_fields(line, f, nf) || !valid_job_id(f[0]) || !f[1][0])
		return;
	struct slurm_job j = { .exit_code = -1, .exit_signal = -1, .from_sacct = s->in_sacct };
	j.id = xstrdup(f[0]);
	j.state = state_word(f[1]);
	const char *by = after_prefix(f[1], "CANCELLED by ");
	j.cancelled_by = by && *by ? xstrdup(by) : NULL;
	j.elapsed = slurm_format_duration(f[2]);
	j.time_limit = slurm_format_duration(f[3]);
	j.nodes = xstrdup(f[4]);
	if (s->in_sacct) {
		slurm_parse_exit_code(f[5], &j.exit_code, &j.exit_signal);
		j.reason = xstrdup(f[6]);
	} else {
		j.reason = xstrdup(f[5]);
		/* every process ended with 0 (sacct is not asked about it: slurm_status_command) */
		if (streq(j.state, "COMPLETED"))
			j.exit_code = j.exit_signal = 0;
	}
	s->jobs = xrealloc(s->jobs, (s->n + 1) * sizeof(*s->jobs));
	s->jobs[s->n++] = j;
}

int slurm_parse_status(const char *out, struct slurm_job **jobs, size_t *n)
{
	struct status_scan s = { 0 };
	each_line(out, status_one, &s);
	*jobs = s.jobs;
	*n = s.n;
	return 0;
}

bool slurm_id_matches(const char *asked, const char *id)
{
	if (streq(asked, id))
		return true;
	if (strchr(asked, '_'))
		return false;
	size_t n = strlen(asked);
	return strncmp(asked, id, n) == 0 && id[n] == '_';
}

void slurm_select(const struct slurm_job *jobs, size_t n, const char *asked,
		  const struct slurm_job ***out, size_t *nout)
{
	*out = xcalloc(n + 1, sizeof(**out));
	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		const struct slurm_job *j = &jobs[i];
		if (!slurm_id_matches(asked, j->id))
			continue;
		bool take;
		if (!j->from_sacct) {
			/* squeue's row, unless it has ended and sacct has the end too (with
			 * the exit code); sacct may still say RUNNING for a job that ended a
			 * moment ago (accounting lags): then squeue's end is the answer. */
			take = slurm_state_active(j->state);
			if (!take) {
				take = true;
				for (size_t k = 0; k < n; k++)
					if (jobs[k].from_sacct && streq(jobs[k].id, j->id) &&
					    !slurm_state_active(jobs[k].state))
						take = false;
			}
		} else {
			/* sacct's row, unless squeue has this id active, or squeue answers for
			 * the job and no longer lists this active-looking id: accounting lags
			 * behind (an array's pending record "12_[2-5]" after tasks started). */
			bool squeue_knows = false, listed_active = false;
			for (size_t k = 0; k < n; k++) {
				if (jobs[k].from_sacct || !slurm_id_matches(asked, jobs[k].id))
					continue;
				squeue_knows = true;
				if (streq(jobs[k].id, j->id) && slurm_state_active(jobs[k].state))
					listed_active = true;
			}
			take = !listed_active && !(squeue_knows && slurm_state_active(j->state));
			/* The array's own record ("12") while its tasks ("12_0") are reported:
			 * accounting has not split it yet. */
			for (size_t k = 0; k < n && take; k++)
				if (!strchr(j->id, '_') && strchr(jobs[k].id, '_') &&
				    slurm_id_matches(j->id, jobs[k].id))
					take = false;
		}
		if (take)
			(*out)[(*nout)++] = j;
	}
}

/* ---- output paths ---- */

void slurm_job_paths_command(struct strbuf *sb, const char *id)
{
	marker_print(sb, MARK_USER, "\"$(id -un)\"");
	strbuf_adds(sb, "scontrol show job ");
	sh_quote(sb, id);
	/* A job that has left slurmctld's memory: accounting keeps its paths from
	 * 24.05 on (sacct's StdOut and StdErr; an older sacct refuses the field and
	 * prints nothing here), with the patterns filled in where sacct can
	 * (--expand-patterns), else as given (dispatch fills them in). */
	strbuf_adds(sb, " || {\nq() { sacct -n -X -P -j ");
	sh_quote(sb, id);
	/* (the probes ask about the job itself: 26.05 refuses -j 0) */
	strbuf_adds(sb, " \"$@\" 2>/dev/null; }\n"
		    "if q -o StdOut >/dev/null; then\n"
		    "\tx=--expand-patterns\n"
		    "\tq $x -o StdOut >/dev/null || x=\n\t");
	marker_print(sb, MARK_ACCT_OUT, "\"$(q $x -o StdOut | head -n 1)\"");
	strbuf_adds(sb, "\t");
	marker_print(sb, MARK_ACCT_ERR, "\"$(q $x -o StdErr | head -n 1)\"");
	strbuf_adds(sb, "\t");
	marker_print(sb, MARK_ACCT_NAME, "\"$(q -o JobName | head -n 1)\"");
	strbuf_adds(sb, "fi\n}\n");
}

struct paths_scan {
	struct slurm_paths *p;
};

static void paths_one(void *data, char *line)
{
	struct paths_scan *s = data;
	const char *l = line + strspn(line, " \t");
	const char *user = marker_value(line, MARK_USER);
	if (user && !s->p->user && *user) {
		s->p->user = xstrdup(user);
		return;
	}
	const char *v;
	if ((v = marker_value(line, MARK_ACCT_OUT))) {
		if (*v && !s->p->acct_out)
			s->p->acct_out = xstrdup(v);
		s->p->acct = true;
		return;
	}
	if ((v = marker_value(line, MARK_ACCT_ERR))) {
		if (*v && !s->p->acct_err)
			s->p->acct_err = xstrdup(v);
		s->p->acct = true;
		return;
	}
	if ((v = marker_value(line, MARK_ACCT_NAME))) {
		if (*v && !s->p->acct_name)
			s->p->acct_name = xstrdup(v);
		s->p->acct = true;
		return;
	}
	if (startswith(l, "JobId=")) {
		/* A pending array not yet split is one record for every task
		 * ("ArrayTaskId=0-3"), its %a filled with NO_VAL: no one path. */
		const char *t = strstr(l, " ArrayTaskId=");
		t = t ? t + strlen(" ArrayTaskId=") : NULL;
		s->p->records++;
		if (t && t[strspn(t, "0123456789")] != ' ' && t[strspn(t, "0123456789")] != '\0')
			s->p->records++;
		return;
	}
	if (s->p->records != 1)
		return; /* only the first job counts */
	if (startswith(l, "StdOut=") && !s->p->out && l[7])
		s->p->out = xstrdup(l + 7);
	else if (startswith(l, "StdErr=") && !s->p->err && l[7])
		s->p->err = xstrdup(l + 7);
}

void slurm_parse_job_paths(const char *out, struct slurm_paths *p)
{
	struct paths_scan s = { .p = p };
	memset(p, 0, sizeof(*p));
	each_line(out, paths_one, &s);
}

void slurm_paths_release(struct slurm_paths *p)
{
	free(p->out);
	free(p->err);
	free(p->user);
	free(p->acct_out);
	free(p->acct_err);
	free(p->acct_name);
	memset(p, 0, sizeof(*p));
}

char *slurm_expand_pattern(const char *pattern, const char *job_id, const char *task,
			   const char *name, const char *user)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = pattern; *p; p++) {
		const char *v = NULL;
		if (p[0] == '%') {
			switch (p[1]) {
			case 'j': case 'A': v = job_id; break;
			case 'a': v = task; break;
			case 'x': v = name; break;
			case 'u': v = user; break;
			case '%': v = "%"; break;
			default: break;
			}
		}
		if (v) {
			strbuf_adds(&sb, v);
			p++;
		} else {
			strbuf_addch(&sb, *p);
		}
	}
	return strbuf_detach(&sb);
}

/* ---- scancel ---- */

void slurm_cancel_command(struct strbuf *sb, char *const *ids)
{
	strbuf_adds(sb, "scancel");
	for (size_t i = 0; ids && ids[i]; i++) {
		strbuf_addch(sb, ' ');
		sh_quote(sb, ids[i]);
	}
	strbuf_addch(sb, '\n');
	marker_status(sb, MARK_SCANCEL_EXIT, "?");
}

/* ---- after a lost connection ---- */

void slurm_lookup_command(struct strbuf *sb, const char *stage_dir, const char *record,
			  const char *token)
{
	strbuf_adds(sb, "d=");
	sh_quote(sb, stage_dir);
	strbuf_adds(sb, "\nr=\"$d\"/");
	sh_quote(sb, record ? record : "sbatch");
	strbuf_adds(sb, "\nt=");
	sh_quote(sb, token);
	strbuf_adds(sb,
		"\nif [ -f \"$r.status\" ]; then\n"
		"\tprintf '" MARK_STATUS " %s\\n' \"$(cat \"$r.status\")\"\n"
		"\techo " MARK_OUT "\n"
		"\tcat \"$r.out\" 2>/dev/null\n"
		"\techo " MARK_ERR "\n"
		"\tcat \"$r.err\" 2>/dev/null\n"
		"\techo " MARK_END "\n"
		"fi\n"
		"echo " MARK_SQUEUE "\n"
		"squeue -h -t all -u \"$(id -un)\" -o '%i|%k' 2>/dev/null | grep -F -e \"$t\"\n"
		"echo " MARK_SACCT "\n"
		"sacct -n -P -X -u \"$(id -un)\" -S now-7days -o 'JobID,Comment,SubmitLine' 2>/dev/null |\n"
		"\tgrep -F -e \"$t\"\n"
		"echo " MARK_END "\n");
}

struct lookup_scan {
	struct slurm_lookup *res;
	const char *token;
	enum { L_NONE, L_OUT, L_ERR, L_SQUEUE, L_SACCT } where;
};

/* The job of an array task id, "123" of "123_4". */
static char *base_id(const char *id)
{
	return xstrndup(id, strspn(id, "0123456789"));
}

static void lookup_one(void *data, char *line)
{
	struct lookup_scan *s = data;
	struct slurm_lookup *r = s->res;
	long st;
	const char *status = marker_value(line, MARK_STATUS);
	if (status && *status && s->where == L_NONE) {
		if (parse_long(status, 0, 255, &st))
			r->sbatch_status = (int)st;
		return;
	}
	if (streq(line, MARK_OUT) && r->sbatch_status >= 0 && s->where == L_NONE) {
		s->where = L_OUT;
		return;
	}
	if (streq(line, MARK_ERR) && s->where == L_OUT) {
		s->where = L_ERR;
		return;
	}
	if (streq(line, MARK_SQUEUE)) {
		s->where = L_SQUEUE;
		return;
	}
	if (streq(line, MARK_SACCT) && s->where == L_SQUEUE) {
		s->where = L_SACCT;
		return;
	}
	if (streq(line, MARK_END)) {
		s->where = L_NONE;
		return;
	}
	char *f[3];
	switch (s->where) {
	case L_OUT:
		strbuf_addf(&r->out, "%s\n", line);
		break;
	case L_ERR:
		strbuf_addf(&r->err, "%s\n", line);
		break;
	case L_SQUEUE:
		if (!r->job_id && slurm_split_fields(line, f, 2) && valid_job_id(f[0]) &&
		    streq(f[1], s->token))
			r->job_id = base_id(f[0]);
		break;
	case L_SACCT:
		if (!r->job_id && slurm_split_fields(line, f, 3) && valid_job_id(f[0]) &&
		    (streq(f[1], s->token) || strstr(f[2], s->token)))
			r->job_id = base_id(f[0]);
		break;
	case L_NONE:
		break;
	}
}

void slurm_parse_lookup(const char *out, const char *token, struct slurm_lookup *res)
{
	struct lookup_scan s = { .res = res, .token = token };
	each_line(out, lookup_one, &s);
	/* The recorded answer of sbatch wins over the search: it is the job. */
	if (res->sbatch_status == 0) {
		char *id = NULL;
		if (slurm_parse_sbatch(res->out.buf, &id, NULL) == 0) {
			free(res->job_id);
			res->job_id = id;
		}
	}
}

void slurm_lookup_release(struct slurm_lookup *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->err);
	free(res->job_id);
	res->job_id = NULL;
}
