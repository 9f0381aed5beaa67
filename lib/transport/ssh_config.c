/* SPDX-License-Identifier: MIT */
/*
 * ssh_config(5) read the way OpenSSH's readconf.c reads it (checked against `ssh -G`
 * by tests/cli/t0400-ssh-config-vs-ssh-G.sh):
 *
 *  - A line is a keyword, then `=` or blanks, then arguments split like ssh's
 *    argv_split(): blanks separate, "double" or 'single' quotes group, a backslash
 *    escapes a quote, a backslash or a blank, and `#` at the start of an argument ends
 *    the line. Keywords are case-insensitive; an unknown keyword is an error (as in
 *    ssh) unless IgnoreUnknown names it.
 *  - `Host` and `Match` start a block. A Host line is active when one of its patterns
 *    matches the host as typed (case-sensitive, * and ?) and none of its !patterns does.
 *    Match is evaluated as ssh's match_cfg_line does: all, host (HostName so far, %h
 *    expanded), originalhost, user (the destination's, else User so far, else the local
 *    one), localuser, exec (run with $SHELL -c, never from a buffer; the tokens of
 *    ssh 9.2's, %C included), canonical and final (true in a second pass over the
 *    files, made when a Match final is seen or CanonicalizeHostname is yes or always),
 *    each negatable; localnetwork, tagged, version, sessiontype and command never match.
 *  - CanonicalizeHostname (yes: direct connections only; always), CanonicalDomains,
 *    CanonicalizeMaxDots, CanonicalizeFallbackLocal and CanonicalizePermittedCNAMEs as
 *    ssh.c applies them after the first pass (through getaddrinfo; never from a
 *    buffer). In the second pass Host and Match host see the host as the first pass
 *    left it: HostName applied, lower case, the canonical name where there is one.
 *  - The first value found wins, except IdentityFile and CertificateFile which
 *    accumulate (duplicates dropped). ProxyJump and ProxyCommand exclude each other: the first one wins.
 *  - Include takes globs, relative to ~/.ssh (user configs) or /etc/ssh (the system
 *    one), and nests at most 16 deep. An included file starts in the includer's state;
 *    when the Include sits in an inactive block, no Host in the included file matches.
 *  - After reading: HostName's %h is the host as typed; the result is lower-cased
 *    (unless an address). IdentityFile, CertificateFile, UserKnownHostsFile and
 *    IdentityAgent get ~ and
 *    the client %-tokens, where %h is the final host name.
 *
 * The home directory is ssh's: ~ (in IdentityFile, CertificateFile, UserKnownHostsFile,
 * IdentityAgent, ControlPath and the defaults), %d and the user config ~/.ssh/config
 * are the passwd entry's home (getpwuid(getuid()), ssh.c and misc.c's tilde_expand),
 * never $HOME; the caller may give another one (tests do). Include alone is ssh's
 * glob(GLOB_TILDE): its ~, and the ~/.ssh a relative Include is read under, are $HOME
 * (the passwd home when HOME is unset or empty), as with glibc's and the BSDs' glob.
 */
#include "transport/ssh_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <strings.h>
#include <arpa/inet.h>
#include <glob.h>
#include <limits.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/termesc.h"

#define MAX_INCLUDE_DEPTH 16    /* ssh's READCONF_MAX_DEPTH */
#define MAX_IDENTITY_FILES 100  /* ssh's SSH_MAX_IDENTITY_FILES */
#define MAX_CERTIFICATE_FILES 100 /* ssh's SSH_MAX_CERTIFICATE_FILES */
#define MAX_HOSTS_FILES 32      /* ssh's SSH_MAX_HOSTS_FILES */
#define WHITESPACE " \t\r\n"

enum {
	CONF_USER = 1 << 0,       /* a user config: relative Includes are under ~/.ssh */
	CONF_CHECKPERM = 1 << 1,  /* refuse a file others can write, as ssh does */
	CONF_NEVERMATCH = 1 << 2, /* included from an inactive block: no Host matches */
};

enum opcode {
	O_IGNORE = 0, O_HOST, O_MATCH, O_INCLUDE, O_HOSTNAME, O_USER, O_PORT, O_IDENTITYFILE,
	O_IDENTITIESONLY, O_IDENTITYAGENT, O_PROXYJUMP, O_PROXYCOMMAND, O_CONNECTTIMEOUT,
	O_SERVERALIVEINTERVAL, O_SERVERALIVECOUNTMAX, O_STRICTHOSTKEYCHECKING,
	O_USERKNOWNHOSTSFILE, O_GLOBALKNOWNHOSTSFILE, O_BATCHMODE, O_HOSTKEYALIAS,
	O_IGNOREUNKNOWN, O_CERTIFICATEFILE, O_KEXALGORITHMS, O_CIPHERS, O_MACS,
	O_HOSTKEYALGORITHMS, O_PUBKEYACCEPTEDALGORITHMS,
	O_CONTROLMASTER, O_CONTROLPATH, O_CONTROLPERSIST, O_SENDENV, O_SETENV,
};

/* Every keyword of OpenSSH's client (up to 10.x, with Debian's GSSAPI key exchange
 * and Apple's UseKeychain): the ones dispatch does not use are accepted and skipped.
 * Sorted (strcmp order) for find_keyword's binary search. */
static const struct keyword {
	const char *name;
	enum opcode op;
} keywords[] = {
	{ "addkeystoagent", O_IGNORE }, { "addressfamily", O_IGNORE },
	{ "afstokenpassing", O_IGNORE }, { "batchmode", O_BATCHMODE },
	{ "bindaddress", O_IGNORE }, { "bindinterface", O_IGNORE },
	{ "canonicaldomains", O_IGNORE }, { "canonicalizefallbacklocal", O_IGNORE },
	{ "canonicalizehostname", O_IGNORE }, { "canonicalizemaxdots", O_IGNORE },
	{ "canonicalizepermittedcnames", O_IGNORE }, { "casignaturealgorithms", O_IGNORE },
	{ "certificatefile", O_CERTIFICATEFILE }, { "challengeresponseauthentication", O_IGNORE },
	{ "channeltimeout", O_IGNORE }, { "checkhostip", O_IGNORE }, { "cipher", O_IGNORE },
	{ "ciphers", O_CIPHERS }, { "clearallforwardings", O_IGNORE },
	{ "compression", O_IGNORE }, { "compressionlevel", O_IGNORE },
	{ "connectionattempts", O_IGNORE }, { "connecttimeout", O_CONNECTTIMEOUT },
	{ "controlmaster", O_CONTROLMASTER }, { "controlpath", O_CONTROLPATH },
	{ "controlpersist", O_CONTROLPERSIST }, { "dsaauthentication", O_IGNORE },
	{ "dynamicforward", O_IGNORE }, { "enableescapecommandline", O_IGNORE },
	{ "enablesshkeysign", O_IGNORE }, { "escapechar", O_IGNORE },
	{ "exitonforwardfailure", O_IGNORE }, { "fallbacktorsh", O_IGNORE },
	{ "fingerprinthash", O_IGNORE }, { "forkafterauthentication", O_IGNORE },
	{ "forwardagent", O_IGNORE }, { "forwardx11", O_IGNORE },
	{ "forwardx11timeout", O_IGNORE }, { "forwardx11trusted", O_IGNORE },
	{ "gatewayports", O_IGNORE }, { "globalknownhostsfile", O_GLOBALKNOWNHOSTSFILE },
	{ "globalknownhostsfile2", O_IGNORE }, { "gssapiauthentication", O_IGNORE },
	{ "gssapiclientidentity", O_IGNORE }, { "gssapidelegatecredentials", O_IGNORE },
	{ "gssapikexalgorithms", O_IGNORE }, { "gssapikeyexchange", O_IGNORE },
	{ "gssapirenewalforcesrekey", O_IGNORE }, { "gssapiserveridentity", O_IGNORE },
	{ "gssapitrustdns", O_IGNORE }, { "hashknownhosts", O_IGNORE }, { "host", O_HOST },
	{ "hostbasedacceptedalgorithms", O_IGNORE }, { "hostbasedauthentication", O_IGNORE },
	{ "hostbasedkeytypes", O_IGNORE }, { "hostkeyalgorithms", O_HOSTKEYALGORITHMS },
	{ "hostkeyalias", O_HOSTKEYALIAS }, { "hostname", O_HOSTNAME },
	{ "identitiesonly", O_IDENTITIESONLY }, { "identityagent", O_IDENTITYAGENT },
	{ "identityfile", O_IDENTITYFILE }, { "identityfile2", O_IDENTITYFILE },
	{ "ignoreunknown", O_IGNOREUNKNOWN }, { "include", O_INCLUDE }, { "ipqos", O_IGNORE },
	{ "kbdinteractiveauthentication", O_IGNORE }, { "kbdinteractivedevices", O_IGNORE },
	{ "keepalive", O_IGNORE }, { "kerberosauthentication", O_IGNORE },
	{ "kerberostgtpassing", O_IGNORE }, { "kexalgorithms", O_KEXALGORITHMS },
	{ "knownhostscommand", O_IGNORE }, { "localcommand", O_IGNORE },
	{ "localforward", O_IGNORE }, { "loglevel", O_IGNORE }, { "logverbose", O_IGNORE },
	{ "macs", O_MACS }, { "match", O_MATCH },
	{ "nohostauthenticationforlocalhost", O_IGNORE },
	{ "numberofpasswordprompts", O_IGNORE }, { "obscurekeystroketiming", O_IGNORE },
	{ "passwordauthentication", O_IGNORE }, { "permitlocalcommand", O_IGNORE },
	{ "permitremoteopen", O_IGNORE }, { "pkcs11provider", O_IGNORE }, { "port", O_PORT },
	{ "preferredauthentications", O_IGNORE }, { "protocol", O_IGNORE },
	{ "proxycommand", O_PROXYCOMMAND }, { "proxyjump", O_PROXYJUMP },
	{ "proxyusefdpass", O_IGNORE }, { "pubkeyacceptedalgorithms", O_PUBKEYACCEPTEDALGORITHMS },
	{ "pubkeyacceptedkeytypes", O_PUBKEYACCEPTEDALGORITHMS }, { "pubkeyauthentication", O_IGNORE },
	{ "refuseconnection", O_IGNORE }, { "rekeylimit", O_IGNORE },
	{ "remotecommand", O_IGNORE }, { "remoteforward", O_IGNORE },
	{ "requesttty", O_IGNORE }, { "requestty", O_IGNORE }, { "requiredrsasize", O_IGNORE },
	{ "revokedhostkeys", O_IGNORE }, { "rhostsauthentication", O_IGNORE },
	{ "rhostsrsaauthentication", O_IGNORE }, { "rsaauthentication", O_IGNORE },
	{ "securitykeyprovider", O_IGNORE }, { "sendenv", O_SENDENV },
	{ "serveralivecountmax", O_SERVERALIVECOUNTMAX },
	{ "serveraliveinterval", O_SERVERALIVEINTERVAL }, { "sessiontype", O_IGNORE },
	{ "setenv", O_SETENV }, { "skeyauthentication", O_IGNORE },
	{ "smartcarddevice", O_IGNORE }, { "stdinnull", O_IGNORE },
	{ "streamlocalbindmask", O_IGNORE }, { "streamlocalbindunlink", O_IGNORE },
	{ "stricthostkeychecking", O_STRICTHOSTKEYCHECKING }, { "syslogfacility", O_IGNORE },
	{ "tag", O_IGNORE }, { "tcpkeepalive", O_IGNORE }, { "tisauthentication", O_IGNORE },
	{ "tunnel", O_IGNORE }, { "tunneldevice", O_IGNORE }, { "updatehostkeys", O_IGNORE },
	{ "usekeychain", O_IGNORE }, { "useprivilegedport", O_IGNORE }, { "user", O_USER },
	{ "userknownhostsfile", O_USERKNOWNHOSTSFILE }, { "userknownhostsfile2", O_IGNORE },
	{ "useroaming", O_IGNORE }, { "usersh", O_IGNORE },
	{ "verifyhostkeydns", O_IGNORE }, { "versionaddendum", O_IGNORE },
	{ "visualhostkey", O_IGNORE }, { "warnweakcrypto", O_IGNORE },
	{ "xauthlocation", O_IGNORE },
};

