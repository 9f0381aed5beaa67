/* SPDX-License-Identifier: MIT */
/* dispatch top's parsers: scontrol -d show job (captured on the test cluster, SLURM
 * 22.05: a --gpus=3 job over two nodes and a job without GPUs), the node lines of a
 * session (rows from the *.query fixtures, [N/A] as null, the throttle bits, the
 * SLURM_STEP_GPUS filter by minor number, nvidia-smi's errors), and the command. */
#include <math.h>

#include "base/marker.h"
#include "gpu/gpu_top.h"
#include "sched/slurm/slurm_top.h"
#include "unit.h"

static const char job_gpus[] =
	"JobId=7 JobName=wrap\n"
	"   JobState=RUNNING Reason=None Dependency=(null)\n"
	"   NodeList=node[1-2]\n"
	"   BatchHost=node1\n"
	"   JOB_GRES=gpu:a100:3\n"
	"     Nodes=node1 CPU_IDs=0 Mem=500 GRES=gpu:a100:2(IDX:0-1)\n"
	"     Nodes=node2 CPU_IDs=0 Mem=500 GRES=gpu:a100:1(IDX:0)\n"
	"   TresPerJob=gres:gpu:3\n";
static const char job_nogpu[] =
	"JobId=8 JobName=wrap\n"
	"   JobState=PENDING Reason=Resources Dependency=(null)\n"
	"   NodeList=node1\n"
	"   JOB_GRES=(null)\n"
	"     Nodes=node1 CPU_IDs=1 Mem=500 GRES=\n";

static void test_job(void)
{
	struct gpu_top_job j;
	CHECK_INT(gpu_top_parse_job(job_gpus, &j), 0);
	CHECK(j.found);
	CHECK_STR(j.state, "RUNNING");
	CHECK_INT(j.n, 2);
	CHECK_STR(j.alloc[0].node, "node1");
	CHECK_INT(j.alloc[0].gpus, 2);
	CHECK_INT(j.alloc[1].gpus, 1);
	struct strbuf sb = STRBUF_INIT;
	gpu_top_slurm_command(&sb, "7", &j, 2, 3, false, false);
	CHECK_CONTAINS(sb.buf, "srun --jobid='7' --overlap --nodes=1 --ntasks-per-node=1 --nodelist='node1' --gpus=2 -l -u --input=none -t 3 sh -c");
	CHECK_CONTAINS(sb.buf, "--nodelist='node2' --gpus=1");
	CHECK_CONTAINS(sb.buf, "echo dispatch-top-tick");
	strbuf_release(&sb);
	gpu_top_job_release(&j);

	CHECK_INT(gpu_top_parse_job(job_nogpu, &j), 0);
	CHECK_STR(j.state, "PENDING");
	CHECK_STR(j.reason, "Resources");
	CHECK_INT(j.n, 1);
	CHECK_INT(j.alloc[0].gpus, 0);
	/* a node without GPUs of the job shows none of the node's */
	struct gpu_top t;
	gpu_top_init(&t, &j);
	gpu_top_feed(&t, "dispatch-top node1 step-gpus ", 1);
	gpu_top_feed(&t, "dispatch-top node1 fields uuid,utilization.gpu", 1);
	gpu_top_feed(&t, "dispatch-top node1 row GPU-1, 50", 1);
	const struct gpu_row **rows;
	CHECK_INT(gpu_top_node_rows(&t, &t.nodes[0], &rows), 0);
	free(rows);
	gpu_top_release(&t);
	gpu_top_job_release(&j);

	CHECK_INT(gpu_top_parse_job("slurm_load_jobs error: Invalid job id specified\n", &j), 0);
	CHECK(!j.found);
	gpu_top_job_release(&j);
}

/* Feeds a *.query fixture as node's rows: the header is the fields line. */
static void feed_fixture(struct gpu_top *t, const char *node, const char *name, const char *step)
{
	_cleanup_free_ char *text = unit_fixture("nvidia-smi", name);
	CHECK(text != NULL);
	if (!text)
		return;
	char line[1024];
	snprintf(line, sizeof(line), "0: dispatch-top %s step-gpus %s", node, step);
	gpu_top_feed(t, line, 1);
	struct line_iter it = LINE_ITER_INIT(text);
	bool first = true;
	for (char *l; (l = line_next(&it));) {
		if (first) {
			for (char *p = l; (p = strstr(p, ", "));)
				memmove(p + 1, p + 2, strlen(p + 2) + 1);
			snprintf(line, sizeof(line), "dispatch-top %s fields %s", node, l);
			first = false;
		} else {
			snprintf(line, sizeof(line), "1: dispatch-top %s row %s", node, l);
		}
		CHECK(!gpu_top_feed(t, line, 1));
	}
	line_iter_release(&it);
}

