#!/bin/bash
# t5230: dispatch cp against a server that is not to be trusted, and the modes a copy
# gives, against real sshd (tests/testbed). The listings go over SFTP (--sftp: a new
# tree would go as a tar stream, whose hostile host is t5240's). The hostile server is an sshd of our own
# whose sftp Subsystem is tests/cli/lib-sftp-relay.py in front of OpenSSH's
# sftp-server: it lists entries of a directory under names no directory holds
# ("../x", "a/b", "/abs", ".", "..", "", a NUL, a terminal escape, a name twice) and
# serves those names. A download of that directory takes the entries listed under
# sound names, names each refused one (escaped) on a line of its own, writes nothing
# outside the destination, and exits 1; directly (libssh2) and through an OpenSSH
# master (sftp_mux.c). A symbolic link below the destination is never followed: two
# sources merged into one directory, a link and a directory under one name. A sound
# name with a terminal escape is copied, and -v writes it out (\e). A download applies the umask unless -p
# (a remote 0666 file is 0644 here with umask 022), an upload gets the server's
# umask unless -p (as scp); both transports. Shares t5200's test bed instance.
. "$(dirname "$0")/lib.sh"

. "$TEST_SRCDIR/tests/cli/lib-cp.sh"
cp_testbed
R=t5230.$$
HPORT=$((DISPATCH_TESTBED_PORT_BASE + 34))
hostile_down() { (. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_down cphostile) 2>/dev/null; }
cleanup() {
	local p
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	hostile_down
	rm -rf "${RHOME:?}/$R" "$TRASH"
}
trap cleanup EXIT
umask 022
mkdir -p "$RHOME/$R"

test_expect_success 'setup: a hostile sshd, its directory, the names it lists' '
	cp "$TEST_SRCDIR/tests/cli/lib-sftp-relay.py" "$RHOME/$R/relay.py" &&
	cat >"$RHOME/$R/rules.json" <<-\EOF &&
	{"f-up": "../x", "d-up": "../escdir", "f-slash": "okdir/planted", "f-abs": "/abs",
	 "f-dot": ".", "f-dotdot": "..", "f-esc": "\u001b[31m/x", "f-dup": "ok1",
	 "f-nul": "a\u0000b", "f-empty": "", "f-red": "\u001b[31mred"}
	EOF
	mkdir -p "$RHOME/$R/src/okdir" "$RHOME/$R/src/d-up" &&
	for f in ok1 ok2 okdir/inner d-up/planted f-up f-slash f-abs f-dot f-dotdot f-empty \
		f-nul f-esc f-dup f-red; do
		echo "$f" >"$RHOME/$R/src/$f" || return 1
	done &&
	chown -R "$U" "$RHOME/$R" &&
	(. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_up cphostile "" 127.0.0.1 "$HPORT" \
		"Subsystem sftp /usr/bin/python3 $RHOME/$R/relay.py $RHOME/$R/rules.json") 2>/dev/null &&
	cat >kcfg <<-EOF &&
	Host hostile
		HostName 127.0.0.1
		Port $HPORT
		User $U
		IdentityFile $TB/keys/id_ed25519
		IdentitiesOnly yes
		UserKnownHostsFile $PWD/kh
		BatchMode yes
	EOF
	echo "[127.0.0.1]:$HPORT $(cut -d" " -f1,2 "$TB/sshd/cphostile/host_ed25519.pub")" >kh &&
	printf "%s\n" "../x" "../escdir" "okdir/planted" "/abs" "." ".." "" "a\\x00b" \
		"\\e[31m/x" "ok1" | sort >want.refused &&
	printf "%s\n" "./ok1" "./ok2" "./okdir" "./okdir/inner" "./$(printf "\033")[31mred" |
		sort >want.tree
'

# check_download DIR ERR: what a download of src from the hostile server left in
# DIR/dest (DIR holding nothing else) and said in ERR
check_download() {
	ls -A "$1" >top && echo dest >want.top && test_cmp want.top top &&
	(cd "$1/dest" && find . -mindepth 1 | sort) >tree && test_cmp want.tree tree &&
	test "$(cat "$1/dest/ok2")" = ok2 && test "$(cat "$1/dest/okdir/inner")" = okdir/inner &&
	sed -n "s/^dispatch: skipping the name .\(.*\). that .hostile. listed in .$R\/src.: .*/\1/p" "$2" |
		sort >refused &&
	test_cmp want.refused refused &&
	test "$(wc -l <"$2")" = 10 &&
	! grep -q "$(printf "\033")" "$2"
}

test_expect_success 'a hostile listing: the sound names copied, the others named, nothing outside, exit 1' '
	mkdir w &&
	test_expect_code 1 dispatch -F kcfg cp -r --sftp hostile:$R/src w/dest 2>err &&
	check_download w err &&
	test_grep "skipping the name .\.\./x. that .hostile. listed in .$R/src.: it holds a ./." err &&
	test_grep "skipping the name .. that .hostile. listed in .$R/src.: it is empty" err &&
	test_grep "skipping the name .a\\\\x00b. .*: it holds a NUL byte" err &&
	test_grep "skipping the name .\.. .*: it names the directory itself" err &&
	test_grep "skipping the name .ok1. .*: it was listed before" err
