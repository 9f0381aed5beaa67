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
# DISPATCH_TESTBED_SLURM=24.11 (or trixie), 26.05 (or forky): the SLURM part runs that
# release from a Debian chroot built once by tests/testbed/chroot; 1, 22.05 or
# bookworm (the default): the host's own SLURM 22.05.
TB_SLURM=${DISPATCH_TESTBED_SLURM:-1}
# Where tests/testbed/chroot keeps the chroots of the newer releases.
# shellcheck disable=SC2034 # used by chroot and down
TB_CACHE=${DISPATCH_TESTBED_CACHE:-/var/cache/dispatch-testbed}
SSHD=/usr/sbin/sshd
# Users whose login shell is of another family than bash's (t5800-login-shells): USER:SHELL,
# SHELL also the name of its Debian package. They log in with the test key, like TB_USER,
# on every sshd of the test bed, and may submit to the SLURM cluster.
TB_SHELL_USERS="dispatch-tcsh:tcsh dispatch-fish:fish dispatch-zsh:zsh dispatch-dash:dash dispatch-mksh:mksh"
tb_shell_user_names() {
	local u
	for u in $TB_SHELL_USERS; do
		printf '%s ' "${u%%:*}"
	done
}

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

# tb_sshd_health NAME: the health facts of sshd NAME (see tb_health), on stdout.
tb_sshd_health() {
	printf 'pid %s\nfile %s\n' "$TB_DIR/sshd/$1/pid" "$TB_DIR/sshd/$1/sshd_config"
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
		AllowUsers $TB_USER $(tb_shell_user_names)
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

# tb_proc_start PID: sets TB_START to PID's start time (clock ticks after boot,
# field 22 of /proc/PID/stat): with the pid it names one process, as a pid may be
# used again. Fails when PID does not run (or is a zombie). No subprocess.
tb_proc_start() {
	local stat fields
	TB_START=
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	# shellcheck disable=SC2206 # the fields after the command name: a letter, numbers
	fields=(${stat##*) })
	case ${fields[0]} in Z | X | x) return 1 ;; esac
	# shellcheck disable=SC2034 # the caller's
	TB_START=${fields[19]}
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

# Health facts: what 'up' checks first, in milliseconds, before it does anything else
# (see 'up', quick_check). Each part writes them into its part dir as 'health', one
# per line:
#   pid FILE     a daemon's pid file: the process it names runs (the same process
#                that ran when 'up' last finished: 'up' records its start time)
#   file FILE    a file 'up' or the part generated: unchanged since then (SHA-256)
#   path PATH    exists
#   mount DIR    is a mount point
# A fact that does not hold sends 'up' the whole way, which repairs what it can.

# tb_nodes_idle [SINFO]: both nodes of the cluster answer and take jobs: idle, or
# busy with jobs (a second 'up' on a cluster other tests are using finds them mix,
# alloc, plnd or comp). SINFO: the sinfo to run (the chroot's wrapper for a release).
tb_nodes_idle() {
	local out
	out=$(timeout 10 "${1:-sinfo}" -N -h -p gpu -o '%N %t') || return 1
	out=$(printf '%s\n' "$out" | sed -E 's/ (mix|alloc|plnd|comp)$/ idle/' | sort -u)
	[ "$out" = "$(printf 'node1 idle\nnode2 idle')" ]
}

# The settings an instance was brought up with, so that 'down' (and a second 'up')
# act on what exists, whatever the environment says now.
tb_settings() {
	printf 'TB_PORT_BASE=%s\nTB_PREFIX=%s\nTB_NET=%s\nTB_USER=%s\n' \
		"$TB_PORT_BASE" "$TB_PREFIX" "$TB_NET" "$TB_USER"
	# Only a release other than the host's is recorded: the settings of an instance
	# on the host's SLURM stay what they were before releases could be chosen.
	case $(tb_slurm_suite "$TB_SLURM" 2>/dev/null || echo host) in
	host) ;;
	*) printf 'TB_SLURM=%s\n' "$TB_SLURM" ;;
	esac
}

tb_load_settings() {
	local f=$TB_DIR/settings k v
	[ -f "$f" ] || return 0
	while IFS='=' read -r k v; do
		case $k in
		TB_PORT_BASE | TB_PREFIX | TB_NET | TB_USER | TB_SLURM) printf -v "$k" '%s' "$v" ;;
		esac
	done <"$f"
	# The parts run as their own processes and read the environment: without this
	# they would act on the instance the environment (or the defaults) names, and
	# 'down' of one instance would take another's namespaces and daemons.
	export DISPATCH_TESTBED_DIR=$TB_DIR DISPATCH_TESTBED_PORT_BASE=$TB_PORT_BASE \
		DISPATCH_TESTBED_PREFIX=$TB_PREFIX DISPATCH_TESTBED_NET=$TB_NET DISPATCH_TESTBED_USER=$TB_USER \
		DISPATCH_TESTBED_SLURM=$TB_SLURM
}

