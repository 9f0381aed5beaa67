/* SPDX-License-Identifier: MIT */
/* One submission, from spec to ledger row: submission.h. */
#include "submission.h"

#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "inventory/inventory.h"
#include "inventory/jobspec.h"
#include "ledger.h"
#include "container/container_run.h"
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"
#include "transport/ssh.h"
#include "transport/sftp.h"

static void note(const struct submission_hooks *h, enum submission_note level, const char *fmt, ...)
	_printf_(3, 4);

static void note(const struct submission_hooks *h, enum submission_note level, const char *fmt, ...)
{
	if (!h || !h->note)
		return;
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	h->note(h->data, level, msg.buf);
}

/* ---- preparing ---- */

/* A sweep on a plain host: its tasks here, each with its id, token and run id. */
static int prepare_tasks(const struct submission_job *job, struct submission *sub,
			 struct dp_error *err)
{
	size_t n = job->sweep_tasks ? job->sweep_ntasks : sub->sweep.ntasks;
	if (!n)
		return dp_err(err, DPE_INPUT, "no task of the sweep goes to '%s'", job->host->name);
	sub->tasks = xcalloc(n, sizeof(*sub->tasks));
	for (size_t i = 0; i < n; i++) {
		struct submission_task *t = &sub->tasks[sub->ntasks];
		t->index = job->sweep_tasks ? job->sweep_tasks[i] : i;
		if (t->index >= sub->sweep.ntasks)
			return dp_err(err, DPE_INPUT, "the sweep has no task %zu", t->index);
		sub->ntasks++;
		t->id = xasprintf("%s-%zu", sub->stage, t->index);
		t->token = ledger_new_token();
		t->run_id = sub->run_id ? xasprintf("%s-%zu", sub->run_id, t->index) : NULL;
		t->state = SUBMISSION_PREPARED;
	}
	return 0;
}

int submission_prepare(const struct submission_job *job, struct submission *sub,
		       struct dp_error *err)
{
	memset(sub, 0, sizeof(*sub));
	strbuf_init(&sub->remote_err);
	_cleanup_free_ char *share = jobscript_share_dir(job->host);
	/* The stage dir's nonce comes from the token: unique across machines. */
	sub->token = ledger_new_token();
	unsigned long nonce = strtoul(sub->token + strlen(sub->token) - 4, NULL, 16);
	sub->stage = jobscript_stage_name(job->spec->job_name, time(NULL),
					  job->dry_run ? (unsigned long)getpid() : nonce);
	sub->bootstrap_path = xasprintf("%s/%s/bootstrap.sh", share, sub->stage);
	if (job->run_id)
		sub->run_id = xstrdup(job->run_id);
	else if (jobspec_is_run(job->spec))
		sub->run_id = xasprintf("run-%.16s", sub->token + 4); /* after "dsp-" */
	for (size_t i = 0; job->spec->sweep && job->spec->sweep[i]; i++)
		if (sweep_add(&sub->sweep, job->spec->sweep[i], err) < 0)
			return -1;
	if (sub->sweep.ntasks) {
		if (job->host->type == INV_HOST_SLURM && sub->run_id)
			return dp_err(err, DPE_INPUT, "--sweep with --max-restarts, --stop-signal or "
				      "--grace on '%s': on SLURM a sweep is one job array, whose tasks "
				      "cannot be runs yet (submit the sweep to plain hosts, or without "
				      "them)", job->host->name);
		sub->sweep_id = job->sweep_id ? xstrdup(job->sweep_id)
			      : xasprintf("sweep-%.16s", sub->token + 4); /* after "dsp-" */
		if (job->host->type != INV_HOST_SLURM && prepare_tasks(job, sub, err) < 0)
			return -1;
	}
	sub->code_uploaded = job->code && job->code_sha256 && job->code_len > SUBMISSION_EMBED_MAX;
	_cleanup_free_ char *code_path = sub->code_uploaded
		? xasprintf("%s/code/%s.tar.gz", share, job->code_sha256) : NULL;
	struct jobscript_target t = {
		.host = job->host,
		.gres_type = job->gres_type,
		.partition = job->partition,
		.bootstrap_path = sub->bootstrap_path,
		.payload = sub->code_uploaded ? NULL : job->code,
		.payload_len = job->code_len,
		.payload_path = code_path,
		.payload_subdir = job->code_subdir && *job->code_subdir ? job->code_subdir : NULL,
		.redact = job->dry_run, /* shown, never run */
		.run_id = sub->run_id,
		.sweep = sub->sweep.ntasks ? &sub->sweep : NULL,
		.sweep_id = sub->sweep_id,
	};
	return jobscript_generate(job->spec, &t, &sub->js, err);
}

