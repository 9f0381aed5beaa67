# shellcheck shell=bash
# The launcher (bash: lease fds are more than sh's ten): the group leader of the job,
# written to STAGE/launcher.sh after lease_fns.sh by plainjob_launch_command and run
# by setsid. It records its pid (= the group id, setsid made it a session leader),
# ignores HUP as nohup does, survives TERM (a handler, reset in the bootstrap, which
# forwards TERM to the command) to record the exit status; queues for its lease
# (plainjob.h) and runs the bootstrap with none of its lock fds, so that the locks
# last exactly as long as the launcher. Arguments: STAGE ID NGPUS SHARE LOCKDIR
# MAXJOBS ALLOWED BUSY_MIB [LOCKWAIT [DEPENDENCY [LIMIT GRACE STOPSIG [MAXRESTARTS
# RESTART_ON [ATTEMPT [SWEEP SWEEPMAX]]]]]] (RESTART_ON: events joined by ',': timeout,
# error, lost; ATTEMPT: the first attempt's number, not 0 when status.sh starts a lost
# run again; SWEEP: a task of a sweep, the sweep's stage name, its tasks' ids being
# SWEEP-K; SWEEPMAX: at most this many of them run at once on this box, 0: no cap;
# the tasks pending with an earlier ticket take the free slots first).
# STAGE/launch.sh (plainjob_launch_command) starts it with these arguments.
#
# DEPENDENCY (sbatch's --dependency, on jobs of this box by id: stage dirs next to
# ours): the job is held, "held" in its record (no lease, ahead of no one) and
# PENDING for status with SLURM's reason, Dependency, or DependencyNeverSatisfied
# once one ended the wrong way (then held until cancelled, as SLURM does). It keeps
# its ticket: released, it queues as a job submitted then.
# LIMIT (seconds, 0: none): STOPSIG (a name: USR1) to the command at LIMIT - GRACE,
# TERM at LIMIT (STAGE/timeout written first: state TIMEOUT), KILL to every process
# of the job's session 30 s later.
# The attempts: after a time limit (or a non-zero exit, with error in RESTART_ON) the
# command runs again while restarts remain, as SLURM requeues a job: the GPUs and the
# slot go back and the job queues again at the back (a new ticket). STAGE/attempts
# gets "ATTEMPT WORD END HOST" for each end that restarted (as lib/jobs/sbatch_run.sh
# writes it), STAGE/gave-up the reason when none remain (the job ends FAILED).
# dp_scan: who holds what, from the live records (under the lock directory's lock):
# fills nrun, ahead (earlier pending jobs this one competes with), held_by
# (INDEX=USER), swrun and swahead (our sweep's tasks running, and waiting with an
# earlier ticket: pending, or held by the sweep's cap, "held" in their record, which
# is ahead of no other job: a task its sweep's cap holds back holds back no other
# job on the box, only its sweep's later tasks). dp_name ID: nm, the job's name, its
# stage name less DATE-TIME-NONCE (a sweep's task's -K too), for singleton. A record that names another user than its file's owner is ignored.

d=$1 id=$2 ng=$3 share=$4 L=$5 maxj=$6 allowed=$7 busy_mib=$8 lw=${9:-5}
dep=${10:-} limit=${11:-0} grace=${12:-0} stopsig=${13:-USR1} maxr=${14:-0} restart_on=${15:-timeout}
attempt=${16:-0} sweep=${17:-} sweepmax=${18:-0}
# This boot (status.sh: a pid from before a reboot is not ours)
if [ -r /proc/sys/kernel/random/boot_id ]; then
	cat /proc/sys/kernel/random/boot_id >"$d/boot_id"
