/* SPDX-License-Identifier: MIT */
/*
 * dispatch notebook (the reference's dispatch_repl) and notebook attach JOB. The job
 * and its options are submit-packed's (cmd/submit.h, with notebook_spec's command and
 * token); here, once it is submitted (or for attach, found in the ledger):
 *
 *   1. wait: one connection to the host, polled every second (lib/notebook.h) until
 *      the job's log says the server answers, the job or the server ends, Ctrl-C, or
 *      --timeout (a fresh job is then cancelled: it would hold its node for nothing);
 *   2. the tunnel: a local port forwarded in-process over the same connection to the
 *      node's address and port (direct-tcpip from the login node, or a stdio forward
 *      through the user's OpenSSH master), the URL with the token on stdout;
 *   3. Ctrl-C ends the tunnel (nothing is left behind: it is this process) and cancels
 *      the job with --cancel-on-exit, asks on a terminal, and otherwise says how to
 *      attach again.
 *
 * The token goes to the server in the job's environment (bootstrap.sh, mode 0700) and
 * is kept here in a mode 0600 file under the state dir; it is printed only in the URL.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "inventory/jobspec.h"
#include "jobref.h"
#include "ledger.h"
#include "notebook.h"
#include "transport/forward.h"
#include "transport/ssh.h"
#include "submit.h"

int notebook_spec(struct jobspec *cli, struct notebook_opts *o)
{
	struct dp_error err = { 0 };
	o->token = notebook_new_token();
	if (!o->token) {
		error_msg("cannot make the notebook's token: /dev/urandom cannot be read");
		return DPE_FAIL;
	}
	if (notebook_jobspec(cli, o->token, &err) < 0)
		return report_error(&err);
	return 0;
}

void notebook_opts_release(struct notebook_opts *o)
{
	free(o->token);
	o->token = NULL;
	if (o->listen_fd >= 0)
		close(o->listen_fd);
	o->listen_fd = -1;
}

int notebook_listen(struct notebook_opts *o)
{
	struct dp_error err = { 0 };
	int bound;
	if (o->detach || o->listen_fd >= 0)
		return 0;
	if (forward_listen(o->local_port, &o->listen_fd, &bound, &err) < 0) {
		if (!o->local_port)
			return report_error(&err);
		error_msg("cannot listen on 127.0.0.1:%d for the tunnel (in use?): choose another "
			  "with --port, or leave --port out for a free one", o->local_port);
		return err.kind;
	}
	o->local_port = bound;
	return 0;
}

/* Where the server is, once it answers. */
struct session {
	struct dp_ctx *ctx;
	const char *job;
	const struct notebook_opts *o;
	struct jobref *ref;
	bool plain;
	char *token;
	struct ssh_session *ss;
	struct notebook_poll poll;
	volatile sig_atomic_t *stop;
};

static void say_state(void *data, const char *state)
{
	const struct session *s = data;
	info_msg(s->ctx, "job %s is %s", s->job, state);
}

/* Step 1. 0 when the server answers; else the exit status (reported), or -1 when
 * Ctrl-C came first. */
static int wait_ready(struct session *s)
{
	/* What the messages name: the job's output, and its stderr when apart. */
	const char *err_path = s->ref->rec.err_path;
	_cleanup_free_ char *log = err_path && *err_path && !streq(err_path, s->ref->rec.log_path)
					   ? xasprintf("%s (stderr: %s)", s->ref->rec.log_path, err_path)
					   : xstrdup(s->ref->rec.log_path);
	_cleanup_free_ char *stage = s->plain ? job_stage_dir(s->ref) : NULL;
	const struct notebook_job job = { .id = s->ref->id, .log = s->ref->rec.log_path,
					  .plain = s->plain, .stage_dir = stage,
					  .pgid = s->ref->rec.pid };
	struct dp_error err = { 0 };
	int status = -1;
	switch (notebook_wait_ready(s->ss, &job, s->o->timeout, s->stop, say_state, s, &s->poll,
				    &status, &err)) {
	case NOTEBOOK_READY:
		return 0;
	case NOTEBOOK_STOPPED:
		return -1;
	case NOTEBOOK_NO_CONNECTION:
		return report_error(&err);
	case NOTEBOOK_UNREADABLE:
		error_msg("cannot read the state of job %s from '%s' (exit status %d)", s->job,
			  s->ref->host, status);
		return DPE_FAIL;
	case NOTEBOOK_SERVER_EXITED:
		error_msg("the Jupyter server of job %s ended with status %d before it answered; "
			  "its log: %s ('dispatch logs %s')", s->job, s->poll.exit_status, log, s->job);
		return DPE_FAIL;
	case NOTEBOOK_JOB_ENDED:
		error_msg("job %s %s (%s); its log: %s ('dispatch logs %s')", s->job,
			  s->poll.ready ? "has ended: its Jupyter server is gone"
					: "ended before its Jupyter server answered",
			  *s->poll.state ? s->poll.state : "no longer in the queue", log, s->job);
		return DPE_FAIL;
	case NOTEBOOK_NO_ANSWER:
		break;
	}
	error_msg("the Jupyter server of job %s did not answer within %g s (the job is %s); its "
		  "log: %s ('dispatch logs %s'); --timeout gives it longer", s->job, s->o->timeout,
		  s->poll.state, log, s->job);
	if (s->o->fresh && cancel_one_job(s->ctx, s->job) != 0)
		error_msg("job %s may still run: 'dispatch cancel %s'", s->job, s->job);
	return DPE_TIMEOUT;
}

