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
#include "jobs/sweep_arrays.h"
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

static int scripts_for(const struct submission_job *job, struct submission *sub,
		       unsigned long nonce, struct dp_error *err);

int submission_prepare(const struct submission_job *job, struct submission *sub,
		       struct dp_error *err)
{
	memset(sub, 0, sizeof(*sub));
	strbuf_init(&sub->remote_err);
	/* The stage dir's nonce comes from the token (make_dirs takes another when the
	 * name is taken: 16 bits, two submissions in one second may draw the same). */
	sub->token = ledger_new_token();
	unsigned long nonce = job->dry_run ? (unsigned long)getpid()
			      : strtoul(sub->token + strlen(sub->token) - 4, NULL, 16);
	sub->nonce = nonce;
	sub->stage = jobscript_stage_name(job->spec->job_name, time(NULL), nonce);
	if (job->run_id)
		sub->run_id = xstrdup(job->run_id);
	else if (jobspec_is_run(job->spec))
		sub->run_id = xasprintf("run-%.16s", sub->token + 4); /* after "dsp-" */
	if (jobspec_sweep(job->spec, &sub->sweep, err) < 0)
		return -1;
	if (sub->sweep.ntasks) {
		sub->sweep_id = job->sweep_id ? xstrdup(job->sweep_id)
			      : xasprintf("sweep-%.16s", sub->token + 4); /* after "dsp-" */
		if (job->host->type != INV_HOST_SLURM && prepare_tasks(job, sub, err) < 0)
			return -1;
		for (size_t i = 0; job->sweep_indexes && i < job->sweep_nindexes; i++)
			if (job->sweep_indexes[i] >= sub->sweep.ntasks ||
			    (i && job->sweep_indexes[i] <= job->sweep_indexes[i - 1]))
				return dp_err(err, DPE_INPUT, "the sweep's tasks to submit are not "
					      "ascending indexes below %zu", sub->sweep.ntasks);
		if (job->sweep_indexes && !job->sweep_nindexes)
			return dp_err(err, DPE_INPUT, "no task of the sweep to submit");
	}
	sub->code_uploaded = job->code && job->code_sha256 && job->code_len > SUBMISSION_EMBED_MAX;
	return scripts_for(job, sub, nonce, err);
}

/* The stage's name from nonce (and the time now), its tasks' ids, and the scripts,
 * which name the stage's path; again with another nonce when the name is taken. */
static int scripts_for(const struct submission_job *job, struct submission *sub,
		       unsigned long nonce, struct dp_error *err)
{
	_cleanup_free_ char *share = jobscript_share_dir(job->host);
	free(sub->stage);
	free(sub->bootstrap_path);
	jobscript_release(&sub->js);
	sub->stage = jobscript_stage_name(job->spec->job_name, time(NULL), nonce);
	sub->bootstrap_path = xasprintf("%s/%s/bootstrap.sh", share, sub->stage);
	for (size_t i = 0; i < sub->ntasks; i++) {
		free(sub->tasks[i].id);
		sub->tasks[i].id = xasprintf("%s-%zu", sub->stage, sub->tasks[i].index);
	}
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
	for (size_t k = 0; k < sub->narrays; k++) {
		struct submission_array *a = &sub->arrays[k];
		free(a->tasks);
		free(a->spec);
		free(a->record);
		free(a->dependency);
		free(a->token);
		free(a->job_id);
		free(a->log);
	}
	free(sub->arrays);
	free(sub->record);
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
	jobscript_quote_path(sb, code);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, work);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, log);
	/* the stage dir is this submission's alone: a name taken is said, not shared */
	strbuf_adds(sb, " || exit 1\nif ! mkdir -- ");
	jobscript_quote_path(sb, stage);
	strbuf_adds(sb, " 2>/dev/null; then\n\t[ -e ");
	jobscript_quote_path(sb, stage);
	strbuf_adds(sb, " ] || exit 1\n\techo " MARK_STAGE_TAKEN "\n\texit 0\nfi\n");
	print_dir(sb, MARK_SHARE, share);
	print_dir(sb, MARK_STAGE, stage);
	print_dir(sb, MARK_WORK, work);
	print_dir(sb, MARK_LOG, log);
	if (sub->sweep.ntasks && job->host->type == INV_HOST_SLURM)
		slurm_max_array_command(sb); /* how many arrays the sweep takes */
}

