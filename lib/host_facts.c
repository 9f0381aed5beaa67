/* SPDX-License-Identifier: MIT */
/* One remote command for a host's facts, and its sections: host_facts.h. */
#include "host_facts.h"

#include <cjson/cJSON.h>

#include "transport/ssh.h"
#include "base/json.h"
#include "base/marker.h"
#include "base/util.h"
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm_queue.h"

#define MARK MARK_SECTION " "

/* Each tool's stdout and stderr go into its section (scontrol's warnings are no
 * record lines and are skipped; on failure the text is the error message). */
#define RUN(name, cmd)                                                                 \
	"echo '" MARK name "'; o=$(" cmd " 2>&1); s=$?; "                              \
	"[ -z \"$o\" ] || printf '%s\\n' \"$o\"; echo \"" MARK "status $s\"; "

static const char slurm_part[] =
	RUN("partitions", "scontrol -o show partition")
	"if [ $s = 0 ]; then " RUN("nodes", "scontrol -o -d show node") "fi; ";
static const char gpus_part[] =
	RUN("gpus", "nvidia-smi --query-gpu=uuid,name,memory.total --format=csv,noheader,nounits")
	"if [ $s = 0 ]; then "
	RUN("apps", "nvidia-smi --query-compute-apps=gpu_uuid,used_memory --format=csv,noheader,nounits")
	"fi; ";

void host_facts_command(struct strbuf *sb, enum host_facts_ask ask)
{
	host_facts_command_at(sb, ask, NULL);
}

void host_facts_command_at(struct strbuf *sb, enum host_facts_ask ask, const char *lock_dir)
{
	_cleanup_strbuf_ struct strbuf leases = STRBUF_INIT;
	plainjob_queue_command(&leases, lock_dir);
	strbuf_adds(sb, "s=1; ");
	if (ask != HOST_FACTS_GPUS)
		strbuf_addf(sb, "if command -v sbatch >/dev/null 2>&1; then %sfi; ", slurm_part);
	if (ask == HOST_FACTS_AUTO)
		strbuf_adds(sb, "if [ $s != 0 ] && ");
	else if (ask == HOST_FACTS_GPUS)
		strbuf_adds(sb, "if ");
	if (ask != HOST_FACTS_SLURM) {
		strbuf_addf(sb, "command -v nvidia-smi >/dev/null 2>&1; then %s", gpus_part);
		/* the leases: a subshell, whatever it does to fds and exits */
		strbuf_addf(sb, "echo '" MARK "leases'; (\n%s\n) 2>&1; echo \"" MARK
			    "status $?\"; fi; ", leases.buf);
	}
	strbuf_adds(sb, "echo '" MARK "end'");
}

struct section {
	const char *name;
	struct strbuf text;
	int status;             /* -1: not seen */
};

/* The last non-blank line of a failed tool's output (its fatal message), or of the
 * channel's stderr when it printed nothing. */
static char *last_line(const char *text, const char *errout)
{
	const char *t = text && *text ? text : errout ? errout : "";
	size_t end = strlen(t);
	while (end && (t[end - 1] == '\n' || t[end - 1] == ' ' || t[end - 1] == '\r'))
		end--;
	size_t start = end;
	while (start && t[start - 1] != '\n')
		start--;
	return xstrndup(t + start, end - start);
}

char *host_facts_tool_error(const char *what, int status, const char *text, const char *errout)
{
	_cleanup_free_ char *line = last_line(text, errout);
	if (status == 127)
		return xasprintf("%s: command not found", what);
	return xasprintf("%s failed (exit status %d)%s%s", what, status, *line ? ": " : "", line);
}

static int tool_failed(struct dp_error *err, const char *what, int status, const char *text,
		       const char *errout)
{
	_cleanup_free_ char *msg = host_facts_tool_error(what, status, text, errout);
	return dp_err(err, DPE_FAIL, "%s", msg);
}

