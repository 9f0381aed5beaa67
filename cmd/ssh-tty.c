/* SPDX-License-Identifier: MIT */
/*
 * The terminal side of the SSH transport: passphrase and keyboard-interactive prompts
 * on /dev/tty (as ssh: never on stdout, and only when there is a terminal), and the
 * -v progress lines. cmd_ssh_ctx() gives a command everything ssh_session_open needs.
 */
#include <fcntl.h>
#include <pthread.h>
#include <termios.h>

#include "dispatch.h"
#include "ssh.h"

static pthread_mutex_t tty_lock = PTHREAD_MUTEX_INITIALIZER;

static int tty_prompt(void *data, const char *prompt, bool echo, char *buf, size_t size)
{
	struct termios old, quiet;
	size_t n = 0;
	int r = -1;

	(void)data;
	pthread_mutex_lock(&tty_lock);
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	bool restore = !echo && tcgetattr(fd, &old) == 0;
	if (restore) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(fd, TCSAFLUSH, &quiet);
	}
	if (write(fd, prompt, strlen(prompt)) < 0)
		goto close;
	for (;;) {
		char c;
		ssize_t got = read(fd, &c, 1);
		if (got <= 0)
			break;
		if (c == '\n' || c == '\r') {
			r = 0;
			break;
		}
		if (n + 1 < size)
			buf[n++] = c;
	}
	buf[n] = '\0';
close:
	if (restore) {
		tcsetattr(fd, TCSAFLUSH, &old);
		if (write(fd, "\n", 1) < 0)
			r = -1;
	}
	close(fd);
out:
	pthread_mutex_unlock(&tty_lock);
	return r;
}

static void log_line(void *data, const char *msg)
{
	(void)data;
	pthread_mutex_lock(&tty_lock);
	fprintf(stderr, "dispatch: %s\n", msg);
	pthread_mutex_unlock(&tty_lock);
}

static bool have_tty(void)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

void cmd_ssh_ctx(const struct dp_ctx *ctx, struct ssh_ctx *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->config_path = ctx->ssh_config_path;
	sc->inv = ctx->inv;
	if (have_tty())
		sc->prompt = tty_prompt;
	if (ctx->verbosity > 0)
		sc->log = log_line;
}
