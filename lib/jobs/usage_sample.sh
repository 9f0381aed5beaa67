# shellcheck shell=bash
# Part of a bootstrap.sh (jobscript.c's boot_usage, unless --sample 0): the sampler
# that records what the job did on this node, started beside the command in a process
# group of its own (dispatch_cleanup ends it). dispatch_sample S FILE appends a line
# to FILE every S seconds:
#   EPOCH DT CPU RSS NGPUS [UUID UTIL MEM POWER TEMP THROTTLE]...
# DT the seconds the line covers, CPU the CPU seconds of this bootstrap's process
# tree so far (utime, stime and the waited children's, from /proc), RSS its resident
# KiB now; per GPU of the job (keyed by UUID: a plain host's lease names them in
# CUDA_VISIBLE_DEVICES, SLURM's step by minor number in SLURM_STEP_GPUS or
# SLURM_JOB_GPUS) utilisation %, memory used MiB, power W, temperature C and the
# throttle reasons' mask; "-" for what nvidia-smi does not say. One long-lived
# `nvidia-smi -lms` (bench/gpu-sampler-cost.sh: a spawn per sample costs 20 to 40
# times more); without nvidia-smi or GPUs, CPU and memory alone. Each line is one
# append (a killed job leaves whole lines); once a day the lines older than a day
# are merged in pairs (dispatch_sample_merge), so a long job's file stays bounded.
# A line "# dispatch-usage 1 S CORES MEM_MIB" starts each sampler's lines: what SLURM
# allocated on the node ("-" elsewhere). A reader (usage_read.sh) skips any line it
# cannot read.

ds_tck=$(getconf CLK_TCK 2>/dev/null) || ds_tck=100
ds_pgkb=$(($(getconf PAGESIZE 2>/dev/null || echo 4096) / 1024))

# The bootstrap's process tree: "CPU_SECONDS RSS_KIB".
dispatch_sample_procs() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$$" -v tck="$ds_tck" -v pg="$ds_pgkb" '
	{ pid = $1; sub(/^.*\) /, ""); pp[pid] = $2; c[pid] = $12 + $13 + $14 + $15; r[pid] = $22 }
	END {
		mine[root] = 1
		do {
			more = 0
			for (p in pp)
				if (!(p in mine) && (pp[p] in mine)) { mine[p] = 1; more = 1 }
		} while (more)
		for (p in mine) { cpu += c[p]; rss += r[p] }
		printf "%.2f %d\n", cpu / tck, rss * pg
	}'
}

# dispatch_sample_merge FILE: the lines older than a day merged in pairs (the later's
# time, both spans, utilisation and power weighted by span, the peaks, a throttle
# mask that is not zero); lines whose GPUs differ are kept as they are.
dispatch_sample_merge() {
	awk -v old=$(($(date +%s) - 86400)) '
	function num(v) { return v != "-" }
	function wmean(a, da, b, db) {
		if (!num(a)) return b
		if (!num(b)) return a
		return sprintf("%.1f", (a * da + b * db) / (da + db))
	}
	function peak(a, b) { return !num(a) ? b : !num(b) ? a : (b + 0 > a + 0 ? b : a) }
	function merge(a, b, x, y, n, i, o) {
		n = split(b, y, " ")
		if (split(a, x, " ") != n || x[5] != y[5]) return a "\n" b
		o = y[1] " " (x[2] + y[2]) " " y[3] " " peak(x[4], y[4]) " " y[5]
		for (i = 6; i + 5 <= n; i += 6)
			o = o " " y[i] " " wmean(x[i + 1], x[2], y[i + 1], y[2]) " " peak(x[i + 2], y[i + 2]) \
			    " " wmean(x[i + 3], x[2], y[i + 3], y[2]) " " peak(x[i + 4], y[i + 4]) \
			    " " (y[i + 5] ~ /^0x0*$/ || y[i + 5] == "-" ? x[i + 5] : y[i + 5])
		return o
	}
	/^#/ { if (held) print h; held = 0; print; next }
	$1 + 0 < old && held { print merge(h, $0); held = 0; next }
	$1 + 0 < old { h = $0; held = 1; next }
	{ if (held) print h; held = 0; print }
	END { if (held) print h }' "$1" >"$1.merge" && mv -f -- "$1.merge" "$1"
}

# One GPU row of nvidia-smi ("UUID, MINOR, UTIL, MEM, POWER, TEMP, MASK") as the
# line's part in ds_row, when it is one of the job's GPUs (ds_uuids, else
# ds_minors); false when not (no subshell: it runs once per GPU and sample).
dispatch_sample_gpu() {
	local u=${1%%,*} m a
	m=${1#*, }
	m=${m%%,*}
	a=${1#*, *, }
	if [ -n "$ds_uuids" ]; then
		case ",$ds_uuids," in *",$u,"*) ;; *) return 1 ;; esac
	else
		case ",$ds_minors," in *",$m,"*) ;; *) return 1 ;; esac
	fi
	local IFS=,
	set -f
	# shellcheck disable=SC2086 # the row's fields, split on ','
	set -- $a
	set +f
	[ $# -eq 5 ] || return 1
	for a; do
		a=${a# }
		case $a in '' | *[!0-9A-Fa-fx.]*) a=- ;; esac
		u="$u $a"
	done
	ds_row=$u
	# busy: at or over --idle-below, or not known (MIG: never idle on no evidence)
	case $1 in
	*[!0-9\ ]* | '' | ' ') ds_busy=1 ;;
	*) [ "${1# }" -lt "$ds_below" ] || ds_busy=1 ;;
	esac
}

