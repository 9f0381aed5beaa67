/* SPDX-License-Identifier: MIT */
/* Descriptors that are close-on-exec from the moment they exist. dispatch's fan-out
 * threads fork (ProxyCommand, Match exec) while other threads open sockets, pipes and
 * files: a flag set after creation leaves a window in which a child inherits them. */
#ifndef DISPATCH_CLOEXEC_H
#define DISPATCH_CLOEXEC_H

#include <stdio.h>
#include <sys/socket.h>

/* As socket(2), socketpair(2), accept(2), pipe(2) and mkstemp(3), each descriptor
 * close-on-exec: atomically where the system can (SOCK_CLOEXEC, accept4, pipe2,
 * mkostemp); elsewhere (macOS has none of the first three) set right after. */
int cloexec_socket(int domain, int type, int protocol);
int cloexec_socketpair(int domain, int type, int protocol, int sv[2]);
int cloexec_accept(int fd, struct sockaddr *addr, socklen_t *len);
int cloexec_pipe(int fds[2]);
int cloexec_mkstemp(char *template_);

/* fopen(3) for reading ("r" or "rb") through open(O_CLOEXEC): fopen's "e" flag is
 * not in every libc dispatch builds with. */
FILE *cloexec_fopen_read(const char *path);

#endif
