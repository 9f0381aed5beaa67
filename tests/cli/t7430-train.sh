#!/bin/bash
# t7430: the main job's training (examples/train, as examples/main-job submits it) on
# the test cluster: submit-packed with examples/train/job.yaml, dispatch top --procs
# while it runs (its samples, until they show python3 processes on both nodes:
# bounded, 120 s), wait (COMPLETED), and
# its output: four DDP ranks (two workers on each of the two nodes) over gloo, the
# loss going down, and one checksum of the parameters on every rank. Skips where
# the cluster's nodes have no PyTorch (the newer releases' chroots). One CPU per node
# (the job file asks for two: all of a test node's) leaves room for the tests that
# run beside it; the two workers share it.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
dispatch run -H hpc -- python3 -c "'import torch.distributed'" >/dev/null 2>&1 ||
	skip_rest "no PyTorch on the test cluster's nodes (tests/install-deps installs python3-torch on the host)"
# With several test bed instances up, /etc/hosts names the first one's node1: give
# torch this instance's address (the main job, on the default instance, needs none).
master=()
if [ "$(getent hosts node1 | cut -d ' ' -f 1)" != "$DISPATCH_TESTBED_NET.2.11" ]; then
	master=(--env "MASTER_ADDR=$DISPATCH_TESTBED_NET.2.11")
fi

# python_nodes FILE: the nodes where a sample of dispatch --json top --procs (whole
# lines only: top may be writing the next) shows a python3 process of the job
python_nodes() {
	python3 -c '
import json, sys
nodes = set()
for l in open(sys.argv[1]):
    if not l.endswith("\n"):
        break
    for n in json.loads(l)["nodes"]:
        if n["processes"] and "python3" in [p["command"] for p in n["processes"]["without_gpu"]]:
            nodes.add(n["node"])
print(" ".join(sorted(nodes)))' "$1"
}

test_expect_success 'examples/train: 4 ranks on 2 nodes train, and end with the same parameters' '
	dispatch --json submit-packed -H hpc --repo "$TEST_SRCDIR/examples/train" \
		-f "$TEST_SRCDIR/examples/train/job.yaml" --cpus-per-task 1 "${master[@]}" >sub.json &&
	job=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"job\"])" sub.json) &&
	dispatch wait --until running --interval 1 --timeout 120 "$job" >/dev/null &&
	{ "$DISPATCH" --json top --procs --interval 1 -n 120 "$job" >top.json 2>top.err & } &&
	top=$! &&
	for _ in $(seq 240); do
		[ "$(python_nodes top.json)" = "node1 node2" ] && break
		kill -0 "$top" 2>/dev/null || break
		sleep 0.5
	done &&
	{ kill "$top" 2>/dev/null; wait "$top"; true; } &&
	test "$(python_nodes top.json)" = "node1 node2" &&
	dispatch wait --interval 2 --timeout 300 "$job" >out &&
	test_grep " COMPLETED exit 0 " out &&
	dispatch logs "$job" >log &&
	test_grep "^world 4 (2 nodes x 2), gloo on .*, 289 parameters$" log &&
	test "$(grep -c " rank [0-3]: done on node[12], 289 parameters, checksum [0-9a-f]*$" log)" = 4 &&
	test "$(sed -n "s/.* rank [0-9]: done on \(node[0-9]\), .*/\1/p" log | sort -u | tr "\n" " ")" = "node1 node2 " &&
	test "$(sed -n "s/.* checksum \([0-9a-f]*\)$/\1/p" log | sort -u | wc -l)" = 1 &&
	for r in 0 1 2 3; do
		first=$(sed -n "s/.* rank $r: step 1\/200 loss \([0-9.]*\)$/\1/p" log) &&
		last=$(sed -n "s/.* rank $r: step 200\/200 loss \([0-9.]*\)$/\1/p" log) &&
		python3 -c "import sys; sys.exit(not float(sys.argv[2]) < float(sys.argv[1]) / 10)" "$first" "$last" ||
		return 1
	done
'

test_done
