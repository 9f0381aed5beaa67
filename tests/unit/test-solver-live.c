/* SPDX-License-Identifier: MIT */
/* solve --check: the solver with live facts injected, from outputs captured on the
 * test cluster (tests/unit/data/slurm/scontrol) and nvidia-smi fixtures. */
#include "host_facts.h"
#include "inventory/inventory.h"
#include "solver.h"
#include "unit.h"

static char *data(const char *name)
{
	return unit_fixture(".", name);
}

static struct inventory *load(const char *text)
{
	struct dp_error err;
	struct inventory *inv = NULL;
	if (inventory_parse("t.yaml", text, strlen(text), &inv, &err) < 0)
		printf("# %s\n", err.msg);
	return inv;
}

static void slurm_facts_of(const char *probe, struct host_facts *f)
{
	_cleanup_free_ char *path = xasprintf("slurm/scontrol/%s", probe);
	_cleanup_free_ char *text = data(path);
	struct dp_error err;
	if (host_facts_parse(text, "", HOST_FACTS_SLURM, f, &err) < 0)
		printf("# %s\n", err.msg);
}

static void gpu_facts_of(const char *gpus, const char *apps, struct host_facts *f)
{
	_cleanup_free_ char *g = gpus ? data(gpus) : NULL;
	_cleanup_free_ char *a = apps ? data(apps) : NULL;
	struct dp_error err;
	memset(f, 0, sizeof(*f));
	f->gpu_tool = gpus != NULL;
	if (g && nvidia_smi_parse(g, a, &f->gpus, &err) < 0)
		printf("# %s\n", err.msg);
}

static const char *reason_for(const struct solve_result *res, const char *host)
{
	for (size_t i = 0; i < res->nverdicts; i++)
		if (streq(res->verdicts[i].host->name, host))
			return res->verdicts[i].reason;
	return NULL;
}

static const char *pick(const struct inventory *inv, const char *chip, int chips,
			const struct solve_live *live, size_t nlive, struct solve_result *res)
{
	struct solve_request req = { .chip = chip, .chips = chips, .check = live != NULL,
				     .live = live, .nlive = nlive };
	struct dp_error err;
	if (solve(inv, &req, res, &err) < 0) {
		printf("# %s\n", err.msg);
		return "!error";
	}
	return res->host ? res->host->name : "-";
}

/* Two inventory entries on the test cluster, each kept to one node by exclude. */
static const char two_halves[] =
	"gres_mapping: {a100-sxm4-80gb: a100}\n"
	"clusters: {tb: {root: /r, work: /w}}\n"
	"hosts:\n"
	"  half1: {ssh: hpc, cluster: tb, type: slurm, partitions: [gpu], exclude: [node2]}\n"
	"  half2: {ssh: hpc, cluster: tb, type: slurm, partitions: [gpu], exclude: ['node[0-1],node3']}\n";

