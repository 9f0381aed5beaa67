# shellcheck shell=sh
# dispatch_retry ID STAGE: a plain-host job that ended (STAGE/exit_status) runs again in
# its stage dir (submit --retry of a sweep's task): its end goes to STAGE/attempts
# ("ATTEMPT WORD END HOST", as a run's restarts: WORD FAILED, CANCELLED or TIMEOUT),
# the marks of that end (exit_status, cancelled, timeout, failed, gave-up, lease,
# pending) to STAGE/retry.ATTEMPT/, and its launcher starts again from STAGE/launch.sh
# with the next attempt, its output appended to the same log (after a line that says
# so). Once per end, however
# many retries race: the first to make STAGE/retry.ATTEMPT does it. Prints a MARK_TASK
# line as the sweep's start does (tasks.sh): "ID started PGID" once the new launcher
# recorded its pid, "ID none" when there was nothing to retry (not ended, or another
# retry claimed it), and no line when it did not say within 10 s.

dispatch_retry() {
	if [ ! -f "$2/exit_status" ] || [ ! -f "$2/launch.sh" ]; then
		printf '@MARK_TASK@ %s none\n' "$1"
		return 0
	fi
	dr_n=0
	[ -f "$2/attempts" ] && dr_n=$(awk 'END { print NR }' "$2/attempts")
	if ! mkdir "$2/retry.$dr_n" 2>/dev/null; then
		printf '@MARK_TASK@ %s none\n' "$1"
		return 0
	fi
	read -r _ dr_end _ <"$2/exit_status"
	dr_word=FAILED
	if [ -f "$2/cancelled" ]; then
		dr_word=CANCELLED
	elif [ -f "$2/timeout" ]; then
		dr_word=TIMEOUT
	fi
	echo "$dr_n $dr_word ${dr_end:--} $(hostname)" >>"$2/attempts"
	dr_old=$(cut -d ' ' -f 1 "$2/pid" 2>/dev/null)
	for dr_f in exit_status cancelled timeout failed gave-up lease pending; do
		if [ -e "$2/$dr_f" ]; then
			mv -f -- "$2/$dr_f" "$2/retry.$dr_n/$dr_f"
		fi
	done
	DP_AGAIN="of a retry after $dr_word (dispatch submit --retry)" \
		sh "$2/launch.sh" $((dr_n + 1)) </dev/null >/dev/null 2>&1
	dr_i=0
	while [ "$dr_i" -lt 100 ]; do
		dr_pid=$(cut -d ' ' -f 1 "$2/pid" 2>/dev/null)
		if [ -n "$dr_pid" ] && [ "$dr_pid" != "$dr_old" ]; then
			printf '@MARK_TASK@ %s started %s\n' "$1" "$dr_pid"
			return 0
		fi
		sleep 0.1 2>/dev/null || sleep 1
		dr_i=$((dr_i + 1))
	done
	echo "dispatch: $1 did not start again: no new $2/pid after 10 s" >&2
}
