#!/bin/bash
# t5010: logging in with prompts on the terminal, against real sshd (tests/testbed):
# an encrypted key's passphrase (pass1) and keyboard-interactive (kbd1, a
# 2FA-like server that asks "Password: "). dispatch runs on a real pseudo-terminal
# (tests/cli/pty-drive.py: its controlling terminal, answers typed after the
# prompt, every wait bounded). Without a terminal, and with BatchMode, nothing is
# asked and the login fails at once, naming what was tried. Secrets never show:
# not on the terminal (echo is off while typing, and back on after, even after
# Ctrl-C), not in -v output, not in any process's command line or environment.
# The testbed is its own instance (own directory, ports, namespaces, network, PAM
# service); it stays up for the next run (up is idempotent);
# DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5010 tests/testbed/down removes it.
. "$(dirname "$0")/lib.sh"

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5010
export DISPATCH_TESTBED_PORT_BASE=28600 DISPATCH_TESTBED_PREFIX=dtt5 DISPATCH_TESTBED_NET=10.166
export DISPATCH_TESTBED_FAN=2
testbed_up
TB=$DISPATCH_TESTBED_DIR
PASSFILE=$DISPATCH_TESTBED_PASSPHRASE_FILE
KBDFILE=$DISPATCH_TESTBED_KBD_PASSWORD_FILE
KEY=$TB/keys/id_pass

# The testbed's aliases say BatchMode yes; a user at a terminal has it off.
sed 's/BatchMode yes/BatchMode no/' "$DISPATCH_SSH_CONFIG" >"$TRASH/cfg"
# dispatch on a pseudo-terminal: the transcript in ./tty, the driver's notes (the
# terminal's echo flag once dispatch ended) in ./drive
on_tty() {
	python3 "$TEST_SRCDIR/tests/cli/pty-drive.py" --timeout 20 --log tty "$@" 2>drive
}
# no_secret FILE...: neither secret (nor its first half) is in any FILE
no_secret() {
	local f
	for f; do
		if grep -qF -f "$PASSFILE" "$f" || grep -qF -f "$KBDFILE" "$f" ||
			grep -qF "$(head -c 12 "$PASSFILE")" "$f" || grep -qF "$(head -c 12 "$KBDFILE")" "$f"; then
			echo "a secret shows in $f:" >&2
			return 1
		fi
	done
}
PASS_PROMPT="Enter passphrase for key '$KEY': "
KBD_PROMPT='\(dispatch-test@kbd1\) Password: '

test_expect_success 'the test bed has kbd1 and both secrets' '
	test -s "$PASSFILE" && test -s "$KBDFILE" &&
	test "$(stat -c %a "$KBDFILE")" = 600 &&
	grep -q "^Host kbd1$" "$DISPATCH_SSH_CONFIG"
'

test_expect_success 'pass1 on a terminal: the passphrase prompt names the key, the right one logs in' '
	on_tty --expect "$PASS_PROMPT" --send-file "$PASSFILE" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H pass1 -- echo logged-in-ok &&
	test_grep -F "$PASS_PROMPT" tty &&
	test_grep "^logged-in-ok" tty &&
	test "$(grep -c "passphrase" tty)" = 1 &&
	test_grep -x "echo on" drive &&
	no_secret tty
'

test_expect_success 'pass1: a wrong passphrase is asked again, then the right one logs in' '
	on_tty --expect "$PASS_PROMPT" --send "not-the-passphrase\n" \
		--expect "$PASS_PROMPT" --send-file "$PASSFILE" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H pass1 -- echo second-try-ok &&
	test "$(grep -c "Enter passphrase" tty)" = 2 &&
	test_grep "^second-try-ok" tty &&
	! grep -q "not-the-passphrase" tty
'

test_expect_success 'pass1: three wrong passphrases: 255, the key named, "wrong passphrase"' '
	test_expect_code 255 on_tty \
		--expect "$PASS_PROMPT" --send "wrong1\n" \
		--expect "$PASS_PROMPT" --send "wrong2\n" \
		--expect "$PASS_PROMPT" --send "wrong3\n" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H pass1 -- echo never &&
	test "$(grep -c "Enter passphrase" tty)" = 3 &&
	test_grep -F "cannot log in to '"'"'pass1'"'"'" tty &&
	test_grep -F "key $KEY: wrong passphrase (3 tries)" tty &&
	! grep -q "^never" tty &&
	test_grep -x "echo on" drive
'

