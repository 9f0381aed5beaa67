/* SPDX-License-Identifier: MIT */
/*
 * The OpenSSH client configuration (ssh_config(5)), resolved for one host exactly as
 * `ssh -G HOST` resolves it for the keywords dispatch uses: first value wins, Host
 * patterns with negation, Include (globs, relative to ~/.ssh), Match (host, originalhost,
 * user, localuser, exec, canonical, final, all; the second pass), CanonicalizeHostname
 * and its companions, %-tokens and ~ expanded where ssh expands them.
 */
#ifndef DISPATCH_SSH_CONFIG_H
#define DISPATCH_SSH_CONFIG_H

#include "base/error.h"
#include "base/strbuf.h"
#include "transport/ssh_algs.h"

enum ssh_strict_hostkey {
	SSH_STRICT_ASK = 0,     /* ssh's default: ask; dispatch never asks, so it refuses */
	SSH_STRICT_YES,
	SSH_STRICT_ACCEPT_NEW,
	SSH_STRICT_NO,          /* also "off" */
};

/* ControlMaster: dispatch never becomes a master; it uses one that answers on
 * ControlPath whatever this says (ssh -G's spellings: false, true, auto, ask, autoask). */
enum ssh_control_master {
	SSH_CONTROL_MASTER_NO = 0,
	SSH_CONTROL_MASTER_YES,
	SSH_CONTROL_MASTER_AUTO,
	SSH_CONTROL_MASTER_ASK,
	SSH_CONTROL_MASTER_AUTOASK,
};

struct ssh_host_config {
	char *alias;                    /* what was asked for (ssh's %n) */
	char *hostname;                 /* HostName with %h expanded, else the alias */
	char *user;                     /* User, else the local user name */
	int port;                       /* Port, else 22 */
	char **identity_files;          /* strv, expanded; ssh's defaults when none given */
	bool identity_files_set;        /* IdentityFile appeared (else they are the defaults) */
	char **certificate_files;       /* CertificateFile, strv, expanded; NULL when none */
	bool identities_only;
	char *identity_agent;           /* NULL: $SSH_AUTH_SOCK; "none": no agent */
	char **proxy_jump;              /* strv of hops in order ("user@host:port" or aliases);
					   NULL when none (or ProxyJump none) */
	char *proxy_command;            /* NULL when none (or "none"); raw, as ssh -G prints it:
					   expand with ssh_host_config_proxy_command() */
	int connect_timeout;            /* seconds; 0 when unset */
	int server_alive_interval;      /* seconds; 0 off */
	int server_alive_count_max;     /* default 3 */
	enum ssh_strict_hostkey strict_host_key_checking;
	char **user_known_hosts_files;  /* strv, expanded; default ~/.ssh/known_hosts ~/.ssh/known_hosts2 */
	char **global_known_hosts_files;/* strv; default /etc/ssh/ssh_known_hosts{,2} */
	bool batch_mode;
	char *host_key_alias;           /* HostKeyAlias (ssh's %k), NULL when unset */
	char *algs[SSH_ALGS_NKINDS];    /* KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms,
					   PubkeyAcceptedAlgorithms as written ("+x", "-y*"),
					   checked; NULL when unset: resolve with
					   ssh_algs_assemble */
	char **unused_keywords;         /* keywords (lower case) the config sets for this
					   host that dispatch does not use; NULL when none */
	/* CanonicalizeHostname (0 no, 1 yes, 2 always) and its companions, as read; the
	 * hostname above is already the canonical one when it applied */
	int canonicalize_hostname;
	char **canonical_domains;
	int canonicalize_max_dots;
	bool canonicalize_fallback_local;
	char **canonicalize_permitted_cnames;

	/* Connection sharing (lib/transport/mux.h) */
	enum ssh_control_master control_master;
	char *control_path;             /* ~, %-tokens (%C included) and ${VAR} expanded;
					   NULL when unset or none */
	int control_persist;            /* -1 no (default), 0 yes (forever), else seconds */

	/* The environment each session carries (ssh's SendEnv and SetEnv) */
	char **send_env;                /* patterns of local variables; NULL when none */
	char **set_env;                 /* "NAME=value", the first line that applies */
};