void submission_release(struct submission *sub)
{
	free(sub->token);
	free(sub->stage);
	free(sub->bootstrap_path);
	jobscript_release(&sub->js);
	free(sub->share_dir);
	free(sub->stage_dir);
	free(sub->work_dir);
	free(sub->log_dir);
	free(sub->script);
	free(sub->log);
	free(sub->job_id);
	free(sub->run_id);
	sweep_release(&sub->sweep);
	free(sub->sweep_id);
	for (size_t i = 0; i < sub->ntasks; i++) {
		free(sub->tasks[i].id);
		free(sub->tasks[i].token);
		free(sub->tasks[i].run_id);
		free(sub->tasks[i].log);
	}
	free(sub->tasks);
	strbuf_release(&sub->remote_err);
	memset(sub, 0, sizeof(*sub));
}

/* ---- step 1: the directories ---- */

static char *cluster_work(const struct inv_host *h)
{
	return xstrdup(h->cluster && h->cluster->work ? h->cluster->work : "~");
}

static char *cluster_log(const struct inv_host *h)
{
	if (h->cluster && (h->cluster->log || h->cluster->work))
		return jobscript_log_dir(h->cluster);
	return xstrdup("~/.dispatch/logs");
}

static void print_dir(struct strbuf *sb, const char *mark, const char *path)
{
	strbuf_adds(sb, "cd -- ");
	jobscript_quote_path(sb, path);
	strbuf_adds(sb, " || exit 1\n");
	marker_print(sb, mark, "\"$PWD\"");
}

static void dirs_command(struct strbuf *sb, const struct submission_job *job,
			 const struct submission *sub)
{
	_cleanup_free_ char *share = jobscript_share_dir(job->host);
	_cleanup_free_ char *stage = xasprintf("%s/%s", share, sub->stage);
	_cleanup_free_ char *code = xasprintf("%s/code", share);
	_cleanup_free_ char *work = cluster_work(job->host);
	_cleanup_free_ char *log = cluster_log(job->host);
	container_preflight_command(sb, job->spec, job->host);
	strbuf_adds(sb, "umask 077\nmkdir -p -- ");
	jobscript_quote_path(sb, stage);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, code);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, work);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, log);
	strbuf_adds(sb, " || exit 1\n");
	print_dir(sb, MARK_SHARE, share);
	print_dir(sb, MARK_STAGE, stage);
	print_dir(sb, MARK_WORK, work);
	print_dir(sb, MARK_LOG, log);
}

static int make_dirs(struct ssh_session *ss, const struct submission_job *job,
		     struct submission *sub, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	int status;
	dirs_command(&cmd, job, sub);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &sub->remote_err, &status, err) < 0)
		return -1;
	if (container_preflight_parse(out.buf, job->spec, job->host, err) < 0)
		return -1;
	if (status != 0)
		return dp_err(err, DPE_FAIL, "cannot create the job's directories on '%s' (exit "
			      "status %d)", ssh_session_name(ss), status);
	strbuf_reset(&sub->remote_err);
	sub->share_dir = marker_find(out.buf, MARK_SHARE);
	sub->stage_dir = marker_find(out.buf, MARK_STAGE);
	sub->work_dir = marker_find(out.buf, MARK_WORK);
	sub->log_dir = marker_find(out.buf, MARK_LOG);
	if (!sub->share_dir || !sub->stage_dir || !sub->work_dir || !sub->log_dir ||
	    !*sub->share_dir || !*sub->stage_dir || !*sub->work_dir || !*sub->log_dir)
		return dp_err(err, DPE_FAIL, "cannot create the job's directories on '%s': the shell "
			      "did not print their paths", ssh_session_name(ss));
	return 0;
}

