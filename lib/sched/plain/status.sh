# shellcheck shell=sh
# dispatch_q ID STAGE PGID: one plain-host job's state, as a MARK_JOB line
# "ID|START|cancelled or timeout|STATE|GPUS|REASON" (plainjob_parse_status reads it). C calls it
# once per job after this (plainjob_status_command).

dispatch_q() {
	st=
	if [ -f "$2/pid" ]; then
		st=$(cut -d ' ' -f 2 "$2/pid")
	fi
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
	if [ -f "$2/exit_status" ]; then
		s="exited $(cat "$2/exit_status")"
	elif [ "$3" -gt 1 ] && kill -0 "-$3" 2>/dev/null; then
		s=running
		if [ -f "$2/pending" ] && [ ! -f "$2/lease" ]; then
			s=pending
			p=$(head -n 1 "$2/pending")
		fi
	else
		s=gone
	fi
	if [ -f "$2/failed" ]; then
		p=$(head -n 1 "$2/failed")
	elif [ -f "$2/gave-up" ]; then
		p=$(head -n 1 "$2/gave-up")
	fi
	printf '@MARK_JOB@ %s|%s|%s|%s|%s|%s\n' "$1" "$st" "$c" "$s" "${g:--}" "$p"
}
