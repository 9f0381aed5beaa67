/* SPDX-License-Identifier: MIT */
/*
 * The terminal side of the SSH transport: passphrase and keyboard-interactive prompts
 * on /dev/tty (as ssh: never on stdout, and only when there is a terminal), and the
 * -v progress lines. cmd_ssh_ctx() gives a command everything ssh_session_open needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <termios.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "transport/ssh.h"
#include "base/cloexec.h"

static pthread_mutex_t tty_lock = PTHREAD_MUTEX_INITIALIZER;

/* While echo is off for a secret, a signal that ends the program (Ctrl-C at the
 * prompt) must not leave the terminal without echo: as ssh's readpassphrase, the
 * handler turns echo back on, then the signal does what it did before. */
static const int prompt_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static struct sigaction prompt_old_actions[ARRAY_SIZE(prompt_signals)];
static struct termios prompt_saved;
static volatile sig_atomic_t prompt_fd = -1;

static void prompt_signal(int sig)
{
	int fd = prompt_fd;
	if (fd >= 0) {
		tcsetattr(fd, TCSANOW, &prompt_saved);
		ssize_t w = write(fd, "\n", 1);
		(void)w;
	}
	for (size_t i = 0; i < ARRAY_SIZE(prompt_signals); i++)
		if (prompt_signals[i] == sig)
			sigaction(sig, &prompt_old_actions[i], NULL);
	raise(sig);     /* delivered with the old action once this handler returns */
}

static void prompt_catch_signals(int fd, const struct termios *saved)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = prompt_signal;  /* no SA_RESTART: the read returns EINTR */
	sigemptyset(&sa.sa_mask);
	prompt_saved = *saved;
	prompt_fd = fd;
	for (size_t i = 0; i < ARRAY_SIZE(prompt_signals); i++)
		sigaction(prompt_signals[i], &sa, &prompt_old_actions[i]);
}

static void prompt_release_signals(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(prompt_signals); i++)
		sigaction(prompt_signals[i], &prompt_old_actions[i], NULL);
	prompt_fd = -1;
}

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
		prompt_catch_signals(fd, &old);
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
		prompt_release_signals();
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
	note_msg("%s", msg);
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

/* ---- interactive sessions (run -t, shell) ---- */

static struct termios saved_tty;
static bool tty_raw;
static int resize_pipe[2] = { -1, -1 };

void tty_raw_end(void)
{
	if (tty_raw) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tty);
		prompt_release_signals();
	}
	tty_raw = false;
}

/* Keys go through unchanged (^C reaches the remote), as ssh does on a terminal. */
static void tty_raw_begin(void *data)
{
	struct termios t;
	(void)data;
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty) < 0)
		return;
	t = saved_tty;
	t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	t.c_oflag &= ~(tcflag_t)OPOST;
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
	t.c_cflag |= CS8;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	/* a TERM or HUP that ends dispatch meanwhile restores the terminal first */
	prompt_catch_signals(STDIN_FILENO, &saved_tty);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
		tty_raw = true;
	else
		prompt_release_signals();
}

static void on_winch(int sig)
{
	int saved = errno;
	ssize_t w = write(resize_pipe[1], "w", 1);      /* full pipe: a resize is pending anyway */
	(void)w;
	(void)sig;
	errno = saved;
}

/* A self-pipe that SIGWINCH makes readable; -1 when none can be made. */
static int resize_fd(void)
{
	if (resize_pipe[0] >= 0)
		return resize_pipe[0];
	if (cloexec_pipe(resize_pipe) < 0)
		return -1;
	for (int i = 0; i < 2; i++)
		fcntl(resize_pipe[i], F_SETFL, fcntl(resize_pipe[i], F_GETFL) | O_NONBLOCK);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_winch;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	return resize_pipe[0];
}

void tty_session(struct ssh_exec *x)
{
	x->term = getenv("TERM");
	if (!isatty(STDIN_FILENO))
		return;
	x->interactive = true;
	x->out_fd = STDOUT_FILENO;
	x->err_fd = STDERR_FILENO;
	x->resize_fd = resize_fd();
	x->on_started = tty_raw_begin;
}

static const char *inventory_destination(void *data, const char *name)
{
	return inventory_ssh_destination(data, name);
}

void cmd_ssh_ctx(const struct dp_ctx *ctx, struct ssh_ctx *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->config_path = ctx->ssh_config_path;
	sc->home = ctx->ssh_home;
	sc->destination = inventory_destination;
	sc->destination_data = (void *)ctx->inv;
	if (have_tty())
		sc->prompt = tty_prompt;
	if (ctx->verbosity > 0)
		sc->log = log_line;
}

int session_open(const struct dp_ctx *ctx, const char *dest, struct ssh_session **ss,
		 struct dp_error *err)
{
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	return ssh_session_open(&sc, dest, ss, err);
}

int host_exec_capture(const struct dp_ctx *ctx, const char *host, const char *command,
		      struct strbuf *out, struct strbuf *errout, int *status, struct dp_error *err)
{
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (session_open(ctx, inventory_ssh_destination(ctx->inv, host), &ss, err) < 0)
		return -1;
	return ssh_exec_capture(ss, command, NULL, out, errout, status, err);
}