/* ---- step 2: the scripts and the code ---- */

static void code_progress(void *data, const char *path, uint64_t done, uint64_t total)
{
	const struct submission_hooks *h = data;
	(void)path;
	h->upload_progress(h->data, done, total);
}

/* The code, once per content: {share}/code/SHA256.tar.gz. */
static int upload_code(struct sftp_files *u, const struct submission_job *job,
		       const struct submission *sub, const struct submission_hooks *h,
		       struct dp_error *err)
{
	_cleanup_free_ char *path = xasprintf("%s/code/%s.tar.gz", sub->share_dir, job->code_sha256);
	uint64_t size = 0;
	int r = sftp_size(u, path, &size, err);
	if (r < 0)
		return -1;
	if (r == 1 && size == job->code_len) {
		note(h, SUBMISSION_INFO, "the code is on the host already: %s", path);
		return 0;
	}
	_cleanup_free_ char *part = xasprintf("%s.%s.part", path, sub->token);
	if (h->upload_progress)
		sftp_files_set_progress(u, code_progress, (void *)h);
	int put = sftp_put_new(u, part, job->code, job->code_len, 0600, err);
	sftp_files_set_progress(u, NULL, NULL);
	if (put < 0)
		return -1;
	if (r == 1) /* a different size under this hash: a broken earlier upload */
		sftp_remove(u, path, NULL);
	r = sftp_rename_new(u, part, path, err);
	if (r == 1) /* another submission was first */
		sftp_remove(u, part, NULL);
	if (r < 0)
		return -1;
	note(h, SUBMISSION_INFO, "uploaded the code (%zu bytes): %s", job->code_len, path);
	return 0;
}

static int upload_files(struct ssh_session *ss, const struct submission_job *job,
			struct submission *sub, const struct submission_hooks *h,
			struct dp_error *err)
{
	_cleanup_sftp_files_ struct sftp_files *u = NULL;
	if (sftp_files_open(ss, &u, err) < 0)
		return -1;
	_cleanup_free_ char *boot = xasprintf("%s/bootstrap.sh", sub->stage_dir);
	const struct jobscript *js = &sub->js;
	if (sftp_put_new(u, boot, js->bootstrap, strlen(js->bootstrap), 0700, err) < 0)
		return -1;
	if (js->sbatch) {
		_cleanup_free_ char *wrapper = xasprintf("%s/sbatch.sh", sub->stage_dir);
		if (sftp_put_new(u, wrapper, js->sbatch, strlen(js->sbatch), 0700, err) < 0)
			return -1;
	}
	if (js->container) {
		_cleanup_free_ char *runner = xasprintf("%s/container.sh", sub->stage_dir);
		if (sftp_put_new(u, runner, js->container, strlen(js->container), 0700, err) < 0)
			return -1;
	}
	/* a run's webhook, a credential: a file the run's end reads it from, and what its
	 * message names (run_notify.sh) */
	const char *url = sub->run_id ? inv_notify_url(job->host) : NULL;
	if (url) {
		_cleanup_free_ char *f = xasprintf("%s/notify_url", sub->stage_dir);
		_cleanup_free_ char *i = xasprintf("%s/run_info", sub->stage_dir);
		_cleanup_free_ char *info = xasprintf("%s %s\n", sub->run_id, job->host->name);
		if (sftp_put_new(u, f, url, strlen(url), 0600, err) < 0 ||
		    sftp_put_new(u, i, info, strlen(info), 0600, err) < 0)
			return -1;
	}
	return sub->code_uploaded ? upload_code(u, job, sub, h, err) : 0;
}

