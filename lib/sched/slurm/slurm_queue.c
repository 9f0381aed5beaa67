/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm_queue.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "sched/slurm/slurm.h"

#define QUEUE_FORMAT "%i|%P|%u|%T|%M|%D|%N|%r|%j"
#define QUEUE_FIELDS 9

static const struct {
	const char *shortname, *name;
} state_names[] = {
	{ "BF", "BOOT_FAIL" }, { "CA", "CANCELLED" }, { "CD", "COMPLETED" },
	{ "CF", "CONFIGURING" }, { "CG", "COMPLETING" }, { "DL", "DEADLINE" },
	{ "F", "FAILED" }, { "NF", "NODE_FAIL" }, { "OOM", "OUT_OF_MEMORY" },
	{ "PD", "PENDING" }, { "PR", "PREEMPTED" }, { "R", "RUNNING" },
	{ "RD", "RESV_DEL_HOLD" }, { "RF", "REQUEUE_FED" }, { "RH", "REQUEUE_HOLD" },
	{ "RQ", "REQUEUED" }, { "RS", "RESIZING" }, { "RV", "REVOKED" },
	{ "SI", "SIGNALING" }, { "SE", "SPECIAL_EXIT" }, { "SO", "STAGE_OUT" },
	{ "ST", "STOPPED" }, { "S", "SUSPENDED" }, { "TO", "TIMEOUT" },
};

const char *slurm_state_name(const char *word)
{
	for (size_t i = 0; i < ARRAY_SIZE(state_names); i++)
		if (!strcasecmp(word, state_names[i].shortname) || !strcasecmp(word, state_names[i].name))
			return state_names[i].name;
	return NULL;
}

/* The releases' data_parser plugins (as Debian's packages ship them: 24.11 has
 * v0.0.40 to v0.0.42, 26.05 v0.0.42 to v0.0.45): one that every release of a range
 * has, and whose schema the parser below reads (captured on 24.11 and 26.05). */
const char *slurm_data_parser(const char *version)
{
	int major, minor;
	if (!version || sscanf(version, "%d.%d", &major, &minor) != 2)
		return NULL;
	int r = major * 100 + minor;
	if (r >= 2311 && r <= 2405)
		return "v0.0.40";
	if (r >= 2411 && r <= 2605)
		return "v0.0.42";
	return NULL;
}

int slurm_release_known(const char *version)
{
	int major, minor;
	if (!version || sscanf(version, "%d.%d", &major, &minor) != 2 || major < 0 || minor < 0)
		return -1;
	return major * 100 + minor <= SLURM_NEWEST_KNOWN_NUM ? 1 : 0;
}

