/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "ledger.h"
#include "notebook.h"
#include "sched/plain/plainjob.h"

/* Runs inside the bootstrap's command subshell (bash, no strict mode), in the code's
 * directory. No user text: nothing here needs quoting. The probe ignores http_proxy
 * (clusters often set one, and it would never reach the node's own address). */
static const char job_command[] =
	"dnb_py=$(command -v python3 || command -v python) || {\n"
	"\techo \"dispatch notebook: no python3 on $(hostname)'s PATH\" >&2; exit 127; }\n"
	"dnb_port=$(\"$dnb_py\" -c 'import socket; s = socket.socket(); s.bind((\"\", 0)); print(s.getsockname()[1])') || exit 1\n"
	"if [ -n \"${SLURM_JOB_ID:-}\" ]; then\n"
	"\tdnb_addr=$(scontrol show node -o \"${SLURMD_NODENAME:-$(hostname)}\" 2>/dev/null | sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p')\n"
	"\tdnb_addr=${dnb_addr:-${SLURMD_NODENAME:-$(hostname)}}\n"
	"else\n"
	"\tdnb_addr=127.0.0.1\n"
	"fi\n"
	"if command -v uv >/dev/null 2>&1 && [ -f pyproject.toml ]; then\n"
	"\tset -- uv run --with jupyterlab jupyter lab\n"
	"elif command -v jupyter >/dev/null 2>&1; then\n"
	"\tif jupyter lab --version >/dev/null 2>&1; then set -- jupyter lab\n"
	"\telif jupyter notebook --version >/dev/null 2>&1; then set -- jupyter notebook\n"
	"\telse set -- jupyter server; fi\n"
	"else\n"
	"\techo \"dispatch notebook: no jupyter on $(hostname)'s PATH: install Jupyter there\" \\\n"
	"\t\t\"(jupyter-server or notebook), or give the code a pyproject.toml and uv\" >&2\n"
	"\techo 'dispatch-notebook-exit 127'; exit 127\n"
	"fi\n"
	/* Kernel connection files and the server's token: a new directory (0700, a
	 * random name: mktemp fails rather than reuse one that another user made). */
	"JUPYTER_RUNTIME_DIR=$(mktemp -d \"${TMPDIR:-/tmp}/dispatch-notebook-$DISPATCH_JOB_ID.XXXXXXXX\") || {\n"
	"\techo \"dispatch notebook: cannot create a private runtime directory in ${TMPDIR:-/tmp} on $(hostname)\" >&2\n"
	"\techo 'dispatch-notebook-exit 1'; exit 1; }\n"
	"export JUPYTER_RUNTIME_DIR\n"
	"echo \"dispatch notebook: starting $* on $(hostname), port $dnb_port\" >&2\n"
	"\"$@\" --no-browser --ip=\"$dnb_addr\" --port=\"$dnb_port\" --port-retries=0 --log-level=WARN &\n"
	"dnb_pid=$!\n"
	"until \"$dnb_py\" -c 'import sys, urllib.request; urllib.request.build_opener(urllib.request.ProxyHandler({})).open(\"http://%s:%s/api\" % (sys.argv[1], sys.argv[2]), timeout=2)' \"$dnb_addr\" \"$dnb_port\" 2>/dev/null; do\n"
	"\tif ! kill -0 \"$dnb_pid\" 2>/dev/null; then\n"
	"\t\twait \"$dnb_pid\"; dnb_status=$?; rm -rf -- \"$JUPYTER_RUNTIME_DIR\"\n"
	"\t\techo \"dispatch-notebook-exit $dnb_status\"; exit \"$dnb_status\"\n"
	"\tfi\n"
	"\tsleep 1\n"
	"done\n"
	"echo \"dispatch-notebook $(hostname) $dnb_addr $dnb_port\"\n"
	"wait \"$dnb_pid\"\n"
	"dnb_status=$?\n"
	"rm -rf -- \"$JUPYTER_RUNTIME_DIR\"\n"
	"exit \"$dnb_status\"\n";


const char *notebook_job_command(void)
{
	return job_command;
}

