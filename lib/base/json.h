/* SPDX-License-Identifier: MIT */
/*
 * Small cJSON helpers for the --json documents lib/ builds: a value or null.
 */
#ifndef DISPATCH_BASE_JSON_H
#define DISPATCH_BASE_JSON_H

struct cJSON;

void json_add_str_or_null(struct cJSON *o, const char *key, const char *value);
void json_add_int_or_null(struct cJSON *o, const char *key, long value); /* null when < 0 */

#endif
