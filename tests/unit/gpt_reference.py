#!/usr/bin/python3
"""The GPT of ddp-train (trainer/model/gpt.hpp) written in PyTorch, attention
by hand (PyTorch 1.13 has no fused attention), for unit.gpt_layers' parity
test: from the flat parameters the test wrote (gpt_layout()'s order, read
here independently), the same tokens and targets, STEPS steps of AdamW
(nanoGPT's decay groups) with gradients clipped to norm 1; prints each step's
loss before its update.

usage: gpt_reference.py PARAMS.f32 LAYERS HEADS WIDTH CONTEXT VOCAB PADDED B T STEPS LR TOKENS TARGETS
(TOKENS and TARGETS: comma-separated, B x T each)
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


def main():
    path = sys.argv[1]
    L, H, C, T, V, Vp, B, T_used, steps = (int(a) for a in sys.argv[2:11])
    lr = float(sys.argv[11])
    tokens = torch.tensor([int(t) for t in sys.argv[12].split(",")]).view(B, T_used)
    targets = torch.tensor([int(t) for t in sys.argv[13].split(",")]).view(B, T_used)
    flat = torch.frombuffer(bytearray(open(path, "rb").read()), dtype=torch.float32)
    p = unflatten(flat, L, C, T, Vp)
    decayed = [t for n, t in p.items() if t.dim() >= 2]
    kept = [t for n, t in p.items() if t.dim() < 2]
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": kept, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.95), eps=1e-8)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(p, tokens, targets, L, H, V)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        opt.step()
        losses.append(loss.item())
    print(" ".join(repr(x) for x in losses))


if __name__ == "__main__":
    main()
