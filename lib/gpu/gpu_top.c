/* SPDX-License-Identifier: MIT */
#include "gpu/gpu_top.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"

void gpu_top_job_release(struct gpu_top_job *j)
{
	free(j->state);
	free(j->reason);
	free(j->nodes);
	for (size_t i = 0; i < j->n; i++)
		free(j->alloc[i].node);
	free(j->alloc);
	memset(j, 0, sizeof(*j));
}

static const char *const field_names[GF_N] = {
	[GF_UUID] = "uuid",
	[GF_BUS_ID] = "pci.bus_id",
	[GF_INDEX] = "index",
	[GF_MINOR] = "minor_number",
	[GF_NAME] = "name",
	[GF_UTIL] = "utilization.gpu",
	[GF_MEM_USED] = "memory.used",
	[GF_MEM_TOTAL] = "memory.total",
	[GF_POWER] = "power.draw",
	[GF_POWER_LIMIT] = "power.limit",
	[GF_TEMP] = "temperature.gpu",
	[GF_THROTTLE] = "clocks_event_reasons.active",
};

const char *gpu_field_name(enum gpu_field f)
{
	return (unsigned)f < GF_N ? field_names[f] : NULL;
}

int gpu_field_of(const char *name)
{
	for (int f = 0; f < GF_N; f++)
		if (streq(name, field_names[f]))
			return f;
	if (streq(name, "clocks_throttle_reasons.active"))
		return GF_THROTTLE;
	return -1;
}

void gpu_top_probe_script(struct strbuf *sb)
{
	strbuf_adds(sb, "h=$(nvidia-smi --help-query-gpu 2>&1) || "
			"{ p failed \"$(printf '%s\\n' \"$h\" | head -n 1)\"; exit 0; }\n"
			"q=\n"
			"for f in");
	for (int f = 0; f < GF_N; f++)
		strbuf_addf(sb, " %s", field_names[f]);
	strbuf_adds(sb, " clocks_throttle_reasons.active; do\n"
			"\tcase $f in clocks_throttle_reasons.*) case $q in *clocks_event_reasons*) "
			"continue ;; esac ;; esac\n"
			"\tcase $h in *\"\\\"$f\\\"\"*) q=$q${q:+,}$f ;; esac\n"
			"done\n"
			"p fields \"$q\"\n");
}

void gpu_top_init(struct gpu_top *t, const struct gpu_top_job *j)
{
	memset(t, 0, sizeof(*t));
	t->nodes = xcalloc(j->n ? j->n : 1, sizeof(*t->nodes));
	t->nnodes = j->n;
	for (size_t i = 0; i < j->n; i++) {
		struct gpu_node *n = &t->nodes[i];
		n->name = xstrdup(j->alloc[i].node);
		n->allocated = j->alloc[i].gpus;
		for (int f = 0; f < GF_N; f++)
			n->fields[f] = -1;
	}
}

static void row_release(struct gpu_row *r)
{
	free(r->node);
	free(r->key);
	free(r->uuid);
	free(r->bus_id);
	free(r->name);
	free(r->throttle);
}

void gpu_top_release(struct gpu_top *t)
{
	for (size_t i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].name);
		free(t->nodes[i].message);
		free(t->nodes[i].step_gpus);
		free(t->nodes[i].cuda);
		free(t->nodes[i].health);
		free(t->nodes[i].minors);
	}
	free(t->nodes);
	for (size_t i = 0; i < t->nrows; i++)
		row_release(&t->rows[i]);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = xstrdup(s);
}

/* A value nvidia-smi could not give: "[N/A]", "[Not Supported]", "N/A", "". */
static bool null_value(const char *v)
{
	return !*v || *v == '[' || streq(v, "N/A") || streq(v, "Not Supported");
}

static double number(const char *v)
{
	if (null_value(v))
		return NAN;
	char *end;
	double d = strtod(v, &end);
	while (*end == ' ')
		end++;
	return (end == v || *end || !isfinite(d)) ? NAN : d;
}

static const char *const throttle_bits[] = {
	"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
	"sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
	"display_clock_setting",
};

char *gpu_throttle_words(const char *hex)
{
	const char *h = after_prefix(hex, "0x");
	if (!h || !*h || strlen(h) > 16)
		return NULL;
	unsigned long long v = 0;
	for (const char *p = h; *p; p++) {
		if (!isxdigit((unsigned char)*p))
			return NULL;
		v = v * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0'
								: tolower((unsigned char)*p) - 'a' + 10);
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "");
	for (size_t b = 0; b < 64; b++) {
		if (!(v & (1ULL << b)))
			continue;
		if (sb.len)
			strbuf_addch(&sb, ',');
		if (b < ARRAY_SIZE(throttle_bits))
			strbuf_adds(&sb, throttle_bits[b]);
		else
			strbuf_addf(&sb, "0x%llx", 1ULL << b);
	}
	return strbuf_detach(&sb);
}