/* A value and where it was read, for messages about it after parsing. */
struct located {
	char *value;
	char *where; /* "file:line" */
};

/* What the files said, before defaults and expansion. -1 / NULL: not set. */
struct parse {
	const char *host;      /* as typed; NULL when only collecting aliases */
	char ***aliases;       /* collecting aliases (every Host and Include is followed) */
	bool no_include;       /* parsing a buffer: Include is checked, not followed */
	const char *home;      /* ~, %d and ~/.ssh/config: the passwd entry's, as in ssh */
	const char *glob_home; /* ~ in Include: $HOME, as ssh's glob(GLOB_TILDE) takes it */

	struct located hostname;
	char *user;
	int port;
	char **identity_files;
	char **identity_wheres;
	char **certificate_files;
	char **certificate_wheres;
	int identities_only;
	struct located identity_agent;
	char *proxy_jump;      /* the raw value, "none" included */
	char *proxy_command;   /* "none" also when a ProxyJump came first */
	int connect_timeout;
	int server_alive_interval;
	int server_alive_count_max;
	int strict;
	char **user_known_hosts;
	char *user_known_hosts_where;
	char **global_known_hosts;
	int batch_mode;
	char *host_key_alias;
	char *ignore_unknown;
	char *algs[SSH_ALGS_NKINDS];
	char *algs_where[SSH_ALGS_NKINDS];
	char **unused;         /* keywords set for the host that dispatch does not use */
	/* Match evaluation */
	const char *dest_user; /* user@ of the destination (it wins over User, as in ssh) */
	const char *local_user;
	bool final_pass;       /* the second pass ssh makes when a Match final/canonical is seen */
	bool want_final;
	const char *original_host; /* Match originalhost: the host as given */
	/* CanonicalizeHostname and its companions; -1 / NULL: not set */
	int canon;             /* 0 no, 1 yes, 2 always */
	char **canon_domains;
	int canon_maxdots;
	int canon_fallback;
	char **canon_cnames;   /* "sources:targets" rules */

	/* connection sharing (see "ControlMaster, ControlPath, ControlPersist" below) */
	int control_master;
	struct located control_path;   /* raw, "none" included */
	int control_persist;           /* -2 unset, else as ssh_host_config's */

	char **send_env;               /* SendEnv patterns, accumulated ("-PAT" removes) */
	char **set_env;                /* SetEnv: the first active line's NAME=value */
	bool set_env_seen;
};

static void parse_init(struct parse *p)
{
	*p = (struct parse){ .canon = -1, .canon_maxdots = -1, .canon_fallback = -1,
			     .port = -1, .identities_only = -1, .connect_timeout = -1,
			     .server_alive_interval = -1, .server_alive_count_max = -1,
			     .strict = -1, .batch_mode = -1, .control_master = -1,
			     .control_persist = -2 };
}

static void parse_release(struct parse *p)
{
	free(p->hostname.value);
	free(p->hostname.where);
	free(p->user);
	strv_free(p->identity_files);
	strv_free(p->identity_wheres);
	strv_free(p->certificate_files);
	strv_free(p->certificate_wheres);
	free(p->identity_agent.value);
	free(p->identity_agent.where);
	free(p->proxy_jump);
	free(p->proxy_command);
	strv_free(p->user_known_hosts);
	free(p->user_known_hosts_where);
	strv_free(p->global_known_hosts);
	free(p->host_key_alias);
	free(p->ignore_unknown);
	strv_free(p->unused);
	strv_free(p->canon_domains);
	strv_free(p->canon_cnames);
	for (int i = 0; i < SSH_ALGS_NKINDS; i++) {
		free(p->algs[i]);
		free(p->algs_where[i]);
	}
	free(p->control_path.value);
	free(p->control_path.where);
	strv_free(p->send_env);
	strv_free(p->set_env);
}

/* ---- matching ---------------------------------------------------------------- */

/* ssh's match_pattern(): * and ?, case-sensitive; iterative, so no blow-up. */
static bool match_pattern(const char *s, const char *pat)
{
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*pat == '*') {
			star = pat++;
			resume = s;
		} else if (*pat && (*pat == '?' || *pat == *s)) {
			pat++;
			s++;
		} else if (star) {
			pat = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

/* ssh's match_pattern_list() on a lower-case word: comma-separated, !negates. */
static bool match_pattern_list(const char *word, const char *list)
{
	bool positive = false;
	_cleanup_free_ char *copy = xstrdup(list);
	char *save = NULL;
	for (char *pat = strtok_r(copy, ",", &save); pat; pat = strtok_r(NULL, ",", &save)) {
		bool neg = *pat == '!';
		if (neg)
			pat++;
		for (char *c = pat; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (match_pattern(word, pat)) {
			if (neg)
				return false;
			positive = true;
		}
	}
	return positive;
}

/* ---- tokens ------------------------------------------------------------------ */

/* ssh's strdelim(): the next word of *s, splitting at blanks or one `=`; a leading
 * double quote runs to the next one. NULL on an unmatched quote. */
static char *strdelim(char **s)
{
	if (!*s)
		return NULL;
	char *old = *s;
	*s = strpbrk(*s, WHITESPACE "\"=");
	if (!*s)
		return old;
	if (**s == '"') {
		memmove(*s, *s + 1, strlen(*s));
		*s = strpbrk(*s, "\"");
		if (!*s)
			return NULL;
		**s = '\0';
		*s += strspn(*s + 1, WHITESPACE) + 1;
		return old;
	}
	bool equals = **s == '=';
	**s = '\0';
	*s += strspn(*s + 1, WHITESPACE) + 1;
	if (**s == '=' && !equals)
		*s += strspn(*s + 1, WHITESPACE) + 1;
	return old;
}

/* ssh's argv_split(s, ..., terminate_on_comment=1). -1 on an unterminated quote. */
static int split_args(const char *s, char ***out)
{
	char **v = xcalloc(1, sizeof(char *));
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == ' ' || s[i] == '\t')
			continue;
		if (s[i] == '#')
			break;
		char quote = 0;
		struct strbuf arg = STRBUF_INIT;
		for (; s[i]; i++) {
			char c = s[i];
			if (c == '\\') {
				char n = s[i + 1];
				if (n == '\'' || n == '"' || n == '\\' || (!quote && n == ' '))
					c = s[++i];
				strbuf_addch(&arg, c);
			} else if (!quote && (c == ' ' || c == '\t')) {
				break;
			} else if (!quote && (c == '"' || c == '\'')) {
				quote = c;
			} else if (quote && c == quote) {
				quote = 0;
			} else {
				strbuf_addch(&arg, c);
			}
		}
		strv_push(&v, strbuf_detach(&arg));
		if (!s[i]) {
			if (quote) {
				strv_free(v);
				return -1;
			}
			break;
		}
	}
	*out = v;
	return 0;
}

/* ssh's a2port(): 1..65535 or a service name; -1 otherwise. */
static int parse_port(const char *s)
{
	long v;
	if (parse_long(s, 0, 65535, &v))
		return v > 0 ? (int)v : -1;
	struct servent *se = getservbyname(s, "tcp");
	return se ? ntohs((unsigned short)se->s_port) : -1;
}

/* ssh's convtime(): "90", "1m30s", "2h"...; -1 when malformed. */
static long parse_time(const char *s)
{
	long total = 0;
	if (!*s)
		return -1;
	while (*s) {
		if (!isdigit((unsigned char)*s))
			return -1;
		char *end;
		errno = 0;
		long secs = strtol(s, &end, 10);
		if (errno)
			return -1;
		long mult = 1;
		switch (*end) {
		case '\0': break;
		case 's': case 'S': end++; break;
		case 'm': case 'M': mult = 60; end++; break;
		case 'h': case 'H': mult = 3600; end++; break;
		case 'd': case 'D': mult = 86400; end++; break;
		case 'w': case 'W': mult = 604800; end++; break;
		default: return -1;
		}
		if (secs > INT_MAX / mult || total > INT_MAX - secs * mult)
			return -1;
		total += secs * mult;
		s = end;
	}
	return total;
}

static int parse_flag(const char *s)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true"))
		return 1;
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false"))
		return 0;
	return -1;
}

static int parse_strict(const char *s)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true"))
		return SSH_STRICT_YES;
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off"))
		return SSH_STRICT_NO;
	if (!strcasecmp(s, "ask"))
		return SSH_STRICT_ASK;
	if (!strcasecmp(s, "accept-new"))
		return SSH_STRICT_ACCEPT_NEW;
	return -1;
}

/* ---- destinations and ProxyJump hops ----------------------------------------- */

static int parse_host_port(const char *what, char *s, char **host, int *port,
			   struct dp_error *err)
{
	char *p = NULL;
	if (*s == '[') {
		char *close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':' && close[1] != '/'))
			return dp_err(err, DPE_INPUT, "invalid address in '%s'", what);
		*close = '\0';
		s++;
		if (close[1])
			p = close + 2;
	} else if ((p = strpbrk(s, ":/"))) {
		*p++ = '\0';
	}
	if (!*s)
		return dp_err(err, DPE_INPUT, "missing host name in '%s'", what);
	if (p && *p && (*port = parse_port(p)) < 0)
		return dp_err(err, DPE_INPUT, "bad port '%s' in '%s'", p, what);
	*host = xstrdup(s);
	return 0;
}