static void test_slurm_moves_to_free_node(void)
{
	struct inventory *inv = load(two_halves);
	struct host_facts idle, busy1, drained;
	struct solve_result res;
	slurm_facts_of("22.05-idle.probe", &idle);
	slurm_facts_of("22.05-job-2gpu-node1.probe", &busy1);
	slurm_facts_of("22.05-job-2gpu-node1-node2-drained.probe", &drained);

	/* offline: the first host */
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, NULL, 0, &res), "half1");
	solve_result_release(&res);

	/* all idle: still the first */
	struct solve_live l_idle[] = { { "half1", &idle, NULL }, { "half2", &idle, NULL } };
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, l_idle, 2, &res), "half1");
	CHECK_CONTAINS(reason_for(&res, "half1"), "fits now: node1 has 2 free a100 GPUs on partition gpu");
	solve_result_release(&res);

	/* node1's GPUs taken: the other half */
	struct solve_live l_busy[] = { { "half1", &busy1, NULL }, { "half2", &busy1, NULL } };
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, l_busy, 2, &res), "half2");
	CHECK_STR(res.partition, "gpu");
	CHECK_STR(res.gres_type, "a100");
	CHECK(!res.fallback);
	CHECK_CONTAINS(reason_for(&res, "half1"), "busy now: no node with 2 free a100 GPUs");
	CHECK_CONTAINS(reason_for(&res, "half2"), "node2 has 2 free");
	solve_result_release(&res);

	/* any GPU: the same */
	CHECK_STR(pick(inv, NULL, 1, l_busy, 2, &res), "half2");
	solve_result_release(&res);

	/* node2 drained too: nothing free; the fallback is the host whose usable
	 * node has the GPUs (half1; half2's only node is drained) */
	struct solve_live l_dr[] = { { "half1", &drained, NULL }, { "half2", &drained, NULL } };
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, l_dr, 2, &res), "half1");
	CHECK(res.fallback);
	CHECK_STR(res.partition, "gpu");
	CHECK_CONTAINS(reason_for(&res, "half2"), "partition gpu has no node taking jobs");
	solve_result_release(&res);

	/* more than any node has: no fallback at all */
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 3, l_idle, 2, &res), "-");
	CHECK(!res.fallback);
	solve_result_release(&res);

	/* unreachable: skipped with the note; a host not asked is skipped too */
	struct solve_live l_down[] = { { "half1", NULL, "cannot connect to 'hpc': Connection refused" },
				       { "half2", &busy1, NULL } };
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 1, l_down, 2, &res), "half2");
	CHECK_STR(reason_for(&res, "half1"), "skipped: cannot connect to 'hpc': Connection refused");
	solve_result_release(&res);
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 1, l_down, 1, &res), "-");
	CHECK_STR(reason_for(&res, "half2"), "skipped: not asked");
	solve_result_release(&res);

	host_facts_release(&idle);
	host_facts_release(&busy1);
	host_facts_release(&drained);
	inventory_free(inv);
}

static void test_slurm_partitions(void)
{
	struct inventory *inv = load(
		"gres_mapping: {a100-sxm4-80gb: a100, v100-32gb: v100}\n"
		"clusters: {c: {root: /r, work: /w}}\n"
		"hosts:\n"
		"  big: {ssh: big, cluster: c, type: slurm, partitions: [a100, mixed], cpu_partitions: [cpu]}\n"
		"  dflt: {ssh: big, cluster: c, type: slurm}\n");
	struct host_facts f;
	struct solve_result res;
	slurm_facts_of("23.11-handwritten-multi-type.probe", &f);
	struct solve_live live[] = { { "big", &f, NULL }, { "dflt", &f, NULL } };

	/* partition a100 has one free (gpu01), mixed two on gpu05: the second partition */
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, live, 2, &res), "big");
	CHECK_STR(res.partition, "mixed");
	CHECK_CONTAINS(reason_for(&res, "big"), "gpu05 has 2 free a100 GPUs on partition mixed");
	solve_result_release(&res);
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 1, live, 2, &res), "big");
	CHECK_STR(res.partition, "a100");
	solve_result_release(&res);

	/* v100: gpu05's two are in use; the fallback is big (its only node with v100) */
	CHECK_STR(pick(inv, "v100-32gb", 2, live, 2, &res), "big");
	CHECK(res.fallback);
	CHECK_STR(res.partition, "mixed");
	solve_result_release(&res);

	/* any GPU, 3: gpu06's untyped gpu:4 with one used (powered down, usable) */
	CHECK_STR(pick(inv, NULL, 3, live, 2, &res), "big");
	CHECK_STR(res.partition, "mixed");
	CHECK_CONTAINS(reason_for(&res, "big"), "gpu06 has 3 free");
	solve_result_release(&res);

	/* a CPU job: cpu is DRAIN; the host without partitions uses the default (a100) */
	CHECK_STR(pick(inv, NULL, 0, live, 2, &res), "dflt");
	CHECK_CONTAINS(reason_for(&res, "big"), "partition cpu is DRAIN");
	CHECK_CONTAINS(reason_for(&res, "dflt"), "gpu01 has 16 free CPUs on partition a100");
	CHECK_STR(res.partition, "a100");
	solve_result_release(&res);

	host_facts_release(&f);
	inventory_free(inv);
}