/* %x and %j of an --output pattern, as far as they are known here. */
static char *log_path(const struct submission_job *job, const struct submission *sub,
		      const char *id)
{
	if (job->host->type != INV_HOST_SLURM)
		return xasprintf("%s/%s.out", sub->log_dir, sub->stage);
	const struct jobspec *spec = job->spec;
	const char *pattern = spec->output;
	_cleanup_free_ char *def = NULL;
	if (!pattern) {
		const struct inv_cluster *c = job->host->cluster;
		bool has_dir = c && (c->log || c->work);
		bool array = spec->array || spec->sweep;
		def = has_dir ? xasprintf("%s/%s", sub->log_dir, array ? "%x-%A_%a.out" : "%x-%j.out")
			      : xasprintf("%s/%s", sub->work_dir, array ? "slurm-%A_%a.out"
									      : "slurm-%j.out");
		pattern = def;
	}
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && (p[1] == 'j' || p[1] == 'A') && id) {
			strbuf_adds(&sb, id);
			p++;
		} else if (p[0] == '%' && p[1] == 'x') {
			strbuf_adds(&sb, spec->job_name ? spec->job_name : "dispatch");
			p++;
		} else {
			strbuf_addch(&sb, *p);
		}
	}
	return strbuf_detach(&sb);
}

/* ---- step 4, and the look-up after a lost connection ---- */

enum submission_state submission_settle_slurm(const char *lookup_out, const char *token,
					      char **job_id, int *sbatch_status,
					      struct strbuf *remote_err)
{
	struct slurm_lookup lk = SLURM_LOOKUP_INIT;
	enum submission_state st = SUBMISSION_UNKNOWN;
	slurm_parse_lookup(lookup_out, token, &lk);
	*sbatch_status = lk.sbatch_status;
	if (lk.sbatch_status > 0) {
		strbuf_add(remote_err, lk.err.buf, lk.err.len);
		st = SUBMISSION_REFUSED;
	} else if (lk.job_id) {
		*job_id = lk.job_id;
		lk.job_id = NULL;
		st = SUBMISSION_SUBMITTED;
	}
	slurm_lookup_release(&lk);
	return st;
}

enum submission_state submission_settle_plain(const char *pid_out, long *pid)
{
	*pid = plainjob_parse_pid(pid_out);
	return *pid > 0 ? SUBMISSION_SUBMITTED : SUBMISSION_UNKNOWN;
}

enum submission_state submission_sbatch_answer(const char *out, char **job_id, int *sbatch_status)
{
	*job_id = NULL;
	*sbatch_status = slurm_parse_exit(out, "sbatch");
	if (*sbatch_status < 0)
		return SUBMISSION_UNKNOWN;  /* the shell died before it said: it may be there */
	if (*sbatch_status != 0)
		return SUBMISSION_REFUSED;
	if (slurm_parse_sbatch(out, job_id, NULL) < 0) {
		free(*job_id);
		*job_id = NULL;
		return SUBMISSION_UNKNOWN;
	}
	return SUBMISSION_SUBMITTED;
}

enum submission_state submission_start_answer(int status, const char *out, long *pid)
{
	*pid = 0;
	if (status != 0)
		return SUBMISSION_REFUSED;
	*pid = plainjob_parse_pid(out);
	return *pid > 0 ? SUBMISSION_SUBMITTED : SUBMISSION_UNKNOWN;
}

/* After the connection broke (lost) while the job may have been submitted: connect
 * once more and look the token up. */
