/* SPDX-License-Identifier: MIT */
#include "sched/plain/plainjob.h"

#include <stdlib.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "gpu/nvidia_smi.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_queue.h"


/* Shell functions of the launcher and of the queue's listing (bash), about a lock
 * directory that other users of the box share, none of them trusted:
 *
 * dp_trust PATH: why PATH (or a directory above it) would let another user swap the
 * files in it: it must belong to root or to us, and a directory that others can write
 * must be sticky (then only a file's owner can rename or remove it). Prints nothing
 * when it can be trusted.
 *
 * dp_pids FILE: the processes /proc/locks names as holding (or having taken) a lock
 * on FILE: a lock that flock(1) took for a shell names that flock, gone since.
 * dp_held FILE: who holds FILE's lock (those processes that are still there, with
 * their users), and whose the file is: what a bounded wait that gave up says.
 *
 * dp_lock FD FILE [-s]: flock FD (FILE's), waiting while the lock changes hands (the
 * launchers' scans take turns), but not once one holder kept it $lw seconds, nor
 * over 60 seconds in all: then 1.
 *
 * dp_list LOCKDIR: the live records, "NAME|OWNER|RECORD" (OWNER: the file's owner,
 * whom the record must name as its USER to count). A record is live while its
 * launcher holds its lock; a stale one is removed where we may. Only regular files
 * with a record's name are opened, one line of at most 4096 bytes read. Run under
 * timeout: a file swapped for a FIFO after the check would block the open. */
static const char lease_fns_sh[] =
	"dp_trust() {\n"
	"\tlocal p=$1 c=() uid mode owner type name\n"
	"\twhile :; do\n"
	"\t\tc+=(\"$p\")\n"
	"\t\t[ \"$p\" = / ] && break\n"
	"\t\tp=${p%/*}\n"
	"\t\t[ -n \"$p\" ] || p=/\n"
	"\tdone\n"
	"\twhile IFS='|' read -r uid mode owner type name; do\n"
	"\t\tif [ \"$uid\" != 0 ] && [ \"$uid\" != \"$EUID\" ]; then\n"
	"\t\t\techo \"$name belongs to $owner, not to root or you\"; return\n"
	"\t\tfi\n"
	"\t\tif [ \"$type\" = directory ] && (((8#$mode & 8#022) && !(8#$mode & 8#1000))); then\n"
	"\t\t\techo \"$name is writable by other users and not sticky\"; return\n"
	"\t\tfi\n"
	"\tdone < <(stat -c '%u|%a|%U|%F|%n' -- \"${c[@]}\" 2>/dev/null)\n"
	"}\n"
	"dp_pids() {\n"
	"\tlocal dev ino key\n"
	"\tread -r dev ino < <(stat -c '%d %i' -- \"$1\" 2>/dev/null)\n"
	"\t[ -n \"$ino\" ] && [ -r /proc/locks ] || return 0\n"
	"\tkey=$(printf '%02x:%02x:%s' $(((dev >> 8) & 0xfff)) $(((dev & 0xff) | ((dev >> 12) & 0xfff00))) \"$ino\")\n"
	"\tawk -v k=\"$key\" '$2 != \"->\" && $6 == k { print $5 }' /proc/locks | sort -un | tr '\\n' ' '\n"
	"}\n"
	"dp_held() {\n"
	"\tlocal p u who=\n"
	"\tfor p in $(dp_pids \"$1\"); do\n"
	"\t\tu=$(stat -c %U \"/proc/$p\" 2>/dev/null) && who=\"$who${who:+, }$u's process $p\"\n"
	"\tdone\n"
	"\tprintf '%s (the file is %s'\"'\"'s)' \"${who:-a process that /proc/locks does not name}\" \\\n"
	"\t\t\"$(stat -c %U -- \"$1\" 2>/dev/null || echo '?')\"\n"
	"}\n"
	"dp_lock() {\n"
	"\tlocal same=0 all=0 last= cur\n"
	"\tuntil flock $3 -w 1 \"$1\"; do\n"
	"\t\tcur=$(dp_pids \"$2\")\n"
	"\t\tif [ \"$cur\" = \"$last\" ]; then same=$((same + 1)); else same=1 last=$cur; fi\n"
	"\t\tall=$((all + 1))\n"
	"\t\t[ \"$same\" -lt \"$lw\" ] && [ \"$all\" -lt 60 ] || return 1\n"
	"\tdone\n"
	"}\n"
	"dp_list() {\n"
	"\tlocal o y n f line\n"
	"\twhile IFS='|' read -r -d '' o y n; do\n"
	"\t\t[ \"$y\" = f ] || continue\n"
	"\t\tcase $n in job.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9].?*) ;; *) continue ;; esac\n"
	"\t\tcase ${n#job.??????????.} in *[!A-Za-z0-9._+@-]*) continue ;; esac\n"
	"\t\tf=$1/$n\n"
	"\t\t[ -f \"$f\" ] && [ ! -L \"$f\" ] || continue\n"
	"\t\t{ exec 7<\"$f\"; } 2>/dev/null || continue\n"
	"\t\tif flock -n 7; then\n"
	"\t\t\texec 7<&-\n"
	"\t\t\trm -f -- \"$f\" 2>/dev/null\n"
	"\t\t\tcontinue\n"
	"\t\tfi\n"
	"\t\tline=\n"
	"\t\tIFS= read -r -n 4096 line <&7\n"
	"\t\texec 7<&-\n"
	"\t\tprintf '%s|%s|%s\\n' \"$n\" \"$o\" \"$line\"\n"
	"\tdone < <(find \"$1\" -mindepth 1 -maxdepth 1 -name 'job.*' -printf '%u|%y|%f\\0' 2>/dev/null)\n"
	"}\n";

