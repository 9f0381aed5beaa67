#!/bin/bash
# bench/run-fanout.sh: `dispatch run` of a short command on 16, 64 and 128 hosts,
# against `pdsh -R ssh` and `clush` at the same fanout, all reading the same
# ssh_config: wall time, client CPU (user+sys of the tool and every child it waited
# for, i.e. the ssh processes of pdsh and clush) and the server's CPU (the fan
# sshd's children, read from /proc), each the median of BENCH_RUNS runs. Twice:
# with OpenSSH's default key exchange for ssh (sntrup761x25519-sha512, post-quantum)
# and with ssh forced to curve25519-sha256. libssh2 cannot do the post-quantum one:
# dispatch always negotiates curve25519-sha256, so only the second setting compares
# like with like. Not a test: nothing fails on slow figures.
#
#   sudo bench/run-fanout.sh [path/to/dispatch]       (default: build/dispatch)
#
# As root (it brings up its own testbed: tests/testbed/up with 128 fan aliases of
# one sshd, MaxStartups 200:30:400; left up for the next run, remove it with
# DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-bench tests/testbed/down).
# Needs pdsh, clustershell, time: apt-get install pdsh clustershell time.
# Settings: BENCH_SIZES ("16 64 128"), BENCH_RUNS (5), BENCH_CMD (true),
# BENCH_FANOUT (empty: the host count, everything at once), BENCH_KEX ("default
# curve25519"), BENCH_KNOWN_HOSTS (0: with N, every tool reads a known_hosts file
# that has N hashed lines of other hosts, as `ssh-keygen -H` writes them, in front
# of the test bed's own: the lookup cost of a long-lived user's file), BENCH_BASELINE
# (another dispatch binary, e.g. an older build, run in the same rotation as
# "baseline", without the test bed's inventory, which an older build may not read:
# before/after ratios from one run). Results: a Markdown table on stdout, raw runs in BENCH_OUT
# (default /tmp/dispatch-bench-fanout.tsv).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
dispatch=$(realpath "${1:-$src/build/dispatch}")
sizes=${BENCH_SIZES:-16 64 128}
runs=${BENCH_RUNS:-5}
cmd=${BENCH_CMD:-true}
kexes=${BENCH_KEX:-default curve25519}
raw=${BENCH_OUT:-/tmp/dispatch-bench-fanout.tsv}

