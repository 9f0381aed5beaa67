#!/bin/bash
# dispatch submit --dry-run: the generated scripts parse (bash -n) and pass shellcheck
# across a matrix of options; env values survive byte for byte; the bootstrap runs by
# hand outside SLURM (payload, exit status, rank, cleanup, TERM forwarding) and with a
# faked SLURM environment; --emit writes private files; bad input exits 2.
. "$TEST_SRCDIR/tests/cli/lib.sh"

cat >inv.yaml <<'EOF'
gres_mapping:
  h100: h100_80gb
clusters:
  hpc:
    root: /mnt/dispatch-test-jfs
    work: /scratch/w
    mount: "redis://:s3cret@redis:6379/0"
    cache_size: 100G
    cache_dir: /scratch/cache
  lab:
    root: /srv/lab
    work: /tmp/lab
hosts:
  hpc:
    type: slurm
    ssh: hpc-login
    cluster: hpc
    partitions:
      - name: gpu
        default: true
      - cpu
    cpu_partitions: [cpu]
    account: proj
    qos: normal
    exclude: [node001]
    uv_groups: [cuda12]
  hpc2:
    type: slurm
    cluster: lab
    partitions: [batch]
  hpc2-nologin:
    type: slurm
    cluster: lab
    partitions: [batch]
    login_shell: false
  box:
    ssh: box
    cluster: lab
    chips:
      h100: 4
EOF
chmod 600 inv.yaml # it holds a JuiceFS password
export DISPATCH_INVENTORY=$TRASH/inv.yaml
unset SLURM_JOB_ID SLURM_NODEID SLURM_JOB_NUM_NODES SLURM_NNODES SLURM_JOB_NODELIST \
	SLURM_TMPDIR SLURM_GPUS_ON_NODE DISPATCH_JOB_ID DISPATCH_MASTER_PORT

# A payload: a small code tree with a script that reports where and how it ran.
mkdir -p code/sub
cat >code/run.sh <<'EOF'
#!/bin/bash
{
	echo "pwd=$PWD"
	echo "rank=$DISPATCH_NODE_RANK"
	echo "nnodes=$DISPATCH_NNODES"
	echo "master=$DISPATCH_MASTER_ADDR"
	echo "port=$DISPATCH_MASTER_PORT"
	echo "gpus=$DISPATCH_GPUS_PER_NODE"
	echo "job=$DISPATCH_JOB_ID"
	echo "code=$DISPATCH_CODE_DIR"
	echo "setup=${SETUP_RAN:-no}"
	cat sub/data.txt
} >"$REPORT"
exit "${RUN_STATUS:-0}"
EOF
chmod +x code/run.sh
echo "payload data" >code/sub/data.txt
tar czf code.tar.gz -C code .

test_expect_success 'shellcheck is installed (the tests below need it)' '
	command -v shellcheck
'

# check_scripts DIR: both scripts (when present) parse and pass shellcheck.
check_scripts() {
	bash -n "$1/bootstrap.sh" &&
	shellcheck "$1/bootstrap.sh" &&
	if [ -f "$1/sbatch.sh" ]; then
		bash -n "$1/sbatch.sh" &&
		shellcheck "$1/sbatch.sh"
	fi
}

