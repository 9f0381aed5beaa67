#!/bin/bash
# t7700: dispatch notebook on the testbed's SLURM host hpc, with Debian's Jupyter
# (tests/install-deps) on its nodes. Through the URL dispatch prints, a kernel is
# created and a cell run over the kernel's websocket (tests/cli/lib-jupyter.py): it
# must print node1 or node2 (never the login node) and the GPU SLURM gave; the same
# page is opened in headless Chromium and its screenshot kept under the build dir
# (the path is printed). The token is in no process's command line and not in the
# job's log; it is kept in a mode 0600 file. attach opens a second tunnel to the same
# server and SIGINT ends it leaving the job running; SIGINT, and Ctrl-C on a real
# terminal (tests/cli/pty-drive.py), with --cancel-on-exit leave the job CANCELLED
# and neither server nor kernel behind. A server that never answers gives the
# timeout error (exit 3) naming the log, and its job is cancelled. Through the
# user's OpenSSH master (started here with ssh -fN -o ControlMaster=yes), attach
# polls and tunnels without a login of its own. The plain host: t7710.
. "$(dirname "$0")/lib.sh"

ART=${TEST_BUILDDIR:-$TRASH}/artifacts/t7700
mkdir -p "$ART"

test_expect_success 'option errors exit 2' '
	test_expect_code 2 dispatch notebook -H hpc --detach --cancel-on-exit 2>err &&
	test_grep "detach" err &&
	test_expect_code 2 dispatch notebook -H hpc -- python 2>err &&
	test_expect_code 2 dispatch notebook attach 2>err &&
	test_expect_code 2 dispatch notebook -H "hpc,box1" 2>err && test_grep "one host" err &&
	test_expect_code 2 dispatch notebook -H hpc --nodes 2 2>err && test_grep "one node" err
'

test_expect_success 'attach to a job the ledger does not know: exit 4' '
	test_expect_code 4 dispatch notebook attach 4242@hpc 2>err &&
	test_grep "notebook" err
'

testbed_up
. "$TEST_SRCDIR/tests/cli/lib-notebook.sh"

test_expect_success 'hpc: a notebook on a compute node, reached through the printed URL' '
	(cd repo && exec "$DISPATCH" notebook -H hpc --gpus 1 --cancel-on-exit >../hpc.out 2>../hpc.err) &
	echo $! >hpc.pid && track $! &&
	until_file hpc.out "^http://127.0.0.1:[0-9]*/?token=" &&
	job=$(job_of hpc.err) && test -n "$job" && echo "$job" >hpc.job &&
	url=$(head -1 hpc.out) &&
	jupyter_cell "$url" "$CELL" --keep >cell 2>cell.err &&
	cat cell &&
	read -r node gpus <cell &&
	case "$node" in node1|node2) ;; *) echo "ran on $node" >&2; exit 1 ;; esac &&
	test "$node" != "$(hostname)" && test "$gpus" != "-" &&
	test_grep "Jupyter on $node port" hpc.err &&
	rport=$(sed -n "s/.*Jupyter on [^ ]* port \([0-9]*\),.*/\1/p" hpc.err) &&
	ps -eo args | grep -e "--port=$rport " | grep -v grep >server.args &&
	test_grep -e "--ip=$DISPATCH_TESTBED_NET\.2\.1[12] " server.args
'

test_expect_success 'hpc: the page in headless Chromium (screenshot kept)' '
	screenshot "$(head -1 hpc.out)" "$ART/hpc.png"
'
show_artifact "$ART/hpc.png"

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
	pid=$! && track $pid &&
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
	pgrep -f "dispatch-notebook-${job%@*}[.][A-Za-z0-9]*/kernel" >/dev/null &&
	kill -INT "$pid" && until_gone "$pid" &&
	test_grep "cancelled job $job" hpc.err &&
	until_state "$job" CANCELLED &&
	no_server "$rport" "${job%@*}" &&
	! (exec 3<>"/dev/tcp/127.0.0.1/$lport") 2>/dev/null &&
	test_expect_code 1 dispatch notebook attach "$job" 2>err &&
	test_grep "has ended: its Jupyter server is gone" err
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

test_expect_success 'a server that never answers: exit 3, the log named, the job cancelled' '
	git init -q never && mkdir never/bin &&
	printf "#!/bin/sh\ncase \"\$*\" in *--version*) exit 0 ;; esac\nexec sleep 600\n" >never/bin/jupyter &&
	chmod +x never/bin/jupyter &&
	git -C never add . && git -C never -c user.name=t -c user.email=t@t commit -qm never &&
	(cd never && test_expect_code 3 dispatch notebook -H hpc --timeout 10 \
		--setup "PATH=\$PWD/bin:\$PATH" >../never.out 2>../never.err) &&
	cat never.err &&
	test_grep "did not answer within 10 s" never.err &&
	test_grep "its log: /.*/never-[0-9]*.out" never.err &&
	test_must_be_empty never.out &&
	job=$(job_of never.err) && until_state "$job" CANCELLED
'


test_expect_success 'through an OpenSSH master: --detach, then attach via the master' '
	(cd repo && dispatch --json notebook -H hpc --detach >../m.json 2>../m.err) &&
	job=$(sed -n "s/.*submitted job \([^ ;]*\);.*/\1/p" m.err) && echo "$job" >m.job &&
	mkdir -m 700 cm &&
	{ printf "Host hpc\n  ControlPath %s/cm/%%n\n\n" "$TRASH"; cat "$DISPATCH_SSH_CONFIG"; } >mux_config &&
	ssh -F "$DISPATCH_SSH_CONFIG" -fN -o ControlMaster=yes -o ControlPath="$TRASH/cm/hpc" \
		-o ControlPersist=300 hpc </dev/null &&
	{ DISPATCH_SSH_CONFIG=$TRASH/mux_config "$DISPATCH" -v notebook attach "$job" --cancel-on-exit \
		>m.out 2>m.verbose & } &&
	pid=$! && track $pid &&
	until_file m.out "^http://" &&
	jupyter_cell "$(head -1 m.out)" "$CELL" >cell &&
	case "$(cut -d" " -f1 cell)" in node1|node2) ;; *) exit 1 ;; esac &&
	test_grep "hpc: via master $TRASH/cm/hpc" m.verbose &&
	# notebook sync on SLURM: into the code on the compute node (srun --overlap)
	echo "print(5)" >repo/main.py &&
	(cd repo && DISPATCH_SSH_CONFIG=$TRASH/mux_config dispatch notebook sync "$job") >sync.out &&
	test_grep "^$job: 1 file changed since" sync.out &&
	jupyter_cell "$(head -1 m.out)" "print(open(\"main.py\").read().strip())" >cell &&
	test "$(cat cell)" = "print(5)" &&
	git -C repo checkout -q main.py &&
	! grep "logged in" m.verbose &&
	kill -INT "$pid" && until_gone "$pid" &&
	until_state "$job" CANCELLED
'
ssh -F "$DISPATCH_SSH_CONFIG" -o ControlPath="$TRASH/cm/hpc" -O exit hpc 2>/dev/null

test_done
