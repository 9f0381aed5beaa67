# shellcheck shell=bash
# For the cp files (t5200, t5220, t5230, t5240, t5250): t5200's test bed instance,
# which they share, and sshds of their own, for servers configured otherwise or
# killed in the middle of a copy. kcfg and kh in the current directory collect those.

# cp_testbed: t5200's instance up (DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5200
# tests/testbed/down removes it); TB its directory, U the test user, RHOME U's home.
cp_testbed() {
	export DISPATCH_TESTBED_SLURM=0
	export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5200
	export DISPATCH_TESTBED_PORT_BASE=25000 DISPATCH_TESTBED_PREFIX=dtc5 DISPATCH_TESTBED_NET=10.158 DISPATCH_TESTBED_FAN=2
	testbed_up
	TB=$DISPATCH_TESTBED_DIR
	U=$DISPATCH_TESTBED_USER
	RHOME=$(getent passwd "$U" | cut -d: -f6)
}

# own_sshd NAME PORT [CONFIG LINE...]: started, with NAME in the ssh_config kcfg
own_sshd() {
	local name=$1 port=$2
	shift 2
	(. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_up "$name" "" 127.0.0.1 "$port" "$@") 2>/dev/null &&
	cat >>kcfg <<-EOF &&
	Host $name
		HostName 127.0.0.1
		Port $port
		User $DISPATCH_TESTBED_USER
		IdentityFile $TB/keys/id_ed25519
		IdentitiesOnly yes
		UserKnownHostsFile $PWD/kh
		BatchMode yes
	EOF
	echo "[127.0.0.1]:$port $(cut -d" " -f1,2 "$TB/sshd/$name/host_ed25519.pub")" >>kh
}
# own_down NAME: stopped, its sessions too
own_down() { (. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_down "$1") 2>/dev/null; }
