# shellcheck shell=sh
# dispatch_c ID STAGE PGID: cancel one plain-host job (TERM to its process group, alive.sh),
# as a MARK_CANCEL line "ID ended|signalled|gone" (plainjob_parse_cancel). A container
# outlives the process group (podman's conmon is a session of its own):
# dispatch_c_container stops it (TERM, KILL after 10 s) and removes it by its name.

dispatch_c_container() {
	[ -f "$2/container.sh" ] || return 0
	for rt in podman docker; do
		if grep -q "^exec $rt run " "$2/container.sh"; then
			$rt stop -t 10 "dispatch-$1" >/dev/null 2>&1
			$rt rm -f "dispatch-$1" >/dev/null 2>&1
		fi
	done
	return 0
}
# shellcheck disable=SC2154 # pg and since: dispatch_pg (alive.sh, sent before this) sets them
dispatch_c() {
	dispatch_pg "$2" "$3"
	alive= # (before the exit status: see status.sh)
	dispatch_alive "$2" && alive=1
	if [ -f "$2/exit_status" ]; then
		printf '@MARK_CANCEL@ %s ended\n' "$1"
	elif [ -n "$alive" ]; then
		: >"$2/cancelled"
		kill -TERM "-$pg" 2>/dev/null
		dispatch_c_container "$1" "$2"
		printf '@MARK_CANCEL@ %s signalled\n' "$1"
	elif [ -n "$since" ] && [ -d "$2/lost.$pg.$since" ]; then
		# a lost run starting again (status.sh): its new launcher ends it at once
		: >"$2/cancelled"
		printf '@MARK_CANCEL@ %s signalled\n' "$1"
	else
		printf '@MARK_CANCEL@ %s gone\n' "$1"
	fi
}
