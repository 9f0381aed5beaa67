/* SPDX-License-Identifier: MIT */
/* The chip (accelerator) catalogue: canonical names users and inventories use. */
#ifndef DISPATCH_CHIPS_H
#define DISPATCH_CHIPS_H

#include <stdbool.h>
#include <stddef.h>

struct chip {
	const char *name;       /* canonical, lower case: "h100", "a100-sxm4-80gb" */
	const char *display;    /* "NVIDIA H100 80GB" */
	int memory_gb;
};

extern const struct chip chip_catalogue[];
extern const size_t chip_catalogue_len;

/* "words:" followed by every catalogue name, space-separated, for option tables'
 * completion (a unit test checks it against the catalogue). */
extern const char chip_complete_words[];

/* Look a chip up by canonical name or one of the reference's aliases (rtx5090,
 * a6000, ada6000), case-insensitive, or NULL. */
const struct chip *chip_find(const char *name);
/* A Cloud TPU chip name (tpu-v4, tpu-v5e, ...): only tpu hosts have them. */
bool chip_is_tpu(const char *name);

/* For an unknown chip name: " (did you mean 'x'?)" or " (did you mean one of: a, b?)"
 * (names starting with it, or the closest by edit distance), or "" when nothing is
 * close. Points into a static buffer. */
const char *chip_suggestion(const char *name);

/* The family of a chip: its name up to the first '-' ("a100" for "a100-sxm4-80gb"),
 * written into buf (size n). */
const char *chip_family(const char *name, char *buf, size_t n);

#endif
