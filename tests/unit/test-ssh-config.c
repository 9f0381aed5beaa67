/* SPDX-License-Identifier: MIT */
/* lib/transport/ssh_config.c on hand-made configs in a temporary HOME (never the real ~/.ssh). */
#include <errno.h>
#include <pwd.h>
#include <sys/stat.h>

#include "transport/ssh_config.h"
#include "unit.h"
#include "base/util.h"

static char home[256];

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", home, rel);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static char *in_home(const char *rel)
{
	return xasprintf("%s/%s", home, rel);
}

/* Resolve host through the file rel under HOME; the error message on failure. */
static int resolve(const char *rel, const char *host, struct ssh_host_config *c,
		   struct dp_error *err)
{
	_cleanup_free_ char *path = in_home(rel);
	dp_error_clear(err);
	return ssh_config_resolve(path, home, host, c, err);
}

static void test_basics(void)
{
	put("basic", "# a comment\n"
		     "Host web1 web2\n"
		     "    HostName %h.Example.ORG\n"
		     "    User deploy\n"
		     "    Port 2201\n"
		     "    IdentityFile ~/.ssh/id_%h_%r\n"
		     "Host !web2 web*\n"
		     "    User webber\n"
		     "    IdentityFile %d/k_%u_%%\n"
		     "Host *\n"
		     "    User fallback\n"
		     "    Port 22\n"
		     "    IdentityFile ~/.ssh/id_%h_%r\n"
		     "    IdentitiesOnly yes\n"
		     "    ConnectTimeout 1m30s\n"
		     "    ServerAliveInterval 15\n"
		     "    ServerAliveCountMax 4\n"
		     "    StrictHostKeyChecking accept-new\n"
		     "    BatchMode yes\n");
	struct ssh_host_config c;
	struct dp_error err;
	struct passwd *pw = getpwuid(getuid());
	const char *me = pw ? pw->pw_name : "";

	CHECK_INT(resolve("basic", "web1", &c, &err), 0);
	CHECK_STR(c.alias, "web1");
	CHECK_STR(c.hostname, "web1.example.org");
	CHECK_STR(c.user, "deploy");
	CHECK_INT(c.port, 2201);
	CHECK(c.identity_files_set);
	CHECK_INT(strv_len(c.identity_files), 2);
	_cleanup_free_ char *id0 = xasprintf("%s/.ssh/id_web1.example.org_deploy", home);
	_cleanup_free_ char *id1 = xasprintf("%s/k_%s_%%", home, me);
	CHECK_STR(c.identity_files[0], id0);
	CHECK_STR(c.identity_files[1], id1);
	CHECK(c.identities_only);
	CHECK_INT(c.connect_timeout, 90);
	CHECK_INT(c.server_alive_interval, 15);
	CHECK_INT(c.server_alive_count_max, 4);
	CHECK_INT(c.strict_host_key_checking, SSH_STRICT_ACCEPT_NEW);
	CHECK(c.batch_mode);
	CHECK(c.proxy_jump == NULL);
	CHECK(c.proxy_command == NULL);
	ssh_host_config_release(&c);

	/* web2 is negated out of the second block. */
	CHECK_INT(resolve("basic", "web2", &c, &err), 0);
	CHECK_STR(c.user, "deploy");
	CHECK_INT(strv_len(c.identity_files), 1);
	ssh_host_config_release(&c);

	/* Host matching is case-sensitive; the host name is lower-cased afterwards. */
	CHECK_INT(resolve("basic", "WEB1", &c, &err), 0);
	CHECK_STR(c.hostname, "web1");
	CHECK_STR(c.user, "fallback");
	CHECK_INT(c.port, 22);
	ssh_host_config_release(&c);
}

