#!/bin/bash
# t7020: GPU leases and the queue on a plain host of tests/testbed with 2 fake GPUs
# (tests/cli/lib-testbed-gpu.sh; on the sshd of the fan1 alias, as host gbox: t5410
# fakes and removes box1's GPUs and may run at the same time). --gpus jobs get GPUs
# of their own (CUDA_VISIBLE_DEVICES, DISPATCH_GPUS), wait PENDING with a reason when
# none is free (status, wait --until running, queue -H) and start in order when one
# ends; SIGKILL of a launcher frees its GPU; cancel of a pending job; max_jobs; a
# second user's job shares the leases; a GPU busy with a foreign process is skipped
# unless --gpu-share; 10 racing submissions never share a GPU; a lock directory that
# is a symlink or another user's without the sticky bit is refused. Jobs wait on gate
# files, never on the clock. Skips unless root (testbed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"

tb_up
export DISPATCH_STATE_DIR="$TRASH/state"
CL=$DISPATCH_TESTBED_DIR/cluster
G=$CL/work/t7020-gates-$$
mkdir -p "$G" && chmod 777 "$G"
# A lock directory of this test's own, shared by two users: root's, mode 1777, as an
# admin makes it (a user's own is refused to the others).
LD=/tmp/dispatch-gpus-t7020-$$
U0=GPU-0a0a0a0a-0000-4000-8000-000000000000
U1=GPU-1b1b1b1b-1111-4111-8111-111111111111
printf '%s, NVIDIA A100-SXM4-80GB, 81920\n' "$U0" "$U1" >gpus
fake_gpus fan1 gpus
APPS=$TB_HOME/.fake-nvidia-smi/$(box_port fan1)/apps

# The test bed's inventory, and the same sshd as gbox (this test's lock dir), gboxq
# (max_jobs 1), gboxl and gboxs (refused lock dirs).
awk -v ld="$LD" -v u1="$U1" '{ print }
	/^hosts:$/ { print "  gbox:\n    ssh: fan1\n    cluster: testbed\n    chips: {a100-sxm4-80gb: 2}\n    gpu_lock_dir: " ld;
		print "  gboxq:\n    ssh: fan1\n    cluster: testbed\n    max_jobs: 1\n    gpu_lock_dir: " ld "-q";
		print "  gboxl:\n    ssh: fan1\n    cluster: testbed\n    gpu_lock_dir: " ld "-link";
		print "  gboxs:\n    ssh: fan1\n    cluster: testbed\n    gpu_lock_dir: " ld "-nosticky";
		print "  gboxp:\n    ssh: fan1\n    cluster: testbed\n    gpu_lock_dir: " ld "-p\n    env:\n      CUDA_VISIBLE_DEVICES: " u1;
		print "  gboxa:\n    ssh: fan1\n    cluster: testbed\n    max_jobs: 1\n    gpu_lock_dir: " ld "-a" }' \
	"$DISPATCH_INVENTORY" >inv.yaml
export DISPATCH_INVENTORY=$PWD/inv.yaml

cleanup_t7020() {
	local p
	touch "$G"/all 2>/dev/null
	# every job of this test, pending ones too (their launchers ignore TERM)
	for p in $(cat "$TRASH"/pgids 2>/dev/null) \
		$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select pid from jobs where pid > 1" 2>/dev/null); do
		kill -KILL -- "-$p" 2>/dev/null
	done
	# the other user's lock holders (each a session of its own)
	for p in $(cat "$TRASH"/holders 2>/dev/null); do
		kill -KILL -- "-$p" 2>/dev/null
	done
	[ -f "$TRASH/user2-created" ] && userdel -r dispatch-t7020 >/dev/null 2>&1
	rm -rf "$G" "$LD" "$LD-p" "$LD-q" "$LD-a" "$LD-link" "$LD-nosticky" "$LD-target" "/tmp/t7020-user2-$$" "$A"
	tb_cleanup
}
trap cleanup_t7020 EXIT
mkdir -m 1777 "$LD" || exit 1
# The box's other user (not a friend: sections "another user" below), and a directory
# of theirs.
if ! id -u dispatch-t7020 >/dev/null 2>&1; then
	useradd -M -s /bin/bash -c "dispatch t7020" dispatch-t7020 && touch "$TRASH/user2-created"
