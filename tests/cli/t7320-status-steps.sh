#!/bin/bash
# t7320: dispatch status --steps on the testbed cluster (hpc): a 2-node job shows
# its own row (main), its batch step and one step per srun (srun --overlap inside the
# job's per-node step), with a non-zero MaxRSS for the step that allocated 200 MiB
# on each node (sampled every second: --acctg-freq=1); --json; a plain-host job is
# an error (exit 2); an id sacct does not know exits 4. Names start with js$$.
. "$(dirname "$0")/lib.sh"

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
N=js$$

test_expect_success 'a 2-node job with two srun steps runs to the end' '
	job=$(dispatch submit -H hpc -J "$N" -p cpu --nodes 2 --ntasks-per-node 1 -- \
		"if [ \"\$DISPATCH_NODE_RANK\" = 0 ]; then
			srun --overlap --acctg-freq=1 -N2 -n2 python3 -c \"b = bytearray(200 << 20); import time; time.sleep(3)\" &&
			srun --overlap -N1 -n1 hostname
		fi") &&
	echo "$job" >job &&
	dispatch wait --interval 1 "$job" >/dev/null
'
job=$(cat job 2>/dev/null)
id=${job%@hpc}

# slurmdbd writes a job's own record after its steps' when it is loaded: until then
# sacct shows a placeholder named "allocation". Wait (bounded) for the real one.
test_expect_success 'accounting has the job'"'"'s own record' '
	for i in $(seq 1 60); do
		dispatch status --steps "$job" >acct 2>&1 && grep -q "^$id@hpc  *$N " acct && break
		sleep 0.5
	done &&
	test_grep "^$id@hpc  *$N " acct
'

test_expect_success 'status --steps: main, batch, and a step per srun with MaxRSS' '
	dispatch status --steps "$job" >out &&
	test_grep "^STEP  *NAME  *STATE  *EXIT  *ELAPSED  *MAXRSS  *MAXVMSIZE  *AVECPU  *NODES  *TRES$" out &&
	test_grep "^$id@hpc  *$N  *COMPLETED  *0 .* node\[1-2\]" out &&
	test_grep "^$id.batch@hpc  *batch  *COMPLETED  *0 " out &&
	test_grep "^$id.1@hpc  *python3  *COMPLETED  *0  *[0-9:]*  *[1-9][0-9]*K  .*node\[1-2\]  .*mem=" out &&
	test_grep "^$id.2@hpc  *hostname  *COMPLETED  *0 .* node1 " out
'

test_expect_success 'status --steps --json: main is the row without a step suffix' '
	dispatch --json status --steps "$id" >s.json &&
	test "$(jget s.json "d[\"jobs\"][0][\"job\"], d[\"jobs\"][0][\"main\"][\"id\"], d[\"jobs\"][0][\"main\"][\"name\"], d[\"jobs\"][0][\"main\"][\"state\"]")" = "$job $id $N COMPLETED" &&
	test "$(jget s.json "*[s[\"step\"] for s in d[\"jobs\"][0][\"steps\"] if s[\"step\"] != \"extern\"]")" = "batch 0 1 2" &&
	test "$(jget s.json "[s for s in d[\"jobs\"][0][\"steps\"] if s[\"step\"] == \"1\"][0][\"max_rss_bytes\"] > 100 * 2**20")" = True &&
	test "$(jget s.json "[s for s in d[\"jobs\"][0][\"steps\"] if s[\"step\"] == \"1\"][0][\"nodes\"]")" = "node[1-2]"
'

test_expect_success 'a plain-host job has no steps (exit 2); an unknown id exits 4' '
	test_expect_code 2 dispatch status --steps 1@box1 2>err && test_grep "no SLURM steps" err &&
	test_expect_code 4 dispatch status --steps 99999999@hpc 2>err && test_grep "not found" err
'

test_done
