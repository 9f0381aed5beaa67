/* SPDX-License-Identifier: MIT */
/*
 * Sessions through the user's OpenSSH master (lib/transport/mux.h): what ssh.h
 * promises, over the other transport. ssh_session_open asks here first; when the
 * host's ControlPath names a master that mux_open trusts, the session holds it
 * instead of a libssh2 session, and every command is a mux session of its own.
 *
 * Timeouts: the mux protocol cannot signal a remote command (and closing a session
 * without a terminal leaves it running), so a command with a timeout is started by
 * a small sh that first writes its own pid on stderr (MARK_SESSION_PID) and then
 * exec's the command's shell: sshd made that process the leader of a process group
 * of its own. On expiry a second session sends TERM to that group, as ssh_exec's
 * "signal" request does direct. The marker line is taken out of stderr here.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "transport/mux.h"
#include "transport/ssh_internal.h"

#define DEFAULT_MUX_TIMEOUT 30  /* seconds, when ConnectTimeout is unset */

#define logf_(ctx, ...) ssh_logf((ctx)->log, (ctx)->log_data, __VA_ARGS__)

int ssh_mux_open(const struct ssh_ctx *ctx, const char *host, const char *dest,
		 struct ssh_session **out)
{
	struct ssh_host_config cfg = { 0 };
	struct dp_error err = { 0 };
	enum mux_failure why;
	struct mux *m = NULL;

	*out = NULL;
	if (ssh_config_resolve_dest(ctx->config_path, ctx->home, dest, &cfg, &err) < 0)
		return 0;       /* the direct path says what is wrong */
	if (!cfg.control_path || !*cfg.control_path || streq(cfg.control_path, "none")) {
		logf_(ctx, "%s: direct (no ControlPath)", host);
		ssh_host_config_release(&cfg);
		return 0;
	}
	int timeout = ctx->connect_timeout > 0 ? ctx->connect_timeout :
		      cfg.connect_timeout > 0 ? cfg.connect_timeout : DEFAULT_MUX_TIMEOUT;
	double start = monotonic_seconds();
	if (mux_open(cfg.control_path, timeout * 1000, &m, &why, &err) < 0) {
		logf_(ctx, "%s: direct (not through a master: %s)", host, err.msg);
		ssh_host_config_release(&cfg);
		return 0;
	}
	struct ssh_session *s = xcalloc(1, sizeof(*s));
	strbuf_init(&s->hop_out);
	s->name = xstrdup(host);
	s->target = xasprintf("%s@%s:%d", cfg.user, cfg.hostname, cfg.port);
	s->cfg = cfg;
	s->fd = -1;
	s->mux = m;
	s->timeout_ms = (long)timeout * 1000;
	s->connect_seconds = monotonic_seconds() - start;
	logf_(ctx, "%s: via master %s (pid %ld)", host, mux_path(m), (long)mux_master_pid(m));
	ssh_log_env(ctx, s);
	*out = s;
	return 1;
}

int ssh_mux_hop(const struct ssh_ctx *ctx, const char *name, const char *hop,
		const struct ssh_host_config *cfg, struct mux_forward **out)
{
	struct ssh_host_config hc = { 0 };
	struct dp_error err = { 0 };
	enum mux_failure why;
	_cleanup_mux_ struct mux *m = NULL;

	*out = NULL;
	if (ssh_config_resolve_dest(ctx->config_path, ctx->home, hop, &hc, &err) < 0)
		return 0;
	if (!hc.control_path || !*hc.control_path || streq(hc.control_path, "none")) {
		ssh_host_config_release(&hc);
		return 0;
	}
	int timeout = ctx->connect_timeout > 0 ? ctx->connect_timeout :
		      hc.connect_timeout > 0 ? hc.connect_timeout : DEFAULT_MUX_TIMEOUT;
	if (mux_open(hc.control_path, timeout * 1000, &m, &why, &err) < 0) {
		logf_(ctx, "%s: ProxyJump hop %s direct (not through a master: %s)", name, hop, err.msg);
		ssh_host_config_release(&hc);
		return 0;
	}
	if (mux_stdio_forward(m, cfg->hostname, cfg->port, out, &why, &err) < 0) {
		logf_(ctx, "%s: ProxyJump hop %s: its master %s cannot reach %s port %d: %s", name,
		      hop, mux_path(m), cfg->hostname, cfg->port, err.msg);
		ssh_host_config_release(&hc);
		return 0;
	}
	logf_(ctx, "%s: connecting to %s port %d through the master of ProxyJump hop %s (%s)",
	      name, cfg->hostname, cfg->port, hop, mux_path(m));
	ssh_host_config_release(&hc);
	return 1;
}

struct mux *ssh_session_mux(const struct ssh_session *s)
{
	return s->mux;
}

const char *ssh_session_via(const struct ssh_session *s)
{
	return s->mux ? "master" : "direct";
}

/* ---- commands ---- */

