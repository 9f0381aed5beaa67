#!/bin/bash
# t7470: what a job did (submit --sample, status --usage, dispatch-status(1) USAGE)
# on the test bed, with the fake nvidia-smi of lib-testbed-gpu.sh replaying a
# utilisation series (fake_smi_series): a two-node SLURM job with one GPU per node
# and a plain-host job with a GPU lease, each sampled every second by its bootstrap;
# status --usage's figures (mean and peak utilisation, peak memory, energy) checked
# against the samples the nodes wrote, per node and GPU (the job's GPU only), while it
# runs and after; a job cancelled mid-sample leaves a file that reads; --sample 0
# records nothing. Claims hpc and box2 (their fake nvidia-smi is this file's).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"
DATA=$TEST_SRCDIR/tests/unit/data/nvidia-smi
U0=GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91

tb_up
claim_boxes box2 hpc
export DISPATCH_STATE_DIR="$TRASH/state"
LD=/tmp/dispatch-gpus-t7470-$$
mkdir -m 1777 "$LD" || exit 1
awk -v ld="$LD" '{ print } /^hosts:$/ { print "  gbox:\n    ssh: box2\n    cluster: testbed\n    type: plain\n    chips: {a100-sxm4-80gb: 2}\n    gpu_lock_dir: " ld }' \
	"$DISPATCH_INVENTORY" >inv.yaml || exit 1
export DISPATCH_INVENTORY=$PWD/inv.yaml
cleanup_t7470() {
	[ ! -s "$TRASH/jobs" ] || dispatch cancel $(cat "$TRASH/jobs") >/dev/null 2>&1
	rm -rf "$LD"
}
trap cleanup_t7470 EXIT
: >"$TRASH/jobs"
SERIES="10 100.00|90 300.00|100 400.00|20 150.00"
IFS='|' read -r -a SERIES_LINES <<<"$SERIES"
fake_smi hpc "$DATA/a100-node.query" all && fake_smi_series hpc "${SERIES_LINES[@]}" &&
	fake_smi box2 "$DATA/a100-node.query" all && fake_smi_series box2 "${SERIES_LINES[@]}" ||
	fail_rest "no fake nvidia-smi on hpc and box2"

# check JSON STAGE: each node's GPU figures in status --usage --json against the
# samples in STAGE/usage.* (recomputed here from the lines: the mean weighted by
# each sample's span, the peak, the energy), only the job's GPU ($U0), every
# utilisation one of the series'
check() {
	python3 - "$1" "$2" "$U0" <<'PY'
import glob, json, sys
doc, stage, u0 = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
job = doc["jobs"][0]
nodes = job["usage"]["nodes"]
assert nodes, "no node sampled"
for n in nodes:
    files = glob.glob("%s/usage.*.%s" % (stage, n["node"]))
    assert len(files) == 1, files
    us = ud = peak = e = 0.0
    for line in open(files[0]):
        f = line.split()
        if not f or f[0] == "#" or len(f) < 11:
            continue
        dt = float(f[1])
        assert f[5] == u0, f
        util, power = float(f[6]), float(f[8])
        assert util in (10, 90, 100, 20), util
        us += util * dt; ud += dt; peak = max(peak, util); e += power * dt
    assert [g["uuid"] for g in n["gpus"]] == [u0], n["gpus"]
    g = n["gpus"][0]
    assert abs(g["mean_util"] - round(us / ud, 1)) < 0.051, (g, us / ud)
    assert g["peak_util"] == peak, (g, peak)
    assert abs(g["energy_wh"] - round(e / 3600, 3)) < 0.0011, (g, e / 3600)
    assert g["peak_mem_mib"] == 40833, g
    assert all(v is None or v in (10, 90, 100, 20) or 10 <= v <= 100 for v in g["series"]), g
print(len(nodes))
PY
}

test_expect_success 'SLURM: two nodes, one GPU each, sampled every second; the figures are the samples' '
	dispatch --json submit -H hpc -J t7470 -p gpu --mem 100 -N 2 --gpus-per-node 1 --sample 1 \
		-- "sleep 6" >sub.json &&
	job=$(python3 -c "import json; print(json.load(open(\"sub.json\"))[\"job\"])") &&
	echo "$job" >>"$TRASH/jobs" &&
	dispatch wait --timeout 180 "$job" >/dev/null &&
	stage=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select script_path from jobs") && stage=${stage%/*} &&
	dispatch --json status --usage "$job" >st.json &&
	test "$(check st.json "$stage")" = 2 &&
	dispatch status --usage "$job" >st &&
	test_grep "^$job: 2 nodes, 0:00:[0-9][0-9] sampled ([0-9]* samples)$" st &&
	test_grep "^  node1  CPU [0-9.]* s" st &&
	test_grep "^    GPU-2b5a3e1c  util [0-9]*% mean, 100% peak  mem 40833 MiB  [0-9.]* Wh" st
'

test_expect_success 'plain host: the leased GPU, while it runs and after; LANG=C draws ASCII' '
	dispatch --json submit -H gbox -J t7470p --gpus 1 --sample 1 -- "sleep 8" >p.json &&
	job=$(python3 -c "import json; print(json.load(open(\"p.json\"))[\"job\"])") &&
	echo "$job" >>"$TRASH/jobs" &&
	stage=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select script_path from jobs where job_id = \"${job%@gbox}\"") &&
	stage=${stage%/*} &&
	for i in $(seq 1 100); do
		if [ "$(cat "$stage"/usage.* 2>/dev/null | grep -c "^[0-9]")" -ge 2 ]; then break; fi &&
		sleep 0.2
	done &&
	dispatch --json status --usage "$job" >run.json &&
	python3 -c "import json; j = json.load(open(\"run.json\"))[\"jobs\"][0]; assert j[\"state\"] == \"RUNNING\", j[\"state\"]" &&
	test "$(check run.json "$stage")" = 1 &&
	dispatch wait --timeout 60 "$job" >/dev/null &&
	dispatch --json status --usage "$job" >end.json &&
	test "$(check end.json "$stage")" = 1 &&
	LANG=C LC_ALL= LC_CTYPE= dispatch status --usage "$job" >st &&
	grep "^    GPU-2b5a3e1c" st >gpu &&
	! LC_ALL=C grep -q "[^ -~]" gpu
'

test_expect_success 'a job cancelled mid-sample leaves a file that reads; --sample 0 records nothing' '
	dispatch --json submit -H gbox -J t7470c --gpus 1 --sample 1 -- "sleep 300" >c.json &&
	job=$(python3 -c "import json; print(json.load(open(\"c.json\"))[\"job\"])") &&
	echo "$job" >>"$TRASH/jobs" &&
	stage=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select script_path from jobs where job_id = \"${job%@gbox}\"") &&
	stage=${stage%/*} &&
	for i in $(seq 1 100); do
		if [ "$(cat "$stage"/usage.* 2>/dev/null | grep -c "^[0-9]")" -ge 2 ]; then break; fi &&
		sleep 0.2
	done &&
	dispatch cancel "$job" >/dev/null &&
	test_expect_code 1 dispatch wait --timeout 60 "$job" >/dev/null &&
	dispatch --json status --usage "$job" >c2.json &&
	test "$(check c2.json "$stage")" = 1 &&
	dispatch --json submit -H gbox -J t7470z --sample 0 -- true >z.json &&
	job=$(python3 -c "import json; print(json.load(open(\"z.json\"))[\"job\"])") &&
	dispatch wait --timeout 60 "$job" >/dev/null &&
	dispatch status --usage "$job" >z &&
	test_grep "^$job: no samples" z
'

test_done
