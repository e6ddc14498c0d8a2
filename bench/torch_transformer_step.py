#!/usr/bin/env python3
"""The PyTorch peer of bench/cpu_transformer_step.cpp: one training step
(forward, next-token cross-entropy, backward, Adam) of a small GPT, written
plainly: an embedding with learned positions (vocab 256, width 256), 4 pre-norm
blocks (8 heads with a fused QKV linear, causal softmax attention, ffn 1024 with
GELU's tanh approximation, LayerNorm eps 1e-5 as PipeLab's, no dropout), a
final LayerNorm and a linear to the vocabulary; batch 8 sequences of 128 tokens.
Runs on `threads` threads (OpenBLAS, OpenMP and MKL pools pinned before torch
loads). Prints one JSON line with the median step time after warm-up (wall
time, and the process's CPU time, which other load on the machine stretches far
less), or {"skipped": ...} when PyTorch is missing.

Usage: torch_transformer_step.py [steps=20] [warmup=3] [threads=1]
"""
import json
import math
import os
import sys
import time

VOCAB, DIM, HEADS, FFN, BLOCKS = 256, 256, 8, 1024, 4
BATCH, SEQ = 8, 128
LAYERNORM_EPS = 1e-5  # PipeLab's LayerNormLayer::kEpsilon


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if steps < 1 or warmup < 0 or threads < 1:
        print("usage: torch_transformer_step.py [steps >= 1] [warmup >= 0] [threads >= 1]",
              file=sys.stderr)
        return 2
    # The BLAS and OpenMP pools read these when torch loads; Debian's PyTorch does
    # its GEMMs in the system OpenBLAS, which torch.set_num_threads does not reach.
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(threads))
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print(json.dumps({"bench": "torch_transformer_step", "skipped": "PyTorch is not installed"}))
        return 0
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process
    torch.manual_seed(1)
    sdpa = getattr(F, "scaled_dot_product_attention", None)  # PyTorch 2.0 and later
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(DIM, eps=LAYERNORM_EPS)
            self.qkv = nn.Linear(DIM, 3 * DIM)
            self.proj = nn.Linear(DIM, DIM)
            self.norm2 = nn.LayerNorm(DIM, eps=LAYERNORM_EPS)
            self.ffn1 = nn.Linear(DIM, FFN)
            self.ffn2 = nn.Linear(FFN, DIM)
            self.register_buffer(
                "future", torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), diagonal=1))

        def attention(self, x):
            b, t, _ = x.shape
            head_dim = DIM // HEADS
            # [b, t, 3 dim] -> q, k, v each [b, heads, t, head_dim]
            q, k, v = self.qkv(x).view(b, t, 3, HEADS, head_dim).permute(2, 0, 3, 1, 4)
            if sdpa is not None:
                out = sdpa(q, k, v, is_causal=True)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
                scores = scores.masked_fill(self.future[:t, :t], float("-inf"))
                out = torch.softmax(scores, dim=-1) @ v
            return out.transpose(1, 2).reshape(b, t, DIM)

        def forward(self, x):
            x = x + self.proj(self.attention(self.norm1(x)))
            return x + self.ffn2(F.gelu(self.ffn1(self.norm2(x)), approximate="tanh"))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, DIM)
            self.positions = nn.Parameter(torch.randn(SEQ, DIM) * 0.02)
            self.blocks = nn.Sequential(*[Block() for _ in range(BLOCKS)])
            self.norm = nn.LayerNorm(DIM, eps=LAYERNORM_EPS)
            self.head = nn.Linear(DIM, VOCAB)

        def forward(self, ids):
            x = self.tokens(ids) + self.positions[: ids.shape[1]]
            return self.head(self.norm(self.blocks(x)))

    net = Gpt()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    # Random sequences of SEQ + 1 tokens: each position's label is the next token.
    sequences = torch.randint(0, VOCAB, (BATCH, SEQ + 1))
    ids, labels = sequences[:, :-1].contiguous(), sequences[:, 1:].reshape(-1)

    def step():
        optimizer.zero_grad()
        logits = net(ids)
        loss = F.cross_entropy(logits.view(-1, VOCAB), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    first_loss = loss = 0.0
    for i in range(warmup):
        loss = step()
        if i == 0:
            first_loss = loss
    times, cpu_times = [], []
    for i in range(steps):
        cpu_start = time.process_time()
        start = time.perf_counter()
        loss = step()
        times.append(1000.0 * (time.perf_counter() - start))
        cpu_times.append(1000.0 * (time.process_time() - cpu_start))
        if i == 0 and warmup == 0:
            first_loss = loss
    def median_of(values):
        ordered = sorted(values)
        n = len(ordered)
        return ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])

    print(json.dumps({
        "bench": "torch_transformer_step",
        "model": "gpt vocab %d dim %d blocks %d heads %d ffn %d" % (VOCAB, DIM, BLOCKS, HEADS, FFN),
        "batch": BATCH, "seq": SEQ, "steps": steps, "threads": threads,
        "params": sum(p.numel() for p in net.parameters()),
        "median_ms": round(median_of(times), 3), "mean_ms": round(sum(times) / len(times), 3),
        "min_ms": round(min(times), 3), "cpu_median_ms": round(median_of(cpu_times), 3),
        "first_loss": round(first_loss, 6), "final_loss": round(loss, 6),
        "attention": "scaled_dot_product_attention" if sdpa is not None else "matmul-softmax",
        "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
