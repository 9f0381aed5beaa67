/* SPDX-License-Identifier: MIT */
/*
 * A remote reply parsed into its marks (lib/remote/remote.h), aborting on a broken
 * property: every mark lies inside the text, in order, starts a line with
 * "dispatch-" and its key, a known key is the table's own pointer; each section's
 * exit status is -1 or 0..255; a section's text, and a part's, lies inside the reply;
 * a job's log tail (joblog_tails_take) is its text or an error.
 */
#include <stdint.h>
#include <string.h>

#include "jobs/joblog.h"
#include "remote/remote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	strbuf_add(&rr.out, (const char *)data, size);
	remote_reply_parse(&rr);
	size_t last = 0;
	for (size_t i = 0; i < rr.n; i++) {
		const struct remote_mark *m = &rr.marks[i];
		size_t klen = strlen(m->key);
		if (m->start < last || m->end > rr.out.len || m->start >= m->end)
			abort();
		if ((m->start && rr.out.buf[m->start - 1] != '\n') ||
		    strncmp(rr.out.buf + m->start, m->key, klen) != 0 || !startswith(m->key, "dispatch-"))
			abort();
		bool in_table = false;
		for (size_t k = 0; remote_keys[k]; k++)
			in_table = in_table || remote_keys[k] == m->key;
		if (in_table != m->known || strchr(m->value, '\n'))
			abort();
		last = m->end;
		char *sec = remote_section_text(&rr, m->key);
		if (!sec || strlen(sec) > rr.out.len)
			abort();
		free(sec);
		/* a part (jobs.c's detail) lies inside the reply too */
		char *part = remote_part_text(&rr, m->key, m->value);
		if (!part || strlen(part) > rr.out.len)
			abort();
		free(part);
	}
	/* the log tails of a detail's second exchange: text or error, never both */
	for (size_t i = 0; i < 3; i++) {
		char *text, *error;
		int r = joblog_tails_take(&rr, i, &text, &error);
		if ((r == 0) != (text != NULL) || (text == NULL) == (error == NULL))
			abort();
		free(text);
		free(error);
	}
	for (int s = 0; s < REMOTE_SECTION_COUNT; s++) {
		int x = remote_exit(&rr, (enum remote_section)s);
		if (x < -1 || x > 255)
			abort();
	}
	remote_reply_release(&rr);
	return 0;
}
