# shellcheck shell=sh
# A node's GPU health (gpu_health_command, for hosts show --health and dispatch top):
# the health fields this nvidia-smi knows, among those of health_names in
# node_health.c (the for list: in that order, test-node-health checks it), their
# rows, and the NVRM Xid lines of the kernel log where this user may read it, each
# as a MARK_HEALTH line.

p() { printf '@MARK_HEALTH@ %s %s\n' "$1" "$2"; }
if ! command -v nvidia-smi >/dev/null 2>&1; then
	p no-nvidia-smi
elif ! h=$(nvidia-smi --help-query-gpu 2>&1); then
	p failed "$(printf '%s\n' "$h" | head -n 1)"
else
	q=
	for f in uuid pci.bus_id ecc.errors.uncorrected.volatile.total ecc.errors.uncorrected.aggregate.total retired_pages.pending remapped_rows.pending remapped_rows.failure gpu_recovery_action; do
		case $h in *"\"$f\""*) q=$q${q:+,}$f ;; esac
	done
	p fields "$q"
	nvidia-smi --query-gpu="$q" --format=csv,noheader,nounits 2>&1 |
		while IFS= read -r l; do p row "$l"; done
fi
if x=$(journalctl -k -q --no-pager -o short 2>/dev/null) && [ -n "$x" ]; then
	s=journalctl
elif x=$(dmesg 2>/dev/null) && [ -n "$x" ]; then
	s=dmesg
else
	s=unavailable x=
fi
p xid-source "$s"
printf '%s\n' "$x" | grep 'NVRM: Xid' | tail -n 20 |
	while IFS= read -r l; do p xid "$l"; done
