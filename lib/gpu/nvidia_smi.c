/* SPDX-License-Identifier: MIT */
/* nvidia-smi --query-gpu / --query-compute-apps parsing and name mapping: nvidia_smi.h. */
#include <ctype.h>
#include <strings.h>

#include "inventory/chips.h"
#include "gpu/nvidia_smi.h"
#include "base/strbuf.h"
#include "base/util.h"

/* Product names by words: the first rule whose words appear in a row wins. chip
 * "a100" and "v100" are resolved by form and memory below. */
static const struct {
	const char *words;
	const char *chip;
} rules[] = {
	{ "GH200", "gh200" },
	{ "GB200", "gb200" },
	{ "B200", "b200" },
	{ "H200", "h200" },
	{ "H100 NVL", "h100-nvl" },
	{ "H100 PCIe", "h100-pcie" },
	{ "H100", "h100" },
	{ "A100", "a100" },
	{ "A40", "a40" },
	{ "A30", "a30" },
	{ "A10G", "a10g" },
	{ "A10", "a10" },
	{ "L40S", "l40s" },
	{ "L40", "l40" },
	{ "L4", "l4" },
	{ "T4", "t4" },
	{ "V100", "v100" },
	{ "P100", "p100" },
	{ "RTX PRO 6000", "rtx-pro-6000" },
	{ "RTX 6000 Ada", "rtx-6000-ada" },
	{ "RTX A6000", "rtx-a6000" },
	{ "RTX A5000", "rtx-a5000" },
	{ "RTX A4000", "rtx-a4000" },
	{ "RTX 5090", "rtx-5090" },
	{ "RTX 4090", "rtx-4090" },
	{ "RTX 3090", "rtx-3090" },
};

/* Splits at blanks and '-' into at most max words. */
static size_t words_of(const char *s, char *buf, size_t size, char **w, size_t max)
{
	size_t n = 0;
	snprintf(buf, size, "%s", s);
	for (char *p = buf; *p && n < max;) {
		while (*p == ' ' || *p == '-' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		w[n++] = p;
		while (*p && *p != ' ' && *p != '-' && *p != '\t')
			p++;
	}
	return n;
}

static bool has_word(char **w, size_t n, const char *word)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(w[i], word) == 0)
			return true;
	return false;
}

/* Index just past the rule's words in w, or 0 when they do not appear in a row. */
static size_t match_rule(char **w, size_t n, const char *words)
{
	char buf[64], *r[8];
	size_t nr = words_of(words, buf, sizeof(buf), r, 8);
	for (size_t i = 0; i + nr <= n; i++) {
		size_t k = 0;
		while (k < nr && strcasecmp(w[i + k], r[k]) == 0)
			k++;
		if (k == nr)
			return i + nr;
	}
	return 0;
}

const char *nvidia_smi_chip(const char *name, long memory_mib)
{
	char buf[256], *w[32];
	size_t n = words_of(name, buf, sizeof(buf), w, 32);
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		size_t end = match_rule(w, n, rules[i].words);
		if (!end)
			continue;
		if (end < n && (strcasecmp(w[end], "Ti") == 0 || strcasecmp(w[end], "SUPER") == 0))
			return NULL;
		const char *chip = rules[i].chip;
		if (streq(chip, "a100")) {
			bool pcie = has_word(w, n, "PCIe");
			bool big = memory_mib > 0 ? memory_mib > 60000 : has_word(w, n, "80GB");
			chip = pcie ? (big ? "a100-pcie-80gb" : "a100-pcie-40gb")
				    : (big ? "a100-sxm4-80gb" : "a100-sxm4-40gb");
		} else if (streq(chip, "v100")) {
			bool big = memory_mib > 0 ? memory_mib > 24000 : has_word(w, n, "32GB");
			chip = big ? "v100-32gb" : "v100-16gb";
		}
		const struct chip *c = chip_find(chip);
		return c ? c->name : NULL;
	}
	return NULL;
}

static char *trim(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return xstrndup(s, len);
}

/* Splits a CSV line at commas into at most max trimmed fields; the count. */
static size_t csv_fields(const char *line, char **f, size_t max)
{
	size_t n = 0;
	const char *p = line;
	for (;;) {
		size_t len = strcspn(p, ",");
		if (n < max)
			f[n] = trim(p, len);
		n++;
		p += len;
		if (*p != ',')
			break;
		p++;
	}
	return n;
}

static void free_fields(char **f, size_t n, size_t max)
{
	for (size_t i = 0; i < n && i < max; i++)
		free(f[i]);
}

static bool parse_mib(const char *s, long *out)
{
	return parse_long(s, 0, 1L << 40, out);
}

static bool blank_line(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

int nvidia_smi_parse(const char *gpus, const char *apps, struct nvidia_gpus *out,
		     struct dp_error *err)
{
	memset(out, 0, sizeof(*out));
	for (const char *p = gpus; p && *p;) {
		size_t len = strcspn(p, "\n");
		if (!blank_line(p, len)) {
			_cleanup_free_ char *line = xstrndup(p, len);
			char *f[3];
			size_t nf = csv_fields(line, f, 3);
			if (nf != 3) {
				free_fields(f, nf, 3);
				nvidia_gpus_release(out);
				return dp_err(err, DPE_INPUT, "unexpected nvidia-smi line '%s'", line);
			}
			struct nvidia_gpu g = { .index = (int)out->n, .uuid = f[0], .name = f[1] };
			if (!parse_mib(f[2], &g.memory_mib))
				g.memory_mib = -1;
			free(f[2]);
			g.chip = nvidia_smi_chip(g.name, g.memory_mib);
			out->gpus = xrealloc(out->gpus, (out->n + 1) * sizeof(*out->gpus));
			out->gpus[out->n++] = g;
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	for (const char *p = apps; p && *p;) {
		size_t len = strcspn(p, "\n");
		_cleanup_free_ char *line = xstrndup(p, len);
		char *f[2];
		size_t nf = csv_fields(line, f, 2);
		if (nf == 2) {
			for (size_t i = 0; i < out->n; i++) {
				struct nvidia_gpu *g = &out->gpus[i];
				if (!streq(g->uuid, f[0]))
					continue;
				long mib;
				g->processes++;
				if (!parse_mib(f[1], &mib)) {
					g->used_mib = -1;
					g->max_proc_mib = -1;
					g->busy = true;
				} else {
					if (g->used_mib >= 0)
						g->used_mib += mib;
					if (g->max_proc_mib >= 0 && mib > g->max_proc_mib)
						g->max_proc_mib = mib;
					if (mib >= NVIDIA_SMI_BUSY_MIB)
						g->busy = true;
				}
			}
		}
		free_fields(f, nf, 2);
		p += len;
		if (*p == '\n')
			p++;
	}
	return 0;
}

void nvidia_gpus_release(struct nvidia_gpus *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->gpus[i].uuid);
		free(g->gpus[i].name);
	}
	free(g->gpus);
	memset(g, 0, sizeof(*g));
}

void nvidia_gpus_busy_at(struct nvidia_gpus *g, long busy_mib)
{
	long t = busy_mib > 0 ? busy_mib : NVIDIA_SMI_BUSY_MIB;
	for (size_t i = 0; i < g->n; i++) {
		struct nvidia_gpu *u = &g->gpus[i];
		u->busy = u->leased || u->max_proc_mib < 0 || (u->processes && u->max_proc_mib >= t);
	}
}
