# Sourced by testbed tests that need the default test bed's SLURM cluster and GPUs
# on plain hosts (t5400, t5410).
#
# tb_up: brings the default instance up (lib.sh testbed_up; never taken down here:
# the test runner does that) and finds the test user's home.
#
# fake_gpus BOX GPUS [APPS]: a fake nvidia-smi on one sshd of the test bed, printing
# the fixture files GPUS (--query-gpu) and APPS (--query-compute-apps). There are no
# GPUs here; the rest is real: the SSH session, the login shell, dispatch's remote
# command and its parsing. The test user's home is shared by every host of the test
# bed, so the fake is put on PATH only for sessions of that one sshd: a line in
# ~/.profile adds ~/.fake-nvidia-smi/PORT (PORT from $SSH_CONNECTION) when that
# directory exists. fake_gpus_off BOX removes it (done at exit for every BOX).

tb_up() {
	testbed_up
	TB_HOME=$(getent passwd "$DISPATCH_TESTBED_USER" | cut -d: -f6)
	[ -n "$TB_HOME" ] || skip_rest "no home for $DISPATCH_TESTBED_USER"
}

# claim_boxes BOX...: until it exits, this test alone puts a fake nvidia-smi on these
# plain hosts of the instance, or counts on their having none (t5400 wants box2 bare
# while t5410 fakes box1 and box2: side by side they met). A lock a box in the
# instance's directory, held on a descriptor of the test's shell (its children get it
# too: a claim lasts while anything the test started runs), taken in sorted order so
# that two tests never wait on each other crosswise, each wait bounded: a box still
# claimed after 600 s fails the rest of the test. Call it at the top level, not in a
# test body (those run in subshells).
claim_boxes() {
	local b fd
	for b in $(printf '%s\n' "$@" | sort -u); do
		exec {fd}>>"$DISPATCH_TESTBED_DIR/claim-$b.lock" ||
			fail_rest "cannot open the claim lock of $b"
		flock -w 600 "$fd" ||
			fail_rest "$b is still claimed by another test after 600 s (tests/cli/lib-testbed-gpu.sh claim_boxes)"
	done
}

# The sshd port of a test bed alias, from the generated ssh config.
box_port() {
	awk -v h="$1" '$1 == "Host" { on = ($2 == h) } on && $1 == "Port" { print $2; exit }' \
		"$DISPATCH_SSH_CONFIG"
}

fake_gpus() {
	local port dir
	port=$(box_port "$1")
	[ -n "$port" ] || return 1
	dir=$TB_HOME/.fake-nvidia-smi/$port
	if ! grep -q 'fake-nvidia-smi' "$TB_HOME/.profile" 2>/dev/null; then
		cat >>"$TB_HOME/.profile" <<'PROFILE'
# dispatch tests (tests/cli/lib-testbed-gpu.sh): a fake nvidia-smi for one sshd
if [ -n "$SSH_CONNECTION" ] && [ -d "$HOME/.fake-nvidia-smi/${SSH_CONNECTION##* }" ]; then
	PATH="$HOME/.fake-nvidia-smi/${SSH_CONNECTION##* }:$PATH"
fi
PROFILE
	fi
	mkdir -p "$dir"
	cp "$2" "$dir/gpus"
	if [ -n "${3:-}" ]; then cp "$3" "$dir/apps"; else : >"$dir/apps"; fi
	cat >"$dir/nvidia-smi" <<'FAKE'
#!/bin/sh
# fake nvidia-smi (tests/cli/lib-testbed-gpu.sh): only the two queries dispatch makes
d=$(dirname "$0")
case "$*" in
"--query-gpu=uuid,name,memory.total --format=csv,noheader,nounits") cat "$d/gpus" ;;
"--query-compute-apps=gpu_uuid,used_memory --format=csv,noheader,nounits") cat "$d/apps" ;;
*) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
FAKE
	chmod 755 "$TB_HOME/.fake-nvidia-smi" "$dir" "$dir/nvidia-smi"
	chmod 644 "$dir/gpus" "$dir/apps"
	echo "$1" >>"$TRASH/fake-boxes"
}

fake_gpus_off() {
	local port
	port=$(box_port "$1")
	[ -n "$port" ] && rm -rf "${TB_HOME:?}/.fake-nvidia-smi/$port"
}

