/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: replaced by the real loader (libyaml via yaml_tree.c). */
#include <stdlib.h>

#include "inventory.h"

int inventory_load(const char *path, struct inventory **out, struct dp_error *err)
{
	*out = NULL;
	return dp_err(err, DPE_INPUT, "%s: inventory loading is not built yet", path);
}

void inventory_free(struct inventory *inv)
{
	free(inv);
}