static void test_defaults(void)
{
	put("empty", "# nothing\n\n   \n");
	struct ssh_host_config c;
	struct dp_error err;
	CHECK_INT(resolve("empty", "Box.Example", &c, &err), 0);
	CHECK_STR(c.hostname, "box.example");
	CHECK_INT(c.port, 22);
	CHECK(!c.identity_files_set);
	CHECK_INT(strv_len(c.identity_files), 7);
	_cleanup_free_ char *rsa = xasprintf("%s/.ssh/id_rsa", home);
	_cleanup_free_ char *kh = xasprintf("%s/.ssh/known_hosts", home);
	CHECK_STR(c.identity_files[0], rsa);
	CHECK_STR(c.user_known_hosts_files[0], kh);
	CHECK_INT(strv_len(c.user_known_hosts_files), 2);
	CHECK_STR(c.global_known_hosts_files[0], "/etc/ssh/ssh_known_hosts");
	CHECK_STR(c.global_known_hosts_files[1], "/etc/ssh/ssh_known_hosts2");
	CHECK_INT(c.strict_host_key_checking, SSH_STRICT_ASK);
	CHECK_INT(c.server_alive_count_max, 3);
	CHECK_INT(c.server_alive_interval, 0);
	CHECK_INT(c.connect_timeout, 0);
	CHECK(c.identity_agent == NULL);
	CHECK(!c.batch_mode && !c.identities_only);
	ssh_host_config_release(&c);

	/* An address keeps its case. */
	CHECK_INT(resolve("empty", "FE80::1", &c, &err), 0);
	CHECK_STR(c.hostname, "FE80::1");
	ssh_host_config_release(&c);
}

static void test_syntax(void)
{
	put("syntax", "HOST=eq\n"
		      "  HostName=\"eq.example.com\"\n"
		      "  USER = \"john smith\"\n"
		      "  port= ssh\n"
		      "  IDENTITYFILE \"/k with spaces\"\n"
		      "  IdentityFile '/single quoted'\n"
		      "  IdentityFile /esc\\ aped\n"
		      "  IdentityFile /dup\n"
		      "  IdentityFile /dup\n"
		      "  StrictHostKeyChecking off\n"
		      "  UserKnownHostsFile ~/a %d/b_%h\n"
		      "  UserKnownHostsFile /never\n"
		      "  GlobalKnownHostsFile /g1 /g2\n"
		      "  IdentityAgent ~/agent.sock\n"
		      "  ProxyCommand ssh -W %h:%p gw # kept\n"
		      "  ProxyJump ignored\n"
		      "  ConnectTimeout none\n"
		      "  ConnectTimeout 7\n"
		      "\tBatchMode yes\n");
	struct ssh_host_config c;
	struct dp_error err;
	CHECK_INT(resolve("syntax", "eq", &c, &err), 0);
	CHECK_STR(c.hostname, "eq.example.com");
	CHECK_STR(c.user, "john smith");
	CHECK_INT(c.port, 22);
	CHECK_INT(strv_len(c.identity_files), 4);
	CHECK_STR(c.identity_files[0], "/k with spaces");
	CHECK_STR(c.identity_files[1], "/single quoted");
	CHECK_STR(c.identity_files[2], "/esc aped");
	CHECK_STR(c.identity_files[3], "/dup");
	CHECK_INT(c.strict_host_key_checking, SSH_STRICT_NO);
	_cleanup_free_ char *a = in_home("a"), *b = in_home("b_eq.example.com");
	CHECK_INT(strv_len(c.user_known_hosts_files), 2);
	CHECK_STR(c.user_known_hosts_files[0], a);
	CHECK_STR(c.user_known_hosts_files[1], b);
	CHECK_STR(c.global_known_hosts_files[1], "/g2");
	_cleanup_free_ char *agent = in_home("agent.sock");
	CHECK_STR(c.identity_agent, agent);
	CHECK_STR(ssh_host_config_agent_socket(&c), agent);
	CHECK_STR(c.proxy_command, "ssh -W %h:%p gw # kept");
	CHECK(c.proxy_jump == NULL);
	_cleanup_free_ char *pc = ssh_host_config_proxy_command(&c);
	CHECK_STR(pc, "ssh -W eq.example.com:22 gw # kept");
	CHECK_INT(c.connect_timeout, 7);
	CHECK(c.batch_mode);
	CHECK_INT(c.server_alive_interval, 300); /* ssh's default in batch mode */
	ssh_host_config_release(&c);
}

