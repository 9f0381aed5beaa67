/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm_pending.h"

#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/util.h"
#include "sched/slurm/hostlist.h"
#include "gpu/node_health.h"
#include "remote/remote.h"
#include "sched/slurm/slurm.h"

#define SEC_JOBS MARK_PENDING_JOBS
#define SEC_DEPS MARK_PENDING_DEPS
#define SEC_NODES MARK_PENDING_NODES
#define SEC_PARTS MARK_PENDING_PARTS
#define SEC_HEALTH MARK_PENDING_HEALTH
#define SEC_QOS MARK_PENDING_QOS
#define SEC_ASSOC MARK_PENDING_ASSOC

#define JOB_FORMAT "%i|%P|%D|%C|%m|%b|%l|%q|%a|%n|%S|%r|%E"
enum { J_ID, J_PART, J_NODES, J_CPUS, J_MEM, J_TRES, J_TIME, J_QOS, J_ACCOUNT, J_REQ_NODES,
       J_START, J_REASON, J_DEP, J_N };
#define QOS_FORMAT "Name,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxWall,MaxTRES,GrpTRES,GrpJobs"
static const char *const qos_cols[] = { "Name", "MaxTRESPU", "MaxJobsPU", "MaxSubmitPU",
					"MaxWall", "MaxTRES", "GrpTRES", "GrpJobs" };
#define ASSOC_FORMAT "Account,Partition,QOS,GrpTRES,MaxTRES,GrpJobs,MaxJobs,MaxWall"
static const char *const assoc_cols[] = { "Account", "Partition", "QOS", "GrpTRES", "MaxTRES",
					  "GrpJobs", "MaxJobs", "MaxWall" };
#define NLIMIT 8

/* ---- the script ---- */

bool slurm_pending_wants_limits(const char *reason)
{
	return reason && (startswith(reason, "QOS") || startswith(reason, "Assoc"));
}

void slurm_pending_command(struct strbuf *sb, char *const *ids, bool limits)
{
	marker_echo(sb, SEC_JOBS);
	strbuf_adds(sb, "q=$(squeue --start -h -j ");
	slurm_id_list(sb, ids);
	strbuf_adds(sb, " -o '" JOB_FORMAT "' 2>/dev/null)\nprintf '%s\\n' \"$q\"\n");
	/* the jobs the dependencies name: "afterok:4(unfulfilled),afterany:5_1(...)" */
	strbuf_adds(sb, "d=$(printf '%s\\n' \"$q\" | awk -F'|' 'NF>=13{print $13}' | tr ',?' '\\n\\n' |"
			" sed -n 's/^[a-z]*:\\([0-9][0-9_]*\\).*/\\1/p' | sort -u | paste -sd, -)\n");
	marker_echo(sb, SEC_DEPS);
	strbuf_adds(sb, "[ -z \"$d\" ] || squeue -h -t all -j \"$d\" -o '%i|%T|%r' 2>/dev/null\n");
	marker_echo(sb, SEC_NODES);
	strbuf_adds(sb, "scontrol -o show node 2>/dev/null\n");
	marker_echo(sb, SEC_PARTS);
	strbuf_adds(sb, "scontrol -o show partition 2>/dev/null\n");
	marker_echo(sb, SEC_HEALTH);
	node_health_command(sb);
	if (!limits)
		return;
	marker_echo(sb, SEC_QOS);
	strbuf_adds(sb, "sacctmgr -nP show qos format=" QOS_FORMAT " 2>/dev/null\n");
	marker_echo(sb, SEC_ASSOC);
	strbuf_adds(sb, "sacctmgr -nP show assoc where users=\"$(id -un)\" format=" ASSOC_FORMAT
			" 2>/dev/null\n");
}

/* ---- what the script printed ---- */

struct pjob {
	char *f[J_N];
};
struct dep {
	char *id, *state, *reason;
};
struct node {
	char *name, *state, *partitions;
	long cpus, cpus_alloc, mem, mem_alloc, gpus, gpus_alloc; /* -1: not said */
};
struct part {
	char *name, *max_time, *max_nodes, *state;
};
struct limits {
	char *f[NLIMIT];
};

struct answer {
	struct pjob *jobs;
	size_t njobs;
	struct dep *deps;
	size_t ndeps;
	struct node *nodes;
	size_t nnodes;
	struct part *parts;
	size_t nparts;
	struct node_health *health;
	size_t nhealth;
	struct limits *qos, *assoc;
	size_t nqos, nassoc;
};