# tb_sq STRING: STRING single-quoted for sh.
tb_sq() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}

# tb_slurm_suite RELEASE: the Debian suite whose SLURM is RELEASE ('host' for the
# host's own 22.05); fails for a release the test bed cannot run.
tb_slurm_suite() {
	case $1 in
	1 | 22.05 | bookworm) echo host ;;
	24.11 | trixie) echo trixie ;;
	26.05 | forky) echo forky ;;
	*) return 1 ;;
	esac
}

# tb_debian_mirror: the Debian mirror the system's own apt sources name (the first
# URI of a bookworm suite), never a host name of ours.
tb_debian_mirror() {
	local f uri=
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ && u { print u; exit }
			/^$/ { u = "" }' "$f")
		[ -n "$uri" ] && break
	done
	if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $0 ~ / bookworm / { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; exit } }' \
			/etc/apt/sources.list)
	fi
	[ -n "$uri" ] || return 1
	echo "$uri"
}

# tb_chroot_umount ROOT: unmounts everything mounted under ROOT (and ROOT's bind
# mount onto itself), deepest first.
tb_chroot_umount() {
	local root=$1 m
	# shellcheck disable=SC2013
	for m in $(awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
}

# The SLURM part of a newer release runs inside the chroot tests/testbed/chroot
# built: the chroot is bind-mounted onto itself (so that its / is a mount point and
# entering a network namespace can make it a slave), /proc, /dev, /dev/pts, /dev/shm and /sys
# (recursively: slurmd 24.11 and later need the cgroup mounts) are bound into it, and
# the instance's state directory is bound to the same path inside, so that every path
# (keys, configs, logs, the cluster's directories) is the same on both sides and the
# part writes its ssh_config, known_hosts, inventory and exports where 'up' reads them.
# The chroot shares the host's network: its sshd and daemons listen on this machine.

# tb_chroot_mount ROOT: the mounts above (idempotent).
tb_chroot_mount() {
	local root=$1
	mountpoint -q "$root" || mount --bind "$root" "$root"
	mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
	mountpoint -q "$root/dev" || mount --bind /dev "$root/dev"
	mountpoint -q "$root/dev/pts" || mount --bind /dev/pts "$root/dev/pts"
	# POSIX semaphores and shared memory (Python's multiprocessing locks, PyTorch's
	# workers): the host's /dev/shm, its own mount, which binding /dev leaves out
	if mountpoint -q /dev/shm && ! mountpoint -q "$root/dev/shm"; then
		mount --bind /dev/shm "$root/dev/shm"
	fi
	if ! mountpoint -q "$root/sys"; then
		mount --rbind /sys "$root/sys"
		mount --make-rslave "$root/sys"
	fi
	tb_bind_same "$TB_DIR" "$root$TB_DIR"
}

# tb_reserve_ports: the test bed's ports out of the kernel's ephemeral range. The
# instances' sshd and SLURM ports run from 22000 to about 38000 (their settings: the
# tests' testbed_own lines, tests/meson.build, the selftests' +500), and from 32768 on
# the kernel hands the same numbers out as the local ports of outgoing connections
# (ssh, SLURM's RPCs, MariaDB's clients): a CI run's sshd failed to start with
# "Bind to port 37010 on 127.0.0.1 failed: Address already in use". The range
# 32768-39999 joins net.ipv4.ip_local_reserved_ports (runtime state, gone at reboot;
# added to, never taken from), under a lock for instances that come up at once.
tb_reserve_ports() {
	local f=/proc/sys/net/ipv4/ip_local_reserved_ports cur
	[ -w "$f" ] || return 0
	mkdir -p "$TB_CACHE"
	(
		flock 7
		cur=$(cat "$f")
		case ,$cur, in *,32768-39999,*) exit 0 ;; esac
		echo "${cur:+$cur,}32768-39999" >"$f" ||
			tb_log "could not reserve the ports 32768-39999 ($f): an sshd may find its port taken"
	) 7>>"$TB_CACHE/ports.lock"
}

# tb_bind_same DIR TARGET: DIR bound onto TARGET, unless TARGET already is DIR (a
# bind left from a DIR since removed and made anew is replaced).
tb_bind_same() {
	mkdir -p "$2"
	if mountpoint -q "$2"; then
		[ "$(stat -c %d:%i "$1")" != "$(stat -c %d:%i "$2")" ] || return 0
		umount -l "$2"
	fi
	mount --bind "$1" "$2"
}