test_expect_success 'pass1: an empty passphrase skips the key, as ssh' '
	test_expect_code 255 on_tty --expect "$PASS_PROMPT" --send "\n" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H pass1 -- echo never &&
	test "$(grep -c "Enter passphrase" tty)" = 1 &&
	test_grep -F "key $KEY needs a passphrase (none given)" tty
'

test_expect_success 'an encrypted key the server does not take: no passphrase asked, as ssh' '
	ssh-keygen -q -t ed25519 -N never-asked -C stranger -f stranger-key &&
	{
		cat "$TRASH/cfg" &&
		printf "Host stranger\n\tHostName 127.0.0.1\n\tPort %s\n\tUser %s\n" \
			"$((DISPATCH_TESTBED_PORT_BASE + 1))" "$DISPATCH_TESTBED_USER" &&
		printf "\tIdentityFile %s\n\tIdentitiesOnly yes\n\tUserKnownHostsFile %s\n" \
			"$PWD/stranger-key" "$TB/known_hosts"
	} >cfg-stranger &&
	test_expect_code 255 on_tty -- "$DISPATCH" -F "$PWD/cfg-stranger" run -H stranger -- true &&
	! grep -q "Enter passphrase" tty &&
	test_grep -F "key $PWD/stranger-key: refused by the server" tty
'

test_expect_success 'kbd1 on a terminal: the server asks, the right answer logs in' '
	on_tty --expect "$KBD_PROMPT" --send-file "$KBDFILE" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H kbd1 -- echo kbd-ok "\$(id -un)" &&
	test_grep "^kbd-ok $DISPATCH_TESTBED_USER" tty &&
	test "$(grep -c "Password:" tty)" = 1 &&
	test_grep -x "echo on" drive &&
	no_secret tty &&
	test_grep "Accepted keyboard-interactive/pam for $DISPATCH_TESTBED_USER" "$TB/sshd/kbd1/log"
'

test_expect_success 'kbd1: a wrong answer is asked again, as ssh' '
	on_tty --expect "$KBD_PROMPT" --send "wrong\n" --expect "$KBD_PROMPT" --send-file "$KBDFILE" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H kbd1 -- echo kbd-second-ok &&
	test "$(grep -c "Password:" tty)" = 2 &&
	test_grep "^kbd-second-ok" tty
'

test_expect_success 'kbd1: three wrong answers: 255, naming keyboard-interactive' '
	test_expect_code 255 on_tty \
		--expect "$KBD_PROMPT" --send "wrong1\n" \
		--expect "$KBD_PROMPT" --send "wrong2\n" \
		--expect "$KBD_PROMPT" --send "wrong3\n" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H kbd1 -- echo never &&
	test_grep -F "cannot log in to '"'"'kbd1'"'"' as '"'"'$DISPATCH_TESTBED_USER'"'"' (the server offers keyboard-interactive)" tty &&
	test_grep -F "keyboard-interactive: refused (3 tries)" tty &&
	! grep -q "^never" tty
'

test_expect_success 'kbd1: end of input (Ctrl-D) at the prompt gives up at once' '
	test_expect_code 255 on_tty --expect "$KBD_PROMPT" --send "\x04" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H kbd1 -- echo never &&
	test "$(grep -c "Password:" tty)" = 1 &&
	test_grep -F "keyboard-interactive: no answer given" tty
'

# A large file goes over several connections only where logging in asked nothing: a
# second connection would ask again (or, in batch mode, fail a login on the server).
# pass1 is box1's sshd with the encrypted key.
test_expect_success 'cp of a large file after a prompt: one prompt, one connection, both ways' '
	head -c 12582912 /dev/urandom >large &&
	for host in kbd1 pass1; do
		sshd=$(test $host = kbd1 && echo kbd1 || echo box1) &&
		before=$(grep -c "Connection from" "$TB/sshd/$sshd/log") &&
		prompt=$(test $host = kbd1 && echo "$KBD_PROMPT" || echo "$PASS_PROMPT") &&
		secret=$(test $host = kbd1 && echo "$KBDFILE" || echo "$PASSFILE") &&
		asks=$(test $host = kbd1 && echo "Password:" || echo "Enter passphrase") &&
		on_tty --expect "$prompt" --send-file "$secret" -- \
			"$DISPATCH" -F "$TRASH/cfg" cp --split-size 1M --connections 4 large $host:t5010-large &&
		test "$(grep -c "$asks" tty)" = 1 &&
		on_tty --expect "$prompt" --send-file "$secret" -- \
			"$DISPATCH" -F "$TRASH/cfg" cp --split-size 1M --connections 4 $host:t5010-large back-$host &&
		test "$(grep -c "$asks" tty)" = 1 &&
		test "$(grep -c "Connection from" "$TB/sshd/$sshd/log")" = $((before + 2)) &&
		cmp large back-$host || return 1
	done &&
	rm -f "$(getent passwd "$DISPATCH_TESTBED_USER" | cut -d: -f6)/t5010-large"
