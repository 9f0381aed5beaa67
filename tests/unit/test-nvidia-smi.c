/* SPDX-License-Identifier: MIT */
/* nvidia-smi parsing, busy GPUs and product names to catalogue chips (lib/gpu/nvidia_smi.h). */
#include "inventory/chips.h"
#include "gpu/nvidia_smi.h"
#include "unit.h"

static char *fixture(const char *name)
{
	return unit_fixture("nvidia-smi", name);
}

static void test_names(void)
{
	static const struct {
		const char *name;
		long mib;
		const char *chip;
	} cases[] = {
		{ "NVIDIA A100-SXM4-80GB", 81920, "a100-sxm4-80gb" },
		{ "NVIDIA A100-SXM4-40GB", 40960, "a100-sxm4-40gb" },
		{ "NVIDIA A100-PCIE-40GB", 40960, "a100-pcie-40gb" },
		{ "NVIDIA A100 80GB PCIe", 81920, "a100-pcie-80gb" },
		/* the name says 80GB, memory decides */
		{ "NVIDIA A100-SXM-80GB", 81920, "a100-sxm4-80gb" },
		/* names without the size, or with the wrong one: memory decides */
		{ "NVIDIA A100-SXM4", 81920, "a100-sxm4-80gb" },
		{ "NVIDIA A100-SXM4", 40960, "a100-sxm4-40gb" },
		{ "NVIDIA A100-SXM4-40GB", 81920, "a100-sxm4-80gb" },
		{ "NVIDIA A100-PCIE-80GB", 40536, "a100-pcie-40gb" },
		{ "NVIDIA A100-SXM4-40GB", -1, "a100-sxm4-40gb" },
		{ "NVIDIA A100-SXM4-80GB", -1, "a100-sxm4-80gb" },
		{ "NVIDIA H100 80GB HBM3", 81559, "h100" },
		{ "NVIDIA H100 PCIe", 81559, "h100-pcie" },
		{ "NVIDIA H100 NVL", 95830, "h100-nvl" },
		{ "NVIDIA H200", 143771, "h200" },
		{ "NVIDIA GH200 480GB", 97871, "gh200" },
		{ "NVIDIA B200", 183359, "b200" },
		{ "NVIDIA L40S", 46068, "l40s" },
		{ "NVIDIA L40", 46068, "l40" },
		{ "NVIDIA L4", 23034, "l4" },
		{ "NVIDIA A10G", 23028, "a10g" },
		{ "NVIDIA A10", 23028, "a10" },
		{ "NVIDIA A40", 46068, "a40" },
		{ "NVIDIA A30", 24576, "a30" },
		{ "Tesla T4", 15360, "t4" },
		{ "Tesla V100-SXM2-32GB", 32768, "v100-32gb" },
		{ "Tesla V100-PCIE-16GB", 16384, "v100-16gb" },
		{ "Tesla P100-PCIE-16GB", 16384, "p100" },
		{ "NVIDIA GeForce RTX 4090", 24564, "rtx-4090" },
		{ "NVIDIA GeForce RTX 3090", 24576, "rtx-3090" },
		{ "NVIDIA GeForce RTX 5090", 32607, "rtx-5090" },
		{ "NVIDIA RTX A6000", 49140, "rtx-a6000" },
		{ "NVIDIA RTX 6000 Ada Generation", 49140, "rtx-6000-ada" },
		{ "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887, "rtx-pro-6000" },
		{ "NVIDIA GeForce RTX 3090 Ti", 24564, NULL },
		{ "NVIDIA GeForce RTX 4080 SUPER", 16376, NULL },
		{ "NVIDIA GeForce GTX 1080 Ti", 11264, NULL },
		{ "NVIDIA H800", 81559, NULL },
		{ "", 0, NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = nvidia_smi_chip(cases[i].name, cases[i].mib);
		if (cases[i].chip) {
			CHECK_STR(got, cases[i].chip);
			CHECK(chip_find(cases[i].chip) != NULL);
		} else {
			CHECK(got == NULL);
			if (got)
				printf("#   '%s' gave '%s'\n", cases[i].name, got);
		}
	}
}

static void test_dgx(void)
{
	_cleanup_free_ char *gpus = fixture("dgx-a100-80gb-3-busy.gpus");
	_cleanup_free_ char *apps = fixture("dgx-a100-80gb-3-busy.apps");
	struct nvidia_gpus g;
	struct dp_error err;
	CHECK_INT(nvidia_smi_parse(gpus, apps, &g, &err), 0);
	CHECK_INT(g.n, 8);
	if (g.n != 8)
		return;
	for (size_t i = 0; i < g.n; i++) {
		CHECK_STR(g.gpus[i].chip, "a100-sxm4-80gb");
		CHECK_INT(g.gpus[i].index, (long)i);
		CHECK_INT(g.gpus[i].memory_mib, 81920);
	}
	CHECK_STR(g.gpus[0].uuid, "GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91");
	CHECK_STR(g.gpus[0].name, "NVIDIA A100-SXM4-80GB");
	CHECK(g.gpus[0].busy && g.gpus[0].processes == 2 && g.gpus[0].used_mib == 40833);
	CHECK(g.gpus[1].busy && g.gpus[1].used_mib == 78012);
	CHECK(!g.gpus[2].busy && g.gpus[2].processes == 0 && g.gpus[2].used_mib == 0);
	/* 42 MiB: a process, but not busy */
	CHECK(!g.gpus[3].busy && g.gpus[3].processes == 1);
	/* [N/A]: busy, amount unknown */
	CHECK(g.gpus[4].busy && g.gpus[4].used_mib == -1);
	size_t busy = 0;
	for (size_t i = 0; i < g.n; i++)
		busy += g.gpus[i].busy;
	CHECK_INT(busy, 3);
	/* a host's busy_gpu_memory: 1 GiB leaves GPU 0 (a 40321 MiB process) busy, GPU 3
	 * (42 MiB) free; 40 MiB makes GPU 3 busy; unknown amounts and leases stay busy */
	g.gpus[2].leased = true;
	nvidia_gpus_busy_at(&g, 1024);
	CHECK(g.gpus[0].busy && g.gpus[1].busy && g.gpus[2].busy && !g.gpus[3].busy && g.gpus[4].busy);
	CHECK(!g.gpus[5].busy && g.gpus[0].max_proc_mib == 40321);
	nvidia_gpus_busy_at(&g, 40);
	CHECK(g.gpus[3].busy);
	nvidia_gpus_busy_at(&g, 50000);
	CHECK(!g.gpus[0].busy && g.gpus[1].busy && g.gpus[4].busy);
	nvidia_gpus_busy_at(&g, 0); /* the default: as parsed */
	CHECK(g.gpus[0].busy && !g.gpus[3].busy);
	nvidia_gpus_release(&g);

	/* the threshold: a process of 100 MiB makes its GPU busy, one of 99 does not */
	static const char two[] = "GPU-a, NVIDIA A100-SXM4-80GB, 81920\nGPU-b, NVIDIA A100-SXM4-80GB, 81920\n";
	CHECK_INT(nvidia_smi_parse(two, "GPU-a, 99\nGPU-b, 100\n", &g, &err), 0);
	CHECK(g.n == 2 && !g.gpus[0].busy && g.gpus[1].busy);
	nvidia_gpus_release(&g);

	/* no compute apps at all */
	CHECK_INT(nvidia_smi_parse(gpus, "", &g, &err), 0);
	CHECK(g.n == 8 && !g.gpus[0].busy);
	nvidia_gpus_release(&g);
}

/* Captured on a real H200 (driver 580.159.04, bench/gpu-capture.sh): idle, then with
 * a PyTorch process holding 1130 MiB. */
static void test_h200(void)
{
	_cleanup_free_ char *gpus = fixture("h200-driver580.gpus");
	_cleanup_free_ char *apps = fixture("h200-driver580-busy.apps");
	struct nvidia_gpus g;
	struct dp_error err;
	CHECK_INT(nvidia_smi_parse(gpus, "", &g, &err), 0);
	CHECK_INT((int)g.n, 1);
	CHECK_STR(g.gpus[0].chip, "h200");
	CHECK_STR(g.gpus[0].name, "NVIDIA H200");
	CHECK_INT(g.gpus[0].memory_mib, 143771);
	CHECK(!g.gpus[0].busy && g.gpus[0].processes == 0);
	nvidia_gpus_release(&g);
	CHECK_INT(nvidia_smi_parse(gpus, apps, &g, &err), 0);
	CHECK(g.gpus[0].busy && g.gpus[0].processes == 1 && g.gpus[0].used_mib == 1130);
	nvidia_gpus_release(&g);
}

static void test_many(void)
{
	_cleanup_free_ char *gpus = fixture("many-models.gpus");
	struct nvidia_gpus g;
	struct dp_error err;
	CHECK_INT(nvidia_smi_parse(gpus, NULL, &g, &err), 0);
	CHECK_INT(g.n, 24);
	size_t unmapped = 0;
	for (size_t i = 0; i < g.n; i++)
		if (!g.gpus[i].chip)
			unmapped++;
	CHECK_INT(unmapped, 2);
	if (g.n == 24) {
		CHECK_STR(g.gpus[12].chip, "l40s");
		CHECK_STR(g.gpus[13].chip, "l40");
		CHECK_STR(g.gpus[14].chip, "l4");
	}
	nvidia_gpus_release(&g);
}

static void test_errors(void)
{
	struct nvidia_gpus g;
	struct dp_error err;
	CHECK_INT(nvidia_smi_parse("No devices were found\n", NULL, &g, &err), -1);
	CHECK_CONTAINS(err.msg, "'No devices were found'");
	CHECK_INT(nvidia_smi_parse("GPU-1, NVIDIA L4, [N/A]\n\n", "GPU-9, 4000\nnonsense\n", &g, &err), 0);
	CHECK(g.n == 1 && g.gpus[0].memory_mib == -1 && streq(g.gpus[0].chip, "l4") && !g.gpus[0].busy);
	nvidia_gpus_release(&g);
}

int main(void)
{
	test_h200();
	test_names();
	test_dgx();
	test_many();
	test_errors();
	return unit_done();
}
