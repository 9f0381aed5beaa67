/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm_end.h"

#include <limits.h>
#include <stdlib.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/util.h"
#include "sched/slurm/hostlist.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_steps.h"

#define END_FORMAT "JobID,State,ExitCode,MaxRSS,MaxRSSNode,ReqMem,AllocTRES,NodeList"
#define END_FIELDS 8

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

void slurm_end_command(struct strbuf *sb, char *const *ids, char *const *uids,
		       char *const *nodes)
{
	marker_echo(sb, MARK_FAIL_STEPS);
	strbuf_adds(sb, "sacct -n -P -j ");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, " -o '" END_FORMAT "'\n");
	marker_status(sb, MARK_FAIL_STEPS_EXIT, "?");
	marker_echo(sb, MARK_FAIL_USERS);
	for (size_t i = 0; uids && uids[i]; i++) {
		if (!all_digits(uids[i]))
			continue;
		strbuf_adds(sb, "getent passwd ");
		sh_quote(sb, uids[i]);
		strbuf_adds(sb, "\n");
	}
	if (nodes && nodes[0]) {
		marker_echo(sb, MARK_FAIL_NODES);
		strbuf_adds(sb, "sinfo -h -N -n ");
		slurm_id_list(sb, nodes);
		strbuf_adds(sb, " -o '%N|%T|%E'\n");
	}
	/* the command's status is the answer's, not the last getent's or sinfo's */
	strbuf_adds(sb, "true\n");
}

/* The value of key in a TRES list "cpu=2,mem=300M,node=2", NULL when absent. */
static char *tres_value(const char *tres, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = tres; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=')
			return xstrndup(p + kl + 1, len - kl - 1);
		p += len + (p[len] == ',');
	}
	return NULL;
}

static long tres_count(const char *tres, const char *key)
{
	_cleanup_free_ char *v = tres_value(tres, key);
	long n;
	return v && parse_long(v, 1, 1000000000, &n) ? n : 1;
}

long long slurm_mem_per_node(const char *alloc_tres, const char *req_mem)
{
	long nodes = tres_count(alloc_tres, "node");
	_cleanup_free_ char *mem = tres_value(alloc_tres, "mem");
	long long v = mem ? slurm_parse_size(mem) : -1;
	if (v >= 0)
		return v / nodes;
	if (!req_mem || !*req_mem)
		return -1;
	/* sizes without a unit are megabytes in ReqMem */
	size_t len = strlen(req_mem);
	char kind = req_mem[len - 1];
	_cleanup_free_ char *num = xstrndup(req_mem, kind == 'n' || kind == 'c' ? len - 1 : len);
	v = slurm_parse_size(num);
	if (v >= 0 && all_digits(num))
		v = v > LLONG_MAX / (1024 * 1024) ? -1 : v * 1024 * 1024;
	if (v < 0)
		return -1;
	if (kind == 'n')
		return v;
	if (kind == 'c') {
		long cpus = tres_count(alloc_tres, "cpu") / nodes;
		cpus = cpus > 0 ? cpus : 1;
		return v > LLONG_MAX / cpus ? -1 : v * cpus;
	}
	return v / nodes;
}

char *slurm_human_bytes(long long bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	if (bytes < 1024)
		return xasprintf("%lld B", bytes);
	double v = (double)bytes / 1024;
	size_t u = 0;
	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	return xasprintf("%.1f %s", v, units[u]);
}

struct scan {
	struct slurm_end *e;
	enum { BEFORE, STEPS, USERS, NODES } where;
};

static void step_row(struct slurm_end *e, char *line)
{
	char *f[END_FIELDS];
	if (!slurm_split_fields(line, f, END_FIELDS))
		return;
	size_t jl = strcspn(f[0], ".");
	if (jl == 0 || !f[1][0] || f[0][0] < '0' || f[0][0] > '9')
		return;
	struct slurm_end_row r = { .job = xstrndup(f[0], jl),
				   .step = xstrdup(f[0][jl] ? f[0] + jl + 1 : ""),
				   .state = xstrndup(f[1], strcspn(f[1], " ")) };
	slurm_parse_exit_code(f[2], &r.exit_code, &r.signal);
	r.max_rss = slurm_parse_size(f[3]);
	r.rss_node = xstrdup(f[4]);
	r.mem_limit = slurm_mem_per_node(f[6], f[5]);
	r.nodes = xstrdup(f[7]);
	e->rows = xrealloc(e->rows, (e->n + 1) * sizeof(*e->rows));
	e->rows[e->n++] = r;
}