/* The launcher (bash: lease fds are more than sh's ten): the group leader of the job.
 * It records its pid (= the group id, setsid made it a session leader), ignores HUP as
 * nohup does, survives TERM (a handler, reset in the bootstrap, which forwards TERM to
 * the command) to record the exit status; queues for its lease (plainjob.h) and runs
 * the bootstrap with none of its lock fds, so that the locks last exactly as long as
 * the launcher. Arguments: STAGE ID NGPUS SHARE LOCKDIR MAXJOBS ALLOWED BUSY_MIB
 * [LOCKWAIT]. The lease functions (lease_fns_sh) come before it. */
static const char launcher_sh[] =
	"d=$1 id=$2 ng=$3 share=$4 L=$5 maxj=$6 allowed=$7 busy_mib=$8 lw=${9:-5}\n"
	"echo \"$$ $(date +%s)\" >\"$d/pid.tmp\" && mv -f \"$d/pid.tmp\" \"$d/pid\"\n"
	"trap \"\" HUP\n"
	"trap : TERM INT\n"
	"me=$(id -un 2>/dev/null || echo \"${USER:-?}\")\n"
	"dp_end() {\n"
	"	echo \"$1 $(date +%s)\" >\"$d/exit_status.tmp\" && mv -f \"$d/exit_status.tmp\" \"$d/exit_status\"\n"
	"	[ -n \"${rec:-}\" ] && rm -f -- \"$rec\"\n"
	"	rm -f -- \"$d/pending\"\n"
	"	exit 0\n"
	"}\n"
	"dp_fail() {\n"
	"	echo \"dispatch: $*\" >&2\n"
	"	printf '%s\\n' \"$*\" >\"$d/failed\"\n"
	"	dp_end 1\n"
	"}\n"
	"dp_cancelled() { [ -f \"$d/cancelled\" ] && dp_end 143; }\n"
	"# The host's GPUs: \"INDEX UUID\" lines.\n"
	"gpus=\n"
	"if command -v nvidia-smi >/dev/null 2>&1; then\n"
	"	gpus=$(nvidia-smi --query-gpu=uuid,name,memory.total --format=csv,noheader,nounits 2>/dev/null |\n"
	"		awk -F', *' 'NF >= 1 && $1 != \"\" { print n++, $1 }') || gpus=\n"
	"fi\n"
	"ngpus=0\n"
	"[ -n \"$gpus\" ] && ngpus=$(printf '%s\\n' \"$gpus\" | wc -l)\n"
	"if [ \"$ng\" -gt 0 ] && [ \"$ng\" -gt \"$ngpus\" ]; then\n"
	"	dp_fail \"the job asks for $ng GPU(s); $(hostname) has $ngpus\"\n"
	"fi\n"
	"fds=\n"
	"dp_open() { # VAR FILE: FILE (created 0644 if missing, never through a symlink) on a read fd\n"
	"	if [ -L \"$2\" ]; then dp_fail \"$2 is a symbolic link: refusing it\"; fi\n"
	"	[ -e \"$2\" ] || (umask 022; set -C; : >\"$2\") 2>/dev/null\n"
	"	if [ -L \"$2\" ] || [ ! -f \"$2\" ]; then dp_fail \"$2 is not a regular file: refusing it\"; fi\n"
	"	{ exec {dp_fd}<\"$2\"; } 2>/dev/null || dp_fail \"cannot open $2 (it is $(stat -c %U -- \"$2\" 2>/dev/null)'s, mode $(stat -c %a -- \"$2\" 2>/dev/null))\"\n"
	"	printf -v \"$1\" %s \"$dp_fd\"\n"
	"	fds=\"$fds $dp_fd\"\n"
	"}\n"
	"dp_close() { eval \"exec $1<&-\"; fds=$(printf '%s\\n' $fds | grep -vx \"$1\" | tr '\\n' ' '); }\n"
	"# The record, written only through the descriptor it was created with (a name in a\n"
	"# shared directory is never written through): USER|STATE|NGPUS|GPUS|SINCE|REASON\n"
	"dp_rec() { printf '%s|%s|%s|%s|%s|%s\\n' \"$me\" \"$@\" >\"/proc/self/fd/$rfd\"; }\n"
	"dp_pending() { # REASON: for status (STAGE/pending), once it changes\n"
	"	[ -f \"$d/pending\" ] && [ \"$(cat \"$d/pending\")\" = \"$1\" ] ||\n"
	"		{ printf '%s\\n' \"$1\" >\"$d/pending.tmp\" && mv -f \"$d/pending.tmp\" \"$d/pending\"; }\n"
	"}\n"
	"queue=1\n"
	"if ! command -v flock >/dev/null 2>&1; then\n"
	"	if [ \"$ng\" -gt 0 ] || [ \"$maxj\" -gt 0 ]; then\n"
	"		dp_fail \"flock (util-linux) not found on $(hostname): GPU leases and max_jobs need it\"\n"
	"	fi\n"
	"	queue=\n"
	"fi\n"
	"if [ -n \"$queue\" ]; then\n"
	"	if [ -L \"$L\" ]; then dp_fail \"the GPU lock directory $L is a symbolic link: refusing it\"; fi\n"
	"	[ -e \"$L\" ] || mkdir -m 1777 -- \"$L\" 2>/dev/null\n"
	"	if [ -L \"$L\" ]; then dp_fail \"the GPU lock directory $L is a symbolic link: refusing it\"; fi\n"
	"	[ -d \"$L\" ] || dp_fail \"cannot create the GPU lock directory $L\"\n"
	"	why=$(dp_trust \"$L\")\n"
	"	[ -n \"$why\" ] || why=$(dp_trust \"$(cd -P -- \"$L\" && pwd -P)\")\n"
	"	if [ -n \"$why\" ]; then\n"
	"		dp_fail \"the GPU lock directory $L is refused: $why, so another user could swap the records there (set gpu_lock_dir to a directory of yours, or have an admin make $L root-owned with mode 1777, as /tmp is)\"\n"
	"	fi\n"
	"	dp_open gfd \"$L/.lock\"\n"
	"	dp_lock \"$gfd\" \"$L/.lock\" ||\n"
	"		dp_fail \"the lock of the GPU lock directory, $L/.lock, is held for over $lw s by $(dp_held \"$L/.lock\"): the job was not queued\"\n"
	"	t=0\n"
	"	for f in \"$L\"/job.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9].*; do\n"
	"		[ -e \"$f\" ] || [ -L \"$f\" ] || continue\n"
	"		n=${f#\"$L\"/job.}\n"
	"		n=${n%%.*}\n"
	"		[ $((10#$n)) -gt \"$t\" ] && t=$((10#$n))\n"
	"	done\n"
	"	myt=$((t + 1))\n"
	"	rec=$(printf '%s/job.%010d.%s' \"$L\" \"$myt\" \"$id\")\n"
	"	# Created here (O_EXCL), mode 0600 until locked: no other process can open it first.\n"
	"	(umask 077; set -C; : >\"$rec\") 2>/dev/null || dp_fail \"cannot create $rec\"\n"
	"	{ exec {rfd}<>\"$rec\"; } 2>/dev/null || dp_fail \"cannot open $rec\"\n"
	"	[ -f \"/proc/self/fd/$rfd\" ] && [ -O \"/proc/self/fd/$rfd\" ] || dp_fail \"$rec is not a file of yours: refusing it\"\n"
	"	fds=\"$fds $rfd\"\n"
	"	flock -n \"$rfd\" || dp_fail \"cannot lock $rec: held by $(dp_held \"$rec\")\"\n"
	"	chmod 644 \"/proc/self/fd/$rfd\" || dp_fail \"cannot make $rec readable\"\n"
	"	t0=$(date +%s)\n"
	"	dp_rec pending \"$ng\" \"\" \"$t0\" \"\"\n"
	"	flock -u \"$gfd\"\n"
	"fi\n"
	"# who holds what, from the live records (under the lock directory's lock): fills\n"
	"# nrun, ahead (earlier pending jobs this one competes with), held_by (INDEX=USER).\n"
	"# A record that names another user than its file's owner is ignored.\n"
	"dp_scan() {\n"
	"	nrun=0 ahead=0 held_by= scan_err=\n"
	"	local out n o line u st g x tk\n"
	"	# (a job without GPUs and max_jobs waits for nothing: no scan)\n"
	"	[ \"$ng\" -gt 0 ] || [ \"$maxj\" -gt 0 ] || return 0\n"
	"	if ! out=$(timeout -k 1 \"$lw\" bash -c \"$(declare -f dp_list); dp_list \\\"\\$1\\\"\" dp-list \"$L\"); then\n"
	"		scan_err=\"the job records in $L could not be read within $lw s\"\n"
	"		return 1\n"
	"	fi\n"
	"	while IFS='|' read -r n o line; do\n"
	"		[ -n \"$n\" ] && [ \"$n\" != \"${rec##*/}\" ] || continue\n"
	"		IFS='|' read -r u st x g _ <<<\"$line\"\n"
	"		[ \"$u\" = \"$o\" ] || continue\n"
	"		tk=${n#job.}\n"
	"		tk=${tk%%.*}\n"
	"		if [ \"$st\" = running ]; then\n"
	"			nrun=$((nrun + 1))\n"
	"			for g in ${g//,/ }; do held_by=\"$held_by $g=$u\"; done\n"
	"		elif [ \"$st\" = pending ] && [ $((10#$tk)) -lt \"$myt\" ]; then\n"
	"			if [ \"$maxj\" -gt 0 ] || { [ \"$ng\" -gt 0 ] && [ \"${x:-0}\" -gt 0 ] 2>/dev/null; }; then\n"
	"				ahead=$((ahead + 1))\n"
	"			fi\n"
	"		fi\n"
	"	done <<<\"$out\"\n"
	"}\n"
	"dp_busy() { # the UUIDs of GPUs that processes use (as solve --check counts them)\n"
	"	nvidia-smi --query-compute-apps=gpu_uuid,used_memory --format=csv,noheader,nounits 2>/dev/null |\n"
	"		awk -F', *' -v t=\"$busy_mib\" '$1 != \"\" && !($2 ~ /^[0-9]+$/ && $2 + 0 < t) { print $1 }'\n"
	"}\n"
	"dp_allowed() { # INDEX UUID\n"
	"	[ -z \"$allowed\" ] && return 0\n"
	"	case \",$allowed,\" in *\",$1,\"* | *\",$2,\"*) return 0 ;; esac\n"
	"	return 1\n"
	"}\n"
	"dp_holders() { # the reason's \"(by a job of alice's and one of yours)\"\n"
	"	local w=() u i=0 out=\n"
	"	for u in $held_jobs; do\n"
	"		if [ \"$u\" = \"$me\" ]; then w+=(\"yours\"); else w+=(\"$u's\"); fi\n"
	"	done\n"
	"	for u in \"${w[@]}\"; do\n"
	"		if [ $i = 0 ]; then out=\"a job of $u\"\n"
	"		elif [ $i = $((${#w[@]} - 1)) ]; then out=\"$out and one of $u\"\n"
	"		else out=\"$out, one of $u\"; fi\n"
	"		i=$((i + 1))\n"
	"	done\n"
	"	printf '%s' \"$out\"\n"
	"}\n"
	"lease_idx= lease_uuid=\n"
	"if [ -n \"$queue\" ]; then\n"
	"	while :; do\n"
	"		dp_cancelled\n"
	"		busy=\n"
	"		[ \"$ng\" -gt 0 ] && [ \"$share\" != 1 ] && busy=$(dp_busy)\n"
	"		if ! dp_lock \"$gfd\" \"$L/.lock\"; then\n"
	"			dp_pending \"waiting for the lock of the GPU lock directory, $L/.lock, held for over $lw s by $(dp_held \"$L/.lock\")\"\n"
	"			continue\n"
	"		fi\n"
	"		reason=\n"
	"		if ! dp_scan; then\n"
	"			reason=$scan_err\n"
	"		elif [ \"$maxj\" -gt 0 ] && [ \"$nrun\" -ge \"$maxj\" ]; then\n"
	"			reason=\"waiting for a job slot: max_jobs $maxj, $nrun running\"\n"
	"		elif [ \"$ng\" -gt 0 ]; then\n"
	"			got=0 lease_idx= lease_uuid= lfds= nheld=0 nbusy=0 nall=0 held_jobs= outside=\n"
	"			while read -r i u; do\n"
	"				[ -n \"$u\" ] || continue\n"
	"				dp_allowed \"$i\" \"$u\" || continue\n"
	"				nall=$((nall + 1))\n"
	"				[ \"$got\" -ge \"$ng\" ] && continue\n"
	"				dp_open x \"$L/gpu.$u\"\n"
	"				if ! flock -n \"$x\"; then\n"
	"					dp_close \"$x\"\n"
	"					nheld=$((nheld + 1))\n"
	"					h_ok=\n"
	"					for h in $held_by; do\n"
	"						[ \"${h%%=*}\" = \"$i\" ] && held_jobs=\"$held_jobs ${h#*=}\" && h_ok=1\n"
	"					done\n"
	"					[ -n \"$h_ok\" ] || outside=\"$outside; GPU $i is locked outside dispatch's records, by $(dp_held \"$L/gpu.$u\")\"\n"
	"					continue\n"
	"				fi\n"
	"				if printf '%s\\n' \"$busy\" | grep -qxF -- \"$u\"; then\n"
	"					dp_close \"$x\"\n"
	"					nbusy=$((nbusy + 1))\n"
	"					continue\n"
	"				fi\n"
	"				got=$((got + 1))\n"
	"				lfds=\"$lfds $x\"\n"
	"				lease_idx=\"$lease_idx${lease_idx:+,}$i\"\n"
	"				lease_uuid=\"$lease_uuid${lease_uuid:+,}$u\"\n"
	"			done <<<\"$gpus\"\n"
	"			if [ \"$got\" -lt \"$ng\" ] || [ \"$ahead\" -gt 0 ]; then\n"
	"				for x in $lfds; do dp_close \"$x\"; done\n"
	"				lease_idx= lease_uuid=\n"
	"				s=s; [ \"$ng\" = 1 ] && s=\n"
	"				reason=\"waiting for $ng GPU$s: $nheld of $nall held\"\n"
	"				[ -n \"$held_jobs\" ] && reason=\"$reason (by $(dp_holders))\"\n"
	"				[ \"$nbusy\" -gt 0 ] && reason=\"$reason, $nbusy busy with other processes\"\n"
	"				[ \"$ahead\" -gt 0 ] && reason=\"$reason; $ahead earlier job(s) waiting\"\n"
	"				reason=\"$reason$outside\"\n"
	"			fi\n"
	"		elif [ \"$ahead\" -gt 0 ]; then\n"
	"			reason=\"waiting behind $ahead earlier job(s)\"\n"
	"		fi\n"
	"		if [ -z \"$reason\" ]; then\n"
	"			dp_cancelled\n"
	"			dp_rec running \"$ng\" \"$lease_idx\" \"$(date +%s)\" \"\"\n"
	"			flock -u \"$gfd\"\n"
	"			break\n"
	"		fi\n"
	"		dp_rec pending \"$ng\" \"\" \"$t0\" \"$reason\"\n"
	"		dp_pending \"$reason\"\n"
	"		flock -u \"$gfd\"\n"
	"		sleep 0.2 2>/dev/null || sleep 1\n"
	"	done\n"
	"fi\n"
	"rm -f -- \"$d/pending\"\n"
	"echo \"$(date +%s) ${lease_idx:--}\" >\"$d/lease.tmp\" && mv -f \"$d/lease.tmp\" \"$d/lease\"\n"
	"if [ \"$ng\" -gt 0 ]; then\n"
	"	export CUDA_VISIBLE_DEVICES=\"$lease_uuid\" DISPATCH_GPUS=\"$lease_idx\"\n"
	"elif [ \"$ngpus\" -gt 0 ]; then\n"
	"	export CUDA_VISIBLE_DEVICES= DISPATCH_GPUS=\n"
	"fi\n"
	"(\n"
	"	for x in $fds; do eval \"exec $x<&-\"; done\n"
	"	# a job with an image: container.sh runs the bootstrap in it\n"
	"	if [ -f \"$d/container.sh\" ]; then\n"
	"		DISPATCH_JOB_ID=$id exec bash \"$d/container.sh\"\n"
	"	fi\n"
	"	DISPATCH_JOB_ID=$id exec bash \"$d/bootstrap.sh\"\n"
	")\n"
	"st=$?\n"
	"dp_end \"$st\"\n";

