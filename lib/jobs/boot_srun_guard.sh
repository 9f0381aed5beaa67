# shellcheck shell=bash
# Part of a SLURM bootstrap.sh in per-node mode (jobscript.c's boot_srun_guard): the
# bootstrap is a step on every node, so an srun in the command asks for a second
# step, which cannot have what this one holds, and SLURM retries it silently
# forever. An srun first on the command's PATH fails at once and says what to do
# instead; srun --overlap, which shares the step's resources, goes through to the
# real one (DISPATCH_SRUN).

# srun in the command would wait forever for this step's resources: it fails at
# once instead (dispatch-submit(1) LAUNCH).
DISPATCH_SRUN=$(command -v srun || echo srun)
export DISPATCH_SRUN
if dispatch_guard=$(mktemp -d "${TMPDIR:-/tmp}/dispatch-srun.XXXXXX"); then
	trap 'rm -rf -- "$dispatch_guard"; dispatch_cleanup' EXIT
	cat >"$dispatch_guard/srun" <<'DISPATCH_GUARD'
#!/bin/sh
for a; do
	case $a in --overlap) exec "$DISPATCH_SRUN" "$@" ;; esac
done
echo "dispatch: srun inside the command waits forever here: the job's step on every node" \
	"already holds what it would ask for. Submit with --launch once (the command runs" \
	"once, with the allocation free for srun and mpirun), or drop srun (the command" \
	"already runs on every node)." >&2
exit 1
DISPATCH_GUARD
	chmod 700 "$dispatch_guard/srun"
	PATH=$dispatch_guard:$PATH
fi