static int recover(struct submission *sub, const struct submission_job *job,
		   const struct submission_hooks *h, const struct dp_error *lost,
		   struct dp_error *err)
{
	bool slurm = job->host->type == INV_HOST_SLURM;
	const char *name = job->host->name;
	note(h, SUBMISSION_WARNING, "%s; connecting again %s", lost->msg,
	     slurm ? "to look for the job by its token" : "to see whether the job started");
	sub->state = SUBMISSION_UNKNOWN;
	strbuf_reset(&sub->remote_err); /* of the lost command: not an answer */
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (!h || !h->reconnect)
		return dp_err(err, lost->kind, "%s", lost->msg);
	if (h->reconnect(h->data, &ss, err) < 0)
		return -1;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	if (slurm)
		slurm_lookup_command(&cmd, sub->stage_dir, sub->token);
	else
		plainjob_pid_command(&cmd, sub->stage_dir);
	int status;
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, NULL, &status, err) < 0)
		return -1;
	if (slurm) {
		int sbatch_status = -1;
		sub->state = submission_settle_slurm(out.buf, sub->token, &sub->job_id,
						     &sbatch_status, &sub->remote_err);
		if (sub->state == SUBMISSION_REFUSED)
			return dp_err(err, DPE_FAIL, "sbatch on '%s' refused the job (exit status %d)",
				      name, sbatch_status);
		if (sub->state != SUBMISSION_SUBMITTED)
			return dp_err(err, DPE_FAIL, "no job on '%s' carries this submission's token "
				      "%s (yet)", name, sub->token);
	} else {
		sub->state = submission_settle_plain(out.buf, &sub->pid);
		if (sub->state != SUBMISSION_SUBMITTED)
			return dp_err(err, DPE_FAIL, "the job on '%s' has not started (no %s/pid yet)",
				      name, sub->stage_dir);
		sub->job_id = xstrdup(sub->stage);
	}
	sub->recovered = true;
	return 0;
}

static int run_sbatch(struct submission *sub, const struct submission_job *job,
		      struct ssh_session *ss, const struct submission_hooks *h, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	struct dp_error lost = { 0 };
	const char *name = job->host->name;
	int status;
	slurm_submit_command(&cmd, sub->work_dir, sub->stage_dir, sub->token);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &sub->remote_err, &status, &lost) < 0)
		return recover(sub, job, h, &lost, err);
	int sbatch_status;
	enum submission_state st = submission_sbatch_answer(out.buf, &sub->job_id, &sbatch_status);
	if (st == SUBMISSION_REFUSED) {
		sub->state = st;
		return dp_err(err, DPE_FAIL, "sbatch on '%s' refused the job (exit status %d)", name,
			      sbatch_status);
	}
	if (st == SUBMISSION_UNKNOWN) {
		if (sbatch_status < 0)
			dp_err(&lost, DPE_FAIL, "the remote shell on '%s' ended (exit status %d) "
			       "before it reported sbatch's answer", name, status);
		else
			dp_err(&lost, DPE_FAIL, "sbatch on '%s' printed no job id", name);
		return recover(sub, job, h, &lost, err);
	}
	sub->state = SUBMISSION_SUBMITTED;
	return 0;
}

/* The host's env: CUDA_VISIBLE_DEVICES (the reference's way of pinning a box's jobs
 * to some GPUs) limits the GPUs leases are taken from; NULL: all. */
static const char *pinned_gpus(const struct inv_host *h)
{
	for (size_t i = 0; i < h->nenv; i++)
		if (streq(h->env[i].key, "CUDA_VISIBLE_DEVICES"))
			return h->env[i].value;
	return NULL;
}

/* What the launcher leases and how it restarts the job (a sweep's task: every one). */
static struct plainjob_lease plain_lease(const struct submission_job *job)
{
	return (struct plainjob_lease){
		.gpus = jobspec_gpus_per_node(job->spec),
		.gpu_share = job->spec->gpu_share > 0,
		.lock_dir = job->host->gpu_lock_dir,
		.max_jobs = job->host->max_jobs,
		.allowed = pinned_gpus(job->host),
		.dependency = job->spec->dependency,
		.time_limit = job->spec->time ? jobspec_time_seconds(job->spec->time) : 0,
		.grace = jobspec_run_grace(job->spec),
		.stop_signal = jobspec_run_stop_signal(job->spec),
		.max_restarts = jobspec_run_max_restarts(job->spec),
		.restart_on_timeout = (jobspec_run_restart_on(job->spec) & RUN_ON_TIMEOUT) != 0,
		.restart_on_error = (jobspec_run_restart_on(job->spec) & RUN_ON_ERROR) != 0,
		.restart_on_lost = (jobspec_run_restart_on(job->spec) & RUN_ON_LOST) != 0,
	};
}

