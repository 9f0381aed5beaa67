#!/bin/bash
# t7480: what SLURM users bring (dispatch-submit(1) LAUNCH): srun in a per-node job
# fails at once and says what to do; --launch once runs the command once with the
# allocation free for its srun (both nodes answer), the packed code where srun's tasks
# see it, DISPATCH_HOSTFILE with the nodes and their slots, an MPI job across the two
# nodes (Debian's Open MPI, mpi4py) through it; --sbatch-script runs a script in the
# style of the SLURM migration guides (#SBATCH lines, trailing comments, srun) and is
# waited for, the command line winning over its directives; bad scripts exit 2 with
# FILE:LINE:COL. On every SLURM release of the test bed.
. "$(dirname "$0")/lib.sh"

jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

test_expect_success 'option errors exit 2 before any host is asked' '
	test_expect_code 2 dispatch submit -H hpc --launch twice -- true 2>err &&
	test_grep "expected per-node or once" err &&
	printf "#SBATCH -N 2\necho hi\n" >noshebang.sh &&
	test_expect_code 2 dispatch submit -H hpc --sbatch-script noshebang.sh 2>err &&
	test_grep "noshebang.sh:1:1: the first line must be #!" err &&
	printf "#!/usr/bin/env python3\nprint(1)\n" >py.sh &&
	test_expect_code 2 dispatch submit -H hpc --sbatch-script py.sh 2>err &&
	test_grep "runs with .python3." err &&
	printf "#!/bin/bash\n\n#SBATCH -N 2\n#SBATCH   --comment=\"open\n" >quote.sh &&
	test_expect_code 2 dispatch submit -H hpc --sbatch-script quote.sh 2>err &&
	test_grep "quote.sh:4:11: a quote is not closed" err &&
	printf "#!/bin/bash\n#SBATCH nodes=2\n" >word.sh &&
	test_expect_code 2 dispatch submit -H hpc --sbatch-script word.sh 2>err &&
	test_grep "word.sh:2:9: .nodes=2. is not an sbatch option" err &&
	printf "#!/bin/bash\ntrue\n" >ok.sh &&
	test_expect_code 2 dispatch submit -H hpc --sbatch-script ok.sh -- echo 2>err &&
	test_grep "is the command: give no other" err &&
	test_expect_code 2 dispatch submit -H hpc --sbatch-script missing.sh 2>err &&
	test_grep "cannot read --sbatch-script .missing.sh." err
'

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
DB=$DISPATCH_STATE_DIR/ledger.db
ledger_jobs_cancelled_at_exit

test_expect_success 'per-node: srun in the command fails at once and says what to do' '
	job=$(dispatch submit -H hpc -p cpu -N 2 -- "srun hostname") &&
	test_expect_code 1 dispatch wait --timeout 120 "$job" >w &&
	test_grep "FAILED exit 1" w &&
	ledger_log "$job" >out &&
	test_grep "srun inside the command waits forever here" out &&
	test_grep "Submit with --launch once" out
'

test_expect_success 'per-node: srun --overlap shares the step and goes through' '
	job=$(dispatch submit -H hpc -p cpu -- "srun --overlap -n 1 echo overlap-ok") &&
	dispatch wait --timeout 120 "$job" >/dev/null &&
	ledger_log "$job" >out &&
	test_grep "^overlap-ok$" out
'

test_expect_success '--launch once: the command once, its srun on both nodes, the hostfile' '
	job=$(dispatch submit -H hpc -p cpu -N 2 --ntasks-per-node 2 --launch once -- \
		"cat \"\$DISPATCH_HOSTFILE\"; echo batch-on-\$(hostname); srun hostname | sort") &&
	dispatch wait --timeout 120 "$job" >/dev/null &&
	ledger_log "$job" >out &&
	cat >expect <<-\EOF &&
	node1 slots=2
	node2 slots=2
	batch-on-node1
	node1
	node1
	node2
	node2
	EOF
	test_cmp expect out
'