void slurm_queue_command(struct strbuf *sb, const struct slurm_queue_filter *f,
			 enum slurm_queue_format fmt, const char *eor)
{
	_cleanup_strbuf_ struct strbuf filters = STRBUF_INIT;
	if (f->me) {
		strbuf_adds(&filters, " -u \"$(id -un)\"");
	} else if (f->user) {
		strbuf_adds(&filters, " -u ");
		sh_quote(&filters, f->user);
	}
	if (f->partitions) {
		strbuf_adds(&filters, " -p ");
		sh_quote(&filters, f->partitions);
	}
	if (f->states) {
		strbuf_adds(&filters, " -t ");
		sh_quote(&filters, f->states);
	}
	marker_print(sb, MARK_USER, "\"$(id -un)\"");
	marker_print(sb, MARK_NOW, "\"$(date +%s)\"");
	strbuf_adds(sb, "v=$(squeue --version 2>/dev/null | head -n 1)\n");
	marker_print(sb, MARK_VERSION, "\"$v\"");
	/* squeue --json came with 21.08 */
	const char *json_case = fmt == SLURM_QUEUE_JSON ? "*"
		: fmt == SLURM_QUEUE_TEXT ? "dispatch-never"
		: "*' '2[1-9].*|*' '[3-9][0-9].*";
	/* The data_parser pinned by release (slurm_data_parser): its schema is fixed,
	 * whatever the release's default. When the pinned one fails (a site built
	 * without that plugin), the release's default; when that fails too (a SLURM
	 * built without its JSON plugin: "plugin ... not found"), the text format,
	 * which every squeue has. */
	const char *fl = filters.buf ? filters.buf : "";
	strbuf_addf(sb, "json=0\ncase $v in %s) json=1 ;; esac\n"
		    "case $v in\n"
		    "*' '23.11.*|*' '24.05.*) jp=%s ;;\n"
		    "*' '24.11.*|*' '25.05.*|*' '25.11.*|*' '26.05.*) jp=%s ;;\n"
		    "*) jp= ;;\nesac\n"
		    "if [ $json = 1 ] && { { [ -n \"$jp\" ] && out=$(squeue --json=\"$jp\"%s 2>/dev/null); } ||\n"
		    "\tout=$(squeue --json%s); }; then\n"
		    "\techo " MARK_FORMAT " json\n\tprintf '%%s' \"$out\"\n\tst=0\nelse\n",
		    json_case, slurm_data_parser("23.11"), slurm_data_parser("24.11"), fl, fl);
	_cleanup_free_ char *format = eor ? xasprintf("%s|%s", QUEUE_FORMAT, eor) : xstrdup(QUEUE_FORMAT);
	strbuf_adds(sb, "\techo " MARK_FORMAT " text\n\tsqueue -h -o ");
	sh_quote(sb, format);
	strbuf_addf(sb, "%s\n\tst=$?\nfi\n", filters.buf ? filters.buf : "");
	/* squeue --json ends without a newline */
	strbuf_adds(sb, "echo\n");
	marker_status(sb, MARK_SQUEUE_EXIT, "st");
}

void slurm_qjob_release(struct slurm_qjob *j)
{
	free(j->gpus);
	free(j->id);
	free(j->partition);
	free(j->name);
	free(j->user);
	free(j->state);
	free(j->elapsed);
	free(j->nodes);
	free(j->reason);
}

void slurm_queue_release(struct slurm_queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		slurm_qjob_release(&q->jobs[i]);
	free(q->jobs);
	free(q->user);
	free(q->version);
	free(q->format);
	memset(q, 0, sizeof(*q));
}

/* ---- the filter, applied here too ---- */

