/* SPDX-License-Identifier: MIT */
/*
 * dispatch hosts resolve HOST: the ssh settings dispatch will use for HOST, as
 * `ssh -G HOST` prints them (lib/transport/ssh_config.h's ssh_config_dump), or one
 * JSON object. Nothing is contacted.
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "transport/ssh_config.h"
#include "base/strbuf.h"

/* Keywords that ssh -G may print several times: arrays in --json. */
static bool repeated(const char *key)
{
	return streq(key, "identityfile") || streq(key, "certificatefile") ||
	       streq(key, "sendenv") || streq(key, "setenv");
}

static cJSON *resolve_json(const char *host, const char *dest, const char *dump)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "host", host);
	cJSON_AddStringToObject(doc, "destination", dest);
	cJSON *settings = cJSON_AddObjectToObject(doc, "settings");
	cJSON *unused = cJSON_AddArrayToObject(doc, "not_used");
	static const char unused_prefix[] = "# not used by dispatch: ";
	for (const char *line = dump; *line;) {
		const char *nl = strchr(line, '\n');
		_cleanup_free_ char *text = xstrndup(line, nl ? (size_t)(nl - line) : strlen(line));
		line = nl ? nl + 1 : line + strlen(line);
		if (startswith(text, unused_prefix)) {
			char *rest = text + strlen(unused_prefix);
			for (char *w = strtok(rest, " "); w; w = strtok(NULL, " "))
				cJSON_AddItemToArray(unused, cJSON_CreateString(w));
			continue;
		}
		char *sp = strchr(text, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		if (repeated(text)) {
			cJSON *arr = cJSON_GetObjectItemCaseSensitive(settings, text);
			if (!arr)
				arr = cJSON_AddArrayToObject(settings, text);
			cJSON_AddItemToArray(arr, cJSON_CreateString(sp + 1));
		} else {
			cJSON_AddStringToObject(settings, text, sp + 1);
		}
	}
	return doc;
}

static int cmd_hosts_resolve(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host = args->pos[0];
	const char *dest = inventory_ssh_destination(ctx->inv, host);
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, host) : NULL;
	if (h && !inv_host_type_reachable(h->type)) {
		error_msg("'%s' is a %s host: dispatch does not reach it over SSH", host,
			  inv_host_type_name(h->type));
		return DPE_INPUT;
	}
	struct ssh_host_config c;
	struct dp_error err = { 0 };
	if (ssh_config_resolve_dest(ctx->ssh_config_path, ctx->ssh_home, dest, &c, &err) < 0)
		return report_error(&err);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	ssh_config_dump(&c, &sb);
	ssh_host_config_release(&c);
	if (!streq(dest, host))
		info_msg(ctx, "'%s' is the inventory's name for ssh destination '%s'", host, dest);
	if (ctx->json)
		json_print(resolve_json(host, dest, sb.buf));
	else
		fputs(sb.buf, stdout);
	return 0;
}

static const struct dp_option no_options[] = { OPT_END };

/* A subcommand of hosts (cmd/cmd-hosts.c lists it): -h, the man page and the
 * completions are those of hosts. */
const struct dispatch_cmd dispatch_cmd_hosts_resolve = {
	.name = "hosts resolve",
	.summary = "the ssh settings dispatch uses for a host, in ssh -G form",
	.usage = "HOST",
	.opts = no_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY,
	.fn = cmd_hosts_resolve,
};
