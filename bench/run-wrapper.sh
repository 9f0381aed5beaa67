#!/bin/bash
# bench/run-wrapper.sh [N]: what a run's sbatch wrapper (lib/jobs/sbatch_run.sh) adds
# to each attempt of a job on SLURM, side by side with a job that runs the command
# alone. The wrapper's own work around the command is: the attempt's end time from
# squeue (where SLURM_JOB_END_TIME is not set: before 24.05), the job's record from
# scontrol once the command is over, and, with a webhook, once more before it posts.
# Inside one job on the test cluster, N rounds alternate (a) those calls, as the
# wrapper makes them, and (b) nothing (the bare command's cost: a fork of true), each
# timed with date +%s%N; prints the medians. As root, on the test bed (brought up if
# it is not).
set -eu
cd "$(dirname "$0")/.."
N=${1:-30}
eval "$(tests/testbed/up 2>/dev/null)"
out=$(mktemp /tmp/dispatch-bench-wrapper.XXXXXX)
chmod 666 "$out"
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2016 # expanded in the job
job='
ms() { echo $(( ($2 - $1) / 1000000 )); }
for i in $(seq 1 '"$N"'); do
	t0=$(date +%s%N)
	e=$(squeue -h -j "$SLURM_JOB_ID" -o %e 2>/dev/null | head -n 1)
	e=$(date -d "$e" +%s 2>/dev/null) || e=
	s=$(scontrol -o show job "$SLURM_JOB_ID" 2>/dev/null)
	case $s in *" JobState=PENDING "* | *" JobState=REQUEUED"*) ;; esac
	t1=$(date +%s%N)
	s=$(scontrol -o show job "$SLURM_JOB_ID" 2>/dev/null)
	t2=$(date +%s%N)
	true
	t3=$(date +%s%N)
	echo "$(ms $t0 $t1) $(ms $t1 $t2) $(ms $t2 $t3)"
done'
id=$(runuser -u "$DISPATCH_TESTBED_USER" -- sbatch --parsable -p cpu --mem=50 -o "$out" --wrap "$job")
for _ in $(seq 1 240); do
	st=$(squeue -h -j "${id%%;*}" -o %T 2>/dev/null)
	[ -z "$st" ] && break
	sleep 0.5
done
awk '{ a[NR] = $1; b[NR] = $2; c[NR] = $3 }
	function med(x, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t } return x[int((n + 1) / 2)] }
	END {
		if (!NR) { print "no rounds: see the job output"; exit 1 }
		printf "rounds: %d\n", NR
		printf "wrapper, every attempt (squeue end time + scontrol after the command): %d ms median\n", med(a, NR)
		printf "wrapper, with a webhook (one more scontrol before the post): %d ms median\n", med(b, NR)
		printf "the command alone (a fork of true): %d ms median\n", med(c, NR)
	}' "$out"