/* The value of KEY in scontrol's one-line "K=V K=V" record (values without spaces);
 * the first one counts. A copy, or NULL. */
static char *kv(const char *rec, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = rec; *p;) {
		p += strspn(p, " ");
		size_t n = strcspn(p, " ");
		if (n > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return xstrndup(p + kl + 1, n - kl - 1);
		p += n;
	}
	return NULL;
}

static long kv_long(const char *rec, const char *key)
{
	_cleanup_free_ char *v = kv(rec, key);
	long n;
	return v && parse_long(v, 0, 1L << 40, &n) ? n : -1;
}

/* gres/gpu's count in a TRES list ("cpu=2,mem=100M,gres/gpu=2"); 0 when absent, -1
 * when the list is not known. */
static long tres_gpus(const char *tres)
{
	if (!tres)
		return -1;
	for (const char *p = tres; *p;) {
		size_t len = strcspn(p, ",");
		if (startswith(p, "gres/gpu=")) {
			_cleanup_free_ char *v = xstrndup(p + 9, len - 9);
			long n;
			return parse_long(v, 0, 1L << 30, &n) ? n : -1;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

static void add_node(struct answer *a, char *line)
{
	/* the Reason (free text, last) is sinfo's to give whole */
	char *reason = strstr(line, " Reason=");
	if (reason)
		*reason = 0;
	char *name = kv(line, "NodeName");
	if (!name)
		return;
	_cleanup_free_ char *cfg = kv(line, "CfgTRES"), *alloc = kv(line, "AllocTRES");
	a->nodes = xrealloc(a->nodes, (a->nnodes + 1) * sizeof(*a->nodes));
	a->nodes[a->nnodes++] = (struct node){
		.name = name, .state = kv(line, "State"), .partitions = kv(line, "Partitions"),
		.cpus = kv_long(line, "CPUTot"), .cpus_alloc = kv_long(line, "CPUAlloc"),
		.mem = kv_long(line, "RealMemory"), .mem_alloc = kv_long(line, "AllocMem"),
		.gpus = tres_gpus(cfg), .gpus_alloc = alloc ? tres_gpus(alloc) : (cfg ? 0 : -1),
	};
}

static void add_part(struct answer *a, char *line)
{
	char *name = kv(line, "PartitionName");
	if (!name)
		return;
	a->parts = xrealloc(a->parts, (a->nparts + 1) * sizeof(*a->parts));
	a->parts[a->nparts++] = (struct part){ .name = name, .max_time = kv(line, "MaxTime"),
					       .max_nodes = kv(line, "MaxNodes"),
					       .state = kv(line, "State") };
}

static void add_limits(struct limits **v, size_t *n, char *line)
{
	char *f[NLIMIT];
	if (!slurm_split_fields(line, f, NLIMIT) || strchr(f[NLIMIT - 1], '|'))
		return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	for (size_t i = 0; i < NLIMIT; i++)
		(*v)[*n].f[i] = xstrdup(f[i]);
	(*n)++;
}

static void parse_answer(const char *out, struct answer *a)
{
	enum { NONE, JOBS, DEPS, NODES, PARTS, HEALTH, QOS, ASSOC } sec = NONE;
	static const char *const marks[] = { [JOBS] = SEC_JOBS, [DEPS] = SEC_DEPS,
					     [NODES] = SEC_NODES, [PARTS] = SEC_PARTS,
					     [HEALTH] = SEC_HEALTH, [QOS] = SEC_QOS,
					     [ASSOC] = SEC_ASSOC };
	_cleanup_strbuf_ struct strbuf health = STRBUF_INIT;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *l; (l = line_next(&it));) {
		bool mark = false;
		for (size_t s = JOBS; s < ARRAY_SIZE(marks) && !mark; s++)
			if (streq(l, marks[s])) {
				sec = s;
				mark = true;
			}
		if (mark || !*l)
			continue;
		char *f[J_N];
		switch (sec) {
		case JOBS:
			if (!slurm_split_fields(l, f, J_N) || !*f[J_ID] || !*f[J_REASON])
				break;
			a->jobs = xrealloc(a->jobs, (a->njobs + 1) * sizeof(*a->jobs));
			for (size_t i = 0; i < J_N; i++)
				a->jobs[a->njobs].f[i] = xstrdup(f[i]);
			a->njobs++;
			break;
		case DEPS:
			if (!slurm_split_fields(l, f, 3) || !*f[0])
				break;
			a->deps = xrealloc(a->deps, (a->ndeps + 1) * sizeof(*a->deps));
			a->deps[a->ndeps++] = (struct dep){ .id = xstrdup(f[0]), .state = xstrdup(f[1]),
							    .reason = xstrdup(f[2]) };
			break;
		case NODES: add_node(a, l); break;
		case PARTS: add_part(a, l); break;
		case HEALTH: strbuf_addf(&health, "%s\n", l); break;
		case QOS: add_limits(&a->qos, &a->nqos, l); break;
		case ASSOC: add_limits(&a->assoc, &a->nassoc, l); break;
		case NONE: break;
		}
	}
	line_iter_release(&it);
	a->nhealth = health.len ? node_health_parse(health.buf, &a->health) : 0;
}

static void answer_release(struct answer *a)
{
	for (size_t i = 0; i < a->njobs; i++)
		for (size_t k = 0; k < J_N; k++)
			free(a->jobs[i].f[k]);
	for (size_t i = 0; i < a->ndeps; i++) {
		free(a->deps[i].id);
		free(a->deps[i].state);
		free(a->deps[i].reason);
	}
	for (size_t i = 0; i < a->nnodes; i++) {
		free(a->nodes[i].name);
		free(a->nodes[i].state);
		free(a->nodes[i].partitions);
	}
	for (size_t i = 0; i < a->nparts; i++) {
		free(a->parts[i].name);
		free(a->parts[i].max_time);
		free(a->parts[i].max_nodes);
		free(a->parts[i].state);
	}
	for (size_t i = 0; i < a->nqos; i++)
		for (size_t k = 0; k < NLIMIT; k++)
			free(a->qos[i].f[k]);
	for (size_t i = 0; i < a->nassoc; i++)
		for (size_t k = 0; k < NLIMIT; k++)
			free(a->assoc[i].f[k]);
	free(a->jobs);
	free(a->deps);
	free(a->nodes);
	free(a->parts);
	free(a->qos);
	free(a->assoc);
	node_health_free(a->health, a->nhealth);
}

/* ---- one job's detail ---- */

static bool known(const char *s)
{
	return s && *s && !streq(s, "N/A") && !streq(s, "(null)");
}

static void jstr(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static const struct part *find_part(const struct answer *a, const char *name)
{
	for (size_t i = 0; i < a->nparts; i++)
		if (streq(a->parts[i].name, name))
			return &a->parts[i];
	return NULL;
}

static bool in_list(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, word, n))
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

/* A node that takes no new job: down, drained, failed or powered off. */
static bool node_usable(const struct node *n)
{
	static const char *const bad[] = { "DOWN", "DRAIN", "FAIL", "POWER", "NOT_RESPONDING" };
	if (!n->state)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (strstr(n->state, bad[i]))
			return false;
	return true;
}

static void request(const struct pjob *j, cJSON *d, struct strbuf *t)
{
	const char *const *f = (const char *const *)j->f;
	cJSON *o = cJSON_AddObjectToObject(d, "request");
	long nodes = -1, cpus = -1;
	if (parse_long(f[J_NODES], 0, 1L << 30, &nodes))
		cJSON_AddNumberToObject(o, "nodes", (double)nodes);
	if (parse_long(f[J_CPUS], 0, 1L << 30, &cpus))
		cJSON_AddNumberToObject(o, "cpus", (double)cpus);
	strbuf_adds(t, "asks");
	if (nodes >= 0)
		strbuf_addf(t, " %ld node%s,", nodes, nodes == 1 ? "" : "s");
	if (cpus >= 0)
		strbuf_addf(t, " %ld CPU%s,", cpus, cpus == 1 ? "" : "s");
	if (known(f[J_MEM])) {
		cJSON_AddStringToObject(o, "memory", f[J_MEM]);
		strbuf_addf(t, " %s memory,", f[J_MEM]);
	}
	if (known(f[J_TRES])) {
		cJSON_AddStringToObject(o, "tres_per_node", f[J_TRES]);
		strbuf_addf(t, " %s per node,", f[J_TRES]);
	}
	cJSON_AddStringToObject(o, "time_limit", f[J_TIME]);
	strbuf_addf(t, " --time %s", f[J_TIME]);
}

/* What the job's partition has free on the nodes that take jobs. */
static void partition_free(const struct answer *a, const char *part, cJSON *d, struct strbuf *t)
{
	long cpus = 0, cpus_free = 0, gpus = 0, gpus_free = 0, mem = 0, mem_free = 0;
	long nodes = 0, up = 0;
	bool gpus_known = true, mem_known = true;
	for (size_t i = 0; i < a->nnodes; i++) {
		const struct node *n = &a->nodes[i];
		if (!in_list(n->partitions, part))
			continue;
		nodes++;
		if (!node_usable(n))
			continue;
		up++;
		if (n->cpus >= 0 && n->cpus_alloc >= 0) {
			cpus += n->cpus;
			cpus_free += n->cpus - n->cpus_alloc;
		}
		if (n->gpus >= 0 && n->gpus_alloc >= 0) {
			gpus += n->gpus;
			gpus_free += n->gpus - n->gpus_alloc;
		} else {
			gpus_known = false;
		}
		if (n->mem >= 0 && n->mem_alloc >= 0) {
			mem += n->mem;
			mem_free += n->mem - n->mem_alloc;
		} else {
			mem_known = false;
		}
	}
	if (!nodes)
		return;
	cJSON *o = cJSON_AddObjectToObject(d, "free");
	cJSON_AddStringToObject(o, "partition", part);
	cJSON_AddNumberToObject(o, "nodes", (double)nodes);
	cJSON_AddNumberToObject(o, "nodes_up", (double)up);
	cJSON_AddNumberToObject(o, "cpus", (double)cpus_free);
	cJSON_AddNumberToObject(o, "cpus_total", (double)cpus);
	strbuf_addf(t, "; partition %s has %ld of %ld CPUs", part, cpus_free, cpus);
	if (gpus_known && gpus > 0) {
		cJSON_AddNumberToObject(o, "gpus", (double)gpus_free);
		cJSON_AddNumberToObject(o, "gpus_total", (double)gpus);
		strbuf_addf(t, ", %ld of %ld GPUs", gpus_free, gpus);
	}
	if (mem_known) {
		cJSON_AddNumberToObject(o, "memory_mb", (double)mem_free);
		cJSON_AddNumberToObject(o, "memory_mb_total", (double)mem);
		strbuf_addf(t, ", %ldM of %ldM memory", mem_free, mem);
	}
	strbuf_addf(t, " free on %ld of %ld nodes up", up, nodes);
}

static void depends(const struct answer *a, const char *dep, cJSON *d, struct strbuf *t)
{
	cJSON *arr = cJSON_AddArrayToObject(d, "depends_on");
	if (!known(dep))
		return;
	_cleanup_free_ char *copy = xstrdup(dep);
	char *save = NULL;
	strbuf_adds(t, "waits on");
	size_t k = 0;
	for (char *w = strtok_r(copy, ",?", &save); w; w = strtok_r(NULL, ",?", &save)) {
		/* "afterok:4(unfulfilled)", "singleton(unfulfilled)" */
		char *paren = strchr(w, '(');
		_cleanup_free_ char *status = paren ? xstrndup(paren + 1, strcspn(paren + 1, ")")) : NULL;
		if (paren)
			*paren = 0;
		char *colon = strchr(w, ':');
		const char *type = w, *id = colon ? colon + 1 : NULL;
		if (colon)
			*colon = 0;
		const struct dep *found = NULL;
		for (size_t i = 0; id && i < a->ndeps && !found; i++)
			if (streq(a->deps[i].id, id))
				found = &a->deps[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "type", type);
		jstr(o, "job", id);
		jstr(o, "status", status);
		const char *state = found ? found->state : id ? "not in the queue" : NULL;
		jstr(o, "state", state);
		cJSON_AddItemToArray(arr, o);
		strbuf_addf(t, "%s %s%s%s", k++ ? "," : "", id ? id : type, id ? " (" : "",
			    id ? type : "");
		if (id && found && known(found->reason) && !streq(found->reason, "None"))
			strbuf_addf(t, ": %s, %s)", state, found->reason);
		else if (id)
			strbuf_addf(t, ": %s)", state);
	}
}

/* The nodes the job asked for or SLURM says are unavailable, with their states and
 * drain reasons. */
static void unavailable(const struct answer *a, const struct pjob *j, cJSON *d, struct strbuf *t)
{
	const char *names = strstr(j->f[J_REASON], "UnavailableNodes:");
	names = names ? names + strlen("UnavailableNodes:") : known(j->f[J_REQ_NODES]) ? j->f[J_REQ_NODES] : NULL;
	cJSON *arr = cJSON_AddArrayToObject(d, "nodes");
	_cleanup_strv_free_ char **hosts = NULL;
	struct dp_error err = { 0 };
	if (!names || hostlist_expand_max(names, 64, &hosts, &err) < 0)
		return;
	for (size_t i = 0; hosts && hosts[i]; i++) {
		const struct node_health *h = NULL;
		for (size_t k = 0; k < a->nhealth && !h; k++)
			if (streq(a->health[k].node, hosts[i]))
				h = &a->health[k];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "node", hosts[i]);
		jstr(o, "state", h ? h->state : NULL);
		jstr(o, "reason", h ? h->reason : NULL);
		jstr(o, "by", h ? h->by : NULL);
		jstr(o, "since", h ? h->since : NULL);
		cJSON_AddItemToArray(arr, o);
		strbuf_addf(t, "%s%s %s", i ? "; " : "", hosts[i], h ? h->state : "(not known to sinfo)");
		if (h && h->reason)
			strbuf_addf(t, ": %s", h->reason);
		if (h && h->by && h->since)
			strbuf_addf(t, " (%s, %s)", h->by, h->since);
	}
}

/* The limit column a QOS* or Assoc* reason names ("QOSMaxGRESPerUser": MaxTRESPU). */
static const char *limit_column(const char *reason, bool qos)
{
	if (strstr(reason, "SubmitJob"))
		return "MaxSubmitPU";
	if (strstr(reason, "WallDuration"))
		return "MaxWall";
	if (strstr(reason, "GrpJob") || streq(reason, "QOSJobLimit"))
		return "GrpJobs";
	if (strstr(reason, "MaxJobs"))
		return qos ? "MaxJobsPU" : "MaxJobs";
	if (qos && strstr(reason, "PerUser"))
		return "MaxTRESPU";
	if (strstr(reason, "PerJob"))
		return "MaxTRES";
	if (strstr(reason, "Grp"))
		return "GrpTRES";
	return NULL;
}

static void limits(const struct answer *a, const struct pjob *j, cJSON *d, struct strbuf *t)
{
	const char *reason = j->f[J_REASON];
	bool qos = startswith(reason, "QOS");
	const char *const *cols = qos ? qos_cols : assoc_cols;
	const struct limits *row = NULL;
	for (size_t i = 0; i < (qos ? a->nqos : a->nassoc) && !row; i++) {
		const struct limits *r = qos ? &a->qos[i] : &a->assoc[i];
		if (qos ? streq(r->f[0], j->f[J_QOS])
			: (!known(j->f[J_ACCOUNT]) || streq(r->f[0], j->f[J_ACCOUNT])) &&
				  (!*r->f[1] || streq(r->f[1], j->f[J_PART])))
			row = r;
	}
	if (!row)
		return;
	const char *col = limit_column(reason, qos);
	cJSON *o = cJSON_AddObjectToObject(d, "limit");
	cJSON_AddStringToObject(o, qos ? "qos" : "account", row->f[0]);
	cJSON *all = cJSON_AddObjectToObject(o, "limits");
	strbuf_addf(t, "%s %s", qos ? "QOS" : "association of account", row->f[0]);
	const char *value = NULL;
	size_t first = qos ? 1 : 3, shown = 0;
	for (size_t i = first; i < NLIMIT; i++) {
		if (!*row->f[i])
			continue;
		cJSON_AddStringToObject(all, cols[i], row->f[i]);
		if (col && streq(col, cols[i]))
			value = row->f[i];
	}
	if (value) {
		cJSON_AddStringToObject(o, "name", col);
		cJSON_AddStringToObject(o, "value", value);
		strbuf_addf(t, ": %s=%s", col, value);
		return;
	}
	cJSON_AddNullToObject(o, "name");
	cJSON_AddNullToObject(o, "value");
	for (size_t i = first; i < NLIMIT; i++)
		if (*row->f[i])
			strbuf_addf(t, "%s%s=%s", shown++ ? ", " : ": limits ", cols[i], row->f[i]);
	if (!shown)
		strbuf_adds(t, ": no limit set");
}

static void time_limit(const struct answer *a, const struct pjob *j, cJSON *d, struct strbuf *t)
{
	const struct part *p = find_part(a, j->f[J_PART]);
	if (!p || !p->max_time)
		return;
	_cleanup_free_ char *max = slurm_format_duration(p->max_time);
	cJSON_AddStringToObject(d, "max_time", max);
	strbuf_addf(t, "asks --time %s; partition %s allows %s (MaxTime)", j->f[J_TIME], p->name, max);
}

static void node_limit(const struct answer *a, const struct pjob *j, cJSON *d, struct strbuf *t)
{
	const struct part *p = find_part(a, j->f[J_PART]);
	if (!p || !p->max_nodes)
		return;
	cJSON_AddStringToObject(d, "max_nodes", p->max_nodes);
	strbuf_addf(t, "asks %s nodes; partition %s allows %s (MaxNodes)", j->f[J_NODES], p->name,
		    p->max_nodes);
}

static void build(const struct answer *a, const struct pjob *j, struct slurm_pending *p)
{
	const char *reason = j->f[J_REASON], *id = j->f[J_ID];
	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT, req = STRBUF_INIT;
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "partition", j->f[J_PART]);
	request(j, d, &req);
	const char *start = known(j->f[J_START]) ? j->f[J_START] : "N/A";
	cJSON_AddStringToObject(d, "expected_start", start);
	if (streq(reason, "Resources") || streq(reason, "Priority")) {
		/* a job submitted to several partitions ("gpu,cpu"): the first one's */
		_cleanup_free_ char *part = xstrndup(j->f[J_PART], strcspn(j->f[J_PART], ","));
		strbuf_adds(&t, req.buf);
		partition_free(a, part, d, &t);
		strbuf_addf(&t, "; expected start %s", start);
	} else if (startswith(reason, "Dependency")) {
		depends(a, j->f[J_DEP], d, &t);
	} else if (streq(reason, "JobHeldUser") || streq(reason, "launch failed requeued held")) {
		_cleanup_free_ char *rel = xasprintf("scontrol release %s", id);
		cJSON_AddStringToObject(d, "release", rel);
		strbuf_addf(&t, "release it with: %s", rel);
	} else if (streq(reason, "JobHeldAdmin")) {
		_cleanup_free_ char *rel = xasprintf("scontrol release %s", id);
		cJSON_AddStringToObject(d, "release", rel);
		strbuf_addf(&t, "only an administrator (root or a SLURM operator) can release it: %s", rel);
	} else if (startswith(reason, "ReqNodeNotAvail")) {
		unavailable(a, j, d, &t);
	} else if (streq(reason, "PartitionTimeLimit")) {
		time_limit(a, j, d, &t);
	} else if (streq(reason, "PartitionNodeLimit")) {
		node_limit(a, j, d, &t);
	} else if (slurm_pending_wants_limits(reason)) {
		limits(a, j, d, &t);
	}
	*p = (struct slurm_pending){ .id = xstrdup(id), .reason = xstrdup(reason),
				     .text = t.len ? strbuf_detach(&t) : NULL, .detail = d };
}

