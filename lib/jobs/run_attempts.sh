# shellcheck shell=sh
# dispatch_attempts ID STAGE: the ended attempts of run job ID, the lines of
# STAGE/attempts ("ATTEMPT STATE EPOCH NODE", written by the sbatch wrapper and the
# plain-host launcher as each attempt ends), each as a MARK_ATTEMPT line
# "ID|ATTEMPT|STATE|EPOCH|NODE" (run_attempts.c reads them), and when the run ran out
# of restarts, STAGE/gave-up's line as a MARK_GAVE_UP line "ID|WHY". C calls it once
# per job.

dispatch_attempts() {
	if [ -f "$2/attempts" ]; then
		while read -r a s e n; do
			printf '@MARK_ATTEMPT@ %s|%s|%s|%s|%s\n' "$1" "$a" "$s" "$e" "$n"
		done <"$2/attempts"
	fi
	if [ -f "$2/gave-up" ]; then
		printf '@MARK_GAVE_UP@ %s|%s\n' "$1" "$(head -n 1 "$2/gave-up")"
	fi
}
