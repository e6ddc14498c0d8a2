#!/usr/bin/env python3
"""The PyTorch peer of bench/cpu_mlp_step.cpp: one training step of a
784-1024-1024-1024-10 ReLU MLP (batch 256, cross-entropy, SGD with momentum 0.9),
on `threads` threads. Prints one JSON line, or {"skipped": ...} when PyTorch is missing.

Usage: torch_mlp_step.py [steps=20] [warmup=3] [threads=1]
"""
import json
import sys
import time


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    try:
        import torch
    except ImportError:
        print(json.dumps({"bench": "torch_mlp_step", "skipped": "PyTorch is not installed"}))
        return 0
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    batch, classes = 256, 10
    net = torch.nn.Sequential(
        torch.nn.Linear(784, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, classes))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.rand(batch, 784)
    labels = torch.arange(batch) % classes

    def step():
        optimizer.zero_grad()
        loss = loss_fn(net(x), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    loss = 0.0
    for _ in range(warmup):
        loss = step()
    start = time.perf_counter()
    for _ in range(steps):
        loss = step()
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "torch_mlp_step", "model": "784-1024-1024-1024-10", "batch": batch,
                      "steps": steps, "threads": threads, "ms_per_step": round(1000.0 * seconds / steps, 3),
                      "final_loss": round(loss, 6), "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
