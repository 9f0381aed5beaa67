# shellcheck shell=bash
# Part of a run's sbatch.sh (jobscript.c's make_sbatch, for a spec with --max-restarts,
# --stop-signal or --grace): after the variables dispatch_run_id, dispatch_max_restarts,
# dispatch_restart_on (" timeout preempted ... "), dispatch_stop_signal, dispatch_grace
# and dispatch_stage (the stage dir), before srun starts the bootstrap (then
# dispatch_child=$! and dispatch_run_wait). SLURM sends the stop signal to this shell
# (--signal=B:SIG@GRACE); it goes on to the command's steps; once they end (or the
# grace is nearly over) this job requeues itself while restarts remain. A SIGTERM is a
# preemption unless the job was cancelled or timed out; so is a PreemptTime in the
# job's record once srun is over (PreemptMode=CANCEL with a GraceTime: SLURM signals
# the steps, not this shell). Each attempt's end is one line of
# $dispatch_stage/attempts (a sweep's task: attempts.ARRAYID_TASK): ATTEMPT STATE
# EPOCH NODE (run_attempts.sh reads them; "-" where not known).

# the settings before this part (the wrapper's lines above)
: "${dispatch_run_id:?}" "${dispatch_max_restarts:?}" "${dispatch_restart_on:?}"
: "${dispatch_stop_signal:?}" "${dispatch_grace:?}" "${dispatch_stage:?}"
dispatch_child=
dispatch_event=
dispatch_cancelled=
dispatch_attempt=${SLURM_RESTART_COUNT:-0}
# This job's attempts and its end when no restart remains: a sweep's task (a job
# array's, requeued alone) has its own, by its job's id (a retried task is a new job
# of the same stage), and its run id is the run's and its sweep index. SLURM's
# commands name it ARRAYID_TASK: one task's SLURM_JOB_ID is the array's own id,
# which names every task (scontrol requeue of it requeues them all).
dispatch_job=$SLURM_JOB_ID
dispatch_attempts=$dispatch_stage/attempts
dispatch_gave_up=$dispatch_stage/gave-up
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ] && [ -n "${SLURM_ARRAY_JOB_ID:-}" ]; then
	dispatch_job=${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID
	dispatch_attempts=$dispatch_stage/attempts.$dispatch_job
	dispatch_gave_up=$dispatch_stage/gave-up.$dispatch_job
	dispatch_run_id=$dispatch_run_id-$((10#$SLURM_ARRAY_TASK_ID + 10#${DISPATCH_SWEEP_FIRST:-0}))
fi
export DISPATCH_RUN_ID="$dispatch_run_id"
export DISPATCH_ATTEMPT="$dispatch_attempt"
export DISPATCH_STOP_SIGNAL="$dispatch_stop_signal"
export DISPATCH_STOP_GRACE="$dispatch_grace"
# When the time limit ends this attempt (the stop signal comes $dispatch_grace seconds
# before); empty without a limit.
dispatch_end=${SLURM_JOB_END_TIME:-}
if [ -z "$dispatch_end" ]; then
	dispatch_end=$(squeue -h -j "$dispatch_job" -o %e 2>/dev/null | head -n 1)
	dispatch_end=$(date -d "$dispatch_end" +%s 2>/dev/null) || dispatch_end=
fi
export DISPATCH_STOP_DEADLINE="$dispatch_end"
# Attempts SLURM ended and requeued itself (a failed node, PreemptMode=REQUEUE) wrote
# no line: one each now, from the job's accounting record of that attempt (sacct -D:
# one record per attempt, in order; NODE_FAIL, PREEMPTED, when and where), else
# REQUEUED, when and where unknown.
dispatch_n=0
if [ -f "$dispatch_attempts" ]; then
	dispatch_n=$(wc -l <"$dispatch_attempts")
fi
if [ "$dispatch_n" -lt "$dispatch_attempt" ]; then
	dispatch_acct=$(sacct -n -X -D -P -j "$dispatch_job" -o State,End,NodeList 2>/dev/null)
fi
while [ "$dispatch_n" -lt "$dispatch_attempt" ]; do
	dispatch_rec=$(printf '%s\n' "$dispatch_acct" | sed -n "$((dispatch_n + 1))p")
	dispatch_w=$(printf '%s\n' "$dispatch_rec" | cut -d '|' -f 1 | cut -d ' ' -f 1)
	dispatch_t=$(printf '%s\n' "$dispatch_rec" | cut -d '|' -f 2)
	case $dispatch_t in
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9])
		dispatch_t=$(date -d "$dispatch_t" +%s 2>/dev/null) || dispatch_t=-
		;;
	*) dispatch_t=- ;;
	esac
	dispatch_h=$(printf '%s\n' "$dispatch_rec" | cut -d '|' -f 3)
	case $dispatch_w in '' | *[!A-Z_]* | RUNNING | PENDING) dispatch_w=REQUEUED ;; esac
	case $dispatch_t in '' | *[!0-9]*) dispatch_t=- ;; esac
	case $dispatch_h in '' | *[!A-Za-z0-9._-]*) dispatch_h=- ;; esac
	echo "$dispatch_n $dispatch_w $dispatch_t $dispatch_h" >>"$dispatch_attempts"
	dispatch_n=$((dispatch_n + 1))
