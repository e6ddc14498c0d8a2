#!/usr/bin/env python3
"""What a GPU's GEMMs achieve by shape: the data behind a shape-dependent GEMM efficiency.

Times C = A B (A [m, k], B [k, n]) through PyTorch (cuBLAS/cuBLASLt underneath, the
library PipeLab's CUDA backend calls too) for a grid of shapes: square sizes from 256
to 16384, the skinny products of few tokens, and the GEMMs of GPT-2 small and of a 7B
and a 70B LLaMA layer at 16k tokens. bf16 inputs (and output) with float32 accumulation,
as PipeLab's bf16-mixed GEMMs read and accumulate, and float32 (TF32 off). Each shape:
random inputs, a warm-up, then the median over `--repeats` timings of a group of calls
run back to back between two CUDA events (enough calls for about 2 ms of work), so small
GEMMs are timed as a training step queues them, not with an isolated launch's 30-45 us.

Prints one JSON object per line ({"m", "n", "k", "dtype", "median_ms", "tflops"}), then a
summary line. Usage: gemm_shape_sweep.py [--repeats 20] [--dtypes bf16,fp32] [--quick]
"""
import argparse
import json
import sys

SQUARE = [256, 512, 1024, 2048, 4096, 8192, 16384]
# Few tokens against a wide layer (a small micro-batch, decoding).
SKINNY = [(m, 4096, 4096) for m in (1, 8, 32, 128, 512)]
# [tokens, out, in] of the layers' products (the forward's; the backward's are their transposes).
MODELS = [
    (16384, 2304, 768), (16384, 768, 768), (16384, 3072, 768), (16384, 768, 3072),  # GPT-2 small
    (16384, 50304, 768),                                                             # its logits
    (16384, 12288, 4096), (16384, 4096, 4096), (16384, 11008, 4096), (16384, 4096, 11008),  # 7B
    (16384, 10240, 8192), (16384, 8192, 8192), (16384, 28672, 8192), (16384, 8192, 28672),  # 70B
]


def shapes(quick):
    square = SQUARE[::2] if quick else SQUARE
    return [(s, s, s) for s in square] + SKINNY + MODELS


def time_gemm(torch, m, n, k, dtype, repeats):
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    for _ in range(3):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    # Calls per group: about 2 ms of work by a first estimate, at most 1000.
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    torch.matmul(a, b)
    end.record()
    end.synchronize()
    calls = max(1, min(1000, int(2.0 / max(start.elapsed_time(end), 1e-3))))
    times = []
    for _ in range(repeats):
        start.record()
        for _ in range(calls):
            torch.matmul(a, b)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--dtypes", default="bf16,fp32")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: nothing measured.")
        return 0
    if not torch.cuda.is_available():
        print("no CUDA device: nothing measured.")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    kinds = {"bf16": torch.bfloat16, "fp32": torch.float32}
    count = 0
    for name in args.dtypes.split(","):
        dtype = kinds[name]
        for m, n, k in shapes(args.quick):
            ms = time_gemm(torch, m, n, k, dtype, args.repeats)
            tflops = 2.0 * m * n * k / (ms * 1e-3) / 1e12
            print(json.dumps({"m": m, "n": n, "k": k, "dtype": name, "median_ms": round(ms, 5),
                              "tflops": round(tflops, 2)}), flush=True)
            count += 1
    print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "shapes": count, "repeats": args.repeats}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
