#!/bin/bash
# t7470: what a job did (submit --sample, status --usage, dispatch-status(1) USAGE)
# on the test bed, with the fake nvidia-smi of lib-testbed-gpu.sh replaying a
# utilisation series (fake_smi_series): a two-node SLURM job with one GPU per node
# and a plain-host job with a GPU lease, each sampled every second by its bootstrap;
# status --usage's figures (mean and peak utilisation, peak memory, energy) checked
# against the samples the nodes wrote, per node and GPU (the job's GPU only), while it
# runs and after (and top's HISTORY column); a job cancelled mid-sample leaves a file that reads; --sample 0
# records nothing; --idle-timeout ends a run (not restarted) whose GPU stayed under
# --idle-below, and status and wait say why; hosts show lists it while idle. Claims hpc and box2 (their fake nvidia-smi is this file's).
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
	tb_cleanup # the fake nvidia-smi off hpc and box2
}
trap cleanup_t7470 EXIT
: >"$TRASH/jobs"
SERIES="10 100.00|90 300.00|100 400.00|20 150.00"
IFS='|' read -r -a SERIES_LINES <<<"$SERIES"
fake_smi hpc "$DATA/a100-node.query" all && fake_smi_series hpc "${SERIES_LINES[@]}" &&
	fake_smi box2 "$DATA/a100-node.query" all && fake_smi_series box2 "${SERIES_LINES[@]}" ||
	fail_rest "no fake nvidia-smi on hpc and box2"

# stage_of JOB: the stage dir of JOB (ID@HOST), from the ledger
stage_of() {
	local s
	s=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select script_path from jobs where job_id = '${1%@*}'") &&
		[ -n "$s" ] && echo "${s%/*}"
}
# wait_samples STAGE: until a node of the job has written two samples (60 s at most)
wait_samples() {
	local i
	for i in $(seq 1 300); do
		[ "$(cat "$1"/usage.* 2>/dev/null | grep -c "^[0-9]")" -ge 2 ] && return 0
		sleep 0.2
	done
	return 1
}

