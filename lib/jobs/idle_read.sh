# shellcheck shell=sh
# dispatch_idle_read ID STAGE: why the sampler ended job ID (--idle-timeout: its
# STAGE/idle.ID, an array's tasks' STAGE/idle.ID_TASK; usage_sample.sh writes it),
# a MARK_IDLE line "JOB|WHY" each. job_usage.c reads the marks.

dispatch_idle_read() {
	for du_f in "$2/idle.$1" "$2/idle.$1"_*; do
		[ -f "$du_f" ] || continue
		printf '@MARK_IDLE@ %s|%s\n' "${du_f##*/idle.}" "$(head -n 1 "$du_f")"
	done
}
