/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/marker.h"
#include "inventory/jobspec.h"
#include "base/shquote.h"
#include "ledger.h"
#include "notebook.h"
#include "sched/plain/plainjob.h"
#include "shfiles.h"
#include "transport/ssh.h"


const char *notebook_job_command(void)
{
	return shfile_notebook_job; /* notebook_job.sh */
}

int notebook_jobspec(struct jobspec *js, const char *token, struct dp_error *err)
{
	char *argv[] = { (char *)notebook_job_command(), NULL };
	jobspec_set_command_argv(js, argv, 1);
	_cleanup_free_ char *env = xasprintf("%s=%s", NOTEBOOK_TOKEN_ENV, token);
	/* (its name: the repository's directory's, jobspec_default_name) */
	return jobspec_set(js, "env", env, NULL, err);
}

char *notebook_new_token(void)
{
	unsigned char raw[24];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, raw, sizeof(raw)) : -1;
	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)sizeof(raw))
		return NULL; /* a guessable token is worse than none: the caller stops */
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(raw); i++)
		strbuf_addf(&sb, "%02x", raw[i]);
	return strbuf_detach(&sb);
}

void notebook_poll_command(struct strbuf *sb, const char *log, const char *job_id,
			   const struct plainjob_ref *plain)
{
	strbuf_adds(sb, "grep -E '^" MARK_NOTEBOOK "(-exit)? ' ");
	sh_quote(sb, log);
	strbuf_adds(sb, " 2>/dev/null\n");
	if (plain) {
		plainjob_status_command(sb, plain, 1);
		return;
	}
	strbuf_adds(sb, "printf '" MARK_NOTEBOOK_STATE " %s\\n' \"$(squeue -h -j ");
	sh_quote(sb, job_id);
	strbuf_adds(sb, " -o %T 2>/dev/null | head -n 1)\"\n");
}

/* "NODE ADDR PORT" */
static bool parse_ready(const char *v, struct notebook_poll *res)
{
	char node[256], addr[256];
	long port;
	char extra;
	if (sscanf(v, "%255s %255s %ld %c", node, addr, &port, &extra) != 3 || port < 1 || port > 65535)
		return false;
	free(res->node);
	free(res->addr);
	res->node = xstrdup(node);
	res->addr = xstrdup(addr);
	res->port = port;
	res->ready = true;
	return true;
}

int notebook_parse_poll(const char *out, bool plain, struct notebook_poll *res)
{
	*res = (struct notebook_poll){ .exit_status = -1 };
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		long n;
		if ((v = marker_value(line, MARK_NOTEBOOK)) && *v)
			parse_ready(v, res);
		else if ((v = marker_value(line, MARK_NOTEBOOK_EXIT)) && parse_long(v, 0, 255, &n))
			res->exit_status = (int)n;
		else if (!plain && (v = marker_value(line, MARK_NOTEBOOK_STATE))) {
			free(res->state);
			res->state = xstrdup(v);
		}
	}
	line_iter_release(&it);
	if (plain) {
		struct plainjob_status *st;
		size_t n = plainjob_parse_status(out, &st);
		if (n > 0)
			res->state = xstrdup(st[0].state);
		plainjob_status_free(st, n);
	}
	return res->state ? 0 : -1;
}

void notebook_poll_release(struct notebook_poll *res)
{
	free(res->node);
	free(res->addr);
	free(res->state);
	*res = (struct notebook_poll){ .exit_status = -1 };
}

bool notebook_state_alive(const char *state)
{
	static const char *const alive[] = { "PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
					     "RESIZING", "REQUEUED", "SUSPENDED", NULL };
	for (size_t i = 0; state && alive[i]; i++)
		if (streq(state, alive[i]))
			return true;
	return false;
}

static char *token_path(const char *ledger_token, bool make_dir)
{
	_cleanup_free_ char *state = ledger_state_dir();
	_cleanup_free_ char *dir = xasprintf("%s/notebooks", state);
	if (make_dir) {
		mkdir(state, 0700);
		mkdir(dir, 0700);
	}
	return xasprintf("%s/%s", dir, ledger_token);
}

int notebook_token_save(const char *ledger_token, const char *token, struct dp_error *err)
{
	_cleanup_free_ char *path = token_path(ledger_token, true);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", path, strerror(errno));
	_cleanup_free_ char *line = xasprintf("%s\n", token);
	int r = fchmod(fd, 0600) == 0 ? write_all(fd, line, strlen(line)) : -1;
	int e = errno;
	if (close(fd) < 0 && r == 0) {
		r = -1;
		e = errno;
	}
	if (r < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", path, strerror(e));
	return 0;
}

int notebook_token_load(const char *ledger_token, char **token, struct dp_error *err)
{
	_cleanup_free_ char *path = token_path(ledger_token, false);
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf)
		return dp_err(err, errno == ENOENT ? DPE_NOTFOUND : DPE_FAIL, "cannot read '%s': %s",
			      path, strerror(errno));
	buf[strcspn(buf, "\n")] = '\0';
	*token = buf;
	return 0;
}

#define GONE_POLLS 5     /* polls without the job before it counts as ended */

static void sleep_second(void)
{
	struct timespec ts = { .tv_sec = 1 };
	nanosleep(&ts, NULL); /* a signal ends it early: the caller looks at stop */
}

enum notebook_wait notebook_wait_ready(struct ssh_session *ss, const struct notebook_job *job,
				       double timeout, volatile sig_atomic_t *stop,
				       void (*on_state)(void *data, const char *state), void *data,
				       struct notebook_poll *poll, int *status, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	const struct plainjob_ref p = { .id = job->id, .stage_dir = job->stage_dir, .pgid = job->pgid };
	const struct plainjob_ref *plain = job->plain ? &p : NULL;
	notebook_poll_command(&cmd, job->log, job->id, plain);
	double deadline = monotonic_seconds() + timeout;
	_cleanup_free_ char *last_state = NULL;
	int gone = 0;
	for (;;) {
		_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
		if (*stop)
			return NOTEBOOK_STOPPED;
		if (ssh_exec_capture(ss, cmd.buf, NULL, &out, NULL, status, err) < 0)
			return *stop ? NOTEBOOK_STOPPED : NOTEBOOK_NO_CONNECTION; /* Ctrl-C may break a wait */
		notebook_poll_release(poll);
		if (notebook_parse_poll(out.buf, plain != NULL, poll) < 0)
			return NOTEBOOK_UNREADABLE;
		if (poll->exit_status >= 0)
			return NOTEBOOK_SERVER_EXITED;
		if (!*poll->state && ++gone < GONE_POLLS && monotonic_seconds() < deadline) {
			sleep_second();
			continue;
		}
		if (!notebook_state_alive(poll->state))
			return NOTEBOOK_JOB_ENDED;
		gone = 0;
		if (poll->ready) /* and the job runs: a cancelled job's log still says ready */
			return NOTEBOOK_READY;
		if (!streq_ptr(last_state, poll->state)) {
			if (on_state)
				on_state(data, poll->state);
			free(last_state);
			last_state = xstrdup(poll->state);
		}
		if (monotonic_seconds() >= deadline)
			return NOTEBOOK_NO_ANSWER;
		sleep_second();
	}
}