static void test_proxy(void)
{
	put("proxy", "Host multi\n"
		     "  ProxyJump alice@hop1:2222,hop2,ssh://bob@hop3:23/,[::1]:2\n"
		     "Host jnone\n"
		     "  ProxyJump none\n"
		     "Host jnone cmd\n"
		     "  ProxyCommand nc %h %p\n"
		     "Host cnone\n"
		     "  ProxyCommand none\n"
		     "Host *\n"
		     "  ProxyJump fallback\n"
		     "  IdentityAgent none\n");
	struct ssh_host_config c;
	struct dp_error err;
	CHECK_INT(resolve("proxy", "multi", &c, &err), 0);
	CHECK_INT(strv_len(c.proxy_jump), 4);
	CHECK_STR(c.proxy_jump[0], "alice@hop1:2222");
	CHECK_STR(c.proxy_jump[1], "hop2");
	CHECK_STR(c.proxy_jump[2], "bob@hop3:23");
	CHECK_STR(c.proxy_jump[3], "[::1]:2");
	CHECK(c.proxy_command == NULL);
	CHECK(ssh_host_config_agent_socket(&c) == NULL);
	ssh_host_config_release(&c);

	CHECK_INT(resolve("proxy", "jnone", &c, &err), 0);
	CHECK(c.proxy_jump == NULL);
	CHECK_STR(c.proxy_command, "nc %h %p");
	ssh_host_config_release(&c);

	CHECK_INT(resolve("proxy", "cnone", &c, &err), 0);
	CHECK(c.proxy_jump == NULL);
	CHECK(c.proxy_command == NULL);
	CHECK(ssh_host_config_proxy_command(&c) == NULL);
	ssh_host_config_release(&c);

	CHECK_INT(resolve("proxy", "other", &c, &err), 0);
	CHECK_INT(strv_len(c.proxy_jump), 1);
	CHECK_STR(c.proxy_jump[0], "fallback");
	ssh_host_config_release(&c);
}

