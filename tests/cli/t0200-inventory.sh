#!/bin/bash
# Loading the inventory through the binary: where it is looked for, and errors that
# name file:line:col with exit status 2.
. "$TEST_SRCDIR/tests/cli/lib.sh"

# inv FILE HOST: a valid inventory whose only host is HOST
inv() {
	mkdir -p "$(dirname "$1")"
	printf 'clusters:\n  c: {root: /r, work: /w}\nhosts:\n  %s: {cluster: c}\n' "$2" >"$1"
}

test_expect_success 'the reference inventory loads' '
	dispatch -i "$TEST_SRCDIR/tests/unit/data/reference-inventory.yaml" hosts --names >out &&
	test_grep -x workstation out &&
	test_grep -x hpc-limited out
'

test_expect_success 'the example inventory loads' '
	dispatch -i "$TEST_SRCDIR/examples/inventory.yaml" hosts --names >out &&
	test_grep -x hpc out
'

test_expect_success 'lookup: the XDG default under ~/.config' '
	inv "$HOME/.config/dispatch/inventory.yaml" from-home &&
	dispatch hosts --names >out &&
	test_grep -x from-home out
'

test_expect_success 'lookup: $XDG_CONFIG_HOME wins over ~/.config' '
	inv "$TRASH/xdg/dispatch/inventory.yaml" from-xdg &&
	XDG_CONFIG_HOME=$TRASH/xdg dispatch hosts --names >out &&
	test_grep -x from-xdg out &&
	! grep from-home out
'

test_expect_success 'lookup: $DISPATCH_INVENTORY wins over XDG' '
	inv "$TRASH/env.yaml" from-env &&
	DISPATCH_INVENTORY=$TRASH/env.yaml XDG_CONFIG_HOME=$TRASH/xdg dispatch hosts --names >out &&
	test_grep -x from-env out &&
	! grep from-xdg out
'

test_expect_success 'lookup: -i wins over $DISPATCH_INVENTORY, before or after the command' '
	inv "$TRASH/opt.yaml" from-opt &&
	DISPATCH_INVENTORY=$TRASH/env.yaml dispatch -i "$TRASH/opt.yaml" hosts --names >out &&
	test_grep -x from-opt out &&
	DISPATCH_INVENTORY=$TRASH/env.yaml dispatch hosts --names -i "$TRASH/opt.yaml" >out &&
	test_grep -x from-opt out &&
	! grep from-env out
'

test_expect_success 'a missing $DISPATCH_INVENTORY is an error with the path' '
	test_expect_code 2 env DISPATCH_INVENTORY=$TRASH/nope.yaml "$DISPATCH" hosts 2>err &&
	test_grep "nope.yaml" err
'

test_expect_success 'no inventory at all: hosts is fine, solve is exit 2 and says how to make one' '
	rm -rf "$HOME/.config" &&
	dispatch hosts >out &&
	test_must_be_empty out &&
	test_expect_code 2 dispatch solve 2>err &&
	test_grep "no inventory" err
'

# bad NAME TEXT MESSAGE: loading TEXT fails with exit 2 and exactly "dispatch: MESSAGE"
bad() {
	printf "$2" >"$1" &&
	test_expect_code 2 dispatch -i "$1" hosts >out 2>err &&
	test_must_be_empty out &&
	echo "dispatch: $3" >want &&
	test_cmp want err
}

test_expect_success 'malformed YAML names the place' '
	printf "hosts: [\n" >m.yaml &&
	test_expect_code 2 dispatch -i m.yaml hosts 2>err &&
	test_grep "^dispatch: m.yaml:2:1: malformed YAML" err
'

test_expect_success 'wrong type: file:line:col, key path, the value' '
	bad t.yaml "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  gpu1:\n    cluster: c\n    chips:\n      h100: four\n" \
		"t.yaml:7:13: hosts.gpu1.chips.h100: expected a whole number > 0, got '"'"'four'"'"'"
'

test_expect_success 'unknown key suggests the close one' '
	bad t.yaml "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  h:\n    type: slurm\n    cluster: c\n    partiton: [gpu]\n" \
		"t.yaml:7:5: unknown key '"'"'partiton'"'"' in hosts.h (did you mean '"'"'partitions'"'"'?)"
'

test_expect_success 'unknown chip suggests the close one' '
	bad t.yaml "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  h:\n    cluster: c\n    chips: {rtx4090: 2}\n" \
		"t.yaml:6:13: hosts.h.chips: unknown chip '"'"'rtx4090'"'"' (did you mean '"'"'rtx-4090'"'"'?)"
'

test_expect_success 'a host pointing at a missing cluster' '
	bad t.yaml "clusters:\n  hpc: {root: /r, work: /w}\nhosts:\n  h: {cluster: hcp}\n" \
		"t.yaml:4:16: hosts.h.cluster: no cluster '"'"'hcp'"'"' (did you mean '"'"'hpc'"'"'?)"
'

test_expect_success 'a priority entry naming no host' '
	bad t.yaml "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  box1: {cluster: c}\npriority:\n  - box2\n" \
		"t.yaml:6:5: priority[0]: no host '"'"'box2'"'"' in hosts (did you mean '"'"'box1'"'"'?)"
'

test_expect_success 'mount and proxy both set' '
	bad t.yaml "mount: /mnt/x\nproxy: me@box:/srv\n" \
		"t.yaml:2:8: '"'"'mount'"'"' and '"'"'proxy'"'"' are both set: they are mutually exclusive (keep one)"
'

test_expect_success 'a slurm key on a plain host' '
	bad t.yaml "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  h:\n    cluster: c\n    qos: high\n" \
		"t.yaml:6:5: hosts.h.qos: only for slurm hosts (add '"'"'type: slurm'"'"', or remove it)"
'

test_expect_success 'a bad mem size' '
	bad t.yaml "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  h:\n    type: slurm\n    cluster: c\n    mem: lots\n" \
		"t.yaml:7:10: hosts.h.mem: expected a size as sbatch --mem takes it (a number with K, M, G or T, e.g. 64G), got '"'"'lots'"'"'"
'

test_expect_success 'an inventory that is a directory is an error, not a crash' '
	mkdir d.yaml &&
	test_expect_code 2 dispatch -i d.yaml hosts 2>err &&
	test_grep "d.yaml" err
'

test_done