done

# dispatch_slurm_requeues RECORD: true when the job's record (scontrol -o show job)
# says SLURM requeues the job itself: it is PENDING or REQUEUED again, or its restart
# count is past this attempt's. (PreemptMode=REQUEUE, measured on 22.05: the batch
# shell and the steps get SIGTERM, and while the steps end the record already says
# COMPLETING with Restarts one more; SLURM kills this script after KillWait.)
# shellcheck disable=SC2317 # called from the traps
dispatch_slurm_requeues() {
	case $1 in
	*" JobState=PENDING "* | *" JobState=REQUEUED"*) return 0 ;;
	esac
	dispatch_r=$(printf '%s\n' "$1" | sed -n 's/.* Restarts=\([0-9]*\) .*/\1/p')
	[ -n "$dispatch_r" ] && [ "$dispatch_r" -gt "$dispatch_attempt" ]
}

# shellcheck disable=SC2317 # called from the traps
dispatch_forward() {
	if [ -z "$dispatch_child" ]; then
		exit "$2"
	fi
	kill -s "$1" "$dispatch_child" 2>/dev/null || true
}

# The stop: $1 the event (timeout, preempted). The command's steps get the stop
# signal; if they are still there near the end of the grace, srun is killed.
# shellcheck disable=SC2317 # called from the traps
dispatch_stop() {
	if [ -n "$dispatch_event" ]; then
		return
	fi
	dispatch_event=$1
	echo "dispatch: attempt $((dispatch_attempt + 1)) of run $dispatch_run_id: $1 at $(date -u +%FT%TZ), $dispatch_stop_signal to the command" >&2
	if [ -z "$dispatch_child" ]; then
		return
	fi
	kill -s "$dispatch_stop_signal" "$dispatch_child" 2>/dev/null || true
	# until 5 s before the limit (SLURM sends the signal up to 30 s before the grace,
	# its time limit check runs every 30 s), else most of the grace
	dispatch_left=$((dispatch_grace > 20 ? dispatch_grace - 10 : dispatch_grace / 2))
	if [ -n "$dispatch_end" ]; then
		dispatch_left=$((dispatch_end - $(date +%s) - 5))
		if [ "$dispatch_left" -lt 1 ]; then
			dispatch_left=1
		fi
	fi
	(sleep "$dispatch_left" && kill -s KILL "$dispatch_child" 2>/dev/null) &
}