test_expect_success '--launch once: the packed code is where srun tasks on every node see it' '
	git init -q repo && echo "from the repo" >repo/hello.txt &&
	git -C repo add . && git -C repo -c user.email=t@t -c user.name=t commit -qm v1 &&
	dispatch --json submit-packed -H hpc -p cpu -N 2 --launch once --repo repo -- \
		"echo \"code \$DISPATCH_CODE_DIR\"; srun bash -c \"echo \\\$(hostname) \\\$(cat hello.txt)\" | sort" >sub.json &&
	job=$(jfield sub.json job) &&
	dispatch wait --timeout 120 "$job" >/dev/null &&
	stage=$(sqlite3 "$DB" "select script_path from jobs where job_id = \"${job%@hpc}\"") &&
	stage=${stage%/*} &&
	ledger_log "$job" >out &&
	# the code under the stage dir (shared by the nodes), not a node-local TMPDIR
	sed -n "1s|^code $stage/once\.[A-Za-z0-9]*/code$|under-stage|p" out >where &&
	echo under-stage >expect && test_cmp expect where &&
	printf "node1 from the repo\nnode2 from the repo\n" >expect &&
	sed 1d out >tasks && test_cmp expect tasks &&
	! ls -d "$stage"/once.* 2>/dev/null
'

test_expect_success '--launch once: an MPI job across both nodes through DISPATCH_HOSTFILE' '
	cat >mpi.py <<-\EOF &&
	from mpi4py import MPI
	c = MPI.COMM_WORLD
	total = c.allreduce(c.Get_rank() + 1)
	print("rank", c.Get_rank(), "of", c.Get_size(), "on", MPI.Get_processor_name(), "sum", total)
	EOF
	# (TCP between the nodes on eth0: Open MPI 6 finds no pairing between the
	# test bed namespaces otherwise, their loopbacks alike)
	job=$(dispatch submit -H hpc -p cpu -N 2 -t 3 --launch once -- \
		"mpirun --mca btl_tcp_if_include eth0 --hostfile \"\$DISPATCH_HOSTFILE\" python3 -c $(printf %q "$(cat mpi.py)")") &&
	dispatch wait --timeout 180 "$job" >/dev/null &&
	ledger_log "$job" | grep "^rank" | sort >out &&
	printf "rank 0 of 2 on node1 sum 3\nrank 1 of 2 on node2 sum 3\n" >expect &&
	test_cmp expect out
'

test_expect_success '--sbatch-script: a migration guide style script runs, waited for; the command line wins' '
	cat >train.sbatch <<-\EOF &&
	#!/bin/bash
	#SBATCH --job-name=train-model
	#SBATCH --nodes=2
	#SBATCH --ntasks-per-node=1  # One task per node
	#SBATCH --cpus-per-task=1
	#SBATCH --gres=gpu:1         # a GPU per node
	#SBATCH --mem=100M
	#SBATCH --time=0:10:00
	#SBATCH --partition=gpu

	export LEARNING_RATE=0.001
	echo "batch lr $LEARNING_RATE"
	srun bash -c "echo task \$SLURM_PROCID on \$(hostname) gpu \${CUDA_VISIBLE_DEVICES:-none}" | sort
	EOF
	job=$(dispatch submit -H hpc -J override --sbatch-script train.sbatch) &&
	dispatch wait --timeout 120 "$job" >w &&
	test_grep "COMPLETED exit 0" w &&
	# (the GPU each task gets: the one free on its node, 0 or 1)
	ledger_log "$job" | sed "s/ gpu [01]\$/ gpu N/" >out &&
	printf "batch lr 0.001\ntask 0 on node1 gpu N\ntask 1 on node2 gpu N\n" >expect &&
	test_cmp expect out &&
	test "$(sqlite3 "$DB" "select name from jobs where job_id = \"${job%@hpc}\"")" = override &&
	sbatch=$(sqlite3 "$DB" "select script_path from jobs where job_id = \"${job%@hpc}\"") &&
	sbatch=${sbatch%/*}/sbatch.sh &&
	test_grep "^#SBATCH --gres=gpu:1$" "$sbatch" &&
	test_grep "^#SBATCH --time=0:10:00$" "$sbatch" &&
	test_grep "^#SBATCH --nodes=2$" "$sbatch" &&
	test_grep "^#SBATCH --job-name=override$" "$sbatch"
'

test_done