/* Whether a row is one of the step's GPUs: SLURM_STEP_GPUS lists the minor numbers
 * of /dev/nvidiaN the step was given. Without a list (or a minor number), every GPU
 * the step sees is its own. */
static bool in_list(const char *list, long v)
{
	if (!list || !*list || v < 0)
		return true;
	const char *p = list;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return true; /* not a list of numbers: no filter */
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p)
				return true;
		}
		if (v >= a && v <= b)
			return true;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return true;
	}
	return false;
}

static void feed_fields(struct gpu_node *n, const char *list)
{
	for (int f = 0; f < GF_N; f++)
		n->fields[f] = -1;
	n->nfields = 0;
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		_cleanup_free_ char *name = xstrndup(p, len);
		int f = gpu_field_of(name);
		if (f >= 0 && n->fields[f] < 0)
			n->fields[f] = n->nfields;
		n->nfields++;
		p += len;
		if (*p == ',')
			p++;
	}
}

static void node_failed(struct gpu_node *n, const char *msg)
{
	n->state = GPU_NODE_FAILED;
	set_str(&n->message, msg);
}

/* Whether two PCI addresses name one device: nvidia-smi writes "00000000:2A:00.0",
 * the driver's /proc directory "0000:2a:00.0". */
static bool same_bus(const char *a, const char *b)
{
	unsigned d1, b1, s1, f1, d2, b2, s2, f2;
	char end1, end2;
	return sscanf(a, "%x:%x:%x.%x%c", &d1, &b1, &s1, &f1, &end1) == 4 &&
	       sscanf(b, "%x:%x:%x.%x%c", &d2, &b2, &s2, &f2, &end2) == 4 && d1 == d2 && b1 == b2 &&
	       s1 == s2 && f1 == f2;
}

/* The minor number the driver's /proc files give the GPU at bus, or -1. */
static long minor_of_bus(const struct gpu_node *n, const char *bus)
{
	if (!n->minors || !bus)
		return -1;
	for (const char *l = n->minors; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		_cleanup_free_ char *line = xstrndup(l, len);
		char *sp = strchr(line, ' ');
		if (sp) {
			*sp = '\0';
			char *end;
			long m = strtol(sp + 1, &end, 10);
			if (end > sp + 1 && !*end && m >= 0 && same_bus(line, bus))
				return m;
		}
		l += len + (e ? 1 : 0);
	}
	return -1;
}

static void feed_row(struct gpu_top *t, struct gpu_node *n, const char *csv, double now)
{
	if (n->nfields == 0) {
		node_failed(n, csv);
		return;
	}
	char **v = xcalloc((size_t)n->nfields, sizeof(char *));
	int got = 0;
	const char *p = csv;
	while (got < n->nfields) {
		const char *e = strstr(p, ", ");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		v[got++] = xstrndup(p, len);
		if (!e)
			break;
		p = e + 2;
	}
	bool whole = got == n->nfields && !strstr(p, ", ");
	const char *uuid = n->fields[GF_UUID] >= 0 && whole ? v[n->fields[GF_UUID]] : NULL;
	const char *bus = n->fields[GF_BUS_ID] >= 0 && whole ? v[n->fields[GF_BUS_ID]] : NULL;
	const char *key = uuid && !null_value(uuid) ? uuid : bus && !null_value(bus) ? bus : NULL;
	if (!whole || !key) {
		/* nvidia-smi printed something other than a row: its error */
		node_failed(n, csv);
		goto out;
	}
	struct gpu_row *r = NULL;
	for (size_t i = 0; i < t->nrows; i++)
		if (streq(t->rows[i].node, n->name) && streq(t->rows[i].key, key))
			r = &t->rows[i];
	if (!r) {
		t->rows = xrealloc(t->rows, (t->nrows + 1) * sizeof(*t->rows));
		r = &t->rows[t->nrows++];
		memset(r, 0, sizeof(*r));
		r->node = xstrdup(n->name);
		r->key = xstrdup(key);
	}
#define FIELD(f) (n->fields[f] >= 0 ? v[n->fields[f]] : "")
#define STR(dst, f)                                                                         \
	do {                                                                                \
		free(dst);                                                                  \
		dst = null_value(FIELD(f)) ? NULL : xstrdup(FIELD(f));                      \
	} while (0)
	STR(r->uuid, GF_UUID);
	STR(r->bus_id, GF_BUS_ID);
	STR(r->name, GF_NAME);
	double d = number(FIELD(GF_INDEX));
	r->index = isnan(d) ? -1 : (long)d;
	d = number(FIELD(GF_MINOR));
	r->minor = isnan(d) ? minor_of_bus(n, r->bus_id) : (long)d;
	r->util = number(FIELD(GF_UTIL));
	r->mem_used = number(FIELD(GF_MEM_USED));
	r->mem_total = number(FIELD(GF_MEM_TOTAL));
	r->power = number(FIELD(GF_POWER));
	r->power_limit = number(FIELD(GF_POWER_LIMIT));
	r->temp = number(FIELD(GF_TEMP));
	free(r->throttle);
	r->throttle = gpu_throttle_words(FIELD(GF_THROTTLE));
#undef STR
#undef FIELD
	r->seen = now;
	r->in_step = in_list(n->step_gpus, r->minor);
	n->state = GPU_NODE_OK;
	free(n->message);
	n->message = NULL;
out:
	for (int i = 0; i < n->nfields; i++)
		free(v[i]);
	free(v);
}

