/* SPDX-License-Identifier: MIT */
/*
 * Notebooks (dispatch notebook): a job whose command starts a Jupyter server on the
 * node it gets, and what dispatch reads back to reach it.
 *
 *  - The job's command (notebook_job_command) picks a free port on the node, starts
 *    the server (uv run --with jupyterlab when uv and a pyproject.toml are there,
 *    else the node's jupyter: lab, notebook or server, whichever it has), listening
 *    on ADDR only (a SLURM node's NodeAddr from scontrol, which the login node
 *    reaches it by; 127.0.0.1 on a plain host), waits until it answers there, then
 *    prints "dispatch-notebook NODE ADDR PORT". When the server ends before it
 *    answered, "dispatch-notebook-exit STATUS".
 *  - The token is made here and reaches the server as JUPYTER_TOKEN in the job's
 *    environment (bootstrap.sh, mode 0700): never in argv. The server then writes
 *    "?token=..." in its log, not the token.
 *  - The token is kept locally in STATE/notebooks/LEDGER_TOKEN (mode 0600) for
 *    notebook attach.
 *  - While it waits, dispatch polls with notebook_poll_command: the markers from the
 *    job's log and the job's state.
 */
#ifndef DISPATCH_NOTEBOOK_H
#define DISPATCH_NOTEBOOK_H

#include <signal.h>
#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"

struct plainjob_ref;
struct ssh_session;

/* The environment variable that carries the token to the server. */
#define NOTEBOOK_TOKEN_ENV "JUPYTER_TOKEN"

/* The job's command (bash, run by the bootstrap in the code's directory). */
const char *notebook_job_command(void);

/* The notebook job into js: its command, the token in its environment (never in
 * argv); its name is the repository's directory's unless js has one
 * (jobspec_default_name). 0, or -1 (err). */
struct jobspec;
int notebook_jobspec(struct jobspec *js, const char *token, struct dp_error *err);

/* A fresh random token: 48 hex digits. Caller frees. */
char *notebook_new_token(void);

/* One command that prints the log's notebook markers and the job's state. SLURM:
 * job_id and log; a plain host: plain (its status answer) and log. */
void notebook_poll_command(struct strbuf *sb, const char *log, const char *job_id,
			   const struct plainjob_ref *plain);

struct notebook_poll {
	bool ready;             /* the server answers: node, addr, port */
	char *node, *addr;
	long port;
	int exit_status;        /* >= 0: the server ended before it answered */
	char *state;            /* the job's state ("PENDING", "RUNNING", ...), "" gone */
};

/* The poll's answer (plain: from a plain host). 0, or -1 when it is not one (no state
 * line: the command did not run to its end). */
int notebook_parse_poll(const char *out, bool plain, struct notebook_poll *res);
void notebook_poll_release(struct notebook_poll *res);
/* The job may still start the server: PENDING, RUNNING and their kin. */
bool notebook_state_alive(const char *state);

/* How notebook_wait_ready ended. */
enum notebook_wait {
	NOTEBOOK_READY,         /* the server answers and the job runs: poll has where */
	NOTEBOOK_STOPPED,       /* *stop was set (Ctrl-C) */
	NOTEBOOK_NO_CONNECTION, /* the poll command failed: err says why */
	NOTEBOOK_UNREADABLE,    /* its answer held no state: *status is its exit status */
	NOTEBOOK_SERVER_EXITED, /* the server ended before it answered (poll->exit_status) */
	NOTEBOOK_JOB_ENDED,     /* the job left the queue or ended (poll->state, "" gone) */
	NOTEBOOK_NO_ANSWER,     /* no answer within timeout seconds (poll->state) */
};
/* The notebook's job, as its ledger entry has it. */
struct notebook_job {
	const char *id, *log;
	bool plain;             /* on a plain host: its stage dir and process group */
	const char *stage_dir;
	long pgid;
};
/* Polls over ss once a second until job's server answers: a job squeue no longer lists
 * counts as gone only after five polls in a row (a restarting controller answers
 * nothing too). on_state (may be NULL) hears each new state. poll holds the last
 * answer; the caller releases it. */
enum notebook_wait notebook_wait_ready(struct ssh_session *ss, const struct notebook_job *job,
				       double timeout, volatile sig_atomic_t *stop,
				       void (*on_state)(void *data, const char *state), void *data,
				       struct notebook_poll *poll, int *status, struct dp_error *err);

/* STATE_DIR/notebooks/LEDGER_TOKEN: write (mode 0600, in a 0700 dir) and read the
 * notebook's token. Errors: DPE_FAIL (write), DPE_NOTFOUND (no such file). */
int notebook_token_save(const char *ledger_token, const char *token, struct dp_error *err);
int notebook_token_load(const char *ledger_token, char **token, struct dp_error *err);

#endif
