/* SPDX-License-Identifier: MIT */
/* A sweep's tasks as SLURM job arrays under MaxArraySize: sweep_arrays.h. */
#include "jobs/sweep_arrays.h"

#include <stdlib.h>

#include "base/util.h"

void sweep_array_spec(struct strbuf *sb, const size_t *idx, size_t n, size_t base)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && idx[j + 1] == idx[j] + 1)
			j++;
		strbuf_addf(sb, "%s%zu", i ? "," : "", idx[i] - base);
		if (j > i)
			strbuf_addf(sb, "-%zu", idx[j] - base);
		i = j + 1;
	}
}

size_t sweep_arrays(const size_t *idx, size_t n, size_t max, struct sweep_array **out)
{
	*out = NULL;
	if (!n)
		return 0;
	if (!max)
		max = 1;
	size_t *all = NULL;
	if (!idx) {
		all = xmalloc(n * sizeof(*all));
		for (size_t i = 0; i < n; i++)
			all[i] = i;
		idx = all;
	}
	struct sweep_array *a = NULL;
	size_t na = 0;
	for (size_t i = 0; i < n;) {
		size_t first = idx[i], j = i;
		while (j < n && idx[j] - first < max)
			j++;
		struct strbuf tasks = STRBUF_INIT, ids = STRBUF_INIT;
		sweep_array_spec(&tasks, idx + i, j - i, 0);
		sweep_array_spec(&ids, idx + i, j - i, first);
		a = xrealloc(a, (na + 1) * sizeof(*a));
		a[na++] = (struct sweep_array){ .first = first, .ntasks = j - i,
						.tasks = strbuf_detach(&tasks),
						.ids = strbuf_detach(&ids) };
		i = j;
	}
	free(all);
	*out = a;
	return na;
}

void sweep_arrays_free(struct sweep_array *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].tasks);
		free(a[i].ids);
	}
	free(a);
}
