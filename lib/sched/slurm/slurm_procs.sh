# shellcheck shell=sh
# P: a step's processes on its node, for dispatch top (slurm_procs_script; inside
# gpu_top's node script, sh -c, which sets n, the node's name, and p, its line printer):
# the job's pids from scontrol listpids, or from ps (the processes under the job's
# slurmstepd, not this step's), each as a "proc" line, then nvidia-smi's compute apps.

P() {
p procs-begin
# shellcheck disable=SC2154 # n: the node, set by gpu_top's node script
if o=$(scontrol listpids "${SLURM_JOB_ID-}" "$n" 2>/dev/null); then
	w=listpids
	k=$(printf '%s\n' "$o" | awk -v s="${SLURM_STEP_ID-}" 'NR > 1 && $1 ~ /^[0-9]+$/ && $3 != s { printf "%s%s", c, $1; c = "," }')
else
	w='ps'
	k=$(ps -e -o pid= -o ppid= -o args= 2>/dev/null | awk -v j="${SLURM_JOB_ID-}" -v s="${SLURM_STEP_ID-}" '
	{ pp[$1] = $2; a = $0; sub(/^ *[0-9]+ +[0-9]+ +/, "", a)
	  if (index(a, "slurmstepd: [" j ".") == 1 && a != "slurmstepd: [" j "." s "]") r[$1] = 1 }
	END { for (x in pp) { y = x
		for (d = 0; d < 64 && (y in pp) && !(y in r) && y + 0 > 1; d++) y = pp[y]
		if ((y in r) && !(x in r)) { printf "%s%s", c, x; c = "," } } }')
fi
[ -n "$k" ] && ps -o pid= -o ppid= -o pgid= -o uid= -o pcpu= -o rss= -o comm= -o user= -p "$k" 2>/dev/null |
	while IFS= read -r x; do p proc "$x"; done
command -v nvidia-smi >/dev/null 2>&1 &&
	a=$(nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits 2>/dev/null) &&
	printf '%s\n' "$a" | while IFS= read -r x; do [ -n "$x" ] && p app "$x"; done
p procs-end "$w"
}
