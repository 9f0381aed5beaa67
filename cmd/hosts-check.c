/* SPDX-License-Identifier: MIT */
/*
 * dispatch hosts --check: every host probed at once (a bounded fanout of threads),
 * each as a script would use it: connect, key exchange, host key, log in (BatchMode,
 * one attempt), then run `true` and wait for its exit status. Each host gets a
 * status (ok, unreachable, auth, hostkey, timeout, error), its latency and the
 * reason of a failure.
 */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>

#include "dispatch.h"
#include "base/fanout.h"
#include "inventory/inventory.h"
#include "transport/ssh.h"

#define THREAD_STACK (512 * 1024)

enum probe_status {
	PROBE_OK,
	PROBE_UNREACHABLE,
	PROBE_AUTH,
	PROBE_HOSTKEY,
	PROBE_TIMEOUT,
	PROBE_ERROR,
};

static const char *const status_names[] = {
	[PROBE_OK] = "ok",
	[PROBE_UNREACHABLE] = "unreachable",
	[PROBE_AUTH] = "auth",
	[PROBE_HOSTKEY] = "hostkey",
	[PROBE_TIMEOUT] = "timeout",
	[PROBE_ERROR] = "error",
};

struct probe {
	const char *name;
	const char *ssh;                /* the inventory's ssh target, else the name */
	enum probe_status status;
	double connect_s, exec_s;       /* TCP through login; `true` round trip (ok only) */
	char *detail;                   /* user@host:port when ok, else what failed */
	const char *via;                /* "master" or "direct" once connected, else NULL */
};

struct check {
	struct ssh_ctx sc;
	double timeout;
	struct probe *probes;
	size_t n;
};

static enum probe_status status_of(enum ssh_failure why)
{
	switch (why) {
	case SSH_FAILED_CONNECT: return PROBE_UNREACHABLE;
	case SSH_FAILED_TIMEOUT: return PROBE_TIMEOUT;
	case SSH_FAILED_HOSTKEY: return PROBE_HOSTKEY;
	case SSH_FAILED_AUTH: return PROBE_AUTH;
	default: return PROBE_ERROR;    /* bad config, key exchange */
	}
}

static void probe_host(const struct check *c, struct probe *p)
{
	struct dp_error err = { 0 };
	enum ssh_failure why = SSH_FAILED_NOT;
	_cleanup_ssh_session_ struct ssh_session *s = NULL;
	double start = monotonic_seconds();
	int status;

	if (ssh_session_open_why(&c->sc, p->name, &s, &why, &err) < 0) {
		p->status = status_of(why);
		p->detail = xstrdup(err.msg);
		return;
	}
	p->connect_s = monotonic_seconds() - start;
	p->via = ssh_session_via(s);
	double left = c->timeout - p->connect_s;
	if (left <= 0) {
		p->status = PROBE_TIMEOUT;
		p->detail = xasprintf("logged in to '%s' after %.1f s, more than --timeout %g",
				      p->name, p->connect_s, c->timeout);
		return;
	}
	/* Through the account's shell, but not a login shell: profiles are not the probe's
	 * business, and a slow one would read as network latency. */
	struct ssh_exec x = { .command = "true", .raw = true, .in_fd = -1, .timeout = left };
	double t = monotonic_seconds();
	if (ssh_exec(s, &x, &status, &err) < 0) {
		p->status = err.kind == DPE_TIMEOUT ? PROBE_TIMEOUT : PROBE_ERROR;
		p->detail = xstrdup(err.msg);
		return;
	}
	p->exec_s = monotonic_seconds() - t;
	if (status != 0) {
		p->status = PROBE_ERROR;
		p->detail = xasprintf("logged in to '%s', but 'true' exited with %d (does the "
				      "account's shell run commands?)", p->name, status);
		return;
	}
	p->status = PROBE_OK;
	p->detail = xstrdup(ssh_session_target(s));
}

static void probe_nth(void *data, size_t i)
{
	struct check *c = data;
	probe_host(c, &c->probes[i]);
}

static long ms(double seconds)
{
	return (long)(seconds * 1000 + 0.5);
}

static void add_ms(cJSON *o, const char *key, const struct probe *p, double seconds)
{
	if (p->status == PROBE_OK)
		cJSON_AddNumberToObject(o, key, (double)ms(seconds));
	else
		cJSON_AddNullToObject(o, key);
}

static void print_json(const struct check *c)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "hosts");
	for (size_t i = 0; i < c->n; i++) {
		const struct probe *p = &c->probes[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddStringToObject(o, "ssh", p->ssh);
		cJSON_AddStringToObject(o, "status", status_names[p->status]);
		add_ms(o, "latency_ms", p, p->connect_s + p->exec_s);
		add_ms(o, "connect_ms", p, p->connect_s);
		add_ms(o, "exec_ms", p, p->exec_s);
		cJSON_AddStringToObject(o, "detail", p->detail);
		if (p->via)
			cJSON_AddStringToObject(o, "via", p->via);
		else
			cJSON_AddNullToObject(o, "via");
		cJSON_AddItemToArray(arr, o);
	}
	json_print(doc);
}

static void print_table(const struct check *c)
{
	/* LATENCY at least 7 wide, right-aligned, per line */
	static const struct table_col cols[] = { { 0 }, { 0 }, { .width = 7, .right = true }, { 0 } };
	struct table t = { .ncols = 4, .cols = cols };
	table_row(&t, "HOST", "STATUS", "LATENCY", "DETAIL", NULL);
	for (size_t i = 0; i < c->n; i++) {
		const struct probe *p = &c->probes[i];
		table_row(&t, p->name, status_names[p->status], NULL);
		if (p->status == PROBE_OK)
			table_addf(&t, "%ld ms", ms(p->connect_s + p->exec_s));
		else
			table_add(&t, "-");
		table_add(&t, p->detail);
	}
	table_print(&t);
}

int hosts_check(struct dp_ctx *ctx, char **names, int timeout, long fanout)
{
	struct check c = { .timeout = timeout, .n = strv_len(names) };
	size_t failed = 0;

	cmd_ssh_ctx(ctx, &c.sc);
	/* A probe never asks anything, never retries, and gives up after --timeout. */
	c.sc.prompt = NULL;
	c.sc.batch_mode = true;
	c.sc.attempts = 1;
	c.sc.connect_timeout = timeout;
	c.probes = xcalloc(c.n ? c.n : 1, sizeof(*c.probes));
	for (size_t i = 0; i < c.n; i++) {
		c.probes[i].name = names[i];
		c.probes[i].ssh = inventory_ssh_destination(ctx->inv, names[i]);
	}

	signal(SIGPIPE, SIG_IGN);
	fanout_run(c.n, (size_t)fanout, THREAD_STACK, probe_nth, &c);

	if (ctx->json)
		print_json(&c);
	else if (c.n)
		print_table(&c);
	for (size_t i = 0; i < c.n; i++)
		if (c.probes[i].status != PROBE_OK)
			failed++;
	if (failed && !ctx->json && ctx->verbosity >= 0)
		error_msg("%zu of %zu host%s failed the check", failed, c.n, c.n == 1 ? "" : "s");

	for (size_t i = 0; i < c.n; i++)
		free(c.probes[i].detail);
	free(c.probes);
	return failed ? DPE_FAIL : 0;
}