fi
A=/tmp/t7020-attacker-$$
mkdir -m 755 "$A" && chown dispatch-t7020 "$A" || exit 1
# as2 CMD...: CMD as the other user
as2() { runuser -u dispatch-t7020 -- "$@"; }
# hold2 FILE [CONTENT]: the other user writes CONTENT into FILE (when given) and holds
# FILE's lock from then on (a session of its own, killed at the end); returns once held.
hold2() {
	local r=$A/held.$RANDOM
	# (python3: the process that takes the lock holds it, as /proc/locks names it)
	setsid runuser -u dispatch-t7020 -- bash -c '
		if [ $# = 3 ]; then printf "%b" "$3" >"$1" || exit 1; fi
		exec python3 -c "import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], \"w\"); time.sleep(600)" "$1" "$2"' \
		hold2 "$1" "$r" ${2+"$2"} </dev/null >/dev/null 2>&1 &
	echo $! >>"$TRASH/holders"
	local i
	for i in $(seq 1 100); do [ -e "$r" ] && return 0; sleep 0.1; done
	echo "the other user holds no lock on $1" >&2
	return 1
}

# job NAME ARGS...: submits a job that prints its GPUs, waits for the gate file
# $G/NAME (or $G/all) and prints "end"; prints the job.
job() {
	local name=$1
	shift
	dispatch submit -H "${HOST:-gbox}" -J "$name" "$@" -- \
		"echo \"cvd=\${CUDA_VISIBLE_DEVICES-unset} gpus=\${DISPATCH_GPUS-unset}\"; while [ ! -e $G/$name ] && [ ! -e $G/all ]; do sleep 0.05; done; echo end" ||
		return 1
}
# state JOB: the job's state (and reason) as status --json gives them
state() {
	dispatch --json status "$1" >st.json &&
		python3 -c 'import json; j = json.load(open("st.json"))["jobs"][0]; print(j["state"], j["gpus"], j["reason"], sep="|")'
}
# wait_state JOB STATE: until the job is in STATE (bounded: 30 s)
wait_state() {
	local i s
	for i in $(seq 1 150); do
		s=$(state "$1") || return 1
		[ "${s%%|*}" = "$2" ] && return 0
		sleep 0.2
	done
	echo "job $1 is $s, not $2" >&2
	return 1
}
log() { echo "$CL/log/${1%@*}.out"; }
# cvd JOB: the CUDA_VISIBLE_DEVICES its job printed (once it printed it)
cvd() {
	local i
	for i in $(seq 1 150); do
		grep -q '^cvd=' "$(log "$1")" 2>/dev/null && break
		sleep 0.2
	done
	sed -n 's/^cvd=\([^ ]*\) .*/\1/p' "$(log "$1")"
}
pgid() { cut -d ' ' -f 1 "$CL/work/.dispatch/${1%@*}/pid"; }

test_expect_success 'three --gpus 1 jobs: two run on different GPUs, the third is PENDING' '
	a=$(job ga --gpus 1) && b=$(job gb --gpus 1) && c=$(job gc --gpus 1) &&
	echo "$a $b $c" >abc &&
	wait_state "$a" RUNNING && wait_state "$b" RUNNING &&
	ca=$(cvd "$a") && cb=$(cvd "$b") &&
	test "$(printf "%s\n" "$ca" "$cb" | sort | tr "\n" " ")" = "$U0 $U1 " &&
	test "$(state "$c")" = "PENDING||waiting for 1 GPU: 2 of 2 held (by a job of yours and one of yours)" &&
	test ! -s "$(log "$c")" &&
	dispatch status "$c" >out && test_grep "PENDING.*waiting for 1 GPU: 2 of 2 held" out &&
	test "$(table_cell out "$c" REASON)" = "waiting for 1 GPU: 2 of 2 held (by a job of yours and one of yours)" &&
	test_expect_code 3 dispatch wait --until running --interval 0.2 --timeout 1 "$c" >out &&
	test_grep PENDING out &&
	dispatch hosts show gbox >out &&
	test_grep "^gbox: nvidia-smi, 2 GPUs (0 free now)" out &&
	test_grep "^dispatch jobs: 2 running, 1 pending" out &&
	test "$(grep -c " leased " out)" = 2 &&
	dispatch -v solve --check --chip a100-sxm4-80gb --chips 1 >out 2>&1 &&
	test_grep "gbox.*busy now: 0 of 2 a100-sxm4-80gb free, needs 1 (1 dispatch job waiting there)" out &&
	{ grep -q "gpus=[01]$" "$(log "$a")" || grep -q "gpus=[01] *$" "$(log "$a")"; }
'

test_expect_success 'the pending job starts on the GPU of the job that ended' '
	read -r a b c <abc &&
	touch "$G/ga" && wait_state "$a" COMPLETED &&
	dispatch wait --until running --interval 0.2 --timeout 30 "$c" >out &&
	test_grep "RUNNING on gbox" out &&
	test "$(cvd "$c")" = "$(cvd "$a")" &&
	test "$(state "$c" | cut -d "|" -f 2)" = "$(sed -n "s/.* gpus=//p" "$(log "$a")")"
'

test_expect_success 'a --gpus 2 job waits for both GPUs, then gets both' '
	read -r a b c <abc &&
	d=$(job gd --gpus 2) && echo "$d" >d &&
	wait_state "$d" PENDING &&
	test_grep "waiting for 2 GPUs: 2 of 2 held" st.json &&
	touch "$G/gb" && wait_state "$b" COMPLETED &&
	test "$(state "$d" | cut -d "|" -f 1)" = PENDING &&
	touch "$G/gc" && wait_state "$d" RUNNING &&
	test "$(cvd "$d")" = "$U0,$U1"
'

test_expect_success 'SIGKILL of a running job'"'"'s launcher frees its GPUs at once' '
	d=$(cat d) && e=$(job ge --gpus 1) &&
	wait_state "$e" PENDING &&
	p=$(pgid "$d") && echo "$p" >>"$TRASH/pgids" &&
	kill -KILL "$p" &&
	wait_state "$e" RUNNING &&
	case "$(cvd "$e")" in "$U0" | "$U1") ;; *) false ;; esac &&
	touch "$G/gd" && wait_state "$d" LOST &&
	touch "$G/ge" && wait_state "$e" COMPLETED
