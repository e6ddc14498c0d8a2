#!/usr/bin/env python3
"""Loss curves and peak memory of GPipe, PipeDream and PipeMare (with and
without each of its two techniques) on one experiment, in one run.

Each variant is the same experiment file with --set overrides, trained by
`pipelab-cli train --summary`; the table shows the loss at the run's first
quarter, middle and end (each the mean of 5 steps around it, so one noisy
batch does not decide), the validation accuracy, and per device the peak
bytes in all and those of stashed weights and of optimizer state (where
PipeMare's velocity is counted).

    python3 bench/compare_pipemare.py build/app/pipelab-cli examples/pipemare.json 200
    python3 bench/compare_pipemare.py build/app/pipelab-cli examples/pipemare.json 200 \
        training.optimizer.lr=0.1      # further KEY=VALUE overrides apply to every variant

Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile

VARIANTS = [
    ("gpipe", ["parallel.schedule=gpipe"]),
    ("pipedream", ["parallel.schedule=pipedream"]),
    ("pipemare, neither", ["parallel.schedule=pipemare", "training.pipemare.lr_rescheduling=false",
                           "training.pipemare.discrepancy_correction=false"]),
    ("pipemare, T1 lr", ["parallel.schedule=pipemare", "training.pipemare.lr_rescheduling=true",
                         "training.pipemare.discrepancy_correction=false"]),
    ("pipemare, T2 correction", ["parallel.schedule=pipemare", "training.pipemare.lr_rescheduling=false",
                                 "training.pipemare.discrepancy_correction=true"]),
    ("pipemare, T1 + T2", ["parallel.schedule=pipemare", "training.pipemare.lr_rescheduling=true",
                           "training.pipemare.discrepancy_correction=true"]),
]


def mean_around(losses, index, half=2):
    window = losses[max(0, index - half):index + half + 1]
    return sum(window) / len(window)


def run(cli, config, steps, overrides):
    with tempfile.TemporaryDirectory() as folder:
        summary_path = os.path.join(folder, "summary.json")
        command = [cli, "train", "--config", config, "--steps", str(steps), "--summary", summary_path]
        for override in overrides:
            command += ["--set", override]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(summary_path) as file:
            return json.load(file)


def mib(value):
    return "%.2f" % (value / 2**20)


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: compare_pipemare.py PIPELAB_CLI EXPERIMENT.json STEPS [KEY=VALUE ...]")
    cli, config, steps, common = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    print("%-24s %8s %8s %8s %8s  %s" % ("variant", "loss 1/4", "loss 1/2", "loss end", "val acc",
                                        "peak MiB per device: total (stashed, optimizer state)"))
    for name, overrides in VARIANTS:
        summary = run(cli, config, steps, common + overrides)
        losses = summary["loss"]
        n = len(losses)
        devices = " ".join("%s (%s, %s)" % (mib(d["total"]), mib(d["stashed_weights"]), mib(d["optimizer_state"]))
                           for d in summary["peak_bytes"])
        accuracy = summary.get("val_accuracy")
        print("%-24s %8.4f %8.4f %8.4f %8s  %s" % (name, mean_around(losses, n // 4), mean_around(losses, n // 2),
                                                 mean_around(losses, n - 3),
                                                 "%.3f" % accuracy if accuracy is not None else "-", devices))


if __name__ == "__main__":
    main()
