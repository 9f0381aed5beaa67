/* SPDX-License-Identifier: MIT */
/* scontrol -o parsing (lib/sched/slurm/slurm_nodes.h) and the probe's sections (lib/host_facts.h)
 * on outputs captured from the test cluster and on hand-written other versions. */
#include "host_facts.h"
#include "sched/slurm/slurm_nodes.h"
#include "unit.h"

static char *fixture(const char *name)
{
	return unit_fixture("slurm/scontrol", name);
}

/* Parses a .probe fixture as HOST_FACTS_AUTO would; 0 on success. */
static int probe(const char *name, struct host_facts *f, struct dp_error *err)
{
	_cleanup_free_ char *text = fixture(name);
	dp_error_clear(err);
	return host_facts_parse(text, "", HOST_FACTS_AUTO, f, err);
}

static const struct slurm_node *node(const struct slurm_facts *f, const char *name)
{
	for (size_t i = 0; i < f->nnodes; i++)
		if (streq(f->nodes[i].name, name))
			return &f->nodes[i];
	return NULL;
}

static void test_fields(void)
{
	struct scontrol_field *f;
	size_t n;
	scontrol_fields("NodeName=n1 OS=Linux 6.1 #1 SMP  State=IDLE+DRAIN AllocTRES= "
			"Reason=State=DOWN by hand [root@2024-01-01T00:00:00] TRES=cpu=4,gres/gpu=2",
			&f, &n);
	CHECK_STR(scontrol_get(f, n, "NodeName"), "n1");
	CHECK_STR(scontrol_get(f, n, "OS"), "Linux 6.1 #1 SMP");
	CHECK_STR(scontrol_get(f, n, "AllocTRES"), "");
	/* the first State= wins over the one inside the reason */
	CHECK_STR(scontrol_get(f, n, "State"), "IDLE+DRAIN");
	CHECK_STR(scontrol_get(f, n, "Reason"), "State=DOWN by hand [root@2024-01-01T00:00:00]");
	CHECK_STR(scontrol_get(f, n, "TRES"), "cpu=4,gres/gpu=2");
	CHECK(scontrol_get(f, n, "Missing") == NULL);
	scontrol_fields_free(f, n);

	scontrol_fields("", &f, &n);
	CHECK_INT(n, 0);
	scontrol_fields_free(f, n);
	scontrol_fields("not a field at all", &f, &n);
	CHECK_INT(n, 0);
	scontrol_fields_free(f, n);
}

static void test_gres(void)
{
	struct slurm_gres *g;
	size_t n;
	struct dp_error err;

	CHECK_INT(slurm_gres_parse("gpu:a100:4(S:0-1)", &g, &n, &err), 0);
	CHECK_INT(n, 1);
	CHECK_STR(g[0].name, "gpu");
	CHECK_STR(g[0].type, "a100");
	CHECK_INT(g[0].count, 4);
	slurm_gres_free(g, n);

	CHECK_INT(slurm_gres_parse("gpu:2", &g, &n, &err), 0);
	CHECK(n == 1 && g[0].type == NULL && g[0].count == 2);
	slurm_gres_free(g, n);

	CHECK_INT(slurm_gres_parse("gpu:a100:3(IDX:0-1,3),gpu:v100:0(IDX:N/A),shard:a100:1K", &g, &n, &err), 0);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK(g[0].count == 3 && streq(g[0].type, "a100"));
		CHECK(g[1].count == 0 && streq(g[1].type, "v100"));
		CHECK(streq(g[2].name, "shard") && g[2].count == 1024);
	}
	slurm_gres_free(g, n);

	CHECK_INT(slurm_gres_parse("gpu:(null):1(IDX:2)", &g, &n, &err), 0);
	CHECK(n == 1 && g[0].type == NULL && g[0].count == 1);
	slurm_gres_free(g, n);

	CHECK_INT(slurm_gres_parse("gpu", &g, &n, &err), 0);
	CHECK(n == 1 && g[0].count == 1 && g[0].type == NULL);
	slurm_gres_free(g, n);
	CHECK_INT(slurm_gres_parse("gpu:tesla", &g, &n, &err), 0);
	CHECK(n == 1 && g[0].count == 1 && streq(g[0].type, "tesla"));
	slurm_gres_free(g, n);

	for (const char *none = "(null)\0N/A\0\0"; ; none += strlen(none) + 1) {
		CHECK_INT(slurm_gres_parse(none, &g, &n, &err), 0);
		CHECK_INT(n, 0);
		slurm_gres_free(g, n);
		if (!*none)
			break;
	}

	CHECK_INT(slurm_gres_parse("gpu:a100:x", &g, &n, &err), -1);
	CHECK_CONTAINS(err.msg, "gpu:a100:x");
	CHECK_INT(slurm_gres_parse("gpu:a100:2(S:0", &g, &n, &err), -1);
	CHECK_INT(slurm_gres_parse(":a100:2", &g, &n, &err), -1);
}

