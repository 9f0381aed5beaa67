#!/bin/bash
# t7100: SLURM jobs end to end on the testbed cluster (host hpc, tests/testbed
# parts/30-slurm): a GPU job sees env values with spaces, quotes and $ unchanged and
# CUDA_VISIBLE_DEVICES; a 2-node job runs the bootstrap on both nodes (ranks 0 and 1,
# one master address); submit-packed at a ref runs that code, --dirty an uncommitted
# edit and an untracked file, and a large snapshot is uploaded once and extracted on
# both nodes of each job; a failing job's exit
# code shows in status; cancel gives CANCELLED; --dependency afterok and --array;
# sbatch's own error verbatim with nothing recorded; the connection dropped right
# after sbatch (twice: with and without sbatch's answer saved) gives exactly one job,
# which dispatch names; 20 concurrent submissions are all in the ledger.
# Skips when the testbed has no SLURM part. Uses the default testbed instance.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
DB=$DISPATCH_STATE_DIR/ledger.db
TBUSER=$DISPATCH_TESTBED_USER
TBHOME=$(getent passwd "$TBUSER" | cut -d: -f6)

wait_end() {
	local i
	for i in $(seq 1 600); do
		dispatch --json status "$1" >st.json || return 1
		if python3 -c 'import json,sys; d=json.load(open("st.json"))["jobs"]; sys.exit(0 if d and not any(j["active"] for j in d) else 1)'; then
			return 0
		fi
		sleep 0.2
	done
	echo "job $1 did not end" >&2
	return 1
}
wait_running() {
	local i
	for i in $(seq 1 300); do
		dispatch --json status "$1" >st.json || return 1
		[ "$(field state)" = RUNNING ] && return 0
		sleep 0.2
	done
	return 1
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]])' st.json "$1"; }
jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
rows() { sqlite3 "$DB" "select count(*) from jobs${1:+ where $1}" 2>/dev/null || echo 0; }

test_expect_success 'a GPU job sees env values unchanged and CUDA_VISIBLE_DEVICES' '
	dispatch --json submit -H hpc -J gpujob --gpus 1 --chip a100-sxm4-80gb \
		--env "V1=a b  c" --env "V2=it'"'"'s \"q\" \$HOME" -- \
		"printf \"%s\n\" \"\$V1\" \"\$V2\" \"cuda=\$CUDA_VISIBLE_DEVICES\"" >sub.json &&
	job=$(jfield sub.json job) && case $job in [0-9]*@hpc) ;; *) false ;; esac &&
	wait_end "$job" && test "$(field state)" = COMPLETED &&
	log=$(jfield sub.json log) &&
	sed -n 1,2p "$log" >got &&
	printf "%s\n" "a b  c" "it'"'"'s \"q\" \$HOME" >want && test_cmp want got &&
	test_grep "^cuda=[0-9]" "$log"
'

test_expect_success 'the ledger has the job; its scripts are private' '
	test "$(sqlite3 "$DB" "select job_id || \"|\" || host || \"|\" || cluster || \"|\" || state from jobs where token = \"$(jfield sub.json token)\"")" = \
		"$(jfield sub.json id)|hpc|testbed|submitted" &&
	stage=$(jfield sub.json stage_dir) &&
	test "$(stat -c %a "$stage/sbatch.sh")" = 700 &&
	test "$(stat -c %a "$stage/bootstrap.sh")" = 700 &&
	test "$(stat -c %a "$stage")" = 700
'

test_expect_success 'a 2-node job runs the bootstrap on both nodes, one master address' '
	dispatch --json submit -H hpc -J twonode --nodes 2 -p cpu -- \
		"echo rank=\$DISPATCH_NODE_RANK master=\$DISPATCH_MASTER_ADDR nnodes=\$DISPATCH_NNODES" >sub.json &&
	wait_end "$(jfield sub.json job)" && test "$(field state)" = COMPLETED &&
	log=$(jfield sub.json log) &&
	sort "$log" >got &&
	printf "rank=0 master=node1 nnodes=2\nrank=1 master=node1 nnodes=2\n" >want &&
	test_cmp want got
'

test_expect_success 'a failing job shows FAILED and its exit code' '
	job=$(dispatch submit -H hpc -J failjob -p cpu -- "exit 3") &&
	wait_end "$job" &&
	test "$(field state)" = FAILED &&
	# a moment after the end only squeue may know it (no exit code there) while
	# accounting still says RUNNING: the code comes with sacct
	for i in $(seq 1 50); do
		test "$(field exit_code)" != None && break
		sleep 0.2 && dispatch --json status "$job" >st.json
	done &&
	test "$(field exit_code)" = 3
