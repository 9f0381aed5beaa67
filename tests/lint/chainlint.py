#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Broken && chains in the test bodies of tests/cli/t*.sh (the idea of git's
t/chainlint, written small).

A body runs under `set -e`, but a failure inside an && list does not stop it: in
`a && b; c` a failing `a` is forgotten and `c` alone decides the test. So the
top-level commands of a body are one chain: each joined to the next by &&, || or |.
A command may end the line without one when it runs in the background (`&`) or
when its list ends in `|| exit N` / `|| return N` (it cannot go on past a failure).
Inside ( ), { }, if, case and loops the commands are not checked (a loop's body
says `|| return 1` itself).

  chainlint.py FILE...   every test_expect_success body of each file, TAP output
  chainlint.py --body    the one body on stdin (tests/cli/lib.sh): exit 1 and say
                         where it breaks, exit 0 when the chain is whole

The bodies are read from the files without running anything: the words of each
test_expect_success call, as shlex reads shell quoting.
"""
import io
import re
import shlex
import sys

KEY_OPEN = {'if': 'if', 'case': 'case', 'for': 'do', 'while': 'do', 'until': 'do',
            'select': 'do', '{': '{', '[[': '[['}
KEY_CLOSE = {'fi': 'if', 'esac': 'case', 'done': 'do', '}': '{', ']]': '[['}
# after these words the next word is a command again
KEY_CMD = {'then', 'do', 'else', 'elif', 'if', 'while', 'until', '!', '{', 'time'}


def skip_squote(s, i):
    """i just after an opening ': the index after the closing one."""
    j = s.find("'", i)
    return len(s) if j < 0 else j + 1


def skip_dquote(s, i):
    """i just after an opening ": the index after the closing one."""
    while i < len(s):
        c = s[i]
        if c == '\\':
            i += 2
        elif c == '"':
            return i + 1
        elif s.startswith('$(', i):
            i = skip_paren(s, i + 2)
        elif s.startswith('${', i):
            i = skip_brace(s, i + 2)
        elif c == '`':
            i = skip_backtick(s, i + 1)
        else:
            i += 1
    return i


def skip_backtick(s, i):
    while i < len(s):
        if s[i] == '\\':
            i += 2
        elif s[i] == '`':
            return i + 1
        else:
            i += 1
    return i


def skip_quoted(s, i):
    """s[i] opens a quote or an expansion: the index after its end."""
    if s[i] == "'":
        return skip_squote(s, i + 1)
    if s[i] == '"':
        return skip_dquote(s, i + 1)
    if s[i] == '`':
        return skip_backtick(s, i + 1)
    if s.startswith("$'", i):
        j = i + 2
        while j < len(s) and s[j] != "'":
            j += 2 if s[j] == '\\' else 1
        return j + 1
    if s.startswith('$(', i):
        return skip_paren(s, i + 2)
    if s.startswith('${', i):
        return skip_brace(s, i + 2)
    return i + 1


def skip_paren(s, i):
    """i just after $( (or $((): the index after the matching )."""
    depth = 1
    while i < len(s):
        c = s[i]
        if c in '\'"`' or s.startswith('$', i) and s[i + 1:i + 2] in ("'", '(', '{'):
            i = skip_quoted(s, i)
            continue
        if c == '\\':
            i += 2
            continue
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def skip_brace(s, i):
    """i just after ${: the index after the matching }."""
    depth = 1
    while i < len(s):
        c = s[i]
        if c in '\'"`' or s.startswith('$', i) and s[i + 1:i + 2] in ("'", '(', '{'):
            i = skip_quoted(s, i)
            continue
        if c == '\\':
            i += 2
            continue
        if c == '{':
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def tokens(s):
    """(kind, text, line) of the shell text s: kind 'word', 'op' or 'nl'. Quotes,
    expansions, comments and here-document bodies are consumed into words or
    dropped; operators are && || | |& ; ;; & ( ) and the newline."""
    i, line, n = 0, 1, len(s)
    heredocs = []
    while i < n:
        c = s[i]
        if c in ' \t':
            i += 1
        elif c == '\\' and s[i + 1:i + 2] == '\n':
            i += 2
            line += 1
        elif c == '#':
            while i < n and s[i] != '\n':
                i += 1
        elif c == '\n':
            yield 'nl', '\n', line
            i += 1
            line += 1
            for strip, delim in heredocs:  # skip their bodies
                while i < n:
                    j = s.find('\n', i)
                    j = n if j < 0 else j
                    text = s[i:j].lstrip('\t') if strip else s[i:j]
                    i = j + 1
                    line += 1
                    if text == delim:
                        break
            heredocs = []
        elif s.startswith('<<', i) and not s.startswith('<<<', i):
            i += 2
            strip = s.startswith('-', i)
            i += strip
            while i < n and s[i] in ' \t':
                i += 1
            start = i
            while i < n and s[i] not in ' \t\n;&|<>()':
                i = skip_quoted(s, i) if s[i] in '\'"\\' else i + 1
            heredocs.append((strip, s[start:i].replace("'", '').replace('"', '').replace('\\', '')))
        elif c in '<>':  # a redirection: <, >, >>, >&, <&, >|, &> and its target follow
            i += 1
            while i < n and s[i] in '<>&|':
                i += 1
        elif s.startswith('&>', i):
            i += 2
        elif s.startswith(('&&', '||', ';;', '|&'), i):
            yield 'op', s[i:i + 2], line
            i += 2
        elif c in ';&|()':
            yield 'op', c, line
            i += 1
        else:
            start = i
            while i < n and s[i] not in ' \t\n;&|()<>':
                if s[i] == '\\':
                    i += 2
                elif s[i] in '\'"`' or s[i] == '$' and s[i + 1:i + 2] in ("'", '(', '{'):
                    i = skip_quoted(s, i)
                else:
                    i += 1
            if s.startswith('((', i) and i == start:  # (( arithmetic ))
                i = skip_paren(s, i + 2) + 1
            yield 'word', s[start:i], line
            line += s.count('\n', start, i)