static int make_dirs(struct ssh_session *ss, const struct submission_job *job,
		     struct submission *sub, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	int status;
	for (int tries = 0;; tries++) {
		strbuf_reset(&cmd);
		strbuf_reset(&out);
		strbuf_reset(&sub->remote_err);
		dirs_command(&cmd, job, sub);
		if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &sub->remote_err, &status, err) < 0)
			return -1;
		_cleanup_free_ char *taken = status == 0 ? marker_find(out.buf, MARK_STAGE_TAKEN) : NULL;
		if (!taken)
			break;
		if (tries == 16)
			return dp_err(err, DPE_FAIL, "cannot make a stage directory of its own on '%s': "
				      "%s and 16 other names are taken", ssh_session_name(ss), sub->stage);
		/* another submission in the same second drew the same name: the next */
		sub->nonce = (sub->nonce + 1) & 0xffff;
		if (scripts_for(job, sub, sub->nonce, err) < 0)
			return -1;
	}
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
	if (sub->sweep.ntasks && job->host->type == INV_HOST_SLURM)
		sub->max_array_size = slurm_parse_max_array_size(out.buf);
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
		bool array = spec->array || jobspec_is_sweep(spec);
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
		slurm_lookup_command(&cmd, sub->stage_dir, sub->array ? sub->array->record : NULL,
				     sub->token);
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
	struct slurm_sbatch call = { .workdir = sub->work_dir, .stage_dir = sub->stage_dir,
				     .token = sub->token };
	_cleanup_free_ char *first = NULL;
	if (sub->array) { /* one array of a sweep */
		first = xasprintf("%zu", sub->array->first);
		call.record = sub->array->record;
		call.array = sub->array->spec;
		call.dependency = sub->array->dependency;
		call.arg = first;
	}
	slurm_submit_command(&cmd, &call);
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
		.busy_mib = job->host->busy_gpu_mib,
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
	free(sub->script); /* (a sweep's arrays come here once each) */
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
		/* one array of several, or some of the tasks: which (NULL: all) */
		.sweep_first = sub->array ? (long)sub->array->first : 0,
		.sweep_tasks = sub->array && (sub->narrays > 1 || job->sweep_indexes)
			? sub->array->tasks : NULL,
		.sweep_parallel = sub->sweep_id ? job->spec->max_parallel : 0,
	};
	_cleanup_free_ char *sweep_params = sub->sweep_id ? sweep_json(&sub->sweep) : NULL;
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

/* ---- a sweep's job arrays ---- */

/* Array k > 0 of a sweep with --max-parallel: after the one before it has ended. The
 * command line's --dependency replaces the script's: the job's own is joined to it
 * (',': all must hold), except a '?' list (any of them), which takes no other
 * separator: array 0 holds it then, and each array follows array 0 by the chain. */
static char *chain_dependency(const char *own, const char *prev)
{
	if (own && *own && !strchr(own, '?'))
		return xasprintf("%s,afterany:%s", own, prev);
	return xasprintf("afterany:%s", prev);
}

/* The arrays of the tasks asked for (job->sweep_indexes, else all), every task id
 * below max (the cluster's MaxArraySize), each with its sbatch's --array and the
 * name of its outcome files. */
static size_t plan_arrays(const struct submission_job *job, const struct submission *sub,
			  size_t max, struct submission_array **out)
{
	struct sweep_array *parts;
	size_t n = sweep_arrays(job->sweep_indexes,
				job->sweep_indexes ? job->sweep_nindexes : sub->sweep.ntasks, max, &parts);
	struct submission_array *a = xcalloc(n ? n : 1, sizeof(*a));
	for (size_t k = 0; k < n; k++) {
		a[k].first = parts[k].first;
		a[k].ntasks = parts[k].ntasks;
		a[k].tasks = xstrdup(parts[k].tasks);
		a[k].spec = job->spec->max_parallel > 0
			? xasprintf("%s%%%ld", parts[k].ids, job->spec->max_parallel)
			: xstrdup(parts[k].ids);
		const char *rec = sub->record ? sub->record : "sbatch";
		a[k].record = k ? xasprintf("%s-%zu", rec, k) : xstrdup(rec);
		a[k].state = SUBMISSION_PREPARED;
	}
	sweep_arrays_free(parts, n);
	*out = a;
	return n;
}

