#!/bin/bash
# bench/status-clusters.sh: `dispatch status` of 20 jobs on three SLURM clusters (the
# test bed's 22.05, 24.11 and 26.05 instances, each its own slurmctld and login sshd),
# warm through the user's OpenSSH masters and cold (a handshake each), against one
# handshake alone (`dispatch run -H hpc22 -- true`, direct) and against the same
# commands with other dispatch binaries (BENCH_BASELINE: a space-separated list).
# Rounds alternate the commands (a, b, c, a, b, c, ...) so that load from elsewhere
# falls on all of them alike; medians. Not a test: nothing fails on slow figures.
#
#   sudo bench/status-clusters.sh [path/to/dispatch]       (default: build/dispatch)
#
# As root: it brings the three instances up (tests/testbed/up; the 24.11 and 26.05
# ones run SLURM in chroots built by tests/testbed/chroot on first use) and leaves
# them up. Settings: BENCH_RUNS (rounds, default 15), BENCH_JOBS (default 20, spread
# over the clusters: one in four of them still running, the rest completed).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
dispatch=$(realpath "${1:-$src/build/dispatch}")
runs=${BENCH_RUNS:-15}
njobs=${BENCH_JOBS:-20}

die() { printf 'status-clusters: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root: it brings up the testbed (real sshd, slurmctld)"
[ -x "$dispatch" ] || die "no dispatch binary at '$dispatch' (build it: ninja -C build)"

work=$(mktemp -d /tmp/dispatch-bench-status.XXXXXX)
masters=()
cleanup() {
	local m
	for m in "${masters[@]}"; do
		ssh -F "$work/direct_cfg" -o ControlPath="$work/cm-$m" -O exit "$m" 2>/dev/null || :
	done
	for j in $(cat "$work/running" 2>/dev/null); do
		"$dispatch" -F "$work/direct_cfg" -i "$work/inventory.yaml" cancel "$j" >/dev/null 2>&1 || :
	done
	rm -rf "$work"
}
[ -n "${BENCH_KEEP:-}" ] || trap cleanup EXIT

# instance NAME RELEASE DIR PORT_BASE PREFIX NET: bring it up, add its login node as
# host NAME (alias NAME in the configs) to the bench's inventory and ssh configs
: >"$work/direct_cfg"
: >"$work/master_cfg"
printf 'clusters:\n' >"$work/clusters"
printf 'hosts:\n' >"$work/hosts"
instance() {
	local name=$1 env
	env=$(DISPATCH_TESTBED_SLURM=$2 DISPATCH_TESTBED_DIR=$3 DISPATCH_TESTBED_PORT_BASE=$4 \
		DISPATCH_TESTBED_PREFIX=$5 DISPATCH_TESTBED_NET=$6 bash "$src/tests/testbed/up" 2>/dev/null) ||
		die "tests/testbed/up failed for SLURM $2"
	local cfg inv
	cfg=$(sed -n "s/^export DISPATCH_SSH_CONFIG='\(.*\)'$/\1/p" <<<"$env")
	inv=$(sed -n "s/^export DISPATCH_INVENTORY='\(.*\)'$/\1/p" <<<"$env")
	local block
	block=$(awk '/^Host hpc$/{on=1; next} on && /^$/{exit} on' "$cfg")
	printf 'Host %s\n%s\n\n' "$name" "$block" >>"$work/direct_cfg"
	printf 'Host %s\n\tControlPath %s\n%s\n\n' "$name" "$work/cm-$name" "$block" >>"$work/master_cfg"
	awk '/^  testbed:$/{on=1; print "  '"$name"':"; next} on && /^    /{print; next} on{exit}' \
		"$inv" >>"$work/clusters"
	awk '/^  hpc:$/{on=1; print "  '"$name"':"; next} on && /^    /{print; next} on{exit}' "$inv" |
		sed -e "s/^    ssh: hpc$/    ssh: $name/" -e "s/^    cluster: testbed$/    cluster: $name/" \
		>>"$work/hosts"
}
instance hpc22 1 /tmp/dispatch-testbed 22000 dtb 10.98
instance hpc24 24.11 /tmp/dispatch-testbed-s2411 30000 ds24 10.124
instance hpc26 26.05 /tmp/dispatch-testbed-s2605 34000 ds26 10.126
cat "$work/clusters" "$work/hosts" >"$work/inventory.yaml"
export DISPATCH_STATE_DIR=$work/state HOME=$work
D=("$dispatch" -i "$work/inventory.yaml")

# the jobs: round robin over the clusters, one in four still running
jobs=()
: >"$work/running"
hosts=(hpc22 hpc24 hpc26)
for ((i = 0; i < njobs; i++)); do
	h=${hosts[i % 3]}
	if ((i % 4 == 3)); then
		j=$("${D[@]}" -F "$work/direct_cfg" submit -H "$h" -p cpu -J bench -t 30 -- sleep 1200)
		echo "$j" >>"$work/running"
	else
		j=$("${D[@]}" -F "$work/direct_cfg" submit -H "$h" -p cpu -J bench -- true)
	fi
	jobs+=("$j")
done
"${D[@]}" -F "$work/direct_cfg" wait --until running "${jobs[@]}" >/dev/null 2>&1 || :
for j in "${jobs[@]}"; do
	grep -qx "$j" "$work/running" || "${D[@]}" -F "$work/direct_cfg" wait "$j" >/dev/null ||
		die "job $j did not complete"
done

for h in "${hosts[@]}"; do
	ssh -F "$work/direct_cfg" -fN -o ControlMaster=yes -o ControlPath="$work/cm-$h" \
		-o ControlPersist=600 "$h" </dev/null || die "cannot start a master on $h"
	masters+=("$h")
done
"${D[@]}" -F "$work/master_cfg" -v run -H hpc22 -- true 2>&1 | grep -q "via master" ||
	die "dispatch does not go through the master"

python3 - "$work" "$runs" "$dispatch" ${BENCH_BASELINE:-} -- "${jobs[@]}" <<'PY'
import os, statistics, subprocess, sys, time
args = sys.argv[1:]
cut = args.index("--")
work, runs, binaries, jobs = args[0], int(args[1]), args[2:cut], args[cut + 1:]
inv = os.path.join(work, "inventory.yaml")
master, direct = os.path.join(work, "master_cfg"), os.path.join(work, "direct_cfg")
cmds = {}
for k, b in enumerate(binaries):
    tag = "" if k == 0 else " [%s]" % b
    cmds["status, %d jobs on 3 clusters, through masters%s" % (len(jobs), tag)] = \
        [b, "-i", inv, "-F", master, "status"] + jobs
    cmds["status, %d jobs on 3 clusters, cold%s" % (len(jobs), tag)] = \
        [b, "-i", inv, "-F", direct, "status"] + jobs
one = [j for j in jobs if j.endswith("@hpc22")]
cmds["status, %d jobs on hpc22 alone, cold" % len(one)] = \
    [binaries[0], "-i", inv, "-F", direct, "status"] + one
cmds["one handshake: run -H hpc22 -- true, cold"] = \
    [binaries[0], "-i", inv, "-F", direct, "run", "-H", "hpc22", "--", "true"]
cmds["ssh hpc22 squeue, through its master"] = \
    ["ssh", "-F", direct, "-o", "ControlPath=" + os.path.join(work, "cm-hpc22"), "hpc22",
     "squeue -h -j " + jobs[0].split("@")[0] + " -o %T"]
res = {k: [] for k in cmds}
for _ in range(runs):
    for k, argv in cmds.items():
        s = time.perf_counter()
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        res[k].append(time.perf_counter() - s)
        if p.returncode not in (0,) and "squeue" not in k:
            sys.exit("%s: exit %d: %s" % (k, p.returncode, p.stderr.decode()[-500:]))
hs = statistics.median(res["one handshake: run -H hpc22 -- true, cold"])
print("| command (%d rounds, alternated) | median ms | min ms | / one handshake |" % runs)
print("|---|---:|---:|---:|")
for k, v in res.items():
    m = statistics.median(v)
    print("| %s | %.1f | %.1f | %.2f |" % (k, m * 1e3, min(v) * 1e3, m / hs))
PY
