/* SPDX-License-Identifier: MIT */
/* A sweep's tasks as job arrays under MaxArraySize (lib/jobs/sweep_arrays.h): the
 * whole sweep, a set of indexes as a retry passes it, the array spec text, and, for
 * many sets, that every index runs exactly once with its task id below the limit. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "jobs/sweep_arrays.h"
#include "unit.h"

static void check_array(const struct sweep_array *a, size_t first, const char *tasks,
			const char *ids, size_t ntasks)
{
	CHECK_INT(a->first, first);
	CHECK_STR(a->tasks, tasks);
	CHECK_STR(a->ids, ids);
	CHECK_INT(a->ntasks, ntasks);
}

static void test_whole(void)
{
	struct sweep_array *a;
	/* the case: 10 tasks, MaxArraySize 4 */
	CHECK_INT(sweep_arrays(NULL, 10, 4, &a), 3);
	check_array(&a[0], 0, "0-3", "0-3", 4);
	check_array(&a[1], 4, "4-7", "0-3", 4);
	check_array(&a[2], 8, "8-9", "0-1", 2);
	sweep_arrays_free(a, 3);
	/* fits: one array, as before */
	CHECK_INT(sweep_arrays(NULL, 6, SWEEP_ARRAY_DEFAULT_MAX, &a), 1);
	check_array(&a[0], 0, "0-5", "0-5", 6);
	sweep_arrays_free(a, 1);
	/* exactly MaxArraySize tasks: ids 0 to max-1 */
	CHECK_INT(sweep_arrays(NULL, 1001, 1001, &a), 1);
	check_array(&a[0], 0, "0-1000", "0-1000", 1001);
	sweep_arrays_free(a, 1);
	CHECK_INT(sweep_arrays(NULL, 1002, 1001, &a), 2);
	check_array(&a[1], 1001, "1001", "0", 1);
	sweep_arrays_free(a, 2);
	/* MaxArraySize 1: an array per task; 0 read as 1 */
	CHECK_INT(sweep_arrays(NULL, 3, 0, &a), 3);
	check_array(&a[2], 2, "2", "0", 1);
	sweep_arrays_free(a, 3);
	CHECK_INT(sweep_arrays(NULL, 0, 4, &a), 0);
	CHECK(a == NULL);
}

static void test_indexes(void)
{
	struct sweep_array *a;
	/* a retry of some tasks: each array from its first asked index */
	static const size_t retry[] = { 3, 7, 12 };
	CHECK_INT(sweep_arrays(retry, 3, 5, &a), 2);
	check_array(&a[0], 3, "3,7", "0,4", 2);
	check_array(&a[1], 12, "12", "0", 1);
	sweep_arrays_free(a, 2);
	/* 7 - 3 is not below 4: task id 4 would be refused */
	CHECK_INT(sweep_arrays(retry, 3, 4, &a), 3);
	check_array(&a[1], 7, "7", "0", 1);
	sweep_arrays_free(a, 3);
	static const size_t mixed[] = { 0, 1, 2, 5, 9, 10, 11, 2000, 2001 };
	CHECK_INT(sweep_arrays(mixed, 9, 1001, &a), 2);
	check_array(&a[0], 0, "0-2,5,9-11", "0-2,5,9-11", 7);
	check_array(&a[1], 2000, "2000-2001", "0-1", 2);
	sweep_arrays_free(a, 2);
	static const size_t one[] = { 41 };
	CHECK_INT(sweep_arrays(one, 1, 4, &a), 1);
	check_array(&a[0], 41, "41", "0", 1);
	sweep_arrays_free(a, 1);
}

/* Every index once, every id below max, arrays in order, as few as possible. */
static void test_many(void)
{
	unsigned seed = 28;
	for (int round = 0; round < 100; round++) {
		size_t n = 0, idx[64], max = (size_t)(rand_r(&seed) % 9) + 1;
		for (size_t v = 0; v < 200 && n < 64; v++)
			if (rand_r(&seed) % 4 == 0)
				idx[n++] = v;
		struct sweep_array *a;
		size_t na = sweep_arrays(n ? idx : NULL, n, max, &a), at = 0, want = 0;
		for (size_t i = 0; i < n; want++) { /* the greedy count, by hand */
			size_t first = idx[i];
			while (i < n && idx[i] < first + max)
				i++;
		}
		CHECK_INT(na, want);
		for (size_t k = 0; k < na; k++) {
			CHECK(k == 0 || a[k].first > a[k - 1].first);
			/* parse the spec texts back: ids + first == tasks == the next indexes */
			char *t = a[k].tasks, *d = a[k].ids;
			for (size_t got = 0; got < a[k].ntasks;) {
				char *end;
				unsigned long lo = strtoul(t, &end, 10), hi = lo;
				if (*end == '-')
					hi = strtoul(end + 1, &end, 10);
				t = *end ? end + 1 : end;
				unsigned long dlo = strtoul(d, &end, 10), dhi = dlo;
				if (*end == '-')
					dhi = strtoul(end + 1, &end, 10);
				d = *end ? end + 1 : end;
				CHECK_INT(dlo + a[k].first, lo);
				CHECK_INT(dhi + a[k].first, hi);
				CHECK(dhi < max);
				for (unsigned long v = lo; v <= hi; v++, got++)
					CHECK_INT(v, idx[at++]);
			}
			CHECK(*t == '\0' && *d == '\0');
		}
		CHECK_INT(at, n);
		sweep_arrays_free(a, na);
	}
}

int main(void)
{
	test_whole();
	test_indexes();
	test_many();
	return unit_done();
}
