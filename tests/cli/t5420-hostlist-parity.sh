#!/bin/bash
# t5420: dispatch hostlist against the real scontrol of the test cluster's login
# node (through dispatch run -H hpc): every expression of
# tests/unit/data/hostlist/expand-cases.txt plus generated ranges (padding, width
# changes, several brackets) expanded both ways, every line of fold-cases.txt
# folded both ways (scontrol show hostlist), compared record by record.
# Skips unless root (testbed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"
HL=$TEST_SRCDIR/tests/unit/data/hostlist

tb_up

# Generated: ranges across a change of width, with and without padding.
for a in 0 7 8 9 98 99 100; do
	for w in 1 2 3; do
		b=$((a + 3))
		printf 'n[%0*d-%d]\n' "$w" "$a" "$b"
		printf 'gpu[%0*d-%0*d],x%d\n' "$w" "$a" "$w" "$b" "$a"
	done
done >generated.txt
cat "$HL/expand-cases.txt" generated.txt >expand.txt

# records SUBCOMMAND: "> EXPR" then the output, for every line of stdin
remote_records() {
	dispatch run -H hpc -- 'while IFS= read -r e; do echo "> $e"; scontrol show '"$1"' "$e"; done'
}
local_records() {
	while IFS= read -r e; do
		echo "> $e"
		dispatch hostlist "$1" "$e" || echo "(dispatch failed)"
	done
}

test_expect_success 'expand: as scontrol show hostnames on the cluster' '
	test "$(wc -l <expand.txt)" -gt 60 &&
	remote_records hostnames <expand.txt >want 2>err &&
	test_must_be_empty err &&
	local_records --expand <expand.txt >got &&
	test_cmp want got
'

test_expect_success 'fold: as scontrol show hostlist on the cluster' '
	remote_records hostlist <"$HL/fold-cases.txt" >want 2>err &&
	test_must_be_empty err &&
	local_records --fold <"$HL/fold-cases.txt" >got &&
	test_cmp want got
'

test_done
