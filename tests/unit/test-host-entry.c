/* SPDX-License-Identifier: MIT */
/* lib/host_entry: the inventory entry `hosts discover` writes, from captured facts:
 * the test cluster idle (22.05, gpu:a100 on two nodes, partitions gpu and cpu), the
 * handwritten 23.11 probe (several GRES types, untyped GPUs, a drained partition),
 * nvidia-smi on a DGX and on a box of models outside the catalogue, and a host with
 * SLURM's client but no cluster. The YAML is checked whole, and parsed back as an
 * inventory where it claims to be ready to paste. */
#include <stdlib.h>

#include "host_entry.h"
#include "inventory/inventory.h"
#include "unit.h"

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
	char *path = xasprintf("scontrol/%s", probe);
	char *text = unit_fixture("slurm", path);
	struct dp_error err;
	if (host_facts_parse(text, "", HOST_FACTS_AUTO, f, &err) < 0)
		printf("# %s\n", err.msg);
	free(text);
	free(path);
}

static void gpu_facts_of(const char *gpus, const char *apps, struct host_facts *f)
{
	char *g = unit_fixture("nvidia-smi", gpus);
	char *a = apps ? unit_fixture("nvidia-smi", apps) : NULL;
	struct dp_error err;
	memset(f, 0, sizeof(*f));
	f->gpu_tool = true;
	if (nvidia_smi_parse(g, a, &f->gpus, &err) < 0)
		printf("# %s\n", err.msg);
	free(g);
	free(a);
}