def breaks(body):
    """Where the top-level chain of body breaks: [(line, what)], line 1-based in body.
    Two ways: a command ends (; or newline) unjoined and another follows; or an ||
    follows an && list, so that a failure anywhere before it runs the command after
    the || instead of failing the test (unless that command is exit or return)."""
    stack = []          # open compound commands and subshells
    at_cmd = True       # the next word is in command position
    open_cmd = False    # a top-level command has begun and is not yet joined
    ended = None        # line where the last top-level command ended unjoined
    last_words = []     # the words of the current top-level pipeline
    after_or = False    # it follows ||
    and_seen = False    # the current top-level list has an && so far
    andor_seen = False  # ... an && or an ||
    or_line = None      # an || after an && on this line: what follows decides
    found = []
    for kind, text, line in tokens(body):
        top = not stack
        starts = top and (kind == 'word' or text in ('(', '!'))
        # the start of a top-level command after an unjoined end: the break
        if starts and ended is not None:
            found.append((ended, text))
            ended = None
        if starts and or_line is not None:
            if text not in ('exit', 'return'):
                found.append((or_line, '|| ' + text))
            or_line = None
        if kind == 'word':
            if at_cmd and text in KEY_OPEN:
                stack.append(KEY_OPEN[text])
            elif at_cmd and text in KEY_CLOSE and stack and stack[-1] == KEY_CLOSE[text]:
                stack.pop()
            elif text == ']]' and stack and stack[-1] == '[[':
                stack.pop()
            at_cmd = text in KEY_CMD or (at_cmd and re.match(r'^[A-Za-z_][A-Za-z0-9_]*=', text) is not None)
            if top:
                open_cmd = True
                last_words.append(text)
        elif text == '(':
            if at_cmd:
                stack.append('(')
                if top:
                    open_cmd = True
                    last_words = ['(']
            # else: name() of a function definition
        elif text == ')':
            if stack and stack[-1] == '(':
                stack.pop()
                at_cmd = False
            else:              # a case pattern's end (or stray)
                at_cmd = True
        elif text in ('&&', '||', '|', '|&'):
            at_cmd = True
            if top:
                open_cmd = False
                last_words = []
                after_or = text == '||'
                if text == '||' and and_seen:
                    or_line = line
                and_seen = and_seen or text == '&&'
                andor_seen = andor_seen or text in ('&&', '||')
        elif text == ';;':
            at_cmd = True
        elif text in (';', '\n', '&'):
            at_cmd = True
            if top and text == '&' and andor_seen:
                found.append((line, '&'))
            if top and open_cmd:
                exits = after_or and last_words[:1] in (['exit'], ['return'])
                if text != '&' and not exits:   # backgrounded: the chain goes on
                    ended = line
                open_cmd = False
                last_words = []
                after_or = False
                and_seen = andor_seen = False
    return found


def explain(what):
    if what == '&':
        return ('an & after an && list puts the whole list in the background, its '
                'variables and its failures with it (background one command: "{ cmd & }")')
    if what.startswith('|| '):
        return ('an || after && lists: a failure of any command before it runs "%s..." '
                'instead of failing the test (put the || in { }: "{ a || b; }")' % what[3:])
    return ('the command that ends here is not joined to the next ("%s..."): '
            'join them with && (or ||, |)' % what)


