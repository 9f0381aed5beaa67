/* SPDX-License-Identifier: MIT */
/*
 * SLURM hostlist expressions: "rack[1-2]-n[01-02],login" <-> host names.
 *
 * hostlist_expand gives the hosts as `scontrol show hostnames` does: in the order
 * written, duplicates kept, zero padding kept (the width of a range is that of its
 * first number, so n[08-10] is n08 n09 n10). Several bracket groups in one name give
 * their cartesian product, for two groups the first slowest (rack1-n1 rack1-n2
 * rack2-n1 ...), for more in SLURM's order: the last group fastest, then the first,
 * the second, ..., the one before the last slowest. Names are separated by commas,
 * spaces, tabs or newlines, outside brackets.
 *
 * Where it departs from SLURM (22.05, checked against its scontrol):
 *  - "" and "(null)" (what `scontrol show job` prints for a job without nodes) are
 *    the empty list; SLURM takes "(null)" for a host name.
 *  - text after the last bracket (n[1-2]-ib) is accepted; SLURM refuses it.
 *  - it is stricter: n[1-] (SLURM: n1), an unclosed '[' and a stray ']' (SLURM:
 *    odd host names) are errors; so are empty ranges and nested brackets (as SLURM).
 *  - a newline separates names as a comma does; SLURM keeps it in the name.
 *
 * hostlist_fold is the inverse, as `scontrol show hostlist`: it does not sort and
 * does not remove duplicates; consecutive names sharing the prefix before their
 * trailing number are put in one bracket, and ascending runs of numbers with the same
 * zero padding become ranges (n1,n2,n10 -> n[1-2,10]; n3,n1 -> n[3,1]). Names whose
 * number is not at the end are kept as they are, so the result is always an
 * expression SLURM accepts. expand(fold(hosts)) gives hosts back exactly.
 *
 * Numbers have at most 19 digits. Expansion is capped (HOSTLIST_MAX_HOSTS hosts,
 * HOSTLIST_MAX_BYTES of names) before anything is allocated.
 */
#ifndef DISPATCH_HOSTLIST_H
#define DISPATCH_HOSTLIST_H

#include "base/error.h"

#define HOSTLIST_MAX_HOSTS ((size_t)1000000)
#define HOSTLIST_MAX_BYTES ((size_t)64 << 20)

/* Expands expr (NULL is the empty list) into a strv (*hosts, free with strv_free;
 * an empty strv, not NULL, for no hosts). -1 with a DPE_INPUT error that quotes
 * the expression and gives the column at fault. */
int hostlist_expand(const char *expr, char ***hosts, struct dp_error *err);

/* The same with another cap on the number of hosts (at most HOSTLIST_MAX_HOSTS). */
int hostlist_expand_max(const char *expr, size_t max_hosts, char ***hosts,
			struct dp_error *err);

/* The first host of expr without expanding the rest (the whole expression is still
 * checked, caps included): *first is malloc'd, or NULL when expr has no hosts. */
int hostlist_first(const char *expr, char **first, struct dp_error *err);

/* Folds hosts (a strv; NULL or empty gives "") into one expression in *out
 * (malloc'd). -1 with DPE_INPUT for a name that cannot be part of a hostlist:
 * empty, "(null)", or holding a comma, blank, '[' or ']'. */
int hostlist_fold(char *const *hosts, char **out, struct dp_error *err);

#endif
