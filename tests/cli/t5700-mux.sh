#!/bin/bash
# t5700: lib/transport/mux.c against real OpenSSH masters (tests/helpers/mux-client):
# a master started here with `ssh -fN -o ControlMaster=yes`, then through it: exit
# statuses and signals (0, 7, 143, 137), stdout and stderr apart, stdin (1 MB), the
# login shell, stdio forwards (to an echo server, to a host only the bastion reaches,
# to a closed port), sockets that must not be used (another user's socket, a socket of
# ours answered by another user, a stale socket, not a socket) and a master killed in
# the middle of a command. The same again as a non-root user with a master of its own.
# Waits are bounded (timeout) so that a hang fails; nothing is timed.
#
# The testbed is an instance of its own, without SLURM; it stays up for the next run
# (DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5700 tests/testbed/down removes it).
. "$(dirname "$0")/lib.sh"

: "${MUX_CLIENT:?MUX_CLIENT must point at the built tests/helpers/mux-client}"
mux() { timeout 60 "$MUX_CLIENT" "$@"; }

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5700
export DISPATCH_TESTBED_PORT_BASE=31700 DISPATCH_TESTBED_PREFIX=dmx7 DISPATCH_TESTBED_NET=10.187
command -v setpriv >/dev/null || skip_rest "needs setpriv (util-linux)"
testbed_up
TB=$DISPATCH_TESTBED_DIR
U=$DISPATCH_TESTBED_USER

# Masters and servers started here (in tests too, which run in subshells) are
# written down by pid and stopped at exit, each by its own pid.
track() { echo "$1" >>"$TRASH/.pids"; }
cleanup() {
	local p
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	rm -rf "$TRASH"
}
trap cleanup EXIT

# start_master SOCKET HOST: a master as a user would start one; prints its pid.
start_master() {
	local sock=$1 host=$2 pid
	ssh -F "$DISPATCH_SSH_CONFIG" -fN -o ControlMaster=yes -o ControlPath="$sock" \
		-o ControlPersist=600 "$host" </dev/null || return 1
	pid=$(ssh -F "$DISPATCH_SSH_CONFIG" -o ControlPath="$sock" -O check "$host" 2>&1 |
		sed -n 's/.*(pid=\([0-9]*\)).*/\1/p')
	[ -n "$pid" ] || return 1
	track "$pid"
	echo "$pid"
}

# A directory others can reach, for the sockets made as the test user.
chmod 711 "$TRASH"
mkdir "$TRASH/pub"
chown "$U" "$TRASH/pub"

CM=$TRASH/cm
master_pid=$(start_master "$CM" box1) || fail_rest "cannot start an ssh master on box1"

test_expect_success 'the master answers: hello, alive check, its pid' '
	mux check "$CM" >out &&
	echo "pid $master_pid" >want && test_cmp want out
'

test_expect_success 'exit statuses pass through: 0 and 7' '
	mux exec "$CM" true </dev/null &&
	test_expect_code 7 mux exec "$CM" "exit 7" </dev/null
'

test_expect_success 'a command killed by signal N gives 128+N, as direct' '
	test_expect_code 143 mux exec "$CM" '"'"'kill -TERM $$'"'"' </dev/null 2>err &&
	test_must_be_empty err &&
	test_expect_code 137 mux exec "$CM" '"'"'kill -KILL $$'"'"' </dev/null 2>err &&
	test_must_be_empty err
'

# What the master itself does with a signal: no exit message at all (ssh exits 255).
test_expect_success 'a raw command killed by a signal ends without an exit status' '
	test_expect_code 254 mux exec -r "$CM" '"'"'kill -TERM $$'"'"' </dev/null 2>err &&
	test_grep "ended without an exit status" err &&
	test_expect_code 255 ssh -F "$DISPATCH_SSH_CONFIG" -o ControlPath="$CM" box1 \
		'"'"'kill -TERM $$'"'"' </dev/null
'

test_expect_success 'stdout and stderr stay apart; the command runs in a login shell' '
	mux exec "$CM" "echo to-out; echo to-err >&2; shopt -q login_shell && echo login" \
		</dev/null >out 2>err &&
	printf "to-out\nlogin\n" >want-out && echo to-err >want-err &&
	test_cmp want-out out && test_cmp want-err err
'

test_expect_success 'stdin passes through: its end, and 1 MB intact each way' '
	printf "abc\n" | mux exec "$CM" "cat; echo end" >out &&
	printf "abc\nend\n" >want && test_cmp want out &&
	head -c 1048576 /dev/urandom >in &&
	mux exec "$CM" cat <in >out && cmp in out
