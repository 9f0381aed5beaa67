# shellcheck shell=bash
# Shared by tests/testbed/up, down and parts/*: settings, logging, sshd helpers.
# Linux only (network namespaces, /proc); root only. Sourced, not run.
#
# Settings (environment, all optional):
#   DISPATCH_TESTBED_DIR        state directory (default /tmp/dispatch-testbed)
#   DISPATCH_TESTBED_PORT_BASE  first loopback port (default 22000)
#   DISPATCH_TESTBED_FAN        number of fan1..fanN aliases (default 32)
#   DISPATCH_TESTBED_USER       test user (default dispatch-test)
#   DISPATCH_TESTBED_PREFIX     prefix of namespaces and links (default dtb, <= 5 chars)
#   DISPATCH_TESTBED_NET        first two octets of the private /16 (default 10.98)
# One testbed instance per prefix/net/port base; a second instance (the selftest)
# picks other values for all of them.

set -euo pipefail

# shellcheck disable=SC2034 # used by up and down
TB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_DIR=${DISPATCH_TESTBED_DIR:-/tmp/dispatch-testbed}
TB_PORT_BASE=${DISPATCH_TESTBED_PORT_BASE:-22000}
TB_FAN=${DISPATCH_TESTBED_FAN:-32}
TB_USER=${DISPATCH_TESTBED_USER:-dispatch-test}
TB_PREFIX=${DISPATCH_TESTBED_PREFIX:-dtb}
TB_NET=${DISPATCH_TESTBED_NET:-10.98}
# DISPATCH_TESTBED_SLURM=0: an instance without the SLURM part (tests of the SSH
# transport alone need no cluster, and each cluster costs seconds and a database).
TB_SLURM=${DISPATCH_TESTBED_SLURM:-1}
SSHD=/usr/sbin/sshd

tb_log() { printf 'testbed: %s\n' "$*" >&2; }
tb_die() { printf 'testbed: error: %s\n' "$*" >&2; exit 1; }

