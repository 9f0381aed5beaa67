/* SPDX-License-Identifier: MIT */
/*
 * dispatch run -H HOSTS -- COMMAND...: a command in the login shell of one host (as
 * ssh: live output, stdin, exit status, -t, --timeout) or of many hosts at once
 * (a fanout of threads, "host: line" output, -b gathering, a failure summary, --json).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "dispatch.h"
#include "base/fanout.h"
#include "sched/slurm/hostlist.h"
#include "inventory/inventory.h"
#include "base/line_prefix.h"
#include "hostrun.h"
#include "transport/ssh.h"

static char **opt_hosts;
static bool opt_all, opt_gather, opt_pty;
static int opt_fanout = 32;
static double opt_timeout;

static const struct dp_option run_options[] = {
	OPT_HOSTLIST('H', "hosts", &opt_hosts, "HOSTS", "hosts: inventory names or ssh destinations, comma-separated, with hostlist ranges (box[1-4])"),
	OPT_BOOL(0, "all", &opt_all, "every host of the inventory"),
	OPT_INT(0, "fanout", &opt_fanout, "N", "at most N connections at once (default 32)", 1, 4096),
	OPT_SECONDS(0, "timeout", &opt_timeout, "S", "give each host S seconds, connecting included (exit 3 on one host)",
		    .whole = true, .min = 1),
	OPT_BOOL('b', "gather", &opt_gather, "print each distinct output once, under the hosts that gave it"),
	OPT_BOOL('t', "tty", &opt_pty, "run the command on a terminal (as ssh -t)"),
	OPT_END,
};
#define THREAD_STACK (512 * 1024)

/* ---- output ---- */

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- one host, as ssh ---- */

static int run_one(struct dp_ctx *ctx, const struct ssh_ctx *sc, const char *host,
		   const char *command, bool pty, double timeout)
{
	struct dp_error err = { 0 };
	_cleanup_ssh_session_ struct ssh_session *s = NULL;
	struct ssh_ctx bounded;
	int status;

	if (hostrun_open(sc, &bounded, host, timeout, &s, &err) < 0)
		return report_error(&err);
	struct ssh_exec x = {
		.command = command,
		.user_shell = true,
		.pty = pty,
		.term = getenv("TERM"),
		.in_fd = STDIN_FILENO,
		.on_stdout = pass_stdout,
		.on_stderr = pass_stderr,
		.timeout = hostrun_time_left(&bounded),
	};
	if (pty)
		tty_session(&x);
	int r = ssh_exec(s, &x, &status, &err);
	tty_raw_end();
	if (r < 0) {
		hostrun_timed_out(&err, host, timeout);
		if (err.kind == DPE_FAIL && errno == EPIPE)
			return DPE_FAIL;
		return report_error(&err);
	}
	(void)ctx;
	return status;
}

/* ---- many hosts ---- */

enum mode { MODE_PREFIX, MODE_GATHER, MODE_JSON };

struct host_result {
	const char *name;
	int status;                     /* exit status, -1 when it did not run to the end */
	int kind;                       /* DPE_* of a failure to connect or to finish */
	char *error;
	double seconds;
	struct strbuf out, err;         /* gathered (-b: stdout only; --json: both) */
};

struct fan {
	const struct ssh_ctx *sc;
	const char *command;
	bool pty;
	double timeout;
	enum mode mode;
	struct host_result *hosts;
	size_t n;
};

struct host_io {
	struct fan *fan;
	struct host_result *h;
	struct line_prefix out, err;
};

static int emit(int fd, struct strbuf *sb)
{
	int r = 0;
	if (!sb->len)
		return 0;
	pthread_mutex_lock(&out_lock);
	r = write_all(fd, sb->buf, sb->len);
	pthread_mutex_unlock(&out_lock);
	strbuf_reset(sb);
	return r;
}

static int fan_stdout(void *data, const char *buf, size_t len)
{
	struct host_io *io = data;
	if (io->fan->mode != MODE_PREFIX) {
		strbuf_add(&io->h->out, buf, len);
		return 0;
	}
	_cleanup_strbuf_ struct strbuf lines = STRBUF_INIT;
	line_prefix_feed(&io->out, buf, len, &lines);
	return emit(STDOUT_FILENO, &lines);
}

static int fan_stderr(void *data, const char *buf, size_t len)
{
	struct host_io *io = data;
	if (io->fan->mode == MODE_JSON) {
		strbuf_add(&io->h->err, buf, len);
		return 0;
	}
	_cleanup_strbuf_ struct strbuf lines = STRBUF_INIT;
	line_prefix_feed(&io->err, buf, len, &lines);
	return emit(STDERR_FILENO, &lines);
}

