#!/usr/bin/python3
"""The GPT of ddp-train (trainer/model/gpt.hpp) written in PyTorch, attention
by hand (PyTorch 1.13 has no fused attention), for unit.gpt_layers' parity
test: from the flat parameters the test wrote (gpt_layout()'s order, read
here independently), the same tokens and targets, STEPS steps of AdamW
(nanoGPT's decay groups) with gradients clipped to norm 1; prints each step's
loss before its update.

usage: gpt_reference.py PARAMS.f32 LAYERS HEADS WIDTH CONTEXT VOCAB PADDED B T STEPS LR TOKENS TARGETS
(TOKENS and TARGETS: comma-separated, B x T each)

With --train, ddp-train --model gpt's whole run for integration.trainer_gpt:
the token file's windows in ddp-train's order (step s, row r: window
(s x B + r) mod windows), the learning rate warmed up and cosine-decayed as
nanoGPT does, AdamW with decay 0.1 and clipping to 1, from PARAMS.f32 (which
--init writes: GPT-2's initialisation); prints each step's loss.

usage: gpt_reference.py --init PARAMS.f32 LAYERS WIDTH CONTEXT VOCAB SEED
       gpt_reference.py --train PARAMS.f32 TOKENS.tok LAYERS HEADS WIDTH CONTEXT VOCAB B STEPS LR WARMUP MIN_LR
"""
import math
import sys

import torch
import torch.nn.functional as F


def unflatten(flat, L, C, T, Vp):
    """The named tensors, in gpt_layout()'s order, as leaves that take gradients."""
    shapes = [("wte", (Vp, C)), ("wpe", (T, C))]
    for i in range(L):
        shapes += [(f"{i}.ln1_w", (C,)), (f"{i}.ln1_b", (C,)), (f"{i}.qkv_w", (3 * C, C)), (f"{i}.qkv_b", (3 * C,)),
                   (f"{i}.proj_w", (C, C)), (f"{i}.proj_b", (C,)), (f"{i}.ln2_w", (C,)), (f"{i}.ln2_b", (C,)),
                   (f"{i}.fc_w", (4 * C, C)), (f"{i}.fc_b", (4 * C,)), (f"{i}.fc_proj_w", (C, 4 * C)),
                   (f"{i}.fc_proj_b", (C,))]
    shapes += [("lnf_w", (C,)), ("lnf_b", (C,))]
    params, at = {}, 0
    for name, shape in shapes:
        n = math.prod(shape)
        params[name] = flat[at:at + n].view(shape).clone().requires_grad_(True)
        at += n
    assert at == flat.numel(), f"layout: {at} parameters named, {flat.numel()} given"
    return params


def attention(x, p, i, H):
    B, T, C = x.shape
    qkv = x @ p[f"{i}.qkv_w"].T + p[f"{i}.qkv_b"]
    q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in qkv.split(C, dim=2))
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    y = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v
    return y.transpose(1, 2).reshape(B, T, C) @ p[f"{i}.proj_w"].T + p[f"{i}.proj_b"]


def loss_of(p, tokens, targets, L, H, V):
    B, T = tokens.shape
    C = p["wte"].shape[1]
    x = p["wte"][tokens] + p["wpe"][:T]
    for i in range(L):
        x = x + attention(F.layer_norm(x, (C,), p[f"{i}.ln1_w"], p[f"{i}.ln1_b"]), p, i, H)
        h = F.layer_norm(x, (C,), p[f"{i}.ln2_w"], p[f"{i}.ln2_b"])
        h = F.gelu(h @ p[f"{i}.fc_w"].T + p[f"{i}.fc_b"], approximate="tanh")
        x = x + h @ p[f"{i}.fc_proj_w"].T + p[f"{i}.fc_proj_b"]
    logits = F.layer_norm(x, (C,), p["lnf_w"], p["lnf_b"]) @ p["wte"].T
    return F.cross_entropy(logits[:, :, :V].reshape(B * T, V), targets.reshape(B * T))


