# shellcheck shell=bash
# The lease functions (bash) of the launcher (launcher.sh) and of the queue's listing
# (queue.sh), which come after them, about a lock directory that other users of the
# box share, none of them trusted:
#
# dp_trust PATH: why PATH (or a directory above it) would let another user swap the
# files in it: it must belong to root or to us, and a directory that others can write
# must be sticky (then only a file's owner can rename or remove it). Prints nothing
# when it can be trusted.
#
# dp_pids FILE: the processes /proc/locks names as holding (or having taken) a lock
# on FILE: a lock that flock(1) took for a shell names that flock, gone since.
# dp_held FILE: who holds FILE's lock (those processes that are still there, with
# their users), and whose the file is: what a bounded wait that gave up says.
#
# dp_lock FD FILE [-s]: flock FD (FILE's), waiting while the lock changes hands (the
# launchers' scans take turns), but not once one holder kept it $lw seconds, nor
# over 60 seconds in all: then 1.
#
# dp_list LOCKDIR: the live records, "NAME|OWNER|RECORD" (OWNER: the file's owner,
# whom the record must name as its USER to count). A record is live while its
# launcher holds its lock; a stale one is removed where we may. Only regular files
# with a record's name are opened, one line of at most 4096 bytes read. Run under
# timeout: a file swapped for a FIFO after the check would block the open.

dp_trust() {
	local p=$1 c=() uid mode owner type name
	while :; do
		c+=("$p")
		[ "$p" = / ] && break
		p=${p%/*}
		[ -n "$p" ] || p=/
	done
	while IFS='|' read -r uid mode owner type name; do
		if [ "$uid" != 0 ] && [ "$uid" != "$EUID" ]; then
			echo "$name belongs to $owner, not to root or you"; return
		fi
		if [ "$type" = directory ] && (((8#$mode & 8#022) && !(8#$mode & 8#1000))); then
			echo "$name is writable by other users and not sticky"; return
		fi
	done < <(stat -c '%u|%a|%U|%F|%n' -- "${c[@]}" 2>/dev/null)
}
dp_pids() {
	local dev ino key
	read -r dev ino < <(stat -c '%d %i' -- "$1" 2>/dev/null)
	[ -n "$ino" ] && [ -r /proc/locks ] || return 0
	key=$(printf '%02x:%02x:%s' $(((dev >> 8) & 0xfff)) $(((dev & 0xff) | ((dev >> 12) & 0xfff00))) "$ino")
	awk -v k="$key" '$2 != "->" && $6 == k { print $5 }' /proc/locks | sort -un | tr '\n' ' '
}
dp_held() {
	local p u who=
	for p in $(dp_pids "$1"); do
		u=$(stat -c %U "/proc/$p" 2>/dev/null) && who="$who${who:+, }$u's process $p"
	done
	printf '%s (the file is %s'"'"'s)' "${who:-a process that /proc/locks does not name}" \
		"$(stat -c %U -- "$1" 2>/dev/null || echo '?')"
}
dp_lock() {
	local same=0 all=0 last="" cur
	until flock ${3:+"$3"} -w 1 "$1"; do
		cur=$(dp_pids "$2")
		if [ "$cur" = "$last" ]; then same=$((same + 1)); else same=1 last=$cur; fi
		all=$((all + 1))
		# shellcheck disable=SC2154 # lw: the lock wait, set by the launcher and the listing
		[ "$same" -lt "$lw" ] && [ "$all" -lt 60 ] || return 1
	done
}
dp_list() {
	local o y n f line
	while IFS='|' read -r -d '' o y n; do
		[ "$y" = f ] || continue
		case $n in job.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9].?*) ;; *) continue ;; esac
		case ${n#job.??????????.} in *[!A-Za-z0-9._+@-]*) continue ;; esac
		f=$1/$n
		{ [ -f "$f" ] && [ ! -L "$f" ]; } || continue
		{ exec 7<"$f"; } 2>/dev/null || continue
		if flock -n 7; then
			exec 7<&-
			rm -f -- "$f" 2>/dev/null
			continue
		fi
		line=
		IFS= read -r -n 4096 line <&7
		exec 7<&-
		printf '%s|%s|%s\n' "$n" "$o" "$line"
	done < <(find "$1" -mindepth 1 -maxdepth 1 -name 'job.*' -printf '%u|%y|%f\0' 2>/dev/null)
}