size_t slurm_pending_parse(const char *out, struct slurm_pending **jobs)
{
	struct answer a = { 0 };
	parse_answer(out, &a);
	*jobs = a.njobs ? xcalloc(a.njobs, sizeof(**jobs)) : NULL;
	for (size_t i = 0; i < a.njobs; i++)
		build(&a, &a.jobs[i], &(*jobs)[i]);
	size_t n = a.njobs;
	answer_release(&a);
	return n;
}

const struct slurm_pending *slurm_pending_find(const struct slurm_pending *jobs, size_t n,
					       const char *id)
{
	for (size_t i = 0; id && i < n; i++)
		if (streq(jobs[i].id, id))
			return &jobs[i];
	return NULL;
}

void slurm_pending_free(struct slurm_pending *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(jobs[i].id);
		free(jobs[i].reason);
		free(jobs[i].text);
		cJSON_Delete(jobs[i].detail);
	}
	free(jobs);
}

int slurm_pending_fetch(struct ssh_session *ss, char *const *ids, bool limits,
			struct slurm_pending **jobs, size_t *n, struct dp_error *err)
{
	_cleanup_strv_free_ char **asked = NULL;
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	*jobs = NULL;
	*n = 0;
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
	slurm_pending_command(remote_section(&rs, REMOTE_PENDING), asked, limits);
	int r = remote_run(ss, &rs, &rr, err);
	if (r == 0)
		*n = slurm_pending_parse(rr.out.buf, jobs);
	remote_reply_release(&rr);
	remote_script_release(&rs);
	return r < 0 ? -1 : 0;
}
