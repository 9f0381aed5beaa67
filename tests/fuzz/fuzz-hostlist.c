/* SPDX-License-Identifier: MIT */
/*
 * Hostlists, two ways, aborting on any broken property so that the fuzzer finds it:
 *  1. the input as an expression: expand it; when that works, hostlist_first agrees
 *     with the first host, and expand(fold(hosts)) gives exactly the same hosts in
 *     the same order; when it fails, nothing is returned and the error is DPE_INPUT.
 *  2. the input as host names, one a line: when fold accepts them, expanding the
 *     result gives them back exactly.
 */
#include <stdint.h>

#include "sched/slurm/hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_INPUT = 2048, MAX_HOSTS = 5000 }; /* keeps each run small and quick */

static void same_or_abort(char *const *a, char *const *b)
{
	size_t n = strv_len(a);
	if (strv_len(b) != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i], b[i]) != 0)
			abort();
}

static void as_expression(const char *expr)
{
	static char *unset[1];
	struct dp_error err = { 0 }, err2 = { 0 };
	char **hosts = unset, **again = NULL, *folded = NULL, *refolded = NULL;
	char *first = NULL;

	if (hostlist_expand_max(expr, MAX_HOSTS, &hosts, &err) < 0) {
		if (hosts != NULL || err.kind != DPE_INPUT || !err.msg[0])
			abort();
		return;
	}
	if (hostlist_first(expr, &first, &err2) < 0)
		abort();
	if (hosts[0] ? !first || strcmp(first, hosts[0]) != 0 : first != NULL)
		abort();
	if (hostlist_fold(hosts, &folded, &err) < 0)
		abort();
	if (hostlist_expand_max(folded, MAX_HOSTS, &again, &err) < 0)
		abort();
	same_or_abort(hosts, again);
	/* Folding is stable: the folded form of the same hosts is the same text. */
	if (hostlist_fold(again, &refolded, &err) < 0 || strcmp(folded, refolded) != 0)
		abort();
	free(first);
	free(folded);
	free(refolded);
	strv_free(hosts);
	strv_free(again);
}

static void as_names(const char *text)
{
	struct dp_error err = { 0 };
	char **names = NULL, **again = NULL, *folded = NULL;
	size_t n = 0;
	const char *p = text;
	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		names = xrealloc(names, (n + 2) * sizeof(*names));
		names[n++] = xstrndup(p, len);
		names[n] = NULL;
		if (!nl)
			break;
		p = nl + 1;
	}
	if (hostlist_fold(names, &folded, &err) == 0) {
		if (hostlist_expand_max(folded, MAX_HOSTS, &again, &err) < 0)
			abort();
		same_or_abort(names, again);
	} else if (folded != NULL || err.kind != DPE_INPUT) {
		abort();
	}
	free(folded);
	strv_free(names);
	strv_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	char *text = xstrndup((const char *)data, size); /* up to the first NUL */
	as_expression(text);
	as_names(text);
	free(text);
	return 0;
}
