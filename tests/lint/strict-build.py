#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compile the client sources (lib/ and cmd/) as a strict POSIX system would see them.

The build defines _DEFAULT_SOURCE on Linux, under which glibc declares the BSD and
"misc" names too; macOS and FreeBSD declare many of those, not all, and none of
glibc's GNU ones. This compiles every lib/ and cmd/ file with the build's own
command (compile_commands.json: same compiler, includes, warnings), its feature
macros replaced by _XOPEN_SOURCE=700 alone (POSIX 2008 with XSI, which macOS and
FreeBSD both provide), -fsyntax-only, and -Werror=implicit-function-declaration: a
call that only glibc's extensions declare fails here, on Linux. A file that means
to use a system's own extension says so itself (mux.c: _GNU_SOURCE under __linux__,
for SO_PEERCRED; portability.py checks such names).

  strict-build.py BUILDDIR    TAP, one line per file
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

DROP = ('-D_DEFAULT_SOURCE', '-D_GNU_SOURCE', '-D_DARWIN_C_SOURCE', '-D_BSD_SOURCE',
        '-D_POSIX_C_SOURCE', '-D_XOPEN_SOURCE', '-D__BSD_VISIBLE', '-D_NETBSD_SOURCE')
STRICT = ['-D_XOPEN_SOURCE=700', '-fsyntax-only', '-Werror=implicit-function-declaration',
          '-fdiagnostics-color=never']


def strict_command(entry):
    args = entry['arguments'] if 'arguments' in entry else shlex.split(entry['command'])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ('-o', '-MF', '-MQ', '-MT'):
            skip = True
        elif a in ('-c', '-MD', '-MMD') or a.split('=')[0] in DROP or a.startswith('-fdiagnostics-color'):
            pass
        else:
            out.append(a)
    return out[:1] + STRICT + out[1:]


def sources(builddir):
    with open(os.path.join(builddir, 'compile_commands.json'), encoding='utf-8') as f:
        db = json.load(f)
    seen = {}
    for e in db:
        path = os.path.normpath(os.path.join(e['directory'], e['file']))
        rel = os.path.relpath(path, ROOT)  # lib/ and cmd/ files, once each
        if rel.split(os.sep)[0] in ('lib', 'cmd') and rel not in seen:
            seen[rel] = e
    return sorted(seen.items())


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check(item):
    rel, e = item
    r = subprocess.run(strict_command(e), cwd=e['directory'], capture_output=True, text=True)
    return rel, r.returncode, r.stderr


def main(argv):
    if len(argv) != 1:
        print('usage: strict-build.py BUILDDIR', file=sys.stderr)
        return 2
    items = sources(argv[0])
    if not items:
        print('not ok 1 - compile_commands.json of %s names no lib/ or cmd/ file' % argv[0])
        print('1..1')
        return 1
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for n, (rel, rc, err) in enumerate(pool.map(check, items), 1):
            if rc == 0:
                print('ok %d - %s' % (n, rel))
                continue
            failed += 1
            print('not ok %d - %s' % (n, rel))
            for line in err.splitlines():
                if 'error' in line or 'note' in line:
                    print('#   ' + line)
    print('1..%d' % len(items))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