# dispatch_sample_idle NOW: --idle-timeout. Once this node's GPUs all stayed under
# --idle-below for ds_idle seconds (not counting the job's first
# DISPATCH_IDLE_GRACE seconds, default 600), its vote STAGE/idle-vote.KEY.NODE is
# there (gone again when a GPU is busy); the first node, once every node of the job
# voted, writes why to STAGE/idle.KEY and ends the job (TERM to the bootstrap: on
# SLURM, srun's --kill-on-bad-exit ends the other nodes). The run's wrapper and the
# plain launcher do not restart a job that ended so.
dispatch_sample_idle() {
	local votes
	if [ "$ds_busy" = 1 ] || [ $(($1 - ds_t0)) -lt "${DISPATCH_IDLE_GRACE:-600}" ]; then
		ds_since=
		rm -f -- "$ds_vote"
		return
	fi
	[ -n "$ds_since" ] || ds_since=$ds_last
	[ $(($1 - ds_since)) -ge "$ds_idle" ] || return
	[ -f "$ds_vote" ] || echo "$1" >"$ds_vote"
	[ "${SLURM_NODEID:-0}" = 0 ] || return
	votes=$(find "${ds_vote%/*}" -maxdepth 1 -name "idle-vote.$ds_key.*" 2>/dev/null | wc -l)
	[ "$votes" -ge "${SLURM_JOB_NUM_NODES:-1}" ] || return
	# written once, whole (a temporary file renamed): the sampler goes on until
	# the bootstrap's end kills it, maybe in the middle of a write
	if [ ! -f "${ds_vote%/*}/idle.$ds_key" ]; then
		if [ $((ds_idle % 60)) = 0 ]; then
			echo "idle: GPUs under $ds_below% for $((ds_idle / 60)) min"
		else
			echo "idle: GPUs under $ds_below% for $ds_idle s"
		fi >"${ds_vote%/*}/.idle.$ds_key.$$" &&
			mv -f -- "${ds_vote%/*}/.idle.$ds_key.$$" "${ds_vote%/*}/idle.$ds_key"
	fi
	kill -s TERM "$$" 2>/dev/null
}

# dispatch_sample S FILE [IDLE BELOW]: FILE is STAGE/usage.KEY.NODE; IDLE, BELOW
# --idle-timeout's seconds (0: none) and --idle-below.
dispatch_sample() {
	local s=$1 f=$2 q line rows='' ng=0 n=0 all=0 last lines=0 now
	ds_idle=${3:-0} ds_below=${4:-5} ds_since='' ds_t0=$(date +%s)
	ds_key=${f##*/usage.}
	ds_vote=${f%/*}/idle-vote.$ds_key
	ds_key=${ds_key%%.*}
	rm -f -- "$ds_vote"
	ds_uuids='' ds_minors=''
	case ${CUDA_VISIBLE_DEVICES:-} in
	*GPU-*) ds_uuids=$CUDA_VISIBLE_DEVICES ;;
	*) [ -z "${SLURM_JOB_ID:-}" ] || ds_minors=${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-}} ;;
	esac
	last=$(date +%s)
	# what SLURM allocated on this node, for the efficiencies ("-" elsewhere)
	q=${SLURM_MEM_PER_NODE:-}
	if [ -z "$q" ] && [ -n "${SLURM_MEM_PER_CPU:-}" ] && [ -n "${SLURM_CPUS_ON_NODE:-}" ]; then
		q=$((SLURM_MEM_PER_CPU * SLURM_CPUS_ON_NODE))
	fi
	printf '# dispatch-usage 1 %s %s %s\n' "$s" "${SLURM_CPUS_ON_NODE:--}" "${q:--}" >>"$f"
	if [ -n "$ds_uuids$ds_minors" ] && command -v nvidia-smi >/dev/null 2>&1 &&
		q=$(nvidia-smi --help-query-gpu 2>/dev/null); then
		case $q in
		*'"clocks_event_reasons.active"'*) q=clocks_event_reasons.active ;;
		*) q=clocks_throttle_reasons.active ;;
		esac
		all=$(nvidia-smi --query-gpu=uuid --format=csv,noheader,nounits 2>/dev/null | wc -l)
	fi
	if [ "$all" -gt 0 ]; then
		nvidia-smi --query-gpu="uuid,minor_number,utilization.gpu,memory.used,power.draw,temperature.gpu,$q" \
			--format=csv,noheader,nounits -lms $((s * 1000)) 2>/dev/null
	else
		while kill -0 "$$" 2>/dev/null; do
			echo
			sleep "$s"
		done
	fi | while IFS= read -r line; do
		[ "$n" -gt 0 ] || ds_busy=0
		if [ -n "$line" ] && dispatch_sample_gpu "$line"; then
			rows="$rows $ds_row"
			ng=$((ng + 1))
		fi
		n=$((n + 1))
		[ "$n" -ge "$all" ] || continue
		now=$(date +%s)
		printf '%s %s %s %s%s\n' "$now" $((now - last > 0 ? now - last : s)) \
			"$(dispatch_sample_procs)" "$ng" "$rows" >>"$f"
		ds_last=$last
		if [ "$ds_idle" -gt 0 ] && [ "$ng" -gt 0 ]; then
			dispatch_sample_idle "$now"
		fi
		last=$now rows='' ng=0 n=0 lines=$((lines + 1))
		if [ $((lines % (86400 / s + 1))) -eq 0 ]; then
			dispatch_sample_merge "$f"
		fi
		kill -0 "$$" 2>/dev/null || break
	done
}
