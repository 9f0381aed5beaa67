/* SPDX-License-Identifier: MIT */
/* The inventory loader on arbitrary bytes; a loaded inventory is also solved for. */
#include <stdint.h>

#include "inventory/inventory.h"
#include "solver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inventory *inv = NULL;
	struct dp_error err;
	if (inventory_parse("fuzz.yaml", (const char *)data, size, &inv, &err) < 0)
		return 0;
	static const struct solve_request reqs[] = {
		{ .chips = 1 }, { .chips = 0 }, { .chip = "h100", .chips = 8 },
		{ .chip = "a100-sxm4-80gb", .chips = 100 },
	};
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		struct solve_result res;
		if (solve(inv, &reqs[i], &res, &err) == 0)
			solve_result_release(&res);
	}
	inventory_free(inv);
	return 0;
}
