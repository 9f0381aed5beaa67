/* SPDX-License-Identifier: MIT */
#include "gpu/node_health.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/marker.h"
#include "base/util.h"
#include "transport/ssh.h"
#include "shfiles.h"

void node_health_command(struct strbuf *sb)
{
	strbuf_adds(sb, "sinfo -N -h -o '%N|%T|%H|%u|%E'\n");
	marker_status(sb, MARK_SINFO_EXIT, "?");
}

static char *or_null(const char *s, const char *none)
{
	return *s && !streq(s, none) ? xstrdup(s) : NULL;
}

size_t node_health_parse(const char *out, struct node_health **nodes)
{
	size_t n = 0;
	*nodes = NULL;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *l; (l = line_next(&it));) {
		char *f[5];
		char *p = l;
		size_t k = 0;
		/* four '|' split the first five fields; the reason keeps any others */
		for (; k < 4; k++) {
			char *bar = strchr(p, '|');
			if (!bar)
				break;
			*bar = 0;
			f[k] = p;
			p = bar + 1;
		}
		if (k < 4 || !*f[0] || !*f[1] || strchr(f[0], ' '))
			continue;
		f[4] = p;
		bool seen = false;
		for (size_t i = 0; i < n && !seen; i++)
			seen = streq((*nodes)[i].node, f[0]);
		if (seen)
			continue;
		*nodes = xrealloc(*nodes, (n + 1) * sizeof(**nodes));
		(*nodes)[n++] = (struct node_health){
			.node = xstrdup(f[0]), .state = xstrdup(f[1]), .since = or_null(f[2], "Unknown"),
			.by = or_null(f[3], "Unknown"), .reason = or_null(f[4], "none"),
		};
	}
	line_iter_release(&it);
	return n;
}

void node_health_free(struct node_health *h, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(h[i].node);
		free(h[i].state);
		free(h[i].since);
		free(h[i].by);
		free(h[i].reason);
	}
	free(h);
}

static const char *const health_names[GH_N] = {
	[GH_UUID] = "uuid",
	[GH_BUS_ID] = "pci.bus_id",
	[GH_ECC_VOLATILE] = "ecc.errors.uncorrected.volatile.total",
	[GH_ECC_AGGREGATE] = "ecc.errors.uncorrected.aggregate.total",
	[GH_RETIRED_PENDING] = "retired_pages.pending",
	[GH_REMAP_PENDING] = "remapped_rows.pending",
	[GH_REMAP_FAILURE] = "remapped_rows.failure",
	[GH_RECOVERY] = "gpu_recovery_action",
};

const char *gpu_health_field_name(enum gpu_health_field f)
{
	return (unsigned)f < GH_N ? health_names[f] : NULL;
}

void gpu_health_command(struct strbuf *sb)
{
	strbuf_adds(sb, shfile_gpu_gpu_health); /* gpu_health.sh */
}

/* A value nvidia-smi could not give. */
static bool unknown(const char *v)
{
	return !*v || *v == '[' || streq(v, "N/A");
}

static void feed_row(struct gpu_health_report *r, const int *cols, int ncols, const char *csv)
{
	char **v = xcalloc((size_t)ncols + 1, sizeof(char *));
	int got = 0;
	for (const char *p = csv; got < ncols;) {
		const char *e = strstr(p, ", ");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		v[got++] = xstrndup(p, len);
		if (!e)
			break;
		p = e + 2;
	}
	if (got != ncols || ncols == 0) {
		if (!r->error)
			r->error = xstrdup(csv);
		goto out;
	}
	struct gpu_health g = { 0 };
	for (int f = 0; f < GH_N; f++)
		if (cols[f] >= 0 && !unknown(v[cols[f]]))
			g.v[f] = xstrdup(v[cols[f]]);
	if (!g.v[GH_UUID] && !g.v[GH_BUS_ID]) {
		for (int f = 0; f < GH_N; f++)
			free(g.v[f]);
		if (!r->error)
			r->error = xstrdup(csv);
		goto out;
	}
	long ecc;
	g.unhealthy = (g.v[GH_ECC_VOLATILE] && parse_long(g.v[GH_ECC_VOLATILE], 1, 0x7fffffff, &ecc)) ||
		      (g.v[GH_RETIRED_PENDING] && streq(g.v[GH_RETIRED_PENDING], "Yes")) ||
		      (g.v[GH_REMAP_PENDING] && streq(g.v[GH_REMAP_PENDING], "Yes")) ||
		      (g.v[GH_REMAP_FAILURE] && streq(g.v[GH_REMAP_FAILURE], "Yes")) ||
		      (g.v[GH_RECOVERY] && !streq(g.v[GH_RECOVERY], "None") &&
		       !streq(g.v[GH_RECOVERY], "GPU_RECOVERY_ACTION_NONE"));
	r->gpus = xrealloc(r->gpus, (r->ngpus + 1) * sizeof(*r->gpus));
	r->gpus[r->ngpus++] = g;
out:
	for (int i = 0; i < got; i++)
		free(v[i]);
	free(v);
}