'

test_expect_success 'cancel of a running job gives CANCELLED' '
	job=$(dispatch submit -H hpc -J canceljob -p cpu -- "sleep 300") &&
	wait_running "$job" &&
	dispatch cancel "${job%@hpc}" >out && test_grep "cancelled" out &&
	wait_end "$job" && test "$(field state)" = CANCELLED
'

test_expect_success '--dependency afterok runs the second job after the first' '
	a=$(dispatch submit -H hpc -J depa -p cpu -- "sleep 3; date +%s%N") &&
	dispatch --json submit -H hpc -J depb -p cpu --dependency "afterok:${a%@hpc}" -- "date +%s%N" >b.json &&
	b=$(jfield b.json job) &&
	dispatch --json status "$b" >st.json &&
	case "$(field state)/$(field reason)" in PENDING/Dependency | RUNNING/* | COMPLETED/*) ;; *) false ;; esac &&
	wait_end "$b" && test "$(field state)" = COMPLETED &&
	wait_end "$a" && test "$(field state)" = COMPLETED &&
	alog=$(sqlite3 "$DB" "select log_path from jobs where job_id = \"${a%@hpc}\"") &&
	test "$(cat "$(jfield b.json log)")" -gt "$(cat "$alog")"
'

test_expect_success '--array runs every task; status shows each' '
	dispatch --json submit -H hpc -J arr -p cpu --array 0-2 -- "echo task=\$SLURM_ARRAY_TASK_ID" >sub.json &&
	job=$(jfield sub.json job) && wait_end "$job" &&
	python3 -c "import json; d=json.load(open(\"st.json\"))[\"jobs\"]; assert sorted(j[\"id\"].split(\"_\")[1] for j in d) == [\"0\",\"1\",\"2\"], d; assert all(j[\"state\"] == \"COMPLETED\" for j in d)" &&
	id=$(jfield sub.json id) &&
	for t in 0 2; do test_grep "^task=$t$" "$DISPATCH_TESTBED_DIR/cluster/log/arr-${id}_$t.out" || exit 1; done &&
	dispatch --json status "${id}_1" >st.json && test "$(field id)" = "${id}_1"
'

test_expect_success 'submit-packed at a ref runs the code of that ref' '
	git init -q repo && echo "echo code=v1" >repo/run.sh &&
	git -C repo add . && git -C repo -c user.email=t@t -c user.name=t commit -qm v1 && git -C repo tag v1 &&
	echo "echo code=v2" >repo/run.sh && git -C repo -c user.email=t@t -c user.name=t commit -qam v2 &&
	dispatch --json submit-packed -H hpc -p cpu --repo repo --ref v1 -- "sh run.sh" >sub.json &&
	wait_end "$(jfield sub.json job)" && test "$(field state)" = COMPLETED &&
	test "$(cat "$(jfield sub.json log)")" = code=v1
'

test_expect_success 'submit-packed --dirty runs an uncommitted edit and an untracked file' '
	echo "echo code=dirty; cat extra.txt" >repo/run.sh && echo untracked >repo/extra.txt &&
	dispatch --json submit-packed -H hpc -p cpu --repo repo --dirty -- "sh run.sh" >sub.json 2>err &&
	test_grep "1 modified, 1 untracked" err &&
	wait_end "$(jfield sub.json job)" && test "$(field state)" = COMPLETED &&
	printf "code=dirty\nuntracked\n" >want && test_cmp want "$(jfield sub.json log)"
'

# Over the 1 MiB that goes inside the script: uploaded into {share}/code once, then
# extracted from there on every node of every job.
test_expect_success 'a large snapshot is uploaded once and extracted on both nodes of each job' '
	git init -q big && head -c 3000000 /dev/urandom >big/blob &&
	git -C big add blob && git -C big -c user.email=t@t -c user.name=t commit -qm big &&
	want=$(sha256sum <big/blob | cut -d" " -f1) &&
	for i in 1 2; do
		dispatch -v --json submit-packed -H hpc -p cpu --nodes 2 --repo big -- \
			"echo \$DISPATCH_NODE_RANK \$(sha256sum <blob | cut -d\" \" -f1)" >big$i.json 2>bigerr$i ||
			return 1
	done &&
	test_grep "uploaded the code" bigerr1 &&
	test_grep "on the host already" bigerr2 && ! test_grep "uploaded the code" bigerr2 &&
	printf "0 %s\n1 %s\n" "$want" "$want" >want &&
	for i in 1 2; do
		wait_end "$(jfield big$i.json job)" && test "$(field state)" = COMPLETED &&
		sort "$(jfield big$i.json log)" >got && test_cmp want got || return 1
	done
'

test_expect_success 'sbatch'"'"'s own error is shown verbatim, exit 1, nothing recorded' '
	before=$(rows) &&
	test_expect_code 1 dispatch submit -H hpc -p nosuchpartition -- true >out 2>err &&
	test_must_be_empty out &&
	test_grep "^sbatch: error: .*[Pp]artition" err &&
	test "$(rows)" = "$before"
'

# An sbatch wrapper first in the test user's PATH (~/bin, which Debian's ~/.profile
# adds): it runs the real sbatch and then drops the SSH connection by killing its
# sshd session process (sshd-session since OpenSSH 9.8), only for jobs named droptest* (others pass straight through).
# droptesta*: the submitting shell lives on and saves sbatch's answer; droptestb*: the
# shell dies too, so dispatch must find the job by its token in squeue; droptestc*: only
# the shell is killed, the connection stays up and reports a signal, which is no
# refusal by sbatch either.
install_wrapper() {
	mkdir -p "$TBHOME/bin" &&
	cat >"$TBHOME/bin/sbatch" <<-'EOF' &&
	#!/bin/sh
	case "$*" in
	*/droptest*) ;;
	*) exec /usr/bin/sbatch "$@" ;;
	esac
	/usr/bin/sbatch "$@"
	st=$?
	p=$$ sshd=
	while p=$(ps -o ppid= -p "$p" | tr -d ' ') && [ "${p:-0}" -gt 1 ]; do
		# OpenSSH 9.8 and later: the connection's process is sshd-session
		case $(ps -o comm= -p "$p") in sshd | sshd-session) sshd=$p; break ;; esac
	done
	case "$*" in
	*/droptestb*) kill -9 "$PPID" ;;
	*/droptestc*) kill -9 "$PPID"; exit $st ;;
	esac
	[ -n "$sshd" ] && kill -9 "$sshd"
	exit $st
	EOF
	chmod 755 "$TBHOME/bin/sbatch" && chown -R "$TBUSER:" "$TBHOME/bin"
}
remove_wrapper() { rm -rf "$TBHOME/bin"; }
trap 'remove_wrapper; rm -rf "$TRASH"' EXIT

