#!/bin/bash
# Snapshot speed: 'dispatch ship --output' against what users would run instead,
# 'git archive --format=tar.gz HEAD' and 'git archive --format=tar HEAD | pigz -6',
# compared in one hyperfine run, plus compressed sizes and peak RSS.
#
#   bench/snapshot.sh [DISPATCH_BINARY]     (default: build/dispatch)
#
# The repository: the Linux kernel headers as Debian ships them (a real source tree
# of C headers, Kconfig files, Makefiles and scripts, ~9,400 files, ~55 MB), committed
# into a packed git repository in $BENCH_DIR (default /tmp/dispatch-bench). Needs
# git, hyperfine, pigz, GNU time (apt-get install hyperfine pigz time) and apt-get.
# RUNS (default 10) sets hyperfine's run count. BENCH_TREE=slurm builds the repository
# from SLURM's source instead (Debian 12's slurm-wlm 22.05.8 orig tarball: ~2,800
# files, 42 MB of tar), fetched by apt-get source through a private sources list (the
# machine's own apt configuration is left alone); use another BENCH_DIR for it.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dispatch=$(realpath "${1:-$here/build/dispatch}")
dir=${BENCH_DIR:-/tmp/dispatch-bench}
runs=${RUNS:-10}
repo=$dir/repo
for tool in git hyperfine pigz /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "snapshot.sh: needs $tool" >&2; exit 2; }
done

slurm_tree() {
	local apt=$dir/apt
	local o=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		 -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache")
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/src"
	echo 'deb-src http://deb.debian.org/debian bookworm main' >"$apt/sources.list"
	apt-get "${o[@]}" update >/dev/null &&
	(cd "$apt/src" && apt-get "${o[@]}" source --download-only slurm-wlm >/dev/null 2>&1) ||
		{ echo "snapshot.sh: apt-get source slurm-wlm failed" >&2; exit 2; }
	tar -xzf "$apt"/src/slurm-wlm_*.orig.tar.gz -C "$repo.tmp" --strip-components=1
	pkg=slurm-$(cd "$apt/src" && ls slurm-wlm_*.orig.tar.gz | sed 's/^slurm-wlm_//; s/\.orig.*//')
}

linux_headers_tree() {
	pkg=$(apt-cache search --names-only '^linux-headers-[0-9.]+-[0-9]+-common$' | sort -V | tail -1 | cut -d' ' -f1)
	[ -n "$pkg" ] || { echo "snapshot.sh: no linux-headers-*-common package (apt-get update?)" >&2; exit 2; }
	(cd "$dir" && apt-get download "$pkg" >/dev/null 2>&1) || { echo "snapshot.sh: apt-get download $pkg failed" >&2; exit 2; }
	dpkg-deb -x "$dir/$pkg"_*.deb "$repo.tmp"
}

if [ ! -d "$repo/.git" ]; then
	mkdir -p "$dir"
	rm -rf "$repo.tmp" && mkdir -p "$repo.tmp"
	if [ "${BENCH_TREE:-}" = slurm ]; then slurm_tree; else linux_headers_tree; fi
	(cd "$repo.tmp" && git init -q && git add -A &&
	 GIT_AUTHOR_DATE=2024-01-01T00:00:00Z GIT_COMMITTER_DATE=2024-01-01T00:00:00Z \
	 git -c gc.auto=0 -c user.name=bench -c user.email=bench@example.com commit -q -m "$pkg" && git gc -q)
	mv "$repo.tmp" "$repo"
fi

cd "$repo"
out=$dir/out
mkdir -p "$out"
echo "repository: $repo: $(git ls-files | wc -l) files, $(git archive --format=tar HEAD | wc -c) bytes of tar"
echo "cores: $(getconf _NPROCESSORS_ONLN); $("$dispatch" --version); $(git --version); pigz $(pigz --version 2>&1 | cut -d' ' -f2)"

hyperfine --warmup 2 --runs "$runs" --export-markdown "$out/hyperfine.md" \
	-n 'git archive --format=tar.gz' "git archive --format=tar.gz HEAD > $out/git.tar.gz" \
	-n 'git archive | pigz -6' "git archive --format=tar HEAD | pigz -6 > $out/pigz.tar.gz" \
	-n 'dispatch ship' "$dispatch ship --output $out/dispatch.tar.gz"

echo
printf '%-28s %12s %10s %14s\n' tool bytes vs-git peak-RSS-KiB
rss() { /usr/bin/time -f %M sh -c "$1" 2>&1 >/dev/null | tail -1; }
git_size=$(stat -c %s "$out/git.tar.gz")
for t in git pigz dispatch; do
	case $t in
	git) cmd="git archive --format=tar.gz HEAD > $out/git.tar.gz" ;;
	pigz) cmd="git archive --format=tar HEAD | pigz -6 > $out/pigz.tar.gz" ;;
	dispatch) cmd="$dispatch ship --output $out/dispatch.tar.gz" ;;
	esac
	size=$(stat -c %s "$out/$t.tar.gz")
	printf '%-28s %12d %+9.2f%% %14s\n' "$t" "$size" \
		"$(awk -v a="$size" -v b="$git_size" 'BEGIN { print (a - b) * 100 / b }')" "$(rss "$cmd")"
done
gzip -t "$out/dispatch.tar.gz"
cmp <(gzip -dc "$out/dispatch.tar.gz" | tar -tf - | sort) <(git archive HEAD | tar -tf - | sort) &&
	echo "dispatch's archive lists the same paths as git archive's"
