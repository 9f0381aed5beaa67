# shellcheck shell=bash
# Part of a bootstrap.sh whose job has stages (--stage; jobscript.c's boot_command):
# dispatch_stages CMD... runs each stage in a subshell of its own, in order, and
# stops at the first that fails, with its status. Its start and end are marked in
# the log ("dispatch-stage 2/3 start", "dispatch-stage 2/3 exit 0") and, by the
# job's first task, in STAGE/stages.JOB (lines "I/N start EPOCH ATTEMPT", "I/N exit
# S EPOCH ATTEMPT"; JOB as the usage file's: SLURM's job id, ARRAYID_TASK for an
# array's task, a plain host's job id), which status reads (stages_read.sh). An
# attempt of a run starts at the stage after the last one that ended 0 in an
# earlier attempt's lines: the stage that was interrupted. (Not this attempt's: on
# several nodes the first task may have written them already when another task
# starts, which then skipped stages it never ran.)

dispatch_stages() {
	local ds_n=$# ds_i=0 ds_from=1 ds_st ds_first=
	if [ "${SLURM_PROCID:-0}" = 0 ]; then
		ds_first=1
	fi
	local ds_attempt=${DISPATCH_ATTEMPT:-0}
	# shellcheck disable=SC2154 # dispatch_stage_file: set before (jobscript.c's boot_stages)
	if [ -s "$dispatch_stage_file" ]; then
		ds_from=$(awk -v cur="$ds_attempt" '$2 == "exit" && $3 == 0 && $5 != cur {
			split($1, a, "/"); d = a[1] } END { print d + 1 }' \
			"$dispatch_stage_file" 2>/dev/null) || ds_from=1
	fi
	for ds_cmd; do
		ds_i=$((ds_i + 1))
		if [ "$ds_i" -lt "$ds_from" ]; then
			echo "dispatch-stage $ds_i/$ds_n done (an earlier attempt)"
			continue
		fi
		echo "dispatch-stage $ds_i/$ds_n start"
		if [ -n "$ds_first" ]; then
			printf '%s/%s start %s %s\n' "$ds_i" "$ds_n" "$(date +%s)" "$ds_attempt" \
				>>"$dispatch_stage_file"
		fi
		(eval "$ds_cmd")
		ds_st=$?
		if [ -n "$ds_first" ]; then
			printf '%s/%s exit %s %s %s\n' "$ds_i" "$ds_n" "$ds_st" "$(date +%s)" "$ds_attempt" \
				>>"$dispatch_stage_file"
		fi
		echo "dispatch-stage $ds_i/$ds_n exit $ds_st"
		if [ "$ds_st" != 0 ]; then
			return "$ds_st"
		fi
	done
	return 0
}
