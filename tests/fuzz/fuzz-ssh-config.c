/* SPDX-License-Identifier: MIT */
/* The ssh_config parser from memory: resolution for a few host names (and its dump, as
 * hosts resolve prints it, and the environment SendEnv and SetEnv make), the aliases,
 * and the input's first line as a host and a user name.
 * Include lines are checked but not followed from a buffer, so nothing is read. */
#include <stdint.h>

#include "transport/ssh_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const hosts[] = { "web1", "db.internal", "x", "FE80::1" };
	const char *buf = (const char *)data;
	struct dp_error err;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		struct ssh_host_config c;
		if (ssh_config_resolve_buffer("fuzz", "/nonexistent", buf, size, hosts[i], &c, &err) == 0) {
			free(ssh_host_config_proxy_command(&c));
			(void)ssh_host_config_agent_socket(&c);
			strv_free(ssh_host_config_env(&c));
			struct strbuf dump = STRBUF_INIT; /* what hosts resolve prints */
			ssh_config_dump(&c, &dump);
			strbuf_release(&dump);
			ssh_host_config_release(&c);
		}
	}
	char *line = xstrndup(buf, size);
	line[strcspn(line, "\n")] = '\0';
	(void)ssh_check_hostname(line, &err);
	(void)ssh_check_user(line, &err);
	free(line);
	char **aliases = NULL;
	if (ssh_config_aliases_buffer("fuzz", "/nonexistent", buf, size, &aliases, &err) == 0)
		strv_free(aliases);
	return 0;
}
