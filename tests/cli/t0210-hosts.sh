#!/bin/bash
# dispatch hosts: inventory hosts, then ssh config aliases (Include, patterns, -F).
. "$TEST_SRCDIR/tests/cli/lib.sh"

# A private copy: the file holds a JuiceFS password (a readable one is warned about).
cp "$TEST_SRCDIR/tests/unit/data/reference-inventory.yaml" ref.yaml && chmod 600 ref.yaml
REF=$TRASH/ref.yaml

test_expect_success 'hosts lists every inventory host with type, ssh, cluster, resources' '
	dispatch -i "$REF" hosts >out &&
	test_grep "^NAME  *TYPE  *SSH  *CLUSTER  *RESOURCES$" out &&
	test_grep "^workstation  *plain  *gpu-workstation  *local  *4 h100$" out &&
	test_grep "^cpu-box  *plain  *cpu-box  *local  *CPU only$" out &&
	test_grep "^hpc-login  *slurm  *hpc  *hpc  *partitions gpu,cpu; cpu cpu$" out &&
	test_grep "^hpc-limited .*at most 8 h100, 16 a100-sxm4-80gb$" out &&
	test $(wc -l <out) = 8
'

test_expect_success 'default partitions are starred' '
	dispatch -i "$TEST_SRCDIR/examples/inventory.yaml" hosts >out &&
	test_grep "^hpc .*partitions gpu\*,cpu" out
'

test_expect_success 'ssh config aliases follow, without patterns or inventory names' '
	mkdir -p "$HOME/.ssh/conf.d" &&
	cat >"$HOME/.ssh/config" <<-\EOT &&
	# a comment
	Host gpu-workstation alpha
	    HostName 10.0.0.1
	Host *.example.org !beta bet?
	    User me
	Include conf.d/*.conf
	Host=gamma
	host alpha "delta"
	Match host zeta
	    User z
	EOT
	printf "Host fromdir\n" >"$HOME/.ssh/conf.d/one.conf" &&
	printf "Host workstation\n" >"$HOME/.ssh/conf.d/two.conf" &&
	dispatch -i "$REF" hosts --names >out &&
	cat >want <<-\EOT &&
	workstation
	devbox
	cpu-box
	hpc-cpu
	hpc-login
	hpc-limited
	cloud
	alpha
	fromdir
	gamma
	delta
	EOT
	test_cmp want out
'

test_expect_success 'aliases in the table are marked as from the ssh config' '
	dispatch -i "$REF" hosts >out &&
	test_grep "^alpha  *-  *alpha  *-  *(ssh config)$" out
'

test_expect_success 'no inventory: only the aliases' '
	dispatch hosts --names >out &&
	printf "gpu-workstation\nalpha\nfromdir\nworkstation\ngamma\ndelta\n" >want &&
	test_cmp want out
'

test_expect_success '-F and $DISPATCH_SSH_CONFIG pick another file; -F wins' '
	printf "Host one\n" >f1 && printf "Host two\n" >f2 &&
	DISPATCH_SSH_CONFIG=f2 dispatch hosts --names >out &&
	echo two >want && test_cmp want out &&
	DISPATCH_SSH_CONFIG=f2 dispatch -F f1 hosts --names >out &&
	echo one >want && test_cmp want out
'

test_expect_success 'a missing explicit ssh config is exit 2; a missing default is fine' '
	test_expect_code 2 dispatch -F nope.conf hosts 2>err &&
	test_grep "nope.conf" err &&
	rm -rf "$HOME/.ssh" &&
	dispatch hosts >out &&
	test_must_be_empty out
'

test_expect_success 'an Include loop stops with an error, not a hang' '
	printf "Host x\nInclude %s/loop.conf\n" "$TRASH" >loop.conf &&
	test_expect_code 2 dispatch -F loop.conf hosts 2>err &&
	test_grep "too many nested includes" err
'

test_expect_success '--json: one document with every host and its source' '
	printf "Host extra\n" >cfg &&
	dispatch -i "$REF" -F cfg hosts --json >out &&
	python3 - out <<-\EOT
	import json, sys
	doc = json.load(open(sys.argv[1]))
	hosts = {h["name"]: h for h in doc["hosts"]}
	assert [h["name"] for h in doc["hosts"]][-1] == "extra"
	ws = hosts["workstation"]
	assert ws == {"name": "workstation", "type": "plain", "ssh": "gpu-workstation",
	              "cluster": "local", "chips": {"h100": 4}, "partitions": [],
	              "cpu_partitions": [], "uv_groups": ["cuda12"], "annotations": {},
	              "container_runtime": "none", "container_image": None,
	              "source": "inventory"}, ws
	assert hosts["hpc-login"]["chips"] is None
	assert hosts["hpc-login"]["partitions"][0] == {"name": "gpu", "default": False, "constraint": None}
	assert hosts["hpc-limited"]["chips"] == {"h100": 8, "a100-sxm4-80gb": 16}
	assert hosts["extra"]["source"] == "ssh_config" and hosts["extra"]["type"] is None
	EOT
'

test_expect_success 'tpu and volcano hosts load without the keys the reference defaults; listed as missing' '
	cat >foreign.yaml <<-\EOF &&
	clusters:
	  c1: {root: /r, work: /w}
	hosts:
	  vol1: {type: volcano, cluster: c1, image: img}
	  tpu1: {type: tpu, cluster: c1}
	EOF
	dispatch -i foreign.yaml hosts >out &&
	test_grep "^vol1  *volcano .*not driven by dispatch (Volcano, kubectl); missing pvc_name$" out &&
	test_grep "^tpu1  *tpu .*; missing zone, accelerator_type, version$" out &&
	dispatch -i foreign.yaml --json hosts >out.json &&
	python3 -c "import json; h = {x[\"name\"]: x for x in json.load(open(\"out.json\"))[\"hosts\"]}; assert h[\"vol1\"][\"missing\"] == [\"pvc_name\"], h"
'

test_expect_success 'hosts takes no operands but show HOST and discover HOST' '
	test_expect_code 2 dispatch hosts box 2>err &&
	test_grep "'"'"'hosts box'"'"' is not a hosts command" err &&
	test_expect_code 2 dispatch hosts shwo box 2>err &&
	test_grep "did you mean '"'"'show'"'"'" err &&
	test_expect_code 2 dispatch hosts show 2>err &&
	test_grep "needs one HOST" err &&
	test_expect_code 2 dispatch hosts discover a b 2>err &&
	test_grep "too many arguments" err &&
	test_expect_code 2 dispatch hosts show a --names 2>err &&
	test_grep "names does not go with '"'"'hosts show'"'"'" err &&
	test_expect_code 2 dispatch hosts discover a --names 2>err &&
	test_grep "'"'"'hosts discover'"'"' takes no options" err
'

test_done
