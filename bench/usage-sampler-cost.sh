#!/bin/bash
# bench/usage-sampler-cost.sh [N] [GPUS]: what the job's usage sampler
# (lib/jobs/usage_sample.sh, submit --sample) costs per sample on this machine, its
# own part: the shell loop that reads nvidia-smi's rows, picks the job's GPUs, reads
# /proc for the job's processes and appends the line. nvidia-smi is a fake here
# (GPUS rows every 0.1 s, default 8 GPUs), its CPU not counted: the real one's cost
# per sample of a long-lived `nvidia-smi -lms` is bench/gpu-sampler-cost.sh's (about
# 1 ms on an H200). N samples (default 200) with GPUs, N/10 without (CPU and memory
# alone, one a second), and the bytes a node's file grows by in a day at one sample
# per 30 s. The CPU is the sampler's process group's (user+sys, with the children it
# waited for) read from /proc just before it is stopped. Changes nothing outside a
# temporary directory.
set -u
N=${1:-200}
G=${2:-8}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
{
	echo '#!/bin/bash'
	echo 'case "$*" in'
	echo "--help-query-gpu) echo '\"clocks_event_reasons.active\"'; exit 0 ;;"
	echo "*--query-gpu=uuid\\ *) for ((i = 0; i < $G; i++)); do echo \"GPU-\$i\"; done; exit 0 ;;"
	echo 'esac'
	echo 'while :; do'
	echo "	for ((i = 0; i < $G; i++)); do"
	echo '		echo "GPU-$i, $i, 97, 40833, 312.45, 61, 0x0000000000000004"'
	echo '	done'
	echo '	sleep 0.1'
	echo 'done'
} >"$tmp/bin/nvidia-smi"
chmod 755 "$tmp/bin/nvidia-smi"
# the sampler's functions: usage_sample.sh past its header
awk 'body { print } /^$/ && !body { body = 1 }' "$here/lib/jobs/usage_sample.sh" >"$tmp/sample.sh"
tck=$(getconf CLK_TCK)

# group_ms PGID: the CPU of the processes of group PGID (user+sys, with the children
# they waited for), but the fake nvidia-smi and its sleeps, in ms
group_ms() {
	local f st ticks=0
	for f in /proc/[0-9]*/stat; do
		read -r -a st <"$f" 2>/dev/null || continue
		# (no comm here has a space: bash, cat, awk, sleep, nvidia-smi)
		[ "${st[4]}" = "$1" ] || continue
		[ "${st[1]}" = "(nvidia-smi)" ] && continue
		if [ "${st[1]}" = "(sleep)" ] && [ "$(cat "/proc/${st[3]}/comm" 2>/dev/null)" = nvidia-smi ]; then
			continue
		fi
		ticks=$((ticks + st[13] + st[14] + st[15] + st[16]))
	done
	echo $((ticks * 1000 / tck))
}

# run CUDA_VISIBLE_DEVICES SAMPLES: the sampler in a group of its own until its file
# has SAMPLES lines; prints "LINES MS BYTES"
run() {
	local p i=0 n=0 ms
	rm -f "$tmp/usage"
	CUDA_VISIBLE_DEVICES=$1 PATH="$tmp/bin:$PATH" setsid bash -c \
		'. "$1"; dispatch_sample 1 "$2"' _ "$tmp/sample.sh" "$tmp/usage" &
	p=$!
	while [ "$n" -lt "$2" ] && [ "$i" -lt 6000 ]; do
		sleep 0.1
		n=$(cat "$tmp/usage" 2>/dev/null | grep -c '^[0-9]')
		i=$((i + 1))
	done
	ms=$(group_ms "$p")
	kill -- "-$p" 2>/dev/null
	wait "$p" 2>/dev/null
	echo "$n $ms $(grep '^[0-9]' "$tmp/usage" | wc -c)"
}

report() { # LABEL LINES MS BYTES
	awk -v t="$1" -v l="$2" -v c="$3" -v b="$4" 'BEGIN {
		ms = c / l
		printf "%-16s %4d samples: %6.2f ms CPU per sample -> %.4f %% of a core at one per 30 s; %d bytes a line, %.2f MB a day\n",
			t, l, ms, ms / 30000 * 100, b / l, b / l * 2880 / 1e6 }'
}

printf '%s | %s CPUs | %s GPUs (a fake nvidia-smi: its CPU not counted)\n' "$(uname -sr)" "$(nproc)" "$G"
read -r l c b < <(run "$(seq -s, -f 'GPU-%g' 0 $((G - 1)))" "$N")
report "sampler, $G GPUs" "$l" "$c" "$b"
read -r l c b < <(run "" "$((N / 10))")
report "sampler, no GPU" "$l" "$c" "$b"
