/* SPDX-License-Identifier: MIT */
/*
 * dispatch forward HOST [LOCAL_PORT:]REMOTE_PORT [--background]: ssh -L for one port
 * (lib/transport/forward.h). The local port is bound before connecting, so a busy port fails at
 * once; --background detaches only once the port is bound and the session logged in,
 * so every error is seen before the prompt comes back.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>

#include "dispatch.h"
#include "transport/forward.h"
#include "transport/ssh.h"
#include "base/cloexec.h"

static bool opt_background;

static const struct dp_option forward_options[] = {
	OPT_BOOL(0, "background", &opt_background, "detach once the forward works, and print its PID"),
	OPT_END,
};

#define REMOTE_HOST "localhost"

static volatile sig_atomic_t stop;
static int wake[2] = { -1, -1 };

static void on_signal(int sig)
{
	int e = errno;
	stop = sig;
	if (wake[1] >= 0) {
		ssize_t n = write(wake[1], "", 1);  /* a full pipe wakes poll all the same */
		(void)n;
	}
	errno = e;
}

static void log_line(void *data, const char *msg)
{
	(void)data;
	note_msg("%s", msg);
}

volatile sig_atomic_t *forward_catch_signals(void)
{
	if (wake[0] < 0 && cloexec_pipe(wake) == 0)
		fcntl(wake[1], F_SETFL, fcntl(wake[1], F_GETFL) | O_NONBLOCK);
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a client that went away is its connection's end only */
	return &stop;
}

int forward_serve(const struct dp_ctx *ctx, struct ssh_session *s, int lfd, const char *remote_host,
		  int remote_port, struct dp_error *err)
{
	struct forward f = {
		.listen_fd = lfd,
		.remote_host = remote_host,
		.remote_port = remote_port,
		.log = ctx->verbosity > 0 ? log_line : NULL,
		.stop = &stop,
		.wake_fd = wake[0],
	};
	return forward_run(s, &f, err);
}

static bool parse_port(const char *s, long min, long *out)
{
	return parse_long(s, min, 65535, out);
}

static void announce(const struct dp_ctx *ctx, const char *host, int local, int remote, long pid,
		     bool background)
{
	if (ctx->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddNumberToObject(doc, "pid", (double)pid);
		cJSON_AddNumberToObject(doc, "local_port", local);
		cJSON_AddNumberToObject(doc, "remote_port", remote);
		cJSON_AddStringToObject(doc, "host", host);
		json_print(doc);
	} else if (background) {
		printf("%ld\n", pid);
	}
	if (ctx->verbosity >= 0 && !ctx->json)
		note_msg("forwarding 127.0.0.1:%d to %s:%s:%d%s", local, host, REMOTE_HOST, remote,
			 background ? "" : " (Ctrl-C to stop)");
	fflush(stdout);
}

/* The child of --background: its own session, no terminal, stdio on /dev/null. */
static void detach_stdio(void)
{
	setsid();
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

/* What forward_host found, for forward_fn once the session is open. */
static long remote;
static int listen_fd = -1, bound;

static int forward_host(struct dp_ctx *ctx, const struct dp_args *args, const char **host)
{
	const char *spec = args->pos[1];
	long local = -1;
	struct dp_error err = { 0 };

	const char *colon = strchr(spec, ':');
	if (colon) {
		_cleanup_free_ char *l = xstrndup(spec, (size_t)(colon - spec));
		if (!parse_port(l, 0, &local))
			return usage_error(ctx, "bad local port '%s' in '%s' (a number from 0 to 65535; 0 picks a free one)",
					   l, spec);
		spec = colon + 1;
	}
	if (!parse_port(spec, 1, &remote))
		return usage_error(ctx, "bad remote port '%s' (a number from 1 to 65535)", spec);
	if (local < 0)
		local = remote;

	/* Bind first: a busy port is an error before any connection is made. */
	if (forward_listen((int)local, &listen_fd, &bound, &err) < 0)
		return report_error(&err);
	*host = args->pos[0];
	return 0;
}

static int forward_fn(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host = args->pos[0];
	struct dp_error err = { 0 };
	struct ssh_session *s = ctx->session;
	_cleanup_close_ int lfd = listen_fd;

	signal(SIGPIPE, SIG_IGN);
	if (opt_background) {
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid < 0) {
			error_msg("cannot fork: %s", strerror(errno));
			return DPE_FAIL;
		}
		if (pid > 0) {
			/* The session now belongs to the child: leave it untouched. */
			announce(ctx, host, bound, (int)remote, (long)pid, true);
			_exit(ferror(stdout) ? DPE_FAIL : 0);
		}
		detach_stdio();
	} else {
		announce(ctx, host, bound, (int)remote, (long)getpid(), false);
	}

	forward_catch_signals();
	if (forward_serve(ctx, s, lfd, REMOTE_HOST, (int)remote, &err) < 0)
		return report_error(&err);
	if (ctx->verbosity > 0)
		note_msg("forward stopped");
	return 0;
}

const struct dispatch_cmd dispatch_cmd_forward = {
	.name = "forward",
	.summary = "forward a local port to a port on a host (as ssh -L)",
	.usage = "HOST [LOCAL_PORT:]REMOTE_PORT [--background]",
	.description = "Listen on 127.0.0.1:LOCAL_PORT (default: REMOTE_PORT) and carry each "
		       "connection over SSH to port REMOTE_PORT on the host's localhost, until "
		       "Ctrl-C. With --background, detach once it works and print the PID.",
	.opts = forward_options,
	.min_args = 2,
	.max_args = 2,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH | CMD_NEEDS_SESSION,
	.session_host = forward_host,
	.fn = forward_fn,
};