# shellcheck disable=SC2317 # called from the traps
dispatch_term() {
	dispatch_rec=$(scontrol -o show job "$dispatch_job" 2>/dev/null)
	if dispatch_slurm_requeues "$dispatch_rec"; then
		dispatch_forward TERM 143 # SLURM's own requeue: the next attempt says how this one ended
		return
	fi
	dispatch_state=$(printf '%s\n' "$dispatch_rec" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
	case $dispatch_state in
	RUNNING | PREEMPTED | SUSPENDED) dispatch_stop preempted ;;
	CANCELLED)
		dispatch_cancelled=CANCELLED
		dispatch_forward TERM 143
		;;
	*) dispatch_forward TERM 143 ;;
	esac
}

trap 'dispatch_stop timeout' "$dispatch_stop_signal"
if [ "$dispatch_stop_signal" != TERM ]; then
	trap dispatch_term TERM
fi
for dispatch_sig in INT HUP USR1 USR2; do
	if [ "$dispatch_sig" != "$dispatch_stop_signal" ]; then
		# shellcheck disable=SC2064 # the signal's name, now
		trap "dispatch_forward $dispatch_sig 1" "$dispatch_sig"
	fi
done

# The ends of the attempts before this one, as "TIMEOUT, TIMEOUT".
dispatch_history() {
	if [ -f "$dispatch_attempts" ]; then
		awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $2 }' "$dispatch_attempts"
	fi
}

# dispatch_final STATE DETAIL: the run's end for good, to its webhook (run_notify.sh),
# unless the job's record says SLURM requeues it (dispatch_slurm_requeues, or
# PREEMPTED: SLURM's preemption ends it and REQUEUE requeues it next).
# shellcheck disable=SC2317 # called from dispatch_run_wait
dispatch_final() {
	if [ ! -f "$dispatch_stage/notify_url" ]; then
		return 0
	fi
	dispatch_rec=$(scontrol -o show job "$dispatch_job" 2>/dev/null)
	case $dispatch_rec in
	*" JobState=PREEMPTED "*) dispatch_preempted=1 ;;
	*) dispatch_preempted= ;;
	esac
	if [ -n "$dispatch_preempted" ] || dispatch_slurm_requeues "$dispatch_rec"; then
		echo "dispatch: attempt $((dispatch_attempt + 1)) of run $dispatch_run_id: requeued by SLURM" >&2
		return 0
	fi
	dispatch_notify "$dispatch_stage" "$dispatch_job" "$1" "$2" "$dispatch_attempts" "$dispatch_run_id"
}

