#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No C string literal in lib/ holds more than 15 lines of shell: a longer program is
a .sh file next to the C that sends it, embedded at build time (lib/meson.build,
lib/embed-sh.py) and checked by shellcheck (tests/lint/shellcheck-lib.py).

A literal is what the compiler joins into one string: adjacent string tokens, with
comments, line continuations and macros in capitals (MARK_JOB) between them. Its
lines are the lines of its value: each \\n ends one, and text after the last is one
more. Every literal counts: the long ones in lib/ are shell.

  shell-literals.py ROOT    TAP: the checker's own cases, then one line per file
"""
import os
import re
import sys

MAX_LINES = 15

TOKEN_RE = re.compile(r'''
    (?P<space>\s+|\\\n)
  | (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)*')
  | (?P<macro>[A-Z_][A-Z0-9_]*\b)
  | (?P<other>\w+|.)
''', re.S | re.X)


def value_lines(tokens):
    """The number of lines of the value of these string tokens."""
    text = ''.join(t[t.index('"') + 1:-1] for t in tokens)
    # \\ is a backslash, \n a newline: read the escapes left to right
    value = re.sub(r'\\(.)', lambda m: '\n' if m.group(1) == 'n' else 'x', text)
    return value.count('\n') + (1 if value and not value.endswith('\n') else 0)


def literals(text):
    """[(line, lines)] of the string literals of one C file."""
    found, line = [], 1
    run, run_line = [], 0
    for m in TOKEN_RE.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind == 'string':
            if not run:
                run_line = line
            run.append(tok)
        elif kind in ('space', 'comment') or (kind == 'macro' and run):
            pass  # a macro in capitals between strings: a string too (MARK_JOB)
        else:
            if run:
                found.append((run_line, value_lines(run)))
            run = []
        line += tok.count('\n')
    if run:
        found.append((run_line, value_lines(run)))
    return found


def findings(text):
    return [(no, n) for no, n in literals(text) if n > MAX_LINES]


def lines_of(n, end='\\n'):
    return ''.join('\t"echo %d%s"\n' % (i, end) for i in range(n))


SELF_TEST = [
    ('static const char s[] =\n%s;\n' % lines_of(15), 0),
    ('static const char s[] =\n%s;\n' % lines_of(16), 1),
    # joined across a comment and a marker macro
    ('f(sb,\n%s\t/* a comment */\n\t"printf \'" MARK_JOB " %%s\\\\n\' x\\n"\n%s);\n'
     % (lines_of(8), lines_of(7)), 1),
    # two calls: two literals
    ('f(sb,\n%s);\nf(sb,\n%s);\n' % (lines_of(10), lines_of(10)), 0),
    # \\n is a backslash and an n, not a newline; a last line without \n counts
    ('f("%s");\n' % ('a\\\\n' * 20), 0),
    ('f(\n%s\t"last");\n' % lines_of(15), 1),
    # a string in a comment is no literal
    ('/*\n%s*/\n' % lines_of(20), 0),
]


def self_test():
    wrong = []
    for code, want in SELF_TEST:
        got = len(findings(code))
        if got != want:
            wrong.append('%r: %d findings, want %d' % (code, got, want))
    return wrong


def main(argv):
    if len(argv) != 1:
        print('usage: shell-literals.py ROOT', file=sys.stderr)
        return 2
    root = argv[0]
    wrong = self_test()
    print('%s 1 - the checker counts its own %d cases' % ('not ok' if wrong else 'ok', len(SELF_TEST)))
    for w in wrong:
        print('#   ' + w)
    failed = bool(wrong)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(root, 'lib'))
                   for f in fs if f.endswith(('.c', '.h')))
    for n, path in enumerate(files, 2):
        rel = os.path.relpath(path, root)
        with open(path, encoding='utf-8') as f:
            found = findings(f.read())
        if found:
            failed = True
            print('not ok %d - %s' % (n, rel))
            for no, lines in found:
                print('#   %s:%d: a string literal of %d lines (over %d): make it a .sh file '
                      'next to this one (lib/meson.build embeds it)' % (rel, no, lines, MAX_LINES))
        else:
            print('ok %d - %s' % (n, rel))
    print('1..%d' % (len(files) + 1))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