drop_test() {
	name=$1
	install_wrapper &&
	dispatch submit -H hpc -J "$name" -p cpu -- "sleep 1" >out 2>err
	rc=$?
	remove_wrapper
	cat err >&2
	test "$rc" = 0 &&
	test_grep "found the job by its token" err &&
	dispatch run -H hpc -- squeue -h -t all -u "$TBUSER" -n "$name" -o %i >q &&
	dispatch run -H hpc -- sacct -n -X -P -u "$TBUSER" --name "$name" -S now-1hours -o JobID >>q &&
	sort -u q >ids && test "$(wc -l <ids)" = 1 &&
	test "$(cat out)" = "$(cat ids)@hpc" &&
	test "$(sqlite3 "$DB" "select job_id || \"|\" || state from jobs where name = \"$name\"")" = "$(cat ids)|submitted"
}

test_expect_success 'connection dropped right after sbatch (answer saved): exactly one job, named' '
	drop_test "droptesta$$"
'

test_expect_success 'connection and shell dropped right after sbatch: found by its token, exactly one job' '
	drop_test "droptestb$$"
'

test_expect_success 'the shell killed right after sbatch, the connection up: found by its token' '
	drop_test "droptestc$$" &&
	test_grep "remote shell on .hpc. ended (exit status 137) before it reported" err
'

test_expect_success '20 concurrent submissions are all recorded in the ledger' '
	before=$(rows) &&
	for i in $(seq 1 20); do
		(dispatch submit -H hpc -J conc -p cpu -- true >conc.$i 2>conc.err.$i
		 echo $? >conc.rc.$i) &
	done &&
	wait &&
	{ ! grep -v "^0$" conc.rc.* || { tail -n 5 conc.err.*; false; }; } &&
	cat conc.[0-9]* | sort -u >ids && test "$(wc -l <ids)" = 20 &&
	test "$(rows "name = \"conc\" and state = \"submitted\"")" = 20 &&
	test "$(rows)" = $((before + 20))
'

test_done