fi
# The run's restart policy, for status.sh's restart after LOST
[ "$maxr" -gt 0 ] && echo "$maxr $restart_on" >"$d/restarts"
echo "$$ $(date +%s)" >"$d/pid.tmp" && mv -f "$d/pid.tmp" "$d/pid"
[ "$attempt" -gt 0 ] && echo "dispatch: attempt $attempt ${DP_AGAIN:-ended LOST (no launcher, no exit status): restarting (restart $attempt of $maxr)}" >&2
trap "" HUP
trap : TERM INT
me=$(id -un 2>/dev/null || echo "${USER:-?}")
dp_end() {
	echo "$1 $(date +%s)" >"$d/exit_status.tmp" && mv -f "$d/exit_status.tmp" "$d/exit_status"
	[ -n "${rec:-}" ] && rm -f -- "$rec"
	rm -f -- "$d/pending"
	exit 0
}
dp_fail() {
	echo "dispatch: $*" >&2
	printf '%s\n' "$*" >"$d/failed"
	dp_end 1
}
dp_cancelled() {
	if [ -f "$d/cancelled" ]; then
		dispatch_notify "$d" "$id" CANCELLED ""
		dp_end 143
	fi
}
# The host's GPUs: "INDEX UUID" lines.
gpus=
if command -v nvidia-smi >/dev/null 2>&1; then
	gpus=$(nvidia-smi --query-gpu=uuid,name,memory.total --format=csv,noheader,nounits 2>/dev/null |
		awk -F', *' 'NF >= 1 && $1 != "" { print n++, $1 }') || gpus=
fi
ngpus=0
[ -n "$gpus" ] && ngpus=$(printf '%s\n' "$gpus" | wc -l)
if [ "$ng" -gt 0 ] && [ "$ng" -gt "$ngpus" ]; then
	dp_fail "the job asks for $ng GPU(s); $(hostname) has $ngpus"
fi
fds=
dp_open() { # VAR FILE: FILE (created 0644 if missing, never through a symlink) on a read fd
	if [ -L "$2" ]; then dp_fail "$2 is a symbolic link: refusing it"; fi
	[ -e "$2" ] || (umask 022; set -C; : >"$2") 2>/dev/null
	if [ -L "$2" ] || [ ! -f "$2" ]; then dp_fail "$2 is not a regular file: refusing it"; fi
	{ exec {dp_fd}<"$2"; } 2>/dev/null || dp_fail "cannot open $2 (it is $(stat -c %U -- "$2" 2>/dev/null)'s, mode $(stat -c %a -- "$2" 2>/dev/null))"
	printf -v "$1" %s "$dp_fd"
	fds="$fds $dp_fd"
}
# shellcheck disable=SC2086 # $fds: descriptor numbers, split into words on purpose
dp_close() { eval "exec $1<&-"; fds=$(printf '%s\n' $fds | grep -vx "$1" | tr '\n' ' '); }
# The record, written only through the descriptor it was created with (a name in a
# shared directory is never written through): USER|STATE|NGPUS|GPUS|SINCE|REASON
dp_rec() { printf '%s|%s|%s|%s|%s|%s\n' "$me" "$@" >"/proc/self/fd/$rfd"; }
dp_pending() { # REASON: for status (STAGE/pending), once it changes
	{ [ -f "$d/pending" ] && [ "$(cat "$d/pending")" = "$1" ]; } ||
		{ printf '%s\n' "$1" >"$d/pending.tmp" && mv -f "$d/pending.tmp" "$d/pending"; }
}
# Each dependency's stage dir must be there (as sbatch refuses an unknown id).
dep_ids=
if [ -n "$dep" ]; then
	case $dep in *'?'*) dep_sep='?' ;; *) dep_sep=, ;; esac
	IFS=$dep_sep read -ra dep_parts <<<"$dep"
	for p in "${dep_parts[@]}"; do
		t=${p%%:*}
		case $t in
		singleton) [ "$p" = singleton ] || dp_fail "--dependency '$p': singleton takes no job ids" ;;
		after | afterany | afterok | afternotok) ;;
		*) dp_fail "--dependency $t is not supported on a plain host (after, afterany, afterok, afternotok and singleton are)" ;;
		esac
		[ "$t" = singleton ] && continue
		IFS=: read -ra ids <<<"${p#*:}"
		for i in "${ids[@]}"; do
			i=${i%%@*}
			case $i in
			'' | .* | *[!A-Za-z0-9._-]*) dp_fail "--dependency '$p': '$i' is not a job of a plain host (NAME-YYYYMMDD-HHMMSS-XXXX)" ;;
			esac
			[ -d "${d%/*}/$i" ] || dp_fail "--dependency '$p': no job '$i' on $(hostname) (no ${d%/*}/$i)"
			dep_ids="$dep_ids $i"
		done
	done
