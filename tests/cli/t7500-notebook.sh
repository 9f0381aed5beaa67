#!/bin/bash
# t7500: dispatch notebook on the testbed, with Debian's Jupyter (tests/install-deps)
# on the SLURM nodes and box1. Through the URL dispatch prints, a kernel is created
# and a cell run over the kernel's websocket (tests/cli/lib-jupyter.py): on hpc it
# must print node1 or node2 (never the login node) and the GPU SLURM gave; the same
# page is opened in headless Chromium and its screenshot kept under the build dir
# (the path is printed). The token is in no process's command line and not in the
# job's log; it is kept in a mode 0600 file. attach opens a second tunnel to the same
# server; Ctrl-C (SIGINT, and on a real terminal through tests/cli/pty-drive.py) with
# --cancel-on-exit, or answering y, leaves the job CANCELLED and no process behind;
# without either, the job keeps running. A server that never answers gives the
# timeout error (exit 3) naming the log, and its job is cancelled.
. "$(dirname "$0")/lib.sh"

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }
ART=${TEST_BUILDDIR:-$TRASH}/artifacts/t7500
mkdir -p "$ART"

test_expect_success 'option errors exit 2' '
	test_expect_code 2 dispatch notebook -H hpc --detach --cancel-on-exit 2>err &&
	test_grep "detach" err &&
	test_expect_code 2 dispatch notebook -H hpc -- python 2>err &&
	test_expect_code 2 dispatch notebook attach 2>err &&
	test_expect_code 2 dispatch notebook -H "hpc,box1" 2>err && test_grep "one host" err
'

test_expect_success 'attach to a job the ledger does not know: exit 4' '
	test_expect_code 4 dispatch notebook attach 4242@hpc 2>err &&
	test_grep "notebook" err
'

testbed_up
# python3-websocket is Debian's: the system's python3 has it
for PY3 in python3 /usr/bin/python3; do "$PY3" -c 'import websocket' 2>/dev/null && break; done
command -v chromium >/dev/null || fail_rest "no chromium (tests/install-deps installs it)"
jupyter_cell() { "$PY3" "$TEST_SRCDIR/tests/cli/lib-jupyter.py" "$@"; }
CELL='import os, socket; print(socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES", "-"))'

git init -q repo && echo "print(1)" >repo/main.py &&
	git -C repo add . && git -C repo -c user.name=t -c user.email=t@t commit -qm code || exit 1

# until_file FILE PATTERN: bounded (150 s) wait until FILE has a line matching PATTERN
until_file() {
	local i
	for i in $(seq 1 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.5
	done
	echo "no '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}
until_state() {
	local i
	for i in $(seq 1 120); do
		dispatch status "$1" 2>/dev/null | grep -q " $2 " && return 0
		sleep 0.5
	done
	echo "job $1 never got to $2" >&2
	dispatch status "$1" >&2
	return 1
}
until_gone() {
	local i
	for i in $(seq 1 60); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.5
	done
	echo "process $1 still runs" >&2
	return 1
}
# no_server PORT: nothing of the notebook on remote port PORT runs any more (the
# nodes share this machine's process table): neither the server nor its kernels
no_server() {
	local i
	for i in $(seq 1 40); do
		pgrep -f -- "--port=$1 " >/dev/null || pgrep -f -- "--port=$1\$" >/dev/null ||
			{ pgrep -f "dispatch-notebook-$2/kernel" >/dev/null || return 0; }
		sleep 0.5
	done
	echo "left behind:" >&2
	ps -eo pid,args | grep -e "--port=$1" -e "dispatch-notebook-$2/" | grep -v grep >&2
	return 1
}
job_of() { sed -n 's/.*submitted job \([^ ;]*\);.*/\1/p' "$1"; }
screenshot() {
	timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TRASH/chromium" \
		--window-size=1280,800 --virtual-time-budget=5000 --screenshot="$2" "$1" >chromium.log 2>&1 &&
	test "$(head -c 4 "$2" | od -An -c | tr -d " ")" = "211PNG" &&
	test "$(wc -c <"$2")" -gt 5000 &&
	echo "# screenshot: $2"
}

test_expect_success 'hpc: a notebook on a compute node, reached through the printed URL' '
	(cd repo && exec "$DISPATCH" notebook -H hpc --gpus 1 --cancel-on-exit >../hpc.out 2>../hpc.err) &
	echo $! >hpc.pid &&
	until_file hpc.out "^http://127.0.0.1:[0-9]*/?token=" &&
	job=$(job_of hpc.err) && test -n "$job" && echo "$job" >hpc.job &&
	url=$(head -1 hpc.out) &&
	jupyter_cell "$url" "$CELL" --keep >cell 2>cell.err &&
	cat cell &&
	read -r node gpus <cell &&
	case "$node" in node1|node2) ;; *) echo "ran on $node" >&2; exit 1 ;; esac &&
	test "$node" != "$(hostname)" && test "$gpus" != "-" &&
	test_grep "Jupyter on $node port" hpc.err