void plainjob_launch_command(struct strbuf *sb, const char *stage_dir, const char *workdir,
			     const char *log_path, const char *job_id,
			     const struct plainjob_lease *lease)
{
	static const struct plainjob_lease none = { 0 };
	if (!lease)
		lease = &none;
	strbuf_adds(sb, "d=");
	sh_quote(sb, stage_dir);
	strbuf_adds(sb, "\nw=");
	sh_quote(sb, workdir);
	strbuf_adds(sb, "\nlog=");
	sh_quote(sb, log_path);
	strbuf_adds(sb, "\nid=");
	sh_quote(sb, job_id);
	strbuf_adds(sb, "\nlockdir=");
	sh_quote(sb, lease->lock_dir && *lease->lock_dir ? lease->lock_dir : PLAINJOB_LOCK_DIR);
	strbuf_adds(sb, "\nallowed=");
	sh_quote(sb, lease->allowed ? lease->allowed : "");
	strbuf_adds(sb,
		"\numask 077\n"
		"cd -- \"$w\" || exit 1\n"
		"pwd >\"$d/workdir\" || exit 1\n"
		"for c in setsid bash; do\n"
		"\tif ! command -v $c >/dev/null 2>&1; then\n"
		"\t\techo \"dispatch: $c not found on $(hostname): cannot start the job\" >&2\n"
		"\t\texit 1\n"
		"\tfi\n"
		"done\n"
		"cat >\"$d/launcher.sh\" <<'DISPATCH_LAUNCHER_END' || exit 1\n");
	strbuf_adds(sb, "# dispatch's launcher: the job's process group leader on a plain host "
		    "(lib/sched/plain/plainjob.h)\n");
	strbuf_adds(sb, lease_fns_sh);
	strbuf_adds(sb, launcher_sh);
	strbuf_adds(sb, "DISPATCH_LAUNCHER_END\n");
	strbuf_addf(sb, "setsid bash \"$d/launcher.sh\" \"$d\" \"$id\" %ld %d \"$lockdir\" %ld "
		    "\"$allowed\" %d %d </dev/null >>\"$log\" 2>&1 &\n",
		    lease->gpus > 0 ? lease->gpus : 0, lease->gpu_share ? 1 : 0,
		    lease->max_jobs > 0 ? lease->max_jobs : 0, NVIDIA_SMI_BUSY_MIB,
		    lease->lock_wait > 0 ? lease->lock_wait : PLAINJOB_LOCK_WAIT);
	/* Until the launcher has started the job, queued it or given up (a lock
	 * directory refused, too many GPUs asked for): the last is the submission's
	 * error. */
	strbuf_adds(sb,
		"i=0\n"
		"until [ -s \"$d/pid\" ] && { [ -f \"$d/lease\" ] || [ -f \"$d/pending\" ] ||\n"
		"\t[ -f \"$d/exit_status\" ]; } || [ \"$i\" -ge 100 ]; do\n"
		"\tsleep 0.1 2>/dev/null || sleep 1\n"
		"\ti=$((i + 1))\n"
		"done\n"
		"if [ ! -s \"$d/pid\" ]; then\n"
		"\techo \"dispatch: the job did not start: no $d/pid after 10 s\" >&2\n"
		"\texit 1\n"
		"fi\n"
		"if [ -f \"$d/failed\" ]; then\n"
		"\tsed 's/^/dispatch: /' \"$d/failed\" >&2\n"
		"\texit 1\n"
		"fi\n");
	marker_print(sb, MARK_PID, "\"$(cut -d ' ' -f 1 \"$d/pid\")\"");
}