static void test_states(void)
{
	CHECK(slurm_state_usable("IDLE"));
	CHECK(slurm_state_usable("MIXED"));
	CHECK(slurm_state_usable("ALLOCATED"));
	CHECK(slurm_state_usable("IDLE+CLOUD+POWERED_DOWN"));
	CHECK(slurm_state_usable("MIXED+PLANNED"));
	CHECK(!slurm_state_usable("IDLE+DRAIN"));
	CHECK(!slurm_state_usable("MIXED+DRAIN"));
	CHECK(!slurm_state_usable("DRAINED"));
	CHECK(!slurm_state_usable("DOWN"));
	CHECK(!slurm_state_usable("IDLE*"));
	CHECK(!slurm_state_usable("DOWN*+NOT_RESPONDING"));
	CHECK(!slurm_state_usable("IDLE+MAINT"));
	CHECK(!slurm_state_usable("IDLE+RESERVED"));
	CHECK(!slurm_state_usable("FUTURE"));
	CHECK(!slurm_state_usable(""));
}

static void test_idle(void)
{
	struct host_facts f;
	struct dp_error err;
	CHECK_INT(probe("22.05-idle.probe", &f, &err), 0);
	CHECK(f.slurm && !f.gpu_tool && !f.slurm_error);
	CHECK_INT(f.sl.npartitions, 2);
	CHECK_INT(f.sl.nnodes, 2);
	CHECK_STR(f.sl.version, "22.05.8");
	const struct slurm_partition *gpu = slurm_default_partition(&f.sl);
	CHECK(gpu && streq(gpu->name, "gpu") && gpu->up);
	if (gpu) {
		CHECK_STR(gpu->nodes, "node[1-2]");
		CHECK_INT(gpu->total_cpus, 4);
		CHECK_STR(gpu->max_time, "UNLIMITED");
		CHECK_STR(gpu->default_time, "NONE");
	}
	const struct slurm_node *n1 = node(&f.sl, "node1");
	CHECK(n1 && n1->usable && n1->ngpus == 1);
	if (n1 && n1->ngpus == 1) {
		CHECK_STR(n1->gpus[0].type, "a100");
		CHECK_INT(n1->gpus[0].total, 2);
		CHECK_INT(n1->gpus[0].used, 0);
		CHECK(slurm_node_in(n1, "gpu") && slurm_node_in(n1, "cpu"));
		CHECK_INT(n1->cpus, 2);
		CHECK(n1->reason == NULL);
	}
	struct slurm_partition_gpus *pg;
	size_t npg;
	slurm_partition_gpus(&f.sl, "gpu", &pg, &npg);
	CHECK(npg == 1 && pg[0].total == 4 && pg[0].free == 4 && pg[0].free_max == 2);
	slurm_partition_gpus_free(pg, npg);
	host_facts_release(&f);
}