'

test_expect_success 'a terminal on the far side when asked for, with TERM' '
	test_expect_code 4 mux exec -t "$CM" "test -t 0 && test -t 1 && echo \"tty \$TERM\"; exit 4" \
		</dev/null >out &&
	tr -d "\r" <out >got && echo "tty xterm" >want && test_cmp want got &&
	mux exec "$CM" "test -t 0 || test -t 1 || echo none" </dev/null >out &&
	echo none >want && test_cmp want out
'

test_expect_success 'stdin written piece by piece (mux_exec_write), output meanwhile' '
	head -c 1048576 /dev/urandom >in &&
	mux exec -w "$CM" "cat; echo done >&2" <in >out 2>err &&
	cmp in out && echo done >want && test_cmp want err
'

# More than the master takes in before the channel closes (its window is 2 MB).
test_expect_success 'a command that stops reading: the writer is told, the status kept' '
	head -c 16777216 /dev/zero >in &&
	test_expect_code 3 mux exec -w "$CM" "head -c 10 >/dev/null; exit 3" <in 2>err &&
	test_grep "write: the command ended before reading all its input (kind 1)" err &&
	test_expect_code 3 mux exec "$CM" "head -c 10 >/dev/null; exit 3" <in
'

test_expect_success 'stdin from memory, and none at all' '
	mux exec -i "$(printf "l1\nl2")" "$CM" "cat; echo; echo end" </dev/null >out &&
	printf "l1\nl2\nend\n" >want && test_cmp want out &&
	mux exec -i "" "$CM" "cat; echo end" >out &&
	echo end >want && test_cmp want out
'

# A timeout abandons the session: the master closes the channel. With a terminal the
# remote side gets SIGHUP; without one it runs on (the master has no way to signal
# it: see the phase 2 notes in the report of issue 12).
test_expect_success 'a timeout ends the wait; with a terminal the command is hung up' '
	pidfile=$TB/cluster/work/t5700-timeout.pid &&
	rm -f "$pidfile" &&
	test_expect_code 255 mux exec -t -T 1 "$CM" "echo \$\$ >$pidfile; exec sleep 300" \
		</dev/null >/dev/null 2>err &&
	test_grep "timed out after 1 s" err &&
	test_grep "kind 3)" err &&
	pid=$(cat "$pidfile") && test -n "$pid" &&
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 "$pid" 2>/dev/null
'

# The sftp server answers SSH_FXP_INIT with SSH_FXP_VERSION (type 2, version 3, then
# extensions); it exits at the end of its input without sending what it has queued,
# so stdin stays open (a fifo) until the answer is in.
test_expect_success 'a subsystem through the master: sftp answers its hello' '
	mkfifo sftp-in &&
	{ mux exec -s "$CM" sftp <sftp-in >sftp-out & } &&
	exec 3>sftp-in &&
	printf "\000\000\000\005\001\000\000\000\003" >&3 &&
	for i in $(seq 200); do [ "$(wc -c <sftp-out)" -ge 9 ] && break; sleep 0.1; done &&
	exec 3>&- &&
	wait &&
	od -An -tx1 -j4 -N5 sftp-out | tr -d " \n" >got && echo >>got &&
	echo 0200000003 >want && test_cmp want got
'

test_expect_success 'the session ran through the master: no new login on box1' '
	before=$(grep -c "Accepted publickey" "$TB/sshd/box1/log") &&
	mux exec "$CM" true </dev/null &&
	after=$(grep -c "Accepted publickey" "$TB/sshd/box1/log") &&
	test "$before" = "$after"
'

# kbd1 asks for a password at every login (keyboard-interactive through PAM): a
# stand-in for a second factor. One login, then twenty commands without a prompt.
# sshpass answers the prompt; the master stays in the foreground under it (ssh -f
# under sshpass dies of the hangup when sshpass exits, at times before setsid).
if command -v sshpass >/dev/null; then
	test_expect_success 'a keyboard-interactive login once, then twenty commands through it' '
		kcm=$TRASH/cm-kbd &&
		log=$TB/sshd/kbd1/log &&
		before=$(grep -c "Accepted keyboard-interactive/pam" "$log" || :) &&
		{ sshpass -f "$DISPATCH_TESTBED_KBD_PASSWORD_FILE" ssh -F "$DISPATCH_SSH_CONFIG" \
			-o BatchMode=no -o NumberOfPasswordPrompts=1 -N -o ControlMaster=yes \
			-o ControlPath="$kcm" kbd1 </dev/null >/dev/null 2>&1 & } &&
		track $! &&
		for i in $(seq 200); do mux check "$kcm" >/dev/null 2>&1 && break; sleep 0.1; done &&
		track "$(mux check "$kcm" | cut -d" " -f2)" &&
		for i in $(seq 20); do
			echo "$i" >want &&
			mux exec "$kcm" "echo $i" </dev/null >out && test_cmp want out || exit 1
		done &&
		after=$(grep -c "Accepted keyboard-interactive/pam" "$log") &&
		test "$after" = $((before + 1))
	'