long gpu_top_line_node(const struct gpu_top *t, const char *line, const char **kind)
{
	/* srun -l: "12: " */
	const char *s = line;
	while (*s == ' ')
		s++;
	const char *d = s;
	while (isdigit((unsigned char)*d))
		d++;
	if (d > s && d[0] == ':' && d[1] == ' ')
		s = d + 2;
	*kind = s;
	if (marker_value(s, MARK_TOP_TICK))
		return GPU_TOP_TICK;
	const char *rest = marker_value(s, MARK_TOP);
	const char *sp = rest ? strchr(rest, ' ') : NULL;
	if (!sp)
		return -1;
	for (size_t i = 0; i < t->nnodes; i++)
		if (strlen(t->nodes[i].name) == (size_t)(sp - rest) &&
		    memcmp(t->nodes[i].name, rest, (size_t)(sp - rest)) == 0) {
			*kind = sp + 1;
			return (long)i;
		}
	return -1;
}

bool gpu_top_feed(struct gpu_top *t, const char *line, double now)
{
	const char *kind, *arg;
	long i = gpu_top_line_node(t, line, &kind);
	if (i == GPU_TOP_TICK) {
		t->ticks++;
		return true;
	}
	if (i < 0)
		return false;
	struct gpu_node *n = &t->nodes[i];
	n->seen = now;
	if ((arg = after_prefix(kind, "step-gpus")) && (!*arg || *arg == ' ')) {
		set_str(&n->step_gpus, *arg ? arg + 1 : "");
	} else if ((arg = after_prefix(kind, "cuda")) && (!*arg || *arg == ' ')) {
		set_str(&n->cuda, *arg ? arg + 1 : "");
	} else if ((arg = after_prefix(kind, "health ")) && strlen(n->health ? n->health : "") < 65536) {
		char *h = xasprintf("%s%s\n", n->health ? n->health : "", arg);
		free(n->health);
		n->health = h;
	} else if ((arg = after_prefix(kind, "minor ")) && strlen(n->minors ? n->minors : "") < 4096) {
		char *m = xasprintf("%s%s\n", n->minors ? n->minors : "", arg);
		free(n->minors);
		n->minors = m;
	} else if (streq(kind, "no-nvidia-smi")) {
		n->state = GPU_NODE_NO_SMI;
	} else if ((arg = after_prefix(kind, "failed")) && (!*arg || *arg == ' ')) {
		node_failed(n, *arg ? arg + 1 : "nvidia-smi failed");
	} else if ((arg = after_prefix(kind, "fields")) && (!*arg || *arg == ' ')) {
		feed_fields(n, *arg ? arg + 1 : "");
	} else if ((arg = after_prefix(kind, "row ")) || streq(kind, "row")) {
		feed_row(t, n, arg ? arg : "", now);
	} else if (streq(kind, "ended")) {
		if (n->state != GPU_NODE_FAILED && n->state != GPU_NODE_NO_SMI)
			n->state = GPU_NODE_ENDED;
	}
	return false;
}

bool gpu_node_stale(const struct gpu_node *n, double now, double interval)
{
	if (n->state != GPU_NODE_OK && n->state != GPU_NODE_WAITING)
		return false;
	return n->seen > 0 ? now - n->seen > 2 * interval : false;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct gpu_row *x = *(const struct gpu_row *const *)a;
	const struct gpu_row *y = *(const struct gpu_row *const *)b;
	const char *kx = x->bus_id ? x->bus_id : x->key, *ky = y->bus_id ? y->bus_id : y->key;
	return strcmp(kx, ky);
}

size_t gpu_top_node_rows(const struct gpu_top *t, const struct gpu_node *n,
			 const struct gpu_row ***out)
{
	size_t k = 0;
	*out = xcalloc(t->nrows ? t->nrows : 1, sizeof(**out));
	for (size_t i = 0; n->allocated > 0 && i < t->nrows; i++)
		if (streq(t->rows[i].node, n->name) && t->rows[i].in_step)
			(*out)[k++] = &t->rows[i];
	qsort(*out, k, sizeof(**out), cmp_rows);
	return k;
}
