/* SPDX-License-Identifier: MIT */
/*
 * The OpenSSH client configuration (ssh_config(5)), resolved for one host exactly as
 * `ssh -G HOST` resolves it for the keywords dispatch uses: first value wins, Host
 * patterns with negation, Include (globs, relative to ~/.ssh), Match blocks parsed but
 * (out of scope) never matching, %-tokens and ~ expanded where ssh expands them.
 */
#ifndef DISPATCH_SSH_CONFIG_H
#define DISPATCH_SSH_CONFIG_H

#include "error.h"

enum ssh_strict_hostkey {
	SSH_STRICT_ASK = 0,     /* ssh's default: ask; dispatch never asks, so it refuses */
	SSH_STRICT_YES,
	SSH_STRICT_ACCEPT_NEW,
	SSH_STRICT_NO,          /* also "off" */
};

struct ssh_host_config {
	char *alias;                    /* what was asked for (ssh's %n) */
	char *hostname;                 /* HostName with %h expanded, else the alias */
	char *user;                     /* User, else the local user name */
	int port;                       /* Port, else 22 */
	char **identity_files;          /* strv, expanded; ssh's defaults when none given */
	bool identity_files_set;        /* IdentityFile appeared (else they are the defaults) */
	bool identities_only;
	char *identity_agent;           /* NULL: $SSH_AUTH_SOCK; "none": no agent */
	char **proxy_jump;              /* strv of hops in order ("user@host:port" or aliases);
					   NULL when none (or ProxyJump none) */
	char *proxy_command;            /* NULL when none (or "none") */
	int connect_timeout;            /* seconds; 0 when unset */
	int server_alive_interval;      /* seconds; 0 off */
	int server_alive_count_max;     /* default 3 */
	enum ssh_strict_hostkey strict_host_key_checking;
	char **user_known_hosts_files;  /* strv, expanded; default ~/.ssh/known_hosts ~/.ssh/known_hosts2 */
	char **global_known_hosts_files;/* strv; default /etc/ssh/ssh_known_hosts{,2} */
	bool batch_mode;
};

/* Resolve host through the config at path; path NULL means ~/.ssh/config followed by
 * /etc/ssh/ssh_config, as ssh does without -F. A missing default file is fine; a
 * missing explicit file is an error (DPE_INPUT). Syntax errors name file:line. */
int ssh_config_resolve(const char *path, const char *host, struct ssh_host_config *out,
		       struct dp_error *err);
void ssh_host_config_release(struct ssh_host_config *c);

/* The concrete Host aliases of a config, following Include, in order, without
 * duplicates; patterns (with * ? or !) are skipped. path NULL means ~/.ssh/config.
 * A missing default file gives an empty list. */
int ssh_config_aliases(const char *path, char ***aliases, struct dp_error *err);

#endif
