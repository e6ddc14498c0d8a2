#!/usr/bin/env python3
"""Prediction against published measured runs: simulates every experiment in
examples/published/ and prints the table docs/validation.md shows.

    python3 bench/published_runs.py [--cli build/app/pipelab-cli]

Each experiment's "published" section holds the row it reproduces. The metric
"tflops_per_gpu_eq3" is Narayanan et al. 2021's: eq. 3's FLOPs per iteration,
F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) (it counts the recomputed forward),
over the iteration time and the GPUs. The prediction is the same F over the
simulated step time (`simulate`'s throughput.step_time).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "pipelab-cli"))
    args = parser.parse_args()
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "published", "*.json"))):
        with open(path, encoding="utf-8") as file:
            experiment = json.load(file)
        published = experiment["published"]
        if published["metric"] != "tflops_per_gpu_eq3":
            sys.exit(f"{path}: unknown metric {published['metric']}")
        start = time.perf_counter()
        output = subprocess.run([args.cli, "simulate", "--config", path], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if output.returncode != 0:
            sys.exit(f"{path}: {output.stderr.strip()}")
        step = json.loads(output.stdout)["throughput"]["step_time"]
        predicted = eq3_flops(experiment) / step / published["gpus"] / 1e12
        error = (predicted - published["value"]) / published["value"]
        parallel = experiment["parallel"]
        rows.append((published["row"], os.path.basename(path), published["gpus"], parallel, published["value"],
                     predicted, error, wall))
    rows.sort()
    print("| row | experiment | GPUs | tp x pp x dp | published TFLOP/s per GPU | predicted | error | simulate |")
    print("|---|---|---|---|---|---|---|---|")
    for row, name, gpus, parallel, value, predicted, error, wall in rows:
        split = f"{parallel['tp']} x {parallel['pp']} x {parallel['dp']}"
        print(f"| {row} | `{name}` | {gpus} | {split} | {value:g} | {predicted:.1f} | {100 * error:+.1f}% | {wall:.1f} s |")
    errors = [abs(row[6]) for row in rows]
    print(f"\nmean absolute error {100 * sum(errors) / len(errors):.1f}%, largest {100 * max(errors):.1f}%,"
          f" over {len(rows)} rows")


if __name__ == "__main__":
    main()
