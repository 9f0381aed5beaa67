# shellcheck shell=sh
# dispatch_stages_read ID STAGE: where job ID's stages stand (--stage: its
# STAGE/stages.ID, an array's tasks' STAGE/stages.ID_TASK; boot_stages.sh writes
# them), a MARK_STAGES line "JOB|N,I:S,..." each: N stages, I:S the last that
# stage I said: its exit status, or "-" when it started and did not end (running,
# or an attempt that was interrupted). job_stages.c reads the marks.

dispatch_stages_read() {
	for ds_f in "$2/stages.$1" "$2/stages.$1"_*; do
		[ -f "$ds_f" ] || continue
		printf '@MARK_STAGES@ %s|%s\n' "${ds_f##*/stages.}" "$(awk '
			{ split($1, a, "/"); i = a[1] + 0; n = a[2] + 0
			  if ($2 == "start") st[i] = "-"; else if ($2 == "exit") st[i] = $3 }
			END { s = n; for (i = 1; i <= n; i++) if (i in st) s = s "," i ":" st[i]; print s }
		' "$ds_f")"
	done
}