int ssh_parse_destination(const char *dest, char **user, char **host, int *port,
			  struct dp_error *err)
{
	_cleanup_free_ char *copy = NULL;
	char *s, *at;
	*user = *host = NULL;
	*port = 0;
	if (startswith(dest, "ssh://")) {
		copy = xstrdup(dest + 6);
		s = copy;
		size_t n = strlen(s);
		if (n && s[n - 1] == '/')
			s[n - 1] = '\0';
		if ((at = strchr(s, '@'))) {
			*at = '\0';
			char *params = strchr(s, ';'); /* connection parameters: ignored, as ssh */
			if (params)
				*params = '\0';
		}
	} else {
		copy = xstrdup(dest);
		s = copy;
		at = strrchr(s, '@');
		if (at)
			*at = '\0';
	}
	if (at) {
		if (!*s)
			return dp_err(err, DPE_INPUT, "empty user name in '%s'", dest);
		*user = xstrdup(s);
		s = at + 1;
	}
	if (parse_host_port(dest, s, host, port, err) < 0) {
		free(*user);
		*user = NULL;
		return -1;
	}
	return 0;
}

/* ---- names that reach a shell ------------------------------------------------ */

/* The rules of OpenSSH's valid_hostname() and valid_ruser(), which ssh applies to the
 * host and user it is given before any %-token is expanded: a host name starts with no
 * '-' and holds no blank, no control character and none of '`"$\;&<>|(){},; a user name
 * starts with no '-', holds no control character and none of '`";&<>|(){}, no '-'
 * right after a blank and no '\' at the end. -1 when name passes; else the 0-based
 * index of the first character at fault. */
static ssize_t bad_name_at(const char *name, bool user)
{
	const char *banned = user ? "'`\";&<>|(){}" : "'`\"$\\;&<>|(){},";
	if (*name == '-')
		return 0;
	for (size_t i = 0; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];
		if (iscntrl(c) || strchr(banned, c) || (!user && isspace(c)))
			return (ssize_t)i;
		if (user && isspace(c) && name[i + 1] == '-')
			return (ssize_t)i + 1;
		if (user && c == '\\' && !name[i + 1])
			return (ssize_t)i;
	}
	return -1;
}

static int check_name(const char *name, bool user, struct dp_error *err)
{
	ssize_t at = bad_name_at(name, user);
	if (at < 0)
		return 0;
	unsigned char c = (unsigned char)name[at];
	char what[32];
	if (iscntrl(c))
		snprintf(what, sizeof(what), "control character \\x%02x", c);
	else if (isspace(c))
		snprintf(what, sizeof(what), "a blank");
	else
		snprintf(what, sizeof(what), "'%c'", c);
	_cleanup_free_ char *shown = printable(name);
	const char *kind = user ? "user" : "host";
	return dp_err(err, DPE_INPUT,
		      "invalid %s name '%s': %s at position %zd%s (%s names reach the shell "
		      "of ProxyCommand and Match exec through %s, so ssh refuses such names "
		      "too: give the %s name without it)",
		      kind, shown, what, at + 1,
		      c == '-' ? (at == 0 ? ", at the start" : ", after a blank")
			       : c == '\\' ? ", at the end" : "",
		      kind,
		      user ? "%r" : "%h and %n", kind);
}

int ssh_check_hostname(const char *host, struct dp_error *err)
{
	return check_name(host, false, err);
}

int ssh_check_user(const char *user, struct dp_error *err)
{
	return check_name(user, true, err);
}

/* A hop as `[user@]host[:port]` (ssh -G prints the last one so), IPv6 in brackets. */
static char *normalize_hop(const char *hop)
{
	char *user, *host;
	int port;
	if (ssh_parse_destination(hop, &user, &host, &port, NULL) < 0)
		return xstrdup(hop); /* checked while parsing: cannot happen */
	bool v6 = strchr(host, ':') != NULL;
	struct strbuf sb = STRBUF_INIT;
	if (user)
		strbuf_addf(&sb, "%s@", user);
	strbuf_addf(&sb, v6 ? "[%s]" : "%s", host);
	if (port > 0)
		strbuf_addf(&sb, ":%d", port);
	free(user);
	free(host);
	return strbuf_detach(&sb);
}

/* ---- the reader -------------------------------------------------------------- */

struct ctx {
	struct parse *p;
	const char *file;
	int line;
	struct dp_error *err;
};

_printf_(2, 3) static int conf_err(const struct ctx *c, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dp_err(c->err, DPE_INPUT, "%s:%d: %s", c->file, c->line, msg);
}

static char *where(const struct ctx *c)
{
	return xasprintf("%s:%d", c->file, c->line);
}

static int read_conf_file(struct parse *p, const char *path, int flags, int *active, int depth,
			  struct dp_error *err);

/* ssh's tilde_expand_filename(): ~ and ~/x are the home directory, ~user/x that user's. */
static int expand_tilde(const char *home, const char *path, char **out, struct dp_error *err)
{
	if (path[0] != '~') {
		*out = xstrdup(path);
		return 0;
	}
	const char *slash = strchr(path, '/');
	size_t ulen = slash ? (size_t)(slash - path - 1) : strlen(path + 1);
	const char *dir = home;
	if (ulen) {
		_cleanup_free_ char *name = xstrndup(path + 1, ulen);
		struct passwd *pw = getpwnam(name);
		if (!pw)
			return dp_err(err, DPE_INPUT, "no such user '%s' in '%s'", name, path);
		dir = pw->pw_dir;
	}
	if (!slash || !slash[1]) {
		*out = xstrdup(dir);
		return 0;
	}
	size_t dl = strlen(dir);
	*out = xasprintf("%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", slash + 1);
	return 0;
}

static int do_include(const struct ctx *c, char **args, int flags, int *active, int depth)
{
	for (size_t i = 0; args[i]; i++) {
		if (!*args[i])
			return conf_err(c, "empty argument to 'include'");
		if (c->p->no_include)
			continue;
		_cleanup_free_ char *rel = NULL, *pattern = NULL;
		const char *arg = args[i];
		if (arg[0] != '/' && arg[0] != '~') {
			rel = xasprintf("%s/%s", (flags & CONF_USER) ? "~/.ssh" : "/etc/ssh", arg);
			arg = rel;
		}
		struct dp_error e;
		if (expand_tilde(c->p->glob_home, arg, &pattern, &e) < 0)
			return conf_err(c, "%s", e.msg);
		glob_t gl;
		int r = glob(pattern, 0, NULL, &gl);
		if (r == GLOB_NOMATCH)
			continue;
		if (r != 0) {
			globfree(&gl);
			return conf_err(c, "cannot expand include '%s'", pattern);
		}
		int oactive = *active;
		int ret = 0;
		for (size_t j = 0; j < gl.gl_pathc && ret == 0; j++) {
			int sub = flags | CONF_CHECKPERM | (oactive ? 0 : CONF_NEVERMATCH);
			ret = read_conf_file(c->p, gl.gl_pathv[j], sub, active, depth + 1, c->err);
			*active = oactive; /* a Host in the included file ends there */
		}
		globfree(&gl);
		if (ret < 0)
			return -1;
	}
	return 0;
}

static int do_host(const struct ctx *c, char **args, int flags, int *active)
{
	*active = 0;
	bool never = (flags & CONF_NEVERMATCH) != 0;
	for (size_t i = 0; args[i]; i++) {
		const char *pat = args[i];
		if (!*pat)
			return conf_err(c, "empty pattern in 'host'");
		if (c->p->aliases) {
			if (!strpbrk(pat, "*?!") && !strv_contains(*c->p->aliases, pat))
				strv_add(c->p->aliases, pat);
			continue;
		}
		if (never)
			break;
		bool neg = *pat == '!';
		if (match_pattern(c->p->host, pat + neg)) {
			if (neg) {
				*active = 0;
				break;
			}
			*active = 1;
		}
	}
	return 0;
}

/* ---- Match (evaluated as ssh's match_cfg_line does) ---- */

struct tokens;
static int expand_tokens(const char *in, const struct tokens *t, bool dollar, char **out,
			 const char *what, const char *where_, struct dp_error *err);

/* ssh's match_pattern_list() without lower-casing (Match user, localuser). */
static bool match_list_exact(const char *word, const char *list)
{
	bool positive = false;
	_cleanup_free_ char *copy = xstrdup(list);
	char *save = NULL;
	for (char *pat = strtok_r(copy, ",", &save); pat; pat = strtok_r(NULL, ",", &save)) {
		bool neg = *pat == '!';
		if (match_pattern(word, pat + neg)) {
			if (neg)
				return false;
			positive = true;
		}
	}
	return positive;
}

