# shellcheck shell=sh
# dispatch_attempts ID STAGE: the ended attempts of run job ID, the lines of
# STAGE/attempts ("ATTEMPT STATE EPOCH NODE", written by the sbatch wrapper and the
# plain-host launcher as each attempt ends), each as a MARK_ATTEMPT line
# "ID|ATTEMPT|STATE|EPOCH|NODE" (run_attempts.c reads them). C calls it once per job.

dispatch_attempts() {
	if [ -f "$2/attempts" ]; then
		while read -r a s e n; do
			printf '@MARK_ATTEMPT@ %s|%s|%s|%s|%s\n' "$1" "$a" "$s" "$e" "$n"
		done <"$2/attempts"
	fi
}