static void test_include_and_match(void)
{
	put(".ssh/inc-a.conf", "Host a\n  User a-user\n  Include sub/inner.conf\n");
	put(".ssh/inc-b.conf", "Host a b\n  User b-user\n  Port 2020\n");
	put(".ssh/sub/inner.conf", "IdentityFile /inner\nHost b\n  Port 1111\n");
	put("inc", "Include inc-*.conf\n"
		   "Include ~/.ssh/nothing-*.conf\n"
		   "Host m\n"
		   "  User m-user\n"
		   "Match host m exec \"true\"\n"
		   "  User never\n"
		   "  Port 1\n"
		   "Host m\n"
		   "  Port 2\n"
		   "Match all\n"
		   "  IdentityFile /all\n");
	struct ssh_host_config c;
	struct dp_error err;
	CHECK_INT(resolve("inc", "a", &c, &err), 0);
	CHECK_STR(c.user, "a-user");
	CHECK_INT(c.port, 2020);
	CHECK_INT(strv_len(c.identity_files), 2);
	CHECK_STR(c.identity_files[0], "/inner");
	CHECK_STR(c.identity_files[1], "/all");
	ssh_host_config_release(&c);

	/* inner.conf was included from a block b is not in: its Host b never matches. */
	CHECK_INT(resolve("inc", "b", &c, &err), 0);
	CHECK_STR(c.user, "b-user");
	CHECK_INT(c.port, 2020);
	ssh_host_config_release(&c);

	/* Match host m exec "true" matches, as in ssh (User was set before it). */
	CHECK_INT(resolve("inc", "m", &c, &err), 0);
	CHECK_STR(c.user, "m-user");
	CHECK_INT(c.port, 1);
	ssh_host_config_release(&c);

	/* From a buffer, Include is not followed. */
	const char *buf = "Include inc-*.conf\nHost a\n  Port 9\n";
	CHECK_INT(ssh_config_resolve_buffer("buf", home, buf, strlen(buf), "a", &c, &err), 0);
	CHECK_INT(c.port, 9);
	ssh_host_config_release(&c);

	/* Includes nest at most 16 deep, as ssh. */
	_cleanup_free_ char *loop = xasprintf("Include %s/loop\n", home);
	put("loop", loop);
	CHECK_INT(resolve("loop", "x", &c, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, "too many nested includes");

	/* An included file others can write is refused, as ssh refuses it. */
	put(".ssh/open.conf", "Host x\n");
	_cleanup_free_ char *open_conf = in_home(".ssh/open.conf");
	chmod(open_conf, 0666);
	put("incopen", "Include open.conf\n");
	CHECK_INT(resolve("incopen", "x", &c, &err), -1);
	CHECK_CONTAINS(err.msg, "bad owner or permissions");
	chmod(open_conf, 0644);
	CHECK_INT(resolve("incopen", "x", &c, &err), 0);
	ssh_host_config_release(&c);
}

static void expect_error(const char *text, const char *host, const char *msg)
{
	struct ssh_host_config c;
	struct dp_error err;
	put("bad", text);
	int r = resolve("bad", host, &c, &err);
	CHECK_INT(r, -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, msg);
	if (r == 0)
		ssh_host_config_release(&c);
}

static void test_errors(void)
{
	expect_error("Host x\n  Port 0\n", "x", "/bad:2: bad port '0'");
	expect_error("Host y\n  Port 70000\n", "x", "/bad:2: bad port '70000'");
	expect_error("Host x\n  Hostnme h\n", "x",
		     "/bad:2: bad configuration option 'hostnme' (did you mean 'hostname'?)");
	expect_error("\n\nUser\n", "x", "/bad:3: no argument after keyword 'user'");
	expect_error("User \"a\n", "x", "/bad:1: invalid quotes");
	expect_error("BatchMode maybe\n", "x", "/bad:1: unsupported value 'maybe'");
	expect_error("StrictHostKeyChecking sometimes\n", "x", "unsupported value 'sometimes'");
	expect_error("IdentityFile a b\n", "x", "/bad:1: extra arguments");
	expect_error("ConnectTimeout 5x\n", "x", "/bad:1: invalid time value '5x'");
	expect_error("ServerAliveCountMax -1\n", "x", "/bad:1: invalid number '-1'");
	expect_error("ProxyJump a,,b\n", "x", "/bad:1: invalid proxyjump 'a,,b'");
	expect_error("ProxyJump u@:22\n", "x", "/bad:1: invalid proxyjump");
	expect_error("UserKnownHostsFile /a none\n", "x", "'none' must appear alone");
	expect_error("Match colour red\n", "x", "/bad:1: unsupported match attribute 'colour'");
	expect_error("Match host\n", "x", "/bad:1: missing argument to match attribute 'host'");
	expect_error("Match all host x\n", "x", "cannot be combined");
	expect_error("Host x\n  HostName %z\n", "x", "/bad:2: hostname '%z': unknown token '%z'");
	expect_error("IdentityFile /k_%C\n", "x", "/bad:1: identityfile '/k_%C': unknown token");
	expect_error("IdentityFile ${DISPATCH_TEST_UNSET_VAR}/k\n", "x",
		     "environment variable 'DISPATCH_TEST_UNSET_VAR' is not set");

	/* Unknown keywords named by IgnoreUnknown, and known ones dispatch skips, are fine. */
	put("ignore", "IgnoreUnknown frob*,Other\nFrobnicate yes\nOTHER 1\n"
		      "ForwardAgent yes\nSendEnv LANG LC_*\nUseKeychain yes\n");
	struct ssh_host_config c;
	struct dp_error err;
	CHECK_INT(resolve("ignore", "x", &c, &err), 0);
	ssh_host_config_release(&c);

	/* A missing explicit file is an input error. */
	CHECK_INT(resolve("no-such-file", "x", &c, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, "no-such-file");
}

static void test_dest(void)
{
	put("dest", "Host box\n  User cfg-user\n  Port 2200\n  IdentityFile /id_%r_%p\n");
	struct ssh_host_config c;
	struct dp_error err;
	_cleanup_free_ char *path = in_home("dest");
	CHECK_INT(ssh_config_resolve_dest(path, home, "box", &c, &err), 0);
	CHECK_STR(c.user, "cfg-user");
	CHECK_STR(c.identity_files[0], "/id_cfg-user_2200");
	ssh_host_config_release(&c);
	CHECK_INT(ssh_config_resolve_dest(path, home, "me@box:2022", &c, &err), 0);
	CHECK_STR(c.alias, "box");
	CHECK_STR(c.user, "me");
	CHECK_INT(c.port, 2022);
	CHECK_STR(c.identity_files[0], "/id_me_2022");
	ssh_host_config_release(&c);
	CHECK_INT(ssh_config_resolve_dest(path, home, "ssh://you@box", &c, &err), 0);
	CHECK_STR(c.user, "you");
	CHECK_INT(c.port, 2200);
	ssh_host_config_release(&c);
	CHECK_INT(ssh_config_resolve_dest(path, home, "box:0", &c, &err), -1);
	CHECK_CONTAINS(err.msg, "bad port '0'");

	static const struct {
		const char *in, *user, *host;
		int port;
	} ok[] = {
		{ "h", NULL, "h", 0 },
		{ "u@h", "u", "h", 0 },
		{ "u@h:22", "u", "h", 22 },
		{ "a@b@h:2", "a@b", "h", 2 },
		{ "[::1]:2222", NULL, "::1", 2222 },
		{ "u@[fe80::1]", "u", "fe80::1", 0 },
		{ "ssh://u@h:2/", "u", "h", 2 },
		{ "ssh://u;fingerprint=x@h", "u", "h", 0 },
		{ "ssh://h", NULL, "h", 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		char *u, *h;
		int p;
		CHECK_INT(ssh_parse_destination(ok[i].in, &u, &h, &p, &err), 0);
		CHECK(streq_ptr(u, ok[i].user));
		CHECK_STR(h, ok[i].host);
		CHECK_INT(p, ok[i].port);
		free(u);
		free(h);
	}
	static const char *const bad[] = { "", "@h", "u@", "h:x", "h:70000", "[::1", "[::1]x",
					   "ssh://", "ssh://@h" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *u = (char *)"x", *h = (char *)"x";
		int p;
		CHECK_INT(ssh_parse_destination(bad[i], &u, &h, &p, &err), -1);
		CHECK(u == NULL && h == NULL);
		CHECK_INT(err.kind, DPE_INPUT);
	}
}

static void test_aliases(void)
{
	put(".ssh/al.conf", "Host inc1 two\n");
	put("aliases", "Host one two *.glob !neg\n"
		       "  User x\n"
		       "Host b?d three\n"
		       "  Include al.conf\n"
		       "Match host four\n"
		       "Host \"four\"\n");
	char **v = NULL;
	struct dp_error err;
	_cleanup_free_ char *path = in_home("aliases");
	CHECK_INT(ssh_config_aliases(path, home, &v, &err), 0);
	CHECK_INT(strv_len(v), 5);
	if (strv_len(v) == 5) {
		CHECK_STR(v[0], "one");
		CHECK_STR(v[1], "two");
		CHECK_STR(v[2], "three");
		CHECK_STR(v[3], "inc1");
		CHECK_STR(v[4], "four");
	}
	strv_free(v);

	/* The default file: missing gives an empty list. */
	CHECK_INT(ssh_config_aliases(NULL, home, &v, &err), 0);
	CHECK(v != NULL && v[0] == NULL);
	strv_free(v);
	put(".ssh/config", "Host dflt\n");
	CHECK_INT(ssh_config_aliases(NULL, home, &v, &err), 0);
	CHECK_INT(strv_len(v), 1);
	strv_free(v);

	_cleanup_free_ char *missing = in_home("missing");
	v = NULL;
	CHECK_INT(ssh_config_aliases(missing, home, &v, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK(v == NULL);
}

/* Host and user names as ssh's valid_hostname() and valid_ruser() take them. */
static void test_names(void)
{
	struct dp_error err;
	static const char *const good_hosts[] = {
		"host", "host-1.example.org", "10.0.0.1", "fe80::1%eth0", "h_x", "a/b", "h@x",
		"ünï", "a-", "x*?[]~!#%^=+:.",
	};
	for (size_t i = 0; i < ARRAY_SIZE(good_hosts); i++)
		CHECK_INT(ssh_check_hostname(good_hosts[i], NULL), 0);
	/* each banned character, in the middle of a name, is named with its position */
	for (const char *c = "'`\"$\\;&<>|(){},"; *c; c++) {
		char name[8] = { 'a', 'b', *c, 'd', 0 };
		dp_error_clear(&err);
		CHECK_INT(ssh_check_hostname(name, &err), -1);
		CHECK_INT(err.kind, DPE_INPUT);
		char want[32];
		snprintf(want, sizeof(want), "'%c' at position 3", *c);
		CHECK_CONTAINS(err.msg, want);
	}
	const struct { const char *name, *msg; } bad_hosts[] = {
		{ "-oProxyCommand=x", "'-' at position 1, at the start" },
		{ "a b", "a blank at position 2" },
		{ "a\tb", "control character \\x09 at position 2" },
		{ "ab\n", "invalid host name 'ab\\n': control character \\x0a at position 3" },
		{ "\x7f", "control character \\x7f at position 1" },
		{ "a;touch${IFS}x;b", "invalid host name 'a;touch${IFS}x;b': ';' at position 2" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad_hosts); i++) {
		dp_error_clear(&err);
		CHECK_INT(ssh_check_hostname(bad_hosts[i].name, &err), -1);
		CHECK_CONTAINS(err.msg, bad_hosts[i].msg);
	}

	/* users: '$', ',', '\\' and blanks are fine (as in ssh), but not a '-' after a
	 * blank nor a '\\' at the end */
	static const char *const good_users[] = {
		"root", "first.last", "DOMAIN\\user", "john smith", "a$b", "a,b", "u-", "a- b",
	};
	for (size_t i = 0; i < ARRAY_SIZE(good_users); i++)
		CHECK_INT(ssh_check_user(good_users[i], NULL), 0);
	const struct { const char *name, *msg; } bad_users[] = {
		{ "-l", "invalid user name '-l': '-' at position 1, at the start" },
		{ "a -x", "'-' at position 3, after a blank" },
		{ "a\\", "'\\' at position 2, at the end" },
		{ "u;id", "';' at position 2" },
		{ "u`id`", "'`' at position 2" },
		{ "u\x1b", "control character \\x1b at position 2" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad_users); i++) {
		dp_error_clear(&err);
		CHECK_INT(ssh_check_user(bad_users[i].name, &err), -1);
		CHECK_CONTAINS(err.msg, bad_users[i].msg);
	}

	/* resolution checks both, before reading any config */
	struct ssh_host_config c;
	dp_error_clear(&err);
	CHECK_INT(ssh_config_resolve_dest(NULL, home, "u;x@host", &c, &err), -1);
	CHECK_CONTAINS(err.msg, "invalid user name 'u;x'");
	dp_error_clear(&err);
	CHECK_INT(ssh_config_resolve(NULL, home, "h|x", &c, &err), -1);
	CHECK_CONTAINS(err.msg, "invalid host name 'h|x': '|' at position 2");
	dp_error_clear(&err);
	CHECK_INT(ssh_config_resolve_buffer("buf", home, "Host *\n", 8, "h(x", &c, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
}

/* SendEnv and SetEnv: what a session sends, in ssh's order. */
static void test_env(void)
{
	static const char conf[] = "Host *\n"
				   "  SendEnv DP_UNIT_A* DP_UNIT_GONE\n"
				   "  SetEnv DP_UNIT_SET=v1 \"DP_UNIT_SP=a b\" DP_UNIT_SET=v2\n"
				   "  SendEnv -DP_UNIT_GONE\n"
				   "  SetEnv DP_UNIT_LATER=x\n";
	setenv("DP_UNIT_A1", "one", 1);
	setenv("DP_UNIT_GONE", "no", 1);
	struct ssh_host_config c;
	struct dp_error err;
	CHECK_INT(ssh_config_resolve_buffer("env", home, conf, sizeof(conf) - 1, "h", &c, &err), 0);
	CHECK_INT(strv_len(c.send_env), 1);
	CHECK_STR(c.send_env[0], "DP_UNIT_A*");
	CHECK_INT(strv_len(c.set_env), 2);
	_cleanup_strv_free_ char **env = ssh_host_config_env(&c);
	CHECK_INT(strv_len(env), 3);
	if (strv_len(env) == 3) {
		CHECK_STR(env[0], "DP_UNIT_A1=one");
		CHECK_STR(env[1], "DP_UNIT_SET=v1");
		CHECK_STR(env[2], "DP_UNIT_SP=a b");
	}
	ssh_host_config_release(&c);
	unsetenv("DP_UNIT_A1");
	unsetenv("DP_UNIT_GONE");
	static const char none[] = "Host x\n  SendEnv X\n";
	CHECK_INT(ssh_config_resolve_buffer("env", home, none, sizeof(none) - 1, "h", &c, &err), 0);
	CHECK(ssh_host_config_env(&c) == NULL);
	ssh_host_config_release(&c);
}

/* The home is ssh's: the passwd entry's, never $HOME (ssh.c reads ~/.ssh/config under
 * pw_dir, misc.c's tilde_expand and %d are pw_dir), or the one a caller gives. Only
 * Include's ~ is $HOME, as ssh's glob(GLOB_TILDE) reads it. */
static void test_home(void)
{
	struct passwd *pw = getpwuid(getuid());
	_cleanup_free_ char *mine = ssh_user_home();
	CHECK(pw != NULL);
	if (pw)
		CHECK_STR(mine, pw->pw_dir); /* HOME is the temporary directory here */

	/* HOME elsewhere: the given home still rules ~, %d, ~/.ssh/config, known_hosts;
	 * a relative Include and Include ~/ are under $HOME's .ssh. */
	_cleanup_free_ char *env = in_home("envhome"), *env_ssh = in_home("envhome/.ssh");
	mkdir(env, 0700);
	mkdir(env_ssh, 0700);
	put(".ssh/config", "Host h\n"
			   "  Include home-inc.conf\n"
			   "  Include ~/home-tilde.conf\n"
			   "  IdentityFile ~/id_h\n"
			   "  CertificateFile %d/cert_h\n"
			   "  ControlPath ~/cp-%h\n"
			   "  IdentityAgent ~/agent\n");
	put(".ssh/home-inc.conf", "Port 1111\n");
	put("envhome/.ssh/home-inc.conf", "Port 2222\n");
	put("home-tilde.conf", "User from-home\n");
	put("envhome/home-tilde.conf", "User from-env\n");
	setenv("HOME", env, 1);
	struct ssh_host_config c;
	struct dp_error err;
	CHECK_INT(ssh_config_resolve(NULL, home, "h", &c, &err), 0);
	_cleanup_free_ char *id = in_home("id_h"), *cert = in_home("cert_h"),
			    *cp = in_home("cp-h"), *agent = in_home("agent"),
			    *kh = in_home(".ssh/known_hosts");
	CHECK_INT(c.port, 2222);
	CHECK_STR(c.user, "from-env");
	CHECK_INT(strv_len(c.identity_files), 1);
	CHECK_STR(c.identity_files[0], id);
	CHECK_INT(strv_len(c.certificate_files), 1);
	CHECK_STR(c.certificate_files[0], cert);
	CHECK_STR(c.control_path, cp);
	CHECK_STR(c.identity_agent, agent);
	CHECK_STR(c.user_known_hosts_files[0], kh);
	ssh_host_config_release(&c);

	/* HOME unset: Include's ~ falls back to the home in use. */
	unsetenv("HOME");
	CHECK_INT(ssh_config_resolve(NULL, home, "h", &c, &err), 0);
	CHECK_INT(c.port, 1111);
	CHECK_STR(c.user, "from-home");
	ssh_host_config_release(&c);
	setenv("HOME", home, 1);
	_cleanup_free_ char *conf = in_home(".ssh/config");
	unlink(conf);
}

/* A file is split once per process and read again for each host: a change to it,
 * even one of the same size within the same clock tick, is seen. */
static void test_changed(void)
{
	struct ssh_host_config c;
	struct dp_error err;
	for (int i = 0; i < 3; i++) {
		put("chg", i == 1 ? "Host c\n  Port 2222\n" : "Host c\n  Port 1111\n");
		CHECK_INT(resolve("chg", "c", &c, &err), 0);
		CHECK_INT(c.port, i == 1 ? 2222 : 1111);
		ssh_host_config_release(&c);
	}
	put("chg", "Host c\n  Port 1111\n  Bogus x\n");
	CHECK_INT(resolve("chg", "c", &c, &err), -1);
	CHECK_CONTAINS(err.msg, "chg:3: bad configuration option 'bogus'");
}

int main(void)
{
	snprintf(home, sizeof(home), "%s/dispatch-ssh-config.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(home)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("HOME", home, 1);
	_cleanup_free_ char *dotssh = in_home(".ssh"), *sub = in_home(".ssh/sub");
	mkdir(dotssh, 0700);
	mkdir(sub, 0700);

	test_basics();
	test_defaults();
	test_syntax();
	test_proxy();
	test_include_and_match();
	test_errors();
	test_dest();
	test_aliases();
	test_names();
	test_env();
	test_home();
	test_changed();

	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", home);
	if (system(rm) != 0)
		fprintf(stderr, "could not remove %s\n", home);
	return unit_done();
}