def bodies(text):
    """(line, title, body) of each test_expect_success call in text, and of each
    test_expect_unless WHY TITLE BODY (t7800's: skipped when WHY is not empty)."""
    pos = 0
    call = re.compile(r'^[ \t]*test_expect_(success|unless)[ \t]', re.M)
    while True:
        m = call.search(text, pos)
        if not m:
            return
        stream = io.StringIO(text[m.start():])
        lex = shlex.shlex(stream, posix=True)
        lex.whitespace_split = True
        lex.commenters = ''
        line = text.count('\n', 0, m.start()) + 1
        try:
            words = [lex.get_token() for _ in range(4 if m.group(1) == 'unless' else 3)]
        except ValueError as e:
            yield line, '(a call shlex cannot read: %s)' % e, None
            return
        yield line, words[-2], words[-1]
        pos = m.start() + max(stream.tell(), 1)


# The linter's own cases: (body, the breaks it must find)
SELF_TEST = [
    ('a && b', []), ('\n\ta &&\n\tb\n', []), ('a; b', [(1, 'b')]), ('a\nb', [(1, 'b')]),
    ('a && b;\nc', [(1, 'c')]), ('a || exit 1\nb', []), ('a || { x; exit 1; }\nb', [(1, 'b')]),
    ('a &\nb && c', []), ('for i in 1 2; do a; b; done &&\nc', []),
    ('for i in 1 2; do a; b; done\nc', [(1, 'c')]), ('if a; then b; c; fi && d', []),
    ('case $x in a) b;; c) d ;; esac &&\ne', []), ('case $x in (a) b;; esac; e', [(1, 'e')]),
    ('cat <<-EOF &&\n\thello; x\n\tEOF\nd', []), ('cat <<-\\EOF\n\thello; x\n\tEOF\nd', [(1, 'd')]),
    ('x=$(a; b) && y="$(c; "d")" &&\n z', []), ('echo "a;b" ; c', [(1, 'c')]),
    ("echo 'a\n;b'\nc", [(2, 'c')]), ('# comment; here\na && b', []), ('a && # c\n b', []),
    ('( a; b ) &&\nc', []), ('{ a; b; } && c', []), ('f() { a; b; } && f', []),
    ('a >out 2>&1 && b &>x && c >|y', []), ('a \\\n b; c', [(2, 'c')]), ('a | b\nc', [(1, 'c')]),
    ('echo done; a', [(1, 'a')]), ('x=$((1+2)) && y', []), ('! a && b', []), ('a\n! b', [(1, '!')]),
    ('[[ a && b ]] && c', []), ('${x:-a;b} && c', []), ('a <<<"x;y" && b', []),
    ('a || b && c', []), ('a && b || c', [(1, '|| c')]), ('a && b ||\n exit 1', []),
    ('a && { b || c; } && d', []), ('a &\nc || e', []),
    ('a &&\n\tb || rc=$? &&\n\tc', [(2, '|| rc=$?')]), ('a && b &\nc', [(1, '&')]),
    ('a && { b & } && c', []), ('a | b &\nc', []),
]


def self_test():
    """None, or what the linter got wrong on its own cases."""
    wrong = ['%r: found %r, should find %r' % (body, breaks(body), want)
             for body, want in SELF_TEST if breaks(body) != want]
    return wrong or None


def lint_files(paths):
    failed = 0
    wrong = self_test()
    print('%s 1 - the linter finds the breaks of its own %d cases' %
          ('not ok' if wrong else 'ok', len(SELF_TEST)))
    for w in wrong or []:
        print('#   ' + w)
    failed += bool(wrong)
    for n, path in enumerate(paths, 2):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        bad, count = [], 0
        for line, title, body in bodies(text):
            count += 1
            if body is None:
                bad.append('%s:%d: %s' % (path, line, title))
                continue
            for bline, what in breaks(body):
                bad.append('%s:%d: broken && chain in %r: %s' % (path, line + bline - 1, title,
                                                                  explain(what)))
        if bad:
            failed += 1
            print('not ok %d - %s: %d broken' % (n, path, len(bad)))
            for b in bad:
                print('#   ' + b)
        else:
            print('ok %d - %s: %d bodies' % (n, path, count))
    print('1..%d' % (len(paths) + 1))
    return 1 if failed else 0


def main(argv):
    if argv == ['--body']:
        body = sys.stdin.read()
        found = breaks(body)
        for line, what in found:
            print('broken && chain: line %d of the body: %s' % (line, explain(what)))
        return 1 if found else 0
    return lint_files(argv)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
