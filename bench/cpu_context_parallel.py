#!/usr/bin/env python3
"""Context parallelism on the cpu backend: a small GPT at a long sequence
trained at cp 1, 2 and 4 in the same run of this script.

    python3 bench/cpu_context_parallel.py [--cli build/app/pipelab-cli] [--sequence 2048] [--steps 6]

Two blocks of width 64 (4 heads) read sequences of --sequence tokens of the
copy task, 4 per step, with selective recomputation (the attention's
probabilities are recomputed per head, so a whole sequence's scores are never
kept). For each cp it prints the median step (warm-up left out), device 0's
peak of activations and of all memory, the final loss, and each against
cp 1's: the step ratio shows what splitting the sequence buys on this
machine's cores, the activation ratio what it saves (about 1 / cp, plus the
whole sequence's K and V while a block attends).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def experiment(sequence, steps):
    return {
        "name": "long-sequence GPT, context parallel",
        "seed": 1,
        "model": {
            "input": [sequence],
            "layers": [
                {"type": "embedding", "vocab": 16, "dim": 64},
                {"type": "transformer_block", "heads": 4, "repeat": 2},
                {"type": "layernorm"},
                {"type": "linear", "out": 16},
            ],
            "loss": "cross_entropy",
        },
        "data": {"source": "copy", "samples": 256, "vocab": 16, "validation_fraction": 0.1},
        "training": {"batch_size": 4, "steps": steps, "eval_every": 0,
                     "optimizer": {"type": "adam", "lr": 0.003}},
        "parallel": {"dp": 1, "tp": 1, "pp": 1, "microbatches": 1, "schedule": "1f1b",
                     "update": "sync", "recompute": "selective"},
        "simulation": {"profile": "cpu-core"},
        "backend": {"type": "cpu"},
    }


def train(cli, config, cp, folder):
    summary = os.path.join(folder, f"cp{cp}.json")
    command = [cli, "train", "--config", config, "--set", f"parallel.cp={cp}", "--quiet",
               "--summary", summary]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(" ".join(command) + ": " + result.stderr.strip())
    with open(summary) as file:
        return json.load(file)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "pipelab-cli"))
    parser.add_argument("--sequence", type=int, default=2048)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        config = os.path.join(folder, "experiment.json")
        with open(config, "w") as file:
            json.dump(experiment(args.sequence, args.steps), file)
        rows = []
        for cp in (1, 2, 4):
            summary = train(args.cli, config, cp, folder)
            device = summary["peak_bytes"][0]
            rows.append((cp, summary["step_time_ms_median"], device["activations"], device["total"],
                         summary["final_loss"]))
    base = rows[0]
    print(f"sequence {args.sequence}, {os.cpu_count()} cores; median step with warm-up left out")
    print("| cp | step (ms) | vs cp 1 | activations, device 0 (MiB) | vs cp 1 | peak, device 0 (MiB) | final loss |")
    print("|---|---|---|---|---|---|---|")
    for cp, step, activations, total, loss in rows:
        print(f"| {cp} | {step:.1f} | {step / base[1]:.2f} | {activations / 2**20:.1f} | "
              f"{activations / base[2]:.2f} | {total / 2**20:.1f} | {loss:.6f} |")


if __name__ == "__main__":
    main()