void submission_sweep_commands(const struct submission_job *job, const struct submission *sub,
			       size_t max, struct strbuf *out)
{
	struct submission_array *a;
	size_t n = plan_arrays(job, sub, max ? max : SWEEP_ARRAY_DEFAULT_MAX, &a);
	/* beside the bootstrap, as the scripts name its path */
	const char *boot = sub->bootstrap_path, *slash = strrchr(boot, '/');
	_cleanup_free_ char *script = xasprintf("%.*s/sbatch.sh", slash ? (int)(slash - boot) : 1,
						slash ? boot : ".");
	for (size_t k = 0; k < n; k++) {
		_cleanup_free_ char *prev = xasprintf("<array %zu>", k);
		_cleanup_free_ char *dep = k && job->spec->max_parallel > 0
			? chain_dependency(job->spec->dependency, prev) : NULL;
		_cleanup_free_ char *first = xasprintf("%zu", a[k].first);
		struct slurm_sbatch call = { .array = a[k].spec, .dependency = dep, .arg = first };
		strbuf_adds(out, "sbatch");
		slurm_sbatch_options(out, &call);
		strbuf_addf(out, " %s %s\n", script, first);
	}
	struct submission tmp = { .arrays = a, .narrays = n };
	submission_release(&tmp);
}

/* The sweep as one job array per submission_array (submission_run, above), in order:
 * the submission's token, job id, log, state and recovered are each array's while
 * its sbatch runs (submit_recorded, run_sbatch and recover read them there), and the
 * first array's after. */
