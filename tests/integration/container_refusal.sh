#!/usr/bin/env bash
# A pyxis container request (--container-image, --container-name, or pyxis's
# PYXIS_CONTAINER_IMAGE variable) in the agent shape is refused with one
# message and the fix, on every node before anything starts: pyxis enters the
# container after our plugin has launched the agent, which would run outside
# the container (22.05/23.02) or not be found inside it (23.11+). The task
# shape, where Slurm starts every worker itself, goes ahead. The cluster's
# plugstack.conf lists a stand-in that registers pyxis's options
# (spank_fake_pyxis.c; pyxis itself is not in Debian).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

fix='srun --ntasks-per-node=<workers per node> --ddp'
run srun -N2 --ddp=cpu --ddp-procs=2 --container-image=nvcr.io/nvidia/pytorch:24.05 sh -c 'echo worker ran'
expect_failure "--ddp with --container-image (agent shape)"
expect_in "$ERR" "ddp: --container-image=nvcr.io/nvidia/pytorch:24.05: --ddp's agent cannot start workers inside a pyxis container" \
  "the refusal names the request"
expect_in "$ERR" "$fix --container-image=nvcr.io/nvidia/pytorch:24.05" "the refusal gives the task-shape command"
expect_eq "$(grep -c "inside a pyxis container" <<<"$ERR")" "1" "said once for the step, not per node or task"
expect_not_in "$OUT" "worker ran" "nothing ran"

run srun -N2 --ddp=cpu --container-name=train sh -c 'echo worker ran'
expect_failure "--ddp with --container-name"
expect_in "$ERR" "ddp: --container-name=train: " "--container-name is a container request too"

run env PYXIS_CONTAINER_IMAGE=ubuntu:24.04 srun -N2 --ddp=cpu sh -c 'echo worker ran'
expect_failure "--ddp with PYXIS_CONTAINER_IMAGE"
expect_in "$ERR" "ddp: PYXIS_CONTAINER_IMAGE=ubuntu:24.04: " "pyxis's variable is a container request too"

# The task shape: each task is a worker; the container plugin runs it.
run srun -N2 --ntasks-per-node=2 --ddp=cpu --container-image=ubuntu:24.04 sh -c 'echo "rank=$RANK of $WORLD_SIZE"'
expect_rc 0 "--ddp task shape with --container-image"
expect_eq "$(grep -c '^rank=[0-3] of 4$' <<<"$OUT")" "4" "four workers in the task shape"

# Without --ddp a container option is none of the plugin's business.
run srun -N2 --container-image=ubuntu:24.04 true
expect_rc 0 "srun --container-image without --ddp"
pass "pyxis container requests are refused in the agent shape with the task-shape fix; the task shape and plain steps run"