def load_params(path, L, C, T, Vp):
    return unflatten(torch.frombuffer(bytearray(open(path, "rb").read()), dtype=torch.float32), L, C, T, Vp)


def adamw_of(p, lr):
    """nanoGPT's AdamW: decay 0.1 on matrices and embeddings, none on biases and LayerNorms."""
    decayed = [t for t in p.values() if t.dim() >= 2]
    kept = [t for t in p.values() if t.dim() < 2]
    return torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": kept, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95), eps=1e-8)


def step_of(p, opt, tokens, targets, L, H, V):
    """One step: the loss before the update, gradients clipped to norm 1."""
    opt.zero_grad()
    loss = loss_of(p, tokens, targets, L, H, V)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
    opt.step()
    return loss.item()


def main():
    path = sys.argv[1]
    L, H, C, T, V, Vp, B, T_used, steps = (int(a) for a in sys.argv[2:11])
    lr = float(sys.argv[11])
    tokens = torch.tensor([int(t) for t in sys.argv[12].split(",")]).view(B, T_used)
    targets = torch.tensor([int(t) for t in sys.argv[13].split(",")]).view(B, T_used)
    p = load_params(path, L, C, T, Vp)
    opt = adamw_of(p, lr)
    losses = [step_of(p, opt, tokens, targets, L, H, V) for _ in range(steps)]
    print(" ".join(repr(x) for x in losses))


def shapes_of(L, C, T, Vp):
    return {n: t.shape for n, t in unflatten(torch.zeros(count_of(L, C, T, Vp)), L, C, T, Vp).items()}


def count_of(L, C, T, Vp):
    return Vp * C + T * C + L * (12 * C * C + 13 * C) + 2 * C


def init_main(path, L, C, T, V, seed):
    """GPT-2's initialisation: weights N(0, 0.02) (the residual projections
    0.02 / sqrt(2 L)), biases 0, LayerNorms 1."""
    torch.manual_seed(seed)
    parts = []
    for name, shape in shapes_of(L, C, T, V).items():
        if name.endswith("ln1_w") or name.endswith("ln2_w") or name == "lnf_w":
            parts.append(torch.ones(shape))
        elif len(shape) == 1:
            parts.append(torch.zeros(shape))
        else:
            std = 0.02 / math.sqrt(2 * L) if name.endswith("proj_w") else 0.02
            parts.append(torch.randn(shape) * std)
    open(path, "wb").write(torch.cat([t.reshape(-1) for t in parts]).numpy().tobytes())


def lr_at(step, max_lr, min_lr, warmup, total):
    """nanoGPT's get_lr, counting from 0."""
    if step < warmup:
        return max_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (max_lr - min_lr)


def train_main(args):
    path, token_path = args[0], args[1]
    L, H, C, T, V, B, steps = (int(a) for a in args[2:9])
    lr, warmup, min_lr = float(args[9]), int(args[10]), float(args[11])
    raw = open(token_path, "rb").read()
    assert raw[:8] == b"DDPTOKEN", f"{token_path}: not a token file"
    stream = torch.frombuffer(bytearray(raw[64:]), dtype=torch.int16).to(torch.int64) & 0xFFFF
    windows = (stream.numel() - 1) // T
    p = load_params(path, L, C, T, V)
    opt = adamw_of(p, lr)
    losses = []
    for step in range(steps):
        starts = [((step * B + r) % windows) * T for r in range(B)]
        tokens = torch.stack([stream[s:s + T] for s in starts])
        targets = torch.stack([stream[s + 1:s + T + 1] for s in starts])
        for group in opt.param_groups:
            group["lr"] = lr_at(step, lr, min_lr, warmup, steps)
        losses.append(step_of(p, opt, tokens, targets, L, H, V))
    print(" ".join(repr(x) for x in losses))


if __name__ == "__main__":
    if sys.argv[1] == "--init":
        init_main(sys.argv[2], *(int(a) for a in sys.argv[3:8]))
    elif sys.argv[1] == "--train":
        train_main(sys.argv[2:])
    else:
        main()