static int submit_arrays(struct submission *sub, const struct submission_job *job,
			 struct ssh_session *ss, struct ledger *l, const struct submission_hooks *h,
			 struct dp_error *err)
{
	const char *host = job->host->name;
	if (sub->max_array_size <= 0)
		note(h, SUBMISSION_WARNING, "'%s' did not say its MaxArraySize (scontrol show "
		     "config): taking SLURM's default, %d", host, SWEEP_ARRAY_DEFAULT_MAX);
	size_t max = sub->max_array_size > 0 ? (size_t)sub->max_array_size : SWEEP_ARRAY_DEFAULT_MAX;
	sub->narrays = plan_arrays(job, sub, max, &sub->arrays);
	if (sub->narrays > 1)
		note(h, SUBMISSION_INFO, "%zu tasks, MaxArraySize %zu on '%s': %zu job arrays%s",
		     job->sweep_indexes ? job->sweep_nindexes : sub->sweep.ntasks, max, host,
		     sub->narrays, job->spec->max_parallel > 0 ? ", each after the one before" : "");
	char *token0 = sub->token;
	struct dp_error e = { 0 };
	size_t k;
	int r = 0;
	for (k = 0; k < sub->narrays; k++) {
		struct submission_array *a = &sub->arrays[k];
		a->token = k ? ledger_new_token() : xstrdup(token0);
		if (k && job->spec->max_parallel > 0)
			a->dependency = chain_dependency(job->spec->dependency, sub->arrays[k - 1].job_id);
		else if (!k && sub->record && job->spec->dependency) /* a retry's first array */
			a->dependency = xstrdup(job->spec->dependency);
		sub->array = a;
		sub->token = a->token;
		sub->recovered = false;
		r = submit_recorded(sub, job, ss, l, h, &e);
		a->state = r == 0 ? SUBMISSION_SUBMITTED : sub->state;
		a->job_id = sub->job_id;
		a->log = sub->log;
		a->recovered = sub->recovered;
		sub->job_id = sub->log = NULL;
		/* a failure, or a connection lost (the array found by its token over
		 * another): the arrays after it are not submitted */
		if (r < 0 || a->recovered)
			break;
	}
	sub->array = NULL;
	sub->token = token0;
	struct submission_array *a0 = &sub->arrays[0];
	sub->job_id = a0->job_id ? xstrdup(a0->job_id) : NULL;
	sub->log = a0->log ? xstrdup(a0->log) : NULL;
	sub->recovered = false;
	for (size_t i = 0; i < sub->narrays; i++)
		sub->recovered |= sub->arrays[i].recovered;
	size_t done = r < 0 ? k : k + 1; /* the arrays certainly submitted */
	if (done >= sub->narrays) {
		sub->state = SUBMISSION_SUBMITTED;
		return 0;
	}
	if (done == 0) { /* the first failed: as one job's failure */
		sub->state = a0->state;
		*err = e;
		return -1;
	}
	/* Some arrays run: they stay, recorded; what did not run, and what to do. */
	sub->state = SUBMISSION_PARTIAL;
	const struct submission_array *bad = &sub->arrays[k];
	size_t ran = 0, left = 0;
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT, ids = STRBUF_INIT;
	for (size_t i = 0; i < sub->narrays; i++)
		*(i < done ? &ran : &left) += sub->arrays[i].ntasks;
	for (size_t i = 0; i < done; i++)
		strbuf_addf(&ids, " %s@%s", sub->arrays[i].job_id, host);
	if (r == 0)
		strbuf_addf(&msg, "the connection to '%s' broke (array %s@%s, tasks %s, found by "
			    "its token)", host, bad->job_id, host, bad->tasks);
	else
		strbuf_adds(&msg, e.msg);
	strbuf_addf(&msg, "; sweep %s: %zu task(s) submitted as%s", sub->sweep_id, ran, ids.buf);
	if (r < 0 && bad->state == SUBMISSION_UNKNOWN)
		strbuf_addf(&msg, "; tasks %s may or may not run (token %s: look for it before "
			    "anything else)", bad->tasks, bad->token);
	const struct submission_array *next = r < 0 && bad->state == SUBMISSION_UNKNOWN
		? bad + 1 : &sub->arrays[done];
	if (next < sub->arrays + sub->narrays)
		strbuf_addf(&msg, "; the %zu task(s) from index %zu on (%s%s) were not submitted",
			    left - (next > &sub->arrays[done] ? bad->ntasks : 0), next->first,
			    next->tasks, next + 1 < sub->arrays + sub->narrays ? ", ..." : "");
	return dp_err(err, DPE_FAIL, "%s. To run them, cancel the arrays (dispatch cancel%s) and "
		      "submit the sweep again", msg.buf, ids.buf);
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
	_cleanup_free_ char *params = sweep_json(&sub->sweep);
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
			.sweep_parallel = job->spec->max_parallel,
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
		} else if (pid >= 0 || (answered && status != 0 && !strstr(out.buf, MARK_TASKS_BEGIN))) {
			t->state = SUBMISSION_REFUSED; /* it said so, or it ended before any task */
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
	if (sub->sweep.ntasks && job->host->type == INV_HOST_SLURM)
		return submit_arrays(sub, job, ss, l, hooks, err);
	if (sub->ntasks) {
		sub->script = xasprintf("%s/bootstrap.sh", sub->stage_dir);
		return submit_tasks(sub, job, ss, l, hooks, err);
	}
	return submit_recorded(sub, job, ss, l, hooks, err);
}

/* ---- submit --retry: some tasks again, from the sweep's stage dir ---- */

/* rec's output pattern: its log path with its job id back to %A (a task's %a stays). */
static char *retry_output(const struct ledger_job *rec)
{
	const char *log = rec->log_path, *slash = log ? strrchr(log, '/') : NULL;
	const char *id = slash && rec->job_id ? strstr(slash, rec->job_id) : NULL;
	if (!id)
		return log ? xstrdup(log) : NULL;
	return xasprintf("%.*s%%A%s", (int)(id - log), log, id + strlen(rec->job_id));
}