void plainjob_pid_command(struct strbuf *sb, const char *stage_dir)
{
	_cleanup_strbuf_ struct strbuf word = STRBUF_INIT;
	strbuf_adds(&word, "\"$(cut -d ' ' -f 1 ");
	sh_quote(&word, stage_dir);
	strbuf_adds(&word, "/pid 2>/dev/null)\"");
	marker_print(sb, MARK_PID, word.buf);
}

long plainjob_parse_pid(const char *out)
{
	return marker_find_long(out, MARK_PID, 2, 0x7fffffff);
}

static void job_args(struct strbuf *sb, const char *fn, const struct plainjob_ref *j)
{
	strbuf_addf(sb, "%s ", fn);
	sh_quote(sb, j->id);
	strbuf_addch(sb, ' ');
	sh_quote(sb, j->stage_dir);
	strbuf_addf(sb, " %ld\n", j->pgid > 1 ? j->pgid : 0);
}

void plainjob_status_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n)
{
	marker_print(sb, MARK_NOW, "\"$(date +%s)\"");
	strbuf_adds(sb,
		"dispatch_q() {\n"
		"\tst=\n"
		"\tif [ -f \"$2/pid\" ]; then\n"
		"\t\tst=$(cut -d ' ' -f 2 \"$2/pid\")\n"
		"\tfi\n"
		"\tc=\n"
		"\tif [ -f \"$2/cancelled\" ]; then\n"
		"\t\tc=cancelled\n"
		"\tfi\n"
		"\tg=\n"
		"\tif [ -f \"$2/lease\" ]; then\n"
		"\t\tread -r st g <\"$2/lease\"\n"
		"\tfi\n"
		"\tp=\n"
		"\tif [ -f \"$2/exit_status\" ]; then\n"
		"\t\ts=\"exited $(cat \"$2/exit_status\")\"\n"
		"\telif [ \"$3\" -gt 1 ] && kill -0 \"-$3\" 2>/dev/null; then\n"
		"\t\ts=running\n"
		"\t\tif [ -f \"$2/pending\" ] && [ ! -f \"$2/lease\" ]; then\n"
		"\t\t\ts=pending\n"
		"\t\t\tp=$(head -n 1 \"$2/pending\")\n"
		"\t\tfi\n"
		"\telse\n"
		"\t\ts=gone\n"
		"\tfi\n"
		"\tif [ -f \"$2/failed\" ]; then\n"
		"\t\tp=$(head -n 1 \"$2/failed\")\n"
		"\tfi\n"
		"\tprintf '" MARK_JOB " %s|%s|%s|%s|%s|%s\\n' \"$1\" \"$st\" \"$c\" \"$s\" \"${g:--}\" \"$p\"\n"
		"}\n");
	for (size_t i = 0; i < n; i++)
		job_args(sb, "dispatch_q", &jobs[i]);
}

