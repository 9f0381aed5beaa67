#!/bin/bash
# t7710: dispatch notebook on a plain host (the testbed's box1, with Debian's
# Jupyter): --detach --json prints the ReplResult fields and leaves the server
# running; attach --port tunnels to it, a cell runs on box1 and Chromium takes a
# screenshot (kept under the build dir, the path printed); clients that reset their
# connection mid-answer do not end the tunnel (SIGPIPE); SIGINT with
# --cancel-on-exit cancels the job and leaves nothing behind; on a real terminal
# Ctrl-C asks, and y cancels; notebook sync sends the work tree's changes into the
# running job's code (an edit made there named, nothing applied). A server that exits before it answers is reported
# with its status and log (exit 1); a busy --port submits nothing. The SLURM host:
# t7700.
. "$(dirname "$0")/lib.sh"

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }
ART=${TEST_BUILDDIR:-$TRASH}/artifacts/t7710
mkdir -p "$ART"

testbed_up
. "$TEST_SRCDIR/tests/cli/lib-notebook.sh"

test_expect_success 'a busy --port fails before anything is submitted' '
	{ python3 -c "import socket, time; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(120)" >busy.port & } &&
	holder=$! &&
	until_file busy.port "^[0-9]" &&
	port=$(cat busy.port) &&
	(cd repo && test_expect_code 1 dispatch notebook -H box1 --port "$port" 2>../busy.err) &&
	kill "$holder" &&
	test_grep "in use" busy.err &&
	test "$(dispatch --json jobs --no-refresh | python3 -c "import json, sys; print(len(json.load(sys.stdin)[\"jobs\"]))")" = 0
'

test_expect_success 'box1: --detach --json, then attach; the cell runs on box1' '
	{ (cd repo && dispatch --json notebook -H box1 --detach >../box.json 2>../box.err) ||
		{ cat box.err; false; }; } &&
	job=$(jget box.json "d[\"job\"]") && echo "$job" >box.job &&
	test "$(jget box.json "d[\"is_slurm\"]")" = False &&
	test "$(jget box.json "d[\"local_url\"]")" = None &&
	test "$(jget box.json "d[\"remote_port\"] > 0")" = True &&
	test -n "$(jget box.json "d[\"log_path\"]")" && test -n "$(jget box.json "d[\"work_dir\"]")" &&
	dispatch status "$job" >st && { grep -q " RUNNING " st || { cat st; false; }; } &&
	lport=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	{ "$DISPATCH" notebook attach "$job" --cancel-on-exit --port "$lport" >boxatt.out 2>boxatt.err & } &&
	echo $! >box.pid && track $! &&
	until_file boxatt.out "^http://" &&
	test_grep "^http://127.0.0.1:$lport/?token=" boxatt.out &&
	jupyter_cell "$(head -1 boxatt.out)" "$CELL" --keep >cell &&
	cat cell &&
	box=$(dispatch run -H box1 -- hostname) &&
	test "$(cut -d" " -f1 cell)" = "$box" &&
	screenshot "$(head -1 boxatt.out)" "$ART/box1.png"
'
show_artifact "$ART/box1.png"

test_expect_success 'clients that hang up mid-answer end only their own connection' '
	url=$(head -1 boxatt.out) &&
	python3 "$TEST_SRCDIR/tests/cli/lib-abort-clients.py" "$url" 30 &&
	kill -0 "$(cat box.pid)" &&
	jupyter_cell "$url" "print(6 * 7)" >cell &&
	test "$(cat cell)" = 42
'

test_expect_success 'notebook sync: the work tree since the job commit reaches the kernel; a file edited there is named' '
	job=$(cat box.job) && url=$(head -1 boxatt.out) &&
	echo "print(2)" >repo/main.py && echo "new" >repo/added.txt &&
	(cd repo && dispatch notebook sync "$job") >sync.out &&
	test_grep "^$job: 2 files changed since [0-9a-f]\{12\}, in its code now$" sync.out &&
	jupyter_cell "$url" "print(open(\"main.py\").read().strip(), open(\"added.txt\").read().strip())" >cell &&
	test "$(cat cell)" = "print(2) new" &&
	rm repo/added.txt && echo "print(3)" >repo/main.py &&
	(cd repo && dispatch --json notebook sync "$job") >sync.json &&
	test "$(jget sync.json "d[\"files\"]")" = 1 &&
	jupyter_cell "$url" "import os; print(open(\"main.py\").read().strip(), os.path.exists(\"added.txt\"))" >cell &&
	test "$(cat cell)" = "print(3) False" &&
	jupyter_cell "$url" "open(\"main.py\", \"w\").write(\"print(99)\\n\")" >/dev/null &&
	echo "print(4)" >repo/main.py &&
	(cd repo && test_expect_code 1 dispatch notebook sync "$job") 2>sync.err &&
	test_grep "changed on .* since the last sync" sync.err &&
	test_grep "main.py" sync.err &&
	jupyter_cell "$url" "print(open(\"main.py\").read().strip())" >cell &&
	test "$(cat cell)" = "print(99)" &&
	git -C repo checkout -q main.py
'

test_expect_success 'box1: SIGINT with --cancel-on-exit: job CANCELLED, nothing left' '
	job=$(cat box.job) && pid=$(cat box.pid) &&
	rport=$(jget box.json "d[\"remote_port\"]") &&
	kill -INT "$pid" && until_gone "$pid" &&
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
	test_grep "its log: /.*/dies-" dies.err &&
	dispatch logs "$(job_of dies.err)" | grep "^dispatch-notebook-exit 3$"
'

test_done
