#!/bin/bash
# Host and user names never reach a shell: a name that ssh would refuse (OpenSSH's
# valid_hostname, valid_ruser) is refused before any %-token is expanded, whichever way
# it comes in (hosts resolve, -H, the inventory's ssh:, ID@HOST, user@host). The ssh
# config's Match exec hands %h and %r to a shell, so each case below would create a
# file were the check missing. No connection is made: nothing here needs the test bed.
. "$TEST_SRCDIR/tests/cli/lib.sh"

mkdir -p "$HOME/.ssh"
cat >"$HOME/.ssh/config" <<\EOT
Match exec "true %h"
    User nobody
Match exec "true %r"
    Port 22
EOT
chmod 600 "$HOME/.ssh/config"

cat >inv.yaml <<\EOT
clusters:
  local:
    root: /tmp/root
    work: /tmp/work
hosts:
  box:
    type: plain
    cluster: local
    ssh: 'a;>made-by-inventory;b'
  ubox:
    type: plain
    cluster: local
    ssh: 'u;>made-by-inventory-user;@h'
EOT

# refused EXIT CMD...: CMD exits with EXIT, names the bad character and its position,
# and no file appeared in the trash directory.
refused() {
	local want=$1
	shift
	test_expect_code "$want" "$@" >out 2>err &&
	test_grep "invalid \(host\|user\) name '.*': ';' at position 2" err &&
	ls >files &&
	! grep made files
}

test_expect_success 'hosts resolve refuses a host name with shell syntax' '
	refused 2 dispatch hosts resolve "a;touch\${IFS}made;b" &&
	test_grep "ssh refuses such names too" err &&
	test_must_be_empty out
'

test_expect_success 'hosts resolve refuses such a user name (user@host)' '
	refused 2 dispatch hosts resolve "u;touch\${IFS}made;@h" &&
	test_grep "invalid user name" err
'

test_expect_success 'run -H refuses them, host and user' '
	refused 2 dispatch run -H "a;touch\${IFS}made;b" -- true &&
	refused 2 dispatch run -H "u;touch\${IFS}made;@h" -- true
'

test_expect_success 'the inventory ssh: destination is checked, host and user' '
	refused 2 dispatch -i inv.yaml run -H box -- true &&
	refused 2 dispatch -i inv.yaml run -H ubox -- true
'

test_expect_success 'an ID@HOST job reference is checked' '
	refused 2 dispatch status "1@a;touch\${IFS}made;b" &&
	refused 2 dispatch logs "1@a;touch\${IFS}made;b"
'

test_expect_success 'the rest of ssh'"'"'s rules: leading -, blanks, control characters' '
	test_expect_code 2 dispatch hosts resolve -- -oProxyCommand=x 2>err &&
	test_grep "'"'-'"' at position 1, at the start" err &&
	test_expect_code 2 dispatch hosts resolve "a b" 2>err &&
	test_grep "a blank at position 2" err &&
	test_expect_code 2 dispatch hosts resolve "$(printf "ab\\033c")" 2>err &&
	test_grep -F "invalid host name '"'ab\\ec'"': control character \\x1b at position 3" err &&
	test_expect_code 2 dispatch hosts resolve "u -x@h" 2>err &&
	test_grep "'"'-'"' at position 3, after a blank" err
'

test_expect_success 'names ssh takes still resolve' '
	dispatch hosts resolve "user.name+tag@host-1.example.org" >out &&
	test_grep "^hostname host-1.example.org$" out &&
	test_grep "^user user.name+tag$" out
'

test_done
