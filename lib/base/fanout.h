/* SPDX-License-Identifier: MIT */
/*
 * Work on many hosts at once: fn is called once for every index below n, from up to
 * width threads that each take the next index until none is left. Used by run's
 * fan-out, hosts --check and solve --check.
 */
#ifndef DISPATCH_FANOUT_H
#define DISPATCH_FANOUT_H

#include <stddef.h>

/* Returns when every call has returned. stack_size: each thread's stack in bytes (0:
 * the system's default). When no thread can be started the caller's thread does all
 * the work. fn must be safe to run in several threads at once. */
void fanout_run(size_t n, size_t width, size_t stack_size, void (*fn)(void *data, size_t i),
		void *data);

#endif
