/* SPDX-License-Identifier: MIT */
#include <stdint.h>

#include "inventory/yaml_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ynode *root = NULL;
	struct dp_error err;
	if (yaml_parse("fuzz.yaml", (const char *)data, size, &root, &err) == 0)
		ynode_free(root);
	return 0;
}
