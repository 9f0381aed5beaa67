#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/cp.sh [DISPATCH] [HOST]: dispatch cp against scp (and, for a tree, scp -r
# and tar | ssh tar), both directions, near and far; and a second cp -rpu of a synced
# tree against rsync -a over ssh (BENCH_CASES=update).
#
# HOST (default box1) is an alias of the ssh_config in $DISPATCH_SSH_CONFIG (the
# test bed's, from `eval "$(tests/testbed/up)"`), read by dispatch and by ssh/scp
# alike. "Far" goes through bench/delay-relay.py, started here in front of HOST's
# address, which holds each chunk for half the round trip each way (this machine's
# kernel has no netem qdisc); the tools reach it through a generated ssh_config
# (Port, HostKeyAlias), the same for all of them. scp and ssh are forced to the key
# exchange and cipher that dispatch negotiates (read from `dispatch -v`).
#
# Each case runs its tools in turn, A B [C] A B [C] ..., BENCH_RUNS times (5), and
# prints the median wall time and client CPU (user+sys, GNU time) of each, and
# dispatch's ratio to each other tool, the ratios taken from the medians of the same
# interleaved runs. The load average is printed before each case.
#
# Settings: BENCH_RUNS (5), BENCH_RTTS ("0 50 150", in ms; 0 is direct),
# BENCH_FILE_MB (1024 near, BENCH_FAR_FILE_MB 64 far), BENCH_TREE_FILES (10000
# near, BENCH_FAR_TREE_FILES 200 far: each small file costs round trips with every
# tool), BENCH_REMOTE_DIR (/dev/shm/dispatch-cp-bench on HOST), BENCH_DIR
# (/tmp/dispatch-cp-bench), BENCH_RELAY_PORT (first port for the relays, 39400),
# BENCH_CASES ("file tree"; "update" adds the incremental case, BENCH_UPDATE_FILES
# 2000; "tartree" a tree of BENCH_TAR_TREE_FILES (2000) at every round trip against
# tar through ssh alone; "masterfile" one file of BENCH_FILE_MB through an OpenSSH
# master, loopback only, against scp through the same master and on its own), BENCH_BASELINE (another dispatch binary,
# e.g. a copy of an older build: run as one more tool of each case, last in the
# rotation, its copy checked as the others').
# Needs: python3, GNU time, openssh-client.
set -euo pipefail

