#!/bin/sh
# A stand-in for a Python worker of tests/gpu/slurm-rows.sh where the machine
# lacks what it imports (the kit check's bare chroot has no Python; Debian has
# no Lightning or Accelerate): it proves the launch path only. It checks that
# the worker got the variables the framework reads (torchrun's contract, which
# Lightning's TorchElasticEnvironment and Accelerate's PartialState take) and
# prints the line the real script would, without a collective.
#
#   standin.sh probe|lightning|accelerate
set -eu
kind=${1:?probe, lightning or accelerate}
for v in RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK MASTER_ADDR MASTER_PORT TORCHELASTIC_RUN_ID; do
  eval "value=\${$v:-}"
  if [ -z "$value" ]; then
    echo "standin: $v is not set: $kind would not start" >&2
    exit 1
  fi
done
if [ "$RANK" -ge "$WORLD_SIZE" ] || [ "$LOCAL_RANK" -ge "$LOCAL_WORLD_SIZE" ]; then
  echo "standin: RANK $RANK / WORLD_SIZE $WORLD_SIZE, LOCAL_RANK $LOCAL_RANK / LOCAL_WORLD_SIZE $LOCAL_WORLD_SIZE do not fit" >&2
  exit 1
fi
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
case $kind in
  probe)
    echo "probe: rank=$RANK world=$WORLD_SIZE local_rank=$LOCAL_RANK node=$GROUP_RANK master=$MASTER_ADDR:$MASTER_PORT cpus=$cpus omp=${OMP_NUM_THREADS:-} ifname=${NCCL_SOCKET_IFNAME:-} backend=stand-in" ;;
  lightning)
    echo "lightning: rank $RANK of $WORLD_SIZE, node $GROUP_RANK, epochs 0" ;;
  accelerate)
    echo "accelerate: rank $RANK of $WORLD_SIZE, steps 0" ;;
  *)
    echo "standin: unknown kind $kind" >&2
    exit 2 ;;
esac