static int run_plain(struct submission *sub, const struct submission_job *job,
		     struct ssh_session *ss, const struct submission_hooks *h, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	_cleanup_free_ char *log = log_path(job, sub, NULL);
	struct dp_error lost = { 0 };
	int status;
	struct plainjob_lease lease = plain_lease(job);
	plainjob_launch_command(&cmd, sub->stage_dir, sub->work_dir, log, sub->stage, &lease);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &lost) < 0)
		return recover(sub, job, h, &lost, err);
	enum submission_state st = submission_start_answer(status, out.buf, &sub->pid);
	if (st == SUBMISSION_REFUSED) {
		strbuf_add(&sub->remote_err, errout.buf, errout.len);
		sub->state = st;
		return dp_err(err, DPE_FAIL, "cannot start the job on '%s' (exit status %d)",
			      job->host->name, status);
	}
	if (st == SUBMISSION_UNKNOWN) {
		dp_err(&lost, DPE_FAIL, "the job's start on '%s' printed no process id",
		       job->host->name);
		return recover(sub, job, h, &lost, err);
	}
	sub->job_id = xstrdup(sub->stage);
	sub->state = SUBMISSION_SUBMITTED;
	return 0;
}

/* Steps 3 and 4, and the record of the outcome. */
static int submit_recorded(struct submission *sub, const struct submission_job *job,
			   struct ssh_session *ss, struct ledger *l,
			   const struct submission_hooks *h, struct dp_error *err)
{
	struct dp_error e2 = { 0 };
	bool slurm = job->host->type == INV_HOST_SLURM;
	const struct inv_host *host = job->host;
	sub->script = xasprintf("%s/%s", sub->stage_dir, slurm ? "sbatch.sh" : "bootstrap.sh");
	_cleanup_free_ char *log0 = log_path(job, sub, NULL);
	struct ledger_job rec = {
		.host = host->name,
		.cluster = host->cluster ? host->cluster->name : NULL,
		.name = job->spec->job_name ? job->spec->job_name : "dispatch",
		.token = sub->token,
		.commit = (char *)job->commit,
		.dirty = job->dirty,
		.script_path = sub->script,
		.log_path = log0,
		.err_path = job->spec->error,
		.container_image = (char *)container_job_image(job->spec, host),
		.run_id = sub->run_id,
		.max_restarts = (int)jobspec_run_max_restarts(job->spec),
		.wandb_run = sub->run_id && jobscript_sets_wandb_run(job->spec, host),
		.sweep_id = sub->sweep_id,
		.sweep_size = (long)sub->sweep.ntasks,
	};
	_cleanup_free_ char *sweep_params = sub->sweep_id ? sweep_specs_json(job->spec->sweep) : NULL;
	rec.sweep_params = sweep_params;
	if (rec.container_image)
		rec.container_runtime = (char *)container_runtime_name(host->container_runtime);
	if (ledger_begin(l, &rec, err) < 0)
		return -1;
	note(h, SUBMISSION_INFO, "submitting to '%s' (token %s, stage %s)", host->name, sub->token,
	     sub->stage_dir);

	int r = slurm ? run_sbatch(sub, job, ss, h, err) : run_plain(sub, job, ss, h, err);
	if (r < 0 && sub->state == SUBMISSION_REFUSED) {
		if (ledger_forget(l, sub->token, &e2) < 0)
			note(h, SUBMISSION_ERROR, "%s", e2.msg);
		return -1;
	}
	if (r < 0) {
		sub->state = SUBMISSION_UNKNOWN;
		if (ledger_set_state(l, sub->token, "unknown", &e2) < 0)
			note(h, SUBMISSION_ERROR, "%s", e2.msg);
		return -1;
	}
	sub->log = log_path(job, sub, sub->job_id);
	if (ledger_submitted(l, sub->token, sub->job_id, sub->pid, err) < 0 ||
	    ledger_set_log_path(l, sub->token, sub->log, err) < 0)
		return -1;
	return 0;
}

