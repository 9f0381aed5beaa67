# Helpers of the notebook tests (t7700, t7710), sourced after testbed_up: a Jupyter
# client (lib-jupyter.py, with the system python3 that has python3-websocket), bounded
# waits, what a notebook leaves behind, and Chromium's screenshot.
# A ledger (and notebook tokens) of this test's own, not the instance's
export DISPATCH_STATE_DIR="$TRASH/state"
# Whatever a failed test leaves running ends with the file: the dispatch processes
# started in the background (tracked, SIGINT: the tunnel ends), then every job of this
# test's ledger is cancelled.
track() { echo "$1" >>"$TRASH/.pids"; }
cleanup() {
	local p
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill -INT "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	"$DISPATCH" --json jobs --no-refresh 2>/dev/null |
		python3 -c 'import json, sys; [print(j["job"]) for j in json.load(sys.stdin)["jobs"]]' |
		while read -r p; do "$DISPATCH" cancel "$p" >/dev/null 2>&1; done
	rm -rf "$TRASH"
}
trap cleanup EXIT
# python3-websocket is Debian's: the system's python3 has it
for PY3 in python3 /usr/bin/python3; do "$PY3" -c 'import websocket' 2>/dev/null && break; done
command -v chromium >/dev/null || fail_rest "no chromium (tests/install-deps installs it)"
jupyter_cell() { "$PY3" "$TEST_SRCDIR/tests/cli/lib-jupyter.py" "$@"; }
CELL='import os, socket; print(socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES", "-"))'

git init -q repo && echo "print(1)" >repo/main.py &&
	git -C repo add . && git -C repo -c user.name=t -c user.email=t@t commit -qm code || exit 1

# until_file FILE PATTERN: bounded (150 s) wait until FILE has a line matching PATTERN
until_file() {
	local i
	for i in $(seq 1 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.5
	done
	echo "no '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}
until_state() {
	local i
	for i in $(seq 1 120); do
		dispatch status "$1" 2>/dev/null | grep -q " $2 " && return 0
		sleep 0.5
	done
	echo "job $1 never got to $2" >&2
	dispatch status "$1" >&2
	return 1
}
until_gone() {
	local i
	for i in $(seq 1 60); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.5
	done
	echo "process $1 still runs" >&2
	return 1
}
# no_server PORT: nothing of the notebook on remote port PORT runs any more (the
# nodes share this machine's process table): neither the server nor its kernels
no_server() {
	local i
	for i in $(seq 1 40); do
		pgrep -f -- "--port=$1 " >/dev/null || pgrep -f -- "--port=$1\$" >/dev/null ||
			{ pgrep -f "dispatch-notebook-$2[.][A-Za-z0-9]*/kernel" >/dev/null || return 0; }
		sleep 0.5
	done
	echo "left behind:" >&2
	ps -eo pid,args | grep -e "--port=$1" -e "dispatch-notebook-$2[.][A-Za-z0-9]*/" | grep -v grep >&2
	return 1
}
job_of() { sed -n 's/.*submitted job \([^ ;]*\);.*/\1/p' "$1"; }
screenshot() {
	timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TRASH/chromium" \
		--window-size=1280,800 --virtual-time-budget=5000 --screenshot="$2" "$1" >chromium.log 2>&1 &&
	test "$(head -c 4 "$2" | od -An -c | tr -d " ")" = "211PNG" &&
	test "$(wc -c <"$2")" -gt 5000
}
# The screenshot's path, as a TAP comment (the test's own output is shown only when
# it fails)
show_artifact() { [ -f "$1" ] && echo "# screenshot: $1"; return 0; }