# At exit: fakes removed, jobs this test submitted cancelled (lists kept in files:
# test bodies run in subshells).
tb_cleanup() {
	local b
	if [ -f "$TRASH/fake-boxes" ]; then
		for b in $(sort -u "$TRASH/fake-boxes"); do fake_gpus_off "$b"; done
	fi
	# shellcheck disable=SC2046
	[ -s "$TRASH/jobs" ] && "$DISPATCH" run -H hpc -- scancel $(cat "$TRASH/jobs") >/dev/null 2>&1
	rm -rf "$TRASH"
}
trap tb_cleanup EXIT

# submit_gpu_job NODE: a job holding NODE's two a100 for up to 120 s; prints its id
# once it runs (fails after 90 s pending: the cluster is shared with other tests).
submit_gpu_job() {
	local id state i
	id=$(dispatch run -H hpc -- sbatch --parsable -p gpu -w "$1" --gres=gpu:a100:2 -t 5 \
		-o /dev/null --wrap "'sleep 120'") || return 1
	id=${id%%;*}
	echo "$id" >>"$TRASH/jobs"
	for i in $(seq 180); do
		state=$(dispatch run -H hpc -- squeue -h -j "$id" -o %T) || return 1
		[ "$state" = RUNNING ] && { echo "$id"; return 0; }
		sleep 0.5
	done
	echo "job $id still $state after 90 s" >&2
	return 1
}

# wait_gpus_free NODE...: waits (up to 90 s) until scontrol itself (raw, not through
# dispatch's parsing) says no GPU of each NODE is in use: the cluster is shared with
# other tests, whose jobs may hold GPUs for a while.
wait_gpus_free() {
	local n i ok
	for i in $(seq 90); do
		ok=1
		for n; do
			dispatch run -H hpc -- scontrol -o -d show node "$n" | grep -q 'GresUsed=gpu:a100:0(' || ok=0
		done
		[ $ok = 1 ] && return 0
		sleep 1
	done
	echo "the GPUs of $* are still in use after 90 s (other tests' jobs?)" >&2
	return 1
}