# tb_chroot_home ROOT: the test user's home, bound to the same path inside ROOT: one
# home on the login node and on the other hosts, as a cluster's shared home would be
# (tests put wrappers in ~/bin and lines in ~/.profile).
tb_chroot_home() {
	local root=$1 home
	home=$(getent passwd "$TB_USER" | cut -d: -f6)
	if [ -z "$home" ] || [ ! -d "$home" ]; then
		tb_die "the test user '$TB_USER' has no home here"
	fi
	tb_bind_same "$home" "$root$home"
	echo "$home"
}

# tb_chroot_release ROOT: unmounts this instance's state directory from ROOT, and the
# common mounts too when no other instance has its state directory bound there.
tb_chroot_release() {
	local root=$1 other home
	if mountpoint -q "$root$TB_DIR" 2>/dev/null; then
		umount -l "$root$TB_DIR"
	fi
	rmdir "$root$TB_DIR" 2>/dev/null || true
	home=$(getent passwd "$TB_USER" | cut -d: -f6)
	other=$(awk -v r="$root" -v h="$home" 'index($2, r "/") == 1 { p = substr($2, length(r) + 1)
		if (p !~ "^/(proc|dev|sys|run)(/|$)" && p != h) print p }' /proc/self/mounts)
	[ -z "$other" ] || return 0
	tb_chroot_umount "$root"
}

# tb_chroot_user ROOT: the test user inside ROOT, with the same uid and gid as here
# (the files it leaves in the state directory are the same user's on both sides).
tb_chroot_user() {
	local root=$1 uid gid home
	uid=$(id -u "$TB_USER") gid=$(id -g "$TB_USER")
	home=$(tb_chroot_home "$root")
	if ! chroot "$root" getent group "$gid" >/dev/null; then
		chroot "$root" groupadd -g "$gid" "$TB_USER"
	fi
	if ! chroot "$root" getent passwd "$TB_USER" >/dev/null; then
		chroot "$root" useradd -M -d "$home" -u "$uid" -g "$gid" -s /bin/bash -c "dispatch testbed" "$TB_USER"
	fi
	[ "$(chroot "$root" id -u "$TB_USER")" = "$uid" ] ||
		tb_die "the test user '$TB_USER' has another uid in $root than here; remove it there (chroot $root userdel $TB_USER)"
	case $(chroot "$root" getent shadow "$TB_USER" | cut -d: -f2) in
	'!'*) chroot "$root" usermod -p '*' "$TB_USER" ;;
	esac
}

# tb_chroot_part ROOT PART up|down: runs the part PART (a path under $TB_SRC) inside
# ROOT, from a copy of the test bed's scripts in the state directory.
tb_chroot_part() {
	local root=$1 part=$2 action=$3
	rm -rf "$TB_DIR/testbed-src"
	cp -a "$TB_SRC" "$TB_DIR/testbed-src"
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DISPATCH_TESTBED_DIR="$TB_DIR" DISPATCH_TESTBED_PORT_BASE="$TB_PORT_BASE" \
		DISPATCH_TESTBED_PREFIX="$TB_PREFIX" DISPATCH_TESTBED_NET="$TB_NET" \
		DISPATCH_TESTBED_USER="$TB_USER" DISPATCH_TESTBED_FAN="$TB_FAN" DISPATCH_TESTBED_SLURM=1 \
		DISPATCH_TESTBED_MAX_ARRAY_SIZE="${DISPATCH_TESTBED_MAX_ARRAY_SIZE:-}" \
		bash "$TB_DIR/testbed-src/parts/${part##*/}" "$action"
}

# tb_chroot_tools ROOT DIR: in DIR, one wrapper per SLURM command that runs the
# chroot's own (this machine's SLURM would not speak the newer release's protocol).
tb_chroot_tools() {
	local root=$1 dir=$2 t
	mkdir -p "$dir"
	for t in sacct sacctmgr salloc sbatch scancel scontrol sdiag sinfo sprio squeue srun sshare sstat; do
		printf '#!/bin/sh\n# generated by tests/testbed/up: SLURM %s of %s\nexec chroot %s /usr/bin/env SLURM_CONF=%s /usr/bin/%s "$@"\n' \
			"$t" "$root" "$(tb_sq "$root")" "$(tb_sq "$TB_DIR/slurm/etc/slurm.conf")" "$t" |
			tb_write "$dir/$t" 755 || true
	done
}
