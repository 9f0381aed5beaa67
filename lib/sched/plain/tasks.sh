# shellcheck shell=sh
# A sweep's tasks on a plain host, started in one command (plainjob_launch_tasks_command,
# after it set d, the sweep's stage dir, and wrote $d/launcher.sh): each task a plain
# job of its own, in a stage dir next to $d named after its id (SWEEP-K).
#
# dispatch_task ID LAUNCH: makes the task's stage dir (a new one: never a task
# started twice), links the sweep's files there (bootstrap.sh, container.sh,
# notify_url, launcher.sh: uploaded once), writes its workdir (the current one), its
# run_info (the run's id with -K, for its webhook) and LAUNCH as its launch.sh, and
# starts that (attempt 0).
# dispatch_tasks_wait ID...: until each task's launcher has started it, queued it or
# given up (10 s, and 1 more for each 10 tasks), then a line per task:
# "@MARK_TASK@ ID started PGID", "ID failed PGID" (its launcher gave up at once: the
# reason, on stderr) or "ID none" (its stage dir could not be made: it certainly did
# not start). A task whose launcher recorded no pid by then gets no line (it may
# still start: the caller looks again).

dispatch_task() {
	# shellcheck disable=SC2154 # d: the sweep's stage dir, set by the command before
	dt=${d%/*}/$1
	if ! mkdir -- "$dt"; then
		echo "dispatch: task $1: cannot create $dt" >&2
		return 1
	fi
	if ! dispatch_task_files "$1" "$2"; then
		# not started: no stage dir, so that it reads as none, never as unknown
		echo "dispatch: task $1: cannot write its files in $dt" >&2
		rm -rf -- "$dt"
		return 1
	fi
	sh "$dt/launch.sh" 0
}

dispatch_task_files() {
	for dt_f in bootstrap.sh container.sh notify_url launcher.sh; do
		if [ -f "$d/$dt_f" ]; then
			ln -s -- "../${d##*/}/$dt_f" "$dt/$dt_f" || return 1
		fi
	done
	if [ -f "$d/run_info" ]; then
		read -r dt_run dt_host <"$d/run_info"
		printf '%s-%s %s\n' "$dt_run" "${1##*-}" "$dt_host" >"$dt/run_info" || return 1
	fi
	pwd >"$dt/workdir" || return 1
	printf %s "$2" >"$dt/launch.sh"
}

dispatch_tasks_wait() {
	dw_i=0
	dw_max=$((100 + $#))
	while [ "$dw_i" -lt "$dw_max" ]; do
		dw_all=1
		for dw in "$@"; do
			dt=${d%/*}/$dw
			if [ ! -d "$dt" ]; then
				continue
			fi
			if ! { [ -s "$dt/pid" ] && { [ -f "$dt/lease" ] || [ -f "$dt/pending" ] ||
				[ -f "$dt/exit_status" ]; }; }; then
				dw_all=
				break
			fi
		done
		if [ -n "$dw_all" ]; then
			break
		fi
		sleep 0.1 2>/dev/null || sleep 1
		dw_i=$((dw_i + 1))
	done
	for dw in "$@"; do
		dt=${d%/*}/$dw
		if [ ! -d "$dt" ]; then
			printf '@MARK_TASK@ %s none\n' "$dw"
		elif [ ! -s "$dt/pid" ]; then
			echo "dispatch: task $dw has not started yet: no $dt/pid after $((dw_max / 10)) s" >&2
		elif [ -f "$dt/failed" ]; then
			while IFS= read -r dw_line; do
				printf 'dispatch: task %s: %s\n' "$dw" "$dw_line" >&2
			done <"$dt/failed"
			printf '@MARK_TASK@ %s failed %s\n' "$dw" "$(cut -d ' ' -f 1 "$dt/pid")"
		else
			printf '@MARK_TASK@ %s started %s\n' "$dw" "$(cut -d ' ' -f 1 "$dt/pid")"
		fi
	done
}