/* ---- a sweep's tasks on a plain host: steps 3 and 4 for each, in one exchange ---- */

static void tasks_refs(const struct submission *sub, struct plainjob_task *pt)
{
	for (size_t i = 0; i < sub->ntasks; i++)
		pt[i] = (struct plainjob_task){ .id = sub->tasks[i].id, .log_path = sub->tasks[i].log };
}

/* After the connection broke with tasks whose answer is missing: a new one, and their
 * pid files looked at. */
static void recover_tasks(struct submission *sub, const struct submission_hooks *h,
			  const char *why)
{
	note(h, SUBMISSION_WARNING, "%s; connecting again to see which of the sweep's tasks "
	     "started", why);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	struct dp_error e = { 0 };
	if (!h || !h->reconnect || h->reconnect(h->data, &ss, &e) < 0) {
		if (e.msg[0])
			note(h, SUBMISSION_ERROR, "%s", e.msg);
		return;
	}
	_cleanup_free_ struct plainjob_task *pt = xcalloc(sub->ntasks, sizeof(*pt));
	tasks_refs(sub, pt);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	plainjob_task_pids_command(&cmd, sub->stage_dir, pt, sub->ntasks);
	int status;
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, NULL, &status, &e) < 0) {
		note(h, SUBMISSION_ERROR, "%s", e.msg);
		return;
	}
	for (size_t i = 0; i < sub->ntasks; i++) {
		struct submission_task *t = &sub->tasks[i];
		bool failed;
		long pid = plainjob_parse_task_pid(out.buf, t->id, &failed);
		if (t->state != SUBMISSION_UNKNOWN || pid <= 1)
			continue;
		t->pid = pid;
		t->state = SUBMISSION_SUBMITTED;
		t->recovered = true;
	}
}

static int submit_tasks(struct submission *sub, const struct submission_job *job,
			struct ssh_session *ss, struct ledger *l, const struct submission_hooks *h,
			struct dp_error *err)
{
	const struct inv_host *host = job->host;
	_cleanup_free_ char *params = sweep_specs_json(job->spec->sweep);
	for (size_t i = 0; i < sub->ntasks; i++) {
		struct submission_task *t = &sub->tasks[i];
		t->log = xasprintf("%s/%s.out", sub->log_dir, t->id);
		_cleanup_free_ char *script = xasprintf("%s/%s/bootstrap.sh", sub->share_dir, t->id);
		_cleanup_free_ char *which = xasprintf("%zu", t->index);
		struct ledger_job rec = {
			.job_id = t->id,
			.host = host->name,
			.cluster = host->cluster ? host->cluster->name : NULL,
			.name = job->spec->job_name ? job->spec->job_name : "dispatch",
			.token = t->token,
			.commit = (char *)job->commit,
			.dirty = job->dirty,
			.script_path = script,
			.log_path = t->log,
			.container_image = (char *)container_job_image(job->spec, host),
			.run_id = t->run_id,
			.max_restarts = (int)jobspec_run_max_restarts(job->spec),
			.wandb_run = t->run_id && jobscript_sets_wandb_run(job->spec, host),
			.sweep_id = sub->sweep_id,
			.sweep_size = (long)sub->sweep.ntasks,
			.sweep_params = params,
			.sweep_first = (long)t->index,
			.sweep_tasks = which,
		};
		if (rec.container_image)
			rec.container_runtime = (char *)container_runtime_name(host->container_runtime);
		if (ledger_begin(l, &rec, err) < 0) {
			struct dp_error e2 = { 0 };
			for (size_t k = 0; k < i; k++) /* nothing started: no rows */
				ledger_forget(l, sub->tasks[k].token, &e2);
			return -1;
		}
	}
	note(h, SUBMISSION_INFO, "starting %zu tasks of sweep %s on '%s' (stage %s)", sub->ntasks,
	     sub->sweep_id, host->name, sub->stage_dir);

