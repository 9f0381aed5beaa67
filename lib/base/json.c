/* SPDX-License-Identifier: MIT */
#include "base/json.h"

#include <cjson/cJSON.h>

void json_add_str_or_null(cJSON *o, const char *key, const char *value)
{
	if (value)
		cJSON_AddStringToObject(o, key, value);
	else
		cJSON_AddNullToObject(o, key);
}

void json_add_int_or_null(cJSON *o, const char *key, long value)
{
	if (value >= 0)
		cJSON_AddNumberToObject(o, key, (double)value);
	else
		cJSON_AddNullToObject(o, key);
}