static void run_host(struct fan *fan, struct host_result *h)
{
	struct dp_error err = { 0 };
	struct ssh_session *s = NULL;
	struct host_io io = { fan, h, LINE_PREFIX_INIT(h->name), LINE_PREFIX_INIT(h->name) };
	struct timespec t0, t1;
	struct ssh_ctx bounded;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	h->status = -1;
	if (hostrun_open(fan->sc, &bounded, h->name, fan->timeout, &s, &err) == 0) {
		struct ssh_exec x = {
			.command = fan->command,
			.user_shell = true,
			.pty = fan->pty,
			.in_fd = -1,
			.on_stdout = fan_stdout,
			.on_stderr = fan_stderr,
			.data = &io,
			.timeout = hostrun_time_left(&bounded),
		};
		if (ssh_exec(s, &x, &h->status, &err) < 0) {
			hostrun_timed_out(&err, h->name, fan->timeout);
			h->status = -1;
		}
		ssh_session_free(s);
	}
	_cleanup_strbuf_ struct strbuf rest = STRBUF_INIT;
	line_prefix_finish(&io.out, &rest);
	emit(STDOUT_FILENO, &rest);
	line_prefix_finish(&io.err, &rest);
	emit(STDERR_FILENO, &rest);
	if (h->status < 0) {
		h->kind = err.kind ? err.kind : DPE_FAIL;
		h->error = xstrdup(err.msg);
		if (fan->mode != MODE_JSON) {
			pthread_mutex_lock(&out_lock);
			error_msg("%s: %s", h->name, err.msg);
			pthread_mutex_unlock(&out_lock);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	h->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static void run_nth(void *data, size_t i)
{
	struct fan *fan = data;
	run_host(fan, &fan->hosts[i]);
}

static char *fold(char **names)
{
	struct dp_error err;
	char *s = NULL;
	if (hostlist_fold(names, &s, &err) == 0)
		return s;
	struct strbuf sb = STRBUF_INIT;
	for (char **p = names; *p; p++)
		strbuf_addf(&sb, "%s%s", p == names ? "" : ",", *p);
	return strbuf_detach(&sb);
}

/* -b: each distinct stdout once, under the folded list of its hosts, as clush -b. */
static void print_gathered(struct fan *fan)
{
	bool *done = xcalloc(fan->n, sizeof(*done));
	for (size_t i = 0; i < fan->n; i++) {
		struct host_result *h = &fan->hosts[i];
		if (done[i] || !h->out.len)
			continue;
		_cleanup_strv_free_ char **names = NULL;
		for (size_t j = i; j < fan->n; j++) {
			struct host_result *o = &fan->hosts[j];
			if (!done[j] && o->out.len == h->out.len &&
			    memcmp(o->out.buf, h->out.buf, h->out.len) == 0) {
				done[j] = true;
				strv_add(&names, o->name);
			}
		}
		_cleanup_free_ char *list = fold(names);
		printf("---------------\n%s (%zu)\n---------------\n", list, strv_len(names));
		fwrite(h->out.buf, 1, h->out.len, stdout);
		if (h->out.buf[h->out.len - 1] != '\n')
			putchar('\n');
	}
	free(done);
}

static void print_json(struct fan *fan)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "hosts");
	for (size_t i = 0; i < fan->n; i++) {
		struct host_result *h = &fan->hosts[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "host", h->name);
		json_add_int_or_null(o, "exit_status", h->status);
		cJSON_AddStringToObject(o, "stdout", h->out.buf);
		cJSON_AddStringToObject(o, "stderr", h->err.buf);
		json_add_str_or_null(o, "error", h->error);
		cJSON_AddBoolToObject(o, "timed_out", h->kind == DPE_TIMEOUT);
		cJSON_AddNumberToObject(o, "seconds", (double)(long)(h->seconds * 1000) / 1000);
		cJSON_AddItemToArray(arr, o);
	}
	json_print(doc);
}

static const char *failure_of(const struct host_result *h, char *buf, size_t size)
{
	if (h->status > 0)
		snprintf(buf, size, "exit status %d", h->status);
	else if (h->kind == DPE_TIMEOUT)
		snprintf(buf, size, "timed out");
	else if (h->kind == DPE_CONNECT)
		snprintf(buf, size, "could not connect");
	else
		snprintf(buf, size, "failed");
	return buf;
}

/* "2 of 34 hosts failed: down1 (could not connect), box[2-3] (exit status 1)" */
static void print_summary(struct fan *fan, size_t failed)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	bool *done = xcalloc(fan->n, sizeof(*done));
	char why[64], other[64];

	strbuf_addf(&sb, "%zu of %zu host%s failed: ", failed, fan->n, fan->n == 1 ? "" : "s");
	bool first = true;
	for (size_t i = 0; i < fan->n; i++) {
		struct host_result *h = &fan->hosts[i];
		if (done[i] || h->status == 0)
			continue;
		failure_of(h, why, sizeof(why));
		_cleanup_strv_free_ char **names = NULL;
		for (size_t j = i; j < fan->n; j++)
			if (!done[j] && fan->hosts[j].status != 0 &&
			    streq(failure_of(&fan->hosts[j], other, sizeof(other)), why)) {
				done[j] = true;
				strv_add(&names, fan->hosts[j].name);
			}
		_cleanup_free_ char *list = fold(names);
		strbuf_addf(&sb, "%s%s (%s)", first ? "" : ", ", list, why);
		first = false;
	}
	free(done);
	error_msg("%s", sb.buf);
}

