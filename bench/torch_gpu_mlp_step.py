#!/usr/bin/env python3
"""The PyTorch peer of bench/gpu_mlp_step.cpp: training steps of a ReLU MLP on
the GPU (cross-entropy, SGD with momentum 0.9), FP32 or TF32 matrix products,
or bf16-mixed: autocast to bfloat16 (fp32 parameters, gradients and optimizer).
Prints one JSON line, or {"skipped": ...} without PyTorch or a CUDA device.

  small  784-1024-1024-10,     batch 256
  large  8192-8192-8192-10,    batch 8192

Usage: torch_gpu_mlp_step.py [small|large] [fp32|tf32|bf16-mixed] [steps=20] [warmup=3]
"""
import json
import sys
import time

SHAPES = {
    "small": ("784-1024-1024-10", 784, [1024, 1024], 10, 256),
    "large": ("8192-8192-8192-10", 8192, [8192, 8192], 10, 8192),
}


def step_gemm_flops(inputs, hidden, classes, batch):
    """Forward and weight gradient of every linear, input gradient of all but
    the first (autograd skips it: the data needs none); 2 per multiply-add."""
    widths = [inputs] + hidden + [classes]
    flops = 0.0
    for i in range(len(widths) - 1):
        one = 2.0 * batch * widths[i] * widths[i + 1]
        flops += (2.0 if i == 0 else 3.0) * one
    return flops


def main():
    size = sys.argv[1] if len(sys.argv) > 1 else "small"
    precision = sys.argv[2] if len(sys.argv) > 2 else "fp32"
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    if (size not in SHAPES or precision not in ("fp32", "tf32", "bf16-mixed") or steps < 1
            or warmup < 0):
        print("usage: torch_gpu_mlp_step.py [small|large] [fp32|tf32|bf16-mixed] [steps] [warmup]",
              file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print(json.dumps({"bench": "torch_gpu_mlp_step", "skipped": "PyTorch is not installed"}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"bench": "torch_gpu_mlp_step", "skipped": "no CUDA device"}))
        return 0

    name, inputs, hidden, classes, batch = SHAPES[size]
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.manual_seed(1)
    device = torch.device("cuda:0")
    layers = []
    width = inputs
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, classes))
    net = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.rand(batch, inputs, device=device)
    labels = torch.arange(batch, device=device) % classes

    mixed = precision == "bf16-mixed"

    def step():
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mixed):
            loss = loss_fn(net(x), labels)
        loss.backward()
        optimizer.step()
        return loss

    loss = None
    for _ in range(warmup):
        loss = step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    ms = 1000.0 * (time.perf_counter() - start) / steps
    flops = step_gemm_flops(inputs, hidden, classes, batch)
    print(json.dumps({"bench": "torch_gpu_mlp_step", "model": name, "batch": batch,
                      "precision": precision, "steps": steps,
                      "gpu": torch.cuda.get_device_name(0), "ms_per_step": round(ms, 3),
                      "tflops": round(flops / (ms * 1e9), 2), "final_loss": round(loss.item(), 6),
                      "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