/* ssh's match_hostname(): the host lower-cased against a pattern list. */
static bool match_host_list(const char *host, const char *list)
{
	_cleanup_free_ char *lower = xstrdup(host);
	for (char *c = lower; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return match_pattern_list(lower, list);
}

/* The host Match host sees: HostName so far (%h expanded), else the host as given. */
static char *match_host_now(const struct parse *p);
/* Match exec's command with its %-tokens expanded as ssh expands them. */
static int match_exec_expand(const struct parse *p, const char *arg, const char *host,
			     const char *port, const char *ruser, char **out, struct dp_error *err);

/* Match exec: the command through $SHELL -c (else /bin/sh), as ssh runs it; true on
 * exit status 0. Never from a buffer (tests, fuzzing): nothing runs there. */
static bool match_exec(const struct parse *p, const char *cmd)
{
	if (p->no_include)
		return false;
	const char *shell = getenv("SHELL");
	if (!shell || !*shell)
		shell = "/bin/sh";
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
		}
		execl(shell, shell, "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int do_match(const struct ctx *c, char **args, int flags, int *active)
{
	static const char *const with_arg[] = { "exec", "host", "localnetwork", "localuser",
						"originalhost", "tagged", "user", "version",
						"sessiontype", "command" };
	struct parse *p = c->p;
	bool evaluate = !(flags & CONF_NEVERMATCH) && !p->aliases && p->host;
	bool result = true;
	int attributes = 0;
	*active = 0;
	for (size_t i = 0; args[i]; i++) {
		const char *a = args[i];
		bool neg = *a == '!';
		a += neg;
		if (!strcasecmp(a, "all")) {
			if (attributes > 1 || args[i + 1])
				return conf_err(c, "match 'all' cannot be combined with other attributes");
			if (neg)
				result = false;
			break;
		}
		attributes++;
		if (!strcasecmp(a, "canonical") || !strcasecmp(a, "final")) {
			if (!strcasecmp(a, "final"))
				p->want_final = true;
			if (p->final_pass == neg)
				result = false;
			continue;
		}
		bool known = false;
		for (size_t k = 0; k < ARRAY_SIZE(with_arg); k++)
			known = known || !strcasecmp(a, with_arg[k]);
		if (!known)
			return conf_err(c, "unsupported match attribute '%s'", a);
		if (!args[i + 1] || !*args[i + 1])
			return conf_err(c, "missing argument to match attribute '%s'", a);
		const char *arg = args[++i];
		if (!evaluate)
			continue;
		const char *ruser = p->dest_user ? p->dest_user : p->user ? p->user : p->local_user;
		bool r = false;
		if (!strcasecmp(a, "host")) {
			_cleanup_free_ char *h = match_host_now(p);
			r = match_host_list(h, arg);
		} else if (!strcasecmp(a, "originalhost")) {
			r = match_host_list(p->original_host ? p->original_host : p->host, arg);
		} else if (!strcasecmp(a, "user")) {
			r = match_list_exact(ruser, arg);
		} else if (!strcasecmp(a, "localuser")) {
			r = match_list_exact(p->local_user, arg);
		} else if (!strcasecmp(a, "exec")) {
			if (!result)
				continue; /* ssh skips the command once the line cannot match */
			_cleanup_free_ char *h = match_host_now(p);
			char port[16];
			snprintf(port, sizeof(port), "%d", p->port > 0 ? p->port : 22);
			_cleanup_free_ char *cmd = NULL;
			struct dp_error e;
			if (match_exec_expand(p, arg, h, port, ruser, &cmd, &e) < 0)
				return conf_err(c, "%s", e.msg);
			r = match_exec(p, cmd);
		} /* localnetwork, tagged, version, sessiontype, command: never match here */
		if (r == neg)
			result = false;
	}
	*active = result && evaluate;
	return 0;
}

/* ProxyJump: each hop is checked; the first active value wins, unless a ProxyCommand
 * (or a ProxyJump) came first. A real jump also shuts out later ProxyCommands. */
static int do_proxy_jump(const struct ctx *c, const char *raw, bool active)
{
	_cleanup_free_ char *value = xstrdup(raw);
	char *hash = strchr(value, '#');
	if (hash)
		*hash = '\0';
	size_t n = strlen(value);
	while (n && strchr(WHITESPACE, value[n - 1]))
		value[--n] = '\0';
	if (strcasecmp(value, "none") != 0) {
		_cleanup_free_ char *copy = xstrdup(value);
		char *save = NULL;
		size_t hops = 0;
		for (char *hop = strtok_r(copy, ",", &save); hop; hop = strtok_r(NULL, ",", &save)) {
			char *user, *host;
			int port;
			struct dp_error e;
			if (ssh_parse_destination(hop, &user, &host, &port, &e) < 0)
				return conf_err(c, "invalid proxyjump '%s': %s", value, e.msg);
			free(user);
			free(host);
			hops++;
		}
		if (!hops || value[0] == ',' || value[n - 1] == ',' || strstr(value, ",,"))
			return conf_err(c, "invalid proxyjump '%s'", value);
	}
	struct parse *p = c->p;
	if (!active || p->proxy_jump || p->proxy_command)
		return 0;
	if (strcasecmp(value, "none") == 0) {
		p->proxy_jump = xstrdup("none");
	} else {
		p->proxy_jump = xstrdup(value);
		p->proxy_command = xstrdup("none");
	}
	return 0;
}

static int known_hosts_list(const struct ctx *c, const char *kw, char **args, bool active,
			    char ***list, char **list_where)
{
	bool empty = *list == NULL;
	size_t n = 0;
	for (size_t i = 0; args[i]; i++) {
		if (!*args[i])
			return conf_err(c, "empty argument to '%s'", kw);
		if (!strcasecmp(args[i], "none") && (i > 0 || args[i + 1]))
			return conf_err(c, "'none' must appear alone in '%s'", kw);
		if (active && empty) {
			if (n >= MAX_HOSTS_FILES)
				return conf_err(c, "too many files in '%s'", kw);
			strv_add(list, args[i]);
			n++;
		}
	}
	if (active && empty && list_where) {
		free(*list_where);
		*list_where = where(c);
	}
	return 0;
}

static void set_str(char **slot, const char *v, bool active)
{
	if (active && !*slot)
		*slot = xstrdup(v);
}

static void set_int(int *slot, long v, bool active)
{
	if (active && *slot == -1)
		*slot = (int)v;
}

static int keyword_cmp(const void *name, const void *k)
{
	return strcmp(name, ((const struct keyword *)k)->name);
}

/* Every line of every config is looked up, for every host resolved (a fan-out resolves
 * each host): a binary search, then, should the table ever be out of order, a scan. */
static const struct keyword *find_keyword(const char *kw)
{
	const struct keyword *key = bsearch(kw, keywords, ARRAY_SIZE(keywords), sizeof(keywords[0]),
					    keyword_cmp);
	for (size_t i = 0; i < ARRAY_SIZE(keywords) && !key; i++)
		if (streq(keywords[i].name, kw))
			key = &keywords[i];
	return key;
}

/* ---- ControlMaster, ControlPath, ControlPersist ------------------------------- */

/* The keywords of connection sharing, read as readconf.c reads them: ControlMaster
 * yes/true, no/false, auto, ask, autoask (any case); ControlPath one word, kept raw
 * until the host is known ("none" in any case: no sharing); ControlPersist yes/true
 * (forever), no/false, or a time, where 0 means yes. The first value wins. */
static int do_control(const struct ctx *c, enum opcode op, const char *kw, const char *arg,
		      bool on)
{
	struct parse *p = c->p;
	long v;
	switch (op) {
	case O_CONTROLMASTER:
		if ((v = parse_flag(arg)) >= 0)
			v = v ? SSH_CONTROL_MASTER_YES : SSH_CONTROL_MASTER_NO;
		else if (!strcasecmp(arg, "auto"))
			v = SSH_CONTROL_MASTER_AUTO;
		else if (!strcasecmp(arg, "ask"))
			v = SSH_CONTROL_MASTER_ASK;
		else if (!strcasecmp(arg, "autoask"))
			v = SSH_CONTROL_MASTER_AUTOASK;
		else
			return conf_err(c, "unsupported value '%s' for '%s' (use yes, no, auto, ask "
					"or autoask)", arg, kw);
		set_int(&p->control_master, v, on);
		break;
	case O_CONTROLPATH:
		if (on && !p->control_path.value) {
			p->control_path.value = xstrdup(arg);
			p->control_path.where = where(c);
		}
		break;
	case O_CONTROLPERSIST:
		if ((v = parse_flag(arg)) >= 0) {
			v = v ? 0 : -1;
		} else if ((v = parse_time(arg)) < 0) {
			return conf_err(c, "bad ControlPersist argument '%s' (use yes, no or a time)",
					arg);
		}
		if (on && p->control_persist == -2)
			p->control_persist = (int)v;
		break;
	default:
		break;
	}
	return 0;
}

/* ---- CanonicalizeHostname and its companions (read here, applied in resolve) ---- */

static int do_canon(const struct ctx *c, const char *kw, char **args, bool on)
{
	struct parse *p = c->p;
	size_t n = strv_len(args);
	if (!n || !*args[0])
		return conf_err(c, "missing argument to '%s'", kw);
	if (!strcmp(kw, "canonicaldomains") || !strcmp(kw, "canonicalizepermittedcnames")) {
		bool cnames = kw[9] == 'i';
		for (size_t i = 0; i < n; i++)
			if (cnames ? !strchr(args[i], ':') || args[i][0] == ':'
				   : strpbrk(args[i], "*?!/:,") != NULL)
				return conf_err(c, "bad %s '%s'", kw, args[i]);
		char ***slot = cnames ? &p->canon_cnames : &p->canon_domains;
		if (on && !*slot && !(n == 1 && !strcasecmp(args[0], "none")))
			for (size_t i = 0; i < n; i++)
				strv_add(slot, args[i]);
		return 0;
	}
	if (n > 1)
		return conf_err(c, "extra arguments at end of line for '%s'", kw);
	const char *a = args[0];
	if (!strcmp(kw, "canonicalizehostname")) {
		int v = !strcasecmp(a, "always") ? 2 : !strcasecmp(a, "yes") || !strcasecmp(a, "true") ? 1
			: !strcasecmp(a, "no") || !strcasecmp(a, "false") ? 0 : -1;
		if (v < 0)
			return conf_err(c, "bad canonicalizehostname '%s'", a);
		set_int(&p->canon, v, on);
	} else if (!strcmp(kw, "canonicalizemaxdots")) {
		char *end;
		long v = strtol(a, &end, 10);
		if (*end || end == a || v < 0 || v > INT_MAX)
			return conf_err(c, "bad canonicalizemaxdots '%s'", a);
		set_int(&p->canon_maxdots, v, on);
	} else if (!strcmp(kw, "canonicalizefallbacklocal")) {
		int v = !strcasecmp(a, "yes") || !strcasecmp(a, "true") ? 1
			: !strcasecmp(a, "no") || !strcasecmp(a, "false") ? 0 : -1;
		if (v < 0)
			return conf_err(c, "bad canonicalizefallbacklocal '%s'", a);
		set_int(&p->canon_fallback, v, on);
	}
	return 0;
}

/* ssh's resolve_canonicalize(): host (lower case, after HostName) tried under each
 * CanonicalDomains entry; the first that resolves is the canonical name (a permitted
 * CNAME followed). NULL: not canonicalized. -1 with an error when nothing resolves and
 * CanonicalizeFallbackLocal is no. */
/* as ssh.c: any ProxyJump, "none" included, makes the connection not direct */
static bool canon_direct(const struct parse *p)
{
	return !p->proxy_jump && (!p->proxy_command || !strcasecmp(p->proxy_command, "none"));
}

/* ssh's check_follow_cname(): the CNAME target when a CanonicalizePermittedCNAMEs rule
 * allows following it from name, else NULL. */
static char *follow_cname(const struct parse *p, const char *name, const char *cname)
{
	if (!cname || !*cname || !strcasecmp(name, cname) || p->canon <= 0 ||
	    (!canon_direct(p) && p->canon != 2))
		return NULL;
	_cleanup_free_ char *lname = xstrdup(name), *lc = xstrdup(cname);
	for (char *q = lname; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	for (char *q = lc; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	for (size_t r = 0; p->canon_cnames && p->canon_cnames[r]; r++) {
		_cleanup_free_ char *rule = xstrdup(p->canon_cnames[r]);
		char *colon = strchr(rule, ':');
		*colon = '\0';
		if (match_pattern_list(lname, rule) && match_pattern_list(lc, colon + 1))
			return xstrdup(lc);
	}
	return NULL;
}

/* Where no canonical name came out and CanonicalizePermittedCNAMEs is set, ssh resolves
 * the bare name before the second pass (a direct connection fails when that fails) and
 * follows a permitted CNAME. */
static int resolve_bare(const struct parse *p, const char *host, char **out, struct dp_error *err)
{
	*out = NULL;
	bool direct = canon_direct(p);
	if (!p->canon_cnames || (!direct && p->canon != 2))
		return 0;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_CANONNAME }, *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
		if (direct)
			return dp_err(err, DPE_NOTFOUND, "could not resolve hostname '%s'", host);
		return 0;
	}
	*out = follow_cname(p, host, res->ai_canonname);
	freeaddrinfo(res);
	return 0;
}

static int canonicalize(const struct parse *p, const char *host, char **out, struct dp_error *err)
{
	*out = NULL;
	bool direct = canon_direct(p);
	if (p->canon <= 0 || (p->canon == 1 && !direct))
		return 0;
	unsigned char buf[sizeof(struct in6_addr)];
	if (inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1)
		return 0;
	size_t len = strlen(host);
	if (len && host[len - 1] == '.') {
		*out = xstrndup(host, len - 1);
		return 0;
	}
	int dots = 0;
	for (const char *s = host; *s; s++)
		dots += *s == '.';
	if (dots > (p->canon_maxdots >= 0 ? p->canon_maxdots : 1))
		return 0;
	for (size_t i = 0; p->canon_domains && p->canon_domains[i]; i++) {
		_cleanup_free_ char *full = xasprintf("%s.%s.", host, p->canon_domains[i]);
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_CANONNAME }, *res = NULL;
		if (getaddrinfo(full, NULL, &hints, &res) != 0 || !res)
			continue;
		full[strlen(full) - 1] = '\0';
		char *cname = follow_cname(p, full, res->ai_canonname);
		freeaddrinfo(res);
		*out = cname ? cname : xstrdup(full);
		return 0;
	}
	if (p->canon_fallback == 0)
		return dp_err(err, DPE_NOTFOUND, "could not resolve host '%s' (not under any of "
			      "CanonicalDomains, and CanonicalizeFallbackLocal is no)", host);
	return 0;
}

/* ---- SendEnv and SetEnv ------------------------------------------------------ */

/* As readconf.c: SendEnv patterns accumulate over every active line, a "-PATTERN"
 * drops those already listed that it matches; SetEnv takes the first active line's
 * NAME=value words (a name repeated on it: the first). */
static int do_env(const struct ctx *c, enum opcode op, char **args, bool on)
{
	struct parse *p = c->p;
	if (op == O_SENDENV) {
		for (size_t i = 0; args[i]; i++) {
			if (!*args[i] || strchr(args[i], '='))
				return conf_err(c, "invalid environment name '%s' in 'sendenv'", args[i]);
			if (!on)
				continue;
			if (args[i][0] != '-') {
				strv_add(&p->send_env, args[i]);
				continue;
			}
			size_t k = 0;
			for (size_t j = 0; p->send_env && p->send_env[j]; j++) {
				if (match_pattern(p->send_env[j], args[i] + 1))
					free(p->send_env[j]);
				else
					p->send_env[k++] = p->send_env[j];
			}
			if (p->send_env)
				p->send_env[k] = NULL;
		}
		return 0;
	}
	bool first = on && !p->set_env_seen;
	for (size_t i = 0; args[i]; i++) {
		const char *eq = strchr(args[i], '=');
		if (!eq)
			return conf_err(c, "invalid 'setenv' '%s' (use NAME=value)", args[i]);
		bool dup = false;
		for (size_t j = 0; p->set_env && p->set_env[j] && !dup; j++)
			dup = !strncmp(p->set_env[j], args[i], (size_t)(eq - args[i]) + 1);
		if (first && !dup)
			strv_add(&p->set_env, args[i]);
	}
	if (on)
		p->set_env_seen = true;
	return 0;
}

/* ---- a file's lines, split once ------------------------------------------------ */

/* A line that says something (blank lines and comments are left out), split as
 * process_line needs it: the same however many hosts are resolved from the file, so
 * a file is split once per process (config_file_lines) and each host's resolution
 * only walks the lines. */
struct conf_line {
	int lineno;
	char *kw;                       /* lower case */
	const struct keyword *key;      /* NULL: not a keyword dispatch knows */
	char *str;                      /* the rest after the keyword; NULL when none */
	char **args;                    /* str's words (split_args), for a known keyword */
	bool bad_quotes;                /* split_args refused str */
};

struct conf_lines {
	struct conf_line *v;
	size_t n;
};

static void split_line(char *line, int lineno, struct conf_lines *out)
{
	size_t len = strlen(line);
	while (len && strchr(WHITESPACE "\f", line[len - 1]))
		line[--len] = '\0';
	char *str = line;
	char *kw = strdelim(&str);
	if (kw && !*kw)
		kw = strdelim(&str);
	if (!kw || !*kw || *kw == '#')
		return;
	for (char *k = kw; *k; k++)
		*k = (char)tolower((unsigned char)*k);
	if (str)
		str += strspn(str, WHITESPACE);
	struct conf_line l = { .lineno = lineno, .kw = xstrdup(kw),
			       .str = str && *str ? xstrdup(str) : NULL };
	l.key = l.str ? find_keyword(l.kw) : NULL;
	if (l.key)
		l.bad_quotes = split_args(l.str, &l.args) < 0;
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n++] = l;
}

