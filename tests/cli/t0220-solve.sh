#!/bin/bash
# dispatch solve: the chosen host, -v verdicts, --json, exit 1 when nothing fits,
# exit 2 for bad input.
. "$TEST_SRCDIR/tests/cli/lib.sh"

# A private copy: the file holds a JuiceFS password (a readable one is warned about).
cp "$TEST_SRCDIR/tests/unit/data/reference-inventory.yaml" ref.yaml && chmod 600 ref.yaml
export DISPATCH_INVENTORY=$TRASH/ref.yaml

test_expect_success 'a plain host in priority order' '
	dispatch solve --chip h100 --chips 4 >out &&
	cat >want <<-\EOT &&
	host:       workstation
	type:       plain
	ssh:        gpu-workstation
	cluster:    local
	chips:      4 h100
	EOT
	test_cmp want out
'

test_expect_success 'a SLURM host with partition and GRES when the box is too small' '
	dispatch solve --chip h100 --chips 8 >out &&
	cat >want <<-\EOT &&
	host:       hpc-cpu
	type:       slurm
	ssh:        hpc
	cluster:    hpc
	partition:  gpu
	chips:      8 h100 (gres gpu:h100_80gb:8)
	EOT
	test_cmp want out
'

test_expect_success 'a CPU job goes to the CPU-only host; --chips 0 is the same' '
	dispatch solve --cpu >out &&
	test_grep "^host: *cpu-box$" out &&
	test_grep "^chips: *none (a CPU job)$" out &&
	dispatch solve --chips 0 >out2 &&
	test_cmp out out2
'

test_expect_success '--forbid and --prefer (repeatable, comma-separated)' '
	dispatch solve --cpu --forbid local >out &&
	test_grep "^host: *hpc-cpu$" out &&
	test_grep "^partition: *cpu$" out &&
	dispatch solve --prefer hpc >out &&
	test_grep "^host: *hpc-cpu$" out &&
	{ dispatch solve --chip h100 --forbid local,hpc 2>err >out ||
	test $? = 1; } && test_must_be_empty out
'

test_expect_success '-v gives every verdict, the chosen one starred' '
	dispatch -v solve --chip h100 --chips 8 >out 2>err &&
	test_grep "^dispatch:   workstation: has 4 h100, needs 8$" err &&
	test_grep "^dispatch: \* hpc-cpu: fits: 8 h100 on partition gpu (gres h100_80gb)$" err &&
	test $(grep -c "^dispatch: " err) = 7
'

test_expect_success 'nothing fits: exit 1, a one-line summary, reasons with -v' '
	test_expect_code 1 dispatch solve --chip t4 >out 2>err &&
	test_must_be_empty out &&
	echo "dispatch: nothing fits 1 t4 on 7 hosts (-v says why for each)" >want &&
	test_cmp want err &&
	test_expect_code 1 dispatch -v solve --chip t4 2>err &&
	test_grep "hpc-login: no gres_mapping for t4 in the inventory" err &&
	test_grep "devbox: has no t4 (has 8 a100-sxm4-80gb)" err
'

test_expect_success 'the fallback host is flagged' '
	cat >fb.yaml <<-\EOT &&
	gres_mapping: {h100: h100}
	clusters: {c: {root: /r, work: /w}}
	hosts:
	  small: {type: slurm, cluster: c, chips: {h100: 4}}
	  big: {type: slurm, cluster: c, chips: {h100: 8}}
	EOT
	dispatch -i fb.yaml solve --chip h100 --chips 16 >out 2>err &&
	test_grep "^host: *big$" out &&
	test_grep "warning: nothing fits 16 h100; .big. has the most h100" err &&
	dispatch -i fb.yaml --json solve --chip h100 --chips 16 >out &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); assert d[\"fallback\"] is True and d[\"host\"] == \"big\""
'

test_expect_success '--json: the choice and every verdict' '
	dispatch --json solve --chip a100-sxm4-80gb --chips 16 >out &&
	python3 - out <<-\EOT
	import json, sys
	d = json.load(open(sys.argv[1]))
	want = {"host": "hpc-cpu", "type": "slurm", "ssh": "hpc", "cluster": "hpc",
	        "partition": "gpu", "constraint": None, "chip": "a100-sxm4-80gb",
	        "gres_type": "a100_80g", "chips": 16, "fallback": False}
	assert {k: d[k] for k in want} == want, d
	v = {x["host"]: x for x in d["considered"]}
	assert len(v) == 7
	assert v["devbox"] == {"host": "devbox", "fits": False,
	                       "reason": "has 8 a100-sxm4-80gb, needs 16"}, v["devbox"]
	EOT
'

test_expect_success '--json when nothing fits: host null, exit 1' '
	test_expect_code 1 dispatch --json solve --chip t4 >out 2>/dev/null &&
	python3 -c "import json; d=json.load(open(\"out\")); assert d[\"host\"] is None and len(d[\"considered\"]) == 7"
'

test_expect_success 'bad input is exit 2 with the reason' '
	test_expect_code 2 dispatch solve --chip a100 2>err &&
	test_grep "unknown chip .a100. (did you mean one of: a100-sxm4-80gb, a100-sxm4-40gb, a100-pcie-80gb, a100-pcie-40gb?)" err &&
	test_expect_code 2 dispatch solve --chips two 2>err &&
	test_grep "expected a whole number" err &&
	test_expect_code 2 dispatch solve --chips -1 2>err &&
	test_expect_code 2 dispatch solve --cpu --chip h100 2>err &&
	test_grep "drop --chip h100" err &&
	test_expect_code 2 dispatch solve --cpu --chips 2 2>err &&
	test_expect_code 2 dispatch solve --prefer hpc --forbid hpc 2>err &&
	test_grep "both preferred and forbidden" err &&
	test_expect_code 2 dispatch solve --forbid hcp 2>err &&
	test_grep "did you mean .hpc." err
'

test_expect_success 'a broken inventory is exit 2 before solving' '
	printf "hosts: {h: {cluster: x}}\n" >bad.yaml &&
	test_expect_code 2 dispatch -i bad.yaml solve 2>err &&
	test_grep "^dispatch: bad.yaml:1:22: hosts.h.cluster" err
'

test_expect_success 'an empty inventory: nothing fits, and it says so' '
	: >empty.yaml &&
	test_expect_code 1 dispatch -i empty.yaml solve 2>err &&
	test_grep "has no hosts" err
'

test_expect_success 'the completion offers the chip catalogue for --chip' '
	dispatch completion bash >c &&
	test_grep "a100-sxm4-80gb" c
'

test_done