n=0
matrix() {
	n=$((n + 1))
	local what=$1
	shift
	test_expect_success "scripts parse and pass shellcheck: $what" "
		dispatch submit --dry-run --emit m$n $* >out &&
		check_scripts m$n
	"
}
matrix 'slurm, defaults' -H hpc -- python train.py
matrix 'slurm, multi-node GPUs with a chip' -H hpc --nodes 2 --gpus-per-node 4 --chip h100 -c 8 -- torchrun train.py
matrix 'slurm, uneven GPU total' -H hpc --nodes 2 --gpus 3 -- python train.py
matrix 'slurm, sbatch options' -H hpc -J "'my job #1'" -t 1-00:00:00 --array 0-3%2 --signal B:USR1@60 --exclusive --requeue --dependency afterok:1 --mem 4G -o "'/out dir/%j.log'" --sbatch --mail-type=END -- true
matrix 'env, modules, uv groups, setup' -H hpc --env "'A=a b \$c \`d\` '\\''e'\\'''" --module cuda/12.1 --module "'odd name'" --uv-group dev --setup "'cd /tmp && export Y=1'" -- "'echo \"\$A\" | tr a b'"
matrix 'payload' -H hpc --payload code.tar.gz -- ./run.sh
matrix 'payload with --extract-to' -H hpc --payload code.tar.gz --extract-to "'~/code dir/\$SLURM_JOB_ID'" -- ./run.sh
matrix 'plain host' -H box --gpus 2 --payload code.tar.gz --env X=1 -- ./run.sh
matrix 'an ssh alias outside the inventory' -H somewhere --nodes 3 -- hostname
matrix 'the example job file' -H hpc -f "$TEST_SRCDIR/examples/job.yaml" --env WANDB_API_KEY=k
matrix 'the solver' --solve --no-check --gpus 2 --chip h100 -- nvidia-smi

test_expect_success 'the text output shows both scripts, separated' '
	dispatch submit -H hpc --dry-run -- true >out &&
	test_grep "^==> sbatch.sh <==$" out &&
	test_grep "^==> bootstrap.sh <==$" out &&
	test_grep "^srun --kill-on-bad-exit=1 bash .*/bootstrap.sh. &$" out
'

test_expect_success 'a plain host gets the bootstrap only, and a warning for SLURM options' '
	dispatch submit -H box --time 10 --dependency afterok:tr-20261127-185300-0a1f --partition p --dry-run -- true >out 2>err &&
	test_grep "^==> bootstrap.sh <==$" out &&
	! grep "sbatch.sh" out &&
	test_grep "plain host (no scheduler): ignoring --partition$" err
'

test_expect_success 'multi-node: one task per node, cpus-per-task, no invented memory' '
	dispatch submit -H hpc --nodes 2 -c 8 --dry-run -- true >out &&
	test_grep "^#SBATCH --nodes=2$" out &&
	test_grep "^#SBATCH --ntasks-per-node=1$" out &&
	! grep "^#SBATCH --ntasks=" out &&
	test_grep "^#SBATCH --cpus-per-task=8$" out &&
	test_grep "^srun --kill-on-bad-exit=1 --cpus-per-task=8 " out &&
	! grep -- "--mem" out
'

test_expect_success 'the command after the host needs no --, and its words stay words' '
	dispatch submit -H box --dry-run --emit posix printf "<%s>\n" a "b c" "\$HOME" >/dev/null &&
	bash posix/bootstrap.sh >out &&
	printf "<a>\n<b c>\n<\$HOME>\n" >want &&
	test_cmp want out
'

test_expect_success '--json gives host, scripts and directives' '
	dispatch submit -H hpc --nodes 2 --gpus-per-node 4 --chip h100 --dry-run --json -- true >out.json &&
	python3 - out.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["host"] == "hpc", d["host"]
	assert d["type"] == "slurm"
	assert d["sbatch_script"].startswith("#!/bin/bash\n")
	assert d["bootstrap_script"].startswith("#!/bin/bash\n")
	assert "--ntasks-per-node=1" in d["directives"], d["directives"]
	assert "--gres=gpu:h100_80gb:4" in d["directives"], d["directives"]
	assert d["bootstrap_path"].startswith("/scratch/w/.dispatch/"), d["bootstrap_path"]
	assert d["bootstrap_path"] in d["sbatch_script"]
	EOF
'

# Values that break naive quoting, each written to a file by printf for comparison.
values=(
	'two words'
	"it's"
	'say "hi"'
	'$HOME and ${HOME}'
	'`id` $(touch pwned)'
	$'line one\nline two'
	$'trailing newline\n'
	'ünïcødé ✓ 日本'
	'back\slash\\'
	''
	"*"
	'-n'
)

