/* SPDX-License-Identifier: MIT */
/* A sweep as one object: sweeps.h. */
#include "jobs/sweeps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "jobref.h"

#define HEX "0123456789abcdef"

bool sweeps_is_ref(const char *arg)
{
	return strncmp(arg, "sweep-", 6) == 0 && arg[6] && strspn(arg + 6, HEX) == strlen(arg + 6);
}

int sweeps_resolve(struct ledger *l, const char *arg, char **id, struct dp_error *err)
{
	_cleanup_strv_free_ char **ids = NULL;
	*id = NULL;
	if (ledger_sweep_ids(l, arg, &ids, err) < 0)
		return -1;
	if (!ids || !ids[0])
		return dp_err(err, DPE_NOTFOUND, "unknown sweep '%s': no sweep in the job ledger "
			      "has that id ('dispatch jobs' lists them)", arg);
	if (ids[1]) {
		_cleanup_strbuf_ struct strbuf all = STRBUF_INIT;
		for (size_t i = 0; ids[i]; i++)
			strbuf_addf(&all, "%s%s", i ? ", " : "", ids[i]);
		return dp_err(err, DPE_INPUT, "sweep '%s' is ambiguous: it starts %s; give more of "
			      "its id", arg, all.buf);
	}
	*id = xstrdup(ids[0]);
	return 0;
}

/* A decimal index below size at *p, moved past it. */
static bool index_at(const char **p, size_t size, size_t *v)
{
	if (**p < '0' || **p > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(*p, &end, 10);
	if (errno || x >= size)
		return false;
	*v = (size_t)x;
	*p = end;
	return true;
}

bool sweeps_parse_tasks(const char *spec, bool *set, size_t size)
{
	const char *p = spec;
	bool bracket = *p == '[';
	p += bracket;
	do {
		size_t a, b;
		if (!index_at(&p, size, &a))
			return false;
		b = a;
		if (*p == '-' && (p++, !index_at(&p, size, &b)))
			return false;
		if (b < a)
			return false;
		size_t step = 1;
		if (*p == ':') { /* SLURM's 0-9:2 */
			p++;
			if (!index_at(&p, (size_t)-1, &step) || step == 0)
				return false;
		}
		for (size_t k = a; k <= b; k += step)
			set[k] = true;
	} while (*p == ',' && p++);
	if (*p == '%') { /* the throttle */
		p++;
		p += strspn(p, "0123456789");
	}
	if (bracket && *p++ != ']')
		return false;
	return *p == '\0';
}

/* The tasks rec runs (its sweep_tasks; all of them when it has none). */
static bool *row_tasks(const struct ledger_job *rec, size_t size)
{
	bool *set = xcalloc(size + 1, sizeof(*set));
	if (!rec->sweep_tasks) {
		for (size_t k = 0; k < size; k++)
			set[k] = true;
	} else if (!sweeps_parse_tasks(rec->sweep_tasks, set, size)) {
		memset(set, 0, size * sizeof(*set));
	}
	return set;
}

static size_t put(const struct ledger_job *rec, const struct job_state *st, size_t k,
		  struct sweep_task *tasks)
{
	if (tasks[k].rec && tasks[k].rec->row > rec->row)
		return 0;
	free(tasks[k].job);
	tasks[k] = (struct sweep_task){ .rec = rec, .st = st, .job = sweeps_task_job(rec, k) };
	return 1;
}

size_t sweeps_take(const struct ledger_job *rec, const struct job_state *st,
		   struct sweep_task *tasks, size_t size)
{
	if (!rec->job_id || !st->id || !size)
		return 0;
	_cleanup_free_ bool *mine = row_tasks(rec, size);
	size_t took = 0, idlen = strlen(rec->job_id);
	if (!jobref_is_slurm_id(rec->job_id)) { /* a plain host's run: one task */
		for (size_t k = 0; k < size && streq(st->id, rec->job_id); k++)
			if (mine[k])
				return put(rec, st, k, tasks);
		return 0;
	}
	if (strncmp(st->id, rec->job_id, idlen) != 0 || st->id[idlen] != '_')
		return 0;
	/* the array's task ids, each its index less sweep_first */
	size_t first = rec->sweep_first > 0 ? (size_t)rec->sweep_first : 0;
	_cleanup_free_ bool *ids = xcalloc(size + 1, sizeof(*ids));
	if (first >= size || !sweeps_parse_tasks(st->id + idlen + 1, ids, size - first))
		return 0;
	for (size_t t = 0; t + first < size; t++)
		if (ids[t] && mine[t + first])
			took += put(rec, st, t + first, tasks);
	return took;
}

const struct ledger_job *sweeps_row_of(const struct ledger_job *rows, size_t n, size_t k)
{
	for (size_t i = n; i-- > 0;) {
		size_t size = rows[i].sweep_size > 0 ? (size_t)rows[i].sweep_size : 0;
		if (!rows[i].job_id || k >= size)
			continue;
		_cleanup_free_ bool *mine = row_tasks(&rows[i], size);
		if (mine[k])
			return &rows[i];
	}
	return NULL;
}

char *sweeps_task_job(const struct ledger_job *rec, size_t task)
{
	if (!jobref_is_slurm_id(rec->job_id))
		return xstrdup(rec->job_id);
	size_t first = rec->sweep_first > 0 ? (size_t)rec->sweep_first : 0;
	return xasprintf("%s_%zu", rec->job_id, task - first);
}

void sweep_tasks_free(struct sweep_task *tasks, size_t size)
{
	for (size_t k = 0; tasks && k < size; k++)
		free(tasks[k].job);
	free(tasks);
}