/* The reference's ReplResult, as far as dispatch knows it. */
static void print_json(struct session *s, int local_port, const char *url)
{
	const struct inv_host *h = s->ctx->inv ? inventory_host(s->ctx->inv, s->ref->host) : NULL;
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddBoolToObject(doc, "ok", true);
	cJSON_AddBoolToObject(doc, "is_slurm", !s->plain);
	cJSON_AddStringToObject(doc, "selected_host", s->ref->host);
	cJSON_AddStringToObject(doc, "ssh_host", inventory_ssh_destination(s->ctx->inv, s->ref->host));
	cJSON_AddStringToObject(doc, "job", s->job);
	cJSON_AddStringToObject(doc, "job_id", s->ref->id);
	cJSON_AddStringToObject(doc, "allocated_hostname", s->poll.node);
	cJSON_AddStringToObject(doc, "remote_address", s->poll.addr);
	cJSON_AddNumberToObject(doc, "remote_port", (double)s->poll.port);
	json_add_int_or_null(doc, "local_port", local_port);
	json_add_str_or_null(doc, "local_url", url);
	json_add_int_or_null(doc, "tunnel_pid", url ? (long)getpid() : -1);
	json_add_str_or_null(doc, "log_path", s->ref->rec.log_path);
	json_add_str_or_null(doc, "cluster_name",
			     s->ref->rec.cluster ? s->ref->rec.cluster
						 : h && h->cluster ? h->cluster->name : NULL);
	json_add_str_or_null(doc, "work_dir", s->o->work_dir);
	json_print(doc);
}

/* Step 3: after Ctrl-C (or the tunnel's end). */
static int on_exit_ask(struct session *s)
{
	bool cancel = s->o->cancel_on_exit;
	if (!cancel && isatty(STDIN_FILENO)) {
		fprintf(stderr, "\ndispatch: cancel job %s? [y/N] ", s->job);
		fflush(stderr);
		*s->stop = 0;
		char line[16];
		cancel = fgets(line, sizeof(line), stdin) && (line[0] == 'y' || line[0] == 'Y');
	}
	if (cancel)
		return cancel_one_job(s->ctx, s->job);
	if (s->ctx->verbosity >= 0)
		note_msg("job %s keeps running: 'dispatch notebook attach %s' opens the tunnel again, "
			 "'dispatch cancel %s' stops it", s->job, s->job, s->job);
	return 0;
}

static int tunnel(struct session *s)
{
	struct dp_error err = { 0 };
	if (s->o->detach) {
		if (s->ctx->json)
			print_json(s, -1, NULL);
		else if (s->ctx->verbosity >= 0)
			note_msg("job %s: Jupyter answers on %s port %ld; 'dispatch notebook attach %s' "
				 "opens a tunnel to it", s->job, s->poll.node, s->poll.port, s->job);
		return 0;
	}
	int lfd = s->o->listen_fd, bound = s->o->local_port;
	_cleanup_free_ char *url = xasprintf("http://127.0.0.1:%d/?token=%s", bound, s->token);
	if (s->ctx->json)
		print_json(s, bound, url);
	else
		printf("%s\n", url);
	fflush(stdout);
	if (s->ctx->verbosity >= 0)
		note_msg("job %s: Jupyter on %s port %ld, forwarded to 127.0.0.1:%d (Ctrl-C to stop)",
			 s->job, s->poll.node, s->poll.port, bound);
	if (forward_serve(s->ctx, s->ss, lfd, s->poll.addr, (int)s->poll.port, &err) < 0) {
		report_error(&err);
		note_msg("the tunnel ended; job %s keeps running: 'dispatch notebook attach %s' opens "
			 "it again", s->job, s->job);
		return err.kind;
	}
	return on_exit_ask(s);
}

