/* SPDX-License-Identifier: MIT */
/*
 * dispatch hosts --check: every host probed at once (lib/host_probe.h), then a
 * table or a JSON document of each host's status (ok, unreachable, auth, hostkey,
 * timeout, error), its latency and the reason of a failure.
 */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "host_probe.h"

struct check {
	struct host_probe *probes;
	size_t n;
};

static long ms(double seconds)
{
	return (long)(seconds * 1000 + 0.5);
}

static void add_ms(cJSON *o, const char *key, const struct host_probe *p, double seconds)
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
		const struct host_probe *p = &c->probes[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddStringToObject(o, "ssh", p->ssh);
		cJSON_AddStringToObject(o, "status", probe_status_name(p->status));
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
		const struct host_probe *p = &c->probes[i];
		table_row(&t, p->name, probe_status_name(p->status), NULL);
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
	struct check c = { .n = strv_len(names) };
	struct ssh_ctx sc;
	size_t failed = 0;

	cmd_ssh_ctx(ctx, &sc);
	c.probes = xcalloc(c.n ? c.n : 1, sizeof(*c.probes));
	for (size_t i = 0; i < c.n; i++) {
		c.probes[i].name = names[i];
		c.probes[i].ssh = inventory_ssh_destination(ctx->inv, names[i]);
	}

	signal(SIGPIPE, SIG_IGN);
	host_probe_all(&sc, timeout, c.probes, c.n, fanout);

	if (ctx->json)
		print_json(&c);
	else if (c.n)
		print_table(&c);
	for (size_t i = 0; i < c.n; i++)
		if (c.probes[i].status != PROBE_OK)
			failed++;
	if (failed && !ctx->json && ctx->verbosity >= 0)
		error_msg("%zu of %zu host%s failed the check", failed, c.n, c.n == 1 ? "" : "s");

	host_probe_release(c.probes, c.n);
	return failed ? DPE_FAIL : 0;
}