test_expect_success 'env values reach the command byte for byte' '
	args=() &&
	for i in "${!values[@]}"; do
		printf "%s" "${values[$i]}" >"want$i" &&
		args+=(--env "V$i=${values[$i]}")
	done &&
	export LOCAL_SECRET="local \$value '"'"'x'"'"'" &&
	printf "%s" "$LOCAL_SECRET" >want_local &&
	dispatch submit -H box "${args[@]}" --env LOCAL_SECRET --dry-run --emit env \
		-- "for k in \${!V*} LOCAL_SECRET; do printf %s \"\${!k}\" >\"\$OUT/\$k\"; done" &&
	check_scripts env &&
	mkdir got &&
	env -u LOCAL_SECRET OUT="$TRASH/got" bash env/bootstrap.sh &&
	for i in "${!values[@]}"; do
		cmp "want$i" "got/V$i" || exit 1
	done &&
	cmp want_local got/LOCAL_SECRET &&
	test ! -e pwned && test ! -e got/pwned && test ! -e env/pwned
'

test_expect_success 'the export lines alone, sourced in bash, give the same values' '
	args=() &&
	for i in "${!values[@]}"; do args+=(--env "V$i=${values[$i]}"); done &&
	dispatch submit -H box "${args[@]}" --dry-run --emit exp -- true &&
	sed -n "/^# The job.s environment\\.$/,/^\$/p" exp/bootstrap.sh >exports.sh &&
	test_grep "^export V0=" exports.sh &&
	bash -c ". ./exports.sh && for i in \${!V*}; do printf %s \"\${!i}\" >\"got_\$i\"; done" &&
	for i in "${!values[@]}"; do
		cmp "want$i" "got_V$i" || exit 1
	done
'

test_expect_success 'env values never reach stderr, even with -v' '
	dispatch -v submit -H box --env TOKEN=supersecret42 --dry-run -- true >out 2>err &&
	test_grep "supersecret42" out &&
	! grep supersecret42 err &&
	test_expect_code 2 dispatch submit -H box --env "BAD-NAME=supersecret42" --dry-run -- true 2>err &&
	test_grep "invalid --env name .BAD-NAME." err &&
	! grep supersecret42 err
'

test_expect_success 'plain host by hand: payload extracted, command run there, status passed, temp dir removed' '
	dispatch submit -H box --gpus 2 --setup "export SETUP_RAN=yes" --payload code.tar.gz \
		--dry-run --emit plain -- ./run.sh &&
	mkdir tmp &&
	test_expect_code 7 env TMPDIR="$TRASH/tmp" REPORT="$TRASH/report" RUN_STATUS=7 \
		bash plain/bootstrap.sh &&
	cat report &&
	test_grep "^pwd=$TRASH/tmp/dispatch-[0-9]*\.[A-Za-z0-9]*/code$" report &&
	test_grep "^code=$TRASH/tmp/dispatch-[0-9]*\.[A-Za-z0-9]*/code$" report &&
	test_grep "^rank=0$" report &&
	test_grep "^nnodes=1$" report &&
	test_grep "^master=localhost$" report &&
	test_grep "^gpus=2$" report &&
	test_grep "^setup=yes$" report &&
	test_grep "^payload data$" report &&
	test -z "$(ls -A tmp)" &&
	env TMPDIR="$TRASH/tmp" REPORT="$TRASH/report" bash plain/bootstrap.sh &&
	test -z "$(ls -A tmp)"
'

test_expect_success 'a failing setup command stops the job before the command' '
	dispatch submit -H box --setup "false" --dry-run --emit failsetup -- "touch ran" &&
	test_expect_code 1 bash failsetup/bootstrap.sh &&
	test ! -e ran
'

