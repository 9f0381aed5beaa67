#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shell programs of lib/ (its .sh files) as C strings, at build time.

  embed-sh.py OUT.c OUT.h LIBDIR FILE.sh...

Each LIBDIR/DIR/NAME.sh becomes `const char shfile_DIR_NAME[]` (every character of
its path below LIBDIR that is not a letter or a digit written as _), declared in
OUT.h and defined in OUT.c. A file is
  - a header: its first lines, each a '#' comment (the `# shellcheck shell=sh` or
    `shell=bash` directive that says which shell runs it, and what it is), up to the
    first empty line; the header is left out;
  - the body, after that empty line: the program, byte for byte as the remote side
    gets it, but for @MARK_NAME@, which stands for the marker key MARK_NAME of
    base/marker.h (the C string, joined to the text around it by the compiler).
"""
import os
import re
import sys

PLACEHOLDER = re.compile(rb'@(MARK_[A-Z0-9_]+)@')


def symbol(libdir, path):
    rel = os.path.relpath(path, libdir)
    if rel.startswith('..') or not rel.endswith('.sh'):
        raise SystemExit('embed-sh.py: %s is not a .sh file under %s' % (path, libdir))
    return 'shfile_' + re.sub(r'[^A-Za-z0-9]', '_', rel[:-3])


def body(path):
    with open(path, 'rb') as f:
        data = f.read()
    lines = data.split(b'\n')
    for n, line in enumerate(lines):
        if line == b'':
            if n == 0:
                break
            return b'\n'.join(lines[n + 1:])
        if not line.startswith(b'#'):
            break
    raise SystemExit("embed-sh.py: %s: no header (its first lines '#' comments, one a "
                     "`# shellcheck shell=` directive, then an empty line)" % path)


def c_chars(text):
    """text (bytes, no placeholder) as the inside of a C string literal."""
    out = []
    for i, b in enumerate(text):
        c = chr(b)
        if c == '\\' or c == '"':
            out.append('\\' + c)
        elif c == '\t':
            out.append('\\t')
        elif c == '?':
            out.append('\\?')  # no trigraph (ISO C11) ever forms
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append('\\%03o' % b)
    return ''.join(out)


def c_literal(text):
    """text as adjacent C string literals, one per line of the program."""
    out = []
    for line in text.split(b'\n')[:-1] if text.endswith(b'\n') else text.split(b'\n'):
        pieces, pos = [], 0
        for m in PLACEHOLDER.finditer(line):
            pieces.append('"%s" %s ' % (c_chars(line[pos:m.start()]), m.group(1).decode()))
            pos = m.end()
        out.append('\t%s"%s\\n"' % (''.join(pieces), c_chars(line[pos:])))
    if not text.endswith(b'\n'):
        out[-1] = out[-1][:-3] + '"'
    return '\n'.join(out) if out else '\t""'


def main(argv):
    if len(argv) < 3:
        print('usage: embed-sh.py OUT.c OUT.h LIBDIR FILE.sh...', file=sys.stderr)
        return 2
    out_c, out_h, libdir, files = argv[0], argv[1], argv[2], sorted(argv[3:])
    gen = '/* Generated from the .sh files of lib/ by lib/embed-sh.py at build time: do not edit. */\n'
    h = [gen, '#ifndef DISPATCH_SHFILES_H', '#define DISPATCH_SHFILES_H', '']
    c = [gen, '#include "shfiles.h"', '', '#include "base/marker.h"', '']
    for path in files:
        name = symbol(libdir, path)
        rel = os.path.relpath(path, libdir)
        h.append('extern const char %s[]; /* lib/%s */' % (name, rel))
        c.append('/* lib/%s */' % rel)
        c.append('const char %s[] =\n%s;\n' % (name, c_literal(body(path))))
    h += ['', '#endif', '']
    for path, lines in ((out_h, h), (out_c, c)):
        with open(path, 'w', encoding='utf-8') as f:
            f.write('\n'.join(lines))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
