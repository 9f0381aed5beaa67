#!/bin/bash
# dispatch submit --dry-run with containers (no host reached): a host without a
# runtime never sees a container flag; a plain host's container.sh and a SLURM
# host's srun line per runtime; --json names the runtime and image and carries
# container.sh; --emit writes it private; --solve skips hosts without a runtime
# (and says so under -v); the input errors exit 2 with their messages.
. "$TEST_SRCDIR/tests/cli/lib.sh"

cat >inv.yaml <<'EOF'
clusters:
  lab: {root: /srv/lab, work: /tmp/lab}
hosts:
  plainbox: {cluster: lab, chips: {h100: 2}}
  podbox: {cluster: lab, chips: {h100: 2}, container_runtime: podman, container_image: localhost/train:1}
  dockbox: {cluster: lab, container_runtime: docker, container_mounts: /data:/data:ro}
  hpc: {type: slurm, cluster: lab, container_runtime: pyxis}
  hpc-ch: {type: slurm, cluster: lab, container_runtime: charliecloud}
  hpc-app: {type: slurm, cluster: lab, container_runtime: apptainer}
  hpc-phpc: {type: slurm, cluster: lab, container_runtime: podman-hpc}
  hpc-none: {type: slurm, cluster: lab}
EOF
export DISPATCH_INVENTORY=inv.yaml

test_expect_success 'no image: no container flag anywhere, no container.sh' '
	dispatch submit -H hpc --dry-run -- true >out &&
	! grep -q -- "--container" out &&
	test_grep "^srun --kill-on-bad-exit=1 bash " out &&
	dispatch submit -H dockbox --dry-run -- true >out &&
	! grep -q "container.sh" out && ! grep -q "docker" out
'

test_expect_success 'each runtime wraps the bootstrap on its line' '
	dispatch submit -H hpc -N 2 --dry-run --container-image nvcr.io/nvidia/pytorch:24.01-py3 -- true >out &&
	test_grep "^srun --kill-on-bad-exit=1 --container-image=.nvcr.io#nvidia/pytorch:24.01-py3. --container-mounts=.* --no-container-mount-home --no-container-remap-root /bin/bash " out &&
	dispatch submit -H hpc-ch --dry-run --container-image /img/x -- true >out &&
	test_grep "^srun --kill-on-bad-exit=1 ch-run -b .* -c \"\$PWD\" ./img/x. -- bash " out &&
	dispatch submit -H hpc-app --gpus 1 --dry-run --container-image /img/x.sif -- true >out &&
	test_grep "^srun --kill-on-bad-exit=1 apptainer exec --nv --no-home --bind " out &&
	dispatch submit -H hpc-phpc --dry-run --container-image reg.io/a/b:1 -- true >out &&
	test_grep "^srun --kill-on-bad-exit=1 podman-hpc run --rm --network=host --ipc=host -v " out &&
	dispatch submit -H podbox --gpus 1 --dry-run -- true >out &&
	test_grep "^==> container.sh <==" out &&
	test_grep "^exec podman run --rm --name \"dispatch-\$DISPATCH_JOB_ID\" --pull=never --network=host --ipc=host --device nvidia.com/gpu=all -v ./srv/lab.:./srv/lab. " out &&
	dispatch submit -H dockbox --dry-run --container-image t:1 -- true >out &&
	test_grep "^exec docker run .* -v ./data.:./data.:ro -w \"\$PWD\" .* .t:1. bash " out
'

test_expect_success '--json names runtime and image; --emit writes container.sh (0700); --no-container' '
	dispatch --json submit -H podbox --dry-run --emit emitted -- true >out.json &&
	python3 -c "import json,sys; d=json.load(open(\"out.json\")); sys.exit(d[\"container\"] != {\"runtime\": \"podman\", \"image\": \"localhost/train:1\"} or \"exec podman run\" not in d[\"container_script\"] or d[\"emitted\"][0] != \"emitted/container.sh\")" &&
	test "$(stat -c %a emitted/container.sh)" = 700 &&
	bash -n emitted/container.sh && bash -n emitted/bootstrap.sh &&
	dispatch --json submit -H podbox --no-container --dry-run -- true >out.json &&
	python3 -c "import json,sys; d=json.load(open(\"out.json\")); sys.exit(d[\"container\"] is not None or d[\"container_script\"] is not None)"
'

test_expect_success '--solve skips hosts without a runtime for --container-image, saying so under -v' '
	dispatch -v submit --solve --no-check --gpus 1 --chip h100 --container-image localhost/x:1 --dry-run -- true >out 2>err &&
	test_grep "solve: plainbox: no container_runtime: the job runs in an image" err &&
	test_grep "host .podbox." err
'

test_expect_success 'input errors exit 2: runtime on the wrong host type, relative image for Pyxis, --module, no runtime' '
	printf "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  b:\n    cluster: c\n    container_runtime: pyxis\n" >bad.yaml &&
	test_expect_code 2 dispatch -i bad.yaml hosts 2>err &&
	test_grep "^dispatch: bad.yaml:6:24: hosts.b.container_runtime: .pyxis. runs jobs through srun and needs .type: slurm." err &&
	test_expect_code 2 dispatch submit -H hpc --dry-run --container-image x.sqsh -- true 2>err &&
	test_grep "^dispatch: container image .x.sqsh. is a relative path: Pyxis would read it as a registry image" err &&
	test_expect_code 2 dispatch submit -H hpc --dry-run --container-image /x.sqsh --module cuda -- true 2>err &&
	test_grep "exclude each other" err &&
	test_expect_code 2 dispatch submit -H hpc-none --dry-run --container-image /x.sqsh -- true 2>err &&
	test_grep "^dispatch: .hpc-none. has no container_runtime" err &&
	test_expect_code 2 dispatch submit -H hpc --dry-run --container-mounts /a:rel -- true 2>err &&
	test_expect_code 2 dispatch submit -H hpc --dry-run --container-image /x --no-container -- true 2>err
'

test_done
