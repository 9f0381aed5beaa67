/* SPDX-License-Identifier: MIT */
/* The pure parts of the SSH transport: exit statuses, the login-shell
 * command, known_hosts matching and formatting (against files ssh-keygen wrote),
 * key encryption detection, base64, line prefixing. */
#include <libssh2.h>
#include <signal.h>
#include <sys/wait.h>

#include "base/base64.h"
#include "transport/known_hosts.h"
#include "base/line_prefix.h"
#include "transport/ssh.h"
#include "transport/ssh_internal.h"
#include "sched/plain/plainjob.h"
#include "unit.h"

static char *data_path(const char *name)
{
	return xasprintf("%s/ssh/%s", unit_data(), name);
}

static char *data_text(const char *name, size_t *len)
{
	_cleanup_free_ char *p = data_path(name);
	char *t = read_file(p, len);
	if (!t) {
		printf("Bail out! cannot read %s\n", p);
		exit(1);
	}
	return t;
}

static void test_signal_status(void)
{
	CHECK_INT(ssh_signal_status("TERM"), 128 + SIGTERM);
	CHECK_INT(ssh_signal_status("KILL"), 137);
	CHECK_INT(ssh_signal_status("SIGINT"), 130);
	CHECK_INT(ssh_signal_status("SEGV"), 128 + SIGSEGV);
	CHECK_INT(ssh_signal_status("NOSUCH"), -1);
}

/* Run the login command through a local sh, with SHELL as given, and return what it
 * printed: the quoting must bring the command through two shells intact. */
static char *through_sh(const char *command, const char *shell)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	struct strbuf out = STRBUF_INIT;
	ssh_login_command(&cmd, command, false);
	if (shell)
		setenv("SHELL", shell, 1);
	else
		unsetenv("SHELL");
	FILE *f = popen(cmd.buf, "r");
	char buf[4096];
	size_t n;
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&out, buf, n);
	int st = f ? pclose(f) : -1;
	strbuf_addf(&out, "[%d]", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return strbuf_detach(&out);
}

static void test_login_command(void)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	ssh_login_command(&sb, "echo hi", false);
	/* one line of words every login shell reads alike (test-shquote runs them) */
	CHECK(startswith(sb.buf, "exec /bin/sh -c s\\=\\$\\(printf\\ \\%s\\ "));
	CHECK(!strchr(sb.buf, '\n') && !strstr(sb.buf, " '"));

	_cleanup_free_ char *a = through_sh("printf '%s|' \"a  b\" 'it'\\''s' \"$((1+2))\"; exit 7", "/bin/sh");
	CHECK_STR(a, "a  b|it's|3|[7]");
	_cleanup_free_ char *b = through_sh("echo $0 `echo back` \"$HOME\" >/dev/null; echo ok", NULL);
	CHECK_STR(b, "ok\n[0]");
	_cleanup_free_ char *c = through_sh("echo 'line1\nline2' | wc -l | tr -d ' '", "/bin/bash");
	CHECK_STR(c, "2\n[0]");
}

/* What the server can take: the largest command dispatch sends (a plain host's
 * launch, the launcher inside) fits one argument with room to spare, and so does the
 * status of 300 plain jobs at once; one byte over the limit is refused by name. */