static void set_exit(struct plainjob_status *s, long status)
{
	s->exit_code = (int)status;
	s->exit_signal = status > 128 && status < 128 + 65 ? (int)status - 128 : 0;
}

size_t plainjob_parse_status(const char *out, struct plainjob_status **res)
{
	long now = -1;
	size_t n = 0;
	*res = NULL;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		long t;
		if ((v = marker_value(line, MARK_NOW))) {
			if (parse_long(v, 0, 0x7fffffffffffL, &t))
				now = t;
			continue;
		}
		if (!(v = marker_value(line, MARK_JOB)) || !*v)
			continue;
		/* ID|START|cancelled|pending, running, exited STATUS END or gone|GPUS|REASON
		 * (START: the bootstrap's start once the lease file is there) */
		char *f[6], *s = line + (v - line);
		size_t k = 0;
		for (; k < 5; k++) {
			char *bar = strchr(s, '|');
			if (!bar)
				break;
			*bar = '\0';
			f[k] = s;
			s = bar + 1;
		}
		if (k < 3 || !f[0][0])
			continue;
		if (k == 3) { /* the four fields of a launcher without leases */
			f[3] = s;
			f[4] = (char *)"-";
			f[5] = (char *)"";
		} else if (k == 4) {
			f[4] = s;
			f[5] = (char *)"";
		} else {
			f[5] = s;
		}
		struct plainjob_status st = { .exit_code = -1, .exit_signal = -1, .elapsed = -1 };
		long start = -1, status, end;
		if (!parse_long(f[1], 0, 0x7fffffffffffL, &start))
			start = -1;
		bool cancelled = streq(f[2], "cancelled");
		char word[16];
		if (streq(f[3], "running")) {
			st.state = "RUNNING";
			if (start >= 0 && now >= start)
				st.elapsed = now - start;
		} else if (streq(f[3], "pending")) {
			st.state = "PENDING";
			st.elapsed = 0;
		} else if (sscanf(f[3], "exited %ld %ld", &status, &end) == 2 && status >= 0 &&
			   status <= 255) {
			set_exit(&st, status);
			st.state = cancelled ? "CANCELLED" : status == 0 ? "COMPLETED" : "FAILED";
			if (start >= 0 && end >= start)
				st.elapsed = end - start;
		} else if (sscanf(f[3], "%15s", word) == 1 && streq(word, "gone")) {
			st.state = cancelled ? "CANCELLED" : "UNKNOWN";
		} else {
			continue;
		}
		st.gpus = xstrdup(streq(f[4], "-") ? "" : f[4]);
		st.reason = xstrdup(f[5]);
		st.id = xstrdup(f[0]);
		*res = xrealloc(*res, (n + 1) * sizeof(**res));
		(*res)[n++] = st;
	}
	line_iter_release(&it);
	return n;
}

