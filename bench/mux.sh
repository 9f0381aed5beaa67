#!/bin/bash
# bench/mux.sh: a warm command through the user's OpenSSH master against a direct
# dispatch connection and against OpenSSH's own client through the same master:
#   - `dispatch run -H box1 -- true` through the master
#   - `dispatch run -H box1 -- true` direct (libssh2: TCP, key exchange, login)
#   - `ssh box1 true` through the same master (ssh's mux client)
#   - ssh through the same master with the very command dispatch sends for `true`
#     (the login-shell wrapper of mux_login_command), to show the shell's share
# and 20 `dispatch status JOB` calls in a row, through the master and direct.
# The tools alternate inside each round (a, b, c, a, b, c, ...) so that load from
# elsewhere falls on all of them alike; medians and ratios of wall time. Not a test:
# nothing fails on slow figures.
#
#   sudo bench/mux.sh [path/to/dispatch]       (default: build/dispatch)
#
# As root (it brings up a testbed without SLURM: tests/testbed/up; left up for the
# next run, remove it with DISPATCH_TESTBED_DIR=... tests/testbed/down). Settings:
# BENCH_RUNS (30 single commands per tool), BENCH_STATUS_ROUNDS (5 rounds of 20
# status calls per way), the DISPATCH_TESTBED_* variables (default: an instance of
# its own in /tmp/dispatch-testbed-bench-mux).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
dispatch=$(realpath "${1:-$src/build/dispatch}")
runs=${BENCH_RUNS:-30}
rounds=${BENCH_STATUS_ROUNDS:-5}

die() { printf 'mux: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root: it brings up the testbed (real sshd)"
[ -x "$dispatch" ] || die "no dispatch binary at '$dispatch' (build it: ninja -C build)"

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=${DISPATCH_TESTBED_DIR:-/tmp/dispatch-testbed-bench-mux}
export DISPATCH_TESTBED_PORT_BASE=${DISPATCH_TESTBED_PORT_BASE:-31820}
export DISPATCH_TESTBED_PREFIX=${DISPATCH_TESTBED_PREFIX:-dbmx}
export DISPATCH_TESTBED_NET=${DISPATCH_TESTBED_NET:-10.189}
eval "$(bash "$src/tests/testbed/up" 2>/dev/null)" || die "tests/testbed/up failed"

work=$(mktemp -d /tmp/dispatch-bench-mux.XXXXXX)
sock=$work/cm-box1
cleanup() {
	ssh -F "$DISPATCH_SSH_CONFIG" -o ControlPath="$sock" -O exit box1 2>/dev/null || :
	rm -rf "$work"
}
trap cleanup EXIT
direct_cfg=$DISPATCH_SSH_CONFIG
{ printf 'Host box1\n  ControlPath %s\n\n' "$sock"; cat "$direct_cfg"; } >"$work/master_cfg"
export DISPATCH_STATE_DIR=$work/state HOME=$work

ssh -F "$direct_cfg" -fN -o ControlMaster=yes -o ControlPath="$sock" -o ControlPersist=600 \
	box1 </dev/null || die "cannot start a master on box1"
"$dispatch" -F "$work/master_cfg" -v run -H box1 -- true 2>&1 | grep -q "via master" ||
	die "dispatch does not go through the master"
job=$("$dispatch" -F "$direct_cfg" submit -H box1 -J bench -- true)

python3 - "$dispatch" "$direct_cfg" "$work/master_cfg" "$sock" "$runs" "$rounds" "$job" <<'PY'
import statistics, subprocess, sys, time
dispatch, direct, master, sock, runs, rounds, job = sys.argv[1:]
runs, rounds = int(runs), int(rounds)
def t(argv):
    s = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    return time.perf_counter() - s
one = {
    "dispatch run, through the master": [dispatch, "-F", master, "run", "-H", "box1", "--", "true"],
    "dispatch run, direct": [dispatch, "-F", direct, "run", "-H", "box1", "--", "true"],
    "ssh true, through the same master": ["ssh", "-F", direct, "-o", "ControlPath=" + sock, "box1", "true"],
    # what dispatch sends for `true` (mux_login_command): the login shell's cost apart
    "ssh, dispatch's login-shell command, same master": ["ssh", "-F", direct, "-o", "ControlPath=" + sock, "box1",
        "exec /bin/sh -c 'exec 3>&2 2>/dev/null; (exec 2>&3 3>&- \"${SHELL:-/bin/sh}\" -l -c true); exit $?'"],
}
res = {k: [] for k in one}
for _ in range(runs):
    for k, argv in one.items():
        res[k].append(t(argv))
base = statistics.median(res["dispatch run, through the master"])
print("| `-- true` on box1 (%d runs each, alternated) | median ms | min ms | / through the master |" % runs)
print("|---|---:|---:|---:|")
for k, v in res.items():
    m = statistics.median(v)
    print("| %s | %.1f | %.1f | %.2f |" % (k, m * 1e3, min(v) * 1e3, m / base))
st = {"through the master": master, "direct": direct}
sres = {k: [] for k in st}
for _ in range(rounds):
    for k, cfg in st.items():
        s = time.perf_counter()
        for _ in range(20):
            subprocess.run([dispatch, "-F", cfg, "status", job], check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        sres[k].append(time.perf_counter() - s)
print()
print("| 20 `dispatch status JOB` in a row (%d rounds each, alternated) | median s | per call ms | / through the master |" % rounds)
print("|---|---:|---:|---:|")
b = statistics.median(sres["through the master"])
for k, v in sres.items():
    m = statistics.median(v)
    print("| %s | %.2f | %.1f | %.2f |" % (k, m, m / 20 * 1e3, m / b))
PY
