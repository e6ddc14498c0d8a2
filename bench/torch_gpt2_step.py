#!/usr/bin/env python3
"""The PyTorch peer of PipeLab's GPT-2 small training step on one GPU
(bench/configs/gpt2_small.json, run by bench/run_gpt2_vs_torch.sh).

The same model, written plainly: a token embedding (vocab 50257 padded to
50304, width 768) with learned positions (1024), 12 pre-norm blocks (12 heads
with a fused QKV linear, causal scaled-dot-product attention, ffn 3072 with
GELU's tanh approximation, LayerNorm eps 1e-5 as PipeLab's, biases, no
dropout), a final LayerNorm and an untied linear to the vocabulary without
bias, as PipeLab's experiment has it. One training step: forward under
bf16 autocast (float32 weights, bf16 matrix products: PipeLab's bf16-mixed),
next-token cross-entropy, backward, AdamW (lr 6e-4, weight decay 0.1).

--compile runs the model through torch.compile first (its compile time is
reported apart, not in the step). --attention times the attention alone
(scaled_dot_product_attention forward and backward at the step's shape), for
attention's share of the step.

Prints one JSON line: the median step time over `steps` after `warmup`,
tokens per second, peak memory; or {"skipped": ...} without PyTorch or a GPU.

Usage: torch_gpt2_step.py [--batch 4] [--steps 10] [--warmup 3] [--compile] [--attention]
"""
import argparse
import json
import statistics
import sys
import time

VOCAB, DIM, HEADS, FFN, BLOCKS, SEQ = 50304, 768, 12, 3072, 12, 1024
LAYERNORM_EPS = 1e-5  # PipeLab's LayerNormLayer::kEpsilon


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--attention", action="store_true")
    args = parser.parse_args()
    name = "torch_gpt2_step" + ("_compiled" if args.compile else "")
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print(json.dumps({"bench": name, "skipped": "PyTorch is not installed"}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"bench": name, "skipped": "no CUDA GPU"}))
        return 0
    torch.manual_seed(1)
    device = torch.device("cuda")
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

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(DIM, dim=2)
            shape = (b, s, HEADS, DIM // HEADS)
            q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, s, DIM))
            return x + self.ffn2(F.gelu(self.ffn1(self.norm2(x)), approximate="tanh"))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, DIM)
            self.positions = nn.Embedding(SEQ, DIM)
            self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
            self.norm = nn.LayerNorm(DIM, eps=LAYERNORM_EPS)
            self.head = nn.Linear(DIM, VOCAB, bias=False)

        def forward(self, ids):
            x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x))

    model = Gpt().to(device)
    params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    ids = torch.randint(0, 50257, (args.batch, SEQ + 1), device=device)
    inputs, labels = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
    compile_s = None
    forward = model
    if args.compile:
        start = time.perf_counter()
        forward = torch.compile(model)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = forward(inputs)
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), labels.view(-1))
        loss.backward()
        optimizer.step()
        return loss

    first_loss = float(step())
    torch.cuda.synchronize()
    if args.compile:
        compile_s = time.perf_counter() - start
    for _ in range(max(0, args.warmup - 1)):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(args.steps):
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)
        start_event.record()
        loss = step()
        end_event.record()
        end_event.synchronize()
        times.append(start_event.elapsed_time(end_event))
    median_ms = statistics.median(times)
    result = {
        "bench": name,
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "batch": args.batch,
        "seq": SEQ,
        "params": params,
        "steps": args.steps,
        "median_ms": round(median_ms, 3),
        "min_ms": round(min(times), 3),
        "tokens_per_s": round(args.batch * SEQ / (median_ms / 1e3)),
        "first_loss": round(first_loss, 4),
        "final_loss": round(float(loss), 4),
        "peak_bytes": torch.cuda.max_memory_allocated(),
    }
    if compile_s is not None:
        result["compile_s"] = round(compile_s, 1)
    if args.attention:
        result["attention_ms"] = round(attention_ms(torch, F, args.batch), 3)
    print(json.dumps(result))
    return 0


def attention_ms(torch, F, batch):
    """Forward and backward of the 12 blocks' attention cores alone, bf16."""
    shape = (batch, HEADS, SEQ, DIM // HEADS)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    grad = torch.randn(shape, device="cuda", dtype=torch.bfloat16)

    def once():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(grad)

    for _ in range(3):
        once()
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(BLOCKS):
            once()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


if __name__ == "__main__":
    sys.exit(main())
