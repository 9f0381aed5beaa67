/* SPDX-License-Identifier: MIT */
/* Marker lines and the line iterator: marker.h. */
#include "base/marker.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void marker_echo(struct strbuf *sb, const char *mark)
{
	strbuf_addf(sb, "echo %s\n", mark);
}

void marker_print(struct strbuf *sb, const char *mark, const char *word)
{
	strbuf_addf(sb, "printf '%s %%s\\n' %s\n", mark, word);
}

void marker_status(struct strbuf *sb, const char *mark, const char *var)
{
	strbuf_addf(sb, "echo \"%s $%s\"\n", mark, var);
}

char *line_next(struct line_iter *it)
{
	free(it->line);
	it->line = NULL;
	if (!it->next || !*it->next) {
		it->next = NULL;
		return NULL;
	}
	const char *p = it->next, *nl = strchr(p, '\n');
	size_t len = nl ? (size_t)(nl - p) : strlen(p);
	it->start = p;
	it->next = nl ? nl + 1 : NULL;
	it->line = xstrndup(p, len);
	if (len && it->line[len - 1] == '\r')
		it->line[len - 1] = '\0';
	return it->line;
}

void line_iter_release(struct line_iter *it)
{
	free(it->line);
	it->line = NULL;
}

void each_line(const char *text, void (*fn)(void *data, char *line), void *data)
{
	struct line_iter it = LINE_ITER_INIT(text);
	for (char *line; (line = line_next(&it));)
		fn(data, line);
	line_iter_release(&it);
}

const char *marker_value(const char *line, const char *mark)
{
	size_t n = strlen(mark);
	if (strncmp(line, mark, n) != 0)
		return NULL;
	if (line[n] == '\0')
		return line + n;
	return line[n] == ' ' ? line + n + 1 : NULL;
}

char *marker_find(const char *text, const char *mark)
{
	struct line_iter it = LINE_ITER_INIT(text);
	char *found = NULL;
	for (char *line; (line = line_next(&it));) {
		const char *v = marker_value(line, mark);
		if (v) {
			free(found);
			found = xstrdup(v);
		}
	}
	line_iter_release(&it);
	return found;
}

long marker_find_long(const char *text, const char *mark, long min, long max)
{
	_cleanup_free_ char *v = marker_find(text, mark);
	long n;
	return v && parse_long(v, min, max, &n) ? n : -1;
}
