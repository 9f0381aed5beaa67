/* SPDX-License-Identifier: MIT */
#include "transport/upload.h"

#include <libssh2.h>
#include <libssh2_sftp.h>

#include "transport/ssh.h"

struct upload {
	struct ssh_session *s;
	LIBSSH2_SESSION *ls;
	LIBSSH2_SFTP *sftp;
};

static const char *sftp_error(struct upload *u)
{
	static const char *const names[] = {
		[LIBSSH2_FX_NO_SUCH_FILE] = "no such file or directory",
		[LIBSSH2_FX_PERMISSION_DENIED] = "permission denied",
		[LIBSSH2_FX_FAILURE] = "failure",
		[LIBSSH2_FX_NO_SUCH_PATH] = "no such file or directory",
		[LIBSSH2_FX_FILE_ALREADY_EXISTS] = "file exists",
		[LIBSSH2_FX_WRITE_PROTECT] = "read-only file system",
		[LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM] = "no space left on device",
		[LIBSSH2_FX_QUOTA_EXCEEDED] = "disk quota exceeded",
	};
	char *msg = NULL;
	if (libssh2_session_last_errno(u->ls) == LIBSSH2_ERROR_SFTP_PROTOCOL) {
		unsigned long e = libssh2_sftp_last_error(u->sftp);
		if (e < ARRAY_SIZE(names) && names[e])
			return names[e];
		return "SFTP error";
	}
	libssh2_session_last_error(u->ls, &msg, NULL, 0);
	return msg && *msg ? msg : "connection lost";
}

static bool protocol_error(struct upload *u)
{
	return libssh2_session_last_errno(u->ls) == LIBSSH2_ERROR_SFTP_PROTOCOL;
}

int upload_open(struct ssh_session *s, struct upload **out, struct dp_error *err)
{
	LIBSSH2_SESSION *ls = ssh_session_libssh2(s);
	*out = NULL;
	LIBSSH2_SFTP *sftp = libssh2_sftp_init(ls);
	if (!sftp) {
		char *msg = NULL;
		libssh2_session_last_error(ls, &msg, NULL, 0);
		return dp_err(err, DPE_CONNECT, "cannot start SFTP on '%s': %s", ssh_session_name(s),
			      msg && *msg ? msg : "no SFTP subsystem");
	}
	struct upload *u = xcalloc(1, sizeof(*u));
	u->s = s;
	u->ls = ls;
	u->sftp = sftp;
	*out = u;
	return 0;
}

void upload_close(struct upload *u)
{
	if (!u)
		return;
	libssh2_sftp_shutdown(u->sftp);
	free(u);
}

int upload_new_file(struct upload *u, const char *path, const void *buf, size_t len, int mode,
		    struct dp_error *err)
{
	LIBSSH2_SFTP_HANDLE *h = libssh2_sftp_open_ex(
		u->sftp, path, (unsigned)strlen(path),
		LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL, mode, LIBSSH2_SFTP_OPENFILE);
	if (!h)
		return dp_err(err, protocol_error(u) ? DPE_FAIL : DPE_CONNECT,
			      "cannot create '%s' on '%s': %s", path, ssh_session_name(u->s),
			      sftp_error(u));
	const char *p = buf;
	while (len) {
		ssize_t n = libssh2_sftp_write(h, p, len);
		if (n < 0) {
			dp_err(err, protocol_error(u) ? DPE_FAIL : DPE_CONNECT,
			       "cannot write '%s' on '%s': %s", path, ssh_session_name(u->s),
			       sftp_error(u));
			libssh2_sftp_close_handle(h);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	if (libssh2_sftp_close_handle(h) != 0)
		return dp_err(err, protocol_error(u) ? DPE_FAIL : DPE_CONNECT,
			      "cannot write '%s' on '%s': %s", path, ssh_session_name(u->s),
			      sftp_error(u));
	return 0;
}

int upload_stat(struct upload *u, const char *path, uint64_t *size, struct dp_error *err)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	if (libssh2_sftp_stat_ex(u->sftp, path, (unsigned)strlen(path), LIBSSH2_SFTP_STAT, &a) != 0) {
		if (protocol_error(u) && (libssh2_sftp_last_error(u->sftp) == LIBSSH2_FX_NO_SUCH_FILE ||
					  libssh2_sftp_last_error(u->sftp) == LIBSSH2_FX_NO_SUCH_PATH))
			return 0;
		return dp_err(err, protocol_error(u) ? DPE_FAIL : DPE_CONNECT,
			      "cannot look at '%s' on '%s': %s", path, ssh_session_name(u->s),
			      sftp_error(u));
	}
	*size = (a.flags & LIBSSH2_SFTP_ATTR_SIZE) ? a.filesize : 0;
	return 1;
}

int upload_rename(struct upload *u, const char *from, const char *to, struct dp_error *err)
{
	/* SFTP v3 rename (what OpenSSH speaks) refuses to replace a file. */
	if (libssh2_sftp_rename_ex(u->sftp, from, (unsigned)strlen(from), to, (unsigned)strlen(to),
				   LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE) == 0)
		return 0;
	uint64_t size;
	struct dp_error e2 = { 0 };
	if (protocol_error(u) && upload_stat(u, to, &size, &e2) == 1)
		return 1;
	return dp_err(err, protocol_error(u) ? DPE_FAIL : DPE_CONNECT,
		      "cannot rename '%s' to '%s' on '%s': %s", from, to, ssh_session_name(u->s),
		      sftp_error(u));
}

int upload_remove(struct upload *u, const char *path, struct dp_error *err)
{
	if (libssh2_sftp_unlink_ex(u->sftp, path, (unsigned)strlen(path)) == 0)
		return 0;
	return dp_err(err, protocol_error(u) ? DPE_FAIL : DPE_CONNECT,
		      "cannot remove '%s' on '%s': %s", path, ssh_session_name(u->s), sftp_error(u));
}