int host_facts_parse(const char *out, const char *errout, enum host_facts_ask ask,
		     struct host_facts *f, struct dp_error *err)
{
	struct section sec[] = {
		{ "partitions", STRBUF_INIT, -1 },
		{ "nodes", STRBUF_INIT, -1 },
		{ "gpus", STRBUF_INIT, -1 },
		{ "apps", STRBUF_INIT, -1 },
		{ "leases", STRBUF_INIT, -1 },
	};
	struct section *cur = NULL;
	bool end = false;
	int r = -1;

	memset(f, 0, sizeof(*f));
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *word = marker_value(line, MARK_SECTION);
		long st;
		if (word && *word) {
			if (startswith(word, "status ") && cur && parse_long(word + 7, 0, 255, &st)) {
				cur->status = (int)st;
				cur = NULL;
			} else if (streq(word, "end")) {
				end = true;
			} else {
				for (size_t i = 0; i < ARRAY_SIZE(sec); i++)
					if (streq(word, sec[i].name))
						cur = &sec[i];
			}
		} else if (cur) {
			strbuf_adds(&cur->text, line);
			strbuf_addch(&cur->text, '\n');
		}
	}
	line_iter_release(&it);
	if (!end) {
		dp_err(err, DPE_INPUT, "the host's answer was cut short (no end mark)");
		goto out;
	}
	f->slurm = sec[0].status == 0;
	f->gpu_tool = sec[2].status >= 0;
	if (sec[0].status > 0 && ask == HOST_FACTS_AUTO)
		f->slurm_error = host_facts_tool_error("scontrol", sec[0].status, sec[0].text.buf, errout);
	if (ask == HOST_FACTS_SLURM && sec[0].status < 0) {
		dp_err(err, DPE_FAIL, "no sbatch on the host: not a SLURM login node");
		goto out;
	}
	if (ask == HOST_FACTS_SLURM && sec[0].status > 0) {
		tool_failed(err, "scontrol", sec[0].status, sec[0].text.buf, errout);
		goto out;
	}
	if (f->slurm) {
		if (sec[1].status < 0) {
			dp_err(err, DPE_INPUT, "the host's answer was cut short (no node list)");
			goto out;
		}
		if (sec[1].status != 0) {
			tool_failed(err, "scontrol", sec[1].status, sec[1].text.buf, errout);
			goto out;
		}
		if (slurm_facts_parse(sec[0].text.buf, sec[1].text.buf, &f->sl, err) < 0)
			goto out;
	}
	if (f->gpu_tool) {
		if (sec[2].status != 0) {
			tool_failed(err, "nvidia-smi", sec[2].status, sec[2].text.buf, errout);
			goto out;
		}
		if (sec[3].status != 0) {
			tool_failed(err, "nvidia-smi --query-compute-apps", sec[3].status,
				    sec[3].text.buf, errout);
			goto out;
		}
		if (nvidia_smi_parse(sec[2].text.buf, sec[3].text.buf, &f->gpus, err) < 0)
			goto out;
	}
	f->jobs_running = f->jobs_pending = -1;
	if (f->gpu_tool && sec[4].status > 0) {
		/* its message (a lock held by another user, ...), without the prefix */
		_cleanup_free_ char *line = last_line(sec[4].text.buf, NULL);
		const char *m = after_prefix(line, "dispatch: ");
		f->jobs_error = xstrdup(m ? m : *line ? line : "the listing failed");
	}
	if (f->gpu_tool && sec[4].status == 0) {
		/* GPUs that dispatch jobs lease are taken, processes or not */
		struct slurm_queue_filter all = { 0 };
		struct slurm_queue q;
		struct dp_error e2 = { 0 };
		if (plainjob_parse_queue(sec[4].text.buf, &all, &q, &e2) == 0) {
			f->jobs_running = f->jobs_pending = 0;
			for (size_t i = 0; i < q.n; i++) {
				if (streq(q.jobs[i].state, "PENDING")) {
					f->jobs_pending++;
					continue;
				}
				if (!streq(q.jobs[i].state, "RUNNING"))
					continue; /* IGNORED: a record that claims another user */
				f->jobs_running++;
				for (const char *p = q.jobs[i].gpus; p && *p;) {
					long idx;
					size_t len = strcspn(p, ",");
					_cleanup_free_ char *w = xstrndup(p, len);
					if (parse_long(w, 0, 1 << 20, &idx) && (size_t)idx < f->gpus.n) {
						f->gpus.gpus[idx].busy = true;
						f->gpus.gpus[idx].leased = true;
					}
					p += len + (p[len] == ',');
				}
			}
		}
		slurm_queue_release(&q);
	}
	r = 0;
