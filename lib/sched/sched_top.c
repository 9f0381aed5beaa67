/* SPDX-License-Identifier: MIT */
#include "sched/sched_top.h"

#include <string.h>
#include <time.h>

#include "base/util.h"
#include "transport/ssh.h"

/* Each line of the sampling script's output: fed to the samples; a tick shows one. */
static int on_stdout(void *data, const char *buf, size_t len)
{
	struct top_session *s = data;
	strbuf_add(&s->partial, buf, len);
	char *start = s->partial.buf, *nl;
	while ((nl = memchr(start, '\n', (size_t)(s->partial.buf + s->partial.len - start)))) {
		*nl = 0;
		bool tick = gpu_top_feed(&s->top, start, monotonic_seconds());
		if (s->plain)
			plain_top_feed(s->plain, start);
		if (s->nodeprocs)
			slurm_procs_feed(s->nodeprocs, &s->top, start);
		if (tick) {
			if (s->plain)
				plain_top_settle(s->plain, &s->top);
			s->samples++;
			s->show(s, s->data);
			if (s->count > 0 && s->samples >= s->count) {
				s->stopped = true;
				return 1;
			}
		}
		start = nl + 1;
	}
	size_t rest = (size_t)(s->partial.buf + s->partial.len - start);
	memmove(s->partial.buf, start, rest);
	s->partial.len = rest;
	s->partial.buf[rest] = 0;
	return 0;
}

static int on_stderr(void *data, const char *buf, size_t len)
{
	struct top_session *s = data;
	if (s->err.len < 65536)
		strbuf_add(&s->err, buf, len);
	return 0;
}

int sched_top_exec(struct ssh_session *ss, struct top_session *s, const char *cmd,
		   struct dp_error *err)
{
	struct ssh_exec x = { .command = cmd, .in_fd = -1, .on_stdout = on_stdout,
			      .on_stderr = on_stderr, .data = s };
	int status;
	return ssh_exec(ss, &x, &status, err) < 0 && !s->stopped ? -1 : 0;
}

const char *sched_top_stderr_line(struct top_session *s)
{
	return s->err.len ? strtok(s->err.buf, "\n") : "";
}

void sched_top_sleep(double sec)
{
	struct timespec ts = { .tv_sec = (time_t)sec,
			       .tv_nsec = (long)((sec - (double)(time_t)sec) * 1e9) };
	while (nanosleep(&ts, &ts) < 0)
		;
}

