# shellcheck shell=bash
# For the cp files on t5200's test bed instance (t5220, t5240): sshds of their own,
# for servers configured otherwise or killed in the middle of a copy. TB is the test
# bed's directory; kcfg and kh in the current directory collect them.
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