static void test_running_job(void)
{
	struct host_facts f;
	struct dp_error err;
	CHECK_INT(probe("22.05-job-2gpu-node1.probe", &f, &err), 0);
	const struct slurm_node *n1 = node(&f.sl, "node1"), *n2 = node(&f.sl, "node2");
	CHECK(n1 && n2);
	if (!n1 || !n2)
		goto out;
	CHECK_STR(n1->state, "MIXED");
	CHECK(n1->usable);
	CHECK_INT(n1->gpus[0].used, 2);
	CHECK_INT(slurm_node_gpus_free(n1, "a100"), 0);
	CHECK_INT(slurm_node_gpus_free(n2, "a100"), 2);
	CHECK_INT(slurm_node_gpus_free(n2, "v100"), 0);
	CHECK_INT(slurm_node_gpus_free(n2, NULL), 2);
	CHECK_INT(n1->cpus_alloc, 1);
	struct slurm_partition_gpus *pg;
	size_t npg;
	slurm_partition_gpus(&f.sl, "gpu", &pg, &npg);
	CHECK(npg == 1 && pg[0].total == 4 && pg[0].used == 2 && pg[0].free == 2 && pg[0].free_max == 2);
	slurm_partition_gpus_free(pg, npg);
out:
	host_facts_release(&f);

	/* node2 drained: nothing free anywhere, its reason whole */
	CHECK_INT(probe("22.05-job-2gpu-node1-node2-drained.probe", &f, &err), 0);
	n2 = node(&f.sl, "node2");
	CHECK(n2 && !n2->usable);
	if (n2) {
		CHECK_STR(n2->state, "IDLE+DRAIN");
		CHECK_CONTAINS(n2->reason, "maint test [root@");
		CHECK_INT(slurm_node_gpus_free(n2, "a100"), 0);
		CHECK_INT(slurm_node_gpus_total(n2, "a100"), 2);
	}
	slurm_partition_gpus(&f.sl, "gpu", &pg, &npg);
	CHECK(npg == 1 && pg[0].total == 4 && pg[0].used == 2 && pg[0].free == 0);
	slurm_partition_gpus_free(pg, npg);
	host_facts_release(&f);

	/* an untyped --gres=gpu:1 job counts against the node's a100 */
	CHECK_INT(probe("22.05-job-2gpu-node1-job-1gpu-untyped-node2.probe", &f, &err), 0);
	n2 = node(&f.sl, "node2");
	CHECK(n2 && n2->ngpus == 1 && n2->gpus[0].used == 1);
	host_facts_release(&f);
}

static void test_no_detail(void)
{
	/* without -d: AllocTRES gres/gpu=N on a one-type node */
	_cleanup_free_ char *nodes = fixture("22.05-no-detail-2-jobs.nodes");
	struct slurm_facts f;
	struct dp_error err;
	CHECK_INT(slurm_facts_parse(NULL, nodes, &f, &err), 0);
	const struct slurm_node *n1 = node(&f, "node1"), *n2 = node(&f, "node2");
	CHECK(n1 && n2);
	if (n1 && n2) {
		CHECK_INT(slurm_node_gpus_free(n1, "a100"), 0);
		CHECK_INT(slurm_node_gpus_free(n2, "a100"), 1);
	}
	slurm_facts_release(&f);
}

