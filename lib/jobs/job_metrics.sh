# shellcheck shell=sh
# dispatch_metrics ID LOG: the last value of each metric job ID printed as a
# "DISPATCH_METRIC NAME=VALUE" line (dispatch-status(1) SWEEPS), read here so that no
# log crosses the wire: one MARK_METRIC line "ID|TASK|NAME=VALUE" per metric, at
# most 32 per log, a value's first 200 bytes. LOG is the log's path, or with one %a
# (an array's task id, as sbatch writes --output) the pattern of every task's log:
# TASK is what %a stood for, "-" for a path. One grep and one awk per job, whatever
# the number of its tasks. C calls it once per job.

dispatch_metrics() {
	case $2 in
	*%a*) dm_p=${2%%%a*} dm_s=${2#*%a} ;;
	*) dm_p=$2 dm_s= ;;
	esac
	if [ "$dm_p" = "$2" ]; then
		set -- "$1" "$2"
	else
		set -- "$1" "$dm_p"*"$dm_s"
	fi
	dm_id=$1
	shift
	# grep -H: each line led by its file, PREFIX TASK SUFFIX ":"
	grep -a -H -e '^DISPATCH_METRIC ' -- "$@" 2>/dev/null |
		DM_I=$dm_id DM_P=$dm_p DM_S=$dm_s awk '
		BEGIN { i = ENVIRON["DM_I"]; p = ENVIRON["DM_P"]; s = ENVIRON["DM_S"] ":DISPATCH_METRIC " }
		{
			n = index($0, s)
			if (n <= length(p)) next
			t = substr($0, length(p) + 1, n - length(p) - 1)
			if (t == "") t = "-"
			r = substr($0, n + length(s))
			sub(/^ +/, "", r)
			e = index(r, "=")
			if (e < 2) next
			k = substr(r, 1, e - 1)
			if (!(t in c)) {
				o[++nt] = t
				c[t] = 0
			}
			if (!((t, k) in v)) {
				if (c[t] >= 32) next
				c[t]++
				key[t, c[t]] = k
			}
			v[t, k] = substr(r, e + 1, 200)
		}
		END {
			for (a = 1; a <= nt; a++)
				for (b = 1; b <= c[o[a]]; b++)
					printf "@MARK_METRIC@ %s|%s|%s=%s\n", i, o[a], key[o[a], b], v[o[a], key[o[a], b]]
		}'
}