struct ssh_mux_channel {
	struct ssh_session *s;
	struct mux_session *ms;
	struct ssh_exec x;
	struct mux_run r;
	bool marked;                    /* stderr starts with MARK_SESSION_PID */
	bool seen;                      /* the marker line is through */
	struct strbuf line;             /* stderr until the marker line is complete */
	long pid;                       /* the session's shell, 0: unknown */
	bool stopped;                   /* stop_remote ran */
};

/* The command as sent: the login-shell wrapper unless raw; with a timeout, behind
 * the sh that tells its pid (the raw command then goes to the login shell as the
 * server would hand it over, `$SHELL -c COMMAND`). */
static int command_for(const struct ssh_mux_channel *c, struct strbuf *cmd,
		       struct dp_error *err)
{
	const struct ssh_exec *x = &c->x;
	if (!c->marked) {
		if (x->raw)
			strbuf_adds(cmd, x->command);
		else
			mux_login_command(cmd, x->command, x->user_shell);
		return ssh_command_fits(c->s->name, cmd->len, err);
	}
	_cleanup_strbuf_ struct strbuf sh = STRBUF_INIT;
	marker_print(&sh, MARK_SESSION_PID, "\"$$\"");
	sh.buf[--sh.len] = '\0';       /* the newline */
	strbuf_adds(&sh, " >&2\n");
	if (x->raw) {
		strbuf_adds(&sh, "exec \"${SHELL:-/bin/sh}\" -c ");
		sh_quote(&sh, x->command);
	} else {
		mux_login_script(&sh, x->command, x->user_shell);
	}
	sh_any_command(cmd, sh.buf);
	return ssh_command_fits(c->s->name, cmd->len, err);
}

static int on_out(void *data, const char *buf, size_t len)
{
	struct ssh_mux_channel *c = data;
	return c->x.on_stdout ? c->x.on_stdout(c->x.data, buf, len) : 0;
}

static int pass_err(struct ssh_mux_channel *c, const char *buf, size_t len)
{
	return c->x.on_stderr && len ? c->x.on_stderr(c->x.data, buf, len) : 0;
}

static int on_err(void *data, const char *buf, size_t len)
{
	struct ssh_mux_channel *c = data;
	if (!c->marked || c->seen)
		return pass_err(c, buf, len);
	const char *nl = memchr(buf, '\n', len);
	size_t take = nl ? (size_t)(nl - buf) + 1 : len;
	strbuf_add(&c->line, buf, take);
	if (!nl)
		return 0;
	c->seen = true;
	static const char mark[] = MARK_SESSION_PID " ";
	int r = 0;
	if (startswith(c->line.buf, mark))
		c->pid = strtol(c->line.buf + strlen(mark), NULL, 10);
	else
		r = pass_err(c, c->line.buf, c->line.len);
	strbuf_release(&c->line);
	return r ? r : pass_err(c, buf + take, len - take);
}

/* Whatever stderr held back when the command ended without the marker line. */
static void flush_err(struct ssh_mux_channel *c)
{
	if (c->marked && !c->seen && c->line.len)
		pass_err(c, c->line.buf, c->line.len);
	strbuf_release(&c->line);
}

/* After a timeout: TERM to the command's process group, from a session of its own. */
static void stop_remote(struct ssh_mux_channel *c)
{
	if (c->pid <= 1 || c->stopped)
		return;
	c->stopped = true;
	char script[128];
	snprintf(script, sizeof(script), "kill -TERM -%ld 2>/dev/null || kill -TERM %ld "
		 "2>/dev/null; exit 0", c->pid, c->pid);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	sh_any_command(&cmd, script);
	struct mux_exec kx = { .command = cmd.buf, .in_fd = -1, .out_fd = -1, .err_fd = -1 };
	struct mux_run kr = { .in_fd = -1, .timeout = 5 };
	struct dp_error ignored;
	enum mux_failure why;
	int status;
	(void)mux_exec(c->s->mux, &kx, &kr, &status, &why, &ignored);
}

static struct ssh_mux_channel *channel_new(struct ssh_session *s, const struct ssh_exec *x)
{
	struct ssh_mux_channel *c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->x = *x;
	c->marked = x->timeout > 0 && !x->pty;
	strbuf_init(&c->line);
	c->r = (struct mux_run){
		.in_fd = -1,
		.on_stdout = on_out,
		.on_stderr = on_err,
		.data = c,
		.timeout = x->timeout,
		.cancel = x->cancel,
	};
	return c;
}

static void channel_free(struct ssh_mux_channel *c)
{
	strbuf_release(&c->line);
	free(c);
}

/* The end of a command: its status as ssh_exec gives it, and a timeout's remote side
 * stopped. */
static int ended(struct ssh_mux_channel *c, int r, int st, int *status, struct dp_error *err)
{
	flush_err(c);
	if (r < 0) {
		if (err->kind == DPE_TIMEOUT) {
			stop_remote(c);
			dp_err(err, DPE_TIMEOUT, "command on '%s' timed out after %g s", c->s->name,
			       c->x.timeout);
		}
		return -1;
	}
	*status = st == MUX_NO_STATUS ? 255 : st;
	return 0;
}

