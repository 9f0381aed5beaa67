# shellcheck shell=bash
# Part of every bootstrap.sh (jobscript.c's boot_traps, before forward_signals, which
# traps the signals with dispatch_forward): cleaning up on exit, and the function that
# forwards a signal to the command's process group.


# Clean up on exit; forward signals to the command's process group (before the
# command starts, a signal ends the script).
dispatch_tmp=
dispatch_uv_tmp=
dispatch_child=
dispatch_sampler=
# shellcheck disable=SC2317 # called from the traps
dispatch_cleanup() {
	if [ -n "$dispatch_sampler" ]; then
		# the usage sampler's group, and its last line: the CPU time once the
		# command's processes were waited for (usage_sample.sh)
		kill -- "-$dispatch_sampler" 2>/dev/null || kill "$dispatch_sampler" 2>/dev/null || true
		# shellcheck disable=SC2154 # dispatch_usage: set with dispatch_sampler
		{ printf '%s 0 %s 0\n' "$(date +%s)" "$(dispatch_sample_procs)" >>"$dispatch_usage"; } 2>/dev/null || true
	fi
	if [ -n "$dispatch_tmp" ]; then
		rm -rf -- "$dispatch_tmp"
	fi
	if [ -n "$dispatch_uv_tmp" ]; then
		rm -rf -- "$dispatch_uv_tmp"
	fi
}
trap dispatch_cleanup EXIT
# shellcheck disable=SC2317 # called from the traps
dispatch_forward() {
	if [ -z "$dispatch_child" ]; then
		exit "$2"
	fi
	kill -s "$1" -- "-$dispatch_child" 2>/dev/null ||
		kill -s "$1" "$dispatch_child" 2>/dev/null || true
}
