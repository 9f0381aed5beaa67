#!/bin/bash
# dispatch hostlist: --expand and --fold, --json, exit codes and messages.
. "$TEST_SRCDIR/tests/cli/lib.sh"

test_expect_success '--expand prints every host of every EXPR, one a line, in order' '
	dispatch hostlist --expand "rack[1-2]-n[01-02]" "login,gpu[08-10]" >out &&
	printf "%s\n" rack1-n01 rack1-n02 rack2-n01 rack2-n02 login gpu08 gpu09 gpu10 >want &&
	test_cmp want out
'

test_expect_success '--expand keeps duplicates and the order written' '
	dispatch hostlist --expand "n[3,1-2,2]" n1 >out &&
	printf "%s\n" n3 n1 n2 n2 n1 >want &&
	test_cmp want out
'

test_expect_success '--expand of an empty list or (null) prints nothing' '
	dispatch hostlist --expand "" "(null)" >out &&
	test_must_be_empty out
'

test_expect_success '--expand --json gives {"hosts": [...]}' '
	dispatch hostlist --expand --json "n[1-2]" x >out &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); assert d == {\"hosts\": [\"n1\", \"n2\", \"x\"]}, d"
'

test_expect_success '--json before the command works too, and an empty list is []' '
	dispatch --json hostlist --expand "" >out &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); assert d == {\"hosts\": []}, d"
'

test_expect_success '--fold folds all hosts of all arguments into one expression' '
	dispatch hostlist --fold n1 n2 "n3,n10" "login" "n[11-12]" >out &&
	echo "n[1-3,10],login,n[11-12]" >want &&
	test_cmp want out
'

test_expect_success '--fold keeps the padding, the order and duplicates (as scontrol)' '
	dispatch hostlist --fold n08,n09,n10 >out &&
	echo "n[08-10]" >want &&
	test_cmp want out &&
	dispatch hostlist --fold h003 h002 h001 h002 >out &&
	echo "h[003,002,001-002]" >want &&
	test_cmp want out
'

test_expect_success '--fold --json gives {"hostlist": "..."}' '
	dispatch hostlist --fold --json n1 n2 >out &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); assert d == {\"hostlist\": \"n[1-2]\"}, d"
'

test_expect_success '--fold of no hosts prints an empty line' '
	dispatch hostlist --fold "" >out &&
	echo >want &&
	test_cmp want out
'

test_expect_success 'expand then fold gives the same hosts back' '
	dispatch hostlist --expand "a[1-3]b[01-02],x,n[9-11],n[1-2]" >hosts &&
	dispatch hostlist --fold $(cat hosts) >folded &&
	dispatch hostlist --expand "$(cat folded)" >again &&
	test_cmp hosts again
'

test_expect_success 'an EXPR that starts with a dash goes after --' '
	dispatch hostlist --expand -- "-n[1-2]" >out &&
	printf "%s\n" -n1 -n2 >want &&
	test_cmp want out
'

test_expect_success 'neither --expand nor --fold: exit 2 with a clear message' '
	test_expect_code 2 dispatch hostlist "n[1-2]" >out 2>err &&
	test_must_be_empty out &&
	test_grep "exactly one of --expand and --fold" err
'

test_expect_success 'both --expand and --fold: exit 2' '
	test_expect_code 2 dispatch hostlist --expand --fold "n[1-2]" >out 2>err &&
	test_must_be_empty out &&
	test_grep "exactly one of --expand and --fold" err
'

test_expect_success 'no EXPR: exit 2' '
	test_expect_code 2 dispatch hostlist --expand 2>err &&
	test_grep "needs at least 1 argument" err
'

for bad in 'n[1-2' 'n1-2]' 'n[5-3]' 'n[a-b]' 'n[]' 'n[1,,2]' 'n[1[2]]'; do
	test_expect_success "malformed '$bad': exit 2, the expression and column named, nothing on stdout" "
		test_expect_code 2 dispatch hostlist --expand ok1 '$bad' >out 2>err &&
		test_must_be_empty out &&
		test_grep -F \"invalid hostlist '$bad': \" err &&
		test_grep 'column [0-9]' err &&
		test_expect_code 2 dispatch hostlist --fold ok1 '$bad' >out 2>err &&
		test_must_be_empty out &&
		test_expect_code 2 dispatch --json hostlist --expand '$bad' >out 2>err &&
		test_must_be_empty out
	"
done

test_expect_success 'a backwards range suggests the right one' '
	test_expect_code 2 dispatch hostlist --expand "n[10-2]" 2>err &&
	test_grep -F "did you mean '"'"'2-10'"'"'?" err
'

test_expect_success 'over a million hosts is refused, quickly and with the limit named' '
	test_expect_code 2 dispatch hostlist --expand "n[1-1000000]x[1-2]" >out 2>err &&
	test_must_be_empty out &&
	test_grep "more than 1000000 hosts" err &&
	test_expect_code 2 dispatch hostlist --fold "n[0-99999999999]" 2>err &&
	test_grep "more than 1000000 hosts" err
'

test_expect_success 'a million hosts is fine' '
	dispatch hostlist --expand "n[1-1000000]" >out &&
	test "$(wc -l <out)" -eq 1000000 &&
	test "$(tail -n 1 out)" = n1000000
'

test_done