out:
	for (size_t i = 0; i < ARRAY_SIZE(sec); i++)
		strbuf_release(&sec[i].text);
	if (r < 0)
		host_facts_release(f);
	return r;
}

void host_facts_release(struct host_facts *f)
{
	free(f->slurm_error);
	free(f->jobs_error);
	slurm_facts_release(&f->sl);
	nvidia_gpus_release(&f->gpus);
	memset(f, 0, sizeof(*f));
}

static int add_out(void *data, const char *buf, size_t len)
{
	struct strbuf *sb = data;
	if (sb->len + len > ((size_t)64 << 20))
		return -1;
	strbuf_add(sb, buf, len);
	return 0;
}

struct capture {
	struct strbuf out, err;
};

static int cap_out(void *data, const char *buf, size_t len)
{
	return add_out(&((struct capture *)data)->out, buf, len);
}

static int cap_err(void *data, const char *buf, size_t len)
{
	return add_out(&((struct capture *)data)->err, buf, len);
}

int host_facts_fetch(struct ssh_session *s, enum host_facts_ask ask, double timeout,
		     struct host_facts *f, struct dp_error *err)
{
	return host_facts_fetch_at(s, ask, NULL, timeout, f, err);
}

int host_facts_fetch_at(struct ssh_session *s, enum host_facts_ask ask, const char *lock_dir,
			double timeout, struct host_facts *f, struct dp_error *err)
{
	struct strbuf cmd = STRBUF_INIT;
	struct capture c = { STRBUF_INIT, STRBUF_INIT };
	int status = 0;

	memset(f, 0, sizeof(*f));
	host_facts_command_at(&cmd, ask, lock_dir);
	struct ssh_exec x = {
		.command = cmd.buf,
		.in_fd = -1,
		.on_stdout = cap_out,
		.on_stderr = cap_err,
		.data = &c,
		.timeout = timeout,
	};
	int r = ssh_exec(s, &x, &status, err);
	if (r == 0)
		r = host_facts_parse(c.out.buf, c.err.buf, ask, f, err);
	strbuf_release(&cmd);
	strbuf_release(&c.out);
	strbuf_release(&c.err);
	return r;
}

const struct slurm_node *host_facts_node(const struct slurm_facts *sl, const char *name)
{
	for (size_t i = 0; i < sl->nnodes; i++)
		if (streq(sl->nodes[i].name, name))
			return &sl->nodes[i];
	return NULL;
}

cJSON *host_health_json(const struct host_facts *f, const struct host_health *h)
{
	if (!f->slurm)
		return gpu_health_json(&h->gpus);
	cJSON *o = cJSON_CreateObject();
	{
		json_add_str_or_null(o, "error", h->sinfo_error);
		cJSON *arr = cJSON_AddArrayToObject(o, "nodes");
		for (size_t i = 0; i < h->nnodes; i++) {
			const struct node_health *n = &h->nodes[i];
			const struct slurm_node *sn = host_facts_node(&f->sl, n->node);
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "node", n->node);
			cJSON_AddStringToObject(j, "state", n->state);
			json_add_str_or_null(j, "since", n->since);
			json_add_str_or_null(j, "by", n->by);
			json_add_str_or_null(j, "reason", n->reason);
			long used = 0;
			for (size_t k = 0; sn && k < sn->ngpus; k++)
				used += sn->gpus[k].used;
			json_add_int_or_null(j, "gpus_used", sn ? used : -1);
			json_add_int_or_null(j, "gpus_total", sn ? slurm_node_gpus_total(sn, NULL) : -1);
			cJSON_AddItemToArray(arr, j);
		}
	}
	return o;
}
