#!/bin/bash
# t7110: an inventory in the reference's current format, end to end on the testbed's
# SLURM cluster (host hpc). The job runs on a node in a login shell, sees its host's
# env, the cluster's paths (${oc.env:...} resolved locally), UV_CACHE_DIR from uv_dir
# and the four credentials, runs its command after uv sync (--frozen first, unfrozen
# when that fails); JuiceFS is mounted with --all-squash and its password only in
# META_PASSWORD. While the job runs, no process on this machine (the login node's
# sshd and shells, sbatch, slurmstepd, srun, the bootstrap and the mount on the node
# share its process table) shows a credential in its argv; neither does anything
# dispatch prints with -v, the sbatch script, or the ledger.
#
# uv and juicefs are not on the test bed: the host's env puts a directory of small
# stand-ins first on PATH. They record what they were run with (uv also makes the
# .venv, and fails --frozen to make the bootstrap fall back); the juicefs stand-in
# leaves a process with its own argv behind, as a real mount's daemon would, so that
# the ps check sees what juicefs was started with. Skips without the SLURM part.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
DB=$DISPATCH_STATE_DIR/ledger.db
TBUSER=$DISPATCH_TESTBED_USER

SECRETS="ref-wandb-6c1f9e ref-entity-03ab ref-project-77d2 ref-hf-b81c44 ref-jfs-pw-5a90"
no_secrets() {
	local f s
	for f in "$@"; do
		for s in $SECRETS; do
			if grep -n -e "$s" "$f"; then
				echo "credential $s in $f"
				return 1
			fi
		done
	done
}
jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
state() {
	dispatch -i ref.yaml --json status "$1" >st.json &&
	python3 -c 'import json; print(json.load(open("st.json"))["jobs"][0]["state"])'
}
wait_state() { # JOB STATE...: until the job is in one of them (bounded by the test's timeout)
	local s
	while :; do
		s=$(state "$1") || return 1
		for want in "${@:2}"; do [ "$s" = "$want" ] && return 0; done
		case $s in COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL)
			echo "job $1 ended $s" >&2; return 1 ;;
		esac
		sleep 0.2
	done
}

# Everything the job touches: readable by the test user, who runs it on the nodes.
REF=$DISPATCH_TESTBED_DIR/cluster/work/t7110-$$
rm -rf "$REF" && mkdir -p "$REF/bin" "$REF/root" "$REF/uv-cache" "$REF/log" "$REF/work" &&
chown -R "$TBUSER" "$REF" && chmod 755 "$REF" "$REF/bin" ||
	fail_rest "cannot make $REF"
cleanup_ref() {
	local p
	[ -s "$TRASH/job" ] && dispatch -i "$TRASH/ref.yaml" cancel "$(cat "$TRASH/job")" >/dev/null 2>&1
	for p in $(cat "$REF"/juicefs.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
	rm -rf "$REF" "$TRASH" # (lib.sh's own trap, replaced here)
}
trap cleanup_ref EXIT

cat >"$REF/bin/uv" <<'EOF'
#!/bin/bash
# stand-in for uv: records its arguments and cache dir; --frozen fails (a lock file
# that does not match), a plain sync makes the .venv
d=$(dirname "$(dirname "$0")")
echo "uv $* cache=${UV_CACHE_DIR:-unset} pwd=$PWD" >>"$d/uv.log"
case " $* " in *" --frozen "*) exit 1 ;; esac
mkdir -p .venv/bin && printf '#!/bin/sh\necho venv-tool\n' >.venv/bin/venv-tool && chmod +x .venv/bin/venv-tool
EOF
cat >"$REF/bin/juicefs" <<'EOF'
#!/bin/bash
# stand-in for juicefs mount --background: records its arguments and whether it got
# META_PASSWORD (not the password), and leaves a process with the same argv behind
d=$(dirname "$(dirname "$0")")
printf '%s\n' "$*" >"$d/juicefs.args"
if [ -n "${META_PASSWORD:-}" ]; then
	printf '%s' "$META_PASSWORD" | sha256sum | cut -d' ' -f1 >"$d/juicefs.pw-sha"
