# shellcheck shell=sh
# Part of the status and cancel commands (status.sh, cancel.sh): which process group is
# a plain-host job's now, and whether it still runs.
#
# dispatch_pg STAGE PGID: sets pg to the launcher's pid as STAGE/pid says it (a
# launcher started again after it was lost has a new one), else PGID (the ledger's),
# and since to the launcher's start ("" when unknown).
# dispatch_alive STAGE: true while the group pg has a process that runs (not only
# zombies: killed processes whose parent is gone wait for init to reap them, slowly
# in some containers), on this boot of the host: after a reboot the number may be
# another process's (STAGE/boot_id, written by the launcher where Linux gives one).
# ps -A (every process, on Linux and the BSDs alike) runs once for the whole command
# (dp_ps), and again when a group is not in it at all: a launcher started after it
# (another wait's restart of a lost run) must not look gone.

dispatch_pg() {
	pg=$2 since=
	if [ -f "$1/pid" ]; then
		read -r p since _ <"$1/pid"
		case $p in '' | *[!0-9]*) ;; *) pg=$p ;; esac
		case $since in *[!0-9]*) since= ;; esac
	fi
}
# dispatch_ps_live: 0 when dp_ps has a process of group pg that is no zombie, 1 when
# it has zombies of it alone, 2 when it has none of it.
dispatch_ps_live() {
	printf '%s\n' "$dp_ps" | awk -v g="$pg" '$1 == g { seen = 1; if ($2 !~ /^Z/) live = 1 }
		END { exit live ? 0 : seen ? 1 : 2 }'
}
dispatch_alive() {
	[ "$pg" -gt 1 ] && kill -0 "-$pg" 2>/dev/null || return 1
	if [ -z "${dp_ps+set}" ]; then
		dp_ps=$(ps -A -o pgid= -o stat= 2>/dev/null) || dp_ps=
	fi
	if [ -n "$dp_ps" ]; then
		dispatch_ps_live
		dp_live=$?
		if [ "$dp_live" = 2 ]; then # newer than the list: list again
			dp_ps=$(ps -A -o pgid= -o stat= 2>/dev/null) || dp_ps=
			dp_live=0
			[ -z "$dp_ps" ] || { dispatch_ps_live; dp_live=$?; }
		fi
		[ "$dp_live" != 1 ] || return 1
	fi
	[ -f "$1/boot_id" ] && [ -r /proc/sys/kernel/random/boot_id ] || return 0
	[ "$(cat "$1/boot_id")" = "$(cat /proc/sys/kernel/random/boot_id)" ]
}
