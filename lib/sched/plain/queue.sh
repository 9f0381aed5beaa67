# shellcheck shell=bash
# The listing of plainjob_queue_command (bash, run under timeout, after lease_fns.sh):
# under the lock directory's lock (shared: no launcher changes its record meanwhile,
# taken within LOCKWAIT seconds or refused with who holds it), each live record as
# "ID|OWNER|RECORD". Arguments: LOCKDIR LOCKWAIT.

L=$1 lw=$2
if [ -L "$L/.lock" ] || [ ! -f "$L/.lock" ]; then
	echo "dispatch: $L/.lock is not a regular file: refusing it" >&2
	exit 1
fi
exec 8<"$L/.lock" || exit 1
if ! dp_lock 8 "$L/.lock" -s; then
	echo "dispatch: the lock of the GPU lock directory, $L/.lock, is held for over $lw s by $(dp_held "$L/.lock"): cannot list the jobs there" >&2
	exit 1
fi
dp_list "$L" | sort | while IFS= read -r r; do
	printf '@MARK_QJOB@ %s\n' "${r#job.??????????.}"
done