static void test_other_versions(void)
{
	struct host_facts f;
	struct dp_error err;
	CHECK_INT(probe("23.11-handwritten-multi-type.probe", &f, &err), 0);
	const struct slurm_facts *s = &f.sl;
	CHECK_STR(s->version, "23.11.4");
	CHECK_INT(s->nnodes, 9);
	const struct slurm_node *g1 = node(s, "gpu01"), *g2 = node(s, "gpu02"), *g3 = node(s, "gpu03"),
				*g4 = node(s, "gpu04"), *g5 = node(s, "gpu05"), *g6 = node(s, "gpu06"),
				*t1 = node(s, "tiny01");
	CHECK(g1 && g2 && g3 && g4 && g5 && g6 && t1);
	if (!(g1 && g2 && g3 && g4 && g5 && g6 && t1))
		goto out;
	/* shards are not GPUs */
	CHECK_INT(g1->ngpus, 1);
	CHECK_INT(slurm_node_gpus_free(g1, "a100"), 1);
	CHECK(!g2->usable && !g3->usable && !g4->usable);
	CHECK_STR(g2->state, "IDLE+DRAIN");
	CHECK_CONTAINS(g2->reason, "Xid 79");
	CHECK_STR(g3->state, "DOWN*+NOT_RESPONDING");
	CHECK_INT(slurm_node_gpus_free(g5, "v100"), 0);
	CHECK_INT(slurm_node_gpus_free(g5, "a100"), 2);
	CHECK_INT(slurm_node_gpus_free(g5, NULL), 2);
	CHECK(g6->usable);
	CHECK(g6->ngpus == 1 && g6->gpus[0].type == NULL);
	CHECK_INT(slurm_node_gpus_free(g6, NULL), 3);
	CHECK_INT(slurm_node_gpus_free(g6, "a100"), 0);
	CHECK_INT(t1->ngpus, 0);
	CHECK_INT(slurm_node_gpus_free(t1, NULL), 0);

	const struct slurm_partition *cpu = slurm_partition_find(s, "cpu");
	CHECK(cpu && !cpu->up);
	const struct slurm_partition *a100 = slurm_partition_find(s, "a100");
	CHECK(a100 && a100->is_default && streq(a100->max_time, "2-00:00:00") &&
	      streq(a100->default_time, "01:00:00"));

	struct slurm_partition_gpus *pg;
	size_t npg;
	slurm_partition_gpus(s, "a100", &pg, &npg);
	/* gpu01 (1 free of 4), gpu02 drained, gpu03 down, gpu04 reserved */
	CHECK(npg == 1 && pg[0].total == 14 && pg[0].used == 3 && pg[0].free == 1 && pg[0].free_max == 1);
	slurm_partition_gpus_free(pg, npg);
	slurm_partition_gpus(s, "mixed", &pg, &npg);
	CHECK_INT(npg, 3);
	if (npg == 3) {
		CHECK(streq(pg[0].type, "v100") && pg[0].free == 0 && pg[0].total == 2);
		CHECK(streq(pg[1].type, "a100") && pg[1].free == 2);
		CHECK(pg[2].type == NULL && pg[2].free == 3 && pg[2].total == 4);
	}
	slurm_partition_gpus_free(pg, npg);
out:
	host_facts_release(&f);

	/* an old release: no Partitions= on nodes, no GresUsed */
	_cleanup_free_ char *parts = fixture("17.11-handwritten.partitions");
	_cleanup_free_ char *nodes = fixture("17.11-handwritten-no-partitions-field.nodes");
	struct slurm_facts o;
	CHECK_INT(slurm_facts_parse(parts, nodes, &o, &err), 0);
	const struct slurm_node *n1 = node(&o, "n01"), *n2 = node(&o, "n02");
	CHECK(n1 && n2);
	if (n1 && n2) {
		CHECK(slurm_node_in(n1, "short") && slurm_node_in(n1, "k80only"));
		CHECK(slurm_node_in(n2, "short") && !slurm_node_in(n2, "k80only"));
		CHECK_INT(slurm_node_gpus_free(n1, "k80"), 3);
		/* one GPU used, type unknown: each type counts it (never over-counts free) */
		CHECK_INT(slurm_node_gpus_free(n2, "k80"), 1);
		CHECK_INT(slurm_node_gpus_free(n2, "p100"), 1);
	}
	slurm_facts_release(&o);
}