# Waits for srun through the traps, then ends the attempt: a requeue while restarts
# remain and the event may restart, else the command's status.
dispatch_run_wait() {
	set +e
	wait "$dispatch_child"
	dispatch_status=$?
	while kill -0 "$dispatch_child" 2>/dev/null; do
		wait "$dispatch_child"
		dispatch_status=$?
	done
	# Again, for srun's own status when a trapped signal ended the last wait after it
	# died (127: already collected; bash 5.2 can also give -1 here, as the plain
	# launcher met: neither is a status).
	wait "$dispatch_child"
	dispatch_s2=$?
	case $dispatch_s2 in '' | *[!0-9]* | 127) ;; *) dispatch_status=$dispatch_s2 ;; esac
	# Preempted with PreemptMode=CANCEL and a GraceTime: SLURM sent SIGTERM to the
	# command's steps, not to this shell, and set the job's PreemptTime; the job
	# runs on until the grace is over, time enough to requeue it.
	if [ -z "$dispatch_event" ] && [ -z "$dispatch_cancelled" ]; then
		dispatch_now=$(scontrol -o show job "$dispatch_job" 2>/dev/null)
		if dispatch_slurm_requeues "$dispatch_now"; then
			# SLURM ended this attempt and requeues the job itself (preemption with
			# PreemptMode=REQUEUE): the next attempt writes how it ended
			echo "dispatch: attempt $((dispatch_attempt + 1)) of run $dispatch_run_id: requeued by SLURM ($(printf '%s\n' "$dispatch_now" | sed -n 's/.* JobState=\([A-Z_]*\).*/\1/p'))" >&2
			exit 0
		fi
		# PREEMPTED: SLURM's preemption ended it (REQUEUE: SLURM requeues it next,
		# and the requeue below fails quietly; CANCEL without a grace: ours is the
		# only requeue)
		case $dispatch_now in
		*" JobState=PREEMPTED "*)
			dispatch_event=preempted
			echo "dispatch: attempt $((dispatch_attempt + 1)) of run $dispatch_run_id: preempted at $(date -u +%FT%TZ)" >&2
			;;
		*" PreemptTime=None"* | "") ;;
		*" PreemptTime="*)
			dispatch_event=preempted
			echo "dispatch: attempt $((dispatch_attempt + 1)) of run $dispatch_run_id: preempted at $(date -u +%FT%TZ)" >&2
			;;
		esac
	fi
	dispatch_ended=
	# ended by --idle-timeout (the sampler's idle.JOB): for good, never restarted
	if [ -f "$dispatch_stage/idle.$dispatch_job" ]; then
		dispatch_final FAILED "$(head -n 1 "$dispatch_stage/idle.$dispatch_job")"
		exit 1
	fi
	if [ -n "$dispatch_event" ]; then
		dispatch_ended=$dispatch_event
	elif [ "$dispatch_status" -ne 0 ]; then
		dispatch_ended=error
	fi
	if [ -n "$dispatch_cancelled" ]; then
		dispatch_notify "$dispatch_stage" "$dispatch_job" "$dispatch_cancelled" "" "$dispatch_attempts" "$dispatch_run_id"
		exit "$dispatch_status"
	fi
	if [ -z "$dispatch_ended" ]; then
		dispatch_final COMPLETED ""
		exit 0
	fi
	case $dispatch_ended in
	timeout) dispatch_word=TIMEOUT ;;
	preempted) dispatch_word=PREEMPTED ;;
	*) dispatch_word=FAILED ;;
	esac
	case $dispatch_restart_on in
	*" $dispatch_ended "*) ;;
	*)
		if [ "$dispatch_ended" = error ]; then
			dispatch_final FAILED "exit status $dispatch_status"
			exit "$dispatch_status"
		fi
		echo "dispatch: run $dispatch_run_id ended $dispatch_word; --restart-on does not restart it" >&2
		dispatch_final "$dispatch_word" ""
		exit 1
		;;
	esac
	if [ "$dispatch_attempt" -ge "$dispatch_max_restarts" ]; then
		dispatch_why="gave up after $dispatch_max_restarts restarts: $(dispatch_history)"
		echo "$dispatch_why; attempt $((dispatch_attempt + 1)) ended $dispatch_word" >"$dispatch_gave_up"
		echo "dispatch: run $dispatch_run_id $dispatch_why; attempt $((dispatch_attempt + 1)) ended $dispatch_word" >&2
		dispatch_final FAILED "$dispatch_why; attempt $((dispatch_attempt + 1)) ended $dispatch_word"
		exit 1
	fi
	echo "$dispatch_attempt $dispatch_word $(date +%s) $(hostname)" >>"$dispatch_attempts"
	echo "dispatch: run $dispatch_run_id: attempt $((dispatch_attempt + 1)) ended $dispatch_word, requeued (restart $((dispatch_attempt + 1)) of $dispatch_max_restarts)" >&2
	if ! scontrol requeue "$dispatch_job" 2>/dev/null; then
		dispatch_rec=$(scontrol -o show job "$dispatch_job" 2>/dev/null)
		case $dispatch_rec in *" JobState=PREEMPTED "*) exit 0 ;; esac # SLURM requeues it next
		if dispatch_slurm_requeues "$dispatch_rec"; then
			exit 0 # SLURM requeues it itself
		fi
		echo "dispatch: run $dispatch_run_id: scontrol requeue $dispatch_job failed" >&2
		exit 1
	fi
	exit 0
}
