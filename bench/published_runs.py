#!/usr/bin/env python3
"""Prediction against published measured runs: simulates every experiment in
examples/published/ and prints the tables docs/validation.md shows.

    python3 bench/published_runs.py [--cli build/app/pipelab-cli]

Each experiment's "published" section holds the row it reproduces, by metric:

- "tflops_per_gpu_eq3" (Megatron-LM 2021): Narayanan et al. 2021's eq. 3 FLOPs
  per iteration, F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) (it counts the
  recomputed forward), over the iteration time and the GPUs. The prediction is
  the same F over the simulated step time (`simulate`'s throughput.step_time).
- "tokens_per_second_per_gpu" (torchtitan): the batch's tokens over the step
  time and the GPUs. Its "memory" ("max_reserved_gib") is what PyTorch's
  caching allocator reserved at most, which leaves out the CUDA context and
  NCCL's buffers; the prediction compared with it is the fullest device's
  total less its workspace (which also leaves out cuBLAS's 32 MiB, which the
  allocator does hold).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB = 1024**3


def eq3_flops(experiment):
    """Megatron-LM's eq. 3 for the GPT the experiment describes."""
    layers = experiment["model"]["layers"]
    embedding = next(layer for layer in layers if layer["type"] == "embedding")
    blocks = sum(layer.get("repeat", 1) for layer in layers if layer["type"] == "transformer_block")
    batch = experiment["training"]["batch_size"]
    sequence = experiment["model"]["input"][0]
    hidden = embedding["dim"]
    vocab = embedding["vocab"]
    return 96 * batch * sequence * blocks * hidden**2 * (
        1 + sequence / (6 * hidden) + vocab / (16 * blocks * hidden))


def simulate(cli, path):
    start = time.perf_counter()
    output = subprocess.run([cli, "simulate", "--config", path], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if output.returncode != 0:
        sys.exit(f"{path}: {output.stderr.strip()}")
    return json.loads(output.stdout), wall


def allocator_peak(report):
    """The fullest device's bytes less the software's own (the workspace)."""
    return max(device["peak_bytes"]["total"] - device["peak_bytes"]["workspace"] for device in report["per_device"])


def error(predicted, published):
    return (predicted - published) / published


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "pipelab-cli"))
    args = parser.parse_args()
    flops_rows, token_rows = [], []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "published", "*.json"))):
        with open(path, encoding="utf-8") as file:
            experiment = json.load(file)
        published = experiment["published"]
        name = os.path.basename(path)
        parallel = experiment["parallel"]
        if published["metric"] == "tflops_per_gpu_eq3":
            report, wall = simulate(args.cli, path)
            step = report["throughput"]["step_time"]
            predicted = eq3_flops(experiment) / step / published["gpus"] / 1e12
            flops_rows.append((published["row"], name, published["gpus"], parallel, published["value"], predicted,
                               error(predicted, published["value"]), wall))
        elif published["metric"] == "tokens_per_second_per_gpu":
            report, wall = simulate(args.cli, path)
            tokens = experiment["training"]["batch_size"] * experiment["model"]["input"][0]
            predicted = tokens / report["throughput"]["step_time"] / published["gpus"]
            memory = published["memory"]
            if memory["metric"] != "max_reserved_gib":
                sys.exit(f"{path}: unknown memory metric {memory['metric']}")
            predicted_gib = allocator_peak(report) / GIB
            token_rows.append((published["gpus"], name, published["value"], predicted, memory["value"], predicted_gib))
        else:
            sys.exit(f"{path}: unknown metric {published['metric']}")

    flops_rows.sort()
    print("| row | experiment | GPUs | tp x pp x dp | published TFLOP/s per GPU | predicted | error | simulate |")
    print("|---|---|---|---|---|---|---|---|")
    for row, name, gpus, parallel, value, predicted, err, wall in flops_rows:
        split = f"{parallel['tp']} x {parallel['pp']} x {parallel['dp']}"
        print(f"| {row} | `{name}` | {gpus} | {split} | {value:g} | {predicted:.1f} | {100 * err:+.1f}% | {wall:.1f} s |")
    errors = [abs(row[6]) for row in flops_rows]
    print(f"\nmean absolute error {100 * sum(errors) / len(errors):.1f}%, largest {100 * max(errors):.1f}%,"
          f" over {len(flops_rows)} rows\n")

    token_rows.sort()
    print("| experiment | GPUs | published tokens/s per GPU | predicted | error | published max reserved | "
          "predicted, less the workspace | error |")
    print("|---|---|---|---|---|---|---|---|")
    for gpus, name, tps, predicted, gib, predicted_gib in token_rows:
        print(f"| `{name}` | {gpus} | {tps:,} | {predicted:,.0f} | {100 * error(predicted, tps):+.1f}% | {gib:g} GiB | "
              f"{predicted_gib:.1f} GiB | {100 * error(predicted_gib, gib):+.1f}% |")
    if len(token_rows) == 2:
        (_, _, _, _, small_gib, small_predicted), (_, _, _, _, large_gib, large_predicted) = token_rows
        published_drop = small_gib - large_gib
        predicted_drop = small_predicted - large_predicted
        print(f"\nfrom {token_rows[0][0]} to {token_rows[1][0]} GPUs the peak falls by {published_drop:.1f} GiB "
              f"published, {predicted_drop:.1f} GiB predicted ({100 * error(predicted_drop, published_drop):+.1f}%)")


if __name__ == "__main__":
    main()
