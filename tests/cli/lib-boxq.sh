# shellcheck shell=bash
# boxq_setup NAME: for the files that test the plain launcher's queue (t7030, t7040):
# the test bed up, a ledger of the file's own, $G a directory of gate files the jobs
# wait on (on the cluster's shared work dir, writable by the test user), and host
# boxq: box1 with max_jobs 1 and a GPU lock directory $LD of the file's own, added to
# a copy of the inventory. The clean-up (on exit) opens every gate and kills the
# process group of every job of the file, held ones too (their launchers ignore TERM).
boxq_setup() {
	testbed_up
	export DISPATCH_STATE_DIR="$TRASH/state"
	CL=$DISPATCH_TESTBED_DIR/cluster
	G=$CL/work/$1-gates-$$
	mkdir -p "$G" && chmod 777 "$G" || exit 1
	LD=/tmp/dispatch-gpus-$1-$$
	awk -v ld="$LD" '{ print }
		/^hosts:$/ { print "  boxq:\n    ssh: box1\n    cluster: testbed\n    max_jobs: 1\n    gpu_lock_dir: " ld }' \
		"$DISPATCH_INVENTORY" >inv.yaml || exit 1
	export DISPATCH_INVENTORY=$PWD/inv.yaml
	mkdir -m 1777 "$LD" || exit 1
	trap 'boxq_cleanup; rm -rf "$TRASH"' EXIT
}

boxq_cleanup() {
	local p
	[ -z "${HOOK:-}" ] || touch "$HOOK/stop"
	touch "$G"/all 2>/dev/null
	for p in $(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select pid from jobs where pid > 1" 2>/dev/null); do
		kill -KILL -- "-$p" 2>/dev/null
	done
	# and a launcher started again after it was lost (its stage's pid file)
	for p in $(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select job_id from jobs" 2>/dev/null); do
		p=$(cut -d " " -f 1 "$CL/work/.dispatch/$p/pid" 2>/dev/null) &&
			[ "${p:-0}" -gt 1 ] && kill -KILL -- "-$p" 2>/dev/null
	done
	rm -rf "$G" "$LD"
}