static void test_probe_errors(void)
{
	struct host_facts f;
	struct dp_error err;

	/* SLURM's client without a cluster: a plain host, with the reason */
	CHECK_INT(probe("22.05-client-without-cluster.probe", &f, &err), 0);
	CHECK(!f.slurm && !f.gpu_tool);
	CHECK_CONTAINS(f.slurm_error, "scontrol failed (exit status 1): scontrol: fatal: Could not establish");
	host_facts_release(&f);
	_cleanup_free_ char *text = fixture("22.05-client-without-cluster.probe");
	CHECK_INT(host_facts_parse(text, "", HOST_FACTS_SLURM, &f, &err), -1);
	CHECK_INT(err.kind, DPE_FAIL);
	CHECK_CONTAINS(err.msg, "Could not establish a configuration source");

	CHECK_INT(host_facts_parse("@dispatch end\n", "", HOST_FACTS_SLURM, &f, &err), -1);
	CHECK_CONTAINS(err.msg, "no sbatch");
	CHECK_INT(host_facts_parse("@dispatch end\n", "", HOST_FACTS_AUTO, &f, &err), 0);
	CHECK(!f.slurm && !f.gpu_tool);
	host_facts_release(&f);

	/* cut short */
	CHECK_INT(host_facts_parse("@dispatch partitions\nPartitionName=x\n", "", HOST_FACTS_AUTO, &f, &err), -1);
	CHECK_CONTAINS(err.msg, "cut short");

	/* the controller is down */
	CHECK_INT(host_facts_parse("@dispatch partitions\nslurm_load_partitions: Unable to contact "
				   "slurm controller (connect failure)\n@dispatch status 1\n@dispatch end\n",
				   "", HOST_FACTS_SLURM, &f, &err), -1);
	CHECK_STR(err.msg, "scontrol failed (exit status 1): slurm_load_partitions: Unable to contact "
		  "slurm controller (connect failure)");

	/* nvidia-smi without a driver */
	CHECK_INT(host_facts_parse("@dispatch gpus\nNVIDIA-SMI has failed because it couldn't communicate "
				   "with the NVIDIA driver. Make sure that the latest NVIDIA driver is "
				   "installed and running.\n\n@dispatch status 9\n@dispatch end\n",
				   "", HOST_FACTS_GPUS, &f, &err), -1);
	CHECK_CONTAINS(err.msg, "nvidia-smi failed (exit status 9): NVIDIA-SMI has failed");

	/* a login shell that prints things does not get in the way */
	CHECK_INT(host_facts_parse("Welcome to the cluster!\n@dispatch gpus\nGPU-1, NVIDIA L4, 23034\n"
				   "@dispatch status 0\n@dispatch apps\n@dispatch status 0\n@dispatch end\n",
				   "", HOST_FACTS_GPUS, &f, &err), 0);
	CHECK(f.gpu_tool && f.gpus.n == 1 && streq(f.gpus.gpus[0].chip, "l4"));
	host_facts_release(&f);
}

static void test_command(void)
{
	struct strbuf sb = STRBUF_INIT;
	host_facts_command(&sb, HOST_FACTS_AUTO);
	CHECK_CONTAINS(sb.buf, "command -v sbatch");
	CHECK_CONTAINS(sb.buf, "scontrol -o -d show node");
	CHECK_CONTAINS(sb.buf, "nvidia-smi --query-compute-apps=gpu_uuid,used_memory");
	strbuf_reset(&sb);
	host_facts_command(&sb, HOST_FACTS_GPUS);
	CHECK(!strstr(sb.buf, "scontrol"));
	strbuf_reset(&sb);
	host_facts_command(&sb, HOST_FACTS_SLURM);
	CHECK(!strstr(sb.buf, "nvidia-smi"));
	strbuf_release(&sb);
}

int main(void)
{
	test_fields();
	test_gres();
	test_states();
	test_idle();
	test_running_job();
	test_no_detail();
	test_other_versions();
	test_probe_errors();
	test_command();
	return unit_done();
}
