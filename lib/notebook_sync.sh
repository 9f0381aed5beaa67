# shellcheck shell=bash
# dispatch notebook sync's program, run inside the notebook's job (on its node, as
# dispatch shell runs a command): bash -c PROGRAM sync STAGE, the patch on standard
# input (lib/code/worktree_patch.h: the work tree since the job's commit). The code
# directory is the one the notebook recorded (STAGE/code_dir); the patch applied last
# (STAGE/synced.patch) is taken back first, then the new one applied whole or not
# at all (git apply checks before it writes), with the file that does not apply
# named. A directory above the code is never taken for its repository
# (GIT_CEILING_DIRECTORIES). Prints MARK_SYNCED N (files) at the end.

st=$1
if ! cd -- "$(cat -- "$st/code_dir" 2>/dev/null)" 2>/dev/null; then
	echo "dispatch: the notebook recorded no code directory ($st/code_dir): a notebook started by an older dispatch cannot be synced" >&2
	exit 1
fi
command -v git >/dev/null 2>&1 || {
	echo "dispatch: no git on $(hostname)'s PATH: sync applies the changes with git apply" >&2
	exit 1
}
GIT_CEILING_DIRECTORIES=${PWD%/*}
export GIT_CEILING_DIRECTORIES
new=$(mktemp "$st/sync.XXXXXX") || exit 1
trap 'rm -f -- "$new" "$new.err"' EXIT
cat >"$new"
old=$st/synced.patch
if [ -s "$old" ] && ! git apply -R --check "$old" 2>"$new.err"; then
	echo "dispatch: files of the code changed on $(hostname) since the last sync (edited in the notebook?); nothing applied:" >&2
	cat "$new.err" >&2
	exit 3
fi
if [ -s "$old" ]; then
	git apply -R "$old" || exit 1
fi
if [ -s "$new" ] && ! git apply --check "$new" 2>"$new.err"; then
	echo "dispatch: the changes do not apply to the code on $(hostname); nothing applied:" >&2
	cat "$new.err" >&2
	if [ -s "$old" ]; then
		git apply "$old"
	fi
	exit 3
fi
if [ -s "$new" ]; then
	git apply "$new" || exit 1
fi
mv -f -- "$new" "$old"
printf '@MARK_SYNCED@ %s\n' "$(grep -c '^diff --git' "$old")"