# fake_smi BOX QUERY [MODE]: a fake nvidia-smi for dispatch top on BOX's sessions
# (for hpc: the login node's, which srun hands to the job steps on the nodes through
# PATH), replaying the fixture QUERY (tests/unit/data/nvidia-smi/*.query: a header of
# field names, then rows). It answers --help-query-gpu with those fields, and
# --query-gpu=ANY,SUBSET --format=csv,noheader,nounits [-l S]; an unknown field fails
# the whole query with nvidia-smi's own message; --query-compute-apps=pid,gpu_uuid,
# used_memory (any subset, also process_name, gpu_bus_id) lists the processes whose
# CUDA_VISIBLE_DEVICES holds a fixture GPU's UUID, and the lines of apps-extra in the
# fake's directory (fake_smi_apps BOX LINE...). MODE: all (the step sees every GPU
# of the node, as without device constraints), constrained (only SLURM_STEP_GPUS,
# renumbered from 0, as with them), nvml (NVML failure), hang (never answers a query).
fake_smi() {
	local port dir
	port=$(box_port "$1")
	[ -n "$port" ] || return 1
	fake_gpus "$1" /dev/null || return 1
	dir=$TB_HOME/.fake-nvidia-smi/$port
	cp "$2" "$dir/query"
	rm -f "$dir/series" # (fake_smi_series sets one)
	echo "${3:-all}" >"$dir/mode"
	cat >"$dir/nvidia-smi" <<'FAKE'
#!/usr/bin/python3
# fake nvidia-smi (tests/cli/lib-testbed-gpu.sh fake_smi)
import os, sys, time
d = os.path.dirname(os.path.abspath(__file__))
mode = open(os.path.join(d, "mode")).read().strip()
lines = open(os.path.join(d, "query")).read().splitlines()
fields = lines[0].split(", ")
rows = [l.split(", ") for l in lines[1:] if l]
args = sys.argv[1:]
if mode == "nvml":
    print("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
          "Make sure that the latest NVIDIA driver is installed and running.")
    sys.exit(9)
if args == ["--help-query-gpu"]:
    for f in fields:
        print('"%s"\nA field.\n' % f)
    sys.exit(0)
apps = [a for a in args if a.startswith("--query-compute-apps=")]
if apps and "--format=csv,noheader,nounits" in args:
    # The processes holding a GPU, as the driver would list them: every process
    # this user can read whose CUDA_VISIBLE_DEVICES names a GPU of the fixture by
    # UUID (it uses DISPATCH_FAKE_GPU_MIB MiB there, default 1024), then the lines
    # of the file apps-extra (other users' processes: "PID, UUID, MIB").
    want = apps[0].split("=", 1)[1].split(",")
    known = ["pid", "gpu_uuid", "used_memory", "process_name", "gpu_bus_id"]
    for w in want:
        if w not in known:
            print('Field "%s" is not a valid field to query.' % w)
            print()
            sys.exit(2)
    ui, bi = fields.index("uuid"), fields.index("pci.bus_id")
    bus = {r[ui]: r[bi] for r in rows}
    held = []
    for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
        try:
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
            name = open("/proc/%s/comm" % pid).read().strip()
        except OSError:
            continue
        vals = dict(e.decode(errors="replace").split("=", 1) for e in env if b"=" in e)
        for u in vals.get("CUDA_VISIBLE_DEVICES", "").split(","):
            if u in bus:
                held.append([pid, u, vals.get("DISPATCH_FAKE_GPU_MIB", "1024"), name])
    try:
        for l in open(os.path.join(d, "apps-extra")).read().splitlines():
            if l:
                held.append(l.split(", ") + ["python3"])
    except OSError:
        pass
    for h in held:
        v = {"pid": h[0], "gpu_uuid": h[1], "used_memory": h[2], "process_name": h[3],
             "gpu_bus_id": bus.get(h[1], "")}
        print(", ".join(v[w] for w in want))
    sys.exit(0)
q = [a for a in args if a.startswith("--query-gpu=")]
if not q or "--format=csv,noheader,nounits" not in args:
    print("fake nvidia-smi: unexpected arguments: %s" % " ".join(args), file=sys.stderr)
    sys.exit(2)
want = q[0].split("=", 1)[1].split(",")
for w in want:
    if w not in fields:
        print('Field "%s" is not a valid field to query.' % w)
        print()
        sys.exit(2)
if mode == "hang":
    time.sleep(3600)
step = os.environ.get("SLURM_STEP_GPUS", "")
if mode == "constrained" and step:
    keep = set(step.split(","))
    mi = fields.index("minor_number")
    rows = [r for r in rows if r[mi] in keep]
    for i, r in enumerate(rows):
        r[fields.index("index")] = str(i)
loop = float(args[args.index("-l") + 1]) if "-l" in args else 0
if "-lms" in args:
    loop = float(args[args.index("-lms") + 1]) / 1000
# a replayed series (fake_smi_series): "UTIL POWER" for every GPU at each step, the
# last one held
try:
    series = [l.split() for l in open(os.path.join(d, "series")).read().splitlines() if l.strip()]
except OSError:
    series = []
k = 0
while True:
    for r in rows:
        r = list(r)
        if series:
            r[fields.index("utilization.gpu")], r[fields.index("power.draw")] = series[min(k, len(series) - 1)]
        print(", ".join(r[fields.index(w)] for w in want), flush=True)
    if not loop:
        break
    k += 1
    time.sleep(loop)
FAKE
	chmod 755 "$dir/nvidia-smi"
	chmod 644 "$dir/query" "$dir/mode"
}

# fake_smi_series BOX [LINE...]: the utilisation and power ("UTIL POWER") the fake
# reports for every GPU at each step of a loop (-l, -lms), the last one held; the
# fixture's without LINEs.
fake_smi_series() {
	local f
	f=$TB_HOME/.fake-nvidia-smi/$(box_port "$1")/series
	shift
	if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$f" && chmod 644 "$f"; else rm -f "$f"; fi
}

# fake_smi_apps BOX [LINE...]: the processes of other users the fake lists as holding
# GPUs ("PID, UUID, MIB", nvidia-smi's --query-compute-apps=pid,gpu_uuid,used_memory
# form); none without LINEs.
fake_smi_apps() {
	local f
	f=$TB_HOME/.fake-nvidia-smi/$(box_port "$1")/apps-extra
	shift
	if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$f"; else : >"$f"; fi
	chmod 644 "$f"
}