static void split_lines(const char *buf, size_t len, struct conf_lines *out)
{
	const char *end = buf + len;
	int lineno = 0;
	*out = (struct conf_lines){ 0 };
	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		size_t n = nl ? (size_t)(nl - buf) : (size_t)(end - buf);
		_cleanup_free_ char *line = xstrndup(buf, n);
		split_line(line, ++lineno, out);
		buf += n + (nl ? 1 : 0);
	}
}

static void conf_lines_release(struct conf_lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].kw);
		free(l->v[i].str);
		strv_free(l->v[i].args);
	}
	free(l->v);
	*l = (struct conf_lines){ 0 };
}

/* The files split so far in this process, by path and contents (a file is read
 * again for each host, which costs little next to splitting it, and split again when
 * its bytes changed); never freed, so a caller's pointer stays good. */
struct conf_file {
	char *path;
	char *text;
	size_t len;
	struct conf_lines lines;
	struct conf_file *next;
};
static pthread_mutex_t conf_files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conf_file *conf_files;

/* path's lines, split on first use; NULL with errno when unreadable. */
static const struct conf_lines *config_file_lines(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	if (!text)
		return NULL;
	const struct conf_lines *found = NULL;
	pthread_mutex_lock(&conf_files_lock);
	for (struct conf_file *f = conf_files; f && !found; f = f->next)
		if (f->len == len && streq(f->path, path) && memcmp(f->text, text, len) == 0)
			found = &f->lines;
	pthread_mutex_unlock(&conf_files_lock);
	if (found) {
		free(text);
		return found;
	}
	struct conf_file *f = xcalloc(1, sizeof(*f));
	*f = (struct conf_file){ .path = xstrdup(path), .text = text, .len = len };
	split_lines(text, len, &f->lines);
	pthread_mutex_lock(&conf_files_lock);
	f->next = conf_files;
	conf_files = f;
	pthread_mutex_unlock(&conf_files_lock);
	return &f->lines;
}

static int process_line(struct ctx *c, const struct conf_line *l, int flags, int *active, int depth)
{
	struct parse *p = c->p;
	const char *kw = l->kw, *str = l->str;
	if (!str)
		return conf_err(c, "no argument after keyword '%s'", kw);

	const struct keyword *key = l->key;
	if (!key) {
		if (p->ignore_unknown && match_pattern_list(kw, p->ignore_unknown))
			return 0;
		const char *names[ARRAY_SIZE(keywords)];
		for (size_t i = 0; i < ARRAY_SIZE(keywords); i++)
			names[i] = keywords[i].name;
		const char *hint = suggest_word(kw, names, ARRAY_SIZE(keywords));
		if (hint)
			return conf_err(c, "bad configuration option '%s' (did you mean '%s'?)", kw,
					hint);
		return conf_err(c, "bad configuration option '%s'", kw);
	}

	if (l->bad_quotes)
		return conf_err(c, "invalid quotes");
	char **args = l->args;
	size_t nargs = strv_len(args);
	if (key->op == O_IGNORE && !strncmp(kw, "canonical", 9))
		return do_canon(c, kw, args, *active && !p->aliases);
	if (key->op == O_IGNORE) {
		/* remembered for 'hosts resolve', so that nothing is dropped silently */
		if (*active && !p->aliases && !strv_contains(p->unused, kw))
			strv_add(&p->unused, kw);
		return 0;
	}
	if (key->op == O_HOST)
		return do_host(c, args, flags, active);
	if (key->op == O_MATCH)
		return do_match(c, args, flags, active);
	if (key->op == O_INCLUDE)
		return do_include(c, args, flags, active, depth);

	bool on = *active && !p->aliases;
	if (key->op == O_PROXYCOMMAND) { /* the raw rest of the line, comments included */
		set_str(&p->proxy_command, str + strspn(str, WHITESPACE "="), on);
		return 0;
	}
	if (key->op == O_PROXYJUMP) {
		if (!nargs || !*args[0])
			return conf_err(c, "missing argument to 'proxyjump'");
		return do_proxy_jump(c, str + strspn(str, WHITESPACE "="), on);
	}
	if (key->op == O_USERKNOWNHOSTSFILE)
		return known_hosts_list(c, kw, args, on, &p->user_known_hosts,
					&p->user_known_hosts_where);
	if (key->op == O_GLOBALKNOWNHOSTSFILE)
		return known_hosts_list(c, kw, args, on, &p->global_known_hosts, NULL);
	if (key->op == O_SENDENV || key->op == O_SETENV)
		return do_env(c, key->op, args, on);

	/* The rest take exactly one argument. */
	if (!nargs || !*args[0])
		return conf_err(c, "missing argument to '%s'", kw);
	if (nargs > 1)
		return conf_err(c, "extra arguments at end of line for '%s'", kw);
	const char *arg = args[0];
	long v;
	switch (key->op) {
	case O_HOSTNAME:
		if (on && !p->hostname.value) {
			p->hostname.value = xstrdup(arg);
			p->hostname.where = where(c);
		}
		break;
	case O_USER:
		set_str(&p->user, arg, on);
		break;
	case O_HOSTKEYALIAS:
		set_str(&p->host_key_alias, arg, on);
		break;
	case O_IGNOREUNKNOWN: /* collecting aliases: whatever the block, to stay lenient */
		set_str(&p->ignore_unknown, arg, *active || p->aliases);
		break;
	case O_PORT:
		if ((v = parse_port(arg)) < 0)
			return conf_err(c, "bad port '%s'", arg);
		set_int(&p->port, v, on);
		break;
	case O_IDENTITYFILE:
		if (!on || strv_contains(p->identity_files, arg))
			break;
		if (strv_len(p->identity_files) >= MAX_IDENTITY_FILES)
			return conf_err(c, "too many identity files (at most %d)", MAX_IDENTITY_FILES);
		strv_add(&p->identity_files, arg);
		strv_push(&p->identity_wheres, where(c));
		break;
	case O_CERTIFICATEFILE:
		if (!on || strv_contains(p->certificate_files, arg))
			break;
		if (strv_len(p->certificate_files) >= MAX_CERTIFICATE_FILES)
			return conf_err(c, "too many certificate files (at most %d)",
					MAX_CERTIFICATE_FILES);
		strv_add(&p->certificate_files, arg);
		strv_push(&p->certificate_wheres, where(c));
		break;
	case O_IDENTITYAGENT:
		if (strstr(arg, "${") && !strchr(strstr(arg, "${"), '}'))
			return conf_err(c, "invalid environment expansion '%s'", arg);
		if (on && !p->identity_agent.value) {
			p->identity_agent.value = xstrdup(arg);
			p->identity_agent.where = where(c);
		}
		break;
	case O_IDENTITIESONLY:
	case O_BATCHMODE:
		if ((v = parse_flag(arg)) < 0)
			return conf_err(c, "unsupported value '%s' for '%s' (use yes or no)", arg, kw);
		set_int(key->op == O_BATCHMODE ? &p->batch_mode : &p->identities_only, v, on);
		break;
	case O_STRICTHOSTKEYCHECKING:
		if ((v = parse_strict(arg)) < 0)
			return conf_err(c, "unsupported value '%s' for '%s' (use yes, accept-new, "
					"no or ask)", arg, kw);
		set_int(&p->strict, v, on);
		break;
	case O_CONNECTTIMEOUT:
	case O_SERVERALIVEINTERVAL:
		if (streq(arg, "none"))
			break; /* as ssh: none leaves it unset */
		if ((v = parse_time(arg)) < 0)
			return conf_err(c, "invalid time value '%s' for '%s'", arg, kw);
		set_int(key->op == O_CONNECTTIMEOUT ? &p->connect_timeout
						    : &p->server_alive_interval, v, on);
		break;
	case O_KEXALGORITHMS:
	case O_CIPHERS:
	case O_MACS:
	case O_HOSTKEYALGORITHMS:
	case O_PUBKEYACCEPTEDALGORITHMS: {
		enum ssh_algs_kind k = key->op == O_KEXALGORITHMS ? SSH_ALGS_KEX :
				       key->op == O_CIPHERS ? SSH_ALGS_CIPHERS :
				       key->op == O_MACS ? SSH_ALGS_MACS :
				       key->op == O_HOSTKEYALGORITHMS ? SSH_ALGS_HOSTKEY : SSH_ALGS_PUBKEY;
		_cleanup_free_ char *bad = NULL;
		if (!ssh_algs_valid(k, arg, &bad))
			return *bad ? conf_err(c, "bad %s '%s': unknown algorithm '%s'",
					       ssh_algs_keyword(k), arg, bad)
				    : conf_err(c, "bad %s '%s': no algorithm named",
					       ssh_algs_keyword(k), arg);
		if (on && !p->algs[k]) {
			p->algs[k] = xstrdup(arg);
			p->algs_where[k] = where(c);
		}
		break;
	}
	case O_CONTROLMASTER:
	case O_CONTROLPATH:
	case O_CONTROLPERSIST:
		return do_control(c, key->op, kw, arg, on);
	case O_SERVERALIVECOUNTMAX:
		if (!parse_long(arg, 0, INT_MAX, &v))
			return conf_err(c, "invalid number '%s' for '%s'", arg, kw);
		set_int(&p->server_alive_count_max, v, on);
		break;
	default:
		break;
	}
	return 0;
}

