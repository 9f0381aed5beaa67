/* SPDX-License-Identifier: MIT */
/* `dispatch top --json`'s document for the latest sample of s (lib/top_json.c). */
#ifndef DISPATCH_TOP_JSON_H
#define DISPATCH_TOP_JSON_H

struct cJSON;
struct top_session;

/* job@host's sample: per node its GPUs, flags, health (s->health) and processes
 * (s->procs, or the backend's per-node totals); now: monotonic seconds, for stale. */
struct cJSON *top_sample_json(const struct top_session *s, const char *job, const char *host,
			      double now);

#endif