die() { printf 'run-fanout: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root: it brings up the testbed (real sshd)"
[ -x "$dispatch" ] || die "no dispatch binary at '$dispatch' (build it: ninja -C build)"
for t in pdsh clush /usr/bin/time python3; do
	command -v "$t" >/dev/null || die "'$t' is missing: apt-get install pdsh clustershell time"
done
max=0
for n in $sizes; do ((n > max)) && max=$n; done

export DISPATCH_TESTBED_DIR=${DISPATCH_TESTBED_DIR:-/tmp/dispatch-testbed-bench}
export DISPATCH_TESTBED_PORT_BASE=${DISPATCH_TESTBED_PORT_BASE:-27500}
export DISPATCH_TESTBED_PREFIX=${DISPATCH_TESTBED_PREFIX:-dtbb6}
export DISPATCH_TESTBED_NET=${DISPATCH_TESTBED_NET:-10.161}
export DISPATCH_TESTBED_FAN=${DISPATCH_TESTBED_FAN:-128}
((max <= DISPATCH_TESTBED_FAN)) || die "BENCH_SIZES goes to $max, the testbed has $DISPATCH_TESTBED_FAN fan aliases"
eval "$(bash "$src/tests/testbed/up" 2>/dev/null)" || die "tests/testbed/up failed"
cfg=$DISPATCH_SSH_CONFIG
sshd_pid=$(cat "$DISPATCH_TESTBED_DIR/sshd/fan/pid")
clk=$(getconf CLK_TCK)

work=$(mktemp -d /tmp/dispatch-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

pad=${BENCH_KNOWN_HOSTS:-0}
if [ "$pad" -gt 0 ]; then
	kh=$DISPATCH_TESTBED_DIR/known_hosts
	python3 - "$pad" >"$work/known_hosts" <<'EOF'
import base64, hashlib, hmac, os, struct, sys
for i in range(int(sys.argv[1])):
    salt = os.urandom(20)
    mac = hmac.new(salt, b"host%d.example.org" % i, hashlib.sha1).digest()
    blob = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", 32) + os.urandom(32)
    print("|1|%s|%s ssh-ed25519 %s" % (base64.b64encode(salt).decode(),
          base64.b64encode(mac).decode(), base64.b64encode(blob).decode()))
EOF
	cat "$kh" >>"$work/known_hosts"
	sed "s|$kh|$work/known_hosts|g" "$cfg" >"$work/ssh_config"
	grep -q "$work/known_hosts" "$work/ssh_config" || die "no UserKnownHostsFile $kh in $cfg"
	cfg=$work/ssh_config
fi
: >"$raw"

# CPU seconds of the fan sshd's reaped children (the per-connection servers).
sshd_cpu() {
	awk -v clk="$clk" '{ sub(/.*\) /, ""); print ($14 + $15) / clk }' "/proc/$sshd_pid/stat"
}

# one TOOL KEX N: runs the tool once on fan1..fanN; appends "tool kex n wall cpu server"
one() {
	local tool=$1 kex=$2 n=$3 fan=${BENCH_FANOUT:-$3} kexopt="" before after
	[ "$kex" = curve25519 ] && kexopt="-o KexAlgorithms=curve25519-sha256"
	local -a argv
	case $tool in
	dispatch) argv=("$dispatch" -F "$cfg" run -H "fan[1-$n]" --fanout "$fan" -- "$cmd") ;;
	baseline) argv=(env -u DISPATCH_INVENTORY "$BENCH_BASELINE" -F "$cfg" run -H "fan[1-$n]" --fanout "$fan" -- "$cmd") ;;
	pdsh) argv=(env PDSH_SSH_ARGS_APPEND="-F $cfg $kexopt" pdsh -R ssh -f "$fan" -w "fan[1-$n]" "$cmd") ;;
	clush) argv=(clush -f "$fan" -o "-F $cfg $kexopt" -w "fan[1-$n]" "$cmd") ;;
	esac
	before=$(sshd_cpu)
	if ! /usr/bin/time -f "%e %U %S" -o "$work/time" "${argv[@]}" >"$work/out" 2>"$work/err" </dev/null ||
		[ -s "$work/err" ]; then
		die "$tool on $n hosts failed: $(head -3 "$work/err")"
	fi
	after=$(sshd_cpu)
	read -r wall user sys <"$work/time"
	awk -v t="$tool" -v k="$kex" -v n="$n" -v w="$wall" -v u="$user" -v s="$sys" -v b="$before" -v a="$after" \
		'BEGIN { printf "%s\t%s\t%s\t%s\t%.2f\t%.2f\n", t, k, n, w, u + s, a - b }' >>"$raw"
}

for n in $sizes; do
	for kex in $kexes; do
		for r in $(seq "$runs"); do
			for tool in dispatch ${BENCH_BASELINE:+baseline} pdsh clush; do     # interleaved: load drifts hit all alike
				one "$tool" "$kex" "$n"
			done
			printf 'run-fanout: %s hosts, %s kex, run %d/%d\n' "$n" "$kex" "$r" "$runs" >&2
		done
	done
done

python3 - "$raw" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
m = {}
for tool, kex, n, wall, cpu, server in rows:
    m.setdefault((tool, kex, int(n)), []).append((float(wall), float(cpu), float(server)))
med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in m.items()}
print("| hosts | ssh kex | tool | wall s | client CPU s | sshd CPU s | dispatch/tool wall | dispatch/tool CPU |")
print("|---:|---|---|---:|---:|---:|---:|---:|")
for (tool, kex, n) in sorted(med, key=lambda k: (k[2], k[1], ["dispatch", "baseline", "pdsh", "clush"].index(k[0]))):
    w, c, s = med[(tool, kex, n)]
    dw, dc, _ = med[("dispatch", kex, n)]
    ratio = ("%.2f" % (dw / w), "%.2f" % (dc / c)) if tool != "dispatch" else ("", "")
    print("| %d | %s | %s | %.2f | %.2f | %.2f | %s | %s |" % (n, kex, tool, w, c, s, *ratio))
EOF
