#!/usr/bin/env bash
# Slurm really loads the plugin in every context, and a step without --ddp is
# untouched by it.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

run srun --help
expect_rc 0 "srun --help"
expect_in "$OUT" "--ddp-procs=N" "srun --help lists the plugin's options"
expect_in "$OUT" "[ddp] Workers per node in CPU mode" "usage text tagged [ddp]"
run sbatch --help
expect_in "$OUT" "--ddp-gpus=N" "sbatch --help lists the plugin's options"
run salloc --help
expect_in "$OUT" "--no-ddp" "salloc --help lists the plugin's options"

# Plain steps: no DDP variables, nothing printed by the plugin.
run srun -N2 hostname
expect_rc 0 "srun -N2 hostname"
expect_eq "$(wc -l <<<"$OUT")" "2" "two lines from srun -N2 hostname"
expect_not_in "$ERR" "spank_ddp" "no plugin messages without --ddp"
run srun -N2 env
expect_rc 0 "srun -N2 env"
for var in RANK= LOCAL_RANK= WORLD_SIZE= MASTER_ADDR= DDP_PLAN_ TORCHELASTIC_; do
  expect_not_in "$OUT" $'\n'"$var" "srun -N2 env without --ddp"
done
pass "plugin loads in srun/sbatch/salloc; plain steps untouched"