fi
(exec -a "juicefs $*" sleep 600) >/dev/null 2>&1 </dev/null &
echo $! >>"$d/juicefs.pid"
EOF
chmod 755 "$REF/bin/uv" "$REF/bin/juicefs"

# The code: a pyproject.toml (so uv sync runs) and the command's script, which
# reports hashes of the credentials (never the values: the log is readable) and then
# holds until the test has looked at ps.
mkdir -p code &&
printf '[project]\nname = "t"\nversion = "0"\n' >code/pyproject.toml &&
cat >code/report.sh <<'EOF' &&
#!/bin/bash
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
{
	echo "host_var=$REF_HOST_VAR"
	echo "oc_env=$REF_OC_VALUE"
	echo "root=$DISPATCH_ROOT theseus_root=$THESEUS_ROOT"
	echo "data=$DISPATCH_DATA_DIR checkpoints=$DISPATCH_CHECKPOINTS_DIR"
	echo "results=$DISPATCH_RESULTS_DIR status=$DISPATCH_STATUS_DIR"
	echo "uv_cache=$UV_CACHE_DIR"
	echo "venv=$(venv-tool)"
	echo "wandb=$(h "$WANDB_API_KEY") entity=$(h "$WANDB_ENTITY")"
	echo "project=$(h "$WANDB_PROJECT") hf=$(h "$HF_TOKEN")"
	echo "meta_password=${META_PASSWORD:-unset}"
} >"$1/report"
touch "$1/started"
while [ ! -e "$1/go" ] && [ -d "$1" ]; do sleep 0.2; done # (a killed test removes $1)
EOF
chmod +x code/report.sh &&
tar -czf code.tar.gz -C code . ||
	fail_rest "cannot make the code tarball"

sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

cat >ref.yaml <<EOF
# the reference's current format (theseus examples/dispatch.yaml layout)
mount: /mnt/jfs-local
priority: [ref-hpc]
gres_mapping:
  a100-sxm4-80gb: a100
clusters:
  refc:
    root: \${oc.env:T7110_ROOT}
    work: $REF/work
    log: $REF/log
    checkpoints: $REF/ckpts
    mount: redis://:ref-jfs-pw-5a90@redis.invalid:6379/0
    cache_size: 1G
    cache_dir: $REF/jfs-cache
    all_squash: "1000:1000"
    uv_dir: $REF/uv-cache
    wandb: ref-wandb-6c1f9e
    wandb_entity: ref-entity-03ab
    wandb_project: ref-project-77d2
    hf_token: ref-hf-b81c44
hosts:
  ref-hpc:
    ssh: hpc
    cluster: refc
    type: slurm
    partitions: [cpu]
    mem: 500MB
    uv_groups: [cpu]
    env:
      PATH: $REF/bin:/usr/local/bin:/usr/bin:/bin
      REF_HOST_VAR: host-value
      REF_OC_VALUE: \${oc.env:T7110_VALUE,fallback}
EOF
chmod 600 ref.yaml
export T7110_ROOT=$REF/root T7110_VALUE="from the local env"

test_expect_success 'the reference-format inventory loads; hosts and solve name the SLURM host' '
	dispatch -i ref.yaml hosts >out 2>err &&
	test_must_be_empty err &&
	test_grep "^ref-hpc  *slurm  *hpc  *refc" out &&
	dispatch -i ref.yaml solve --cpu >out &&
	test_grep "^host: *ref-hpc$" out
'

test_expect_success 'a job: submitted with -v, nothing dispatch prints holds a credential' '
	dispatch -i ref.yaml -v --json submit -H ref-hpc -J t7110 --payload code.tar.gz \
		-- "shopt -q login_shell && echo yes >$REF/login; ./report.sh $REF" >sub.json 2>sub.err &&
	no_secrets sub.json sub.err &&
	job=$(jfield sub.json job) && echo "$job" >job &&
	case $job in [0-9]*@ref-hpc) ;; *) false ;; esac
'