fi

echo_port=$((DISPATCH_TESTBED_PORT_BASE + 91))
cat >"$TRASH/echo.py" <<'PY'
import socket, sys, threading
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[1]))); srv.listen(8)
print("ready", flush=True)
def serve(c):
    while (d := c.recv(65536)):
        c.sendall(d)
    c.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
python3 "$TRASH/echo.py" "$echo_port" >"$TRASH/echo.out" &
track $!

test_expect_success 'a stdio forward carries a stream to HOST:PORT on the far side' '
	for i in $(seq 100); do test -s "$TRASH/echo.out" && break; sleep 0.1; done &&
	head -c 300000 /dev/urandom >in &&
	mux forward "$CM" 127.0.0.1 "$echo_port" <in >out &&
	cmp in out
'

# As forward would use it: an accepted TCP connection handed to the master as it is.
test_expect_success 'an accepted connection handed to the master: carried, then ended' '
	lport=$((DISPATCH_TESTBED_PORT_BASE + 92)) &&
	{ mux forward-accept "$CM" 127.0.0.1 "$echo_port" "$lport" >fa.out 2>fa.err & } &&
	for i in $(seq 100); do grep -q ready fa.out && break; sleep 0.1; done &&
	head -c 200000 /dev/urandom >in &&
	python3 -c "
