#!/bin/sh
# Regenerates scontrol-hostnames.txt and scontrol-hostlist.txt, the golden files of
# tests/unit/test-hostlist.c, from a real scontrol: every line of expand-cases.txt
# through 'scontrol show hostnames', every line of fold-cases.txt through
# 'scontrol show hostlist'. Run it where scontrol is (Debian: apt-get install
# slurm-client; no cluster needed) or on a cluster's login node, and diff the result.
set -eu
cd "$(dirname "$0")"
if [ -z "${SLURM_CONF:-}" ] && [ ! -e /etc/slurm/slurm.conf ]; then
	# scontrol wants a configuration even for these offline subcommands.
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	printf 'ClusterName=capture\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n' \
		>"$tmp/slurm.conf"
	SLURM_CONF=$tmp/slurm.conf
	export SLURM_CONF
fi
version=$(scontrol --version)
errs=$(mktemp)
# scontrol says "Invalid hostlist" on stderr and still exits 0: only cases it takes belong here.
run() {
	scontrol show "$1" "$2" 2>"$errs"
	if [ -s "$errs" ]; then
		echo "capture.sh: scontrol refused '$2':" >&2
		cat "$errs" >&2
		exit 1
	fi
}
{
	echo "# 'scontrol show hostnames EXPR' from $version, captured by capture.sh."
	echo "# Each record: '> EXPR', then the hosts, one a line."
	while IFS= read -r e; do
		echo "> $e"
		run hostnames "$e"
	done <expand-cases.txt
} >scontrol-hostnames.txt.new
{
	echo "# 'scontrol show hostlist HOSTS' from $version, captured by capture.sh."
	echo "# Each record: '> HOSTS', then the hostlist."
	while IFS= read -r e; do
		echo "> $e"
		run hostlist "$e"
	done <fold-cases.txt
} >scontrol-hostlist.txt.new
rm -f "$errs"
mv scontrol-hostnames.txt.new scontrol-hostnames.txt
mv scontrol-hostlist.txt.new scontrol-hostlist.txt
