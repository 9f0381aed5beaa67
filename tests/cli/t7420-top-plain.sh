#!/bin/bash
# t7420: dispatch top on a plain host of tests/testbed (inner: no other test fakes
# its GPUs; box1..3 and fan1 are faked by tests that may run at the same time), with
# the stand-in nvidia-smi replaying the A100 fixture (tests/cli/lib-testbed-gpu.sh
# fake_smi; --query-compute-apps lists the processes whose CUDA_VISIBLE_DEVICES holds
# a fixture GPU, and apps-extra's lines for other users). The job's GPU leased at
# launch; --procs with each process's GPU memory; a GPU another user's process holds
# too is 'shared'; a GPU the job's process took without a lease is the job's; a job
# without GPUs shows its processes' CPU and memory with a note; no nvidia-smi; an
# ended job (exit 1); one refresh is one remote command; --health; and hosts show
# --health on the same host (GPU health from the a100-health fixture, XID source),
# here because this test owns inner's fake nvidia-smi. Skips unless root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"

tb_up
export DISPATCH_STATE_DIR="$TRASH/state"
U0=GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91
U1=GPU-7c1e9f40-3a6b-4d2e-8f5c-0b9a1d7e6c34
fake_smi inner "$TEST_SRCDIR/tests/unit/data/nvidia-smi/a100-node.query" all
fake_smi_apps inner
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }

cleanup_t7420() {
	local p
	for p in $(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select pid from jobs where pid > 1" 2>/dev/null); do
		kill -KILL -- "-$p" 2>/dev/null
	done
	tb_cleanup
}
trap cleanup_t7420 EXIT

# run_job NAME ARGS... -- COMMAND: submits to inner, prints the job once it runs (the
# long jobs sleep 600 s: the cases before the 7th take over a minute, and a job of
# 60 s had ended by then; the clean-up kills what is left)
run_job() {
	local name=$1 job
	shift
	job=$(dispatch submit -H inner -J "$name" "$@") || return 1
	dispatch wait --until running --timeout 30 "$job" >/dev/null || return 1
	echo "$job"
}

test_expect_success 'the leased GPU, the job processes, --procs with their GPU memory' '
	job=$(run_job t7420a --gpus 1 --env DISPATCH_FAKE_GPU_MIB=777 -- "sleep 600 & sleep 601; wait") &&
	echo "$job" >job-a &&
	dispatch --json top -n 1 --procs "$job" >j &&
	test "$(jq_ "len(d[\"nodes\"][0][\"gpus\"])" j)" = 1 &&
	jq_ "d[\"nodes\"][0][\"gpus\"][0][\"uuid\"]" j >uuid &&
	jq_ "d[\"nodes\"][0][\"gpus\"][0][\"bus_id\"]" j >bus &&
	test_grep -x -e "$U0" -e "$U1" uuid &&
	test "$(jq_ "d[\"nodes\"][0][\"gpus\"][0][\"shared\"]" j)" = False &&
	test "$(jq_ "sorted(p[\"command\"] for p in d[\"nodes\"][0][\"gpus\"][0][\"processes\"] if p[\"command\"] == \"sleep\")" j)" = "['"'"'sleep'"'"', '"'"'sleep'"'"']" &&
	test "$(jq_ "d[\"nodes\"][0][\"processes\"][\"count\"] >= 3" j)" = True &&
	dispatch --json status "$job" >st &&
	if [ "$(cat uuid)" = "$U0" ]; then
		row="inner  *00000000:07:00.0  *87%  *40833/81920  *312/400  *61C  *sw_power_cap  *-" &&
		test "$(jq_ "d[\"jobs\"][0][\"gpus\"]" st)" = 0
	else
		row="inner  *00000000:0F:00.0  *0%  *0/81920  *61/400  *33C  *gpu_idle  *-" &&
		test "$(jq_ "d[\"jobs\"][0][\"gpus\"]" st)" = 1
	fi &&
	dispatch top -n 1 "$job" >out &&
	test "$(grep -c "^inner " out)" = 1 &&
	# (HISTORY: empty until the sampler of the job wrote a first sample: later under load)
	test_grep "^$row\( \+[^ ]*\)\?$" out &&
	test_grep "^inner: [0-9]* process[es]* of the job, CPU [0-9]*%, RSS [0-9]* MiB$" out &&
	dispatch top -n 1 --procs "$job" >out &&
	test "$(grep -c "^inner  $(cat bus)  [0-9]*  *777  .*sleep$" out)" = 2
'

test_expect_success 'another user'"'"'s process on the job'"'"'s GPU: shared' '
	job=$(cat job-a) &&
	fake_smi_apps inner "1, $(cat uuid), 2048" &&
	dispatch top -n 1 "$job" >out &&
	test_grep "^inner  $(cat bus) .* shared\( \+[^ ]*\)\?$" out &&
	test "$(grep -c "^inner " out)" = 1 &&
	dispatch --json top -n 1 "$job" >j &&
	test "$(jq_ "d[\"nodes\"][0][\"gpus\"][0][\"flag\"]" j)" = shared &&
	fake_smi_apps inner
'

test_expect_success 'a GPU the job'"'"'s process holds without a lease is the job'"'"'s' '
	job=$(run_job t7420b -- "CUDA_VISIBLE_DEVICES=$U1 sleep 60") &&
	dispatch --json top -n 1 "$job" >j &&
	test "$(jq_ "[g[\"bus_id\"] for g in d[\"nodes\"][0][\"gpus\"]]" j)" = "['"'"'00000000:0F:00.0'"'"']" &&
	dispatch cancel "$job"
'

test_expect_success 'a job without GPUs: its processes'"'"' CPU and memory, with a note' '
	job=$(run_job t7420c -- "sleep 600") &&
	dispatch top -n 1 "$job" >out &&
	test_grep "^inner  *-  *-  *-  *-  *-  *-  *no-gpus-allocated  *-$" out &&
	test_grep "^inner: [0-9]* process[es]* of the job, CPU [0-9]*%, RSS [0-9]* MiB (the job holds no GPUs: its processes. CPU and memory only)$" out &&
	dispatch --json top -n 1 "$job" >j &&
	test "$(jq_ "d[\"nodes\"][0][\"gpus\"]" j)" = "[]" &&
	test "$(jq_ "d[\"nodes\"][0][\"allocated_gpus\"]" j)" = 0 &&
	echo "$job" >job-c
'

test_expect_success 'no nvidia-smi on the host: flagged, the processes still shown' '
	job=$(cat job-c) &&
	fake_gpus_off inner &&
	dispatch top -n 1 "$job" >out &&
	test_grep "^inner  *-  .*no-nvidia-smi  *-$" out &&
	test_grep "^inner: [0-9]* process[es]* of the job" out &&
	fake_smi inner "$TEST_SRCDIR/tests/unit/data/nvidia-smi/a100-node.query" all
'

test_expect_success '--health: the host'"'"'s GPU health, asked once per session' '
	job=$(cat job-a) &&
	fake_smi inner "$TEST_SRCDIR/tests/unit/data/nvidia-smi/a100-health.query" all &&
	dispatch top -n 2 --interval 1 --health "$job" >out &&
	test "$(grep -c "^inner: GPU health$" out)" = 1 &&
	test_grep "^00000000:0F:00.0  *2  *-  *Yes  *No  *-  *unhealthy$" out &&
	dispatch --json top -n 1 --health "$job" >j &&
	test "$(jq_ "[g[\"healthy\"] for g in d[\"nodes\"][0][\"health\"][\"gpus\"]]" j)" = "[True, False]" &&
	fake_smi inner "$TEST_SRCDIR/tests/unit/data/nvidia-smi/a100-node.query" all
'

test_expect_success 'samples over one connection, one remote command each; an ended job is exit 1' '
	job=$(cat job-a) &&
	dispatch -v top -n 3 --interval 1 "$job" >out 2>err &&
	test "$(grep -c "^NODE " out)" = 3 &&
	test "$(grep -c "^dispatch: inner: logged in" err)" = 1 &&
	dispatch cancel "$job" &&
	test_expect_code 1 dispatch top -n 1 "$job" 2>err &&
	test_grep "job .t7420a.* is CANCELLED: dispatch top shows running jobs" err
'

test_expect_success 'hosts show --health on a plain host: GPU health from nvidia-smi, XID lines where readable' '
	fake_smi inner "$TEST_SRCDIR/tests/unit/data/nvidia-smi/a100-health.query" all &&
	dispatch hosts show --health inner >out &&
	test_grep "^00000000:07:00.0  *0  *-  *No  *No  *-  *ok$" out &&
	test_grep "^00000000:0F:00.0  *2  *-  *Yes  *No  *-  *unhealthy$" out &&
	dispatch --json hosts show --health inner >j &&
	test "$(jq_ "[g[\"healthy\"] for g in d[\"health\"][\"gpus\"]]" j)" = "[True, False]" &&
	test "$(jq_ "d[\"health\"][\"gpus\"][1][\"remapped_rows.pending\"]" j)" = Yes &&
	test "$(jq_ "d[\"health\"][\"gpus\"][0][\"retired_pages.pending\"]" j)" = None &&
	dispatch run -H inner -- "if [ -n \"\$(journalctl -k -q --no-pager -o short 2>/dev/null)\" ]; then echo journalctl; elif [ -n \"\$(dmesg 2>/dev/null)\" ]; then echo dmesg; else echo unavailable; fi" >want &&
	test "$(jq_ "d[\"health\"][\"xid_source\"]" j)" = "$(cat want)" &&
	if [ "$(cat want)" = unavailable ]; then
		test_grep "^XID errors: unavailable" out
	else
		test_grep "^XID errors ($(cat want)): [0-9]* line" out
	fi
'

test_expect_success 'hosts show --health without nvidia-smi: said so' '
	fake_gpus_off inner &&
	dispatch hosts show --health inner >out &&
	test_grep "^inner: no nvidia-smi on the host: no GPU health$" out &&
	dispatch --json hosts show --health inner >j &&
	test "$(jq_ "d[\"health\"][\"nvidia_smi\"]" j)" = False
'

test_done