void gpu_health_parse(const char *out, struct gpu_health_report *r)
{
	memset(r, 0, sizeof(*r));
	int cols[GH_N], ncols = 0;
	for (int f = 0; f < GH_N; f++)
		cols[f] = -1;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *l; (l = line_next(&it));) {
		const char *rest = marker_value(l, MARK_HEALTH), *a;
		if (!rest)
			continue;
		if (streq(rest, "no-nvidia-smi ") || streq(rest, "no-nvidia-smi")) {
			r->no_smi = true;
		} else if ((a = after_prefix(rest, "failed "))) {
			free(r->error);
			r->error = xstrdup(*a ? a : "nvidia-smi failed");
		} else if ((a = after_prefix(rest, "fields "))) {
			for (int f = 0; f < GH_N; f++)
				cols[f] = -1;
			ncols = 0;
			for (const char *p = a; *p;) {
				size_t len = strcspn(p, ",");
				for (int f = 0; f < GH_N; f++)
					if (strlen(health_names[f]) == len && !strncmp(p, health_names[f], len) &&
					    cols[f] < 0)
						cols[f] = ncols;
				ncols++;
				p += len + (p[len] == ',');
			}
		} else if ((a = after_prefix(rest, "row "))) {
			feed_row(r, cols, ncols, a);
		} else if ((a = after_prefix(rest, "xid-source "))) {
			free(r->xid_source);
			r->xid_source = xstrdup(a);
		} else if ((a = after_prefix(rest, "xid "))) {
			strv_add(&r->xid, a);
		}
	}
	line_iter_release(&it);
}

void gpu_health_release(struct gpu_health_report *r)
{
	for (size_t i = 0; i < r->ngpus; i++)
		for (int f = 0; f < GH_N; f++)
			free(r->gpus[i].v[f]);
	free(r->gpus);
	free(r->error);
	free(r->xid_source);
	strv_free(r->xid);
	memset(r, 0, sizeof(*r));
}

cJSON *gpu_health_json(const struct gpu_health_report *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "nvidia_smi", !g->no_smi);
	json_add_str_or_null(o, "error", g->error);
	cJSON *arr = cJSON_AddArrayToObject(o, "gpus");
	for (size_t i = 0; i < g->ngpus; i++) {
		cJSON *j = cJSON_CreateObject();
		for (int fld = 0; fld < GH_N; fld++)
			json_add_str_or_null(j, gpu_health_field_name(fld), g->gpus[i].v[fld]);
		cJSON_AddBoolToObject(j, "healthy", !g->gpus[i].unhealthy);
		cJSON_AddItemToArray(arr, j);
	}
	cJSON_AddStringToObject(o, "xid_source", g->xid_source ? g->xid_source : "unavailable");
	cJSON *x = cJSON_AddArrayToObject(o, "xid");
	for (size_t i = 0; g->xid && g->xid[i]; i++)
		cJSON_AddItemToArray(x, cJSON_CreateString(g->xid[i]));
	return o;
}

int host_health_fetch(struct ssh_session *ss, bool slurm, struct host_health *h,
		      struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status;
	if (slurm)
		node_health_command(&cmd);
	else
		gpu_health_command(&cmd);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, err) < 0)
		return -1;
	if (!slurm) {
		gpu_health_parse(out.buf, &h->gpus);
		return 0;
	}
	int sx = (int)marker_find_long(out.buf, MARK_SINFO_EXIT, 0, 255);
	if (sx != 0)
		h->sinfo_error = errout.len ? xstrndup(errout.buf, strcspn(errout.buf, "\n"))
					    : xasprintf("sinfo failed (exit status %d)", sx);
	h->nnodes = node_health_parse(out.buf, &h->nodes);
	return 0;
}

void host_health_release(struct host_health *h)
{
	node_health_free(h->nodes, h->nnodes);
	free(h->sinfo_error);
	gpu_health_release(&h->gpus);
}
