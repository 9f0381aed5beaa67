# shellcheck shell=sh
# dispatch_c ID STAGE PGID: cancel one plain-host job (TERM to its process group),
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
dispatch_c() {
	if [ -f "$2/exit_status" ]; then
		printf '@MARK_CANCEL@ %s ended\n' "$1"
	elif [ "$3" -gt 1 ] && kill -0 "-$3" 2>/dev/null; then
		: >"$2/cancelled"
		kill -TERM "-$3" 2>/dev/null
		dispatch_c_container "$1" "$2"
		printf '@MARK_CANCEL@ %s signalled\n' "$1"
	else
		printf '@MARK_CANCEL@ %s gone\n' "$1"
	fi
}