import socket, sys
s = socket.create_connection((\"127.0.0.1\", int(sys.argv[1])))
s.sendall(open(\"in\", \"rb\").read()); s.shutdown(socket.SHUT_WR)
out = b\"\"
while (d := s.recv(65536)):
    out += d
open(\"out\", \"wb\").write(out)
" "$lport" &&
	cmp in out &&
	wait &&
	printf "ready\nforwarding\nended\n" >want && test_cmp want fa.out
'

test_expect_success 'a stdio forward reaches what only the far side reaches' '
	bastion_cm=$TRASH/cm-bastion &&
	start_master "$bastion_cm" bastion >/dev/null &&
	echo | mux forward "$bastion_cm" "$DISPATCH_TESTBED_NET.1.2" 22 >banner &&
	test_grep "^SSH-2.0-OpenSSH" banner
'

test_expect_success 'a stdio forward to a closed port is refused with the reason' '
	test_expect_code 255 mux forward "$CM" 127.0.0.1 $((DISPATCH_TESTBED_PORT_BASE + 5)) \
		</dev/null 2>err &&
	test_grep "refused a stdio forward to 127.0.0.1:$((DISPATCH_TESTBED_PORT_BASE + 5)): " err &&
	test_grep "(refused," err &&
	mux check "$CM" >/dev/null
'

# A listener that writes down, per connection, the bytes it got (hex; "-" when
# none), so that a test can tell whether anything connected and said hello.
cat >"$TRASH/listen.py" <<'PY'
import os, socket, sys
path, log = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(8)
print("ready", flush=True)
while True:
    c, _ = srv.accept()
    data = b""
    c.settimeout(10)
    try:
        while (d := c.recv(4096)):
            data += d
            if b"SENTINEL" in data:
                break
    except OSError:
        pass
    with open(log, "a") as f:
        f.write((data.hex() or "-") + "\n")
    c.close()
PY

# listen_as USER PATH LOG: the listener above, run as USER; waits until it listens.
listen_as() {
	setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups \
		/usr/bin/python3 "$TRASH/listen.py" "$2" "$3" >"$3.ready" &
	track $!
	for i in $(seq 100); do test -s "$3.ready" && return 0; sleep 0.1; done
	return 1
}

sentinel() {
	python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"SENTINEL"); s.close()' "$1"
}

test_expect_success 'a socket owned by another user is refused without connecting' '
	listen_as "$U" "$TRASH/pub/other.sock" "$TRASH/pub/other.log" &&
	test_expect_code 255 mux check "$TRASH/pub/other.sock" 2>err &&
	test_grep "belongs to uid $(id -u "$U"), not to you (uid 0): not used" err &&
	test_grep "(owner," err &&
	test_expect_code 255 mux exec "$TRASH/pub/other.sock" true </dev/null 2>err &&
	test_grep "(owner," err &&
	sentinel "$TRASH/pub/other.sock" &&
	for i in $(seq 100); do test -s "$TRASH/pub/other.log" && break; sleep 0.1; done &&
	echo 53454e54494e454c >want && test_cmp want "$TRASH/pub/other.log"
'

test_expect_success 'a socket of ours answered by another user: refused before hello' '
	listen_as "$U" "$TRASH/pub/peer.sock" "$TRASH/pub/peer.log" &&
	chown root "$TRASH/pub/peer.sock" &&
	test_expect_code 255 mux check "$TRASH/pub/peer.sock" 2>err &&
	test_grep "runs as uid $(id -u "$U"), not as you (uid 0): not used" err &&
	test_grep "(peer," err &&
	for i in $(seq 100); do test -s "$TRASH/pub/peer.log" && break; sleep 0.1; done &&
	echo - >want && test_cmp want "$TRASH/pub/peer.log"
'

test_expect_success 'no socket, not a socket: each said' '
	test_expect_code 255 mux check "$TRASH/none" 2>err &&
	test_grep "no master at .$TRASH/none. (no such socket)" err &&
	test_expect_code 255 mux check "$TRASH/echo.py" 2>err &&
	test_grep "is not a socket" err
'

test_expect_success 'a stale socket (master killed) is reported as stale, nothing runs' '
	stale=$TRASH/cm-stale &&
	pid=$(start_master "$stale" box2) &&
	mux check "$stale" >/dev/null &&
	kill -9 "$pid" &&
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done &&
	test -S "$stale" &&
	test_expect_code 255 mux check "$stale" 2>err &&
	test_grep "master socket .$stale. is stale: nothing listens on it" err &&
	test_grep "(stale," err &&
	rm -f "$TB/cluster/work/t5700-stale" &&
	test_expect_code 255 mux exec "$stale" "touch $TB/cluster/work/t5700-stale" </dev/null &&
	test ! -e "$TB/cluster/work/t5700-stale"
'

test_expect_success 'the master killed in the middle of a command: connection lost, no hang' '
	dying=$TRASH/cm-dying &&
	pid=$(start_master "$dying" box3) || exit 1
	{ mux exec "$dying" "echo started; sleep 120; echo never" </dev/null >out 2>err &&
	  echo 0 >rc || echo $? >rc; } &
	bg=$! &&
	for i in $(seq 300); do grep -q started out && break; sleep 0.1; done &&
	grep -q started out &&
	kill -9 "$pid" &&
	wait $bg &&
	echo 255 >want && test_cmp want rc &&
	test_grep "connection lost: the master on .$dying. went away" err &&
	test_grep "(lost, kind 255)" err &&
	echo started >want && test_cmp want out
'

# The same checks as a user who is not root: root passes permission checks that
# would hide a mistake in the uid comparisons.
UH=$TRASH/pub/home
mkdir -p "$UH"
cp "$TB/keys/id_ed25519" "$UH/key"
UMUX=$UH/mux-client # the build directory may be closed to other users
cp "$MUX_CLIENT" "$UMUX"
sed "s|$TB/keys/id_ed25519|$UH/key|" "$DISPATCH_SSH_CONFIG" >"$UH/ssh_config"
chown -R "$U" "$UH"
as_user() {
	setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups env HOME="$UH" "$@"
}

test_expect_success 'as another user: its own master works, root'"'"'s is not used' '
	ucm=$UH/cm &&
	as_user ssh -F "$UH/ssh_config" -fN -o ControlMaster=yes -o ControlPath="$ucm" \
		-o ControlPersist=600 box1 </dev/null &&
	upid=$(as_user ssh -F "$UH/ssh_config" -o ControlPath="$ucm" -O check box1 2>&1 |
		sed -n "s/.*(pid=\([0-9]*\)).*/\1/p") &&
	track "$upid" &&
	as_user timeout 60 "$UMUX" check "$ucm" >out &&
	echo "pid $upid" >want && test_cmp want out &&
	test_expect_code 143 as_user timeout 60 "$UMUX" exec "$ucm" \
		'"'"'kill -TERM $$'"'"' </dev/null &&
	printf "x\n" | as_user timeout 60 "$UMUX" exec "$ucm" "cat; id -un" >out &&
	printf "x\n%s\n" "$U" >want && test_cmp want out &&
	test_expect_code 255 as_user timeout 60 "$UMUX" check "$CM" 2>err &&
	test_grep "belongs to uid 0, not to you (uid $(id -u "$U")): not used" err &&
	test_expect_code 255 mux check "$ucm" 2>err &&
	test_grep "(owner," err
'

test_done
