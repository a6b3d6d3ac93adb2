#!/usr/bin/env python3
"""gen_deep_models.py: deep models for scripts/bench_passes.sh (a benchmark input, not a test).

Writes into OUT_DIR (seeded random weights, small widths, so the archives stay small while the
graphs are deep):
  enc200_traced.pt    nn.TransformerEncoder of 200 layers (d_model 64, 4 heads), traced
  enc200_scripted.pt  the same model, scripted
  gpt48_traced.pt     a GPT-2-style decoder of 48 blocks (d_model 64, 4 heads, causal mask,
                      GELU MLP, learned positions, tied LM head), traced
Each NAME.pt gets NAME.shape with the --input-shape argument it was made for.

Usage: gen_deep_models.py OUT_DIR [--layers-enc N] [--layers-gpt N]
"""

import argparse
import math
import os
import sys

import torch
from torch import nn
from torch.nn import functional as F

D, HEADS, SEQ = 64, 4, 16


class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, seq)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt(nn.Module):
    def __init__(self, layers, vocab=256, d=D, heads=HEADS, seq=SEQ):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.h = nn.ModuleList([Block(d, heads, seq) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, idx):
        pos = torch.arange(0, idx.size(1), dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def encoder(layers):
    layer = nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=2 * D, dropout=0.1,
                                       batch_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()


def save(module, path, shape):
    module.save(path)
    with open(path[:-3] + ".shape", "w", encoding="utf-8") as f:
        f.write(shape + "\n")
    print(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--layers-enc", type=int, default=200)
    ap.add_argument("--layers-gpt", type=int, default=48)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    with torch.no_grad():
        enc = encoder(a.layers_enc)
        x = torch.randn(1, SEQ, D)
        save(torch.jit.trace(enc, x, check_trace=False), os.path.join(a.out, "enc200_traced.pt"),
             f"1,{SEQ},{D}")
        save(torch.jit.script(enc), os.path.join(a.out, "enc200_scripted.pt"), f"1,{SEQ},{D}")
        gpt = Gpt(a.layers_gpt).eval()
        idx = torch.randint(0, 256, (1, SEQ))
        save(torch.jit.trace(gpt, idx, check_trace=False), os.path.join(a.out, "gpt48_traced.pt"),
             f"1,{SEQ}:int64")
    return 0


if __name__ == "__main__":
    sys.exit(main())