/* True when one of the comma-separated words of list is one of those of value. */
static bool lists_meet(const char *list, const char *value)
{
	_cleanup_free_ char *a = xstrdup(list);
	char *save = NULL;
	for (char *w = strtok_r(a, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		_cleanup_free_ char *b = xstrdup(value);
		char *save2 = NULL;
		for (char *v = strtok_r(b, ",", &save2); v; v = strtok_r(NULL, ",", &save2))
			if (streq(w, v))
				return true;
	}
	return false;
}

static bool state_wanted(const char *states, const char *state)
{
	if (!states)
		return slurm_state_active(state);
	_cleanup_free_ char *a = xstrdup(states);
	char *save = NULL;
	for (char *w = strtok_r(a, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(w, "all"))
			return true;
		const char *name = slurm_state_name(w);
		if (name && streq(name, state))
			return true;
	}
	return false;
}

bool slurm_queue_wanted(const struct slurm_queue_filter *f, const struct slurm_queue *q,
			const struct slurm_qjob *j)
{
	if (f->me && q->user && !streq(j->user, q->user))
		return false;
	if (!f->me && f->user && !lists_meet(f->user, j->user))
		return false;
	if (f->partitions && !lists_meet(f->partitions, j->partition))
		return false;
	return state_wanted(f->states, j->state);
}

/* ---- squeue -o ---- */

static bool valid_id(const char *s)
{
	size_t i = strspn(s, "0123456789");
	return i > 0 && (!s[i] || s[i] == '_' || s[i] == '+');
}

static void text_job(struct slurm_qjob *j, char *line, bool *ok)
{
	char *f[QUEUE_FIELDS];
	size_t k = 0;
	char *p = line;
	*ok = false;
	for (; k + 1 < QUEUE_FIELDS; k++) {
		char *bar = strchr(p, '|');
		if (!bar)
			return;
		*bar = '\0';
		f[k] = p;
		p = bar + 1;
	}
	f[k] = p; /* the name: the rest of the line, '|' and all */
	long nodes;
	if (!valid_id(f[0]) || !f[3][0])
		return;
	j->id = xstrdup(f[0]);
	j->partition = xstrdup(f[1]);
	j->user = xstrdup(f[2]);
	j->state = xstrndup(f[3], strcspn(f[3], " "));
	j->elapsed = xstrdup(f[4]);
	j->node_count = parse_long(f[5], 0, 0x7fffffff, &nodes) ? nodes : -1;
	j->nodes = xstrdup(f[6]);
	j->reason = xstrdup(f[7]);
	j->name = xstrdup(f[8]);
	*ok = true;
}

static void add_text_job(struct slurm_queue *q, char *record)
{
	bool ok;
	struct slurm_qjob j = { .restarts = -1 };
	size_t len = strlen(record);
	if (len && record[len - 1] == '\r')
		record[len - 1] = '\0';
	text_job(&j, record, &ok);
	if (!ok)
		return;
	q->jobs = xrealloc(q->jobs, (q->n + 1) * sizeof(*q->jobs));
	q->jobs[q->n++] = j;
}

/* Records end with "|EOR" and a newline (or the end), or with each line without eor. */
static void parse_text(char *text, const char *eor, struct slurm_queue *q)
{
	if (!eor) {
		char *save = NULL;
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			add_text_job(q, l);
		return;
	}
	_cleanup_free_ char *mark = xasprintf("|%s", eor);
	size_t ml = strlen(mark);
	char *p = text;
	for (char *m = strstr(p, mark); m; m = strstr(p, mark)) {
		if (m[ml] != '\n' && m[ml] != '\0' && m[ml] != '\r') {
			p = m + 1; /* not at the end of a line: part of something else */
			continue;
		}
		char *next = m + ml + strspn(m + ml, "\r\n");
		*m = '\0';
		add_text_job(q, text);
		text = p = next;
	}
}

/* ---- squeue --json ---- */

/* A number in any shape seen: 5, or {"set": true, "infinite": false, "number": 5}. */
static bool json_number(const cJSON *o, const char *key, double *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsObject(x)) {
		if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(x, "set")) ||
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "infinite")))
			return false;
		x = cJSON_GetObjectItemCaseSensitive(x, "number");
	}
	if (!cJSON_IsNumber(x))
		return false;
	*v = x->valuedouble;
	return true;
}

static long json_long(const cJSON *o, const char *key, long dflt)
{
	double v;
	return json_number(o, key, &v) && v >= 0 && v < 9e15 ? (long)v : dflt;
}

/* A string, or the first string of a list (job_state from v0.0.39 on). */
static char *json_string(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsArray(x))
		x = cJSON_GetArrayItem(x, 0);
	return xstrdup(cJSON_IsString(x) && x->valuestring ? x->valuestring : "");
}

static char *json_id(const cJSON *o)
{
	long id = json_long(o, "job_id", -1);
	long array = json_long(o, "array_job_id", 0);
	long task = json_long(o, "array_task_id", -1);
	long het = json_long(o, "het_job_id", 0);
	_cleanup_free_ char *tasks = json_string(o, "array_task_string");
	if (id < 0)
		return NULL;
	if (array > 0 && task >= 0)
		return xasprintf("%ld_%ld", array, task);
	if (array > 0 && tasks[0])
		return xasprintf("%ld_[%s]", array, tasks);
	if (het > 0)
		return xasprintf("%ld+%ld", het, json_long(o, "het_job_offset", 0));
	return xasprintf("%ld", id);
}

static char *json_elapsed(const cJSON *o, const char *state, long now)
{
	long start = json_long(o, "start_time", 0), end = json_long(o, "end_time", 0);
	long t = 0;
	if (streq(state, "PENDING") || start <= 0)
		t = 0;
	else if (streq(state, "SUSPENDED"))
		t = json_long(o, "pre_sus_time", 0);
	else if (slurm_state_active(state) && now >= start)
		t = now - start;
	else if (end >= start)
		t = end - start;
	return slurm_format_seconds(t);
}

