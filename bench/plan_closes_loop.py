#!/usr/bin/env python3
"""Closing the planner's loop on this machine: the split search plans a small
GPT (examples/tiny_gpt_copy.json) for 4 virtual devices of the cpu backend,
then each of its top plans and a common default (dp 2 x pp 2, 1F1B, the
example's micro-batches) trains for real and the measured median step is put
beside the predicted one. The search keeps to what the cpu backend trains
(no context parallelism, ZeRO 0-2).

    python3 bench/plan_closes_loop.py [--cli build/app/pipelab-cli] [--steps 40] [--top 3]

The predictions use the cpu-core profile (one core per virtual device); run
`pipelab-cli calibrate` first for a machine whose cores differ, and read the
ranking, which is what the planner decides by, as well as the times.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "tiny_gpt_copy.json")


def run(command):
    output = subprocess.run(command, capture_output=True, text=True)
    if output.returncode != 0:
        sys.exit(" ".join(command) + ": " + output.stderr.strip())
    return output.stdout


def settings(split):
    return ["--set", f"parallel.dp={split['dp']}", "--set", f"parallel.tp={split['tp']}",
            "--set", f"parallel.pp={split['pp']}", "--set", f"parallel.cp={split['cp']}",
            "--set", f"parallel.zero={split['zero']}", "--set", f"parallel.schedule={split['schedule']}",
            "--set", f"parallel.chunks={split['chunks']}", "--set", f"parallel.microbatches={split['microbatches']}",
            "--set", "parallel.recompute=" + {"none": "false", "full": "true"}.get(split["recompute"], '"selective"'),
            "--set", "parallel.sequence_parallel=" + ("true" if split["sequence_parallel"] else "false")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "pipelab-cli"))
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--top", type=int, default=3)
    args = parser.parse_args()
    search = json.loads(run([args.cli, "plan", "--config", EXAMPLE, "--planner", "search", "--devices", "4",
                             "--memory-per-device", "1GiB", "--space", "cp=1", "--space", "zero=0,1,2",
                             "--top", str(args.top), "--json"]))
    rows = []
    for rank, plan in enumerate(search["plans"], 1):
        rows.append((f"search #{rank}", plan["split"]["label"], plan["step_s"], settings(plan["split"])))
    default = ["--set", "parallel.dp=2", "--set", "parallel.pp=2"]
    predicted = json.loads(run([args.cli, "simulate", "--config", EXAMPLE, *default]))["throughput"]["step_time"]
    rows.append(("default", "tp 1 cp 1 pp 2 dp 2 zero 0 1f1b no-recompute m 4", predicted, default))
    measured = []
    with tempfile.TemporaryDirectory() as folder:
        summary = os.path.join(folder, "summary.json")
        for name, label, step, overrides in rows:
            run([args.cli, "train", "--config", EXAMPLE, *overrides, "--set", f"training.steps={args.steps}",
                 "--set", "training.eval_every=0", "--quiet", "--summary", summary])
            with open(summary, encoding="utf-8") as file:
                measured.append(json.load(file)["step_time_ms_median"] / 1e3)
    predicted_rank = sorted(range(len(rows)), key=lambda i: rows[i][2])
    measured_rank = sorted(range(len(rows)), key=lambda i: measured[i])
    print("| plan | split | predicted step | predicted rank | measured median step | measured rank |")
    print("|---|---|---|---|---|---|")
    for i, (name, label, step, _) in enumerate(rows):
        print(f"| {name} | {label} | {step * 1e3:.2f} ms | {predicted_rank.index(i) + 1} | "
              f"{measured[i] * 1e3:.2f} ms | {measured_rank.index(i) + 1} |")
    best = measured[0]
    print(f"\nsearch #1 measured {best * 1e3:.2f} ms; "
          f"{'at least as fast as' if all(best <= m for m in measured[1:]) else 'slower than'} "
          f"every other plan measured ({args.steps} steps each, median)")


if __name__ == "__main__":
    main()
