# shellcheck shell=bash
# Part of every bootstrap.sh (jobscript.c's boot_identity, after the DISPATCH_JOB_ID,
# DISPATCH_NODE_RANK, DISPATCH_NNODES and DISPATCH_GPUS_PER_NODE exports): the first
# host of the job and a port per job, as DISPATCH_MASTER_ADDR and DISPATCH_MASTER_PORT.

# The first host of a SLURM hostlist, for when scontrol is not there: each
# bracket group's first value ("gpu[07-09,12],cpu1" gives gpu07,
# "rack[1-2]-n[01-02]" gives rack1-n01).
dispatch_first_node() {
	local rest=$1 out='' lit group
	while :; do
		lit=${rest%%[,[]*}
		out=$out$lit
		rest=${rest:${#lit}}
		case $rest in
		\[*\]*) group=${rest#?}; out=$out${group%%[],-]*}; rest=${rest#*]} ;;
		*) break ;;
		esac
	done
	printf '%s\n' "$out"
}
if [ -n "${SLURM_JOB_NODELIST:-}" ]; then
	if ! dispatch_hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null) ||
	   [ -z "$dispatch_hosts" ]; then
		dispatch_hosts=$(dispatch_first_node "$SLURM_JOB_NODELIST")
	fi
	DISPATCH_MASTER_ADDR=${dispatch_hosts%%$'\n'*}
else
	DISPATCH_MASTER_ADDR=localhost
fi
export DISPATCH_MASTER_ADDR
# A port per job, so that jobs sharing a node do not collide.
case $DISPATCH_JOB_ID in
*[!0-9]* | '') dispatch_port=29500 ;;
*) dispatch_port=$((20000 + 10#$DISPATCH_JOB_ID % 20000)) ;;
esac
export DISPATCH_MASTER_PORT="${DISPATCH_MASTER_PORT:-$dispatch_port}"
