/* SPDX-License-Identifier: MIT */
/* The chip (accelerator) catalogue: canonical names users and inventories use. */
#ifndef DISPATCH_CHIPS_H
#define DISPATCH_CHIPS_H

#include <stddef.h>

struct chip {
	const char *name;       /* canonical, lower case: "h100", "a100-sxm4-80gb" */
	const char *display;    /* "NVIDIA H100 80GB" */
	int memory_gb;
};

extern const struct chip chip_catalogue[];
extern const size_t chip_catalogue_len;

/* Look a chip up by canonical name (case-insensitive), or NULL. */
const struct chip *chip_find(const char *name);

#endif
