#!/bin/bash
# t7440: hosts show --health on the test cluster: node2 drained for a moment (as
# root, with a '|' in the reason; resumed at once and at exit): its state, when, by
# whom and the whole reason, beside its GPUs, in text and --json. (A plain host's
# --health is in t7420, which owns the fake nvidia-smi of host inner.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"

tb_up
REASON='t7440 xid 79: fell off the bus | ticket 42'
resume() { scontrol update nodename=node2 state=resume >/dev/null 2>&1; }
cleanup_t7440() {
	resume
	tb_cleanup
}
trap cleanup_t7440 EXIT
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }

test_expect_success 'a drained node: who drained it, when and why, beside its GPUs' '
	scontrol update nodename=node2 state=drain reason="$REASON" &&
	dispatch hosts show --health hpc >out &&
	dispatch --json hosts show --health hpc >j &&
	resume &&
	test_grep "^NODE  *STATE  *GPUS USED/TOTAL  *SINCE  *BY  *REASON$" out &&
	test_grep "^node2  *drain[a-z]*  *a100 [0-2]/2  *20[0-9-]*T[0-9:]*  *root  *$REASON$" out &&
	test_grep "^node1  *[a-z]*  *a100 [0-2]/2  *-  *-  *-$" out &&
	test "$(jq_ "[n[\"reason\"] for n in d[\"health\"][\"nodes\"] if n[\"node\"] == \"node2\"][0]" j)" = "$REASON" &&
	test "$(jq_ "[n[\"by\"] for n in d[\"health\"][\"nodes\"] if n[\"node\"] == \"node2\"][0]" j)" = root &&
	test "$(jq_ "[n[\"gpus_total\"] for n in d[\"health\"][\"nodes\"]]" j)" = "[2, 2]" &&
	test "$(jq_ "len(d[\"health\"][\"nodes\"])" j)" = 2
'

test_done