char *notebook_new_token(void)
{
	unsigned char raw[24];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, raw, sizeof(raw)) : -1;
	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)sizeof(raw))
		return NULL; /* a guessable token is worse than none: the caller stops */
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(raw); i++)
		strbuf_addf(&sb, "%02x", raw[i]);
	return strbuf_detach(&sb);
}

void notebook_poll_command(struct strbuf *sb, const char *log, const char *job_id,
			   const struct plainjob_ref *plain)
{
	strbuf_adds(sb, "grep -E '^" MARK_NOTEBOOK "(-exit)? ' ");
	sh_quote(sb, log);
	strbuf_adds(sb, " 2>/dev/null\n");
	if (plain) {
		plainjob_status_command(sb, plain, 1);
		return;
	}
	strbuf_adds(sb, "printf '" MARK_NOTEBOOK_STATE " %s\\n' \"$(squeue -h -j ");
	sh_quote(sb, job_id);
	strbuf_adds(sb, " -o %T 2>/dev/null | head -n 1)\"\n");
}

/* "NODE ADDR PORT" */
static bool parse_ready(const char *v, struct notebook_poll *res)
{
	char node[256], addr[256];
	long port;
	char extra;
	if (sscanf(v, "%255s %255s %ld %c", node, addr, &port, &extra) != 3 || port < 1 || port > 65535)
		return false;
	free(res->node);
	free(res->addr);
	res->node = xstrdup(node);
	res->addr = xstrdup(addr);
	res->port = port;
	res->ready = true;
	return true;
}

int notebook_parse_poll(const char *out, bool plain, struct notebook_poll *res)
{
	*res = (struct notebook_poll){ .exit_status = -1 };
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		long n;
		if ((v = marker_value(line, MARK_NOTEBOOK)) && *v)
			parse_ready(v, res);
		else if ((v = marker_value(line, MARK_NOTEBOOK_EXIT)) && parse_long(v, 0, 255, &n))
			res->exit_status = (int)n;
		else if (!plain && (v = marker_value(line, MARK_NOTEBOOK_STATE))) {
			free(res->state);
			res->state = xstrdup(v);
		}
	}
	line_iter_release(&it);
	if (plain) {
		struct plainjob_status *st;
		size_t n = plainjob_parse_status(out, &st);
		if (n > 0)
			res->state = xstrdup(st[0].state);
		plainjob_status_free(st, n);
	}
	return res->state ? 0 : -1;
}

void notebook_poll_release(struct notebook_poll *res)
{
	free(res->node);
	free(res->addr);
	free(res->state);
	*res = (struct notebook_poll){ .exit_status = -1 };
}

bool notebook_state_alive(const char *state)
{
	static const char *const alive[] = { "PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
					     "RESIZING", "REQUEUED", "SUSPENDED", NULL };
	for (size_t i = 0; state && alive[i]; i++)
		if (streq(state, alive[i]))
			return true;
	return false;
}

static char *token_path(const char *ledger_token, bool make_dir)
{
	_cleanup_free_ char *state = ledger_state_dir();
	_cleanup_free_ char *dir = xasprintf("%s/notebooks", state);
	if (make_dir) {
		mkdir(state, 0700);
		mkdir(dir, 0700);
	}
	return xasprintf("%s/%s", dir, ledger_token);
}

int notebook_token_save(const char *ledger_token, const char *token, struct dp_error *err)
{
	_cleanup_free_ char *path = token_path(ledger_token, true);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", path, strerror(errno));
	_cleanup_free_ char *line = xasprintf("%s\n", token);
	int r = fchmod(fd, 0600) == 0 ? write_all(fd, line, strlen(line)) : -1;
	int e = errno;
	if (close(fd) < 0 && r == 0) {
		r = -1;
		e = errno;
	}
	if (r < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", path, strerror(e));
	return 0;
}

int notebook_token_load(const char *ledger_token, char **token, struct dp_error *err)
{
	_cleanup_free_ char *path = token_path(ledger_token, false);
	size_t len;
	char *buf = read_file(path, &len);
	if (!buf)
		return dp_err(err, errno == ENOENT ? DPE_NOTFOUND : DPE_FAIL, "cannot read '%s': %s",
			      path, strerror(errno));
	buf[strcspn(buf, "\n")] = '\0';
	*token = buf;
	return 0;
}