/* "name:x:1001:1001:gecos:/home/name:/bin/sh" */
static void passwd_line(struct slurm_end *e, const char *line)
{
	const char *c1 = strchr(line, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1 || c1 == line || !c2)
		return;
	_cleanup_free_ char *uid = xstrndup(c2 + 1, strcspn(c2 + 1, ":"));
	if (!all_digits(uid) || strv_contains(e->uids, uid))
		return;
	strv_add(&e->uids, uid);
	strv_push(&e->names, xstrndup(line, (size_t)(c1 - line)));
}

/* "node2|down*|Not responding" (sinfo -N lists a node once per partition) */
static void node_line(struct slurm_end *e, char *line)
{
	char *f[3];
	if (!slurm_split_fields(line, f, 3) || !f[0][0] || !f[1][0])
		return;
	for (size_t i = 0; i < e->nnodes; i++)
		if (streq(e->nodes[i].name, f[0]))
			return;
	e->nodes = xrealloc(e->nodes, (e->nnodes + 1) * sizeof(*e->nodes));
	e->nodes[e->nnodes++] = (struct slurm_end_node){ .name = xstrdup(f[0]),
							  .state = xstrdup(f[1]),
							  .reason = xstrdup(f[2]) };
}

static void one(void *data, char *line)
{
	struct scan *s = data;
	const char *v;
	if (marker_value(line, MARK_FAIL_STEPS)) {
		s->where = STEPS;
	} else if ((v = marker_value(line, MARK_FAIL_STEPS_EXIT))) {
		long st;
		s->e->sacct_exit = parse_long(v, 0, 255, &st) ? (int)st : -1;
	} else if (marker_value(line, MARK_FAIL_USERS)) {
		s->where = USERS;
	} else if (marker_value(line, MARK_FAIL_NODES)) {
		s->where = NODES;
	} else if (s->where == NODES) {
		node_line(s->e, line);
	} else if (s->where == STEPS) {
		step_row(s->e, line);
	} else if (s->where == USERS) {
		passwd_line(s->e, line);
	}
}

void slurm_end_parse(const char *out, struct slurm_end *e)
{
	*e = (struct slurm_end){ .sacct_exit = -1 };
	struct scan s = { .e = e };
	each_line(out, one, &s);
	/* a step without a limit of its own has its job's */
	for (size_t i = 0; i < e->n; i++) {
		struct slurm_end_row *r = &e->rows[i];
		for (size_t k = 0; k < e->n && r->mem_limit < 0 && r->step[0]; k++)
			if (!e->rows[k].step[0] && streq(e->rows[k].job, r->job))
				r->mem_limit = e->rows[k].mem_limit;
	}
}

void slurm_end_release(struct slurm_end *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->rows[i].job);
		free(e->rows[i].step);
		free(e->rows[i].state);
		free(e->rows[i].rss_node);
		free(e->rows[i].nodes);
	}
	free(e->rows);
	for (size_t i = 0; i < e->nnodes; i++) {
		free(e->nodes[i].name);
		free(e->nodes[i].state);
		free(e->nodes[i].reason);
	}
	free(e->nodes);
	strv_free(e->uids);
	strv_free(e->names);
	*e = (struct slurm_end){ .sacct_exit = -1 };
}

const struct slurm_end_row *slurm_end_memory(const struct slurm_end *e, const char *job)
{
	const struct slurm_end_row *best = NULL;
	for (size_t i = 0; i < e->n; i++) {
		const struct slurm_end_row *r = &e->rows[i];
		if (!r->step[0] || !streq(r->job, job) || r->max_rss < 0 || r->mem_limit <= 0)
			continue;
		if (!best || (double)r->max_rss / (double)r->mem_limit >
				     (double)best->max_rss / (double)best->mem_limit)
			best = r;
	}
	return best;
}

const char *slurm_end_user(const struct slurm_end *e, const char *uid)
{
	for (size_t i = 0; uid && e->uids && e->uids[i]; i++)
		if (streq(e->uids[i], uid))
			return e->names[i];
	return NULL;
}

/* down, down*, drained, draining, fail, failing; any state with '*': not responding */
static bool node_failed(const char *state)
{
	return startswith(state, "down") || startswith(state, "drain") ||
	       startswith(state, "fail") || strchr(state, '*') != NULL;
}

char *slurm_end_failed_nodes(const struct slurm_end *e, const char *hostlist)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **hosts = NULL;
	if (!hostlist || !*hostlist || hostlist_expand_max(hostlist, 4096, &hosts, &err) < 0)
		return NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < e->nnodes; i++) {
		const struct slurm_end_node *nd = &e->nodes[i];
		if (!strv_contains(hosts, nd->name) || !node_failed(nd->state))
			continue;
		strbuf_addf(&sb, "%s%s %s", sb.len ? ", " : "", nd->name, nd->state);
		if (nd->reason[0] && !streq(nd->reason, "none"))
			strbuf_addf(&sb, " (%s)", nd->reason);
	}
	return sb.len ? strbuf_detach(&sb) : NULL;
}
