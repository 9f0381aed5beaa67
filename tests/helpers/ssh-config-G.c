/* SPDX-License-Identifier: MIT */
/*
 * Test helper: resolve HOST through CONFIG with lib/transport/ssh_config.c and print the result
 * the way `ssh -G -F CONFIG HOST` prints it, for the keywords dispatch uses, so that
 * tests/cli/t0400-ssh-config-vs-ssh-G.sh can diff the two. Exit 255 on a config error
 * (as ssh), with the message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>

#include "transport/ssh_config.h"

static void print_list(const char *key, char **v, const char *sep)
{
	printf("%s ", key);
	for (size_t i = 0; v && v[i]; i++)
		printf("%s%s", i ? sep : "", v[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	static const char *const strict[] = {
		[SSH_STRICT_ASK] = "ask", [SSH_STRICT_YES] = "true",
		[SSH_STRICT_ACCEPT_NEW] = "accept-new", [SSH_STRICT_NO] = "false",
	};
	if (argc != 3) {
		fprintf(stderr, "usage: ssh-config-G CONFIG|- HOST\n");
		return 2;
	}
	struct ssh_host_config c;
	struct dp_error err;
	const char *path = argv[1][0] == '-' && !argv[1][1] ? NULL : argv[1];
	if (ssh_config_resolve_dest(path, argv[2], &c, &err) < 0) {
		fprintf(stderr, "ssh-config-G: %s\n", err.msg);
		return 255;
	}
	printf("user %s\nhostname %s\nport %d\n", c.user, c.hostname, c.port);
	printf("batchmode %s\n", c.batch_mode ? "yes" : "no");
	printf("identitiesonly %s\n", c.identities_only ? "yes" : "no");
	printf("stricthostkeychecking %s\n", strict[c.strict_host_key_checking]);
	printf("serveralivecountmax %d\n", c.server_alive_count_max);
	printf("serveraliveinterval %d\n", c.server_alive_interval);
	if (c.identity_agent)
		printf("identityagent %s\n", c.identity_agent);
	for (size_t i = 0; c.identity_files[i]; i++)
		printf("identityfile %s\n", c.identity_files[i]);
	for (size_t i = 0; c.certificate_files && c.certificate_files[i]; i++)
		printf("certificatefile %s\n", c.certificate_files[i]);
	print_list("globalknownhostsfile", c.global_known_hosts_files, " ");
	print_list("userknownhostsfile", c.user_known_hosts_files, " ");
	if (c.connect_timeout)
		printf("connecttimeout %d\n", c.connect_timeout);
	else
		printf("connecttimeout none\n");
	if (c.proxy_command)
		printf("proxycommand %s\n", c.proxy_command);
	if (c.proxy_jump)
		print_list("proxyjump", c.proxy_jump, ",");
	/* the algorithm lists over OpenSSH's defaults, as ssh -G prints them */
	static const char *const alg_keys[SSH_ALGS_NKINDS] = {
		[SSH_ALGS_KEX] = "kexalgorithms", [SSH_ALGS_CIPHERS] = "ciphers",
		[SSH_ALGS_MACS] = "macs", [SSH_ALGS_HOSTKEY] = "hostkeyalgorithms",
		[SSH_ALGS_PUBKEY] = "pubkeyacceptedalgorithms",
	};
	for (int k = 0; k < SSH_ALGS_NKINDS; k++) {
		char *list = ssh_algs_assemble(k, c.algs[k], ssh_algs_openssh_default(k));
		printf("%s %s\n", alg_keys[k], list ? list : "(error)");
		free(list);
	}
	static const char *const master[] = {
		[SSH_CONTROL_MASTER_NO] = "false", [SSH_CONTROL_MASTER_YES] = "true",
		[SSH_CONTROL_MASTER_AUTO] = "auto", [SSH_CONTROL_MASTER_ASK] = "ask",
		[SSH_CONTROL_MASTER_AUTOASK] = "autoask",
	};
	printf("controlmaster %s\n", master[c.control_master]);
	if (c.control_path)
		printf("controlpath %s\n", c.control_path);
	if (c.control_persist < 0)
		printf("controlpersist no\n");
	else if (c.control_persist == 0)
		printf("controlpersist yes\n");
	else
		printf("controlpersist %d\n", c.control_persist);
	ssh_host_config_release(&c);
	return ferror(stdout) ? 1 : 0;
}