'

test_expect_success 'Ctrl-C at a secret prompt: dispatch ends by SIGINT, the terminal echoes again' '
	test_expect_code 130 on_tty --expect "$KBD_PROMPT" --send "\x03" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H kbd1 -- echo never &&
	test_grep -x "echo on" drive &&
	test_expect_code 130 on_tty --expect "$PASS_PROMPT" --send "\x03" -- \
		"$DISPATCH" -F "$TRASH/cfg" run -H pass1 -- echo never &&
	test_grep -x "echo on" drive
'

test_expect_success 'with -v and several hosts: the prompt names its host, no secret in the output' '
	on_tty --expect "$KBD_PROMPT" --send-file "$KBDFILE" -- \
		"$DISPATCH" -v -F "$TRASH/cfg" run -H kbd1,box1 -- echo multi-ok &&
	test_grep "^kbd1: multi-ok" tty &&
	test_grep "^box1: multi-ok" tty &&
	test_grep "dispatch: kbd1: logged in as" tty &&
	no_secret tty &&
	on_tty --expect "$PASS_PROMPT" --send-file "$PASSFILE" -- \
		"$DISPATCH" -v -F "$TRASH/cfg" run -H pass1 -- echo v-ok &&
	test_grep "dispatch: pass1: logged in as" tty &&
	no_secret tty
'

# While dispatch is logged in (the remote command waits for a file to appear), every
# process's command line and environment is searched for the secrets.
test_expect_success 'no secret in any command line or environment while logged in' '
	gate=$(mktemp -d /tmp/dispatch-t5010-gate.XXXXXX) &&
	chmod 755 "$gate" &&
	{ on_tty --expect "$KBD_PROMPT" --send-file "$KBDFILE" -- \
		"$DISPATCH" -v -F "$TRASH/cfg" run -H kbd1 -- \
		"echo waiting; for i in \$(seq 150); do test -e $gate/go && break; sleep 0.1; done; echo done" & } &&
	driver=$! &&
	for i in $(seq 150); do grep -q "^waiting" tty 2>/dev/null && break; sleep 0.1; done &&
	found=$(grep -lF -f "$PASSFILE" -f "$KBDFILE" /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null || :) &&
	touch "$gate/go" &&
	wait $driver &&
	rm -rf "$gate" &&
	test_grep "^waiting" tty &&
	test_grep "^done" tty &&
	test -z "$found"
'

test_expect_success 'no terminal: kbd1 fails at once, naming what was tried' '
	test_expect_code 255 timeout 20 setsid -w "$DISPATCH" -F "$TRASH/cfg" run -H kbd1 -- true \
		</dev/null >out 2>err &&
	test_must_be_empty out &&
	test_grep -F "cannot log in to '"'"'kbd1'"'"' as '"'"'$DISPATCH_TESTBED_USER'"'"' (the server offers keyboard-interactive): keyboard-interactive: needs a terminal (no terminal)" err
'

test_expect_success 'no terminal: pass1 fails at once, the key named' '
	test_expect_code 255 timeout 20 setsid -w "$DISPATCH" -F "$TRASH/cfg" run -H pass1 -- true \
		</dev/null >out 2>err &&
	test_grep -F "agent: no agent" err &&
	test_grep -F "key $KEY needs a passphrase (no terminal)" err
'

test_expect_success 'BatchMode on a terminal: nothing asked, fails at once naming the methods' '
	test_expect_code 255 on_tty -- "$DISPATCH" run -H kbd1 -- true &&
	! grep -q "Password" tty &&
	test_grep -F "keyboard-interactive: needs a terminal (BatchMode)" tty &&
	test_expect_code 255 on_tty -- "$DISPATCH" run -H pass1 -- true &&
	! grep -q "Enter passphrase" tty &&
	test_grep -F "key $KEY needs a passphrase (BatchMode)" tty
'

test_expect_success 'the server log never saw a secret' '
	no_secret "$TB/sshd/kbd1/log" "$TB/sshd/box1/log"
'

test_done
