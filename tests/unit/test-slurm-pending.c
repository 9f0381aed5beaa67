/* SPDX-License-Identifier: MIT */
/* Why pending jobs wait, with the numbers: the pending script's answer captured on
 * the test cluster (tests/unit/data/slurm/capture-pending) read into one detail per
 * job, in text and as the JSON object of --json; a crafted answer with the nodes and
 * partitions sections missing gives less detail, not wrong numbers. */
#include "base/util.h"
#include "sched/slurm/slurm_pending.h"
#include "unit.h"

static const struct slurm_pending *job(const struct slurm_pending *p, size_t n, const char *id)
{
	const struct slurm_pending *j = slurm_pending_find(p, n, id);
	CHECK(j != NULL);
	return j;
}

static double num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	x = b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
	return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

static const char *str(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	x = b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
	return cJSON_IsString(x) ? x->valuestring : "(none)";
}

static void captured(void)
{
	char *out = unit_fixture("slurm", "pending-22.05.out");
	struct slurm_pending *p;
	size_t n = slurm_pending_parse(out, &p);
	CHECK(n == 6);
	/* every GPU taken (node1: 1 of 2 by the QOS job, node2 drained) */
	const struct slurm_pending *j = job(p, n, "6");
	CHECK_STR(j->reason, "Resources");
	CHECK_STR(j->text, "asks 1 node, 2 CPUs, 50M memory, gres:gpu:2 per node, --time 10:00; "
			   "partition gpu has 1 of 2 CPUs, 1 of 2 GPUs, 1950M of 2000M memory free "
			   "on 1 of 2 nodes up; expected start 2026-11-24T23:47:57");
	CHECK(num(j->detail, "request", "cpus") == 2);
	CHECK_STR(str(j->detail, "request", "tres_per_node"), "gres:gpu:2");
	CHECK(num(j->detail, "free", "gpus") == 1);
	CHECK(num(j->detail, "free", "gpus_total") == 2);
	CHECK(num(j->detail, "free", "nodes_up") == 1);
	CHECK_STR(str(j->detail, "expected_start", NULL), "2026-11-24T23:47:57");

	j = job(p, n, "7");
	CHECK_STR(j->text, "release it with: scontrol release 7");
	CHECK_STR(str(j->detail, "release", NULL), "scontrol release 7");
	CHECK_STR(str(j->detail, "expected_start", NULL), "N/A");

	j = job(p, n, "8");
	CHECK_STR(j->text, "waits on 7 (afterok: PENDING, JobHeldUser), 5 (afterok: RUNNING)");
	const cJSON *deps = cJSON_GetObjectItemCaseSensitive(j->detail, "depends_on");
	CHECK(cJSON_GetArraySize(deps) == 2);
	CHECK_STR(str(cJSON_GetArrayItem(deps, 0), "job", NULL), "7");
	CHECK_STR(str(cJSON_GetArrayItem(deps, 0), "state", NULL), "PENDING");
	CHECK_STR(str(cJSON_GetArrayItem(deps, 1), "status", NULL), "unfulfilled");

	j = job(p, n, "9");
	CHECK_STR(j->reason, "QOSMaxGRESPerUser");
	CHECK_STR(j->text, "QOS cappend: MaxTRESPU=gres/gpu=1");
	CHECK_STR(str(j->detail, "limit", "name"), "MaxTRESPU");
	CHECK_STR(str(j->detail, "limit", "value"), "gres/gpu=1");

	/* the drain reason whole, '|' and all */
	j = job(p, n, "10");
	CHECK_STR(j->text, "node2 draining: capture: bad gpu | fan (root, 2026-11-24T23:37:57)");
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(j->detail, "nodes");
	CHECK(cJSON_GetArraySize(nodes) == 1);
	CHECK_STR(str(cJSON_GetArrayItem(nodes, 0), "reason", NULL), "capture: bad gpu | fan");

	j = job(p, n, "11");
	CHECK_STR(j->text, "asks --time 10:00; partition cappend allows 5:00 (MaxTime)");
	CHECK_STR(str(j->detail, "max_time", NULL), "5:00");
	CHECK(slurm_pending_find(p, n, "5") == NULL);
	slurm_pending_free(p, n);
	free(out);
}