# check JSON STAGE GPU: each node's GPU figures in status --usage --json against the
# samples in STAGE/usage.* (recomputed here from the lines: the mean weighted by each
# sample's span, the peak, the energy), only the job's GPU (GPU: the fixture's index,
# or "leased": the one status says the plain host leased), every utilisation one of
# the series'; lines written after status read the file (a running job) left out
check() {
	python3 - "$1" "$2" "$3" <<'PY'
import glob, json, sys
doc, stage = json.load(open(sys.argv[1])), sys.argv[2]
job = doc["jobs"][0]
fixture = {"0": ("GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91", 40833),
           "1": ("GPU-7c1e9f40-3a6b-4d2e-8f5c-0b9a1d7e6c34", 0)}
# the step's GPU (minor 0), or the one the plain host leased (status' "gpus")
u0, mem = fixture[sys.argv[3] if sys.argv[3] != "leased" else job["gpus"]]
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
        if float(f[0]) > n["end"]:
            continue  # written after status read the file (the job still runs)
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
    assert g["peak_mem_mib"] == mem, g
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
	stage=$(stage_of "$job") &&
	dispatch --json status --usage "$job" >st.json &&
	test "$(check st.json "$stage" 0)" = 2 &&
	dispatch status --usage "$job" >st &&
	test_grep "^$job: 2 nodes, 0:00:[0-9][0-9] sampled ([0-9]* samples)$" st &&
	test_grep "^  node1  CPU [0-9.]* s" st &&
	test_grep "^    GPU-2b5a3e1c  util [0-9]*% mean, 100% peak  mem 40833 MiB  [0-9.]* Wh" st
'

test_expect_success 'SLURM: --idle-timeout ends a run whose GPU stayed idle, for good; status and wait say why' '
	# its GPU at 1%: under --idle-below 50 for 1 min (and idle for hosts show)
	fake_smi_series hpc "1 50.00" &&
	dispatch --json submit -H hpc -J t7470i -p gpu --mem 100 --gpus-per-node 1 --sample 1 \
		--idle-timeout 1m --idle-below 50 --max-restarts 2 --restart-on error \
		--env DISPATCH_IDLE_GRACE=0 -- "sleep 600" >i.json &&
	job=$(python3 -c "import json; print(json.load(open(\"i.json\"))[\"job\"])") &&
	echo "$job" >>"$TRASH/jobs" &&
	stage=$(stage_of "$job") &&
	wait_samples "$stage" &&
	dispatch hosts show hpc >hs &&
	test_grep "^Idle GPUs of dispatch.s running jobs" hs &&
	test_grep "^node[12]  *$job  *GPU-2b5a3e1c  *1%  *1%$" hs &&
	dispatch --json hosts show hpc >hs.json &&
	python3 -c "import json; d = json.load(open(\"hs.json\")); assert [g[\"job\"] for g in d[\"idle_gpus\"]] == [\"$job\"], d[\"idle_gpus\"]" &&
	test_expect_code 1 dispatch wait --timeout 300 "$job" >w &&
	test_grep "^$job FAILED .*idle: GPUs under 50% for 1 min" w &&
	dispatch --json status "$job" >is.json &&
	python3 -c "import json; j = json.load(open(\"is.json\"))[\"jobs\"][0]; assert j[\"why\"] == \"idle: GPUs under 50% for 1 min\", j; assert j[\"attempt\"] == 1, j" &&
	test_expect_code 2 dispatch submit -H hpc --idle-below 50 -- true 2>err &&
	test_grep "needs --idle-timeout" err &&
	test_expect_code 2 dispatch submit -H hpc --idle-timeout 30s -- true 2>err &&
	test_grep "at least 1 minute" err &&
	dispatch hosts show hpc >hs2 &&
	test_grep "^No idle GPU among dispatch.s 0 running jobs here.$" hs2 &&
	fake_smi_series hpc "${SERIES_LINES[@]}"
'

test_expect_success 'plain host: the leased GPU, while it runs and after; LANG=C draws ASCII' '
	dispatch --json submit -H gbox -J t7470p --gpus 1 --sample 1 -- "sleep 8" >p.json &&
	job=$(python3 -c "import json; print(json.load(open(\"p.json\"))[\"job\"])") &&
	echo "$job" >>"$TRASH/jobs" &&
	stage=$(stage_of "$job") &&
	wait_samples "$stage" &&
	dispatch --json status --usage "$job" >run.json &&
	python3 -c "import json; j = json.load(open(\"run.json\"))[\"jobs\"][0]; assert j[\"state\"] == \"RUNNING\", j[\"state\"]" &&
	test "$(check run.json "$stage" leased)" = 1 &&
	bus=$(python3 -c "import json; print({\"0\": \"07\", \"1\": \"0F\"}[json.load(open(\"run.json\"))[\"jobs\"][0][\"gpus\"]])") &&
	LANG=C LC_ALL= LC_CTYPE= dispatch top -n 1 --interval 1 "$job" >top &&
	grep "00000000:$bus:00.0" top >toprow &&
	hist=$(awk "{ print \$NF }" toprow) &&
	case $hist in -) false ;; *[!\ .:=+*#%@?-]*) false ;; esac &&
	dispatch wait --timeout 60 "$job" >/dev/null &&
	dispatch --json status --usage "$job" >end.json &&
	test "$(check end.json "$stage" leased)" = 1 &&
	LANG=C LC_ALL= LC_CTYPE= dispatch status --usage "$job" >st &&
	grep "^    GPU-" st >gpu &&
	! LC_ALL=C grep -q "[^ -~]" gpu
'

test_expect_success 'a job cancelled mid-sample leaves a file that reads; --sample 0 records nothing' '
	dispatch --json submit -H gbox -J t7470c --gpus 1 --sample 1 -- "sleep 300" >c.json &&
	job=$(python3 -c "import json; print(json.load(open(\"c.json\"))[\"job\"])") &&
	echo "$job" >>"$TRASH/jobs" &&
	stage=$(stage_of "$job") &&
	wait_samples "$stage" &&
	dispatch cancel "$job" >/dev/null &&
	test_expect_code 1 dispatch wait --timeout 60 "$job" >/dev/null &&
	dispatch --json status --usage "$job" >c2.json &&
	test "$(check c2.json "$stage" leased)" = 1 &&
	dispatch --json submit -H gbox -J t7470z --sample 0 -- true >z.json &&
	job=$(python3 -c "import json; print(json.load(open(\"z.json\"))[\"job\"])") &&
	dispatch wait --timeout 60 "$job" >/dev/null &&
	dispatch status --usage "$job" >z &&
	test_grep "^$job: no samples" z
'

test_expect_success 'status --usage SWEEP: each task below the table, and in --json' '
	dispatch --json submit -H gbox -J t7470s --gpus 1 --sample 1 --sweep k=1,2 -- "sleep 3" >s.json &&
	sid=$(python3 -c "import json; print(json.load(open(\"s.json\"))[\"sweep\"][\"id\"])") &&
	dispatch wait --timeout 60 "$sid" >/dev/null &&
	dispatch status --usage "$sid" >su &&
	test_grep "^2 tasks: 2 COMPLETED$" su &&
	test "$(grep -c "^t7470s-.*@gbox: 1 node, 0:00:0[0-9] sampled" su)" = 2 &&
	test "$(grep -c "^    GPU-" su)" = 2 &&
	dispatch --json status --usage "$sid" >su.json &&
	python3 -c "import json; t = json.load(open(\"su.json\"))[\"sweeps\"][0][\"tasks\"]; assert [len(x[\"usage\"][\"nodes\"][0][\"gpus\"]) for x in t] == [1, 1], t"
'

test_expect_success 'jobs --usage: GPU-hours per host, user and day: allocations (sacct, leases) and the samples' '
	dispatch --json jobs --usage >ju.json &&
	dispatch --json jobs --usage --by day >jd.json &&
	dispatch --json jobs --usage --by user >jw.json &&
	dispatch jobs --usage --by user >jw &&
	dispatch --json status --usage $(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select job_id || \"@\" || host from jobs") >all.json &&
	python3 - <<-\EOF &&
	import json, datetime
	st = json.load(open("all.json"))["jobs"]
	def span(j):
	    return sum((n["end"] - n["start"]) / 3600 for n in j["usage"]["nodes"] for g in n["gpus"])
	def alloc(j):
	    a = j["allocated"]
	    return a["gpus"] * a["seconds"] / 3600 if a else span(j)
	two = [j for j in st if j["host"] == "hpc" and j["usage"]["nodes"] and len(j["usage"]["nodes"]) == 2]
	assert len(two) == 1 and two[0]["allocated"]["gpus"] == 2, two  # -N 2 --gpus-per-node 1: AllocTRES
	assert two[0]["allocated"]["seconds"] >= 6, two[0]["allocated"]
	plain = [j for j in st if j["host"] == "gbox" and j["allocated"] and j["allocated"]["gpus"] == 1]
	assert plain, [j["allocated"] for j in st]  # the leased GPU
	want, users = {}, {}
	for j in st:
	    for key, d in ((j["host"], want), ((j["allocated"] or {}).get("user"), users)):
	        g = d.setdefault(key, [0, 0, 0.0, 0.0])
	        nodes = j["usage"]["nodes"]
	        g[0] += 1
	        g[1] += 1 if nodes else 0
	        g[2] += alloc(j)
	        for n in nodes:
	            for gpu in n["gpus"]:
	                g[3] += (n["end"] - n["start"]) / 3600 * (gpu["mean_util"] or 0) / 100
	for f, key, exp in (("ju.json", "host", want), ("jw.json", "user", users)):
	    got = {g[key]: [g["jobs"], g["sampled"], g["gpu_hours"], g["used_gpu_hours"]]
	           for g in json.load(open(f))["groups"]}
	    assert set(got) == set(exp) and None not in got, (got, exp)
	    for h in got:
	        assert got[h][:2] == exp[h][:2], (h, got[h], exp[h])
	        assert abs(got[h][2] - exp[h][2]) < 0.002 and abs(got[h][3] - exp[h][3]) < 0.002, (h, got[h], exp[h])
	assert set(want) == {"hpc", "gbox"}, want
	assert want["gbox"][1] == want["gbox"][0] - 1, want  # the --sample 0 job
	day = json.load(open("jd.json"))
	today = datetime.date.today()
	days = {today.isoformat(), (today - datetime.timedelta(days=1)).isoformat()}
	assert day["groups"] and all(g["day"] in days for g in day["groups"]), day
	assert day["total"]["jobs"] == len(st), day
	EOF
	head -n 1 jw >hdr &&
	test_grep "^USER  *JOBS  *SAMPLED  *GPU-HOURS  *USED  *USED%$" hdr &&
	test_expect_code 2 dispatch jobs --by day 2>err &&
	test_grep "give --usage" err &&
	test_expect_code 2 dispatch jobs --usage --by node 2>err &&
	test_grep "takes host, user or day" err
'

test_done
