#!/bin/bash
# Shipping speed: 'dispatch ship HOST:PATH' (snapshot, parallel gzip and SSH in one
# process, one channel) against the pipelines a user would type, with OpenSSH's ssh
# as the measuring stick:
#   git archive --format=tar.gz HEAD | ssh HOST 'mkdir -p D && tar -xzf - -C D'
#   git archive --format=tar HEAD | pigz -6 | ssh HOST 'mkdir -p D && tar -xzf - -C D'
# in one hyperfine run, each into an emptied directory under $REMOTE_DIR on HOST
# (default ship-bench in the remote home; /dev/shm/... leaves the disk out of it).
#
#   eval "$(tests/testbed/up)"             (as root: sshd on this machine)
#   bench/ship-remote.sh [DISPATCH_BINARY] [HOST]   (defaults: build/dispatch, box1)
#
# The repository is bench/snapshot.sh's ($BENCH_DIR/repo, default
# /tmp/dispatch-bench): run that once first. Needs git, hyperfine, pigz, ssh. RUNS
# (default 10) sets hyperfine's run count.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dispatch=$(realpath "${1:-$here/build/dispatch}")
host=${2:-box1}
dir=${BENCH_DIR:-/tmp/dispatch-bench}
runs=${RUNS:-10}
repo=$dir/repo
: "${DISPATCH_SSH_CONFIG:?run eval \"\$(tests/testbed/up)\" first (or point DISPATCH_SSH_CONFIG at a config with HOST)}"
for tool in git hyperfine pigz ssh; do
	command -v "$tool" >/dev/null || { echo "ship-remote.sh: needs $tool" >&2; exit 2; }
done
[ -d "$repo/.git" ] || { echo "ship-remote.sh: no $repo: run bench/snapshot.sh first" >&2; exit 2; }

cd "$repo"
ssh="ssh -F $DISPATCH_SSH_CONFIG $host"
base=${REMOTE_DIR:-ship-bench}
echo "repository: $repo: $(git ls-files | wc -l) files, $(git archive --format=tar HEAD | wc -c) bytes of tar"
echo "cores: $(getconf _NPROCESSORS_ONLN); $("$dispatch" --version); $(git --version); $(ssh -V 2>&1)"
echo "host: $host ($($ssh 'echo $SSH_CONNECTION'))"

extract() { echo "mkdir -p $base/$1 && tar -xzf - -C $base/$1"; }
hyperfine --warmup 2 --runs "$runs" --export-markdown "$dir/ship-remote.md" \
	-n 'git archive --format=tar.gz | ssh' \
	--prepare "$ssh 'rm -rf $base/git'" \
	"git archive --format=tar.gz HEAD | $ssh '$(extract git)'" \
	-n 'git archive | pigz -6 | ssh' \
	--prepare "$ssh 'rm -rf $base/pigz'" \
	"git archive --format=tar HEAD | pigz -6 | $ssh '$(extract pigz)'" \
	-n 'dispatch ship' \
	--prepare "$ssh 'rm -rf $base/dispatch'" \
	"$dispatch ship $host:$base/dispatch"

# The three trees must be the same, or the race was not fair.
for t in git pigz dispatch; do
	$ssh "cd $base/$t && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2 | sha256sum"
done | uniq -c
$ssh "rm -rf $base"