	_cleanup_free_ struct plainjob_task *pt = xcalloc(sub->ntasks, sizeof(*pt));
	tasks_refs(sub, pt);
	struct plainjob_lease lease = plain_lease(job);
	lease.sweep = sub->stage;
	lease.sweep_max = job->sweep_cap;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, in = STRBUF_INIT, out = STRBUF_INIT,
				       errout = STRBUF_INIT;
	plainjob_launch_tasks_command(&cmd, &in, sub->stage_dir, sub->work_dir, pt, sub->ntasks,
				      &lease);
	struct dp_error lost = { 0 };
	int status = -1;
	bool answered = ssh_exec_capture(ss, cmd.buf, &in, &out, &errout, &status, &lost) >= 0;
	strbuf_add(&sub->remote_err, errout.buf, errout.len);
	size_t nunknown = 0;
	for (size_t i = 0; i < sub->ntasks; i++) {
		struct submission_task *t = &sub->tasks[i];
		bool failed;
		long pid = answered ? plainjob_parse_task_pid(out.buf, t->id, &failed) : -1;
		if (pid > 1 && !failed) {
			t->pid = pid;
			t->state = SUBMISSION_SUBMITTED;
		} else if (pid >= 0 || (answered && status != 0 && !strstr(out.buf, MARK_TASK))) {
			t->state = SUBMISSION_REFUSED; /* it said so, or nothing was started */
		} else {
			t->state = SUBMISSION_UNKNOWN;
			nunknown++;
		}
	}
	if (nunknown)
		recover_tasks(sub, h, answered
			? "the start of the sweep's tasks did not say how each went" : lost.msg);

	/* each row settled: submitted, forgotten (certainly not started) or unknown */
	size_t nsub = 0, nref = 0, nunk = 0;
	for (size_t i = 0; i < sub->ntasks; i++) {
		struct submission_task *t = &sub->tasks[i];
		struct dp_error e2 = { 0 };
		int r = 0;
		if (t->state == SUBMISSION_SUBMITTED) {
			r = ledger_submitted(l, t->token, t->id, t->pid, &e2);
			nsub++;
		} else if (t->state == SUBMISSION_REFUSED) {
			r = ledger_forget(l, t->token, &e2);
			nref++;
		} else {
			r = ledger_set_state(l, t->token, "unknown", &e2);
			nunk++;
		}
		if (r < 0)
			note(h, SUBMISSION_ERROR, "%s", e2.msg);
	}
	sub->state = nunk ? SUBMISSION_UNKNOWN : nref ? SUBMISSION_REFUSED : SUBMISSION_SUBMITTED;
	if (!nunk && !nref)
		return 0;
	if (nunk)
		return dp_err(err, DPE_FAIL, "%zu of the sweep's %zu tasks on '%s' may or may not have "
			      "started (%zu did, %zu did not)", nunk, sub->ntasks, host->name, nsub, nref);
	return dp_err(err, DPE_FAIL, "%zu of the sweep's %zu tasks on '%s' did not start%s", nref,
		      sub->ntasks, host->name, status > 0 && !nsub ? " (the host refused them)" : "");
}

int submission_run(struct submission *sub, const struct submission_job *job,
		   struct ssh_session *ss, struct ledger *l, const struct submission_hooks *hooks,
		   struct dp_error *err)
{
	sub->state = SUBMISSION_PREPARED;
	if (make_dirs(ss, job, sub, err) < 0 || upload_files(ss, job, sub, hooks, err) < 0)
		return -1;
	if (sub->ntasks) {
		sub->script = xasprintf("%s/bootstrap.sh", sub->stage_dir);
		return submit_tasks(sub, job, ss, l, hooks, err);
	}
	return submit_recorded(sub, job, ss, l, hooks, err);
}