test_expect_success 'TERM to the bootstrap reaches the whole command, whose status is the script'"'"'s' '
	dispatch submit -H box --payload code.tar.gz --dry-run --emit term \
		-- "trap '"'"'echo got-term >\"\$DONE\"; exit 42'"'"' TERM; sleep 300 & echo \$! >\"\$CHILD\"; touch \"\$READY\"; wait" &&
	mkdir -p tmp2 &&
	{
		TMPDIR="$TRASH/tmp2" READY="$TRASH/ready" DONE="$TRASH/done" CHILD="$TRASH/child" \
			bash term/bootstrap.sh &
	} &&
	pid=$! &&
	i=0 && while [ ! -e ready ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done &&
	test -e ready &&
	kill -TERM $pid &&
	status=0 && { wait $pid || status=$?; } &&
	test "$status" = 42 &&
	test_grep "^got-term$" done &&
	sleeper=$(cat child) &&
	i=0 && while kill -0 "$sleeper" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 "$sleeper" 2>/dev/null &&
	test -z "$(ls -A tmp2)"
'

test_expect_success 'inside a (faked) SLURM job: rank, nodes, master from the nodelist, SLURM_TMPDIR' '
	dispatch submit -H hpc2 --nodes 2 --gpus-per-node 4 --payload code.tar.gz \
		--dry-run --emit fake -- ./run.sh &&
	check_scripts fake &&
	mkdir -p bin slurmtmp &&
	PATH="$TRASH/bin:/usr/bin:/bin" SLURM_JOB_ID=1234 SLURM_NODEID=1 SLURM_JOB_NUM_NODES=2 \
		SLURM_JOB_NODELIST="gpu[07-09,12],cpu1" SLURM_TMPDIR="$TRASH/slurmtmp" \
		REPORT="$TRASH/report2" bash fake/bootstrap.sh &&
	cat report2 &&
	test_grep "^rank=1$" report2 &&
	test_grep "^nnodes=2$" report2 &&
	test_grep "^master=gpu07$" report2 &&
	test_grep "^port=21234$" report2 &&
	test_grep "^gpus=4$" report2 &&
	test_grep "^job=1234$" report2 &&
	test_grep "^pwd=$TRASH/slurmtmp/code$" report2 &&
	test -f slurmtmp/code/run.sh &&
	test -z "$(ls -d slurmtmp/code.* 2>/dev/null)"
'

test_expect_success 'without scontrol, the master is the first host of any hostlist' '
	sed -n "/^dispatch_first_node() {/,/^}/p" fake/bootstrap.sh >first.sh &&
	test -s first.sh &&
	for list in "gpu[07-09,12],cpu1" "rack[1-2]-n[01-02]" "n[3]x" "a[09-11]b[2,1]c,d" \
		    "cpu1,gpu[1-2]" "plain" "x-[001-002].y"; do
		want=$(dispatch hostlist --expand "$list" | head -n 1) &&
		got=$(bash -c ". ./first.sh && dispatch_first_node \"\$1\"" - "$list") &&
		test "$got" = "$want" || { echo "$list: got $got, want $want"; return 1; }
	done &&
	test "$(timeout 5 bash -c ". ./first.sh && dispatch_first_node \"a[1\"")" = a
'

test_expect_success 'a chip without a gres_mapping entry: the chip name as GRES type, with a warning' '
	dispatch submit -H hpc --chip l4 --gpus 1 --dry-run -- true >out 2>err &&
	test_grep "gres_mapping has no entry for chip .l4.: asking .hpc. for GRES type .l4." err &&
	test_grep "^#SBATCH --gres=gpu:l4:1$" out &&
	dispatch submit -H hpc --chip h100 --gpus 1 --dry-run -- true >out 2>err &&
	! test_grep "gres_mapping" err
'

test_expect_success 'the master address uses scontrol when there is one' '
	# Without the login shell (a login profile would set PATH, and lose bin2).
	dispatch submit -H hpc2-nologin --nodes 2 --gpus-per-node 4 --payload code.tar.gz \
		--dry-run --emit fake -- ./run.sh &&
	! grep "bash -l" fake/bootstrap.sh &&
	mkdir -p bin2 &&
	printf "#!/bin/sh\nprintf \"first\\\\nsecond\\\\n\"\n" >bin2/scontrol &&
	chmod +x bin2/scontrol &&
	PATH="$TRASH/bin2:/usr/bin:/bin" SLURM_JOB_ID=5 SLURM_NODEID=0 SLURM_JOB_NODELIST="n[1-2]" \
		SLURM_TMPDIR="$TRASH/slurmtmp2" REPORT="$TRASH/report3" \
		bash -c "mkdir -p \"\$SLURM_TMPDIR\" && bash fake/bootstrap.sh" &&
	test_grep "^master=first$" report3