static int process_lines(struct parse *p, const char *name, const struct conf_lines *lines,
			 int flags, int *active, int depth, struct dp_error *err)
{
	struct ctx c = { .p = p, .file = name, .err = err };
	for (size_t i = 0; i < lines->n; i++) {
		c.line = lines->v[i].lineno;
		if (process_line(&c, &lines->v[i], flags, active, depth) < 0)
			return -1;
	}
	return 0;
}

static int read_conf_buffer(struct parse *p, const char *name, const char *buf, size_t len,
			    int flags, int *active, int depth, struct dp_error *err)
{
	struct conf_lines lines;
	split_lines(buf, len, &lines);
	int r = process_lines(p, name, &lines, flags, active, depth, err);
	conf_lines_release(&lines);
	return r;
}

/* 0 when read, 1 when it does not exist, -1 on error. */
static int read_conf_file(struct parse *p, const char *path, int flags, int *active, int depth,
			  struct dp_error *err)
{
	if (depth > MAX_INCLUDE_DEPTH)
		return dp_err(err, DPE_INPUT, "%s: too many nested includes (at most %d)", path,
			      MAX_INCLUDE_DEPTH);
	struct stat st;
	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			return 1;
		return dp_err(err, DPE_INPUT, "cannot read ssh config '%s': %s", path,
			      strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return 0; /* ssh reads nothing from a directory */
	if ((flags & CONF_CHECKPERM) && ((st.st_uid != 0 && st.st_uid != getuid()) ||
					 (st.st_mode & 022)))
		return dp_err(err, DPE_INPUT,
			      "bad owner or permissions on '%s' (ssh refuses it too: chmod go-w)",
			      path);
	const struct conf_lines *lines = config_file_lines(path);
	if (!lines) {
		if (errno == ENOENT)
			return 1;
		return dp_err(err, DPE_INPUT, "cannot read ssh config '%s': %s", path,
			      strerror(errno));
	}
	return process_lines(p, path, lines, flags, active, depth, err);
}

/* ---- expansion and defaults -------------------------------------------------- */

struct tokens {
	const char *h, *n, *p, *r, *u, *d, *l, *L, *i, *k, *j;
	const char *C; /* ControlPath only */
};

/* ssh's percent/dollar expansion: %x from t (NULL entries are unknown), %%, ${VAR}.
 * Errors start "WHERE: WHAT 'IN': ", or "WHAT 'IN': " where where_ is NULL (the caller
 * says where). */
static int expand_tokens(const char *in, const struct tokens *t, bool dollar, char **out,
			 const char *what, const char *where_, struct dp_error *err)
{
	const char *sep = where_ ? ": " : "";
	if (!where_)
		where_ = "";
	struct strbuf sb = STRBUF_INIT;
	for (const char *s = in; *s; s++) {
		if (dollar && s[0] == '$' && s[1] == '{') {
			const char *close = strchr(s + 2, '}');
			if (!close) {
				strbuf_release(&sb);
				return dp_err(err, DPE_INPUT, "%s%s%s '%s': unterminated '${'",
					      where_, sep, what, in);
			}
			_cleanup_free_ char *name = xstrndup(s + 2, (size_t)(close - s - 2));
			const char *val = getenv(name);
			if (!val) {
				strbuf_release(&sb);
				return dp_err(err, DPE_INPUT,
					      "%s%s%s '%s': environment variable '%s' is not set",
					      where_, sep, what, in, name);
			}
			strbuf_adds(&sb, val);
			s = close;
			continue;
		}
		if (*s != '%') {
			strbuf_addch(&sb, *s);
			continue;
		}
		const char *val = NULL;
		switch (s[1]) {
		case '%': val = "%"; break;
		case 'h': val = t->h; break;
		case 'n': val = t->n; break;
		case 'p': val = t->p; break;
		case 'r': val = t->r; break;
		case 'u': val = t->u; break;
		case 'd': val = t->d; break;
		case 'l': val = t->l; break;
		case 'L': val = t->L; break;
		case 'i': val = t->i; break;
		case 'k': val = t->k; break;
		case 'j': val = t->j; break;
		case 'C': val = t->C; break;
		default: break;
		}
		if (!val) {
			strbuf_release(&sb);
			if (!s[1])
				return dp_err(err, DPE_INPUT, "%s%s%s '%s': '%%' at the end", where_,
					      sep, what, in);
			return dp_err(err, DPE_INPUT, "%s%s%s '%s': unknown token '%%%c'", where_,
				      sep, what, in, s[1]);
		}
		strbuf_adds(&sb, val);
		s++;
	}
	*out = strbuf_detach(&sb);
	return 0;
}

static int expand_path(const char *in, const struct tokens *t, const char *home, char **out,
		       const char *what, const char *where_, struct dp_error *err)
{
	_cleanup_free_ char *tilde = NULL;
	struct dp_error e;
	if (expand_tilde(home, in, &tilde, &e) < 0)
		return dp_err(err, DPE_INPUT, "%s: %s: %s", where_, what, e.msg);
	return expand_tokens(tilde, t, true, out, what, where_, err);
}

static bool is_address(const char *host)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_family = AF_UNSPEC };
	struct addrinfo *ai = NULL;
	if (getaddrinfo(host, NULL, &hints, &ai) != 0)
		return false;
	freeaddrinfo(ai);
	return true;
}

static char *match_host_now(const struct parse *p)
{
	char *out = NULL;
	struct dp_error e;
	if (!p->hostname.value)
		return xstrdup(p->host);
	if (p->final_pass)
		return xstrdup(p->hostname.value);
	struct tokens t = { .h = p->host };
	if (expand_tokens(p->hostname.value, &t, false, &out, "hostname", p->hostname.where, &e) < 0)
		return xstrdup(p->hostname.value);
	return out;
}

/* %C: the SHA-1 of %l%h%p%r in hex, as OpenSSH 9.2 names a connection (ControlPath,
 * Match exec). 9.6 and later also hash the ProxyJump in (%l%h%p%r%j). */