static void test_session(void)
{
	struct gpu_top_job j;
	gpu_top_parse_job(job_gpus, &j);
	struct gpu_top t;
	gpu_top_init(&t, &j);
	feed_fixture(&t, "node1", "a100-node.query", "0-1");
	feed_fixture(&t, "node2", "h100-mig.query", "1");
	const struct gpu_row **rows;
	size_t n = gpu_top_node_rows(&t, &t.nodes[0], &rows);
	CHECK_INT(n, 2);
	CHECK_STR(rows[0]->bus_id, "00000000:07:00.0");
	CHECK(rows[0]->util == 87);
	CHECK(rows[0]->power == 312.45);
	CHECK_STR(rows[0]->throttle, "sw_power_cap");
	CHECK_STR(rows[1]->throttle, "gpu_idle");
	free(rows);
	/* node2: only minor 1 is the step's; its MIG sibling's [N/A] utilisation is null */
	n = gpu_top_node_rows(&t, &t.nodes[1], &rows);
	CHECK_INT(n, 1);
	CHECK_STR(rows[0]->uuid, "GPU-91f3c6d8-2e4a-4b7c-9d0e-6a5b3c8f1d27");
	CHECK_STR(rows[0]->throttle, "sw_power_cap,sw_thermal_slowdown");
	free(rows);
	for (size_t i = 0; i < t.nrows; i++)
		if (streq(t.rows[i].key, "GPU-5a8e2c7f-1b3d-4e6a-8c9f-0d4b7e2a6c13"))
			CHECK(isnan(t.rows[i].util) && !t.rows[i].in_step);
	CHECK(gpu_top_feed(&t, "dispatch-top-tick", 2));
	CHECK_INT(t.ticks, 1);
	CHECK(!gpu_node_stale(&t.nodes[0], 4, 2));
	CHECK(gpu_node_stale(&t.nodes[0], 6, 2));

	/* nvidia-smi's error instead of a row; a node without nvidia-smi */
	gpu_top_feed(&t, "dispatch-top node1 row Field \"x\" is not a valid field to query.", 7);
	CHECK_INT(t.nodes[0].state, GPU_NODE_FAILED);
	CHECK_CONTAINS(t.nodes[0].message, "not a valid field");
	gpu_top_feed(&t, "dispatch-top node2 no-nvidia-smi", 7);
	CHECK_INT(t.nodes[1].state, GPU_NODE_NO_SMI);
	CHECK(!gpu_node_stale(&t.nodes[1], 100, 2));
	/* lines of unknown nodes and noise are ignored */
	CHECK(!gpu_top_feed(&t, "dispatch-top node9 no-nvidia-smi", 7));
	CHECK(!gpu_top_feed(&t, "Welcome to the cluster", 7));
	gpu_top_release(&t);
	gpu_top_job_release(&j);
}

/* A real H200's row (driver 580.159.04, bench/gpu-capture.sh): that driver has no
 * minor_number field, so the probe leaves it out and the row is the step's. */
static void test_h200(void)
{
	struct gpu_top_job j;
	gpu_top_parse_job(job_gpus, &j);
	struct gpu_top t;
	gpu_top_init(&t, &j);
	feed_fixture(&t, "node1", "h200-driver580.query", "0");
	const struct gpu_row **rows;
	size_t n = gpu_top_node_rows(&t, &t.nodes[0], &rows);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(rows[0]->uuid, "GPU-6d4a7155-b2bb-2dea-81ff-1126d2fc677c");
		CHECK_STR(rows[0]->name, "NVIDIA H200");
		CHECK(rows[0]->minor == -1 && rows[0]->index == 0 && rows[0]->in_step);
		CHECK(rows[0]->util == 0 && rows[0]->mem_total == 143771 && rows[0]->power == 85.19);
		CHECK(rows[0]->power_limit == 700 && rows[0]->temp == 42);
		CHECK_STR(rows[0]->throttle, "gpu_idle");
	}
	free(rows);
	gpu_top_release(&t);

	/* the driver's /proc files give the minor number instead (as captured there:
	 * "0000:00:06.0"): SLURM_STEP_GPUS filters again */
	static const char *const steps[] = { "3", "0-2" };
	for (int k = 0; k < 2; k++) {
		gpu_top_init(&t, &j);
		gpu_top_feed(&t, "dispatch-top node1 minor 0000:00:05.0 0", 1);
		gpu_top_feed(&t, "dispatch-top node1 minor 0000:00:06.0 3", 1);
		feed_fixture(&t, "node1", "h200-driver580.query", steps[k]);
		CHECK_INT(t.nrows, 1);
		if (t.nrows == 1) {
			CHECK_INT(t.rows[0].minor, 3);
			CHECK(t.rows[0].in_step == (k == 0));
		}
		gpu_top_release(&t);
	}
	gpu_top_job_release(&j);
}

static void test_fields(void)
{
	CHECK_INT(gpu_field_of("clocks_throttle_reasons.active"), GF_THROTTLE);
	CHECK_INT(gpu_field_of("clocks_event_reasons.active"), GF_THROTTLE);
	CHECK_INT(gpu_field_of("pci.bus_id"), GF_BUS_ID);
	CHECK_INT(gpu_field_of("nope"), -1);
	_cleanup_free_ char *none = gpu_throttle_words("0x0000000000000000");
	CHECK_STR(none, "");
	CHECK(gpu_throttle_words("[N/A]") == NULL);
	_cleanup_free_ char *hi = gpu_throttle_words("0x0000000000001000");
	CHECK_STR(hi, "0x1000");
}

int main(void)
{
	test_h200();
	test_job();
	test_session();
	test_fields();
	return unit_done();
}