tb_check_settings() {
	case $TB_DIR in
	/*) ;;
	*) tb_die "DISPATCH_TESTBED_DIR '$TB_DIR' must be an absolute path" ;;
	esac
	case $TB_DIR in
	/ | /tmp | /root | /home | /etc | /usr | /var) tb_die "DISPATCH_TESTBED_DIR '$TB_DIR' is a system directory; pick a dedicated one" ;;
	esac
	if ! [[ $TB_PORT_BASE =~ ^[0-9]+$ ]] || ((TB_PORT_BASE < 1024 || TB_PORT_BASE > 65000)); then
		tb_die "DISPATCH_TESTBED_PORT_BASE '$TB_PORT_BASE' must be a number from 1024 to 65000"
	fi
	if ! [[ $TB_FAN =~ ^[0-9]+$ ]] || ((TB_FAN < 1 || TB_FAN > 1024)); then
		tb_die "DISPATCH_TESTBED_FAN '$TB_FAN' must be a number from 1 to 1024"
	fi
	[[ $TB_PREFIX =~ ^[a-z][a-z0-9]{0,4}$ ]] ||
		tb_die "DISPATCH_TESTBED_PREFIX '$TB_PREFIX' must be 1-5 lower-case letters/digits (link names are limited to 15 characters)"
	[[ $TB_NET =~ ^10\.[0-9]{1,3}$ ]] ||
		tb_die "DISPATCH_TESTBED_NET '$TB_NET' must be the first two octets of a 10.x private network, e.g. 10.98"
}

tb_require_root() {
	[ "$(id -u)" = 0 ] ||
		tb_die "must run as root (it starts sshd, creates a user and network namespaces); try: sudo $0"
}

# tb_write FILE [MODE]: stdin to FILE, replacing it only when the content changed
# (so a second 'up' changes nothing). Returns 0 when it wrote, 1 when unchanged.
tb_write() {
	local f=$1 mode=${2:-644} tmp
	tmp=$(mktemp "$f.XXXXXX")
	cat >"$tmp"
	chmod "$mode" "$tmp"
	if [ -f "$f" ] && cmp -s "$tmp" "$f"; then
		rm -f "$tmp"
		return 1
	fi
	mv -f "$tmp" "$f"
	return 0
}

# tb_keygen FILE [COMMENT] [PASSPHRASE] [TYPE]: a key (ed25519 unless TYPE), kept if
# it already exists.
tb_keygen() {
	local f=$1 comment=${2:-dispatch-testbed} pass=${3:-} type=${4:-ed25519}
	[ -f "$f" ] && [ -f "$f.pub" ] && return 0
	rm -f "$f" "$f.pub"
	ssh-keygen -q -t "$type" -N "$pass" -C "$comment" -f "$f" </dev/null >/dev/null
}

# tb_ns_run NS CMD...: CMD in network namespace NS, or here if NS is empty.
tb_ns_run() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# tb_reclaim_stale_ns NS...: deletes each named network namespace that exists but
# has no process in it: left by a test bed whose servers were killed (a machine
# restart, a SIGKILLed test run) without its 'down'. A namespace in which anything
# still runs belongs to a live instance and is left alone. Deleting a namespace
# also destroys the veth pairs with one end in it.
tb_reclaim_stale_ns() {
	local ns
	for ns in "$@"; do
		[ -e "/run/netns/$ns" ] || continue
		[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] || continue
		ip netns del "$ns" && tb_log "removed stale network namespace '$ns' (no process ran in it)"
	done
}

# tb_wait_link_gone LINK: namespaces are torn down asynchronously by the kernel,
# so a veth whose peer was in a just-deleted namespace may linger a moment.
tb_wait_link_gone() {
	local i
	for i in $(seq 50); do
		ip link show "$1" >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	return 0
}

# tb_reclaim_stale_bridge LINK: deletes a bridge in the root namespace that has
# no member left (its veths went with reclaimed namespaces).
tb_reclaim_stale_bridge() {
	ip link show "$1" >/dev/null 2>&1 || return 0
	[ -z "$(ip -br link show master "$1" 2>/dev/null)" ] || return 0
	ip link del "$1" && tb_log "removed stale bridge '$1' (no member left)"
}

# tb_port_busy NS ADDR PORT: something listens on ADDR:PORT (or the wildcard).
tb_port_busy() {
	local out
	out=$(tb_ns_run "$1" ss -Hltn "sport = :$3") || return 1
	[ -n "$out" ]
}

# tb_banner NS ADDR PORT: prints the first bytes an ssh server sends ("SSH-").
tb_banner() {
	# shellcheck disable=SC2016 # the inner bash expands them
	tb_ns_run "$1" timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2" && head -c 4 <&3' _ "$2" "$3" 2>/dev/null
}

# tb_wait_sshd NAME NS ADDR PORT: until the server answers with its banner, at most
# about 10 s.
tb_wait_sshd() {
	local name=$1 ns=$2 addr=$3 port=$4 i
	for ((i = 0; i < 100; i++)); do
		[ "$(tb_banner "$ns" "$addr" "$port")" = SSH- ] && return 0
		sleep 0.1
	done
	tb_die "sshd '$name' does not answer on $addr:$port after 10 s; see $TB_DIR/sshd/$name/log"
}

# tb_sshd_pid NAME: the pid of our running sshd NAME (pid file + its command line
# names our config), or nothing.
tb_sshd_pid() {
	local d=$TB_DIR/sshd/$1 pid
	[ -f "$d/pid" ] || return 0
	pid=$(cat "$d/pid" 2>/dev/null) || return 0
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "-f $d/sshd_config" || return 0
	echo "$pid"
}

# tb_sshd_supports OPTION=VALUE: whether this sshd knows a config option (cached).
tb_sshd_supports() {
	local opt=$1 cache=$TB_DIR/sshd/.supports
	mkdir -p "$cache"
	if [ ! -f "$cache/$opt" ]; then
		if "$SSHD" -t -f /dev/null -o "HostKey=$TB_DIR/keys/probe_host" -o "$opt" 2>/dev/null; then
			echo yes >"$cache/$opt"
		else
			echo no >"$cache/$opt"
		fi
	fi
	[ "$(cat "$cache/$opt")" = yes ]
}

# tb_sshd_up NAME NS ADDR PORT [LINE...]: writes the config of sshd NAME (its own
# host key, log, pid file, and any extra config LINEs, e.g. 'SetEnv NAME=VALUE'; a
# LINE whose keyword is among the defaults below replaces that default, since sshd
# takes the first value it reads) and starts it unless it already runs with that
# config. NS is the network namespace to run in, empty for the root namespace.
# TB_SSHD_EXEC, when set, is the program to start instead of $SSHD (a symlink to it:
# sshd names its PAM service after its program name). Prints nothing.
tb_sshd_up() {
	local name=$1 ns=$2 addr=$3 port=$4 d pid changed=0 extra="" keys
	shift 4
	keys=$(for line; do printf '%s\n' "${line%% *}"; done)
	d=$TB_DIR/sshd/$name
	mkdir -p "$d"
	# Two host keys, as a stock sshd has (it has RSA too): known_hosts holds only the
	# ED25519 one, the one ssh prefers, so a client must ask for that type first.
	tb_keygen "$d/host_ed25519" "testbed-host-$name"
	tb_keygen "$d/host_ecdsa" "testbed-host-$name" "" ecdsa
	# Since OpenSSH 9.8 sshd penalizes sources whose logins fail, which would refuse
	# the tests' own failures (pass1, badkey1) on 127.0.0.1.
	tb_keygen "$TB_DIR/keys/probe_host" probe
	if tb_sshd_supports PerSourcePenalties=no; then
		extra="PerSourcePenalties no"
	fi
	if {
		# shellcheck disable=SC2016 # awk's own variables
		cat <<-EOF | awk -v keys="$keys" 'BEGIN { n = split(tolower(keys), k, "\n")
			for (i = 1; i <= n; i++) if (k[i] != "") over[k[i]] = 1 }
			!(tolower($1) in over)'
		# generated by tests/testbed: sshd '$name'
		Port $port
		ListenAddress $addr
		HostKey $d/host_ed25519
		HostKey $d/host_ecdsa
		PidFile $d/pid
		AuthorizedKeysFile $TB_DIR/authorized_keys
		PubkeyAuthentication yes
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		PermitRootLogin no
		AllowUsers $TB_USER
		AllowTcpForwarding yes
		AllowStreamLocalForwarding yes
		X11Forwarding no
		PrintMotd no
		PrintLastLog no
		UseDNS no
		MaxStartups 200:30:400
		MaxSessions 100
		MaxAuthTries 10
		LoginGraceTime 30
		LogLevel VERBOSE
		Subsystem sftp internal-sftp
		$extra
	EOF
		[ $# = 0 ] || printf '%s\n' "$@"
	} | tb_write "$d/sshd_config"; then changed=1; fi
	pid=$(tb_sshd_pid "$name")
	if [ -n "$pid" ] && [ $changed = 0 ]; then
		tb_log "sshd '$name' already runs (pid $pid, $addr:$port)"
		return 0
	fi
	if [ -n "$pid" ]; then
		tb_log "sshd '$name': config changed, restarting"
		tb_kill_tree "$pid"
	fi
	if tb_port_busy "$ns" "$addr" "$port"; then
		tb_die "port $port ($addr${ns:+ in namespace $ns}) for sshd '$name' is already in use; stop what listens there or choose other ports with DISPATCH_TESTBED_PORT_BASE (now $TB_PORT_BASE)"
	fi
	mkdir -p /run/sshd
	"$SSHD" -t -f "$d/sshd_config" 2>"$d/check" ||
		tb_die "sshd '$name' rejects its config $d/sshd_config: $(cat "$d/check")"
	rm -f "$d/pid" "$d/check"
	tb_ns_run "$ns" "${TB_SSHD_EXEC:-$SSHD}" -f "$d/sshd_config" -E "$d/log" ||
		tb_die "sshd '$name' did not start; see $d/log"
	tb_wait_sshd "$name" "$ns" "$addr" "$port"
	tb_log "sshd '$name' started (pid $(cat "$d/pid"), $addr:$port${ns:+, namespace $ns})"
}

# tb_descendants PID: PID's children, grandchildren, ...
tb_descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$c"
		tb_descendants "$c"
	done
}

# tb_alive PID: PID runs (a zombie, waiting for its parent to reap it, does not).
tb_alive() {
	local stat
	stat=$(cat 2>/dev/null "/proc/$1/stat") || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# tb_kill PID...: SIGTERM, then SIGKILL what is left after about 2 s.
tb_kill() {
	local p i alive
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null || true
	for ((i = 0; i < 20; i++)); do
		alive=""
		for p; do
			tb_alive "$p" && alive="$alive $p"
		done
		[ -z "$alive" ] && return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $alive 2>/dev/null || true
}

# tb_kill_tree PID: PID and its whole process tree (sshd sessions and what they run).
tb_kill_tree() {
	local all
	# shellcheck disable=SC2207
	all=($(tb_descendants "$1") "$1")
	tb_kill "${all[@]}"
}

# tb_sshd_down NAME: stops our sshd NAME and its sessions.
tb_sshd_down() {
	local pid
	pid=$(tb_sshd_pid "$1")
	if [ -n "$pid" ]; then
		tb_kill_tree "$pid"
		tb_log "sshd '$1' stopped (pid $pid)"
	fi
	rm -f "$TB_DIR/sshd/$1/pid"
}

# tb_ssh_host ALIAS HOSTNAME PORT [IDENTITY] [EXTRA LINE...]: a Host block on stdout.
tb_ssh_host() {
	local alias=$1 host=$2 port=$3 key=${4:-$TB_DIR/keys/id_ed25519} line
	shift 4 || shift $#
	printf 'Host %s\n' "$alias"
	printf '\tHostName %s\n\tPort %s\n\tUser %s\n' "$host" "$port" "$TB_USER"
	printf '\tIdentityFile %s\n\tIdentitiesOnly yes\n' "$key"
	printf '\tUserKnownHostsFile %s\n\tStrictHostKeyChecking yes\n' "$TB_DIR/known_hosts"
	printf '\tBatchMode yes\n\tConnectTimeout 5\n'
	for line; do
		printf '\t%s\n' "$line"
	done
	printf '\n'
}

# tb_known_host HOST PORT PUBKEYFILE: a known_hosts line ([host]:port unless 22).
tb_known_host() {
	local name=$1
	[ "$2" = 22 ] || name="[$1]:$2"
	printf '%s %s\n' "$name" "$(cut -d' ' -f1,2 "$3")"
}

# The directory where part NAME leaves its contributions for 'up' to assemble:
#   ssh_config       Host blocks
#   known_hosts      known_hosts lines
#   inventory.hosts  YAML under 'hosts:' (indented two spaces)
#   inventory.clusters  YAML under 'clusters:' (optional)
#   exports          NAME=VALUE lines, printed as export lines (optional)
tb_part_dir() {
	mkdir -p "$TB_DIR/parts/$1"
	echo "$TB_DIR/parts/$1"
}

# The settings an instance was brought up with, so that 'down' (and a second 'up')
# act on what exists, whatever the environment says now.
tb_settings() {
	printf 'TB_PORT_BASE=%s\nTB_PREFIX=%s\nTB_NET=%s\nTB_USER=%s\n' \
		"$TB_PORT_BASE" "$TB_PREFIX" "$TB_NET" "$TB_USER"
}

tb_load_settings() {
	local f=$TB_DIR/settings k v
	[ -f "$f" ] || return 0
	while IFS='=' read -r k v; do
		case $k in
		TB_PORT_BASE | TB_PREFIX | TB_NET | TB_USER) printf -v "$k" '%s' "$v" ;;
		esac
	done <"$f"
	# The parts run as their own processes and read the environment: without this
	# they would act on the instance the environment (or the defaults) names, and
	# 'down' of one instance would take another's namespaces and daemons.
	export DISPATCH_TESTBED_DIR=$TB_DIR DISPATCH_TESTBED_PORT_BASE=$TB_PORT_BASE \
		DISPATCH_TESTBED_PREFIX=$TB_PREFIX DISPATCH_TESTBED_NET=$TB_NET DISPATCH_TESTBED_USER=$TB_USER
}

# tb_sq STRING: STRING single-quoted for sh.
tb_sq() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}
