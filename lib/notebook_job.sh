# shellcheck shell=bash
# A notebook job's command (notebook_job_command): runs inside the bootstrap's command
# subshell (bash, no strict mode), in the code's directory. No user text: nothing here
# needs quoting. The probe ignores http_proxy (clusters often set one, and it would
# never reach the node's own address). Kernel connection files and the server's
# token go to a new directory (0700, a random name: mktemp fails rather than reuse one
# that another user made).

# where the code is, for dispatch notebook sync (next to the bootstrap: the stage dir)
printf '%s\n' "${DISPATCH_CODE_DIR:-$PWD}" >"${BASH_SOURCE[0]%/*}/code_dir" 2>/dev/null || true
dnb_py=$(command -v python3 || command -v python) || {
	echo "dispatch notebook: no python3 on $(hostname)'s PATH" >&2; exit 127; }
dnb_port=$("$dnb_py" -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])') || exit 1
if [ -n "${SLURM_JOB_ID:-}" ]; then
	dnb_addr=$(scontrol show node -o "${SLURMD_NODENAME:-$(hostname)}" 2>/dev/null | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
	dnb_addr=${dnb_addr:-${SLURMD_NODENAME:-$(hostname)}}
else
	dnb_addr=127.0.0.1
fi
if command -v uv >/dev/null 2>&1 && [ -f pyproject.toml ]; then
	set -- uv run --with jupyterlab jupyter lab
elif command -v jupyter >/dev/null 2>&1; then
	if jupyter lab --version >/dev/null 2>&1; then set -- jupyter lab
	elif jupyter notebook --version >/dev/null 2>&1; then set -- jupyter notebook
	else set -- jupyter server; fi
else
	echo "dispatch notebook: no jupyter on $(hostname)'s PATH: install Jupyter there" \
		"(jupyter-server or notebook), or give the code a pyproject.toml and uv" >&2
	echo 'dispatch-notebook-exit 127'; exit 127
fi
JUPYTER_RUNTIME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dispatch-notebook-$DISPATCH_JOB_ID.XXXXXXXX") || {
	echo "dispatch notebook: cannot create a private runtime directory in ${TMPDIR:-/tmp} on $(hostname)" >&2
	echo 'dispatch-notebook-exit 1'; exit 1; }
export JUPYTER_RUNTIME_DIR
echo "dispatch notebook: starting $* on $(hostname), port $dnb_port" >&2
"$@" --no-browser --ip="$dnb_addr" --port="$dnb_port" --port-retries=0 --log-level=WARN &
dnb_pid=$!
until "$dnb_py" -c 'import sys, urllib.request; urllib.request.build_opener(urllib.request.ProxyHandler({})).open("http://%s:%s/api" % (sys.argv[1], sys.argv[2]), timeout=2)' "$dnb_addr" "$dnb_port" 2>/dev/null; do
	if ! kill -0 "$dnb_pid" 2>/dev/null; then
		wait "$dnb_pid"; dnb_status=$?; rm -rf -- "$JUPYTER_RUNTIME_DIR"
		echo "dispatch-notebook-exit $dnb_status"; exit "$dnb_status"
	fi
	sleep 1
done
echo "dispatch-notebook $(hostname) $dnb_addr $dnb_port"
wait "$dnb_pid"
dnb_status=$?
rm -rf -- "$JUPYTER_RUNTIME_DIR"
exit "$dnb_status"
