# shellcheck shell=sh
# cp -r's upload of a directory as one tar stream (lib/transport/tarcopy.c), run by the
# login shell's sh with these set before it: d (the destination as given, relative to
# the home), base (the source's name), dparent and dname (d split, for a d that does
# not exist), many (1: several sources, so d must be a directory) and opts (tar's -m,
# or -p with cp -p). The tree is extracted into a new private directory beside its
# target and renamed into place whole: nothing appears under the target's name until
# every file is complete, and a target that exists is left to the SFTP copy (which
# merges). Exit: 0 done (MARK_CP_INTO 1 or 0: into d, or as d), 97 no tar or mktemp
# here, 98 the target exists, 94 d is not a directory, 92 no temporary directory,
# 93 no `mv -T`, 91 tar failed (its messages on stderr). Only 0 and 91 read stdin.

command -v tar >/dev/null 2>&1 && command -v mktemp >/dev/null 2>&1 || exit 97
# shellcheck disable=SC2154 # d, base, dparent, dname, many: set by the caller
if [ -d "$d" ]; then
	p=$d n=$base into=1
elif [ "$many" = 1 ]; then
	exit 94
else
	p=$dparent n=$dname into=0
fi
if [ -e "$p/$n" ] || [ -h "$p/$n" ]; then exit 98; fi
t=$(mktemp -d "$p/.dispatch-cp.XXXXXX" 2>/dev/null) || exit 92
trap 'rm -rf "$t"; exit 129' HUP
trap 'rm -rf "$t"; exit 130' INT
trap 'rm -rf "$t"; exit 143' TERM
# shellcheck disable=SC2086,SC2154 # opts: one flag, set by the caller
if ! tar -xf - -C "$t" $opts; then
	rm -rf "$t"
	exit 91
fi
if mv -T "$t/t" "$p/$n" 2>/dev/null; then
	rm -rf "$t"
	echo "@MARK_CP_INTO@ $into"
	exit 0
fi
rm -rf "$t"
if [ -e "$p/$n" ] || [ -h "$p/$n" ]; then exit 98; fi
exit 93