/* The entry, pasted under hosts: of an inventory with its cluster, parses. */
static void check_pastes(const struct host_entry *e, const char *mapping)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "gres_mapping: {%s}\nclusters: {%s: {root: /r, work: /w}}\nhosts:\n",
		    mapping, e->cluster ? e->cluster : "CLUSTER");
	for (const char *line = e->yaml.buf; *line;) {
		size_t len = strcspn(line, "\n");
		strbuf_addf(&sb, "  %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
	struct inventory *inv = load(sb.buf);
	CHECK(inv != NULL);
	const struct inv_host *h = inv ? inventory_host(inv, e->name) : NULL;
	CHECK(h != NULL);
	if (h)
		CHECK_STR(inv_host_type_name(h->type), e->type);
	inventory_free(inv);
	strbuf_release(&sb);
}

static void test_slurm_idle(void)
{
	struct inventory *inv = load("gres_mapping: {a100-sxm4-80gb: a100}\n"
				     "clusters: {tb: {root: /r, work: /w}}\n"
				     "hosts: {}\n");
	struct host_facts f;
	struct host_entry e;
	slurm_facts_of("22.05-idle.probe", &f);
	CHECK(f.slurm);
	host_entry_make(inv, "root@hpc:2222", &f, &e);
	CHECK_STR(e.name, "hpc");
	CHECK_STR(e.ssh, "root@hpc:2222");
	CHECK_STR(e.type, "slurm");
	CHECK_STR(e.cluster, "tb"); /* the only cluster */
	CHECK_STR(e.yaml.buf,
		  "# dispatch hosts discover root@hpc:2222: SLURM 22.05.8, 2 partitions, 2 nodes\n"
		  "hpc:\n"
		  "  ssh: \"root@hpc:2222\"\n"
		  "  cluster: tb\n"
		  "  type: slurm\n"
		  "  partitions:\n"
		  "    - {name: gpu, default: true}    # 2 nodes, GPUs: 4 a100\n"
		  "    - cpu    # 2 nodes, GPUs: 4 a100\n" /* the same nodes: their GPUs too */
		  "  chips:    # the cluster's GPUs: a limit, lower it to cap your use\n"
		  "    a100-sxm4-80gb: 4    # gres type a100\n");
	CHECK_INT(e.npartitions, 2);
	CHECK(e.npartitions == 2 && e.partitions[0].is_default && e.partitions[0].ngpus == 1 &&
	      streq(e.partitions[0].gpus[0].type, "a100") && e.partitions[0].gpus[0].total == 4 &&
	      !e.partitions[1].is_default && streq(e.partitions[1].name, "cpu"));
	CHECK(e.cpu_partitions == NULL);
	CHECK(e.nchips == 1 && streq(e.chips[0].chip, "a100-sxm4-80gb") && e.chips[0].count == 4);
	CHECK_INT(e.nunmapped, 0);
	check_pastes(&e, "a100-sxm4-80gb: a100");
	host_entry_release(&e);

	/* No inventory: no gres_mapping, no cluster to name */
	host_entry_make(NULL, "hpc", &f, &e);
	CHECK(e.cluster == NULL);
	CHECK_CONTAINS(e.yaml.buf, "  cluster: CLUSTER    # the name of its entry under clusters:\n");
	CHECK_CONTAINS(e.yaml.buf, "  # gres type 'a100' (4 GPUs) has no gres_mapping: add 'CHIP: a100' under gres_mapping:");
	CHECK(!strstr(e.yaml.buf, "chips:"));
	CHECK(e.nunmapped == 1 && streq(e.unmapped[0].gres_type, "a100") && e.unmapped[0].count == 4);
	host_entry_release(&e);
	host_facts_release(&f);
	inventory_free(inv);
}

static void test_slurm_multi_type(void)
{
	struct inventory *inv = load("gres_mapping: {a100-sxm4-80gb: a100}\n"
				     "clusters: {c1: {root: /r, work: /w}, c2: {root: /r, work: /w}}\n"
				     "hosts: {login: {ssh: login, cluster: c2, type: slurm}}\n");
	struct host_facts f;
	struct host_entry e;
	slurm_facts_of("23.11-handwritten-multi-type.probe", &f);
	host_entry_make(inv, "login", &f, &e);
	CHECK_STR(e.cluster, "c2"); /* the inventory's host */
	CHECK_CONTAINS(e.yaml.buf, "    - {name: a100, default: true}    # 4 nodes, GPUs:");
	CHECK_CONTAINS(e.yaml.buf, "  chips:    # the cluster's GPUs");
	CHECK_CONTAINS(e.yaml.buf, "    a100-sxm4-80gb: ");
	CHECK_CONTAINS(e.yaml.buf, " untyped GPUs (gpu:N): only jobs for any GPU go there\n");
	CHECK(e.nunmapped >= 2);
	bool untyped = false;
	for (size_t i = 0; i < e.nunmapped; i++)
		untyped = untyped || e.unmapped[i].gres_type == NULL;
	CHECK(untyped);
	/* every partition is either a GPU one or a CPU one */
	CHECK_INT(e.npartitions + strv_len(e.cpu_partitions), f.sl.npartitions);
	check_pastes(&e, "a100-sxm4-80gb: a100");
	host_entry_release(&e);
	host_facts_release(&f);
	inventory_free(inv);
}

static void test_plain(void)
{
	struct host_facts f;
	struct host_entry e;
	gpu_facts_of("dgx-a100-80gb-3-busy.gpus", "dgx-a100-80gb-3-busy.apps", &f);
	host_entry_make(NULL, "dgx1", &f, &e);
	CHECK_STR(e.type, "plain");
	CHECK_STR(e.yaml.buf,
		  "# dispatch hosts discover dgx1: nvidia-smi, 8 GPUs\n"
		  "dgx1:\n"
		  "  ssh: dgx1\n"
		  "  cluster: CLUSTER    # the name of its entry under clusters:\n"
		  "  type: plain\n"
		  "  chips:\n"
		  "    a100-sxm4-80gb: 8    # NVIDIA A100-SXM4-80GB, 81920 MiB\n");
	CHECK(e.nchips == 1 && e.chips[0].count == 8);
	CHECK(e.npartitions == 0 && e.cpu_partitions == NULL && e.nunmapped == 0);
	check_pastes(&e, "");
	host_entry_release(&e);
	host_facts_release(&f);

	/* models outside the catalogue: comments, and unmapped with name and memory */
	gpu_facts_of("many-models.gpus", NULL, &f);
	host_entry_make(NULL, "zoo", &f, &e);
	CHECK(e.nchips + e.nunmapped >= 2);
	for (size_t i = 0; i < e.nunmapped; i++) {
		CHECK(e.unmapped[i].name && e.unmapped[i].gres_type == NULL);
		_cleanup_free_ char *note = xasprintf("  # %d x '%s' (%ld MiB): not in the chip catalogue\n",
						      e.unmapped[i].count, e.unmapped[i].name,
						      e.unmapped[i].memory_mib);
		CHECK_CONTAINS(e.yaml.buf, note);
	}
	check_pastes(&e, "");
	host_entry_release(&e);
	host_facts_release(&f);

	/* no GPU tool at all, SLURM's client without a cluster */
	slurm_facts_of("22.05-client-without-cluster.probe", &f);
	CHECK(!f.slurm && f.slurm_error);
	host_entry_make(NULL, "box1", &f, &e);
	CHECK_STR(e.yaml.buf,
		  "# dispatch hosts discover box1: no nvidia-smi, no SLURM (sbatch is installed, but scontrol fails)\n"
		  "box1:\n"
		  "  ssh: box1\n"
		  "  cluster: CLUSTER    # the name of its entry under clusters:\n"
		  "  type: plain\n"
		  "  chips: {}    # no nvidia-smi on the host: a CPU-only host\n");
	check_pastes(&e, "");
	host_entry_release(&e);
	host_facts_release(&f);
}

int main(void)
{
	test_slurm_idle();
	test_slurm_multi_type();
	test_plain();
	return unit_done();
}
