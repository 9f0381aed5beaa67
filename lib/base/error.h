/* SPDX-License-Identifier: MIT */
/*
 * How lib/ reports failure: a function returns -1 and fills a struct dp_error with
 * a kind (which is also the exit status CLI.md gives it) and a message in git's
 * style: lower-case, no trailing full stop, subject quoted, cause, then the fix.
 * cmd/ prints it; lib/ never prints and never exits.
 */
#ifndef DISPATCH_ERROR_H
#define DISPATCH_ERROR_H

#include "base/util.h"

enum dp_errkind {
	DPE_OK = 0,
	DPE_FAIL = 1,       /* the thing asked for failed */
	DPE_INPUT = 2,      /* usage or input error */
	DPE_TIMEOUT = 3,    /* --timeout ran out */
	DPE_NOTFOUND = 4,   /* unknown host, job, ref */
	DPE_CONNECT = 255,  /* could not connect, authenticate, verify the host key */
};

struct dp_error {
	int kind;
	char msg[1024];
};

/* Sets the error (if e is not NULL) and returns -1, so: return dp_err(e, DPE_INPUT, "..."); */
int dp_err(struct dp_error *e, int kind, const char *fmt, ...) _printf_(3, 4);
void dp_error_clear(struct dp_error *e);

#endif
