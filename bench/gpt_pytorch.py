#!/usr/bin/python3
"""The peer of `ddp-train --model gpt` for speed: the same GPT-2 shapes in
PyTorch, set up as nanoGPT trains it on a GPU (bf16 autocast, TF32 matrix
products, scaled_dot_product_attention, fused AdamW with betas 0.9/0.95 and
weight decay 0.1 on matrices and embeddings, clipping to 1, the head tied to
the token embedding), eager or with torch.compile, on random tokens (as
`ddp-train --data random`). Prints one JSON line: tokens/s over the steps
after the warm-up ones, and MFU by nanoGPT's formula (6N + 12 L H Q T FLOPs a
token, N the parameters but the position embedding, against --peak-tflops:
989, an H100 SXM's and an H200's dense bf16). Runs on the CPU too (fp32,
PyTorch 1.13's fallbacks), for checking the script, not for figures.

usage: gpt_pytorch.py [--preset gpt2-124m|small] [--batch-size B] [--steps N] [--warmup N] [--compile]
                      [--device cuda|cpu] [--peak-tflops F]
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {"gpt2-124m": (12, 12, 768, 1024, 50257, 50304), "small": (2, 4, 128, 64, 256, 256)}


class Block(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.H = H
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.fc_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def attention(self, x):
        B, T, C = x.shape
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in self.qkv(x).split(C, dim=2))
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch 1.13
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.H)
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
            y = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, L, H, C, T, Vp):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(Vp, C), nn.Embedding(T, C)
        self.blocks = nn.ModuleList(Block(C, H) for _ in range(L))
        self.lnf = nn.LayerNorm(C)
        for m in self.modules():  # GPT-2's initialisation
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, tokens, targets, V):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        logits = self.lnf(x) @ self.wte.weight.T
        return F.cross_entropy(logits[:, :, :V].reshape(-1, V).float(), targets.reshape(-1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--preset", default="gpt2-124m", choices=PRESETS)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--device", default="cuda")
    p.add_argument("--peak-tflops", type=float, default=989.0)
    a = p.parse_args()
    L, H, C, T, V, Vp = PRESETS[a.preset]
    cuda = a.device == "cuda"
    torch.manual_seed(0)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    model = GPT(L, H, C, T, Vp).to(a.device)
    decayed = [t for t in model.parameters() if t.dim() >= 2]
    kept = [t for t in model.parameters() if t.dim() < 2]
    fused = {"fused": True} if cuda and "fused" in torch.optim.AdamW.__init__.__code__.co_varnames else {}
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": kept, "weight_decay": 0.0}],
                            lr=6e-4, betas=(0.9, 0.95), eps=1e-8, **fused)
    step_model = torch.compile(model) if a.compile else model
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else torch.autocast("cpu", enabled=False)
    tokens = torch.randint(0, V, (a.batch_size, T + 1), device=a.device)
    start, losses = None, []
    for step in range(a.steps):
        if step == a.warmup:
            if cuda:
                torch.cuda.synchronize()
            start = time.perf_counter()
        with autocast:
            loss = step_model(tokens[:, :-1], tokens[:, 1:], V)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())  # a sync a step, as ddp-train's log reads its loss
    seconds = time.perf_counter() - start
    tokens_per_second = (a.steps - a.warmup) * a.batch_size * T / seconds
    N = sum(t.numel() for t in model.parameters()) - model.wpe.weight.numel()
    flops_per_token = 6 * N + 12 * L * H * (C // H) * T
    print(json.dumps({"preset": a.preset, "compile": a.compile, "batch_size": a.batch_size, "context": T,
                      "torch": torch.__version__, "tokens_per_second": tokens_per_second,
                      "mfu": tokens_per_second * flops_per_token / (a.peak_tflops * 1e12),
                      "first_loss": losses[0], "last_loss": losses[-1]}))


if __name__ == "__main__":
    main()
