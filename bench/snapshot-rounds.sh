#!/bin/bash
# The same three snapshot commands as bench/snapshot.sh, run in interleaved rounds
# (one of each per round) so that load drifting on a shared machine hits all alike;
# prints each command's median wall time (and the fastest, what a quiet machine
# gives), CPU time (user+sys, children included) and
# peak RSS (the largest process's, GNU time's %M), and the ratios, with the load
# average before and after (other work on the machine skews every figure). Run
# bench/snapshot.sh once first: it builds the repository.
#
#   bench/snapshot-rounds.sh [DISPATCH_BINARY]...   (default: build/dispatch)
#
# Several binaries (an older build, say) are measured side by side. ROUNDS (default
# 12) sets the number of rounds. Needs git, pigz and GNU time.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$here/build/dispatch"
dir=${BENCH_DIR:-/tmp/dispatch-bench}
rounds=${ROUNDS:-12}
[ -d "$dir/repo/.git" ] || { echo "snapshot-rounds.sh: run bench/snapshot.sh first" >&2; exit 2; }
bins=()
for d in "$@"; do bins+=("$(realpath "$d")"); done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$dir/repo"

names=("git archive --format=tar.gz" "git archive | pigz -6")
cmds=("git archive --format=tar.gz HEAD >$out/o.tar.gz"
      "git archive --format=tar HEAD | pigz -6 >$out/o.tar.gz")
for d in "${bins[@]}"; do
	names+=("dispatch ship ($d)")
	cmds+=("'$d' ship --output $out/o.tar.gz")
done

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*average[s]*: //'; }
load_before=$(load)
for ((r = 1; r <= rounds; r++)); do
	for i in "${!cmds[@]}"; do
		/usr/bin/time -f "$i %e %U %S %M" -a -o "$out/times" sh -c "${cmds[$i]}"
	done
done

echo "load average: $load_before before, $(load) after"
python3 - "$out/times" "${names[@]}" <<'PY'
import statistics, sys
wall, cpu, rss = {}, {}, {}
for line in open(sys.argv[1]):
    i, e, u, s, m = line.split()
    wall.setdefault(int(i), []).append(float(e))
    cpu.setdefault(int(i), []).append(float(u) + float(s))
    rss.setdefault(int(i), []).append(int(m) / 1024)
names = sys.argv[2:]
git, pigz = statistics.median(wall[0]), statistics.median(wall[1])
print(f"{len(wall[0])} rounds; medians, and the fastest run's wall time and ratios")
print(f"{'command':60} {'wall s':>7} {'cpu s':>7} {'RSS MiB':>8} {'vs git':>7} {'vs pigz':>8}"
      f" {'min s':>7} {'vs git':>7} {'vs pigz':>8}")
gmin, pmin = min(wall[0]), min(wall[1])
for i, name in enumerate(names):
    w, m = statistics.median(wall[i]), min(wall[i])
    print(f"{name:60} {w:7.3f} {statistics.median(cpu[i]):7.3f} {statistics.median(rss[i]):8.1f} "
          f"{git / w:6.2f}x {pigz / w:7.2f}x {m:7.3f} {gmin / m:6.2f}x {pmin / m:7.2f}x")
PY
