#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Linux-only calls, names and headers in the client sources (lib/ and cmd/).

The client runs on Linux and macOS (and is meant to build on the BSDs); CI runs on
Linux only, where these compile and work. Each name below is missing on macOS or
FreeBSD, or differs there. A use passes when
  - it is inside an #if/#ifdef/#ifndef/#elif block whose condition names it or
    __linux__ (the code picks it where it exists: `#ifdef SOCK_CLOEXEC`), or
  - the file defines a fallback for it (`#ifndef MSG_NOSIGNAL` / `#define
    MSG_NOSIGNAL 0`), or
  - tests/lint/portability-allow.txt lists the file and the name, with the reason.
Comments are not read; string literals only for /proc and /sys paths.

  portability.py ROOT    TAP: the checker's own cases, then one line per file
"""
import os
import re
import sys

# name (a regular expression of whole words) -> what is wrong with it elsewhere
NAMES = {
    r'SOCK_CLOEXEC|SOCK_NONBLOCK': 'socket() type flags: macOS has neither (fcntl FD_CLOEXEC / O_NONBLOCK after)',
    r'MSG_NOSIGNAL': 'older macOS lacks it (SO_NOSIGPIPE on the socket)',
    r'pipe2|accept4|dup3': 'Linux (and the BSDs), not macOS: pipe()/accept()/dup2() and fcntl',
    r'epoll_\w+|inotify_\w+|signalfd|eventfd|timerfd_\w+': 'Linux-only event APIs (poll, kqueue)',
    r'sendfile|splice|vmsplice|copy_file_range': 'Linux-only or a different signature elsewhere',
    r'memfd_create|O_TMPFILE|O_PATH|O_NOATIME|O_DIRECT': 'Linux-only open/memfd flags',
    r'getrandom': 'Linux and FreeBSD, not macOS (getentropy, or a fallback)',
    r'strchrnul|mempcpy|rawmemchr|memrchr|canonicalize_file_name|euidaccess|secure_getenv':
        'GNU extensions',
    r'program_invocation_name|program_invocation_short_name': 'glibc only (keep argv[0])',
    r'qsort_r': 'GNU and BSD disagree on its argument order (qsort with a static)',
    r'TEMP_FAILURE_RETRY': 'a glibc macro (loop on EINTR)',
    r'prctl|getauxval|malloc_usable_size|mallinfo2?|get_nprocs(_conf)?|sched_getaffinity':
        'Linux-only (sysconf(_SC_NPROCESSORS_ONLN) for the CPU count)',
    r'SO_PEERCRED|ucred': 'Linux (getpeereid elsewhere)',
    r'ppoll|mremap|statx|renameat2|fallocate|posix_fadvise|explicit_bzero|reallocarray':
        'not on macOS',
    r'(htobe|htole|be|le)(16|32|64)(toh)?|bswap_(16|32|64)': "<endian.h>/<byteswap.h> names (macOS: OSByteOrder, FreeBSD: sys/endian.h)",
    r'pthread_barrier_\w+|pthread_spin_\w+|timer_create|sem_init|sem_timedwait|sigtimedwait|clock_nanosleep|pthread_setname_np|pthread_getname_np':
        'missing on macOS, or a different signature there',
    r'TCP_USER_TIMEOUT|MAP_POPULATE|MAP_NORESERVE': 'Linux-only socket and mmap flags',
}
HEADERS = (r'linux/[\w/]+|sys/(prctl|epoll|inotify|sendfile|signalfd|eventfd|timerfd|sysinfo|vfs'
           r'|statfs|sysmacros|auxv|random)|endian|byteswap|features|malloc|error|mntent')
PATHS = r'/proc/|/sys/'

NAME_RE = re.compile(r'\b(%s)\b' % '|'.join('(?:%s)' % n for n in NAMES))
HEADER_RE = re.compile(r'^\s*#\s*include\s*<(%s)\.h>' % HEADERS)
PATH_RE = re.compile(PATHS)


def why_of(name):
    for pat, why in NAMES.items():
        if re.fullmatch(pat, name):
            return why
    return ''


def split_code(text):
    """text with comments and literals blanked (newlines kept), and the literals'
    contents, each with its line: (code, [(line, literal)])."""
    out, lits = [], []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            line += text.count('\n', i, j)
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            lits.append((line, text[i:j]))
            out.append(c + ' ' * max(j - i - 2, 0) + (c if j - i >= 2 else ''))
            i = j
        else:
            if c == '\n':
                line += 1
            out.append(c)
            i += 1
    return ''.join(out), lits


def findings(text, allowed):
    """[(line, what)] of the Linux-only uses in one C file."""
    code, lits = split_code(text)
    lines = code.split('\n')
    fallbacks = set()
    for m in re.finditer(r'^\s*#\s*ifndef\s+(\w+)\s*\n(?:.*\n)*?\s*#\s*define\s+\1\b', code, re.M):
        fallbacks.add(m.group(1))
    found = []
    conds = []  # the conditions of the enclosing #if blocks
    for no, l in enumerate(lines, 1):
        pp = re.match(r'\s*#\s*(\w+)(.*)', l)
        if pp:
            kw, rest = pp.group(1), pp.group(2)
            if kw in ('if', 'ifdef', 'ifndef'):
                conds.append(rest)
            elif kw == 'elif' and conds:
                conds[-1] += ' ' + rest
            elif kw == 'endif' and conds:
                conds.pop()
            elif kw == 'include':
                h = HEADER_RE.match(l)
                if h and h.group(1) not in allowed and not any('__linux__' in c for c in conds):
                    found.append((no, '<%s.h>' % h.group(1)))
            if kw in ('if', 'ifdef', 'ifndef', 'elif', 'undef', 'include'):
                continue  # a name in a condition is no use of it
            if kw == 'define':
                l = re.sub(r'^\s*#\s*define\s+\w+', '', l)  # the name defined is no use
        for m in NAME_RE.finditer(l):
            name = m.group(1)
            if name in allowed or name in fallbacks:
                continue
            if any(re.search(r'\b(%s|__linux__)\b' % re.escape(name), c) for c in conds):
                continue
            found.append((no, '%s: %s' % (name, why_of(name))))
    for no, lit in lits:
        if PATH_RE.search(lit) and 'paths' not in allowed:
            found.append((no, 'a Linux path in %s: no /proc or /sys on macOS' % lit))
    return found


def read_allow(path):
    """{file: {name}} from the allow-list: 'FILE NAME  # why' lines."""
    allow = {}
    with open(path, encoding='utf-8') as f:
        for raw in f:
            line = raw.split('#', 1)[0].split()
            if not line:
                continue
            if len(line) != 2 or '#' not in raw:
                raise SystemExit('%s: "%s": want "FILE NAME  # why"' % (path, raw.strip()))
            allow.setdefault(line[0], set()).add(line[1])
    return allow


SELF_TEST = [
    ('int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);', 1),
    ('#ifdef SOCK_CLOEXEC\nt |= SOCK_CLOEXEC;\n#else\nfcntl(fd, F_SETFD, FD_CLOEXEC);\n#endif', 0),
    ('#ifndef MSG_NOSIGNAL\n#define MSG_NOSIGNAL 0\n#endif\nsend(fd, b, n, MSG_NOSIGNAL);', 0),
    ('#if defined(__linux__)\n#include <sys/prctl.h>\nprctl(1);\n#endif', 0),
    ('#include <sys/prctl.h>', 1), ('#include <linux/limits.h>', 1), ('pipe2(p, O_CLOEXEC);', 1),
    ('/* pipe2 would do */ pipe(p);', 0), ('puts("pipe2");', 0), ('f("/proc/self/fd");', 1),
    ('x = htobe32(y);', 1), ('#define retry(x) TEMP_FAILURE_RETRY(x)', 1), ('qsort_r(a, n, s, cmp, d);', 1), ('my_pipe2(p);', 0),
]


def self_test():
    wrong = []
    for code, want in SELF_TEST:
        got = len(findings(code + '\n', set()))
        if got != want:
            wrong.append('%r: %d findings, want %d' % (code, got, want))
    return wrong


def main(argv):
    if len(argv) != 1:
        print('usage: portability.py ROOT', file=sys.stderr)
        return 2
    root = argv[0]
    allow = read_allow(os.path.join(root, 'tests', 'lint', 'portability-allow.txt'))
    wrong = self_test()
    print('%s 1 - the checker finds the uses in its own %d cases' % ('not ok' if wrong else 'ok', len(SELF_TEST)))
    for w in wrong:
        print('#   ' + w)
    failed = bool(wrong)
    files = sorted(os.path.join(d, f) for top in ('lib', 'cmd')
                   for d, _, fs in os.walk(os.path.join(root, top)) for f in fs
                   if f.endswith(('.c', '.h')))
    for n, path in enumerate(files, 2):
        rel = os.path.relpath(path, root)
        with open(path, encoding='utf-8') as f:
            found = findings(f.read(), allow.get(rel, set()))
        if found:
            failed = True
            print('not ok %d - %s' % (n, rel))
            for no, what in found:
                print('#   %s:%d: %s (guard it, give a fallback, or list it in '
                      'tests/lint/portability-allow.txt with the reason)' % (rel, no, what))
        else:
            print('ok %d - %s' % (n, rel))
    print('1..%d' % (len(files) + 1))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