'

test_expect_success 'cancel of a pending job: it leaves the queue and never starts' '
	f=$(job gf --gpus 2) && wait_state "$f" RUNNING &&
	g=$(job gg --gpus 1) && wait_state "$g" PENDING &&
	dispatch cancel "$g" >out && test_grep cancelled out &&
	wait_state "$g" CANCELLED &&
	{ test ! -e "$(log "$g")" || ! grep -q cvd= "$(log "$g")"; } &&
	! ls "$LD"/job.*."${g%@*}" 2>/dev/null &&
	touch "$G/gf" && wait_state "$f" COMPLETED
'

test_expect_success 'a CPU job on a GPU host gets CUDA_VISIBLE_DEVICES empty, and never waits' '
	h=$(job gh --gpus 2) && wait_state "$h" RUNNING &&
	k=$(job gk) && wait_state "$k" RUNNING &&
	test "$(sed -n "s/^cvd=\([^ ]*\) .*/[\1]/p" "$(log "$k")")" = "[]" &&
	touch "$G/gk" "$G/gh" && wait_state "$k" COMPLETED && wait_state "$h" COMPLETED
'

test_expect_success 'the host env'"'"'s CUDA_VISIBLE_DEVICES limits the GPUs leased there' '
	p1=$(HOST=gboxp job gp1 --gpus 1) && wait_state "$p1" RUNNING &&
	test "$(cvd "$p1")" = "$U1" &&
	p2=$(HOST=gboxp job gp2 --gpus 1) && wait_state "$p2" PENDING &&
	touch "$G/gp1" && wait_state "$p2" RUNNING &&
	test "$(cvd "$p2")" = "$U1" &&
	touch "$G/gp2" && wait_state "$p2" COMPLETED
'

test_expect_success 'max_jobs 1: the second job is PENDING until the first ends' '
	m1=$(HOST=gboxq job gm1) && wait_state "$m1" RUNNING &&
	m2=$(HOST=gboxq job gm2) && wait_state "$m2" PENDING &&
	test_grep "waiting for a job slot: max_jobs 1, 1 running" st.json &&
	touch "$G/gm1" && wait_state "$m2" RUNNING &&
	touch "$G/gm2" && wait_state "$m2" COMPLETED