/* The "NAME=value" list a session sends, as ssh sends it before a command: first
 * the local environment's variables that a SendEnv pattern names (in environ's
 * order), then the SetEnv ones. NULL when none; free with strv_free. The values
 * may be secrets: never log them. */
char **ssh_host_config_env(const struct ssh_host_config *c);

/* The home directory ssh takes ~ and %d from, and reads ~/.ssh/config under: the
 * passwd entry's (getpwuid(getuid())), never $HOME, as ssh; $HOME only where the
 * passwd has no entry for the user (ssh refuses to run there), else "/". Caller frees. */
char *ssh_user_home(void);

/* Every function below takes home, the directory ~ and %d stand for and the default
 * ~/.ssh/config is read under: NULL means ssh_user_home(), as ssh (tests give a
 * directory of their own). Include's ~ is $HOME, as ssh's glob(3) reads it. */

/* Resolve host through the config at path; path NULL means ~/.ssh/config followed by
 * /etc/ssh/ssh_config, as ssh does without -F. A missing default file is fine; a
 * missing explicit file is an error (DPE_INPUT). Syntax errors name file:line. */
int ssh_config_resolve(const char *path, const char *home, const char *host,
		       struct ssh_host_config *out, struct dp_error *err);
void ssh_host_config_release(struct ssh_host_config *c);

/* The concrete Host aliases of a config, following Include, in order, without
 * duplicates; patterns (with * ? or !) are skipped. path NULL means ~/.ssh/config.
 * A missing default file gives an empty list. */
int ssh_config_aliases(const char *path, const char *home, char ***aliases,
		       struct dp_error *err);

/* Resolve a destination as `ssh DEST` does: DEST is an alias or host, `user@host`,
 * `user@host:port` (dispatch's extension; ssh itself wants -p) or
 * `ssh://[user@]host[:port]`. A user or port in DEST wins over the config (as
 * `ssh -l USER -p PORT` does), and %r in IdentityFile then expands to that user. */
int ssh_config_resolve_dest(const char *path, const char *home, const char *dest,
			    struct ssh_host_config *out, struct dp_error *err);

/* Resolve from a config held in memory (name is used in messages). Include lines are
 * checked but not followed, so nothing outside buf is read: for tests and fuzzing. */
int ssh_config_resolve_buffer(const char *name, const char *home, const char *buf, size_t len,
			      const char *host, struct ssh_host_config *out, struct dp_error *err);
int ssh_config_aliases_buffer(const char *name, const char *home, const char *buf, size_t len,
			      char ***aliases, struct dp_error *err);

/* A host or user name as ssh takes one on its command line (OpenSSH's valid_hostname
 * and valid_ruser): one that could reach a shell through %h, %n or %r in ProxyCommand
 * or Match exec is DPE_INPUT, with the character at fault and its position. Every
 * resolution checks the host and the destination's user so, before reading any config. */
int ssh_check_hostname(const char *host, struct dp_error *err);
int ssh_check_user(const char *user, struct dp_error *err);

/* Split `[user@]host[:port]`, `[user@][v6addr]:port` or `ssh://[user@]host[:port][/]`
 * (also a ProxyJump hop). *user is NULL and *port 0 when absent. A bad port, an empty
 * user or host is DPE_INPUT. */
int ssh_parse_destination(const char *dest, char **user, char **host, int *port,
			  struct dp_error *err);

/* The ProxyCommand with %h %n %p %r %% expanded as ssh expands it before running it
 * with `sh -c` (ssh prefixes "exec "); NULL when there is none. Caller frees. */
char *ssh_host_config_proxy_command(const struct ssh_host_config *c);

/* The agent socket to use: NULL when IdentityAgent is none (or no agent is known);
 * else $SSH_AUTH_SOCK when unset or "SSH_AUTH_SOCK", the variable's value for
 * "$VAR", otherwise the (expanded) path. */
const char *ssh_host_config_agent_socket(const struct ssh_host_config *c);

/* The settings dispatch uses for the host, as `ssh -G HOST` prints them: one
 * "keyword value" line each, lower case (identityfile and certificatefile once per
 * file, the algorithm lists assembled over OpenSSH's defaults), then, when the config
 * sets keywords that dispatch does not use, one line "# not used by dispatch: k1 k2". */
void ssh_config_dump(const struct ssh_host_config *c, struct strbuf *sb);

#endif