/* The work dir, MaxArraySize, and whether the stage still has its sbatch.sh. */
static int retry_dirs(struct ssh_session *ss, const struct inv_host *host,
		      struct submission *sub, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	_cleanup_free_ char *work = cluster_work(host);
	int status;
	strbuf_adds(&cmd, "s=");
	sh_quote(&cmd, sub->stage_dir);
	/* (a sweep staged before the offset argument: its tasks cannot be told apart) */
	strbuf_adds(&cmd, "/sbatch.sh\ntest -f \"$s\" || exit 3\n"
			  "grep -q DISPATCH_SWEEP_FIRST \"$s\" || exit 4\n");
	print_dir(&cmd, MARK_WORK, work);
	slurm_max_array_command(&cmd);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &sub->remote_err, &status, err) < 0)
		return -1;
	if (status == 3)
		return dp_err(err, DPE_NOTFOUND, "the sweep's stage dir on '%s' has no sbatch.sh any "
			      "more (%s): its tasks cannot run again as they were; submit the sweep "
			      "anew", host->name, sub->stage_dir);
	if (status == 4)
		return dp_err(err, DPE_INPUT, "the sweep's sbatch.sh on '%s' (%s) was written by an "
			      "older dispatch, which cannot run some of its tasks alone: submit the "
			      "sweep anew", host->name, sub->stage_dir);
	sub->work_dir = marker_find(out.buf, MARK_WORK);
	if (status != 0 || !sub->work_dir || !*sub->work_dir)
		return dp_err(err, DPE_FAIL, "cannot find the work dir on '%s' (exit status %d)",
			      host->name, status);
	strbuf_reset(&sub->remote_err);
	sub->max_array_size = slurm_parse_max_array_size(out.buf);
	return 0;
}

int submission_retry(struct submission *sub, const struct submission_retry *rq,
		     struct ssh_session *ss, struct ledger *l, const struct submission_hooks *hooks,
		     struct dp_error *err)
{
	const struct ledger_job *rec = rq->rec;
	memset(sub, 0, sizeof(*sub));
	strbuf_init(&sub->remote_err);
	sub->state = SUBMISSION_PREPARED;
	const char *slash = rec->script_path ? strrchr(rec->script_path, '/') : NULL;
	if (!slash || !rec->sweep_id || rq->host->type != INV_HOST_SLURM)
		return dp_err(err, DPE_INPUT, "job %s@%s is not a sweep's job array dispatch "
			      "staged: nothing to submit again", rec->job_id ? rec->job_id : "-",
			      rec->host);
	if (sweep_from_json(&sub->sweep, rec->sweep_params, err) < 0)
		return -1;
	sub->token = ledger_new_token();
	sub->record = xasprintf("retry-%.8s", sub->token + 4);
	sub->sweep_id = xstrdup(rec->sweep_id);
	sub->stage_dir = xstrndup(rec->script_path, (size_t)(slash - rec->script_path));
	sub->stage = xstrdup(strrchr(sub->stage_dir, '/') ? strrchr(sub->stage_dir, '/') + 1
							  : sub->stage_dir);
	_cleanup_free_ char *output = retry_output(rec);
	/* after the sweep's arrays still running, when a cap holds across the sweep */
	struct jobspec spec = { .job_name = rec->name, .output = output, .error = rec->err_path,
				.max_parallel = rq->max_parallel,
				.dependency = rq->max_parallel > 0 ? (char *)rq->after : NULL };
	struct submission_job job = { .spec = &spec, .host = rq->host, .commit = rec->commit,
				      .dirty = rec->dirty, .sweep_indexes = rq->indexes,
				      .sweep_nindexes = rq->n };
	for (size_t i = 0; i < rq->n; i++)
		if (rq->indexes[i] >= sub->sweep.ntasks || (i && rq->indexes[i] <= rq->indexes[i - 1]))
			return dp_err(err, DPE_INPUT, "the sweep's tasks to submit are not "
				      "ascending indexes below %zu", sub->sweep.ntasks);
	if (!rq->n)
		return dp_err(err, DPE_INPUT, "no task of the sweep to submit");
	if (retry_dirs(ss, rq->host, sub, err) < 0)
		return -1;
	return submit_arrays(sub, &job, ss, l, hooks, err);
}

int submission_retry_plain(struct ssh_session *ss, const char *const *ids,
			   const char *const *stages, size_t n, long *pids,
			   struct strbuf *remote_err, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf prog = STRBUF_INIT, out = STRBUF_INIT;
	int status;
	/* the program on stdin: as many tasks as failed, whatever one command holds */
	plainjob_retry_command(&prog, ids, stages, n);
	if (ssh_exec_capture(ss, "sh -s", &prog, &out, remote_err, &status, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		bool failed;
		pids[i] = plainjob_parse_task_pid(out.buf, ids[i], &failed);
		if (failed || (pids[i] >= 0 && pids[i] <= 1))
			pids[i] = 0;
	}
	return 0;
}
