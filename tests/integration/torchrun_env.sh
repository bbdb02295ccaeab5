#!/usr/bin/env bash
# The worker environment of ddp-agent against PyTorch's own torchrun, on the
# PyTorch installed here (Debian 12: 1.13; Debian 13: 2.6): both start two
# workers from the same clean environment; every variable torchrun gives a
# worker must reach ours too, with the same value where the value is not a
# per-run choice. The differences we keep on purpose are listed below with
# their reason; anything else fails the test.
set -euo pipefail
agent=${1:?path to ddp-agent}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PYTHON=/usr/bin/python3
clean=(env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8 USE_LIBUV=0)

# (--redirects/--tee: torchrun 1.13 on Python 3.11 needs them set.)
# Debian's PyTorch 2.x has no libuv and its torchrun cannot start unpatched
# (trainer_torchrun.sh shows that); this torchrun is the same code with
# use_libuv=False.
torchrun=("$PYTHON" -m torch.distributed.run)
"$PYTHON" -c 'import torch.distributed as d; d.TCPStore("127.0.0.1", 0, 1, True, multi_tenant=True)' 2>/dev/null \
  || torchrun=("$PYTHON" "$here/torchrun/torchrun_nouv.py")
version=$("$PYTHON" -c 'import torch; print(torch.__version__)')

"${clean[@]}" "${torchrun[@]}" --standalone --nproc_per_node=2 --redirects 9:0 --tee 9:0 "$here/torchrun/dump_env.py" "$work/t" \
  >"$work/torchrun.log" 2>&1 || { cat "$work/torchrun.log"; fail "torchrun (PyTorch $version) did not run the workers"; }
"${clean[@]}" "$agent" --nproc 2 -- "$PYTHON" "$here/torchrun/dump_env.py" "$work/a" \
  >"$work/agent.log" 2>&1 || { cat "$work/agent.log"; fail "ddp-agent did not run the workers"; }
"${clean[@]}" env | sort >"$work/base"

# Set by the launcher: in the worker's environment, not in the clean one.
launched() { grep -v -F -x -f "$work/base" "$1" | cut -d= -f1; }
value() { sed -n "s/^$2=//p" "$1"; }

# The differences on purpose:
declare -A why=(
  # Per-run values: a port, an address, an id, a file of this run.
  [MASTER_PORT]=value [MASTER_ADDR]=value [TORCHELASTIC_RUN_ID]=value [TORCHELASTIC_ERROR_FILE]=value
  # torchrun's agent hosts the TCPStore on MASTER_PORT (True on 2.x); ours
  # never listens there, worker rank 0 hosts it (False), as torchrun 1.x did.
  [TORCHELASTIC_USE_AGENT_STORE]=value
  # PyTorch 1.x's name of TORCH_NCCL_ASYNC_ERROR_HANDLING, which we set; 2.x
  # warns about the old name in every worker. Both only matter on GPUs, where
  # the agent ends every worker on the first failure anyway.
  [NCCL_ASYNC_ERROR_HANDLING]=name
  # torchrun's own --signals-to-handle (PyTorch 2.x), set in its environment
  # for its agent and inherited by the workers, which do not read it;
  # ddp-agent's signals are fixed (TERM, INT, HUP, QUIT stop; USR1, USR2 go on).
  [TORCHELASTIC_SIGNALS_TO_HANDLE]=name
)
checked=0
for rank in 0 1; do
  t=$work/t.$rank a=$work/a.$rank
  [[ -s $t && -s $a ]] || fail "rank $rank wrote no environment"
  while read -r name; do
    if [[ ${why[$name]:-} == name ]]; then continue; fi
    grep -q "^$name=" "$a" || fail "torchrun (PyTorch $version) sets $name for its workers; ddp-agent does not"
    if [[ -z ${why[$name]:-} && $(value "$t" "$name") != "$(value "$a" "$name")" ]]; then
      fail "rank $rank: $name is '$(value "$a" "$name")' under ddp-agent, '$(value "$t" "$name")' under torchrun"
    fi
    checked=$((checked + 1))
  done < <(launched "$t")
done
((checked >= 30)) || fail "only $checked variables compared: torchrun's workers saw too little"
extra=$(comm -13 <(launched "$work/t.0" | sort) <(launched "$work/a.0" | sort) | tr '\n' ' ')
echo "PASS: PyTorch $version: every variable torchrun sets reaches ddp-agent's workers ($checked compared over 2 ranks); ddp-agent adds: $extra"