static int run_many(struct dp_ctx *ctx, const struct ssh_ctx *sc, char **hosts,
		    const char *command, bool pty, double timeout, long fanout, bool gather)
{
	struct fan fan = {
		.sc = sc,
		.command = command,
		.pty = pty,
		.timeout = timeout,
		.mode = ctx->json ? MODE_JSON : gather ? MODE_GATHER : MODE_PREFIX,
		.n = strv_len(hosts),
	};
	fan.hosts = xcalloc(fan.n, sizeof(*fan.hosts));
	for (size_t i = 0; i < fan.n; i++) {
		fan.hosts[i].name = hosts[i];
		strbuf_init(&fan.hosts[i].out);
		strbuf_init(&fan.hosts[i].err);
	}

	fanout_run(fan.n, (size_t)fanout, THREAD_STACK, run_nth, &fan);

	size_t failed = 0;
	for (size_t i = 0; i < fan.n; i++)
		if (fan.hosts[i].status != 0)
			failed++;
	if (fan.mode == MODE_JSON)
		print_json(&fan);
	else if (fan.mode == MODE_GATHER)
		print_gathered(&fan);
	if (failed && ctx->verbosity >= 0)
		print_summary(&fan, failed);

	for (size_t i = 0; i < fan.n; i++) {
		free(fan.hosts[i].error);
		strbuf_release(&fan.hosts[i].out);
		strbuf_release(&fan.hosts[i].err);
	}
	free(fan.hosts);
	return failed ? DPE_FAIL : 0;
}

/* ---- the command ---- */

static int run_fn(struct dp_ctx *ctx, const struct dp_args *args)
{
	_cleanup_strv_free_ char **hosts = opt_hosts;
	_cleanup_strbuf_ struct strbuf command = STRBUF_INIT;
	bool all = opt_all, gather = opt_gather, pty = opt_pty;
	long fanout = opt_fanout, timeout = (long)opt_timeout;

	opt_hosts = NULL; /* hosts owns them */
	if (all) {
		if (!ctx->inv)
			return usage_error(ctx, "--all needs an inventory (-i FILE or DISPATCH_INVENTORY)");
		for (size_t i = 0; i < ctx->inv->nhosts; i++)
			if (!strv_contains(hosts, ctx->inv->hosts[i].name))
				strv_add(&hosts, ctx->inv->hosts[i].name);
	}
	if (!hosts || !hosts[0])
		return usage_error(ctx, "no hosts: give -H HOSTS or --all");
	/* As ssh: the words are joined by spaces into one command line for the remote shell. */
	for (int i = 0; i < args->npos; i++)
		strbuf_addf(&command, "%s%s", i ? " " : "", args->pos[i]);

	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	signal(SIGPIPE, SIG_IGN);
	if (!hosts[1] && !gather && !ctx->json)
		return run_one(ctx, &sc, hosts[0], command.buf, pty, (double)timeout);
	sc.batch_mode = sc.batch_mode || !sc.prompt;
	return run_many(ctx, &sc, hosts, command.buf, pty, (double)timeout, fanout, gather);
}

const struct dispatch_cmd dispatch_cmd_run = {
	.name = "run",
	.summary = "run a command on one host (as ssh) or many at once",
	.usage = "(-H HOSTS | --all) [--fanout N] [--timeout S] [-b] [-t] [--] COMMAND...",
	.description = "Run COMMAND in the login shell of each host. On one host it behaves as ssh: "
		       "live output, stdin forwarded, the remote exit status passed through. On "
		       "several, output lines are prefixed with the host name and the exit status "
		       "is 1 when any host failed.",
	.opts = run_options,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_POSIX_ORDER | CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = run_fn,
};