'

test_expect_success 'the same through an OpenSSH master (sftp_mux.c)' '
	mkdir -m 700 cm &&
	ssh -F kcfg -fN -o ControlMaster=yes -o ControlPath="$PWD/cm/hostile" \
		-o ControlPersist=600 hostile </dev/null &&
	pid=$(ssh -F kcfg -o ControlPath="$PWD/cm/hostile" -O check hostile 2>&1 |
		sed -n "s/.*(pid=\([0-9]*\)).*/\1/p") &&
	echo "$pid" >>"$TRASH/.pids" &&
	{ printf "Host hostile\n  ControlPath %s\n\n" "$PWD/cm/hostile" && cat kcfg; } >mcfg &&
	mkdir m &&
	test_expect_code 1 dispatch -v -F mcfg cp -r --sftp hostile:$R/src m/dest 2>verr &&
	test_grep "hostile: via master" verr &&
	grep "^dispatch: skipping the name" verr >err &&
	check_download m err &&
	# -v names each file copied: a sound name with an escape in it is written out
	test_grep -F "src/\\e[31mred -> m/dest/\\e[31mred" verr &&
	! grep -q "$(printf "\033")" verr
'
hostile_down

test_expect_success 'a link the copy made is not followed: two sources merged, a link and a directory under one name' '
	mkdir outside two &&
	dispatch run -H box1 -- "mkdir -p $R/a $R/b/sub && echo f >$R/b/sub/f && ln -s $PWD/outside $R/a/sub" &&
	test_expect_code 1 dispatch cp -r box1:$R/a/. box1:$R/b/. two 2>err &&
	test_grep "cannot overwrite non-directory .two/sub. with directory .box1:$R/b/\./sub." err &&
	ls -A outside >left && test_must_be_empty left &&
	test -L two/sub
'

# modes FILE...: "MODE NAME" of each
modes() { stat -c "%a %n" "$@"; }

test_expect_success 'setup: files and a directory of mode 0666/0777 on both sides' '
	mkdir -p "$RHOME/$R/m/d" && echo x >"$RHOME/$R/m/f" && echo y >"$RHOME/$R/m/d/g" &&
	chmod 666 "$RHOME/$R/m/f" "$RHOME/$R/m/d/g" && chmod 777 "$RHOME/$R/m/d" &&
	chown -R "$U" "$RHOME/$R/m" &&
	mkdir -p l/d && echo x >l/f && echo y >l/d/g && chmod 666 l/f l/d/g && chmod 777 l/d &&
	test "$(dispatch run -H box1 -- umask)" = 0022
'

# check_modes HOST: downloads and uploads through HOST, without and with -p
check_modes() {
	rm -rf down downp "$RHOME/$R/up" "$RHOME/$R/upp" &&
	dispatch cp -r "$1:$R/m" down && dispatch cp -rp "$1:$R/m" downp &&
	modes down/f down/d down/d/g downp/f downp/d downp/d/g >got &&
	printf "%s\n" "644 down/f" "755 down/d" "644 down/d/g" "666 downp/f" "777 downp/d" \
		"666 downp/d/g" >want && test_cmp want got &&
	dispatch cp "$1:$R/m/f" one && dispatch cp -p "$1:$R/m/f" onep &&
	modes one onep >got && printf "%s\n" "644 one" "666 onep" >want && test_cmp want got &&
	dispatch cp -r l "$1:$R/up" && dispatch cp -rp l "$1:$R/upp" &&
	(cd "$RHOME/$R" && modes up/f up/d/g upp/f upp/d upp/d/g) >got &&
	printf "%s\n" "644 up/f" "644 up/d/g" "666 upp/f" "777 upp/d" "666 upp/d/g" >want &&
	test_cmp want got
}

test_expect_success 'modes without -p: the local umask on a download, the server'"'"'s on an upload' '
	check_modes box1
'

test_expect_success 'the same through an OpenSSH master' '
	mkdir -m 700 cm2 &&
	ssh -F "$DISPATCH_SSH_CONFIG" -fN -o ControlMaster=yes -o ControlPath="$PWD/cm2/box1" \
		-o ControlPersist=600 box1 </dev/null &&
	pid=$(ssh -F "$DISPATCH_SSH_CONFIG" -o ControlPath="$PWD/cm2/box1" -O check box1 2>&1 |
		sed -n "s/.*(pid=\([0-9]*\)).*/\1/p") &&
	echo "$pid" >>"$TRASH/.pids" &&
	{ printf "Host box1\n  ControlPath %s\n\n" "$PWD/cm2/box1" && cat "$DISPATCH_SSH_CONFIG"; } >mux_config &&
	DISPATCH_SSH_CONFIG=$PWD/mux_config dispatch -v run -H box1 -- true 2>err &&
	test_grep "box1: via master" err &&
	DISPATCH_SSH_CONFIG=$PWD/mux_config check_modes box1
'

test_done
