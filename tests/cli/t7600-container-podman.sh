#!/bin/bash
# t7600: container jobs on a plain host with real rootless podman (box1 of
# tests/testbed: container_runtime: podman, the test image as
# DISPATCH_TESTBED_PODMAN_IMAGE): the code is at the same path inside, the workdir
# and DISPATCH_* variables are right, the image's os-release is logged, exit 7 comes
# back as 7, cancel leaves no container (podman ps -a empty), --json of submit,
# status and jobs names image and runtime; the checks before submitting: an image
# that is not there, a runtime that is not installed (exit 4), --module with an
# image (exit 2), --no-container.
. "$(dirname "$0")/lib.sh"

testbed_up
[ -n "${DISPATCH_TESTBED_PODMAN_IMAGE:-}" ] ||
	fail_rest "the test bed exports no DISPATCH_TESTBED_PODMAN_IMAGE (podman on box1)"
grep -q "container_runtime: podman" "$DISPATCH_INVENTORY" ||
	fail_rest "the test bed's inventory gives box1 no container_runtime: podman"
IMG=$DISPATCH_TESTBED_PODMAN_IMAGE
export DISPATCH_STATE_DIR="$TRASH/state"
CL=$DISPATCH_TESTBED_DIR/cluster

# wait_end JOB: until the job ends (dispatch wait, bounded), then its status in st.json.
wait_end() {
	dispatch wait --timeout 60 "$1" >/dev/null
	[ $? -le 1 ] && dispatch --json status "$1" >st.json
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]])' st.json "$1"; }
jfield() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d := d[k] for k in sys.argv[2:]]; print(d)' "$@"; }
# the test user's containers on box1, as its jobs see podman
containers() { dispatch run -H box1 -- podman ps -a --format '{{.Names}}'; }

git init -q repo && (
	cd repo && echo 'echo "code=$PWD"; cat marker.txt' >run.sh && echo marker-v1 >marker.txt &&
	git add . && git -c user.email=t@t -c user.name=t commit -qm v1
)

test_expect_success 'the code runs at the same path inside the image, with the job'"'"'s variables' '
	code=$CL/work/code-$$ &&
	dispatch --json submit-packed -H box1 -J ctr --repo repo --ref HEAD --extract-to "$code" \
		--container-image "$IMG" -- \
		"sh run.sh; echo rank=\$DISPATCH_NODE_RANK nnodes=\$DISPATCH_NNODES id=\$DISPATCH_JOB_ID; test -e /run/.containerenv && echo inside; grep -h ^ID= /etc/os-release" \
		>sub.json &&
	job=$(jfield sub.json job) && log=$(jfield sub.json log) &&
	wait_end "$job" && test "$(field state)" = COMPLETED &&
	id=${job%@box1} &&
	test_grep "^code=$code\$" "$log" && test_grep "^marker-v1\$" "$log" &&
	test_grep "^rank=0 nnodes=1 id=$id\$" "$log" &&
	test_grep "^inside\$" "$log" &&
	test_grep "^ID=debian\$" "$log" &&
	test_grep "^dispatch: .* runs in $IMG: Debian GNU/Linux 12 (bookworm)" "$log" &&
	test -f "$code/marker.txt" &&
	test "$(stat -c %U "$code/marker.txt")" = "$DISPATCH_TESTBED_USER"
'

test_expect_success '--json of submit, status and jobs names the runtime and the image' '
	test "$(jfield sub.json container runtime)" = podman &&
	test "$(jfield sub.json container image)" = "$IMG" &&
	python3 -c "import json,sys; c=json.load(open(\"st.json\"))[\"jobs\"][0][\"container\"]; sys.exit(c != {\"runtime\": \"podman\", \"image\": sys.argv[1]})" "$IMG" &&
	dispatch --json jobs --no-refresh >jobs.json &&
	python3 -c "import json,sys; j=json.load(open(\"jobs.json\"))[\"jobs\"][0]; sys.exit(j[\"container\"] != {\"runtime\": \"podman\", \"image\": sys.argv[1]})" "$IMG"
'

test_expect_success '--container-workdir is where the command runs; outputs belong to the user' '
	wd=$CL/work/wd-$$ && mkdir -p "$wd" && chown "$DISPATCH_TESTBED_USER" "$wd" &&
	job=$(dispatch submit -H box1 --container-image "$IMG" --container-workdir "$wd" -- \
		"pwd; echo out >made.txt") &&
	wait_end "$job" && test "$(field state)" = COMPLETED &&
	test_grep "^$wd\$" "$CL/log/${job%@box1}.out" &&
	test "$(stat -c %U "$wd/made.txt")" = "$DISPATCH_TESTBED_USER"
