# shellcheck shell=sh
# dispatch_q ID STAGE PGID [restart]: one plain-host job's state, as a MARK_JOB line
# "ID|START|cancelled or timeout|STATE|GPUS|REASON" (plainjob_parse_status reads it). C calls it
# once per job after this and alive.sh (plainjob_status_command).
#
# A job whose launcher is gone with no exit status (the box rebooted, its processes
# were SIGKILLed) is "gone": LOST. With "restart" (wait, submit --wait) a run that may
# restart after LOST starts again: dispatch_restart.

# shellcheck disable=SC2154 # pg and since: dispatch_pg (alive.sh, sent before this) sets them
dispatch_q() {
	dispatch_pg "$2" "$3"
	st=$since
	c=
	if [ -f "$2/cancelled" ]; then
		c=cancelled
	elif [ -f "$2/timeout" ]; then
		c=timeout
	fi
	g=
	if [ -f "$2/lease" ]; then
		read -r st g <"$2/lease"
	fi
	p=
	# alive first, then the exit status: the launcher writes it before it exits, so a
	# job that ends between the two looks exited, never gone
	alive=
	dispatch_alive "$2" && alive=1
	if [ -f "$2/exit_status" ]; then
		s="exited $(cat "$2/exit_status")"
	elif [ -n "$alive" ]; then
		s=running
		if [ -f "$2/pending" ] && [ ! -f "$2/lease" ]; then
			s=pending
			p=$(head -n 1 "$2/pending")
		fi
	else
		s=gone
		if [ -z "$c" ] && [ -n "$since" ]; then
			if [ -d "$2/lost.$pg.$since" ]; then # claimed: starting again
				s=pending
				p="restarting after LOST"
			elif [ "${4:-}" = restart ]; then
				dispatch_restart "$1" "$2"
			fi
		fi
	fi
	if [ -f "$2/failed" ]; then
		p=$(head -n 1 "$2/failed")
	elif [ -f "$2/gave-up" ]; then
		p=$(head -n 1 "$2/gave-up")
	fi
	printf '@MARK_JOB@ %s|%s|%s|%s|%s|%s\n' "$1" "$st" "$c" "$s" "${g:--}" "$p"
}

# dispatch_restart ID STAGE: a run whose launcher was lost (pg, since: dispatch_pg)
# starts again when its restart policy (STAGE/restarts: "MAX EVENTS", the launcher's)
# has lost among its events and restarts remain; out of them it ends FAILED, given up,
# as the launcher words it. Exactly once for each loss, however many dispatch waits
# (on this laptop or others) see it: the first to make the directory STAGE/lost.PG.SINCE
# does it. The attempt goes to STAGE/attempts ("ATTEMPT LOST END HOST", as the
# launcher's own restarts); the launcher starts again from STAGE/launch.sh with the
# next attempt. Sets s and p as dispatch_q does.
dispatch_restart() {
	r_max=0 r_on=
	[ -f "$2/restarts" ] && read -r r_max r_on _ <"$2/restarts"
	case $r_max in '' | *[!0-9]*) return 0 ;; esac
	case ,$r_on, in *,lost,*) ;; *) return 0 ;; esac
	[ -f "$2/launch.sh" ] || return 0
	mkdir "$2/lost.$pg.$since" 2>/dev/null || { s=pending p="restarting after LOST"; return 0; }
	n=0
	[ -f "$2/attempts" ] && n=$(awk 'END { print NR }' "$2/attempts")
	now=$(date +%s)
	if [ "$n" -ge "$r_max" ]; then
		p="gave up after $r_max restarts: $(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $2 }' "$2/attempts"); attempt $((n + 1)) ended LOST"
		printf '%s\n' "$p" >"$2/gave-up"
		echo "1 $now" >"$2/exit_status.tmp" && mv -f "$2/exit_status.tmp" "$2/exit_status"
		s="exited 1 $now"
		dispatch_notify "$2" "$1" FAILED "$p" >/dev/null 2>&1
		return 0
	fi
	echo "$n LOST $now $(hostname)" >>"$2/attempts"
	rm -f -- "$2/lease" "$2/timeout"
	p="restarted after LOST (restart $((n + 1)) of $r_max): queued again"
	printf '%s\n' "$p" >"$2/pending"
	sh "$2/launch.sh" $((n + 1)) </dev/null >/dev/null 2>&1
	s=pending
	# until the new launcher says it is there (as the submission waits for it)
	i=0
	while [ "$(cut -d ' ' -f 1 "$2/pid" 2>/dev/null)" = "$pg" ] && [ "$i" -lt 100 ]; do
		sleep 0.1 2>/dev/null || sleep 1
		i=$((i + 1))
	done
	if [ "$i" -ge 100 ]; then
		p="the restart after LOST did not start: no new $2/pid after 10 s"
		printf '%s\n' "$p" >"$2/failed"
		echo "1 $(date +%s)" >"$2/exit_status.tmp" && mv -f "$2/exit_status.tmp" "$2/exit_status"
		s="exited 1 $(date +%s)"
	fi
	return 0
}