fi
queue=1
if ! command -v flock >/dev/null 2>&1; then
	if [ "$ng" -gt 0 ] || [ "$maxj" -gt 0 ] || [ "$sweepmax" -gt 0 ]; then
		dp_fail "flock (util-linux) not found on $(hostname): GPU leases and max_jobs need it"
	fi
	queue=
	case ,$dep, in *[,?]singleton[,?]*) dp_fail "flock (util-linux) not found on $(hostname): --dependency singleton needs it" ;; esac
fi
# dp_ticket: a record at the back of the queue (under the lock directory's lock, which
# the caller holds): the next ticket; a record this launcher had goes.
dp_ticket() {
	local old=${rec:-} ofd=${rfd:-} t f n
	t=0
	for f in "$L"/job.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9].*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		n=${f#"$L"/job.}
		n=${n%%.*}
		[ $((10#$n)) -gt "$t" ] && t=$((10#$n))
	done
	myt=$((t + 1))
	rec=$(printf '%s/job.%010d.%s' "$L" "$myt" "$id")
	# O_EXCL, 0600 until locked: no other process opens it first.
	(umask 077; set -C; : >"$rec") 2>/dev/null || dp_fail "cannot create $rec"
	{ exec {rfd}<>"$rec"; } 2>/dev/null || dp_fail "cannot open $rec"
	{ [ -f "/proc/self/fd/$rfd" ] && [ -O "/proc/self/fd/$rfd" ]; } || dp_fail "$rec is not a file of yours: refusing it"
	fds="$fds $rfd"
	flock -n "$rfd" || dp_fail "cannot lock $rec: held by $(dp_held "$rec")"
	chmod 644 "/proc/self/fd/$rfd" || dp_fail "cannot make $rec readable"
	if [ -n "$old" ]; then
		rm -f -- "$old"
		dp_close "$ofd"
	fi
}
if [ -n "$queue" ]; then
	if [ -L "$L" ]; then dp_fail "the GPU lock directory $L is a symbolic link: refusing it"; fi
	[ -e "$L" ] || mkdir -m 1777 -- "$L" 2>/dev/null
	if [ -L "$L" ]; then dp_fail "the GPU lock directory $L is a symbolic link: refusing it"; fi
	[ -d "$L" ] || dp_fail "cannot create the GPU lock directory $L"
	why=$(dp_trust "$L")
	[ -n "$why" ] || why=$(dp_trust "$(cd -P -- "$L" && pwd -P)")
	if [ -n "$why" ]; then
		dp_fail "the GPU lock directory $L is refused: $why, so another user could swap the records there (set gpu_lock_dir to a directory of yours, or have an admin make $L root-owned with mode 1777, as /tmp is)"
	fi
	dp_open gfd "$L/.lock"
	# shellcheck disable=SC2154 # dp_open set gfd (printf -v)
	dp_lock "$gfd" "$L/.lock" ||
		dp_fail "the lock of the GPU lock directory, $L/.lock, is held for over $lw s by $(dp_held "$L/.lock"): the job was not queued"
	dp_ticket
	t0=$(date +%s)
	if [ -n "$dep" ]; then
		dp_rec held "$ng" "" "$t0" Dependency
	else
		dp_rec pending "$ng" "" "$t0" ""
	fi
	flock -u "$gfd"
fi
# dp_scan: who holds what (the header says)
dp_scan() {
	nrun=0 ahead=0 held_by='' scan_err='' swrun=0 swahead=0
	local out n o line u st g x tk j
	# (a job without GPUs, max_jobs and a sweep cap waits for nothing: no scan)
	[ "$ng" -gt 0 ] || [ "$maxj" -gt 0 ] || [ "$sweepmax" -gt 0 ] || return 0
	if ! out=$(timeout -k 1 "$lw" bash -c "$(declare -f dp_list); dp_list \"\$1\"" dp-list "$L"); then
		scan_err="the job records in $L could not be read within $lw s"
		return 1
	fi
	while IFS='|' read -r n o line; do
		{ [ -n "$n" ] && [ "$n" != "${rec##*/}" ]; } || continue
		IFS='|' read -r u st x g _ <<<"$line"
		[ "$u" = "$o" ] || continue
		tk=${n#job.}
		tk=${tk%%.*}
		j=
		case ${n#job.??????????.} in "$sweep"- | "$sweep"-*[!0-9]*) ;; "$sweep"-*) [ "$u" = "$me" ] && j=1 ;; esac
		if [ "$st" = running ]; then
			nrun=$((nrun + 1))
			for g in ${g//,/ }; do held_by="$held_by $g=$u"; done
			[ -z "$j" ] || swrun=$((swrun + 1))
		elif [ "$st" = pending ] && [ $((10#$tk)) -lt "$myt" ]; then
			if [ "$maxj" -gt 0 ] || { [ "$ng" -gt 0 ] && [ "${x:-0}" -gt 0 ] 2>/dev/null; }; then
				ahead=$((ahead + 1))
			fi
			[ -z "$j" ] || swahead=$((swahead + 1))
		elif [ "$st" = held ] && [ -n "$j" ] && [ $((10#$tk)) -lt "$myt" ]; then
			swahead=$((swahead + 1))
		fi
	done <<<"$out"
}
dp_busy() { # the UUIDs of GPUs that processes use (as solve --check counts them)
	nvidia-smi --query-compute-apps=gpu_uuid,used_memory --format=csv,noheader,nounits 2>/dev/null |
		awk -F', *' -v t="$busy_mib" '$1 != "" && !($2 ~ /^[0-9]+$/ && $2 + 0 < t) { print $1 }'
}
dp_allowed() { # INDEX UUID
	[ -z "$allowed" ] && return 0
	case ",$allowed," in *",$1,"* | *",$2,"*) return 0 ;; esac
	return 1
}
dp_holders() { # the reason's "(by a job of alice's and one of yours)"
	local w=() u i=0 out=
	for u in $held_jobs; do
		if [ "$u" = "$me" ]; then w+=("yours"); else w+=("$u's"); fi
	done
	for u in "${w[@]}"; do
		if [ $i = 0 ]; then out="a job of $u"
		elif [ $i = $((${#w[@]} - 1)) ]; then out="$out and one of $u"
		else out="$out, one of $u"; fi
		i=$((i + 1))
	done
	printf '%s' "$out"
}
# dp_dep_state ID: how a job of this box (its stage dir) stands: ok, notok (ended
# otherwise: exit status not 0, cancelled, timed out; or gone without one), running,
# pending.
dp_dep_state() {
	local s=${d%/*}/$1 st='' pg=''
	if [ -f "$s/exit_status" ]; then
		read -r st _ <"$s/exit_status"
		if [ "$st" = 0 ] && [ ! -f "$s/cancelled" ] && [ ! -f "$s/timeout" ]; then echo ok; else echo notok; fi
		return
	fi
	[ -f "$s/pid" ] && read -r pg _ <"$s/pid"
	if [ -n "$pg" ] && [ "$pg" -gt 1 ] 2>/dev/null && kill -0 "-$pg" 2>/dev/null; then
		if [ -f "$s/lease" ]; then echo running; else echo pending; fi
	elif [ -f "$s/exit_status" ]; then
		dp_dep_state "$1" # it ended just now
	else
		echo notok
	fi
}
# dp_singleton: true when no earlier live job of ours with our name is on the box
# (in the lock directory, read as dp_scan does).
dp_name() {
	nm=${1%-*-*-*}
	[[ $1 =~ ^(.*)-[0-9]{8}-[0-9]{6}-[0-9a-f]{4}-[0-9]+$ ]] && nm=${BASH_REMATCH[1]}
}
dp_singleton() {
	local out n o line u tk nm mine
	dp_name "$id"
	mine=$nm
	out=$(timeout -k 1 "$lw" bash -c "$(declare -f dp_list); dp_list \"\$1\"" dp-list "$L") || return 1
	while IFS='|' read -r n o line; do
		{ [ -n "$n" ] && [ "$n" != "${rec##*/}" ]; } || continue
		u=${line%%|*}
		{ [ "$u" = "$o" ] && [ "$u" = "$me" ]; } || continue
		tk=${n#job.}
		tk=${tk%%.*}
		n=${n#job.??????????.}
		dp_name "$n"
		[ "$nm" = "$mine" ] && [ $((10#$tk)) -lt "$myt" ] && return 1
	done <<<"$out"
	return 0
}
# dp_deps: dep_reason "" once the dependencies hold, else Dependency, or
# DependencyNeverSatisfied once they never can.
dp_deps() {
	local p t i st ps pn sat never
	if [ "$dep_sep" = , ]; then sat=1 never=0; else sat=0 never=1; fi
	for p in "${dep_parts[@]}"; do
		t=${p%%:*} ps=1 pn=0
		if [ "$t" = singleton ]; then
			dp_singleton || ps=0
		else
			IFS=: read -ra ids <<<"${p#*:}"
			for i in "${ids[@]}"; do
				st=$(dp_dep_state "${i%%@*}")
				case $t:$st in
				after:pending) ps=0 ;;
				after:*) ;;
				afterany:ok | afterany:notok) ;;
				afterok:ok) ;;
				afterok:notok) ps=0 pn=1 ;;
				afternotok:notok) ;;
				afternotok:ok) ps=0 pn=1 ;;
				*) ps=0 ;;
				esac
			done
		fi
		if [ "$dep_sep" = , ]; then
			[ "$ps" = 1 ] || sat=0
			[ "$pn" = 1 ] && never=1
		else
			[ "$ps" = 1 ] && sat=1
			[ "$pn" = 1 ] || never=0
		fi
	done
	if [ "$sat" = 1 ]; then dep_reason=
	elif [ "$never" = 1 ]; then dep_reason=DependencyNeverSatisfied
	else dep_reason=Dependency; fi
}
if [ -n "$dep" ]; then
	shown=
	while :; do
		dp_cancelled
		dp_deps
		[ -n "$dep_reason" ] || break
		if [ "$dep_reason" != "$shown" ]; then
			if [ -n "$queue" ] && dp_lock "$gfd" "$L/.lock"; then
				dp_rec held "$ng" "" "$t0" "$dep_reason"
				flock -u "$gfd"
			fi
			dp_pending "$dep_reason"
			shown=$dep_reason
		fi
		sleep 0.5 2>/dev/null || sleep 1
	done
	if [ -n "$queue" ] && dp_lock "$gfd" "$L/.lock"; then
		dp_rec pending "$ng" "" "$t0" ""
		flock -u "$gfd"
	fi
fi
# dp_queue: until this job holds its lease (GPUs, a max_jobs slot): lease_idx,
# lease_uuid, lfds (the GPU locks' descriptors).
dp_queue() {
	lease_idx='' lease_uuid='' lfds=''
	[ -n "$queue" ] || return 0
	while :; do
		dp_cancelled
		busy=
		[ "$ng" -gt 0 ] && [ "$share" != 1 ] && busy=$(dp_busy)
		if ! dp_lock "$gfd" "$L/.lock"; then
			dp_pending "waiting for the lock of the GPU lock directory, $L/.lock, held for over $lw s by $(dp_held "$L/.lock")"
			continue
		fi
		reason='' wait_st=pending
		if ! dp_scan; then
			reason=$scan_err
		elif [ "$sweepmax" -gt 0 ] && [ $((swrun + swahead)) -ge "$sweepmax" ]; then
			wait_st=held
			reason="waiting for a sweep slot: max-parallel $sweepmax on this host, $swrun running"
			[ "$swahead" = 0 ] || reason="$reason, $swahead ahead"
		elif [ "$maxj" -gt 0 ] && [ "$nrun" -ge "$maxj" ]; then
			reason="waiting for a job slot: max_jobs $maxj, $nrun running"
		elif [ "$ng" -gt 0 ]; then
			got=0 lease_idx='' lease_uuid='' lfds='' nheld=0 nbusy=0 nall=0 held_jobs='' outside=''
			while read -r i u; do
				[ -n "$u" ] || continue
				dp_allowed "$i" "$u" || continue
				nall=$((nall + 1))
				[ "$got" -ge "$ng" ] && continue
				dp_open x "$L/gpu.$u"
				if ! flock -n "$x"; then
					dp_close "$x"
					nheld=$((nheld + 1))
					h_ok=
					for h in $held_by; do
						[ "${h%%=*}" = "$i" ] && held_jobs="$held_jobs ${h#*=}" && h_ok=1
					done
					[ -n "$h_ok" ] || outside="$outside; GPU $i is locked outside dispatch's records, by $(dp_held "$L/gpu.$u")"
					continue
				fi
				if printf '%s\n' "$busy" | grep -qxF -- "$u"; then
					dp_close "$x"
					nbusy=$((nbusy + 1))
					continue
				fi
				got=$((got + 1))
				lfds="$lfds $x"
				lease_idx="$lease_idx${lease_idx:+,}$i"
				lease_uuid="$lease_uuid${lease_uuid:+,}$u"
			done <<<"$gpus"
			if [ "$got" -lt "$ng" ] || [ "$ahead" -gt 0 ]; then
				for x in $lfds; do dp_close "$x"; done
				lease_idx='' lease_uuid=''
				s=s; [ "$ng" = 1 ] && s=
				reason="waiting for $ng GPU$s: $nheld of $nall held"
				[ -n "$held_jobs" ] && reason="$reason (by $(dp_holders))"
				[ "$nbusy" -gt 0 ] && reason="$reason, $nbusy busy with other processes"
				[ "$ahead" -gt 0 ] && reason="$reason; $ahead earlier job(s) waiting"
				reason="$reason$outside"
			fi
		elif [ "$ahead" -gt 0 ]; then
			reason="waiting behind $ahead earlier job(s)"
		fi
		if [ -z "$reason" ]; then
			dp_cancelled
			dp_rec running "$ng" "$lease_idx" "$(date +%s)" ""
			flock -u "$gfd"
			break
		fi
		dp_rec "$wait_st" "$ng" "" "$t0" "$reason"
		dp_pending "$reason"
		flock -u "$gfd"
		sleep 0.2 2>/dev/null || sleep 1
	done
}
# dp_session_pids: the processes of the job's session (setsid made us its leader) but
# this launcher, as "PID PGRP" lines.
dp_session_pids() {
	local f r
	for f in /proc/[0-9]*/stat; do
		{ read -r r <"$f"; } 2>/dev/null || continue
		r=${r##*) }
		# shellcheck disable=SC2086 # the fields after the command's name, split on purpose
		set -- $r
		[ "$4" = "$$" ] || continue
		r=${f#/proc/}
		[ "${r%/stat}" = "$$" ] || echo "${r%/stat} $3"
	done
}
dp_signal() { # SIG: to the command (the bootstrap forwards these), else its groups
	case $1 in
	TERM | INT | HUP | USR1 | USR2) kill -s "$1" "$bpid" 2>/dev/null ;;
	*)
		dp_session_pids | while read -r _ g; do
			[ "$g" = "$$" ] || echo "$g"
		done | sort -u | while read -r g; do kill -s "$1" -- "-$g" 2>/dev/null; done
		;;
	esac
}
# The attempts (the header says how they go).
while :; do
	[ "$maxr" -gt 0 ] && export DISPATCH_ATTEMPT=$attempt
	dp_cancelled
	dp_queue
	rm -f -- "$d/pending"
	echo "$(date +%s) ${lease_idx:--}" >"$d/lease.tmp" && mv -f "$d/lease.tmp" "$d/lease"
	if [ "$ng" -gt 0 ]; then
		export CUDA_VISIBLE_DEVICES="$lease_uuid" DISPATCH_GPUS="$lease_idx"
	elif [ "$ngpus" -gt 0 ]; then
		export CUDA_VISIBLE_DEVICES='' DISPATCH_GPUS=''
	fi
	# The stop signal GRACE s before the limit (GRACE: half of it at most).
	if [ "$limit" -gt 0 ]; then
		[ "$grace" -gt $((limit / 2)) ] && grace=$((limit / 2))
		t_start=$(date +%s)
		t_stop=$((t_start + limit - grace)) t_term=$((t_start + limit))
		export DISPATCH_STOP_SIGNAL=$stopsig DISPATCH_STOP_DEADLINE=$t_term
	fi
	(
		for x in $fds; do eval "exec $x<&-"; done
		trap - TERM INT
		# a job with an image: container.sh runs the bootstrap in it
		if [ -f "$d/container.sh" ]; then
			DISPATCH_JOB_ID=$id exec bash "$d/container.sh"
		fi
		DISPATCH_JOB_ID=$id exec bash "$d/bootstrap.sh"
	) &
	bpid=$!
	phase=0
	if [ "$limit" -gt 0 ]; then
		while kill -0 "$bpid" 2>/dev/null; do
			now=$(date +%s)
			if [ "$phase" = 0 ] && [ "$now" -ge "$t_stop" ] && [ "$t_stop" -lt "$t_term" ]; then
				dp_signal "$stopsig"
				phase=1
			fi
			if [ "$phase" -lt 2 ] && [ "$now" -ge "$t_term" ]; then
				[ -f "$d/cancelled" ] || : >"$d/timeout"
				dp_signal TERM
				phase=2
			fi
			if [ "$phase" = 2 ] && [ "$now" -ge $((t_term + 30)) ]; then
				# (listed first: a pipeline's own processes are in the session too)
				while read -r p _; do
					[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
				done <<<"$(dp_session_pids)"
				phase=3
			fi
			sleep 0.5 2>/dev/null || sleep 1
		done
	fi
	while :; do
		wait "$bpid"
		st=$?
		kill -0 "$bpid" 2>/dev/null || break
	done
	# Again: a trapped signal may have ended the wait (127, -1: no status).
	wait "$bpid" 2>/dev/null
	s2=$?
	case $s2 in '' | *[!0-9]* | 127) ;; *) st=$s2 ;; esac
	# Ended after the stop signal: by the time limit (the signal itself, or its
	# checkpoint and exit: a run restarts then, as on SLURM).
	if [ "$phase" -ge 1 ] && [ ! -f "$d/cancelled" ] && { [ "$st" != 0 ] || [ "$maxr" -gt 0 ]; }; then
		: >"$d/timeout"
	fi
	ev=
	if [ -f "$d/cancelled" ]; then ev=
	elif [ -f "$d/timeout" ]; then ev=timeout
	elif [ "$st" != 0 ]; then ev=error
	fi
	{ [ -n "$ev" ] && [ "$maxr" -gt 0 ] && [ ! -f "$d/idle.$id" ]; } || break
	case ,$restart_on, in *,"$ev",*) ;; *) break ;; esac
	word=FAILED
	[ "$ev" = timeout ] && word=TIMEOUT
	if [ "$attempt" -ge "$maxr" ]; then # as lib/jobs/sbatch_run.sh words it: FAILED
		why="gave up after $maxr restarts: $(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $2 }' "$d/attempts"); attempt $((attempt + 1)) ended $word"
		echo "$why" >"$d/gave-up"
		echo "dispatch: $why" >&2
		rm -f -- "$d/timeout"
		st=1
		break
	fi
	echo "$attempt $word $(date +%s) $(hostname)" >>"$d/attempts"
	echo "dispatch: attempt $((attempt + 1)) ended $word (exit status $st): restarting (restart $((attempt + 1)) of $maxr)" >&2
	attempt=$((attempt + 1))
	rm -f -- "$d/timeout" "$d/lease"
	dp_pending "restarted after $word (restart $attempt of $maxr): queued again"
	if [ -n "$queue" ]; then
		for x in $lfds; do dp_close "$x"; done
		dp_lock "$gfd" "$L/.lock" ||
			dp_fail "the lock of the GPU lock directory, $L/.lock, is held for over $lw s by $(dp_held "$L/.lock"): the job was not queued again"
		dp_ticket
		t0=$(date +%s)
		dp_rec pending "$ng" "" "$t0" ""
		flock -u "$gfd"
	fi
done
# A run's end for good, to its webhook (run_notify.sh: nothing without one).
if [ -f "$d/cancelled" ]; then
	dispatch_notify "$d" "$id" CANCELLED ""
elif [ -f "$d/gave-up" ]; then
	dispatch_notify "$d" "$id" FAILED "$(head -n 1 "$d/gave-up")"
elif [ -f "$d/timeout" ]; then
	dispatch_notify "$d" "$id" TIMEOUT ""
elif [ "$st" = 0 ]; then
	dispatch_notify "$d" "$id" COMPLETED ""
else
	dispatch_notify "$d" "$id" FAILED "exit status $st"
fi
dp_end "$st"