'

test_expect_success '--emit writes mode 0700 files whatever the umask' '
	(umask 000 && dispatch submit -H hpc --env T=secret --dry-run --emit e0 -- true) >paths &&
	test "$(cat paths)" = "$(printf "e0/sbatch.sh\ne0/bootstrap.sh")" &&
	test "$(stat -c %a e0/sbatch.sh)" = 700 &&
	test "$(stat -c %a e0/bootstrap.sh)" = 700 &&
	test "$(stat -c %a e0)" = 700 &&
	chmod 644 e0/bootstrap.sh &&
	(umask 022 && dispatch submit -H hpc --dry-run --emit e0 -- true) &&
	test "$(stat -c %a e0/bootstrap.sh)" = 700
'

test_expect_success 'job file: command-line options win, errors name file:line:col' '
	cat >job.yaml <<-\EOF &&
	nodes: 4
	time: "2:00:00"
	command: [python, train.py]
	EOF
	dispatch submit -H hpc -f job.yaml --nodes 2 --dry-run >out &&
	test_grep "^#SBATCH --nodes=2$" out &&
	test_grep "^#SBATCH --time=2:00:00$" out &&
	printf "nodes: 2\npartiton: gpu\n" >bad.yaml &&
	test_expect_code 2 dispatch submit -H hpc -f bad.yaml --dry-run -- true 2>err &&
	test_grep "^dispatch: bad.yaml:2:1: unknown key .partiton. (did you mean .partition.?)$" err &&
	printf "time: 25:99\n" >bad2.yaml &&
	test_expect_code 2 dispatch submit -H hpc -f bad2.yaml --dry-run -- true 2>err &&
	test_grep "^dispatch: bad2.yaml:1:7: invalid time .25:99." err &&
	test_expect_code 2 dispatch submit -H hpc -f missing.yaml --dry-run -- true 2>err &&
	test_grep "missing.yaml" err
'

test_expect_success 'bad values exit 2 naming the option' '
	for bad in "--time 25:99" "--mem 4GB" "--nodes 0" "--array 5-1" "--signal B:NOPE" \
		"--dependency afterok" "--gpus x" "--uv-group a;b"; do
		set -- $bad &&
		test_expect_code 2 dispatch submit -H hpc "$1" "$2" --dry-run -- true 2>err &&
		test_grep -- "invalid $1 " err || exit 1
	done
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 dispatch submit -H hpc --dry-run 2>err &&
	test_grep "no command to run" err &&
	test_expect_code 2 dispatch submit --dry-run -- true 2>err &&
	test_grep "needs a host" err &&
	test_expect_code 2 dispatch submit -H hpc --solve --dry-run -- true 2>err &&
	test_expect_code 2 dispatch submit -H hpc --emit d -- true 2>err &&
	test_grep "add --dry-run" err &&
	test_expect_code 2 dispatch submit -H hpc --chip h10 --gpus 1 --dry-run -- true 2>err &&
	test_grep "unknown chip .h10. (did you mean .h100.?)" err &&
	test_expect_code 2 dispatch submit -H hpc --env NOT_SET_ANYWHERE --dry-run -- true 2>err &&
	test_grep "not set locally" err &&
	test_expect_code 2 dispatch submit -H hpc --mem 1G --mem-per-cpu 1G --dry-run -- true 2>err &&
	test_expect_code 2 dispatch submit -H hpc --payload code/run.sh --dry-run -- true 2>err &&
	test_grep "not a gzip tarball" err
'