static void test_command_sizes(void)
{
	struct strbuf cmd = STRBUF_INIT, sent = STRBUF_INIT;
	struct plainjob_lease lease = { .gpus = 8, .lock_dir = "/tmp/dispatch-gpus",
					.allowed = "0,1,2,3,4,5,6,7", .max_jobs = 4 };
	plainjob_launch_command(&cmd, "/home/someone/.dispatch/train-20261127-120000-abcd",
				"/home/someone/work", "/home/someone/work/logs/train.out",
				"train-20261127-120000-abcd", &lease);
	ssh_login_command(&sent, cmd.buf, false);
	printf("# the launch command: %zu bytes, %zu sent\n", cmd.len, sent.len);
	CHECK(sent.len < SSH_COMMAND_MAX / 4);
	struct plainjob_ref refs[300];
	static char ids[300][40], dirs[300][80];
	for (size_t i = 0; i < ARRAY_SIZE(refs); i++) {
		snprintf(ids[i], sizeof(ids[i]), "train-20261127-1200%02zu-%04zx", i % 60, i);
		snprintf(dirs[i], sizeof(dirs[i]), "/home/someone/.dispatch/%.40s", ids[i]);
		refs[i] = (struct plainjob_ref){ .id = ids[i], .stage_dir = dirs[i], .pgid = 100000 + (long)i };
	}
	strbuf_reset(&cmd);
	strbuf_reset(&sent);
	plainjob_status_command(&cmd, refs, ARRAY_SIZE(refs));
	ssh_login_command(&sent, cmd.buf, false);
	printf("# the status of 300 plain jobs: %zu bytes, %zu sent\n", cmd.len, sent.len);
	CHECK(sent.len < SSH_COMMAND_MAX);
	struct dp_error err = { 0 };
	CHECK_INT(ssh_command_fits("h", SSH_COMMAND_MAX, &err), 0);
	CHECK_INT(ssh_command_fits("h", SSH_COMMAND_MAX + 1, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, "the command for 'h' is 131072 bytes once encoded");
	strbuf_release(&cmd);
	strbuf_release(&sent);
}

static void load_key(const char *pub, struct kh_key *key, struct strbuf *blob)
{
	_cleanup_free_ char *text = data_text(pub, NULL);
	char *sp = strchr(text, ' '), *end = sp ? strchr(sp + 1, ' ') : NULL;
	if (!end)
		end = sp + strlen(sp);
	base64_decode(blob, sp + 1, (size_t)(end - sp - 1));
	key->type = LIBSSH2_HOSTKEY_TYPE_ED25519;
	key->blob = (const unsigned char *)blob->buf;
	key->len = blob->len;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

static void test_known_hosts(void)
{
	_cleanup_strbuf_ struct strbuf ba = STRBUF_INIT, bb = STRBUF_INIT;
	struct kh_key a, b;
	_cleanup_free_ char *kh = data_path("known_hosts");
	char *files[] = { "/nonexistent/known_hosts", kh, NULL };
	struct dp_error err = { 0 };
	enum kh_result r;
	char *file;
	int line;

	load_key("hostkey_a.pub", &a, &ba);
	load_key("hostkey_b.pub", &b, &bb);
	CHECK_INT(a.len, 51);

	static const struct { const char *name; int key_b; enum kh_result want; int line; } cases[] = {
		{ "plain.example", 0, KH_MATCH, 0 },
		{ "plain.example", 1, KH_CHANGED, 3 },
		{ "[ported.example]:2222", 0, KH_MATCH, 0 },
		{ "ported.example", 0, KH_UNKNOWN, 0 },        /* port 22 is another host */
		{ "changed.example", 0, KH_CHANGED, 5 },
		{ "x.wild.example", 0, KH_MATCH, 0 },
		{ "hashed.example", 0, KH_MATCH, 0 },
		{ "hashed.example", 1, KH_CHANGED, 7 },
		{ "[hashedport.example]:2201", 0, KH_MATCH, 0 },
		{ "hashedport.example", 0, KH_UNKNOWN, 0 },
		{ "other.example", 0, KH_UNKNOWN, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		CHECK_INT(kh_check(files, cases[i].name, cases[i].key_b ? &b : &a, &r, &file, &line, &err), 0);
		CHECK_INT(r, cases[i].want);
		CHECK_INT(line, cases[i].line);
		if (cases[i].want == KH_CHANGED)
			CHECK_STR(file, kh);
		free(file);
	}
	/* @revoked wins over a match, wherever it stands; it names its line. */
	CHECK_INT(kh_check(files, "revoked.example", &a, &r, &file, &line, &err), 0);
	CHECK_INT(r, KH_REVOKED);
	CHECK_INT(line, 13);
	CHECK_STR(file, kh);
	free(file);
	CHECK_INT(kh_check(files, "revoked.example", &b, &r, &file, &line, &err), 0);
	CHECK_INT(r, KH_CHANGED);       /* another key: revoked or not, it is not known */
	free(file);
	/* A key of another type for a known host is unknown, not changed (as ssh). */
	struct kh_key rsa = a;
	rsa.type = LIBSSH2_HOSTKEY_TYPE_RSA;
	CHECK_INT(kh_check(files, "plain.example", &rsa, &r, &file, &line, &err), 0);
	CHECK_INT(r, KH_UNKNOWN);

	_cleanup_free_ char *n1 = kh_host_name("h", 22), *n2 = kh_host_name("10.0.0.1", 2222);
	CHECK_STR(n1, "h");
	CHECK_STR(n2, "[10.0.0.1]:2222");

	/* The line ssh would append, and it reads back as a match. */
	_cleanup_strbuf_ struct strbuf l = STRBUF_INIT;
	kh_format_line(&l, "[127.0.0.1]:2201", &a);
	_cleanup_free_ char *pub = data_text("hostkey_a.pub", NULL);
	*strrchr(pub, ' ') = '\0';
	_cleanup_free_ char *want = xasprintf("[127.0.0.1]:2201 %s\n", pub);
	CHECK_STR(l.buf, want);

	_cleanup_free_ char *tmp = xasprintf("%s/dispatch-test-kh.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	CHECK(mkdtemp(tmp) != NULL);
	_cleanup_free_ char *newfile = xasprintf("%s/sub/known_hosts", tmp);
	char *newfiles[] = { newfile, NULL };
	CHECK_INT(kh_add(newfile, "[127.0.0.1]:2201", &a, &err), 0);
	CHECK_INT(kh_check(newfiles, "[127.0.0.1]:2201", &a, &r, &file, &line, &err), 0);
	CHECK_INT(r, KH_MATCH);
	_cleanup_free_ char *written = read_file(newfile, NULL);
	CHECK_STR(written, want);
	/* The file is read once per process and read again when it changes: a second
	 * key appended is seen, and so is the file replaced (ssh-keygen -R writes a new
	 * file and renames it over) within the same second. */
	CHECK_INT(kh_check(newfiles, "[127.0.0.1]:2202", &b, &r, &file, &line, &err), 0);
	CHECK_INT(r, KH_UNKNOWN);
	CHECK_INT(kh_add(newfile, "[127.0.0.1]:2202", &b, &err), 0);
	CHECK_INT(kh_check(newfiles, "[127.0.0.1]:2202", &b, &r, &file, &line, &err), 0);
	CHECK_INT(r, KH_MATCH);
	_cleanup_free_ char *renamed = xasprintf("%s.new", newfile);
	_cleanup_strbuf_ struct strbuf lb = STRBUF_INIT;
	kh_format_line(&lb, "[127.0.0.1]:2201", &b);
	write_text(renamed, lb.buf);
	CHECK_INT(rename(renamed, newfile), 0);
	CHECK_INT(kh_check(newfiles, "[127.0.0.1]:2201", &a, &r, &file, &line, &err), 0);
	CHECK_INT(r, KH_CHANGED);
	CHECK_INT(line, 1);
	free(file);
	unlink(newfile);
	_cleanup_free_ char *sub = xasprintf("%s/sub", tmp);
	rmdir(sub);
	rmdir(tmp);
}

static void test_verify_messages(void)
{
	_cleanup_strbuf_ struct strbuf bb = STRBUF_INIT;
	struct kh_key b;
	_cleanup_free_ char *kh = data_path("known_hosts");
	char *files[] = { kh, NULL };
	struct ssh_host_config cfg = { .hostname = "plain.example", .port = 22,
				       .user_known_hosts_files = files };
	struct dp_error err = { 0 };

	load_key("hostkey_b.pub", &b, &bb);
	memset(b.sha256, 0xab, sizeof(b.sha256));
	CHECK_INT(kh_verify(&cfg, "plain", &b, &err), -1);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "host key for 'plain' (plain.example) has CHANGED");
	CHECK_CONTAINS(err.msg, "SHA256:q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s");
	_cleanup_free_ char *where = xasprintf("%s:3", kh);
	CHECK_CONTAINS(err.msg, where);
	CHECK_CONTAINS(err.msg, "ssh-keygen -R 'plain.example'");

	/* Unknown: refused unless StrictHostKeyChecking allows new keys. */
	cfg.hostname = "new.example";
	cfg.port = 2222;
	CHECK_INT(kh_verify(&cfg, "new", &b, &err), -1);
	CHECK_CONTAINS(err.msg, "host key for 'new' ([new.example]:2222) is not known");
	CHECK_CONTAINS(err.msg, "ssh-keyscan -p 2222 new.example");
	cfg.strict_host_key_checking = SSH_STRICT_YES;
	CHECK_INT(kh_verify(&cfg, "new", &b, &err), -1);

	/* A revoked key is refused with its line, whatever StrictHostKeyChecking says. */
	_cleanup_strbuf_ struct strbuf ra = STRBUF_INIT;
	struct kh_key rk;
	load_key("hostkey_a.pub", &rk, &ra);
	cfg.hostname = "revoked.example";
	cfg.port = 22;
	cfg.strict_host_key_checking = SSH_STRICT_NO;
	CHECK_INT(kh_verify(&cfg, "rv", &rk, &err), -1);
	CHECK_CONTAINS(err.msg, "host key for 'rv' (revoked.example) is REVOKED");
	_cleanup_free_ char *rwhere = xasprintf("%s:13 marks @revoked", kh);
	CHECK_CONTAINS(err.msg, rwhere);
	cfg.strict_host_key_checking = SSH_STRICT_YES;
	cfg.hostname = "new.example";
	cfg.port = 2222;

	/* HostKeyAlias is the name looked up, without the port. */
	_cleanup_strbuf_ struct strbuf ba = STRBUF_INIT;
	struct kh_key a;
	load_key("hostkey_a.pub", &a, &ba);
	cfg.host_key_alias = "plain.example";
	CHECK_INT(kh_verify(&cfg, "new", &a, &err), 0);
	CHECK_INT(kh_verify(&cfg, "new", &b, &err), -1);
	CHECK_CONTAINS(err.msg, "(plain.example) has CHANGED");
}

/* The host-key algorithms offered: those of known key types first, in the given order. */
static void test_hostkey_methods(void)
{
	_cleanup_free_ char *kh = data_path("known_hosts");
	char *files[] = { "/nonexistent/known_hosts", kh, NULL };
	struct ssh_host_config cfg = { .hostname = "plain.example", .port = 22,
				       .global_known_hosts_files = files };
	static const char rest_after_ed25519[] =
		"ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,"
		"rsa-sha2-512,rsa-sha2-256,ssh-rsa,ssh-dss";
	_cleanup_free_ char *all = xasprintf("ssh-ed25519,%s", rest_after_ed25519);
	static const struct { const char *host; int port; const char *want; } cases[] = {
		{ "plain.example", 22, NULL },          /* ED25519 known: ssh's own order */
		{ "unknown.example", 22, NULL },        /* nothing known: ssh's own order */
		{ "hashed.example", 22, NULL },
		{ "multi.example", 22, "ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256,ssh-rsa,"
				       "ssh-ed25519,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,ssh-dss" },
		{ "multi.example", 2222, NULL },        /* [multi.example]:2222 is another host */
		{ "hashedecdsa.example", 22, "ecdsa-sha2-nistp256,ssh-ed25519,ecdsa-sha2-nistp384,"
					     "ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256,ssh-rsa,ssh-dss" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cfg.hostname = (char *)cases[i].host;
		cfg.port = cases[i].port;
		_cleanup_free_ char *got = kh_hostkey_order(&cfg, all);
		CHECK_STR(got, cases[i].want ? cases[i].want : all);
	}
	/* HostKeyAlias is the name looked up. */
	cfg.hostname = "10.0.0.9";
	cfg.host_key_alias = "multi.example";
	_cleanup_free_ char *aliased = kh_hostkey_order(&cfg, all);
	CHECK(strncmp(aliased, "ecdsa-sha2-nistp256,", 20) == 0);
}

/* The blob of a tests/unit/data/sshcert public key or certificate file. */
static void cert_data_blob(const char *name, struct strbuf *blob)
{
	_cleanup_free_ char *p = xasprintf("%s/sshcert/%s", unit_data(), name);
	_cleanup_free_ char *text = read_file(p, NULL);
	char *sp = text ? strchr(text, ' ') : NULL, *end = sp ? strchr(sp + 1, ' ') : NULL;
	if (!end || base64_decode(blob, sp + 1, (size_t)(end - sp - 1)) < 0) {
		printf("Bail out! cannot read %s\n", p);
		exit(1);
	}
}

static char *cert_data_line(const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/sshcert/%s", unit_data(), name);
	char *text = read_file(p, NULL);
	if (!text) {
		printf("Bail out! cannot read %s\n", p);
		exit(1);
	}
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/* Host certificates: @cert-authority lines and kh_verify_cert, with ssh-keygen's
 * certificate host-ed25519-forever (CA ca_ed25519, principal box1, no expiry) for the
 * key host_ed25519 (tests/unit/data/sshcert/make-fixtures). */
static void test_host_certs(void)
{
	char tmp[] = "/tmp/dispatch-unit-XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	_cleanup_free_ char *kh = xasprintf("%s/known_hosts", tmp);
	_cleanup_free_ char *kh_rev = xasprintf("%s/revoked", tmp);
	_cleanup_free_ char *ca = cert_data_line("ca_ed25519.pub");
	_cleanup_free_ char *other_ca = cert_data_line("ca_ecdsa521.pub");
	_cleanup_free_ char *hostkey = cert_data_line("host_ed25519.pub");
	_cleanup_free_ char *text = xasprintf(
		"# CAs\n"
		"@cert-authority box1,*.example,!bad.example %s\n"
		"@cert-authority [box2]:2222 %s\n"
		"@cert-authority plainbox,newbox %s\n"
		"plainbox %s\n",
		ca, other_ca, other_ca, hostkey);
	write_text(kh, text);
	_cleanup_free_ char *rev = xasprintf("@revoked * %s\n", ca);
	write_text(kh_rev, rev);
	char *files[] = { kh, NULL }, *files_rev[] = { kh, kh_rev, NULL };
	struct ssh_host_config cfg = { .hostname = "box1", .port = 22, .user_known_hosts_files = files,
				       .strict_host_key_checking = SSH_STRICT_YES };
	struct dp_error err = { 0 };
	_cleanup_strbuf_ struct strbuf cert = STRBUF_INIT, hk = STRBUF_INIT, uk = STRBUF_INIT;
	cert_data_blob("host-ed25519-forever-cert.pub", &cert);
	cert_data_blob("host_ed25519.pub", &hk);
	cert_data_blob("user_ed25519.pub", &uk);
	struct kh_key key = { .type = LIBSSH2_HOSTKEY_TYPE_ED25519,
			      .blob = (const unsigned char *)hk.buf, .len = hk.len };
	struct kh_key other = { .type = LIBSSH2_HOSTKEY_TYPE_ED25519,
				.blob = (const unsigned char *)uk.buf, .len = uk.len };
	const unsigned char *cb = (const unsigned char *)cert.buf;

	/* Which hosts have a CA: patterns, negation, [host]:port. */
	char *where = NULL;
	CHECK(kh_cert_authority(&cfg, &where));
	_cleanup_free_ char *want_where = xasprintf("%s:2", kh);
	CHECK_STR(where, want_where);
	free(where);
	cfg.hostname = "a.example";
	CHECK(kh_cert_authority(&cfg, NULL));
	cfg.hostname = "bad.example";
	CHECK(!kh_cert_authority(&cfg, NULL));
	cfg.hostname = "box1";
	cfg.port = 2222;
	CHECK(!kh_cert_authority(&cfg, NULL));
	cfg.hostname = "box2";
	CHECK(kh_cert_authority(&cfg, NULL));
	/* a CA for the host puts ED25519 first */
	_cleanup_free_ char *methods = kh_hostkey_order(&cfg, "ecdsa-sha2-nistp256,ssh-ed25519");
	CHECK_STR(methods, "ssh-ed25519,ecdsa-sha2-nistp256");
	cfg.hostname = "box3";
	_cleanup_free_ char *no_ca = kh_hostkey_order(&cfg, "ecdsa-sha2-nistp256,ssh-ed25519");
	CHECK_STR(no_ca, "ecdsa-sha2-nistp256,ssh-ed25519");
	cfg.port = 22;

	/* Accepted: CA named for box1, principal box1, a host certificate, no expiry. */
	cfg.hostname = "box1";
	CHECK_INT(kh_verify_cert(&cfg, "b1", cb, cert.len, &key, &err), 0);
	/* Only for the key the connection proved. */
	CHECK_INT(kh_verify_cert(&cfg, "b1", cb, cert.len, &other, &err), -1);
	CHECK_CONTAINS(err.msg, "the server's certificate is for another key than the ED25519 key");
	/* HostKeyAlias: the name looked up and the principal wanted. */
	cfg.host_key_alias = "other.example";
	CHECK_INT(kh_verify_cert(&cfg, "b1", cb, cert.len, &key, &err), -1);
	CHECK_CONTAINS(err.msg, "host certificate for 'b1' (other.example) refused: ED25519 host "
		       "certificate 'forever' (serial 0) signed by ED25519 CA SHA256:");
	CHECK_CONTAINS(err.msg, "is not valid for 'other.example': its principals are box1; and "
		       "the ED25519 key SHA256:");
	CHECK_CONTAINS(err.msg, "it holds is not in known_hosts either");
	cfg.host_key_alias = "box1";
	CHECK_INT(kh_verify_cert(&cfg, "b1", cb, cert.len, &key, &err), 0);
	cfg.host_key_alias = NULL;
	/* A CA the host's lines do not name. */
	cfg.hostname = "box9";
	CHECK_INT(kh_verify_cert(&cfg, "b9", cb, cert.len, &key, &err), -1);
	CHECK_CONTAINS(err.msg, "no @cert-authority line for 'box9' names that CA");
	/* A revoked CA stays refused. */
	cfg.hostname = "box1";
	cfg.user_known_hosts_files = files_rev;
	cfg.strict_host_key_checking = SSH_STRICT_NO;
	CHECK_INT(kh_verify_cert(&cfg, "b1", cb, cert.len, &key, &err), -1);
	_cleanup_free_ char *rev_where = xasprintf("is REVOKED by %s:1", kh_rev);
	CHECK_CONTAINS(err.msg, rev_where);
	cfg.user_known_hosts_files = files;
	cfg.strict_host_key_checking = SSH_STRICT_YES;
	/* As ssh: a certificate that fails is its plain key, which a line may list... */
	cfg.hostname = "plainbox";
	CHECK_INT(kh_verify_cert(&cfg, "pb", cb, cert.len, &key, &err), 0);
	/* ... or accept-new record. */
	cfg.hostname = "newbox";
	CHECK_INT(kh_verify_cert(&cfg, "nb", cb, cert.len, &key, &err), -1);
	cfg.strict_host_key_checking = SSH_STRICT_ACCEPT_NEW;
	CHECK_INT(kh_verify_cert(&cfg, "nb", cb, cert.len, &key, &err), 0);
	_cleanup_free_ char *after = read_file(kh, NULL);
	CHECK_CONTAINS(after, "\nnewbox ssh-ed25519 ");
	/* A blob that is no certificate fails as such, and falls back likewise. */
	cfg.strict_host_key_checking = SSH_STRICT_YES;
	cfg.hostname = "box1";
	CHECK_INT(kh_verify_cert(&cfg, "b1", (const unsigned char *)hk.buf, hk.len, &key, &err), -1);
	CHECK_CONTAINS(err.msg, "not a certificate: key type 'ssh-ed25519'");

	unlink(kh);
	unlink(kh_rev);
	rmdir(tmp);
}

static void test_fingerprint(void)
{
	_cleanup_free_ char *hex = data_text("hostkey_a.sha256", NULL);
	_cleanup_free_ char *want = data_text("hostkey_a.fingerprint", NULL);
	unsigned char digest[32];
	for (int i = 0; i < 32; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		digest[i] = (unsigned char)v;
	}
	*strchr(strchr(want, ' ') + 1, ' ') = '\0';     /* "256 SHA256:..." */
	_cleanup_free_ char *fp = kh_fingerprint(digest);
	CHECK_STR(fp, strchr(want, ' ') + 1);
}

static void test_encrypted(void)
{
	static const struct { const char *file; bool want; } keys[] = {
		{ "key_plain", false },
		{ "key_encrypted", true },
		{ "key_pem_plain", false },
		{ "key_pem_encrypted", true },
		{ "key_plain.pub", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		size_t len;
		_cleanup_free_ char *t = data_text(keys[i].file, &len);
		CHECK_INT(ssh_key_is_encrypted(t, len), keys[i].want);
	}
}

static void test_base64(void)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	static const char *const v[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		strbuf_reset(&sb);
		base64_encode(&sb, v[i][0], strlen(v[i][0]), true);
		CHECK_STR(sb.buf, v[i][1]);
		strbuf_reset(&sb);
		CHECK_INT(base64_decode(&sb, v[i][1], strlen(v[i][1])), 0);
		CHECK_STR(sb.buf, v[i][0]);
	}
	strbuf_reset(&sb);
	base64_encode(&sb, "fo", 2, false);
	CHECK_STR(sb.buf, "Zm8");
	CHECK_INT(base64_decode(&sb, "Zm9v!", 5), -1);
	/* What OpenSSH's files hold: wrapped lines, and no padding (fingerprints). */
	static const char *const lenient[][2] = {
		{ "Zm9v\nYmFy\n", "foobar" }, { " Zm9v YmE= ", "fooba" }, { "Zm8", "fo" },
		{ "Zg", "f" }, { "Zm9vYg", "foob" }, { "Zm8=\r\n", "fo" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(lenient); i++) {
		strbuf_reset(&sb);
		CHECK_INT(base64_decode(&sb, lenient[i][0], strlen(lenient[i][0])), 0);
		CHECK_STR(sb.buf, lenient[i][1]);
		CHECK_INT((int)sb.len, (int)strlen(lenient[i][1]));
	}
	/* One character left over, padding inside, characters outside the alphabet. */
	static const char *const bad[] = { "Z", "Zm9vY", "Zg==Zg==", "Zm9v-_", "Zm\x01" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_INT(base64_decode(&sb, bad[i], strlen(bad[i])), -1);
	/* Binary data, every byte value, both ways. */
	unsigned char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	strbuf_reset(&sb);
	base64_encode(&sb, all, sizeof(all), true);
	_cleanup_strbuf_ struct strbuf back = STRBUF_INIT;
	CHECK_INT(base64_decode(&back, sb.buf, sb.len), 0);
	CHECK_INT((int)back.len, 256);
	CHECK_INT(memcmp(back.buf, all, sizeof(all)), 0);
}

static void test_line_prefix(void)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct line_prefix lp = LINE_PREFIX_INIT("box1");

	line_prefix_feed(&lp, "hel", 3, &out);
	CHECK_STR(out.buf, "");
	line_prefix_feed(&lp, "lo\nwor", 6, &out);
	CHECK_STR(out.buf, "box1: hello\n");
	line_prefix_feed(&lp, "ld\n\nlast", 8, &out);
	CHECK_STR(out.buf, "box1: hello\nbox1: world\nbox1: \n");
	line_prefix_finish(&lp, &out);
	CHECK_STR(out.buf, "box1: hello\nbox1: world\nbox1: \nbox1: last\n");

	/* A line longer than the cap is cut, never held whole. */
	struct line_prefix big = LINE_PREFIX_INIT("h");
	size_t n = LINE_PREFIX_MAX_LINE + 10;
	char *blob = xmalloc(n);
	memset(blob, 'x', n);
	strbuf_reset(&out);
	line_prefix_feed(&big, blob, n, &out);
	CHECK_INT(out.len, 3 + LINE_PREFIX_MAX_LINE + 1);
	CHECK(big.partial.len == 10);
	line_prefix_finish(&big, &out);
	CHECK_INT(out.len, 2 * 4 + LINE_PREFIX_MAX_LINE + 10);
	free(blob);
}

int main(void)
{
	libssh2_init(0);
	test_signal_status();
	test_command_sizes();
	test_login_command();
	test_known_hosts();
	test_verify_messages();
	test_hostkey_methods();
	test_host_certs();
	test_fingerprint();
	test_encrypted();
	test_base64();
	test_line_prefix();
	libssh2_exit();
	return unit_done();
}
