#!/bin/bash
# t7440: hosts show --health. On the test cluster: node2 drained for a moment (as
# root, with a '|' in the reason; resumed at once and at exit): its state, when, by
# whom and the whole reason, beside its GPUs, in text and --json. On a plain host
# (inner, whose fake nvidia-smi no other test sets) with the stand-in nvidia-smi
# replaying a100-health.query: a GPU with uncorrected ECC errors and a pending row
# remap is unhealthy, the other ok; the kernel log's XID source is the one this user
# can read (journalctl -k, dmesg, else unavailable); without nvidia-smi, said so.
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

test_expect_success 'a plain host: GPU health from nvidia-smi, XID lines where readable' '
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

test_expect_success 'no nvidia-smi on the plain host: said so' '
	fake_gpus_off inner &&
	dispatch hosts show --health inner >out &&
	test_grep "^inner: no nvidia-smi on the host: no GPU health$" out &&
	dispatch --json hosts show --health inner >j &&
	test "$(jq_ "d[\"health\"][\"nvidia_smi\"]" j)" = False
'

test_done
