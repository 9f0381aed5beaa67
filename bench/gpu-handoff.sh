#!/bin/bash
# bench/gpu-handoff.sh [DISPATCH] [ROUNDS]: on a plain host of the test bed (the
# fan1 alias's sshd as host gbox, one fake GPU, tests/cli/lib-testbed-gpu.sh's way), how long a pending --gpus 1 job waits after
# the job holding the GPU ended: from the last line the first job's command prints
# to the first line the next one's prints (both `date +%s%N` on the same machine).
# Root, as the test bed. See bench/README.md.
set -eu
DISPATCH=$(realpath "${1:-build/dispatch}")
ROUNDS=${2:-10}
SRC=$(cd "$(dirname "$0")/.." && pwd)
eval "$(bash "$SRC/tests/testbed/up" 2>/dev/null)"
W=$(mktemp -d /tmp/dispatch-bench-handoff.XXXXXX)
export DISPATCH_STATE_DIR=$W/state
LD=/tmp/dispatch-gpus-bench-$$
TB_HOME=$(getent passwd "$DISPATCH_TESTBED_USER" | cut -d: -f6)
port=$(awk '$1 == "Host" { on = ($2 == "fan1") } on && $1 == "Port" { print $2; exit }' "$DISPATCH_SSH_CONFIG")
F=$TB_HOME/.fake-nvidia-smi/$port
G=$DISPATCH_TESTBED_DIR/cluster/work/bench-handoff-$$
cleanup() { touch "$G/all" 2>/dev/null; sleep 1; rm -rf "$F" "$W" "$LD" "$G"; }
trap cleanup EXIT
grep -q fake-nvidia-smi "$TB_HOME/.profile" || {
	echo "run tests/cli/t7020-gpu-leases.sh once first (it adds the fake's line to the test user's .profile)" >&2
	exit 1
}
mkdir -p "$F" "$G" && chmod 777 "$G"
echo "GPU-00000000-0000-4000-8000-00000000bench, NVIDIA A100-SXM4-80GB, 81920" >"$F/gpus"
: >"$F/apps"
cat >"$F/nvidia-smi" <<'FAKE'
#!/bin/sh
d=$(dirname "$0")
case "$*" in
--query-gpu=*) cat "$d/gpus" ;;
--query-compute-apps=*) cat "$d/apps" ;;
esac
FAKE
chmod 755 "$TB_HOME/.fake-nvidia-smi" "$F" "$F/nvidia-smi" && chmod 644 "$F/gpus" "$F/apps"
awk -v ld="$LD" '{ print } /^hosts:$/ { print "  gbox:\n    ssh: fan1\n    cluster: testbed\n    gpu_lock_dir: " ld }' \
	"$DISPATCH_INVENTORY" >"$W/inv.yaml"
export DISPATCH_INVENTORY=$W/inv.yaml
log() { echo "$DISPATCH_TESTBED_DIR/cluster/log/${1%@*}.out"; }
prev=$("$DISPATCH" submit -H gbox --gpus 1 -- "while [ ! -e $G/0 ]; do sleep 0.01; done; date +%s%N")
for i in $(seq 1 "$ROUNDS"); do
	next=$("$DISPATCH" submit -H gbox --gpus 1 -- "date +%s%N; while [ ! -e $G/$i ] && [ ! -e $G/all ]; do sleep 0.01; done; date +%s%N")
	touch "$G/$((i - 1))"
	until [ "$(wc -l <"$(log "$next")" 2>/dev/null || echo 0)" -ge 1 ]; do sleep 0.05; done
	end=$(tail -n 1 "$(log "$prev")") start=$(head -n 1 "$(log "$next")")
	echo "$(((start - end) / 1000000))"
	prev=$next
done | sort -n | awk '{ v[NR] = $1; s += $1 } END { printf "handoff over %d rounds: median %d ms, min %d ms, max %d ms, mean %.0f ms\n", NR, v[int((NR + 1) / 2)], v[1], v[NR], s / NR }'
touch "$G/$ROUNDS"
