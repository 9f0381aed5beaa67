# Git-style shell test library, sourced by every tests/cli/t*.sh. Output is TAP.
#   test_expect_success 'what' 'commands'   (the commands run in a subshell with set -e)
# Every test runs in a fresh trash directory with HOME inside it, so the real
# ~/.ssh, ~/.config and the job ledger are never read or written.
set -u
: "${DISPATCH:?DISPATCH must point at the built binary (run through meson test)}"
: "${TEST_SRCDIR:?}"

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/dispatch-test.XXXXXX")
trap 'rm -rf "$TRASH"' EXIT
export HOME="$TRASH/home"
mkdir -p "$HOME"

# dispatch, as ssh, reads ~/.ssh/config and takes ~ and %d from the passwd entry, not
# from $HOME. So that it too finds the test's HOME, it runs under nss_wrapper with a
# copy of the passwd whose entry for this user has $HOME as its home: $DISPATCH becomes
# a script that sets that up and execs the binary, $DISPATCH_BIN (whatever dispatch
# runs, a ProxyCommand's ssh or a Match exec, sees the same passwd). Without DEEPBIND
# and with ASan told that it does not come first: for the sanitize build.
# test_passwd_home DIR makes DIR the passwd home instead, HOME left as it is.
NSS_WRAPPER_LIB=
for d in /usr/lib/*-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
	[ -e "$d/libnss_wrapper.so" ] && NSS_WRAPPER_LIB=$d/libnss_wrapper.so && break
done
if [ -z "$NSS_WRAPPER_LIB" ]; then
	echo "Bail out! the cli tests need nss_wrapper (Debian: libnss-wrapper, see tests/install-deps)"
	exit 1
fi
test_passwd_home() {
	{ getent passwd | awk -F: -v OFS=: -v uid="$(id -u)" -v home="$1" \
		'$3 == uid { $6 = home; seen = 1 } { print } END { if (!seen) exit 1 }' ||
		printf 'me:x:%s:%s::%s:/bin/sh\n' "$(id -u)" "$(id -g)" "$1"; } >"$TRASH/.passwd"
}
test_passwd_home "$HOME"
getent group >"$TRASH/.group"
grep -q "^[^:]*:[^:]*:$(id -g):" "$TRASH/.group" || printf 'me:x:%s:\n' "$(id -g)" >>"$TRASH/.group"
DISPATCH_BIN=${DISPATCH_BIN:-$DISPATCH}
mkdir -p "$TRASH/.bin"
{
	echo '#!/bin/sh'
	printf 'LD_PRELOAD="%s${LD_PRELOAD:+ $LD_PRELOAD}" NSS_WRAPPER_PASSWD="%s" NSS_WRAPPER_GROUP="%s" \\\n' \
		"$NSS_WRAPPER_LIB" "$TRASH/.passwd" "$TRASH/.group"
	printf '\tNSS_WRAPPER_DISABLE_DEEPBIND=1 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \\\n'
	printf '\texec "%s" "$@"\n' \
		"$DISPATCH_BIN"
} >"$TRASH/.bin/dispatch"
chmod 755 "$TRASH/.bin/dispatch"
export DISPATCH="$TRASH/.bin/dispatch" DISPATCH_BIN
unset DISPATCH_INVENTORY DISPATCH_SSH_CONFIG XDG_CONFIG_HOME XDG_STATE_HOME NO_COLOR SSH_AUTH_SOCK
export DISPATCH_STATE_DIR="$TRASH/state"
export LC_ALL=C.UTF-8
cd "$TRASH" || exit 1

test_count=0
test_failed=0

dispatch() { "$DISPATCH" "$@"; }

# test_chain_broken BODY: true (and says where) when BODY's top-level commands are not
# one && chain. Under set -e a failure inside an && list is forgotten: in `a && b; c`
# a failing a leaves c alone to decide the test. First git's old trick, cheap: a bare
# bash (no PATH, no functions, an empty directory, set -u, 10 s) runs `(exit 117) && BODY`;
# a whole chain stops there with 117. Anything else is a break, or a top-level || or
# & that the trick cannot tell from one: tests/lint/chainlint.py, which reads the
# shell, decides those (and lints every file statically, test 'chainlint').
test_chain_broken() {
	local dir="$TRASH/.chainlint" rc=0
	mkdir -p "$dir" &&
		(cd "$dir" && timeout 10 env -i PATH=/nonexistent HOME="$dir" LC_ALL=C \
			"$BASH" --noprofile --norc -c 'set -eu; eval "(exit 117) && $1"' chainlint "$1" \
			</dev/null >/dev/null 2>&1) || rc=$?
	[ "$rc" != 117 ] || return 1
	! printf '%s' "$1" | python3 "$TEST_SRCDIR/tests/lint/chainlint.py" --body
}

test_expect_success() {
	test_count=$((test_count + 1))
	if test_chain_broken "$2" >"$TRASH/.out" 2>&1; then
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TRASH/.out"
		test_failed=$((test_failed + 1))
		return
	fi
	local start=$SECONDS
	(
		set -e
		eval "$2"
	) >"$TRASH/.out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ]; then
		# the seconds each case took (a TAP comment: the CI logs say where time goes)
		echo "ok $test_count - $1"
		echo "# $((SECONDS - start)) s"
	else
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TRASH/.out"
		test_failed=$((test_failed + 1))
		# and on stderr too: meson's --print-errorlogs (the CI log) shows a TAP
		# test's stderr, not its stdout
		{
			echo "$(basename "$0"): not ok $test_count - $1"
			tail -n 60 "$TRASH/.out" | sed 's/^/#   /'
		} >&2
	fi
}

# test_expect_code CODE CMD...: CMD exits with CODE
test_expect_code() {
	local want=$1 got=0
	shift
	"$@" || got=$?  # not a bare "$@": under set -e a failing last command would exit
	if [ "$got" != "$want" ]; then
		echo "exit status $got, wanted $want: $*" >&2
		return 1
	fi
	return 0
}

test_cmp() {
	diff -u "$1" "$2"
}

# test_grep [grep options] PATTERN FILE: like grep, but shows the file on failure
test_grep() {
	if ! grep "$@"; then
		local f
		for f; do :; done
		echo "grep $* found nothing in:" >&2
		cat "$f" >&2
		return 1
	fi
}

# table_cell FILE KEY COLUMN: in a text table whose first line is its header of
# one-word column names (status, queue), the cell under COLUMN in the row whose first
# word is KEY; the last column runs to the end of its line (REASON holds spaces)
table_cell() {
	awk -v key="$2" -v col="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) k = i; last = NF; next }
		k && $1 == key {
			if (k < last) { print $k; exit }
			s = $0
			for (i = 1; i < k; i++) sub(/^ *[^ ]+ +/, "", s)
			print s
			exit
		}' "$1"
}

test_must_be_empty() {
	if [ -s "$1" ]; then
		echo "'$1' is not empty:" >&2
		cat "$1" >&2
		return 1
	fi
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
}

# fail_rest MSG: the rest of the file cannot run for a reason that is a failure (the
# test bed would not come up): one "not ok" with MSG, then stop. Skipping instead
# would let a broken test bed pass in CI.
fail_rest() {
	test_count=$((test_count + 1))
	echo "not ok $test_count - $1"
	[ ! -f "$TRASH/up.log" ] || sed 's/^/#   /' "$TRASH/up.log" | tail -n 30
	{
		echo "$(basename "$0"): not ok $test_count - $1"
		[ ! -f "$TRASH/up.log" ] || sed 's/^/#   /' "$TRASH/up.log" | tail -n 30
	} >&2
	echo "1..$test_count"
	exit 1
}

# skip_rest MSG: the rest of the file cannot run here (not root, no namespaces): one
# "ok # skip" with MSG, then stop.
skip_rest() {
	test_count=$((test_count + 1))
	echo "ok $test_count # skip $1"
	test_done
	exit $?
}

# testbed_up: brings up the test bed instance that the DISPATCH_TESTBED_* settings
# name (the default one without them; up is idempotent and serialised, so tests
# share it) and evals its exports. Where a test bed cannot run (not root, no network
# namespaces) the rest of the file is skipped; where it could and does not come up,
# or lacks its SLURM host, the rest fails.
testbed_up() {
	local exports
	[ "$(id -u)" = 0 ] || skip_rest "not root: the testbed starts sshd (and SLURM) and creates network namespaces"
	unshare --net true 2>/dev/null || skip_rest "cannot create network namespaces here"
	exports=$(bash "$TEST_SRCDIR/tests/testbed/up" 2>"$TRASH/up.log") ||
		fail_rest "tests/testbed/up failed: $(tail -1 "$TRASH/up.log")"
	eval "$exports"
	if [ "${DISPATCH_TESTBED_SLURM:-1}" != 0 ]; then
		grep -q "^  hpc:" "$DISPATCH_INVENTORY" || fail_rest "the testbed inventory has no SLURM host hpc"
		# The release the cluster runs ("22.05.8"), as its own sinfo says (the
		# exports put a newer release's tools, run in its chroot, first on PATH).
		TB_SLURM_VERSION=$(sinfo --version | sed -n 's/^slurm[^ ]* //p')
		[ -n "$TB_SLURM_VERSION" ] || fail_rest "sinfo --version names no release"
	fi
}

# testbed_own NAME SETTINGS-22.05 SETTINGS-24.11 SETTINGS-26.05: for a file that
# disturbs its cluster (stops daemons, counts RPCs): its own test bed instance,
# /tmp/dispatch-testbed-NAME (-s2411, -s2605 for the release DISPATCH_TESTBED_SLURM
# names), each SETTINGS "PORT_BASE PREFIX NET"; the runs of the file (build and
# build-san) take turns through the lock on fd 8 (nothing started may keep it: up()
# closes it for up's daemons). Brings the instance up (up(), again to restart what
# a test stopped) and evals its exports; skips or fails the rest as testbed_up.
testbed_own() {
	local name=$1 settings exports
	[ "$(id -u)" = 0 ] || skip_rest "not root: the testbed starts sshd, SLURM and network namespaces"
	unshare --net true 2>/dev/null || skip_rest "cannot create network namespaces here"
	case ${DISPATCH_TESTBED_SLURM:-1} in
	24.11 | trixie) name=$name-s2411 settings=$3 ;;
	26.05 | forky) name=$name-s2605 settings=$4 ;;
	*) settings=$2 ;;
	esac
	export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-$name
	# shellcheck disable=SC2086 # three words
	set -- $settings
	export DISPATCH_TESTBED_PORT_BASE=$1 DISPATCH_TESTBED_PREFIX=$2 DISPATCH_TESTBED_NET=$3
	export DISPATCH_TESTBED_FAN=2
	exec 8>"$DISPATCH_TESTBED_DIR.run.lock"
	flock -w 280 8 || fail_rest "another run of this file holds $DISPATCH_TESTBED_DIR.run.lock"
	exports=$(up) || fail_rest "tests/testbed/up failed: $(tail -1 "$TRASH/up.log")"
	eval "$exports"
	grep -q "^  hpc:" "$DISPATCH_INVENTORY" || fail_rest "the testbed inventory has no SLURM host hpc"
	export DISPATCH_STATE_DIR="$TRASH/state"
}
up() { bash "$TEST_SRCDIR/tests/testbed/up" 8>&- 2>>"$TRASH/up.log"; }

# node_pids NODE: the processes in NODE's network namespace (its slurmd, slurmstepd and
# job processes), as `ip netns pids` finds them; the namespaces of a chroot release
# are in the chroot's /run/netns
node_pids() {
	local f=/run/netns/$DISPATCH_TESTBED_PREFIX-$1 ino p
	[ -e "$f" ] || f=${DISPATCH_TESTBED_ROOT:-}/run/netns/$DISPATCH_TESTBED_PREFIX-$1
	ino=$(stat -L -c %i "$f") || return 1
	for p in /proc/[0-9]*; do
		[ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" != "$ino" ] || echo "${p#/proc/}"
	done
}

# ledger_jobs_cancelled_at_exit: a file that submits with DISPATCH_STATE_DIR set
# cancels every job of its ledger when it ends, whatever happened (a hung job would
# hold the test bed's nodes for the files after it), then removes $TRASH (the EXIT
# trap above, which this one replaces). ledger_log JOB: the log the
# ledger recorded for JOB (ID@HOST).
ledger_jobs_cancelled_at_exit() {
	trap 'jobs=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select job_id || \"@\" || host from jobs" 2>/dev/null)
		[ -z "$jobs" ] || dispatch cancel $jobs >/dev/null 2>&1
		rm -rf "$TRASH"' EXIT
}
ledger_log() {
	cat "$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select log_path from jobs where job_id = \"${1%@*}\"")"
}
