/* SPDX-License-Identifier: MIT */
#include "host_probe.h"

#include "base/fanout.h"
#include "base/util.h"

#define THREAD_STACK (512 * 1024)

static const char *const status_names[] = {
	[PROBE_OK] = "ok",
	[PROBE_UNREACHABLE] = "unreachable",
	[PROBE_AUTH] = "auth",
	[PROBE_HOSTKEY] = "hostkey",
	[PROBE_TIMEOUT] = "timeout",
	[PROBE_ERROR] = "error",
};

const char *probe_status_name(enum probe_status s)
{
	return status_names[s];
}

struct check {
	struct ssh_ctx sc;
	double timeout;
	struct host_probe *probes;
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

static void probe_host(const struct check *c, struct host_probe *p)
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

void host_probe_all(const struct ssh_ctx *sc, int timeout, struct host_probe *probes, size_t n,
		    long fanout)
{
	struct check c = { .sc = *sc, .timeout = timeout, .probes = probes };
	/* A probe never asks anything, never retries, and gives up after --timeout. */
	c.sc.prompt = NULL;
	c.sc.batch_mode = true;
	c.sc.attempts = 1;
	c.sc.connect_timeout = timeout;
	fanout_run(n, (size_t)fanout, THREAD_STACK, probe_nth, &c);
}

void host_probe_release(struct host_probe *probes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(probes[i].detail);
	free(probes);
}
