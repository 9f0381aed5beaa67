# shellcheck shell=sh
# dispatch_attempts ID STAGE: the ended attempts of run job ID, the lines of
# STAGE/attempts ("ATTEMPT STATE EPOCH NODE", written by the sbatch wrapper and the
# plain-host launcher as each attempt ends), each as a MARK_ATTEMPT line
# "ID|ATTEMPT|STATE|EPOCH|NODE" (run_attempts.c reads them), and when the run ran out
# of restarts, STAGE/gave-up's line as a MARK_GAVE_UP line "ID|WHY". A job array's
# tasks (a sweep's on SLURM) have their own, STAGE/attempts.ID_TASK and
# STAGE/gave-up.ID_TASK, said as ID_TASK's. C calls it once per job.

dispatch_attempts() {
	for da_f in "$2/attempts" "$2/attempts.$1" "$2/attempts.$1"_*; do
		[ -f "$da_f" ] || continue
		case $da_f in */attempts) da_id=$1 ;; *) da_id=${da_f##*/attempts.} ;; esac
		while read -r a s e n; do
			printf '@MARK_ATTEMPT@ %s|%s|%s|%s|%s\n' "$da_id" "$a" "$s" "$e" "$n"
		done <"$da_f"
	done
	for da_f in "$2/gave-up" "$2/gave-up.$1" "$2/gave-up.$1"_*; do
		[ -f "$da_f" ] || continue
		case $da_f in */gave-up) da_id=$1 ;; *) da_id=${da_f##*/gave-up.} ;; esac
		printf '@MARK_GAVE_UP@ %s|%s\n' "$da_id" "$(head -n 1 "$da_f")"
	done
}