static int connection_hash(const char *l, const char *h, const char *p, const char *r,
			   char hex[2 * EVP_MAX_MD_SIZE + 1], struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf lhpr = STRBUF_INIT;
	strbuf_addf(&lhpr, "%s%s%s%s", l, h, p, r);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	hex[0] = '\0';
	if (!EVP_Digest(lhpr.buf, lhpr.len, md, &mdlen, EVP_sha1(), NULL))
		return dp_err(err, DPE_FAIL, "cannot expand %%C: no SHA-1 in libcrypto");
	for (unsigned i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

static int match_exec_expand(const struct parse *p, const char *arg, const char *host,
			     const char *port, const char *ruser, char **out, struct dp_error *err)
{
	char lhost[256] = "", shost[256];
	if (gethostname(lhost, sizeof(lhost) - 1) < 0)
		lhost[0] = '\0';
	snprintf(shost, sizeof(shost), "%.*s", (int)strcspn(lhost, "."), lhost);
	char uid[32];
	snprintf(uid, sizeof(uid), "%lu", (unsigned long)getuid());
	char hash[2 * EVP_MAX_MD_SIZE + 1];
	if (connection_hash(lhost, host, port, ruser, hash, err) < 0)
		return -1;
	struct tokens t = { .h = host, .n = p->original_host, .p = port, .r = ruser,
			    .u = p->local_user,
			    .d = p->home, .l = lhost, .L = shost, .i = uid,
			    .k = p->host_key_alias ? p->host_key_alias : host, .C = hash };
	return expand_tokens(arg, &t, false, out, "match exec", NULL, err);
}

/* The passwd entry of the user running this: its name or its home directory (dir),
 * NULL when there is none. getpwuid_r: resolutions run in several threads at once. */
static char *passwd_field(bool dir)
{
	long max = sysconf(_SC_GETPW_R_SIZE_MAX);
	size_t size = max > 0 ? (size_t)max : 16384;
	for (;;) {
		_cleanup_free_ char *buf = xmalloc(size);
		struct passwd pwd, *pw = NULL;
		int r = getpwuid_r(getuid(), &pwd, buf, size, &pw);
		if (r == ERANGE && size < (1u << 20)) {
			size *= 2;
			continue;
		}
		const char *v = r == 0 && pw ? (dir ? pw->pw_dir : pw->pw_name) : NULL;
		return v && *v ? xstrdup(v) : NULL;
	}
}

static char *local_user(void)
{
	char *name = passwd_field(false);
	if (name)
		return name;
	const char *u = getenv("USER");
	if (!u || !*u)
		u = getenv("LOGNAME");
	return xstrdup(u && *u ? u : "unknown");
}

char *ssh_user_home(void)
{
	char *dir = passwd_field(true);
	if (dir)
		return dir;
	/* No entry (a container run under a uid of its own): ssh refuses to start there
	 * ("No user exists for uid"); $HOME is the next best thing. */
	const char *h = getenv("HOME");
	return xstrdup(h && *h ? h : "/");
}

/* The home a caller gave, else ssh's; and the one Include's glob reads: $HOME, else
 * that home. *own is what to free. */
static void set_homes(struct parse *p, const char *home, char **own)
{
	*own = home ? NULL : ssh_user_home();
	p->home = home ? home : *own;
	const char *h = getenv("HOME");
	p->glob_home = h && *h ? h : p->home;
}

/* ControlPath as ssh.c expands it once the host is known: ~, then the tokens, where
 * (OpenSSH 9.2, checked with ssh -G) %k is HostKeyAlias or the host as typed and %C
 * the SHA-1 of "%l%h%p%r" in hex. OpenSSH 9.6 and later also hash the ProxyJump in
 * (%l%h%p%r%j): with those and a jump, the socket found here is not theirs and
 * dispatch connects directly. */
static int finish_control(const struct parse *p, const char *host, const struct tokens *t,
			  struct ssh_host_config *c, struct dp_error *err)
{
	c->control_master = p->control_master >= 0 ? (enum ssh_control_master)p->control_master
						   : SSH_CONTROL_MASTER_NO;
	c->control_persist = p->control_persist != -2 ? p->control_persist : -1;
	const char *raw = p->control_path.value;
	if (!raw || !strcasecmp(raw, "none"))
		return 0;
	char hash[2 * EVP_MAX_MD_SIZE + 1];
	if (connection_hash(t->l, t->h, t->p, t->r, hash, err) < 0)
		return -1;
	struct tokens ct = *t;
	ct.C = hash;
	ct.k = c->host_key_alias ? c->host_key_alias : host;
	return expand_path(raw, &ct, p->home, &c->control_path, "controlpath",
			   p->control_path.where, err);
}

static int finish(struct parse *p, const char *host, const char *dest_user, int dest_port,
		  struct ssh_host_config *out, struct dp_error *err)
{
	static const char *const default_ids[] = {
		"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk", "~/.ssh/id_ed25519",
		"~/.ssh/id_ed25519_sk", "~/.ssh/id_xmss", "~/.ssh/id_dsa",
	};
	struct ssh_host_config c = { 0 };
	_cleanup_free_ char *luser = NULL, *shost = NULL, *jhost = NULL;
	c.alias = xstrdup(host);
	if (p->hostname.value) {
		struct tokens t = { .h = host };
		if (expand_tokens(p->hostname.value, &t, false, &c.hostname, "hostname",
				  p->hostname.where, err) < 0)
			goto fail;
	} else {
		c.hostname = xstrdup(host);
	}
	if (!is_address(c.hostname))
		for (char *s = c.hostname; *s; s++)
			*s = (char)tolower((unsigned char)*s);
	c.user = dest_user ? xstrdup(dest_user) : p->user ? xstrdup(p->user) : local_user();
	c.port = dest_port > 0 ? dest_port : p->port > 0 ? p->port : 22;
	c.identities_only = p->identities_only == 1;
	c.batch_mode = p->batch_mode == 1;
	c.connect_timeout = p->connect_timeout > 0 ? p->connect_timeout : 0;
	c.server_alive_interval = p->server_alive_interval >= 0 ? p->server_alive_interval
				  : c.batch_mode ? 300 : 0; /* ssh's default in batch mode */
	c.server_alive_count_max = p->server_alive_count_max >= 0 ? p->server_alive_count_max : 3;
	c.strict_host_key_checking = p->strict >= 0 ? (enum ssh_strict_hostkey)p->strict
						    : SSH_STRICT_ASK;
	c.host_key_alias = p->host_key_alias ? xstrdup(p->host_key_alias) : NULL;
	c.unused_keywords = strv_copy(p->unused);
	c.canonicalize_hostname = p->canon > 0 ? p->canon : 0;
	c.canonical_domains = strv_copy(p->canon_domains);
	c.canonicalize_max_dots = p->canon_maxdots >= 0 ? p->canon_maxdots : 1;
	c.canonicalize_fallback_local = p->canon_fallback != 0;
	c.canonicalize_permitted_cnames = strv_copy(p->canon_cnames);
	if (p->proxy_command && !streq(p->proxy_command, "none"))
		c.proxy_command = xstrdup(p->proxy_command);
	for (int k = 0; k < SSH_ALGS_NKINDS; k++) {
		if (!p->algs[k])
			continue;
		/* as ssh: a list that leaves nothing of OpenSSH's is an error */
		_cleanup_free_ char *list = ssh_algs_assemble(k, p->algs[k],
							      ssh_algs_openssh_default(k));
		if (!list) {
			dp_err(err, DPE_INPUT, "%s: %s '%s' leaves no algorithm", p->algs_where[k],
			       ssh_algs_keyword(k), p->algs[k]);
			goto fail;
		}
		c.algs[k] = xstrdup(p->algs[k]);
	}
	if (p->proxy_jump && strcasecmp(p->proxy_jump, "none") != 0) {
		_cleanup_free_ char *copy = xstrdup(p->proxy_jump);
		char *save = NULL;
		for (char *hop = strtok_r(copy, ",", &save); hop; hop = strtok_r(NULL, ",", &save))
			strv_push(&c.proxy_jump, normalize_hop(hop));
	}

	/* The client tokens, as ssh sets them up once the host is known. */
	char port[16], uid[32], lhost[256] = "";
	snprintf(port, sizeof(port), "%d", c.port);
	snprintf(uid, sizeof(uid), "%lu", (unsigned long)getuid());
	if (gethostname(lhost, sizeof(lhost) - 1) != 0)
		lhost[0] = '\0';
	luser = local_user();
	shost = xstrndup(lhost, strcspn(lhost, "."));
	if (c.proxy_jump) {
		char *ju, *jh;
		int jp;
		if (ssh_parse_destination(c.proxy_jump[strv_len(c.proxy_jump) - 1], &ju, &jh, &jp,
					  NULL) == 0) {
			free(ju);
			jhost = jh;
		}
	}
	struct tokens t = { .h = c.hostname, .n = host, .p = port, .r = c.user, .u = luser,
			    .d = p->home, .l = lhost, .L = shost, .i = uid,
			    .k = c.host_key_alias ? c.host_key_alias : c.hostname,
			    .j = jhost ? jhost : "" };

	c.identity_files_set = p->identity_files != NULL;
	if (c.identity_files_set) {
		for (size_t i = 0; p->identity_files[i]; i++) {
			char *x;
			if (expand_path(p->identity_files[i], &t, p->home, &x, "identityfile",
					p->identity_wheres[i], err) < 0)
				goto fail;
			strv_push(&c.identity_files, x);
		}
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(default_ids); i++) {
			char *x;
			if (expand_path(default_ids[i], &t, p->home, &x, "identityfile", "default",
					err) < 0)
				goto fail;
			strv_push(&c.identity_files, x);
		}
	}
	for (size_t i = 0; p->certificate_files && p->certificate_files[i]; i++) {
		char *x;
		if (expand_path(p->certificate_files[i], &t, p->home, &x, "certificatefile",
				p->certificate_wheres[i], err) < 0)
			goto fail;
		strv_push(&c.certificate_files, x);
	}
	if (p->user_known_hosts) {
		for (size_t i = 0; p->user_known_hosts[i]; i++) {
			char *x;
			if (expand_path(p->user_known_hosts[i], &t, p->home, &x,
					"userknownhostsfile", p->user_known_hosts_where, err) < 0)
				goto fail;
			strv_push(&c.user_known_hosts_files, x);
		}
	} else {
		strv_push(&c.user_known_hosts_files, xasprintf("%s/.ssh/known_hosts", p->home));
		strv_push(&c.user_known_hosts_files, xasprintf("%s/.ssh/known_hosts2", p->home));
	}
	if (p->global_known_hosts) {
		c.global_known_hosts_files = strv_copy(p->global_known_hosts);
	} else {
		strv_add(&c.global_known_hosts_files, "/etc/ssh/ssh_known_hosts");
		strv_add(&c.global_known_hosts_files, "/etc/ssh/ssh_known_hosts2");
	}
	if (p->identity_agent.value &&
	    expand_path(p->identity_agent.value, &t, p->home, &c.identity_agent,
			"identityagent", p->identity_agent.where, err) < 0)
		goto fail;
	if (finish_control(p, host, &t, &c, err) < 0)
		goto fail;
	c.send_env = strv_copy(p->send_env);
	c.set_env = strv_copy(p->set_env);
	*out = c;
	return 0;
fail:
	ssh_host_config_release(&c);
	return -1;
}

void ssh_host_config_release(struct ssh_host_config *c)
{
	free(c->alias);
	free(c->hostname);
	free(c->user);
	strv_free(c->identity_files);
	strv_free(c->certificate_files);
	free(c->identity_agent);
	strv_free(c->proxy_jump);
	free(c->proxy_command);
	strv_free(c->user_known_hosts_files);
	strv_free(c->global_known_hosts_files);
	free(c->host_key_alias);
	strv_free(c->unused_keywords);
	strv_free(c->canonical_domains);
	strv_free(c->canonicalize_permitted_cnames);
	for (int k = 0; k < SSH_ALGS_NKINDS; k++)
		free(c->algs[k]);
	free(c->control_path);
	strv_free(c->send_env);
	strv_free(c->set_env);
	*c = (struct ssh_host_config){ 0 };
}

/* Read the config for one host (or for its aliases): path, or the default files. */
static int read_configs(struct parse *p, const char *path, struct dp_error *err,
			bool with_system)
{
	int active = 1;
	if (path) {
		int r = read_conf_file(p, path, CONF_USER, &active, 0, err);
		if (r == 1)
			return dp_err(err, DPE_INPUT, "cannot read ssh config '%s': %s", path,
				      strerror(ENOENT));
		return r;
	}
	_cleanup_free_ char *user_conf = xasprintf("%s/.ssh/config", p->home);
	if (read_conf_file(p, user_conf, CONF_USER | CONF_CHECKPERM, &active, 0, err) < 0)
		return -1;
	if (!with_system)
		return 0;
	active = 1;
	return read_conf_file(p, "/etc/ssh/ssh_config", 0, &active, 0, err) < 0 ? -1 : 0;
}

static int resolve(const char *path, const char *home, const char *buf, size_t len,
		   const char *host, const char *user, int port, struct ssh_host_config *out,
		   struct dp_error *err)
{
	*out = (struct ssh_host_config){ 0 };
	if (!host || !*host)
		return dp_err(err, DPE_INPUT, "empty host name");
	/* Before any %-token: the host and user given here reach Match exec's shell. */
	if (ssh_check_hostname(host, err) < 0 || (user && ssh_check_user(user, err) < 0))
		return -1;
	struct parse p;
	parse_init(&p);
	_cleanup_free_ char *own_home = NULL;
	set_homes(&p, home, &own_home);
	p.host = host;
	_cleanup_free_ char *luser = local_user();
	p.local_user = luser;
	p.dest_user = user;
	p.original_host = host;
	_cleanup_free_ char *final_host = NULL;
	int r;
	/* As ssh.c's main(): with CanonicalizeHostname yes or always (whether or not the
	 * name canonicalized), or a Match final, the config is read a second time. Host
	 * and Match host then see the host as the first pass left it (HostName applied,
	 * lower case, canonicalized where it did), HostName is that, and first values
	 * still win. */
	for (int pass = 0; pass < 2; pass++) {
		if (buf) {
			int active = 1;
			p.no_include = true;
			r = read_conf_buffer(&p, path, buf, len, CONF_USER, &active, 0, err);
		} else {
			r = read_configs(&p, path, err, true);
		}
		if (r < 0 || p.final_pass)
			break;
		_cleanup_free_ char *h = match_host_now(&p), *canonical = NULL;
		if (!is_address(h))
			for (char *q = h; *q; q++)
				*q = (char)tolower((unsigned char)*q);
		if (!buf && (r = canonicalize(&p, h, &canonical, err)) < 0)
			break;
		if (!buf && !canonical && (r = resolve_bare(&p, h, &canonical, err)) < 0)
			break;
		if (p.canon <= 0 && !p.want_final)
			break;
		p.final_pass = true;
		final_host = canonical ? canonical : h;
		if (canonical)
			canonical = NULL;
		else
			h = NULL;
		p.host = final_host;
		if (!p.hostname.value)
			p.hostname.where = xstrdup("(the host)");
		free(p.hostname.value);
		p.hostname.value = xstrdup(final_host);
	}
	if (r == 0)
		r = finish(&p, host, user, port, out, err);
	parse_release(&p);
	return r;
}

int ssh_config_resolve(const char *path, const char *home, const char *host,
		       struct ssh_host_config *out, struct dp_error *err)
{
	return resolve(path, home, NULL, 0, host, NULL, 0, out, err);
}

int ssh_config_resolve_dest(const char *path, const char *home, const char *dest,
			    struct ssh_host_config *out, struct dp_error *err)
{
	_cleanup_free_ char *user = NULL, *host = NULL;
	int port;
	*out = (struct ssh_host_config){ 0 };
	if (ssh_parse_destination(dest, &user, &host, &port, err) < 0)
		return -1;
	return resolve(path, home, NULL, 0, host, user, port, out, err);
}

int ssh_config_resolve_buffer(const char *name, const char *home, const char *buf, size_t len,
			      const char *host, struct ssh_host_config *out, struct dp_error *err)
{
	return resolve(name, home, buf, len, host, NULL, 0, out, err);
}

static int aliases(const char *path, const char *home, const char *buf, size_t len,
		   char ***out, struct dp_error *err)
{
	struct parse p;
	parse_init(&p);
	_cleanup_free_ char *own_home = NULL;
	set_homes(&p, home, &own_home);
	char **list = xcalloc(1, sizeof(char *));
	p.aliases = &list;
	int r;
	if (buf) {
		int active = 1;
		p.no_include = true;
		r = read_conf_buffer(&p, path, buf, len, CONF_USER, &active, 0, err);
	} else {
		r = read_configs(&p, path, err, false);
	}
	parse_release(&p);
	if (r < 0) {
		strv_free(list);
		*out = NULL;
		return -1;
	}
	*out = list;
	return 0;
}

int ssh_config_aliases(const char *path, const char *home, char ***out, struct dp_error *err)
{
	return aliases(path, home, NULL, 0, out, err);
}

int ssh_config_aliases_buffer(const char *name, const char *home, const char *buf, size_t len,
			      char ***out, struct dp_error *err)
{
	return aliases(name, home, buf, len, out, err);
}

char *ssh_host_config_proxy_command(const struct ssh_host_config *c)
{
	if (!c->proxy_command)
		return NULL;
	char port[16];
	snprintf(port, sizeof(port), "%d", c->port);
	struct strbuf sb = STRBUF_INIT;
	for (const char *s = c->proxy_command; *s; s++) {
		const char *val = NULL;
		if (*s == '%') {
			switch (s[1]) {
			case '%': val = "%"; break;
			case 'h': val = c->hostname; break;
			case 'n': val = c->alias; break;
			case 'p': val = port; break;
			case 'r': val = c->user; break;
			default: break;
			}
		}
		if (val) {
			strbuf_adds(&sb, val);
			s++;
		} else {
			strbuf_addch(&sb, *s);
		}
	}
	return strbuf_detach(&sb);
}

char **ssh_host_config_env(const struct ssh_host_config *c)
{
	extern char **environ;
	char **out = NULL;
	for (size_t i = 0; c->send_env && environ && environ[i]; i++) {
		const char *eq = strchr(environ[i], '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(environ[i], (size_t)(eq - environ[i]));
		for (size_t j = 0; c->send_env[j]; j++) {
			if (match_pattern(name, c->send_env[j])) {
				strv_add(&out, environ[i]);
				break;
			}
		}
	}
	for (size_t i = 0; c->set_env && c->set_env[i]; i++)
		strv_add(&out, c->set_env[i]);
	return out;
}

const char *ssh_host_config_agent_socket(const struct ssh_host_config *c)
{
	const char *a = c->identity_agent;
	if (!a || streq(a, "SSH_AUTH_SOCK"))
		return getenv("SSH_AUTH_SOCK");
	if (streq(a, "none"))
		return NULL;
	if (a[0] == '$')
		return getenv(a + 1);
	return a;
}

/* ---- the keyword dump (hosts resolve) ------------------------------------------ */

static void dump_list(struct strbuf *sb, const char *key, char *const *v, const char *sep)
{
	strbuf_addf(sb, "%s ", key);
	for (size_t i = 0; v && v[i]; i++)
		strbuf_addf(sb, "%s%s", i ? sep : "", v[i]);
	strbuf_addch(sb, '\n');
}

void ssh_config_dump(const struct ssh_host_config *c, struct strbuf *sb)
{
	static const char *const strict[] = {
		[SSH_STRICT_ASK] = "ask", [SSH_STRICT_YES] = "true",
		[SSH_STRICT_ACCEPT_NEW] = "accept-new", [SSH_STRICT_NO] = "false",
	};
	static const char *const alg_keys[SSH_ALGS_NKINDS] = {
		[SSH_ALGS_KEX] = "kexalgorithms", [SSH_ALGS_CIPHERS] = "ciphers",
		[SSH_ALGS_MACS] = "macs", [SSH_ALGS_HOSTKEY] = "hostkeyalgorithms",
		[SSH_ALGS_PUBKEY] = "pubkeyacceptedalgorithms",
	};
	strbuf_addf(sb, "user %s\nhostname %s\nport %d\n", c->user, c->hostname, c->port);
	strbuf_addf(sb, "batchmode %s\n", c->batch_mode ? "yes" : "no");
	strbuf_addf(sb, "identitiesonly %s\n", c->identities_only ? "yes" : "no");
	strbuf_addf(sb, "stricthostkeychecking %s\n", strict[c->strict_host_key_checking]);
	strbuf_addf(sb, "serveralivecountmax %d\n", c->server_alive_count_max);
	strbuf_addf(sb, "serveraliveinterval %d\n", c->server_alive_interval);
	if (c->identity_agent)
		strbuf_addf(sb, "identityagent %s\n", c->identity_agent);
	for (size_t i = 0; c->identity_files && c->identity_files[i]; i++)
		strbuf_addf(sb, "identityfile %s\n", c->identity_files[i]);
	for (size_t i = 0; c->certificate_files && c->certificate_files[i]; i++)
		strbuf_addf(sb, "certificatefile %s\n", c->certificate_files[i]);
	dump_list(sb, "globalknownhostsfile", c->global_known_hosts_files, " ");
	dump_list(sb, "userknownhostsfile", c->user_known_hosts_files, " ");
	if (c->host_key_alias)
		strbuf_addf(sb, "hostkeyalias %s\n", c->host_key_alias);
	if (c->connect_timeout)
		strbuf_addf(sb, "connecttimeout %d\n", c->connect_timeout);
	else
		strbuf_adds(sb, "connecttimeout none\n");
	if (c->proxy_command)
		strbuf_addf(sb, "proxycommand %s\n", c->proxy_command);
	if (c->proxy_jump)
		dump_list(sb, "proxyjump", c->proxy_jump, ",");
	for (int k = 0; k < SSH_ALGS_NKINDS; k++) {
		char *list = ssh_algs_assemble(k, c->algs[k], ssh_algs_openssh_default(k));
		strbuf_addf(sb, "%s %s\n", alg_keys[k], list ? list : "(error)");
		free(list);
	}
	static const char *const master[] = {
		[SSH_CONTROL_MASTER_NO] = "false", [SSH_CONTROL_MASTER_YES] = "true",
		[SSH_CONTROL_MASTER_AUTO] = "auto", [SSH_CONTROL_MASTER_ASK] = "ask",
		[SSH_CONTROL_MASTER_AUTOASK] = "autoask",
	};
	strbuf_addf(sb, "controlmaster %s\n", master[c->control_master]);
	if (c->control_path)
		strbuf_addf(sb, "controlpath %s\n", c->control_path);
	if (c->control_persist < 0)
		strbuf_adds(sb, "controlpersist no\n");
	else if (c->control_persist == 0)
		strbuf_adds(sb, "controlpersist yes\n");
	else
		strbuf_addf(sb, "controlpersist %d\n", c->control_persist);
	static const char *const canon[] = { "false", "true", "always" };
	strbuf_addf(sb, "canonicalizehostname %s\n", canon[c->canonicalize_hostname]);
	if (c->canonical_domains)
		dump_list(sb, "canonicaldomains", c->canonical_domains, " ");
	else
		strbuf_adds(sb, "canonicaldomains none\n");
	strbuf_addf(sb, "canonicalizemaxdots %d\n", c->canonicalize_max_dots);
	strbuf_addf(sb, "canonicalizefallbacklocal %s\n", c->canonicalize_fallback_local ? "yes" : "no");
	if (c->canonicalize_permitted_cnames)
		dump_list(sb, "canonicalizepermittedcnames", c->canonicalize_permitted_cnames, ",");
	else
		strbuf_adds(sb, "canonicalizepermittedcnames none\n");
	for (size_t i = 0; c->send_env && c->send_env[i]; i++)
		strbuf_addf(sb, "sendenv %s\n", c->send_env[i]);
	for (size_t i = 0; c->set_env && c->set_env[i]; i++)
		strbuf_addf(sb, "setenv %s\n", c->set_env[i]);
	if (c->unused_keywords)
		dump_list(sb, "# not used by dispatch:", c->unused_keywords, " ");
}