/* An interactive session, as ssh's mux client runs one: the terminal's descriptors
 * go to the master, which reads the window size from them at the start and again
 * whenever it gets SIGWINCH; this process only waits for the end and relays the
 * resizes. A master that dies in between is no master to signal: kill() fails
 * harmlessly and the control connection says the rest. */
static int interactive(struct ssh_mux_channel *c, int *status, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	const struct ssh_exec *x = &c->x;
	struct mux_session *ms;
	enum mux_failure why;
	int st = MUX_NO_STATUS, r;

	if (command_for(c, &cmd, err) < 0)
		return -1;
	_cleanup_strv_free_ char **env = ssh_host_config_env(&c->s->cfg);
	struct mux_exec mx = { .command = cmd.buf, .pty = true, .term = x->term,
			       .in_fd = x->in_fd, .out_fd = x->out_fd, .err_fd = x->err_fd,
			       .env = (const char *const *)env };
	if (mux_exec_start(c->s->mux, &mx, &ms, &why, err) < 0)
		return -1;
	if (x->on_started)
		x->on_started(x->data);
	double deadline = x->timeout > 0 ? monotonic_seconds() + x->timeout : 0;
	while ((r = mux_session_read(ms, err)) == 0) {
		struct pollfd fds[2] = { { .fd = mux_session_fd(ms), .events = POLLIN },
					 { .fd = x->resize_fd, .events = POLLIN } };
		double left = deadline > 0 ? deadline - monotonic_seconds() : -1;
		if (deadline > 0 && left <= 0) {
			/* closing the control connection closes the channel: sshd hangs
			 * up the pty, the shell on it gets SIGHUP */
			mux_session_free(ms);
			return dp_err(err, DPE_TIMEOUT, "command on '%s' timed out after %g s",
				      c->s->name, x->timeout);
		}
		if (poll(fds, 2, left < 0 ? -1 : (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			dp_err(err, DPE_CONNECT, "poll: %s", strerror(errno));
			mux_session_free(ms);
			return -1;
		}
		if (x->resize_fd >= 0 && fds[1].revents) {
			ssh_drain_resize(x->resize_fd);
			kill(mux_master_pid(c->s->mux), SIGWINCH);
		}
	}
	r = mux_exec_finish(ms, -1, &st, err);
	return ended(c, r, st, status, err);
}

int ssh_mux_exec(struct ssh_session *s, const struct ssh_exec *x, int *status, struct dp_error *err)
{
	struct ssh_mux_channel *c = channel_new(s, x);
	if (x->interactive && x->pty) {
		int r = interactive(c, status, err);
		channel_free(c);
		return r;
	}
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	enum mux_failure why;
	int st = MUX_NO_STATUS;

	*status = -1;
	if (command_for(c, &cmd, err) < 0) {
		channel_free(c);
		return -1;
	}
	_cleanup_strv_free_ char **env = ssh_host_config_env(&s->cfg);
	struct mux_exec mx = { .command = cmd.buf, .pty = x->pty, .term = x->term,
			       .in_fd = -1, .out_fd = -1, .err_fd = -1,
			       .env = (const char *const *)env };
	c->r.in_fd = x->in_fd;
	c->r.in_buf = x->in_buf;
	c->r.in_len = x->in_len;
	int r = mux_exec(s->mux, &mx, &c->r, &st, &why, err);
	r = ended(c, r, st, status, err);
	channel_free(c);
	return r;
}

int ssh_mux_exec_start(struct ssh_session *s, const struct ssh_exec *x,
		       struct ssh_mux_channel **out, struct dp_error *err)
{
	struct ssh_mux_channel *c = channel_new(s, x);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	enum mux_failure why;

	*out = NULL;
	if (command_for(c, &cmd, err) < 0) {
		channel_free(c);
		return -1;
	}
	_cleanup_strv_free_ char **env = ssh_host_config_env(&s->cfg);
	struct mux_exec mx = { .command = cmd.buf, .pty = x->pty, .term = x->term,
			       .in_fd = -1, .out_fd = -1, .err_fd = -1,
			       .env = (const char *const *)env };
	if (mux_exec_start(s->mux, &mx, &c->ms, &why, err) < 0) {
		channel_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

int ssh_mux_exec_write(struct ssh_mux_channel *c, const void *buf, size_t len, struct dp_error *err)
{
	int r = mux_exec_write(c->ms, &c->r, buf, len, err);
	if (r < 0 && err->kind == DPE_TIMEOUT) {
		stop_remote(c);
		dp_err(err, DPE_TIMEOUT, "command on '%s' timed out after %g s", c->s->name,
		       c->x.timeout);
	}
	return r;
}

int ssh_mux_exec_finish(struct ssh_mux_channel *c, int *status, struct dp_error *err)
{
	int st = MUX_NO_STATUS;
	*status = -1;
	int r = mux_exec_wait(c->ms, &c->r, &st, err);
	r = ended(c, r, st, status, err);
	channel_free(c);
	return r;
}