void plainjob_status_free(struct plainjob_status *res, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(res[i].id);
		free(res[i].gpus);
		free(res[i].reason);
	}
	free(res);
}

void plainjob_cancel_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n)
{
	/* A container outlives the process group (podman's conmon is a session of its
	 * own): stop it (TERM, KILL after 10 s) and remove it by its name. */
	strbuf_adds(sb,
		"dispatch_c_container() {\n"
		"\t[ -f \"$2/container.sh\" ] || return 0\n"
		"\tfor rt in podman docker; do\n"
		"\t\tif grep -q \"^exec $rt run \" \"$2/container.sh\"; then\n"
		"\t\t\t$rt stop -t 10 \"dispatch-$1\" >/dev/null 2>&1\n"
		"\t\t\t$rt rm -f \"dispatch-$1\" >/dev/null 2>&1\n"
		"\t\tfi\n"
		"\tdone\n"
		"\treturn 0\n"
		"}\n"
		"dispatch_c() {\n"
		"\tif [ -f \"$2/exit_status\" ]; then\n"
		"\t\tprintf '" MARK_CANCEL " %s ended\\n' \"$1\"\n"
		"\telif [ \"$3\" -gt 1 ] && kill -0 \"-$3\" 2>/dev/null; then\n"
		"\t\t: >\"$2/cancelled\"\n"
		"\t\tkill -TERM \"-$3\" 2>/dev/null\n"
		"\t\tdispatch_c_container \"$1\" \"$2\"\n"
		"\t\tprintf '" MARK_CANCEL " %s signalled\\n' \"$1\"\n"
		"\telse\n"
		"\t\tprintf '" MARK_CANCEL " %s gone\\n' \"$1\"\n"
		"\tfi\n"
		"}\n");
	for (size_t i = 0; i < n; i++)
		job_args(sb, "dispatch_c", &jobs[i]);
}