static void test_plain(void)
{
	struct inventory *inv = load(
		"clusters: {c: {root: /r, work: /w}}\n"
		"hosts:\n"
		"  dgx: {ssh: dgx, cluster: c, type: plain, chips: {a100-sxm4-80gb: 8}}\n"
		"  spare: {ssh: spare, cluster: c, type: plain, chips: {a100-sxm4-80gb: 8}}\n"
		"  nosmi: {ssh: nosmi, cluster: c, type: plain, chips: {a100-sxm4-80gb: 8}}\n"
		"  cpubox: {ssh: cpubox, cluster: c, type: plain, chips: {}}\n");
	struct host_facts dgx, spare, nosmi, cpubox;
	struct solve_result res;
	gpu_facts_of("nvidia-smi/dgx-a100-80gb-3-busy.gpus", "nvidia-smi/dgx-a100-80gb-3-busy.apps", &dgx);
	gpu_facts_of("nvidia-smi/dgx-a100-80gb-3-busy.gpus", NULL, &spare);
	gpu_facts_of(NULL, NULL, &nosmi);
	gpu_facts_of(NULL, NULL, &cpubox);
	struct solve_live live[] = { { "dgx", &dgx, NULL }, { "spare", &spare, NULL },
				     { "nosmi", &nosmi, NULL }, { "cpubox", &cpubox, NULL } };

	/* 5 of 8 free on dgx (GPU 3's 42 MiB process does not count) */
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 5, live, 4, &res), "dgx");
	CHECK_CONTAINS(reason_for(&res, "dgx"), "fits now: 5 of its 8 a100-sxm4-80gb free (GPU 2,3,5,6,7)");
	solve_result_release(&res);
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 6, live, 4, &res), "spare");
	CHECK_CONTAINS(reason_for(&res, "dgx"), "busy now: 5 of 8 a100-sxm4-80gb free, needs 6");
	CHECK(!res.fallback);
	solve_result_release(&res);
	CHECK_STR(pick(inv, NULL, 8, live, 4, &res), "spare");
	solve_result_release(&res);

	/* a sweep's hosts: every plain host that fits, the most free GPUs first (spare's
	 * 8 before dgx's 5, though dgx comes first in the inventory) */
	const struct inv_host **hosts;
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, live, 4, &res), "dgx");
	CHECK_INT(solve_plain_hosts(&res, &hosts), 2);
	CHECK_STR(hosts[0]->name, "spare");
	CHECK_STR(hosts[1]->name, "dgx");
	free(hosts);
	solve_result_release(&res);
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 6, live, 4, &res), "spare");
	CHECK_INT(solve_plain_hosts(&res, &hosts), 1);
	CHECK_STR(hosts[0]->name, "spare");
	free(hosts);
	solve_result_release(&res);

	/* no nvidia-smi on a GPU host: not taken on trust; plain hosts are no fallback */
	struct solve_live only[] = { { "dgx", &dgx, NULL }, { "nosmi", &nosmi, NULL } };
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 6, only, 2, &res), "-");
	CHECK_CONTAINS(reason_for(&res, "nosmi"), "no nvidia-smi on the host");
	CHECK(!res.fallback);
	solve_result_release(&res);

	/* a CPU job: the CPU-only box that answered */
	CHECK_STR(pick(inv, NULL, 0, live, 4, &res), "cpubox");
	solve_result_release(&res);

	/* an unknown GPU name counts as the host's only chip */
	struct host_facts odd = { .gpu_tool = true };
	struct dp_error err;
	CHECK_INT(nvidia_smi_parse("GPU-a, NVIDIA A100-SXM4-80GB, 81920\nGPU-b, NVIDIA Some Future GPU, 81920\n",
				   "", &odd.gpus, &err), 0);
	struct solve_live l_odd[] = { { "dgx", &odd, NULL } };
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, l_odd, 1, &res), "dgx");
	solve_result_release(&res);
	host_facts_release(&odd);

	host_facts_release(&dgx);
	host_facts_release(&spare);
	host_facts_release(&nosmi);
	host_facts_release(&cpubox);
	inventory_free(inv);
}

int main(void)
{
	test_slurm_moves_to_free_node();
	test_slurm_partitions();
	test_plain();
	return unit_done();
}