static const struct slurm_pending *by_reason(const struct slurm_pending *p, size_t n,
					    const char *reason)
{
	for (size_t i = 0; i < n; i++)
		if (startswith(p[i].reason, reason))
			return &p[i];
	printf("# no job pending for %s\n", reason);
	static const struct slurm_pending none = { .text = (char *)"" };
	return &none;
}

/* The newer releases' answers to the same jobs: the same details (24.11 on say
 * "gres/gpu:2" and "ReqNodeNotAvail, May be reserved for other job", without the
 * node: it comes from squeue's %n, the node asked for). */
static void release(const char *file)
{
	char *out = unit_fixture("slurm", file);
	struct slurm_pending *p;
	size_t n = slurm_pending_parse(out, &p);
	CHECK(n == 6);
	CHECK_CONTAINS(by_reason(p, n, "Resources")->text,
		       "asks 1 node, 2 CPUs, 50M memory, gres/gpu:2 per node, --time 10:00; partition "
		       "gpu has 1 of 2 CPUs, 1 of 2 GPUs, 1950M of 2000M memory free on 1 of 2 nodes "
		       "up; expected start 2026-11-24T");
	CHECK_CONTAINS(by_reason(p, n, "JobHeldUser")->text, "release it with: scontrol release ");
	CHECK_CONTAINS(by_reason(p, n, "Dependency")->text, " (afterok: PENDING, JobHeldUser), ");
	CHECK_CONTAINS(by_reason(p, n, "Dependency")->text, " (afterok: RUNNING)");
	CHECK_STR(by_reason(p, n, "QOSMaxGRESPerUser")->text, "QOS cappend: MaxTRESPU=gres/gpu=1");
	CHECK_CONTAINS(by_reason(p, n, "ReqNodeNotAvail")->text,
		       "node2 draining: capture: bad gpu | fan (root, 2026-11-24T");
	CHECK_STR(by_reason(p, n, "PartitionTimeLimit")->text,
		  "asks --time 10:00; partition cappend allows 5:00 (MaxTime)");
	slurm_pending_free(p, n);
	free(out);
}

static void partial(void)
{
	/* the jobs section alone: no free resources, no limits, nodes not known */
	static const char out[] =
		"dispatch-pending-jobs\n"
		"12|gpu|1|2|50M|gres:gpu:2|10:00|normal|testbed||N/A|Resources|(null)\n"
		"13|cpu|1|1|50M|N/A|5:00|normal|testbed|node[3-4]|N/A|ReqNodeNotAvail, UnavailableNodes:node[3-4]|(null)\n"
		"14|cpu|1|1|50M|N/A|5:00|slow|testbed||N/A|QOSMaxJobsPerUserLimit|(null)\n"
		"15|cpu|1|1|50M|N/A|5:00|normal|testbed||N/A|SomethingNew|(null)\n"
		"16|cpu|1|1|50M|N/A|5:00|normal|testbed||N/A|JobHeldAdmin|(null)\n"
		"17|cpu|1|1|50M|N/A|5:00|normal|testbed||N/A|Dependency|singleton(unfulfilled)\n"
		"not a job line\n";
	struct slurm_pending *p;
	size_t n = slurm_pending_parse(out, &p);
	CHECK(n == 6);
	CHECK_STR(job(p, n, "12")->text, "asks 1 node, 2 CPUs, 50M memory, gres:gpu:2 per node, --time 10:00; "
					 "expected start N/A");
	CHECK_STR(job(p, n, "13")->text, "node3 (not known to sinfo); node4 (not known to sinfo)");
	CHECK(job(p, n, "14")->text == NULL);
	CHECK(job(p, n, "15")->text == NULL);
	CHECK_CONTAINS(job(p, n, "16")->text, "only an administrator");
	CHECK_STR(job(p, n, "17")->text, "waits on singleton");
	CHECK(slurm_pending_wants_limits("QOSMaxGRESPerUser"));
	CHECK(slurm_pending_wants_limits("AssocGrpGRES"));
	CHECK(!slurm_pending_wants_limits("Resources"));
	slurm_pending_free(p, n);
	CHECK(slurm_pending_parse("", &p) == 0 && p == NULL);
}

int main(void)
{
	captured();
	release("pending-24.11.out");
	release("pending-26.05.out");
	partial();
	return unit_done();
}