const char *plainjob_parse_cancel(const char *out, const char *id)
{
	struct line_iter it = LINE_ITER_INIT(out);
	const char *outcome = NULL;
	size_t n = strlen(id);
	for (char *line; (line = line_next(&it)) && !outcome;) {
		const char *v = marker_value(line, MARK_CANCEL);
		if (!v || strncmp(v, id, n) != 0 || v[n] != ' ')
			continue;
		v += n + 1;
		outcome = startswith(v, "signalled") ? "signalled"
			: startswith(v, "ended") ? "ended" : "gone";
	}
	line_iter_release(&it);
	return outcome;
}

/* The listing of plainjob_queue_command (bash, run under timeout): under the lock
 * directory's lock (shared: no launcher changes its record meanwhile, taken within
 * LOCKWAIT seconds or refused with who holds it), each live record as
 * "ID|OWNER|RECORD". Arguments: LOCKDIR LOCKWAIT. */
static const char queue_sh[] =
	"L=$1 lw=$2\n"
	"if [ -L \"$L/.lock\" ] || [ ! -f \"$L/.lock\" ]; then\n"
	"\techo \"dispatch: $L/.lock is not a regular file: refusing it\" >&2\n"
	"\texit 1\n"
	"fi\n"
	"exec 8<\"$L/.lock\" || exit 1\n"
	"if ! dp_lock 8 \"$L/.lock\" -s; then\n"
	"\techo \"dispatch: the lock of the GPU lock directory, $L/.lock, is held for over $lw s by $(dp_held \"$L/.lock\"): cannot list the jobs there\" >&2\n"
	"\texit 1\n"
	"fi\n"
	"dp_list \"$L\" | sort | while IFS= read -r r; do\n"
	"\tprintf '" MARK_QJOB " %s\\n' \"${r#job.??????????.}\"\n"
	"done\n";

