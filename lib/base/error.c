/* SPDX-License-Identifier: MIT */
#include "base/error.h"

#include <stdarg.h>

int dp_err(struct dp_error *e, int kind, const char *fmt, ...)
{
	if (!e)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->kind = kind;
	return -1;
}

void dp_error_clear(struct dp_error *e)
{
	e->kind = DPE_OK;
	e->msg[0] = '\0';
}
