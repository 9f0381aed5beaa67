# shellcheck shell=bash
# Part of a SLURM bootstrap.sh with --launch once (jobscript.c's boot_once): the
# bootstrap runs twice. First as a step on every node with the argument "prepare"
# (sbatch.sh), which ends here, after what a node needs of its own (the JuiceFS
# mount, modules); then in the batch script, where the command runs once, with the
# allocation free for its srun and mpirun. There the code goes into a private
# directory under the stage dir (shared: the command's srun tasks on the other nodes
# see it; dispatch_cleanup removes it), with DISPATCH_HOSTFILE, an MPI hostfile of
# the job's nodes and their task slots (SLURM_TASKS_PER_NODE: "2(x3),1").

# --launch once (dispatch-submit(1) LAUNCH): every node prepared, then the command
# once, here, with the allocation free for its srun.
if [ "${1:-}" = prepare ]; then
	exit 0
fi
dispatch_tmp=$(mktemp -d "${BASH_SOURCE[0]%/*}/once.XXXXXX")
export DISPATCH_HOSTFILE="$dispatch_tmp/hostfile"
scontrol show hostnames "$SLURM_JOB_NODELIST" |
	awk -v t="${SLURM_TASKS_PER_NODE:-}" 'BEGIN {
		n = split(t, p, ",")
		for (i = 1; i <= n; i++) {
			c = p[i]; r = 1
			if (match(c, /\(x[0-9]+\)$/)) {
				r = substr(c, RSTART + 2, RLENGTH - 3); c = substr(c, 1, RSTART - 1)
			}
			for (j = 0; j < r; j++) slots[++k] = c
		}
	} { printf "%s slots=%d\n", $0, (NR in slots) ? slots[NR] : 1 }' >"$DISPATCH_HOSTFILE"
