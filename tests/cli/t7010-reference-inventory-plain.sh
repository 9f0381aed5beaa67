#!/bin/bash
# t7010: an inventory in the reference's current format, end to end on a plain host
# of the testbed (box1): the job runs in a login shell with its host's env and the
# cluster's credentials, after uv sync with a per-job UV_CACHE_DIR (no uv_dir) that is
# gone when the job ends; while it runs no process on the machine (sshd, the job's
# launcher, the bootstrap) shows a credential in its argv, and neither do dispatch's
# -v and --json output, the job's log or the ledger. uv is a stand-in put first on
# PATH by the host's env (see t7110). Skips without a testbed.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
DB=$DISPATCH_STATE_DIR/ledger.db
TBUSER=$DISPATCH_TESTBED_USER

SECRETS="plain-wandb-2d7e41 plain-entity-91fa plain-project-3c05 plain-hf-e6b290"
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
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

REF=$DISPATCH_TESTBED_DIR/cluster/work/t7010-$$
rm -rf "$REF" && mkdir -p "$REF/bin" "$REF/root" "$REF/log" "$REF/work" "$REF/tmp" &&
chown -R "$TBUSER" "$REF" && chmod 755 "$REF" "$REF/bin" ||
	fail_rest "cannot make $REF"
cleanup_ref() {
	[ -s "$TRASH/job" ] && dispatch -i "$TRASH/ref.yaml" cancel "$(cat "$TRASH/job")" >/dev/null 2>&1
	rm -rf "$REF" "$TRASH" # (lib.sh's own trap, replaced here)
}
trap cleanup_ref EXIT

cat >"$REF/bin/uv" <<'UV'
#!/bin/bash
d=$(dirname "$(dirname "$0")")
echo "uv $* cache=${UV_CACHE_DIR:-unset}" >>"$d/uv.log"
[ -d "${UV_CACHE_DIR:-/nonexistent}" ] && echo "cache-exists" >>"$d/uv.log"
mkdir -p .venv/bin
UV
chmod 755 "$REF/bin/uv"

mkdir -p code &&
printf '[project]\nname = "t"\nversion = "0"\n' >code/pyproject.toml &&
cat >code/report.sh <<'SH' &&
#!/bin/bash
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
{
	echo "host_var=$REF_HOST_VAR"
	echo "root=$DISPATCH_ROOT data=$DISPATCH_DATA_DIR"
	echo "uv_cache=$UV_CACHE_DIR"
	echo "wandb=$(h "$WANDB_API_KEY") entity=$(h "$WANDB_ENTITY")"
	echo "project=$(h "$WANDB_PROJECT") hf=$(h "$HF_TOKEN")"
} >"$1/report"
touch "$1/started"
while [ ! -e "$1/go" ] && [ -d "$1" ]; do sleep 0.2; done # (a killed test removes $1)
SH
chmod +x code/report.sh &&
tar -czf code.tar.gz -C code . ||
	fail_rest "cannot make the code tarball"

cat >ref.yaml <<YAML
priority: [ref-box]
clusters:
  refp:
    root: \${oc.env:T7010_ROOT}
    work: $REF/work
    log: $REF/log
    wandb: plain-wandb-2d7e41
    wandb_entity: plain-entity-91fa
    wandb_project: plain-project-3c05
    hf_token: plain-hf-e6b290
hosts:
  ref-box:
    ssh: box1
    cluster: refp
    type: plain
    chips: {}
    uv_groups: [cpu]
    env:
      PATH: $REF/bin:/usr/local/bin:/usr/bin:/bin
      TMPDIR: $REF/tmp
      REF_HOST_VAR: plain-host-value
YAML
chmod 600 ref.yaml
export T7010_ROOT=$REF/root

test_expect_success 'a job on the plain host; nothing dispatch prints with -v holds a credential' '
	dispatch -i ref.yaml -v --json submit -H ref-box -J t7010 --payload code.tar.gz \
		-- "shopt -q login_shell && echo yes >$REF/login; ./report.sh $REF" >sub.json 2>sub.err &&
	no_secrets sub.json sub.err &&
	jfield sub.json job >job
'

test_expect_success 'while it runs, no process shows a credential' '
	while [ ! -e "$REF/started" ]; do sleep 0.2; done &&
	ps -eo pid,user,args >ps.out &&
	test_grep "report.sh" ps.out &&
	no_secrets ps.out &&
	for p in /proc/[0-9]*; do tr "\0" " " <"$p/cmdline" 2>/dev/null; echo; done >cmdlines &&
	no_secrets cmdlines &&
	test -n "$(ls "$REF/tmp")" &&
	touch "$REF/go" &&
	while [ "$(state "$(cat job)")" = RUNNING ]; do sleep 0.2; done &&
	test "$(state "$(cat job)")" = COMPLETED
'

test_expect_success 'the job saw env, paths and credentials in a login shell; its uv cache is gone' '
	r=$REF/report && cat "$r" "$REF/uv.log" &&
	test "$(cat "$REF/login")" = yes &&
	test_grep "^host_var=plain-host-value$" "$r" &&
	test_grep "^root=$REF/root data=$REF/root/data$" "$r" &&
	test_grep "^wandb=$(sha plain-wandb-2d7e41) entity=$(sha plain-entity-91fa)$" "$r" &&
	test_grep "^project=$(sha plain-project-3c05) hf=$(sha plain-hf-e6b290)$" "$r" &&
	test_grep "^uv sync --frozen --group cpu cache=$REF/tmp/dispatch-uv-" "$REF/uv.log" &&
	test_grep "^cache-exists$" "$REF/uv.log" &&
	cache=$(sed -n "s/^uv_cache=//p" "$r") &&
	case $cache in "$REF"/tmp/dispatch-uv-*) ;; *) false ;; esac &&
	test ! -e "$cache" &&
	test -z "$(ls "$REF/tmp")"
'

test_expect_success 'the job log and the ledger hold no credential; the bootstrap is 0700' '
	stage=$(jfield sub.json stage_dir) &&
	test "$(stat -c %a "$stage/bootstrap.sh")" = 700 &&
	no_secrets "$(jfield sub.json log)" &&
	sqlite3 "$DB" .dump >ledger.sql &&
	test_grep t7010 ledger.sql &&
	no_secrets ledger.sql
'

test_done