'

test_expect_success 'the example training job runs in the image' '
	dispatch --json submit-packed -H box1 --repo "$TEST_SRCDIR/examples/train" --dirty \
		--container-image "$IMG" -- python3 train.py --steps 20 --log-every 10 >sub.json &&
	job=$(jfield sub.json job) && log=$(jfield sub.json log) &&
	wait_end "$job" && test "$(field state)" = COMPLETED &&
	test_grep "^node 0/1 on .*: job ${job%@box1}, master localhost:" "$log" &&
	test_grep "^world 2 (1 nodes x 2), gloo on " "$log" &&
	test "$(grep -c "^node 0 rank [01]: done on .*, 289 parameters, checksum [0-9a-f]*\$" "$log")" = 2 &&
	test "$(sed -n "s/.* checksum \([0-9a-f]*\)\$/\1/p" "$log" | sort -u | wc -l)" = 1 &&
	test_grep "^node 0: done\$" "$log" &&
	test_grep "runs in $IMG: Debian" "$log"
'

test_expect_success 'exit 7 inside the image comes back as 7' '
	job=$(dispatch submit -H box1 --container-image "$IMG" -- "exit 7") &&
	wait_end "$job" &&
	test "$(field state)" = FAILED && test "$(field exit_code)" = 7
'

test_expect_success 'cancel stops the job and removes its container' '
	job=$(dispatch submit -H box1 -J ctrcancel --container-image "$IMG" -- "sleep 32$$; echo not-reached") &&
	for i in $(seq 1 100); do containers >names && grep -q "^dispatch-${job%@box1}\$" names && break; sleep 0.2; done &&
	test_grep "^dispatch-${job%@box1}\$" names &&
	dispatch cancel "$job" >out && test_grep "cancelled" out &&
	wait_end "$job" && test "$(field state)" = CANCELLED &&
	containers >names && test_must_be_empty names &&
	! grep -q not-reached "$CL/log/${job%@box1}.out"
'

test_expect_success 'an image that is not on the host: the exact message, exit 4, nothing submitted' '
	test_expect_code 4 dispatch submit -H box1 --container-image localhost/no-such-image:1 -- true 2>err &&
	test_grep "^dispatch: box1: image '"'"'localhost/no-such-image:1'"'"' not found; pull or load it there first\$" err &&
	test "$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select count(*) from jobs where container_image = \"localhost/no-such-image:1\"")" = 0
'

# box2 with apptainer (not installed: Debian packages none) and box1 with a default image: a test
# inventory of our own, so that the test bed's host count stays.
cp "$DISPATCH_INVENTORY" inv.yaml &&
printf '  appbox:\n    ssh: box2\n    cluster: testbed\n    container_runtime: apptainer\n' >>inv.yaml &&
printf '  podbox:\n    ssh: box1\n    cluster: testbed\n    container_runtime: podman\n    container_image: %s\n' \
	"$IMG" >>inv.yaml &&
export DISPATCH_INVENTORY=$PWD/inv.yaml

test_expect_success 'a runtime that is not installed: exit 4, named with the inventory key' '
	test_expect_code 4 dispatch submit -H appbox --container-image /images/x.sif -- true 2>err &&
	test_grep "^dispatch: appbox: apptainer not found (container_runtime: apptainer)\$" err
'

test_expect_success 'the host'"'"'s default image; --no-container runs on the host; --module is refused' '
	job=$(dispatch submit -H podbox -- "test -e /run/.containerenv && echo in-image") &&
	wait_end "$job" && test "$(field state)" = COMPLETED &&
	test_grep "^in-image\$" "$CL/log/${job%@podbox}.out" &&
	job=$(dispatch submit -H podbox --no-container -- "test -e /run/.containerenv || echo on-host") &&
	wait_end "$job" && test "$(field state)" = COMPLETED &&
	test_grep "^on-host\$" "$CL/log/${job%@podbox}.out" &&
	test_expect_code 2 dispatch submit -H podbox --module cuda -- true 2>err &&
	test_grep "^dispatch: --module '"'"'cuda'"'"' and the container image '"'"'$IMG'"'"' exclude each other" err
'

test_done
