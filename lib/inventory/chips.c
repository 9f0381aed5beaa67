/* SPDX-License-Identifier: MIT */
/*
 * The chip catalogue. Names are what `nvidia-smi`/`rocm-smi` users say, lower case,
 * with the form factor and memory where a model comes in several (a100-sxm4-80gb).
 * Memory is per device, in GB as the vendor sells it.
 */
#include <strings.h>

#include "inventory/chips.h"
#include "base/strbuf.h"
#include "base/util.h"

const struct chip chip_catalogue[] = {
	/* NVIDIA data centre */
	{ "b200", "NVIDIA B200", 180 },
	{ "gb200", "NVIDIA GB200", 186 },
	{ "h200", "NVIDIA H200 141GB", 141 },
	{ "gh200", "NVIDIA GH200 96GB", 96 },
	{ "h100", "NVIDIA H100 80GB (SXM5)", 80 },
	{ "h100-pcie", "NVIDIA H100 80GB PCIe", 80 },
	{ "h100-nvl", "NVIDIA H100 NVL 94GB", 94 },
	{ "a100-sxm4-80gb", "NVIDIA A100 80GB SXM4", 80 },
	{ "a100-sxm4-40gb", "NVIDIA A100 40GB SXM4", 40 },
	{ "a100-pcie-80gb", "NVIDIA A100 80GB PCIe", 80 },
	{ "a100-pcie-40gb", "NVIDIA A100 40GB PCIe", 40 },
	{ "a40", "NVIDIA A40", 48 },
	{ "a30", "NVIDIA A30", 24 },
	{ "a10", "NVIDIA A10", 24 },
	{ "a10g", "NVIDIA A10G", 24 },
	{ "l40s", "NVIDIA L40S", 48 },
	{ "l40", "NVIDIA L40", 48 },
	{ "l4", "NVIDIA L4", 24 },
	{ "t4", "NVIDIA T4", 16 },
	{ "v100-32gb", "NVIDIA V100 32GB", 32 },
	{ "v100-16gb", "NVIDIA V100 16GB", 16 },
	{ "p100", "NVIDIA P100 16GB", 16 },
	{ "gb10", "NVIDIA GB10 (DGX Spark, unified memory)", 128 },
	{ "drive-pg199", "NVIDIA DRIVE PG199", 32 },
	/* NVIDIA workstation and consumer */
	{ "rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell", 96 },
	{ "rtx-6000-ada", "NVIDIA RTX 6000 Ada Generation", 48 },
	{ "rtx-a6000", "NVIDIA RTX A6000", 48 },
	{ "rtx-a5000", "NVIDIA RTX A5000", 24 },
	{ "rtx-a4000", "NVIDIA RTX A4000", 16 },
	{ "rtx-5090", "NVIDIA GeForce RTX 5090", 32 },
	{ "rtx-4090", "NVIDIA GeForce RTX 4090", 24 },
	{ "rtx-3090", "NVIDIA GeForce RTX 3090", 24 },
	/* AMD Instinct */
	{ "mi325x", "AMD Instinct MI325X", 256 },
	{ "mi300x", "AMD Instinct MI300X", 192 },
	{ "mi250x", "AMD Instinct MI250X", 128 },
	{ "mi250", "AMD Instinct MI250", 128 },
	{ "mi210", "AMD Instinct MI210", 64 },
	{ "mi100", "AMD Instinct MI100", 32 },
};
const size_t chip_catalogue_len = ARRAY_SIZE(chip_catalogue);

const char chip_complete_words[] =
	"words:b200 gb200 h200 gh200 h100 h100-pcie h100-nvl a100-sxm4-80gb a100-sxm4-40gb "
	"a100-pcie-80gb a100-pcie-40gb a40 a30 a10 a10g l40s l40 l4 t4 v100-32gb v100-16gb "
	"p100 gb10 drive-pg199 rtx-pro-6000 rtx-6000-ada rtx-a6000 rtx-a5000 rtx-a4000 rtx-5090 rtx-4090 "
	"rtx-3090 mi325x mi300x mi250x mi250 mi210 mi100";

/* The reference's own spellings of catalogue chips (its SUPPORTED_CHIPS keys), so
 * that its inventories load unchanged. */
static const struct {
	const char *alias, *name;
} chip_aliases[] = {
	{ "rtx5090", "rtx-5090" },
	{ "a6000", "rtx-a6000" },
	{ "ada6000", "rtx-6000-ada" },
};

const struct chip *chip_find(const char *name)
{
	for (size_t i = 0; name && i < chip_catalogue_len; i++)
		if (strcasecmp(chip_catalogue[i].name, name) == 0)
			return &chip_catalogue[i];
	for (size_t i = 0; name && i < ARRAY_SIZE(chip_aliases); i++)
		if (strcasecmp(chip_aliases[i].alias, name) == 0)
			return chip_find(chip_aliases[i].name);
	return NULL;
}

bool chip_is_tpu(const char *name)
{
	return name && strncasecmp(name, "tpu-", 4) == 0;
}

const char *chip_family(const char *name, char *buf, size_t n)
{
	size_t len = strcspn(name, "-");
	if (len >= n)
		len = n - 1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return buf;
}

const char *chip_suggestion(const char *name)
{
	static char out[512];
	struct strbuf sb = STRBUF_INIT;
	size_t matches = 0, len = strlen(name);

	/* "a100" names a family: list the chips that start with it. */
	for (size_t i = 0; len > 0 && i < chip_catalogue_len; i++) {
		if (strncasecmp(chip_catalogue[i].name, name, len) != 0)
			continue;
		strbuf_addf(&sb, "%s%s", matches ? ", " : "", chip_catalogue[i].name);
		matches++;
	}
	if (matches == 1) {
		snprintf(out, sizeof(out), " (did you mean '%s'?)", sb.buf);
	} else if (matches > 1) {
		snprintf(out, sizeof(out), " (did you mean one of: %s?)", sb.buf);
	} else {
		const char *names[ARRAY_SIZE(chip_catalogue)];
		for (size_t i = 0; i < chip_catalogue_len; i++)
			names[i] = chip_catalogue[i].name;
		const char *guess = suggest_word(name, names, chip_catalogue_len);
		if (guess)
			snprintf(out, sizeof(out), " (did you mean '%s'?)", guess);
		else
			out[0] = '\0';
	}
	strbuf_release(&sb);
	return out;
}
