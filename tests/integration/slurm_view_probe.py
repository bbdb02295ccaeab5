"""Prints how each framework that reads Slurm's variables sees this worker.

submitit's JobEnvironment (submitit/slurm/slurm.py) and Lightning's
SLURMEnvironment (lightning/fabric/plugins/environments/slurm.py) take their
ranks from SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS and SLURM_NODEID;
Lightning also refuses SLURM_NTASKS > 1 without SLURM_NTASKS_PER_NODE. Their
rank logic, reproduced here without importing either, next to torchrun's
variables.
"""
import os

e = os.environ
submitit = (int(e["SLURM_PROCID"]), int(e["SLURM_LOCALID"]), int(e["SLURM_NTASKS"]), int(e["SLURM_JOB_NUM_NODES"]),
            int(e["SLURM_NODEID"]))
ntasks = int(e.get("SLURM_NTASKS", "1"))
lightning_ok = not (ntasks > 1 and "SLURM_NTASKS_PER_NODE" not in e)
lightning = (int(e["SLURM_PROCID"]), int(e["SLURM_LOCALID"]), int(e["SLURM_NODEID"]), ntasks)
torchrun = (int(e["RANK"]), int(e["LOCAL_RANK"]), int(e["WORLD_SIZE"]), int(e["GROUP_WORLD_SIZE"]), int(e["GROUP_RANK"]))
pmi = sorted(k for k in e if k.startswith(("PMI_", "PMIX_")))
print("probe torchrun=%s submitit=%s lightning=%s lightning_ok=%s tasks_per_node=%s gtids=%s pmi=%s" % (
    ",".join(map(str, torchrun)), ",".join(map(str, submitit)), ",".join(map(str, lightning)), lightning_ok,
    e.get("SLURM_TASKS_PER_NODE"), e.get("SLURM_GTIDS"), ",".join(pmi) or "none"), flush=True)