test_expect_success 'while the job runs, no process shows a credential (ps on the login node and the node)' '
	job=$(cat job) &&
	wait_state "$job" RUNNING COMPLETED &&
	while [ ! -e "$REF/started" ]; do sleep 0.2; done &&
	ps -eo pid,user,args >ps.out &&
	test_grep "report.sh" ps.out &&
	test_grep "^ *[0-9]* *[^ ]* *juicefs mount --background" ps.out &&
	no_secrets ps.out &&
	# and each process by its full command line, not cut at ps width
	for p in /proc/[0-9]*; do tr "\0" " " <"$p/cmdline" 2>/dev/null; echo; done >cmdlines &&
	no_secrets cmdlines &&
	touch "$REF/go" &&
	wait_state "$job" COMPLETED
'

test_expect_success 'the job saw its host env, paths, oc.env values, uv cache and credentials, in a login shell' '
	r=$REF/report && cat "$r" &&
	test "$(cat "$REF/login")" = yes &&
	test_grep "^host_var=host-value$" "$r" &&
	test_grep "^oc_env=from the local env$" "$r" &&
	test_grep "^root=$REF/root theseus_root=$REF/root$" "$r" &&
	test_grep "^data=$REF/root/data checkpoints=$REF/ckpts$" "$r" &&
	test_grep "^results=$REF/root/results status=$REF/root/status$" "$r" &&
	test_grep "^uv_cache=$REF/uv-cache$" "$r" &&
	test_grep "^venv=venv-tool$" "$r" &&
	test_grep "^wandb=$(sha ref-wandb-6c1f9e) entity=$(sha ref-entity-03ab)$" "$r" &&
	test_grep "^project=$(sha ref-project-77d2) hf=$(sha ref-hf-b81c44)$" "$r" &&
	test_grep "^meta_password=unset$" "$r"
'

test_expect_success 'uv sync ran before the command: --frozen first, then unfrozen, with the groups and uv_dir' '
	cat "$REF/uv.log" &&
	test "$(sed -n 1p "$REF/uv.log" | cut -d" " -f1-5)" = "uv sync --frozen --group cpu" &&
	test "$(sed -n 2p "$REF/uv.log" | cut -d" " -f1-4)" = "uv sync --group cpu" &&
	test_grep "cache=$REF/uv-cache " "$REF/uv.log"
'

test_expect_success 'juicefs got --all-squash and the URL without its password; the password came in META_PASSWORD' '
	cat "$REF/juicefs.args" &&
	test "$(cat "$REF/juicefs.args")" = "mount --background --cache-size 1G --cache-dir $REF/jfs-cache --all-squash 1000:1000 redis://redis.invalid:6379/0 $REF/root" &&
	test "$(cat "$REF/juicefs.pw-sha")" = "$(sha ref-jfs-pw-5a90)"
'

test_expect_success 'the sbatch script, the job log and the ledger hold no credential; the bootstrap is 0700' '
	stage=$(jfield sub.json stage_dir) &&
	no_secrets "$stage/sbatch.sh" "$(jfield sub.json log)" &&
	test "$(stat -c %a "$stage/bootstrap.sh")" = 700 &&
	grep -q ref-wandb-6c1f9e "$stage/bootstrap.sh" &&
	sqlite3 "$DB" .dump >ledger.sql &&
	test_grep t7110 ledger.sql &&
	no_secrets ledger.sql
'

test_expect_success 'a missing uv fails the job with a message naming the node and the tool' '
	sed -e "s|PATH: $REF/bin:|PATH: |" ref.yaml >nouv.yaml && chmod 600 nouv.yaml &&
	sed -i -e "/^    mount:/d" nouv.yaml &&
	dispatch -i nouv.yaml --json submit -H ref-hpc -J t7110-nouv --payload code.tar.gz \
		-- ./report.sh "$REF" >sub2.json &&
	job=$(jfield sub2.json job) &&
	wait_state "$job" FAILED &&
	test_grep "^dispatch: uv not found on node[12] " "$(jfield sub2.json log)"
'

test_done