DISPATCH=$(realpath "${1:-build/dispatch}")
HOST=${2:-box1}
RUNS=${BENCH_RUNS:-5}
RTTS=${BENCH_RTTS:-0 50 150}
DIR=${BENCH_DIR:-/tmp/dispatch-cp-bench}
RDIR=${BENCH_REMOTE_DIR:-/dev/shm/dispatch-cp-bench}
RELAY_PORT=${BENCH_RELAY_PORT:-39400}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${DISPATCH_SSH_CONFIG:?run eval \"\$(tests/testbed/up)\" first, or set it to an ssh_config}"

mkdir -p "$DIR"
cd "$DIR"
RELAYS=()
cleanup() {
	local p
	for p in "${RELAYS[@]}"; do kill "$p" 2>/dev/null || true; done
	ssh -T -F "$DISPATCH_SSH_CONFIG" "$HOST" "rm -rf $RDIR" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# What dispatch negotiates, so that ssh uses the same.
neg=$("$DISPATCH" -v run -H "$HOST" -- true 2>&1 | grep -m1 'negotiated kex') ||
	{ echo "cp.sh: cannot reach $HOST with dispatch" >&2; exit 1; }
KEX=${neg#*negotiated kex } KEX=${KEX%%,*}
CIPHER=${neg#*cipher } CIPHER=${CIPHER%%,*}
SSHOPT=(-o "KexAlgorithms=$KEX" -o "Ciphers=$CIPHER")
echo "# dispatch negotiates $KEX and $CIPHER with $HOST; ssh and scp are forced to the same"
"$DISPATCH" -v -V 2>&1 | grep -m1 -i libssh2 | sed 's/^/# /' || true
ssh -V 2>&1 | sed 's/^/# /'

# The far config: the relays in front of HOST's address, the rest of HOST's options.
eval "$(ssh -F "$DISPATCH_SSH_CONFIG" -G "$HOST" | awk '
	$1 == "hostname" { print "THOST=" $2 } $1 == "port" { print "TPORT=" $2 }
	$1 == "hostkeyalias" { print "TALIAS=" $2 }')"
: "${TALIAS:=$([ "$TPORT" = 22 ] && echo "$THOST" || echo "[$THOST]:$TPORT")}"
{
	for rtt in $RTTS; do
		[ "$rtt" = 0 ] && continue
		port=$((RELAY_PORT + rtt))
		printf 'Host far%s\n\tHostName 127.0.0.1\n\tPort %s\n\tHostKeyAlias %s\n' "$rtt" "$port" "$TALIAS"
	done
	printf 'Host *\n'
	ssh -F "$DISPATCH_SSH_CONFIG" -G "$HOST" | awk '
		$1 ~ /^(user|identityfile|identitiesonly|userknownhostsfile|stricthostkeychecking|batchmode|connecttimeout)$/ {
			sub(/ true$/, " yes"); sub(/ false$/, " no"); print "\t" $0 }'
} >far.cfg
for rtt in $RTTS; do
	[ "$rtt" = 0 ] && continue
	python3 "$HERE/delay-relay.py" $((RELAY_PORT + rtt)) "$THOST:$TPORT" "$rtt" >"relay$rtt.out" 2>&1 &
	RELAYS+=($!)
done
for rtt in $RTTS; do
	[ "$rtt" = 0 ] && continue
	for _ in $(seq 50); do grep -q ready "relay$rtt.out" && break; sleep 0.1; done
done

# Sources: one file of random bytes, a tree of small files (1 to 8 KiB, 100 per
# directory, some executable).
make_file() { [ -f "file$1" ] || head -c "$1M" /dev/urandom >"file$1"; }
make_tree() {
	[ -d "tree$1" ] && return
	mkdir "tree$1.new"
	python3 - "tree$1.new" "$1" <<-\EOF
	import os, random, sys
	root, n = sys.argv[1], int(sys.argv[2])
	rnd = random.Random(1)
	for i in range(n):
	    d = os.path.join(root, "d%03d" % (i // 100))
	    os.makedirs(d, exist_ok=True)
	    p = os.path.join(d, "f%05d" % i)
	    with open(p, "wb") as f:
	        f.write(rnd.randbytes(rnd.randint(1024, 8192)))
	    if i % 10 == 0:
	        os.chmod(p, 0o755)
	EOF
	mv "tree$1.new" "tree$1"
}

CASES=${BENCH_CASES:-file tree}
BASE=
[ -n "${BENCH_BASELINE:-}" ] && BASE=$(realpath "$BENCH_BASELINE")
has_case() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run_case TITLE PREP NAME1 CMD1 NAME2 CMD2 [NAME3 CMD3]: PREP (a shell command)
# runs untimed before each command, with $1 the command's index (0, 1, 2: each
# command writes o0, o1 or o2, which PREP removes); each CMD is a shell command.
run_case() {
	local title=$1 prep=$2 i j
	shift 2
	local names=() cmds=()
	while [ $# -gt 0 ]; do names+=("$1"); cmds+=("$2"); shift 2; done
	echo
	echo "## $title (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
	rm -f time.*
	for ((i = 0; i < RUNS; i++)); do
		for j in "${!cmds[@]}"; do
			bash -c "$prep" prep "$j"
			/usr/bin/time -f '%e %U %S' -a -o "time.$j" bash -c "${cmds[$j]}" >/dev/null 2>"err.$j" ||
				{ echo "cp.sh: '${cmds[$j]}' failed:" >&2; cat "err.$j" >&2; exit 1; }
		done
	done
	printf '| %-22s | %8s | %8s | %10s | %10s |\n' tool "wall s" "CPU s" "wall ratio" "CPU ratio"
	local w0 c0 w c
	for j in "${!cmds[@]}"; do
		w=$(awk '{ print $1 }' "time.$j" | median)
		c=$(awk '{ print $2 + $3 }' "time.$j" | median)
		if [ "$j" = 0 ]; then
			w0=$w c0=$c
			printf '| %-22s | %8.2f | %8.2f | %10s | %10s |\n' "${names[$j]}" "$w" "$c" "" ""
		else
			printf '| %-22s | %8.2f | %8.2f | %10.2f | %10.2f |\n' "${names[$j]}" "$w" "$c" \
				"$(awk -v a="$w0" -v b="$w" 'BEGIN { print a / b }')" \
				"$(awk -v a="$c0" -v b="$c" 'BEGIN { print a / b }')"
		fi
	done
	echo "(ratios: dispatch's median over the tool's; $RUNS runs each, interleaved)"
}

for rtt in $RTTS; do
	if [ "$rtt" = 0 ]; then
		H=$HOST CFG=$DISPATCH_SSH_CONFIG MB=${BENCH_FILE_MB:-1024} N=${BENCH_TREE_FILES:-10000} where=loopback
	else
		H=far$rtt CFG=$DIR/far.cfg MB=${BENCH_FAR_FILE_MB:-64} N=${BENCH_FAR_TREE_FILES:-200} where="$rtt ms RTT"
	fi
	D="$DISPATCH -F $CFG"
	B="$BASE -F $CFG"
	S="scp -q -F $CFG ${SSHOPT[*]}"
	R="ssh -T -F $CFG ${SSHOPT[*]} $H"
	$R "rm -rf $RDIR && mkdir -p $RDIR"
	if has_case file; then
		make_file "$MB"
		run_case "upload, one $MB MiB file, $where" ":" \
			dispatch "$D cp file$MB $H:$RDIR/o0" \
			scp "$S file$MB $H:$RDIR/o1" \
			${BASE:+baseline "$B cp file$MB $H:$RDIR/o2"}
		$R "cmp $RDIR/o0 $RDIR/o1 && { [ -z '$BASE' ] || cmp $RDIR/o0 $RDIR/o2; } && mv $RDIR/o0 $RDIR/f && rm -f $RDIR/o1 $RDIR/o2"
		# shellcheck disable=SC2016 # $1 is PREP's own argument
		run_case "download, one $MB MiB file, $where" 'rm -rf o$1' \
			dispatch "$D cp $H:$RDIR/f o0" \
			scp "$S $H:$RDIR/f o1" \
			${BASE:+baseline "$B cp $H:$RDIR/f o2"}
		cmp "file$MB" o0 && cmp "file$MB" o1 && { [ -z "$BASE" ] || cmp "file$MB" o2; }
		rm -f o0 o1 o2
	fi
	if has_case tree; then
		make_tree "$N"
		run_case "upload, a tree of $N files, $where" "$R rm -rf $RDIR/o\$1" \
			dispatch "$D cp -r tree$N $H:$RDIR/o0" \
			"scp -r" "$S -r tree$N $H:$RDIR/o1" \
			"tar | ssh tar" "tar -C tree$N -cf - . | $R 'mkdir $RDIR/o2 && tar -C $RDIR/o2 -xf -'" \
			${BASE:+baseline "$B cp -r tree$N $H:$RDIR/o3"}
		$R "diff -r $RDIR/o0 $RDIR/o1 && diff -r $RDIR/o0 $RDIR/o2 && { [ -z '$BASE' ] || diff -r $RDIR/o0 $RDIR/o3; }"
		# shellcheck disable=SC2016
		run_case "download, a tree of $N files, $where" 'rm -rf o$1' \
			dispatch "$D cp -r $H:$RDIR/o0 o0" \
			"scp -r" "$S -r $H:$RDIR/o0 o1" \
			"ssh tar | tar" "mkdir o2 && $R 'tar -C $RDIR/o0 -cf - .' | tar -C o2 -xf -" \
			${BASE:+baseline "$B cp -r $H:$RDIR/o0 o3"}
		diff -r "tree$N" o0 && diff -r "tree$N" o1 && diff -r "tree$N" o2 &&
			{ [ -z "$BASE" ] || diff -r "tree$N" o3; }
	fi
	if has_case tartree; then
		# a tree against tar through ssh only (scp -r would take minutes far away):
		# BENCH_TAR_TREE_FILES (2000) at every round trip
		T=${BENCH_TAR_TREE_FILES:-2000}
		make_tree "$T"
		run_case "upload, a tree of $T files, $where" "$R rm -rf $RDIR/o\$1" \
			dispatch "$D cp -r tree$T $H:$RDIR/o0" \
			"tar | ssh tar" "tar -C tree$T -cf - . | $R 'mkdir $RDIR/o1 && tar -C $RDIR/o1 -xf -'"
		$R "diff -r $RDIR/o0 $RDIR/o1"
		# shellcheck disable=SC2016
		run_case "download, a tree of $T files, $where" 'rm -rf o$1' \
			dispatch "$D cp -r $H:$RDIR/o0 o0" \
			"ssh tar | tar" "mkdir o1 && $R 'tar -C $RDIR/o0 -cf - .' | tar -C o1 -xf -"
		diff -r "tree$T" o0 && diff -r "tree$T" o1
	fi
	if has_case masterfile && [ "$rtt" = 0 ]; then
		# one large file through an OpenSSH master (the master does the crypto):
		# dispatch's SFTP requests through it against scp through the same master
		# and scp on its own connection
		make_file "$MB"
		ssh -F "$CFG" "${SSHOPT[@]}" -fN -o ControlMaster=yes -o ControlPath="$DIR/cm" \
			-o ControlPersist=600 "$H" </dev/null
		{ printf 'Host %s\n\tControlPath %s\n' "$H" "$DIR/cm"; cat "$CFG"; } >master.cfg
		M="$DISPATCH -F $DIR/master.cfg"
		SM="$S -o ControlPath=$DIR/cm"
		run_case "upload, one $MB MiB file through a master, $where" ":" \
			dispatch "$M cp file$MB $H:$RDIR/o0" \
			"scp, same master" "$SM file$MB $H:$RDIR/o1" \
			"scp, own connection" "$S file$MB $H:$RDIR/o2"
		$R "cmp $RDIR/o0 $RDIR/o1 && cmp $RDIR/o0 $RDIR/o2 && mv $RDIR/o0 $RDIR/f && rm -f $RDIR/o1 $RDIR/o2"
		# shellcheck disable=SC2016 # $1 is PREP's own argument
		run_case "download, one $MB MiB file through a master, $where" 'rm -rf o$1' \
			dispatch "$M cp $H:$RDIR/f o0" \
			"scp, same master" "$SM $H:$RDIR/f o1" \
			"scp, own connection" "$S $H:$RDIR/f o2"
		cmp "file$MB" o0 && cmp "file$MB" o1 && cmp "file$MB" o2
		rm -f o0 o1 o2
		ssh -F "$CFG" -o ControlPath="$DIR/cm" -O exit "$H" 2>/dev/null || :
	fi
	if has_case update; then
		# the same tree of BENCH_UPDATE_FILES (2000) synced already, 10 files
		# changed (bytes and time) before each run: each tool has a source of its
		# own (tu0, tu1), so each sees its own 10
		U=${BENCH_UPDATE_FILES:-2000}
		make_tree "$U"
		rm -rf tu0 tu1 && cp -a "tree$U" tu0 && cp -a "tree$U" tu1
		$D cp -rpu tu0 "$H:$RDIR" >/dev/null
		rsync -a -e "ssh -F $CFG ${SSHOPT[*]}" tu1/ "$H:$RDIR/tu1/"
		# shellcheck disable=SC2016 # $1 is PREP's own argument
		run_case "update, a tree of $U files, 10 changed, $where" \
			'for k in 1 2 3 4 5 6 7 8 9 10; do f=$(printf "tu$1/d%03d/f%05d" $((k * 7 % 20)) $((k * 7 % 20 * 100 + k))); echo "$RANDOM" >>"$f"; done' \
			"dispatch cp -rpu" "$D cp -rpu tu0 $H:$RDIR" \
			"rsync -a over ssh" "rsync -a -e 'ssh -F $CFG ${SSHOPT[*]}' tu1/ $H:$RDIR/tu1/"
		$R "cd $RDIR/tu0 && find . -type f | sort | xargs md5sum" >sum.remote
		(cd tu0 && find . -type f | sort | xargs md5sum) | diff - sum.remote
	fi
	rm -rf o0 o1 o2 o3
	$R "rm -rf $RDIR"
done