test_expect_success 'without --dry-run it submits: a host it cannot reach exits 255, nothing recorded' '
	printf "Host hpc-login\n  HostName 127.0.0.1\n  Port 1\n  ConnectionAttempts 1\n" >cfg &&
	test_expect_code 255 dispatch -F cfg submit -H hpc -- true >out 2>err &&
	test_must_be_empty out &&
	test_grep "hpc" err &&
	if test -f "$DISPATCH_STATE_DIR/ledger.db"; then
		test "$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select count(*) from jobs")" = 0
	fi
'

test_expect_success 'every job option of the one table is on both commands and in a job file' '
	sed -n "s/^\tX([^,]*, \"\([a-z-]*\)\".*/\1/p" "$TEST_SRCDIR/lib/inventory/jobspec_options.h" >names &&
	test "$(wc -l <names)" -ge 30 &&
	dispatch submit -h >submit.h &&
	dispatch submit-packed -h >packed.h &&
	while read -r name; do
		grep -q -e "--$name\b" submit.h &&
		grep -q -e "--$name\b" packed.h || { echo "missing --$name"; return 1; }
	done <names &&
	printf "job-name: t\nnodes: 2\nbogus-option: 1\n" >job.yaml &&
	test_expect_code 2 dispatch submit -H hpc -f job.yaml --dry-run -- true 2>err &&
	test_grep "bogus-option" err
'


# The reference's current format: its credentials never show in anything dispatch
# prints or writes for a dry run.
cp "$TEST_SRCDIR/tests/unit/data/reference-inventory-current.yaml" ref.yaml && chmod 600 ref.yaml
no_secrets() {
	for f in "$@"; do
		if grep -n -e wandb-secret-7f3a -e lab-entity-2b6c -e lab-project-4d8e \
			-e hf_secret_91c2 -e jfs-pass-5e1d "$f"; then
			echo "a credential in $f"
			return 1
		fi
	done
}

test_expect_success 'reference inventory: dry runs on its plain and SLURM hosts show <redacted>' '
	dispatch -i ref.yaml -v submit -H gpu-ws --dry-run -- python train.py >out 2>err &&
	no_secrets out err &&
	test_grep "^export WANDB_API_KEY=.<redacted>.$" out &&
	test_grep "^export HF_TOKEN=.<redacted>.$" out &&
	test_grep "^export CUDA_VISIBLE_DEVICES=.0,1.$" out &&
	test_grep "^export DISPATCH_DATA_DIR=./srv/lab/data.$" out &&
	test_grep "^export DISPATCH_RESULTS_DIR=./home/tester/theseus/results.$" out &&
	DISPATCH_TEST_HOME=/u/me dispatch -i ref.yaml --json submit -H slurm-login --dry-run --emit em \
		-- python train.py >out.json 2>err &&
	no_secrets out.json err em/sbatch.sh em/bootstrap.sh &&
	test_grep "META_PASSWORD=.<redacted>. juicefs mount --background --cache-size .50G. --cache-dir ./scratch/jfs-cache. --all-squash .1000:1000. .redis://redis.example.com:6379/0." em/bootstrap.sh &&
	test_grep "^#SBATCH --mem=64G$" em/sbatch.sh &&
	test_grep "^#SBATCH --exclude=n001,n002$" em/sbatch.sh &&
	test_grep "^export NCCL_SOCKET_IFNAME=.ib0.$" em/bootstrap.sh &&
	test_grep "uv sync --frozen --group .cuda12. || uv sync --group .cuda12.$" em/bootstrap.sh &&
	test_grep "UV_CACHE_DIR=./scratch/uv-cache.$" em/bootstrap.sh &&
	bash -n em/bootstrap.sh
'

test_expect_success 'reference inventory: ${oc.env:...} is resolved locally' '
	DISPATCH_TEST_HOME=/u/me dispatch -i ref.yaml submit -H gpu-ws --dry-run -- true >out &&
	test_grep "^export DISPATCH_ROOT=./u/me/theseus.$" out &&
	! grep "oc.env" out
