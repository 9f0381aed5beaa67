/* SPDX-License-Identifier: MIT */
/*
 * dispatch shell JOB [--node N] [-- CMD...]: a login shell (or CMD) inside a running
 * job's allocation, as ssh -t gives one: on a SLURM host an overlap step on the job's
 * node through the login node (lib/jobs/jobshell.h), on a plain host in the job's
 * work dir. The remote exit status is passed through.
 */
#include <unistd.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/jobshell.h"
#include "transport/ssh.h"

static const char *opt_host, *opt_node;

static const struct dp_option shell_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of a job given by bare ID", "host"),
	OPT_STRING(0, "node", &opt_node, "N", "the job's Nth node (1: the first, the default) or a node by name", NULL),
	OPT_END,
};

static int cmd_shell(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host_opt = opt_host, *node_opt = opt_node;
	struct dp_error err = { 0 };
	if (ctx->json)
		return usage_error(ctx, "--json: a shell is interactive and prints no document; "
				   "use 'dispatch status --json' for the job, or leave --json out");
	int njob = args->dashdash >= 0 ? args->dashdash : args->npos;
	if (njob == 0)
		return usage_error(ctx, "no JOB given (dispatch shell JOB [-- CMD...])");
	if (njob > 1)
		return usage_error(ctx, "'%s': one JOB, and a command only after -- "
				   "(dispatch shell JOB -- CMD...)", args->pos[1]);
	_cleanup_strv_free_ char **argv = NULL;
	for (int i = njob; i < args->npos; i++)
		strv_add(&argv, args->pos[i]);
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args->pos, 1, host_opt, &set);
	if (r)
		return r;
	const struct jobref *ref = &set.refs[0];
	bool pty = isatty(STDIN_FILENO);

	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (ssh_session_open(&sc, inventory_ssh_destination(ctx->inv, ref->host), &ss, &err) < 0)
		return report_error(&err);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, remote_err = STRBUF_INIT;
	_cleanup_free_ char *stage = job_stage_dir(ref);
	struct jobshell_request rq = { .id = ref->id, .arg = ref->arg, .host = ref->host,
				       .stage_dir = stage, .pgid = ref->rec.pid, .node = node_opt,
				       .pty = pty, .argv = argv };
	bool usage;
	if (jobshell_prepare(ss, job_is_plain(ctx, ref), &rq, &cmd, &remote_err, &usage, &err) < 0) {
		fputs(remote_err.buf, stderr);
		return usage ? usage_error(ctx, "%s", err.msg) : report_error(&err);
	}

	struct ssh_exec x = {
		.command = cmd.buf,
		.pty = pty,
		.in_fd = STDIN_FILENO,
		.on_stdout = pass_stdout,
		.on_stderr = pass_stderr,
	};
	if (pty)
		tty_session(&x);
	int status;
	r = ssh_exec(ss, &x, &status, &err);
	tty_raw_end();
	return r < 0 ? report_error(&err) : status;
}

const struct dispatch_cmd dispatch_cmd_shell = {
	.name = "shell",
	.summary = "a shell (or a command) inside a running job's allocation",
	.usage = "[-H HOST] [--node N] JOB [-- CMD...]",
	.description =
		"Opens a login shell inside a running job, as ssh -t would on its node: on a\n"
		"SLURM host an 'srun --jobid=JOB --overlap --pty' step on the job's first node\n"
		"(or --node N), started through the login node with the user's login shell\n"
		"there, so SLURM_JOB_ID, CUDA_VISIBLE_DEVICES and the job's other variables are\n"
		"set; on a plain host a login shell in the job's work dir. With -- CMD, CMD runs\n"
		"instead (its words reach the node as they are). The terminal's size follows\n"
		"resizes; without a terminal on stdin no pty is asked for. The exit status is\n"
		"the shell's or CMD's; a job that does not run (pending, ended) exits 1 naming\n"
		"its state, an unknown one 4.",
	.opts = shell_options,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_shell,
};