int notebook_session(struct dp_ctx *ctx, const char *job, struct notebook_opts *o)
{
	struct dp_error err = { 0 };
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, (char *const[]){ (char *)job, NULL }, 1, NULL, &set);
	if (r)
		return r;
	struct session s = { .ctx = ctx, .job = job, .o = o, .ref = &set.refs[0],
			     .poll = { .exit_status = -1 } };
	s.plain = job_is_plain(ctx, s.ref);
	if (!s.ref->in_ledger || !s.ref->rec.log_path) {
		error_msg("job %s is not in the ledger with a log: only a job that 'dispatch notebook' "
			  "started here can be attached to", job);
		return DPE_NOTFOUND;
	}
	if (notebook_token_load(s.ref->rec.token, &s.token, &err) < 0) {
		if (err.kind == DPE_NOTFOUND)
			error_msg("job %s has no notebook token on this machine: it was not started by "
				  "'dispatch notebook' (or from another state dir)", job);
		else
			report_error(&err);
		return err.kind;
	}
	if ((r = notebook_listen(o))) {
		free(s.token);
		return r;
	}
	s.stop = forward_catch_signals();
	r = session_open(ctx, inventory_ssh_destination(ctx->inv, s.ref->host), &s.ss, &err) < 0
		    ? report_error(&err)
		    : wait_ready(&s);
	if (r == 0)
		r = tunnel(&s);
	else if (r < 0)
		r = on_exit_ask(&s);
	notebook_poll_release(&s.poll);
	ssh_session_free(s.ss);
	free(s.token);
	return r;
}

/* ---- the commands ---- */

/* The tunnel's options, notebook's and attach's: the same variables. */
#define SESSION_OPTIONS \
	OPT_INT(0, "port", &submit_opt.nb.local_port, "LOCAL", "the local port of the tunnel (default: a free one)", 0, 65535), \
	OPT_BOOL(0, "cancel-on-exit", &submit_opt.nb.cancel_on_exit, "cancel the job when the tunnel ends (Ctrl-C), without asking"), \
	OPT_SECONDS(0, "timeout", &submit_opt.nb.timeout, "S", "give up when the server does not answer within S seconds (default 300)", \
		    .whole = true, .min = 1),

static const struct dp_option notebook_options[] = {
	HOST_OPTIONS
	JOB_OPTIONS
	REPO_OPTIONS
	SESSION_OPTIONS
	OPT_BOOL(0, "detach", &submit_opt.nb.detach, "once the server answers, leave it running and exit (no tunnel)"),
	OPT_END,
};

static const struct dp_rule notebook_rules[] = {
	HOST_RULES
	{ DP_EXCLUDES, "--detach", "--cancel-on-exit", "--detach leaves the job running: not with --cancel-on-exit" },
	REF_RULES
	{ 0 },
};

static const struct dp_option attach_options[] = {
	SESSION_OPTIONS
	OPT_END,
};

static int cmd_notebook(struct dp_ctx *ctx, const struct dp_args *args)
{
	return submit_main(ctx, args, SUBMIT_NOTEBOOK);
}

static int cmd_notebook_attach(struct dp_ctx *ctx, const struct dp_args *args)
{
	int r = notebook_session(ctx, args->pos[0], &submit_opt.nb);
	notebook_opts_release(&submit_opt.nb);
	return r;
}

static const struct dispatch_cmd dispatch_cmd_notebook_attach = {
	.name = "notebook attach",
	.summary = "re-open the tunnel to a notebook job that runs",
	.usage = "JOB [--port LOCAL] [--timeout S] [--cancel-on-exit]",
	.description =
		"Waits until the notebook job's Jupyter server answers (it may still be starting),\n"
		"then forwards a local port to it and prints the URL, until Ctrl-C.",
	.opts = attach_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_notebook_attach,
};

static const struct dispatch_cmd *const notebook_subcommands[] = {
	&dispatch_cmd_notebook_attach,
	&dispatch_cmd_notebook_sync,
	NULL,
};

const struct dispatch_cmd dispatch_cmd_notebook = {
	.name = "notebook",
	.summary = "start a Jupyter server as a job and tunnel to it",
	.usage = "[-H HOST | --solve [--check]] [JOB OPTIONS] [--repo DIR] [--ref REF | --dirty] "
		 "[--port LOCAL] [--timeout S] [--detach | --cancel-on-exit]",
	.description =
		"Submits a job with the repository's code (as submit-packed) that starts a Jupyter\n"
		"server on the node it gets, waits until the server answers, forwards a local\n"
		"port to it through the login node and prints the URL with its token. Ctrl-C\n"
		"ends the tunnel and asks whether to cancel the job. 'attach JOB' re-opens it;\n"
		"'sync JOB' sends the work tree's changes into its code.",
	.opts = notebook_options,
	.rules = notebook_rules,
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH | CMD_LATE_RULES,
	.fn = cmd_notebook,
	.subcommands = notebook_subcommands,
};
