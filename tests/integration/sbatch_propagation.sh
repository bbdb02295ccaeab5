#!/usr/bin/env bash
# `sbatch --ddp...` reaches every srun step inside the script (Slurm exports
# the options to the job's environment; flags arrive as "(null)"), and
# `srun --no-ddp` opts one step out.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/job.sh" <<JOB
#!/bin/bash
#SBATCH --ddp-verbose
srun $PYTHON $DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py
echo "--- no-ddp step"
srun --no-ddp env | grep -c '^RANK=' || true
JOB
sbatch_wait -N2 --ddp=cpu --ddp-procs=2 -o "$work/out" -e "$work/err" "$work/job.sh"
OUT=$(sed "s/^\\[rank [0-9]*\\] //" "$work/out" 2>/dev/null || true) ERR=$(cat "$work/err" 2>/dev/null || true)
expect_rc 0 "sbatch --ddp job"
expect_eq "$(grep -c 'OK$' <<<"$OUT")" "4" "the srun step inherited --ddp=cpu --ddp-procs=2"
expect_in "$OUT" $'--- no-ddp step\n0' "srun --no-ddp ran without the DDP environment"
expect_in "$ERR" "ddp-agent: info: node 0" "#SBATCH --ddp-verbose (a flag: \"(null)\") reached the step"

# salloc passes its options to the steps of the command it runs the same way.
run salloc -N2 --ddp=cpu --ddp-procs=2 srun "$PYTHON" "$DDP_SOURCE_DIR/tests/integration/fixtures/allreduce.py"
expect_rc 0 "salloc --ddp srun"
expect_eq "$(grep -c 'sum=10 expected=10 OK$' <<<"$OUT")" "4" "salloc's --ddp options reached the srun step"
pass "sbatch and salloc options reach srun steps; --no-ddp opts out"