'

test_expect_success 'a GPU busy with a foreign process is skipped; --gpu-share takes it' '
	printf "%s, 500\n" "$U0" >"$APPS" &&
	x=$(job gx --gpus 2) && wait_state "$x" PENDING &&
	test_grep "waiting for 2 GPUs: 0 of 2 held, 1 busy with other processes" st.json &&
	dispatch cancel "$x" && wait_state "$x" CANCELLED &&
	y=$(job gy --gpus 1) && wait_state "$y" RUNNING && test "$(cvd "$y")" = "$U1" &&
	z=$(job gz --gpus 1 --gpu-share) && wait_state "$z" RUNNING && test "$(cvd "$z")" = "$U0" &&
	: >"$APPS" && touch "$G/gy" "$G/gz" && wait_state "$y" COMPLETED && wait_state "$z" COMPLETED
'

test_expect_success 'another user'"'"'s job shares the leases; queue -H shows every user'"'"'s jobs' '
	v=$(job gv --gpus 1) && wait_state "$v" RUNNING &&
	s2=/tmp/t7020-user2-$$ && rm -rf "$s2" && mkdir -m 700 "$s2" &&
	cp "$CL/work/.dispatch/${v%@*}/launcher.sh" "$s2/" &&
	printf "echo \"cvd=\$CUDA_VISIBLE_DEVICES\"\nwhile [ ! -e %s/gw ] && [ ! -e %s/all ]; do sleep 0.05; done\n" "$G" "$G" >"$s2/bootstrap.sh" &&
	chown -R dispatch-t7020 "$s2" &&
	# the fake nvidia-smi on its PATH, as the sessions of that sshd have it
	{ runuser -u dispatch-t7020 -- env PATH="${APPS%/apps}:$PATH" setsid bash "$s2/launcher.sh" "$s2" user2job 1 0 "$LD" 0 "" 100 \
		</dev/null >"$s2/out" 2>&1 & } &&
	for i in $(seq 1 150); do grep -q cvd= "$s2/out" 2>/dev/null && break; sleep 0.2; done &&
	cut -d " " -f 1 "$s2/pid" >>"$TRASH/pgids" &&
	test "$(cat "$s2/out")" != "cvd=$(cvd "$v")" && grep -q "^cvd=GPU-" "$s2/out" &&
	w=$(job gw2 --gpus 1) && wait_state "$w" PENDING &&
	test_grep "2 of 2 held (by a job of yours and one of dispatch-t7020'"'"'s)\|2 of 2 held (by a job of dispatch-t7020'"'"'s and one of yours)" st.json &&
	dispatch queue -H gbox >q &&
	test_grep "user2job  *dispatch-t7020  *RUNNING" q &&
	test_grep "gw2-.* $DISPATCH_TESTBED_USER  *PENDING .*waiting for 1 GPU" q &&
	dispatch --json queue -H gbox >q.json &&
	python3 -c "
import json, sys
jobs = json.load(open(\"q.json\"))[\"jobs\"]
by = {j[\"user\"]: j for j in jobs}
assert by[\"dispatch-t7020\"][\"state\"] == \"RUNNING\" and by[\"dispatch-t7020\"][\"gpus\"] in (\"0\", \"1\"), jobs
p = [j for j in jobs if j[\"state\"] == \"PENDING\"]
assert len(p) == 1 and p[0][\"reason\"].startswith(\"waiting for 1 GPU\"), jobs
" &&
	touch "$G/gw" && wait_state "$w" RUNNING &&
	touch "$G/gv" "$G/gw2" && wait_state "$v" COMPLETED && wait_state "$w" COMPLETED
'

test_expect_success '10 concurrent --gpus 1 submissions never share a GPU' '
	for i in $(seq 1 10); do
		dispatch submit -H gbox -J race --gpus 1 -- \
			"echo \"\$CUDA_VISIBLE_DEVICES \$(date +%s%N) start\"; sleep 0.2; echo \"\$CUDA_VISIBLE_DEVICES \$(date +%s%N) end\"" \
			>race.$i 2>race.err.$i &
	done &&
	wait &&
	for i in $(seq 1 10); do wait_state "$(cat race.$i)" COMPLETED || exit 1; done &&
	for i in $(seq 1 10); do cat "$(log "$(cat race.$i)")"; done >events &&
	test "$(grep -c " start$" events)" = 10 &&
	python3 -c "
import sys
ev = sorted((int(t), kind, gpu) for gpu, t, kind in (l.split() for l in open(\"events\")))
held = {}
for t, kind, gpu in ev:
    if kind == \"start\":
        assert gpu in (\"$U0\", \"$U1\"), gpu
        assert not held.get(gpu), \"GPU %s given to two running jobs\" % gpu
        held[gpu] = True
    else:
        held[gpu] = False
"
'

test_expect_success 'a lock directory that is a symlink is refused' '
	mkdir -p "$LD-target" && ln -sfn "$LD-target" "$LD-link" &&
	test_expect_code 1 dispatch submit -H gboxl --gpus 1 -- true 2>err &&
	test_grep "lock directory $LD-link is a symbolic link: refusing it" err
'

test_expect_success 'a lock directory that others can write and is not sticky is refused' '
	mkdir -m 777 "$LD-nosticky" && chown root "$LD-nosticky" &&
	test_expect_code 1 dispatch submit -H gboxs --gpus 1 -- true 2>err &&
	test_grep "lock directory $LD-nosticky is refused: $LD-nosticky is writable by other users and not sticky, so another user could swap the records there" err
'

test_expect_success 'the lock directory is made sticky and world-writable, its files are not' '
	test "$(stat -c %a "$LD-q")" = 1777 &&
	test "$(stat -c %U "$LD-q")" = "$DISPATCH_TESTBED_USER" &&
	for f in "$LD"/gpu.*; do test "$(stat -c %a "$f")" = 644 || exit 1; done &&
	test "$(stat -c %U "$LD/gpu.$U0")" = "$DISPATCH_TESTBED_USER"
'

# Users of a box who are not friends (dispatch-submit(1), GPU LEASES): none can make
# another's job write to a file of theirs, stall another's commands for good, or put
# their text unescaped on another's terminal.

test_expect_success 'another user made the lock directory first: refused, and a swapped record writes nothing' '
	as2 mkdir -m 1777 "$LD-a" &&
	T=$CL/work/t7020-precious-$$ && echo precious >"$T" && chown "$DISPATCH_TESTBED_USER" "$T" &&
	{ HOST=gboxa job ga1 >a1 2>err; s=$?; } &&
	if [ $s = 0 ]; then
		# (accepted: the other user, who owns the directory, swaps the pending job'"'"'s
		# record for a link to a file of the victim'"'"'s)
		a2=$(HOST=gboxa job ga2) && wait_state "$a2" PENDING &&
		r=$(ls "$LD-a"/job.*."${a2%@*}") &&
		as2 rm -f "$r" && as2 ln -s "$T" "$r" &&
		for i in $(seq 1 30); do [ "$(cat "$T")" = precious ] || break; sleep 0.1; done
	fi &&
	test "$(cat "$T")" = precious &&
	test $s = 1 &&
	test_grep "the GPU lock directory $LD-a is refused: $LD-a belongs to dispatch-t7020, not to root or you, so another user could swap the records there (set gpu_lock_dir to a directory of yours, or have an admin make $LD-a root-owned with mode 1777, as /tmp is)" err
'

test_expect_success 'a record swapped for a link (by root, the only one who can): the launcher writes through nothing' '
	T=$CL/work/t7020-precious-$$ && echo precious >"$T" && chown "$DISPATCH_TESTBED_USER" "$T" &&
	m1=$(HOST=gboxq job gq1) && wait_state "$m1" RUNNING &&
	m2=$(HOST=gboxq job gq2) && wait_state "$m2" PENDING &&
	r=$(ls "$LD-q"/job.*."${m2%@*}") && rm -f "$r" && ln -s "$T" "$r" &&
	sleep 1 &&
	test "$(cat "$T")" = precious &&
	touch "$G/gq1" && wait_state "$m2" RUNNING &&
	test "$(cat "$T")" = precious &&
	touch "$G/gq2" && wait_state "$m2" COMPLETED &&
	test "$(cat "$T")" = precious
'

test_expect_success 'a lock held by another user for good: submit, queue and hosts show end, naming the holder' '
	f=$(job gf1 --gpus 2) && wait_state "$f" RUNNING &&
	p=$(job gp3 --gpus 1) && wait_state "$p" PENDING &&
	hold2 "$LD/.lock" &&
	holder="dispatch-t7020'"'"'s process [0-9]* (the file is $DISPATCH_TESTBED_USER'"'"'s)" &&
	SECONDS=0 &&
	test_expect_code 1 timeout 60 "$DISPATCH" submit -H gbox --gpus 1 -- true >out 2>err &&
	test $SECONDS -lt 30 &&
	test_grep "the lock of the GPU lock directory, $LD/.lock, is held for over 5 s by $holder: the job was not queued" err &&
	SECONDS=0 &&
	test_expect_code 1 timeout 60 "$DISPATCH" queue -H gbox >out 2>err &&
	test $SECONDS -lt 30 &&
	test_grep "the lock of the GPU lock directory, $LD/.lock, is held for over 5 s by $holder: cannot list the jobs there" err &&
	SECONDS=0 &&
	timeout 60 "$DISPATCH" hosts show gbox >out 2>err &&
	test $SECONDS -lt 30 &&
	test_grep "^dispatch jobs: not known: the lock of the GPU lock directory, $LD/.lock, is held for over 5 s by $holder" out &&
	# the pending job says why it waits, and can be cancelled
	for i in $(seq 1 100); do state "$p" | grep -q "held for over 5 s by dispatch-t7020" && break; sleep 0.2; done &&
	test_grep "waiting for the lock of the GPU lock directory, $LD/.lock, held for over 5 s by $holder" st.json &&
	dispatch cancel "$p" >out && wait_state "$p" CANCELLED &&
	kill -KILL -- "-$(tail -1 "$TRASH/holders")" &&
	touch "$G/gf1" && wait_state "$f" COMPLETED
'

test_expect_success 'a GPU locked by another user outside any record: the reason names the holder' '
	hold2 "$LD/gpu.$U0" &&
	x=$(job gx2 --gpus 2) && wait_state "$x" PENDING &&
	for i in $(seq 1 50); do state "$x" | grep -q "locked outside" && break; sleep 0.2; done &&
	test_grep "waiting for 2 GPUs: 1 of 2 held; GPU 0 is locked outside dispatch'"'"'s records, by dispatch-t7020'"'"'s process [0-9]*" st.json &&
	dispatch cancel "$x" && wait_state "$x" CANCELLED &&
	kill -KILL -- "-$(tail -1 "$TRASH/holders")"
'

test_expect_success 'forged records: queue shows their text escaped, and one that claims another user as IGNORED' '
	now=$(date +%s) &&
	hold2 "$LD/job.0000000001.forged-20260101-000000-0001" "$DISPATCH_TESTBED_USER|running|1|0|$now|\n" &&
	hold2 "$LD/job.0000000002.evil-20260101-000000-0002" "dispatch-t7020|pending|0||$now|\\033[2J\\033]0;pwned\\007\\rdispatch: all your GPUs are free\n" &&
	g=$(job gg2 --gpus 1) && wait_state "$g" RUNNING &&
	dispatch queue -H gbox >q 2>err &&
	cat q &&
	test_grep "^forged-20260101-000000-0001@gbox .* dispatch-t7020 *IGNORED .*(a record of dispatch-t7020'"'"'s that claims to be $DISPATCH_TESTBED_USER'"'"'s: ignored)" q &&
	test_grep "^evil-20260101-000000-0002@gbox .* dispatch-t7020 *PENDING .*(\\\\e\[2J\\\\e\]0;pwned\\\\x07\\\\rdispatch: all your GPUs are free)" q &&
	! grep -q "$(printf "\\033")" q && ! grep -q "$(printf "\\r")" q &&
	test_grep "gg2-.* $DISPATCH_TESTBED_USER *RUNNING" q &&
	dispatch hosts show gbox >out &&
	test_grep "^dispatch jobs: 1 running, 1 pending" out &&
	touch "$G/gg2" && wait_state "$g" COMPLETED
'

test_done
