#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shell programs of lib/ (its .sh files, embedded by lib/embed-sh.py) pass
shellcheck at every severity.

Each file says which shell runs it in its header, `# shellcheck shell=sh` (what
/bin/sh runs: the remote commands) or `shell=bash` (the launcher, the bootstrap's
parts); a finding is fixed, or disabled on the line before it with the reason
(`# shellcheck disable=SC2154 # set by the caller`), never for a whole file.

  shellcheck-lib.py ROOT    TAP: the checker's own case, then one line per file
"""
import os
import re
import subprocess
import sys
import tempfile

SHELL_RE = re.compile(r'^# shellcheck shell=(sh|bash)\b', re.M)
FILE_WIDE_RE = re.compile(r'^# shellcheck .*disable=', re.M)


def header(text):
    """The file's header: its '#' lines up to the first empty line."""
    head = []
    for line in text.split('\n'):
        if not line.startswith('#'):
            break
        head.append(line)
    return '\n'.join(head)


def findings(path):
    """[finding] of one file: shellcheck's, and what its header lacks."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    head = header(text)
    if not SHELL_RE.search(head):
        return ['no "# shellcheck shell=sh" (or shell=bash) in the header: say which shell runs it']
    if FILE_WIDE_RE.search(head):
        return ['a disable= in the header turns a check off for the whole file: '
                'put it on the line before the finding, with the reason']
    r = subprocess.run(['shellcheck', '--norc', '-S', 'style', '-f', 'gcc', path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = r.stdout.strip()
    if r.returncode != 0:
        return out.split('\n') if out else ['shellcheck failed (status %d)' % r.returncode]
    return []


# A planted bug: an unquoted expansion in a command's arguments.
SELF_TEST = '# shellcheck shell=sh\n# a test\n\nrm -f -- $1\n'


def self_test():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'planted.sh')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(SELF_TEST)
        got = findings(path)
    return [] if any('SC2086' in g for g in got) else ['shellcheck missed SC2086 in %r: %r' % (SELF_TEST, got)]


def main(argv):
    if len(argv) != 1:
        print('usage: shellcheck-lib.py ROOT', file=sys.stderr)
        return 2
    root = argv[0]
    try:
        subprocess.run(['shellcheck', '--version'], stdout=subprocess.DEVNULL, check=True)
    except (OSError, subprocess.CalledProcessError):
        print('1..0 # shellcheck is not installed (tests/install-deps installs it)')
        print('Bail out! shellcheck is needed')
        return 1
    wrong = self_test()
    print('%s 1 - the checker finds a planted finding' % ('not ok' if wrong else 'ok'))
    for w in wrong:
        print('#   ' + w)
    failed = bool(wrong)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(root, 'lib'))
                   for f in fs if f.endswith('.sh'))
    for n, path in enumerate(files, 2):
        rel = os.path.relpath(path, root)
        found = findings(path)
        if found:
            failed = True
            print('not ok %d - %s' % (n, rel))
            for what in found:
                print('#   %s' % what.replace(path, rel))
        else:
            print('ok %d - %s' % (n, rel))
    print('1..%d' % (len(files) + 1))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
