/* SPDX-License-Identifier: MIT */
/* hosts show --health's parsers: sinfo -N '%N|%T|%H|%u|%E' captured on the test
 * cluster with a drained node (a '|' in its reason) and a down one, each printed once
 * per partition; the GPU health lines as the script prints them from the
 * a100-health fixture, nvidia-smi missing or failing, and the kernel log's XIDs. */
#include "base/marker.h"
#include "gpu/node_health.h"
#include "unit.h"

static void test_sinfo(void)
{
	char *text = unit_fixture("slurm", "sinfo-health-drain-22.05.out");
	struct node_health *n;
	size_t count = node_health_parse(text, &n);
	CHECK_INT((int)count, 2);
	CHECK_STR(n[0].node, "node1");
	CHECK_STR(n[0].state, "idle");
	CHECK(!n[0].since && !n[0].by && !n[0].reason);
	CHECK_STR(n[1].state, "drained");
	CHECK_STR(n[1].since, "2026-11-24T20:52:48");
	CHECK_STR(n[1].by, "root");
	CHECK_STR(n[1].reason, "gpu 1 xid 79: fell off the bus | ticket 42");
	node_health_free(n, count);
	free(text);

	text = unit_fixture("slurm", "sinfo-health-down-22.05.out");
	count = node_health_parse(text, &n);
	CHECK_INT((int)count, 2);
	CHECK_STR(n[0].state, "down");
	CHECK_STR(n[0].reason, "not responding to ping, sent for RMA");
	node_health_free(n, count);
	free(text);

	count = node_health_parse("noise\nno bars here\n|idle|x|y|z\nn1|idle|Unknown|Unknown\n", &n);
	CHECK_INT((int)count, 0);
	free(n);

	struct strbuf sb = STRBUF_INIT;
	node_health_command(&sb);
	CHECK_CONTAINS(sb.buf, "sinfo -N -h -o '%N|%T|%H|%u|%E'");
	strbuf_release(&sb);
}

static void test_gpus(void)
{
	struct strbuf out = STRBUF_INIT;
	strbuf_adds(&out, "dispatch-health fields uuid,pci.bus_id,ecc.errors.uncorrected.volatile.total,"
			  "ecc.errors.uncorrected.aggregate.total,retired_pages.pending,"
			  "remapped_rows.pending,remapped_rows.failure\n");
	/* the fixture's rows, as nvidia-smi prints those fields */
	char *q = unit_fixture("nvidia-smi", "a100-health.query");
	struct line_iter it = LINE_ITER_INIT(q);
	line_next(&it);
	for (char *l; (l = line_next(&it));) {
		if (!*l)
			continue;
		char *f[17];
		size_t k = 0;
		for (char *p = l; k < 17; k++) {
			f[k] = p;
			char *e = strstr(p, ", ");
			if (!e)
				break;
			*e = 0;
			p = e + 2;
		}
		strbuf_addf(&out, "dispatch-health row %s, %s, %s, %s, %s, %s, %s\n", f[0], f[1], f[12],
			    f[13], f[14], f[15], f[16]);
	}
	line_iter_release(&it);
	strbuf_adds(&out, "dispatch-health xid-source journalctl\n"
			  "dispatch-health xid Nov 24 20:01:02 gpu7 kernel: NVRM: Xid (PCI:0000:0f:00): "
			  "48, pid=1234, name=python3, An uncorrectable double bit error\n");
	struct gpu_health_report r;
	gpu_health_parse(out.buf, &r);
	CHECK(!r.no_smi && !r.error);
	CHECK_INT((int)r.ngpus, 2);
	CHECK_STR(r.gpus[0].v[GH_BUS_ID], "00000000:07:00.0");
	CHECK(r.gpus[0].v[GH_RETIRED_PENDING] == NULL);
	CHECK(r.gpus[0].v[GH_RECOVERY] == NULL);
	CHECK(!r.gpus[0].unhealthy);
	CHECK_STR(r.gpus[1].v[GH_ECC_VOLATILE], "2");
	CHECK_STR(r.gpus[1].v[GH_REMAP_PENDING], "Yes");
	CHECK(r.gpus[1].unhealthy);
	CHECK_STR(r.xid_source, "journalctl");
	CHECK_INT((int)strv_len(r.xid), 1);
	CHECK_CONTAINS(r.xid[0], "NVRM: Xid (PCI:0000:0f:00): 48");
	gpu_health_release(&r);
	free(q);
	strbuf_release(&out);

	gpu_health_parse("dispatch-health no-nvidia-smi \ndispatch-health xid-source unavailable\n", &r);
	CHECK(r.no_smi && r.ngpus == 0);
	CHECK_STR(r.xid_source, "unavailable");
	gpu_health_release(&r);

	gpu_health_parse("dispatch-health fields uuid,gpu_recovery_action\n"
			 "dispatch-health row GPU-1, Reset\n"
			 "dispatch-health row NVIDIA-SMI has failed because it couldn't communicate\n", &r);
	CHECK_INT((int)r.ngpus, 1);
	CHECK(r.gpus[0].unhealthy);
	CHECK_CONTAINS(r.error, "NVIDIA-SMI has failed");
	gpu_health_release(&r);

	struct strbuf sb = STRBUF_INIT;
	gpu_health_command(&sb);
	CHECK_CONTAINS(sb.buf, "remapped_rows.pending remapped_rows.failure gpu_recovery_action; do");
	CHECK_CONTAINS(sb.buf, "journalctl -k");
	/* gpu_health.sh asks for the fields the parser knows, in their order */
	struct strbuf list = STRBUF_INIT;
	strbuf_adds(&list, "\tfor f in");
	for (int f = 0; f < GH_N; f++)
		strbuf_addf(&list, " %s", gpu_health_field_name(f));
	strbuf_adds(&list, "; do\n");
	CHECK_CONTAINS(sb.buf, list.buf);
	strbuf_release(&list);
	strbuf_release(&sb);
}

/* A real H200's health row (driver 580.159.04, bench/gpu-capture.sh): an H200 remaps
 * rows, so retired_pages.pending is [N/A]; gpu_recovery_action says None. */
static void test_h200(void)
{
	_cleanup_free_ char *q = unit_fixture("nvidia-smi", "h200-driver580-health.query");
	struct strbuf out = STRBUF_INIT;
	struct line_iter it = LINE_ITER_INIT(q);
	char *l = line_next(&it);
	strbuf_adds(&out, "dispatch-health fields ");
	for (const char *p = l; *p; p++)
		if (*p != ' ')
			strbuf_addch(&out, *p);
	strbuf_addch(&out, '\n');
	while ((l = line_next(&it)))
		if (*l)
			strbuf_addf(&out, "dispatch-health row %s\n", l);
	line_iter_release(&it);
	struct gpu_health_report r;
	gpu_health_parse(out.buf, &r);
	CHECK(!r.no_smi && !r.error);
	CHECK_INT((int)r.ngpus, 1);
	if (r.ngpus == 1) {
		CHECK_STR(r.gpus[0].v[GH_BUS_ID], "00000000:00:06.0");
		CHECK_STR(r.gpus[0].v[GH_ECC_VOLATILE], "0");
		CHECK(r.gpus[0].v[GH_RETIRED_PENDING] == NULL);
		CHECK_STR(r.gpus[0].v[GH_RECOVERY], "None");
		CHECK(!r.gpus[0].unhealthy);
	}
	gpu_health_release(&r);
	strbuf_release(&out);
}

int main(void)
{
	test_h200();
	test_sinfo();
	test_gpus();
	return unit_done();
}