void plainjob_queue_command(struct strbuf *sb, const char *lock_dir)
{
	_cleanup_strbuf_ struct strbuf script = STRBUF_INIT;
	strbuf_adds(&script, lease_fns_sh);
	strbuf_adds(&script, queue_sh);
	strbuf_adds(sb, "L=");
	sh_quote(sb, lock_dir && *lock_dir ? lock_dir : PLAINJOB_LOCK_DIR);
	strbuf_adds(sb, "\n");
	marker_print(sb, MARK_USER, "\"$(id -un)\"");
	marker_print(sb, MARK_NOW, "\"$(date +%s)\"");
	/* bounded as a whole (a listing never hangs on what another user left there) */
	strbuf_adds(sb,
		"if [ -d \"$L\" ] && [ ! -L \"$L\" ] && { [ -e \"$L/.lock\" ] || [ -L \"$L/.lock\" ]; }; then\n"
		"\tfor c in flock timeout bash; do\n"
		"\t\tif ! command -v $c >/dev/null 2>&1; then\n"
		"\t\t\techo \"dispatch: $c not found on $(hostname)\" >&2\n"
		"\t\t\texit 1\n"
		"\t\tfi\n"
		"\tdone\n");
	strbuf_addf(sb, "\ttimeout -k 1 %d bash -c ", 2 * PLAINJOB_LOCK_WAIT + 5);
	sh_quote(sb, script.buf);
	strbuf_addf(sb, " dispatch-queue \"$L\" %d\n", PLAINJOB_LOCK_WAIT);
	strbuf_adds(sb,
		"\ts=$?\n"
		"\tif [ $s = 124 ] || [ $s = 137 ]; then\n");
	strbuf_addf(sb, "\t\techo \"dispatch: listing the jobs in $L took over %d s: a record there may not be a regular file\" >&2\n",
		    2 * PLAINJOB_LOCK_WAIT + 5);
	strbuf_adds(sb,
		"\tfi\n"
		"\t[ $s = 0 ] || exit 1\n"
		"fi\n");
	marker_print(sb, MARK_END, "0");
}

/* "NAME-YYYYMMDD-HHMMSS-NONCE": NAME (jobscript_stage_name) */
static char *name_of(const char *id)
{
	char *name = xstrdup(id);
	for (int k = 0; k < 3; k++) {
		char *dash = strrchr(name, '-');
		if (!dash)
			break;
		*dash = '\0';
	}
	return name;
}

int plainjob_parse_queue(const char *out, const struct slurm_queue_filter *f,
			 struct slurm_queue *q, struct dp_error *err)
{
	memset(q, 0, sizeof(*q));
	long now = -1, t;
	bool end = false;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		if ((v = marker_value(line, MARK_NOW))) {
			if (parse_long(v, 0, 0x7fffffffffffL, &t))
				now = t;
			continue;
		}
		if ((v = marker_value(line, MARK_USER))) {
			free(q->user);
			q->user = xstrdup(v);
			continue;
		}
		if (marker_value(line, MARK_END)) {
			end = true;
			continue;
		}
		if (!(v = marker_value(line, MARK_QJOB)) || !*v)
			continue;
		/* ID|OWNER|USER|STATE|NGPUS|GPUS|SINCE|REASON (OWNER: the record file's) */
		char *fl[8], *s = line + (v - line);
		size_t k = 0;
		for (; k < 7; k++) {
			char *bar = strchr(s, '|');
			if (!bar)
				break;
			*bar = '\0';
			fl[k] = s;
			s = bar + 1;
		}
		if (k < 7 || !fl[0][0] || !fl[1][0])
			continue;
		fl[7] = s;
		bool running = streq(fl[3], "running");
		if (!running && !streq(fl[3], "pending"))
			continue;
		long since = -1;
		if (!parse_long(fl[6], 0, 0x7fffffffffffL, &since))
			since = -1;
		/* A record that names another user than its owner: shown as what it is (the
		 * launchers ignore it), under its owner's name. */
		bool forged = !streq(fl[1], fl[2]);
		struct slurm_qjob j = {
			.id = xstrdup(fl[0]),
			.partition = xstrdup(""),
			.user = xstrdup(fl[1]),
			.name = name_of(fl[0]),
			.state = xstrdup(forged ? "IGNORED" : running ? "RUNNING" : "PENDING"),
			.elapsed = slurm_format_seconds(running && !forged && since >= 0 && now >= since
							? now - since : 0),
			.node_count = 1,
			.nodes = xstrdup(""),
			.reason = forged ? xasprintf("a record of %s's that claims to be %s's: ignored",
						     fl[1], fl[2])
				: xstrdup(running ? "None" : fl[7]),
			.gpus = xstrdup(forged ? "" : fl[5]),
		};
		struct slurm_queue_filter g = *f;
		if (forged && !g.states)
			g.states = "all"; /* shown unless the states asked leave it out */
		if (!slurm_queue_wanted(&g, q, &j)) {
			slurm_qjob_release(&j);
			continue;
		}
		q->jobs = xrealloc(q->jobs, (q->n + 1) * sizeof(*q->jobs));
		q->jobs[q->n++] = j;
	}
	line_iter_release(&it);
	q->format = xstrdup("plain");
	q->squeue_status = end ? 0 : -1;
	if (!end)
		return dp_err(err, DPE_FAIL, "the host did not list its queue to the end");
	return 0;
}