'

test_expect_success 'reference inventory: tpu and volcano hosts are refused by submit (exit 2)' '
	test_expect_code 2 dispatch -i ref.yaml submit -H tpu-pod --dry-run -- true 2>err &&
	test_grep "tpu-pod. is a tpu host .* dispatch drives SSH and SLURM hosts only" err &&
	test_expect_code 2 dispatch -i ref.yaml submit -H k8s-gpus --dry-run -- true 2>err &&
	test_grep "k8s-gpus. is a volcano host" err
'

test_expect_success 'an inventory holding a credential and readable by others: a warning' '
	cp ref.yaml open.yaml && chmod 644 open.yaml &&
	dispatch -i open.yaml hosts >out 2>err &&
	test_grep "warning: inventory .open.yaml. holds credentials and is readable by others (mode 0644)" err &&
	chmod 640 open.yaml &&
	dispatch -i open.yaml hosts >out 2>err &&
	test_grep "readable by its group" err &&
	dispatch -i ref.yaml hosts >out 2>err &&
	test_must_be_empty err
'

test_expect_success 'JuiceFS: a %-encoded password leaves the URL; a secret in the query is refused' '
	sed "s|mount: \"redis://:s3cret@redis:6379/0\"|mount: \"redis://jfs:p%40ss-7f3a@redis:6379/0?db=1\"|" inv.yaml >jfs.yaml &&
	grep -q "p%40ss-7f3a" jfs.yaml &&
	dispatch -i jfs.yaml submit -H hpc --dry-run --emit jem -- true >out 2>err &&
	! grep -r "ss-7f3a" out err jem &&
	test_grep "META_PASSWORD=.<redacted>. juicefs mount --background .* .redis://jfs@redis:6379/0?db=1. " jem/bootstrap.sh &&
	sed "s|mount: \"redis://:s3cret@redis:6379/0\"|mount: \"redis://redis:6379/0?password=qp-7f3a\"|" inv.yaml >jfsq.yaml &&
	test_expect_code 2 dispatch -i jfsq.yaml submit -H hpc --dry-run -- true >out 2>err &&
	test_grep "^dispatch: jfsq.yaml:7:12: clusters.hpc.mount: the JuiceFS metadata URL is refused: its query parameter .password. may carry a secret" err &&
	! grep -r "qp-7f3a" out err
'

test_expect_success 'default job names: the command, the repository, an sbatch script; project and group lead' '
	dispatch submit -H hpc --dry-run -- "FOO=1 ./bin/train.sh --lr 1" >out &&
	test_grep "^#SBATCH --job-name=train.sh$" out &&
	dispatch submit -H hpc --dry-run -J mine -- python x.py >out &&
	test_grep "^#SBATCH --job-name=mine$" out &&
	git init -q myproj && echo x >myproj/f && git -C myproj add f &&
	git -C myproj -c user.email=t@t -c user.name=t commit -qm one &&
	mkdir -p myproj/sub &&
	dispatch submit-packed -H hpc --repo myproj/sub --dry-run -- python x.py >out &&
	test_grep "^#SBATCH --job-name=myproj$" out &&
	printf "#!/bin/bash\n#SBATCH -N 1\nsrun true\n" >train.sbatch &&
	dispatch submit -H hpc --dry-run --sbatch-script train.sbatch >out &&
	test_grep "^#SBATCH --job-name=train.sbatch$" out &&
	mkdir jobs && printf "project: lm\ngroup: ablate\nsbatch-script: ../train.sbatch\n" >jobs/j.yaml &&
	dispatch submit -H hpc --dry-run -f jobs/j.yaml >out &&
	test_grep "^#SBATCH --job-name=lm-ablate-train.sbatch$" out &&
	printf "project: lm\ngroup: [a]\n" >bad.yaml &&
	test_expect_code 2 dispatch submit -H hpc --dry-run -f bad.yaml -- true 2>err &&
	test_grep "bad.yaml:2:8: .group. must be a name on one line" err
'

test_done