static int parse_json(const char *text, size_t len, long now, struct slurm_queue *q,
		      struct dp_error *err)
{
	cJSON *doc = cJSON_ParseWithLength(text, len);
	if (!doc)
		return dp_err(err, DPE_FAIL, "squeue --json printed something that is not JSON");
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
	const cJSON *o;
	cJSON_ArrayForEach(o, jobs)
	{
		if (!cJSON_IsObject(o))
			continue;
		struct slurm_qjob j = { .node_count = json_long(o, "node_count", -1),
					.restarts = json_long(o, "restart_cnt", -1) };
		j.id = json_id(o);
		j.state = json_string(o, "job_state");
		if (!j.id || !j.state[0]) {
			free(j.id);
			free(j.state);
			continue;
		}
		j.partition = json_string(o, "partition");
		j.name = json_string(o, "name");
		j.user = json_string(o, "user_name");
		if (!j.user[0]) {
			free(j.user);
			j.user = xasprintf("%ld", json_long(o, "user_id", 0));
		}
		j.elapsed = json_elapsed(o, j.state, now);
		j.nodes = json_string(o, "nodes");
		j.reason = json_string(o, "state_reason");
		q->jobs = xrealloc(q->jobs, (q->n + 1) * sizeof(*q->jobs));
		q->jobs[q->n++] = j;
	}
	cJSON_Delete(doc);
	return 0;
}

/* ---- the whole answer ---- */

int slurm_parse_queue(const char *out, const struct slurm_queue_filter *f, const char *eor,
		      struct slurm_queue *q, struct dp_error *err)
{
	memset(q, 0, sizeof(*q));
	q->squeue_status = -1;
	long now = -1;
	const char *body = NULL, *body_end = NULL;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		long n;
		if (!q->format && !q->user && (v = marker_value(line, MARK_USER))) {
			q->user = xstrdup(v);
		} else if (!q->format && (v = marker_value(line, MARK_NOW))) {
			if (parse_long(v, 0, 0x7fffffffffffL, &n))
				now = n;
		} else if (!q->format && !q->version && (v = marker_value(line, MARK_VERSION))) {
			/* "slurm 22.05.8", "slurm-wlm 22.05.8" */
			const char *sp = strrchr(line, ' ');
			if (sp && sp[1])
				q->version = xstrdup(sp + 1);
		} else if (!q->format && (v = marker_value(line, MARK_FORMAT)) && *v) {
			q->format = xstrdup(v);
			body = it.next;
		} else if (q->format && (v = marker_value(line, MARK_SQUEUE_EXIT)) && *v) {
			if (parse_long(v, 0, 255, &n))
				q->squeue_status = (int)n;
			body_end = it.start;
		}
	}
	line_iter_release(&it);
	if (!q->format || !body || !body_end || body_end < body)
		return dp_err(err, DPE_FAIL, "no answer from squeue");
	size_t len = (size_t)(body_end - body);
	if (streq(q->format, "json")) {
		/* profile noise before the document is skipped */
		const char *brace = memchr(body, '{', len);
		if (q->squeue_status == 0 && !brace)
			return dp_err(err, DPE_FAIL, "squeue --json printed no JSON");
		if (brace && parse_json(brace, len - (size_t)(brace - body), now, q, err) < 0)
			return -1;
	} else {
		_cleanup_free_ char *text = xstrndup(body, len);
		parse_text(text, eor, q);
	}
	/* the filter, for SLURM versions that ignore it with --json */
	size_t k = 0;
	for (size_t i = 0; i < q->n; i++) {
		if (slurm_queue_wanted(f, q, &q->jobs[i]))
			q->jobs[k++] = q->jobs[i];
		else
			slurm_qjob_release(&q->jobs[i]);
	}
	q->n = k;
	return 0;
}