'

test_expect_success 'hpc: the page in headless Chromium (screenshot kept)' '
	screenshot "$(head -1 hpc.out)" "$ART/hpc.png"
'

test_expect_success 'the token: in the URL only, never in a command line or the log' '
	token=$(sed -n "s/.*token=//p" hpc.out) && test ${#token} -ge 32 &&
	! ps -eo args | grep -F "$token" | grep -v grep &&
	dispatch logs "$(cat hpc.job)" >log &&
	test_grep "dispatch-notebook node" log &&
	! grep -F "$token" log &&
	f=$(grep -lr -F "$token" "$DISPATCH_STATE_DIR/notebooks") &&
	test "$(stat -c %a "$f")" = 600 &&
	test "$(stat -c %a "$DISPATCH_STATE_DIR/notebooks")" = 700
'

test_expect_success 'attach: a second tunnel to the same server; SIGINT leaves the job running' '
	job=$(cat hpc.job) &&
	{ "$DISPATCH" notebook attach "$job" >att.out 2>att.err & } &&
	pid=$! &&
	until_file att.out "^http://" &&
	test "$(head -1 att.out)" != "$(head -1 hpc.out)" &&
	jupyter_cell "$(head -1 att.out)" "print(40 + 2)" >cell &&
	test "$(cat cell)" = 42 &&
	kill -INT $pid && until_gone $pid &&
	test_grep "keeps running" att.err &&
	dispatch status "$job" | grep -q " RUNNING "
'

test_expect_success 'hpc: SIGINT with --cancel-on-exit: job CANCELLED, server and kernel gone' '
	job=$(cat hpc.job) && pid=$(cat hpc.pid) &&
	rport=$(sed -n "s/.*Jupyter on [^ ]* port \([0-9]*\),.*/\1/p" hpc.err) &&
	lport=$(sed -n "s|^http://127.0.0.1:\([0-9]*\)/.*|\1|p" hpc.out) &&
	pgrep -f "dispatch-notebook-${job%@*}/kernel" >/dev/null &&
	kill -INT "$pid" && until_gone "$pid" &&
	test_grep "cancelled job $job" hpc.err &&
	until_state "$job" CANCELLED &&
	no_server "$rport" "${job%@*}" &&
	! (exec 3<>"/dev/tcp/127.0.0.1/$lport") 2>/dev/null
'

test_expect_success 'box1: --detach --json, then attach; the cell runs on box1' '
	(cd repo && dispatch --json notebook -H box1 --detach >../box.json 2>../box.err) &&
	job=$(jget box.json "d[\"job\"]") && echo "$job" >box.job &&
	test "$(jget box.json "d[\"is_slurm\"]")" = False &&
	test "$(jget box.json "d[\"local_url\"]")" = None &&
	test "$(jget box.json "d[\"remote_port\"] > 0")" = True &&
	test -n "$(jget box.json "d[\"log_path\"]")" && test -n "$(jget box.json "d[\"work_dir\"]")" &&
	dispatch status "$job" | grep -q " RUNNING " &&
	lport=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	{ "$DISPATCH" notebook attach "$job" --cancel-on-exit --port "$lport" >boxatt.out 2>boxatt.err & } &&
	echo $! >box.pid &&
	until_file boxatt.out "^http://" &&
	test_grep "^http://127.0.0.1:$lport/?token=" boxatt.out &&
	jupyter_cell "$(head -1 boxatt.out)" "$CELL" --keep >cell &&
	cat cell &&
	box=$(dispatch run -H box1 -- hostname) &&
	test "$(cut -d" " -f1 cell)" = "$box" &&
	screenshot "$(head -1 boxatt.out)" "$ART/box1.png"
'

test_expect_success 'box1: SIGINT with --cancel-on-exit: job CANCELLED, nothing left' '
	job=$(cat box.job) && pid=$(cat box.pid) &&
	rport=$(jget box.json "d[\"remote_port\"]") &&
	kill -INT "$pid" && until_gone "$pid" &&
	until_state "$job" CANCELLED &&
	no_server "$rport" "${job%@*}"
'

test_expect_success 'Ctrl-C on a terminal with --cancel-on-exit (hpc)' '
	(cd repo && python3 "$TEST_SRCDIR/tests/cli/pty-drive.py" --timeout 150 --log ../tty \
		--expect "Ctrl-C to stop" --send "\\x03" -- "$DISPATCH" notebook -H hpc --cancel-on-exit) 2>drive &&
	job=$(job_of tty) && test -n "$job" &&
	rport=$(sed -n "s/.*Jupyter on [^ ]* port \([0-9]*\),.*/\1/p" tty) &&
	test_grep "cancelled job $job" tty &&
	until_state "$job" CANCELLED &&
	no_server "$rport" "${job%@*}"
'

test_expect_success 'Ctrl-C on a terminal asks; y cancels (box1)' '
	(cd repo && python3 "$TEST_SRCDIR/tests/cli/pty-drive.py" --timeout 150 --log ../tty \
		--expect "Ctrl-C to stop" --send "\\x03" --expect "cancel job .*\\[y/N\\]" --send "y\\r" \
		-- "$DISPATCH" notebook -H box1) 2>drive &&
	job=$(job_of tty) && test -n "$job" &&
	test_grep "cancelled job $job" tty &&
	until_state "$job" CANCELLED
'

test_expect_success 'a server that exits before it answers: exit 1, its status and log named' '
	git init -q dies && mkdir dies/bin &&
	printf "#!/bin/sh\ncase \"\$*\" in *--version*) exit 0 ;; esac\necho no luck >&2\nexit 3\n" >dies/bin/jupyter &&
	chmod +x dies/bin/jupyter &&
	git -C dies add . && git -C dies -c user.name=t -c user.email=t@t commit -qm dies &&
	(cd dies && test_expect_code 1 dispatch notebook -H box1 --timeout 60 \
		--setup "PATH=\$PWD/bin:\$PATH" >../dies.out 2>../dies.err) &&
	cat dies.err &&
	test_grep "ended with status 3 before it answered" dies.err &&
	test_grep "its log: /.*notebook-" dies.err &&
	dispatch logs "$(job_of dies.err)" | grep "no luck"
'

test_expect_success 'a server that never answers: exit 3, the log named, the job cancelled' '
	git init -q never && mkdir never/bin &&
	printf "#!/bin/sh\ncase \"\$*\" in *--version*) exit 0 ;; esac\nexec sleep 600\n" >never/bin/jupyter &&
	chmod +x never/bin/jupyter &&
	git -C never add . && git -C never -c user.name=t -c user.email=t@t commit -qm never &&
	(cd never && test_expect_code 3 dispatch notebook -H hpc --timeout 10 \
		--setup "PATH=\$PWD/bin:\$PATH" >../never.out 2>../never.err) &&
	cat never.err &&
	test_grep "did not answer within 10 s" never.err &&
	test_grep "its log: /.*notebook-" never.err &&
	test_must_be_empty never.out &&
	job=$(job_of never.err) && until_state "$job" CANCELLED
'

test_done
