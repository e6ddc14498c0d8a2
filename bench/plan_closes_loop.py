#!/usr/bin/env python3
"""Closing the planner's loop on this machine.

1. `pipelab-cli calibrate` measures a small GPT (examples/tiny_gpt_copy.json)
   on a common default split (dp 2 x pp 2, 1F1B, the example's 4
   micro-batches) and writes this machine's device and node files.
2. The split search plans the same GPT for 4 virtual devices of the cpu
   backend on those files, keeping to cp 1 and ZeRO 0-2 (the space of the first
   table in docs/simulation-and-planning.md; --whole-space searches context
   parallelism and ZeRO 3 too); it also plans once on the catalogue's uncalibrated
   cpu-core profile, which charges nothing per op.
3. The calibrated search's top plans, the default and the uncalibrated
   search's choice each train for real, in --rounds interleaved rounds of
   --steps steps; a plan's measured step is the median over rounds of each
   round's median step, and the spread is the rounds' range.

    python3 bench/plan_closes_loop.py [--cli build/app/pipelab-cli] [--steps 40] [--top 3] [--rounds 3]
                                      [--whole-space]

It prints the predicted and measured ranking and how far the planner's choice
is from the fastest plan measured.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "tiny_gpt_copy.json")
DEFAULT = ["--set", "parallel.dp=2", "--set", "parallel.pp=2"]


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
            "--set", "parallel.sequence_parallel=" + ("true" if split["sequence_parallel"] else "false"),
            "--set", f"parallel.ep={split['ep']}", "--set", f"parallel.offload={split['offload']}"]


# The space of the docs' first table: cp 1, ZeRO 0-2 (what the cpu backend
# trained when it was measured); --whole-space searches everything it trains now.
# Recomputation with block units is predicted only, so neither space has it.
TRAINABLE = ["--space", "recompute=none,selective,full"]
NARROW_SPACE = ["--space", "cp=1", "--space", "zero=0,1,2", *TRAINABLE]


def search(cli, hardware, top, space):
    return json.loads(run([cli, "plan", "--config", EXAMPLE, *hardware, "--planner", "search", "--devices", "4",
                           "--memory-per-device", "1GiB", *space, "--top", str(top), "--json"]))["plans"]


def predicted_step(cli, hardware, overrides):
    return json.loads(run([cli, "simulate", "--config", EXAMPLE, *hardware, *overrides]))["throughput"]["step_time"]


def measure(cli, rows, steps, rounds, folder):
    summary = os.path.join(folder, "summary.json")
    per_round = [[] for _ in rows]
    for _ in range(rounds):
        for i, row in enumerate(rows):
            run([cli, "train", "--config", EXAMPLE, *row["overrides"], "--set", f"training.steps={steps}",
                 "--set", "training.eval_every=0", "--quiet", "--summary", summary])
            with open(summary, encoding="utf-8") as file:
                per_round[i].append(json.load(file)["step_time_ms_median"] / 1e3)
    return per_round


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "pipelab-cli"))
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--whole-space", action="store_true",
                        help="search context parallelism and ZeRO 3 too (both train on the cpu backend now)")
    args = parser.parse_args()
    space = TRAINABLE if args.whole_space else NARROW_SPACE
    with tempfile.TemporaryDirectory() as folder:
        device = os.path.join(folder, "this-cpu.json")
        fit = json.loads(run([args.cli, "calibrate", "--config", EXAMPLE, *DEFAULT, "--steps", str(args.steps),
                              "--write", device]))["calibrated"]
        print(f"calibrated: GEMM {fit['gemm_gflop_s']:.1f} GFLOP/s, {fit['op_overhead_us']:.1f} us per op, "
              f"link {fit['link_bandwidth_gb_s']:.2f} GB/s + {fit['link_latency_us']:.1f} us per message\n")
        hardware = ["--set", "simulation.profile=" + device]
        rows = [{"name": f"search #{rank}", "label": plan["split"]["label"], "predicted": plan["step_s"],
                 "overrides": settings(plan["split"])}
                for rank, plan in enumerate(search(args.cli, hardware, args.top, space), 1)]
        rows.append({"name": "default", "label": "tp 1 cp 1 pp 2 dp 2 zero 0 1f1b no-recompute m 4",
                     "predicted": predicted_step(args.cli, hardware, DEFAULT), "overrides": DEFAULT})
        uncalibrated = search(args.cli, [], 1, space)[0]["split"]
        rows.append({"name": "uncalibrated #1", "label": uncalibrated["label"],
                     "predicted": predicted_step(args.cli, hardware, settings(uncalibrated)),
                     "overrides": settings(uncalibrated)})
        per_round = measure(args.cli, rows, args.steps, args.rounds, folder)
    measured = [statistics.median(times) for times in per_round]
    predicted_rank = sorted(range(len(rows)), key=lambda i: rows[i]["predicted"])
    measured_rank = sorted(range(len(rows)), key=lambda i: measured[i])
    print("| plan | split | predicted step (calibrated) | predicted rank | measured step | rounds' range | "
          "measured rank |")
    print("|---|---|---|---|---|---|---|")
    for i, row in enumerate(rows):
        print(f"| {row['name']} | {row['label']} | {row['predicted'] * 1e3:.2f} ms | {predicted_rank.index(i) + 1} | "
              f"{measured[i] * 1e3:.2f} ms | {min(per_round[i]) * 1e3:.2f}-{max(per_round[i]) * 1e3:.2f} ms | "
              f"{measured_rank.index(i) + 1} |")
    fastest = min(measured)
    errors = [abs(row["predicted"] / measured[i] - 1) for i, row in enumerate(rows)]
    print(f"\nsearch #1 measured {measured[0] * 1e3:.2f} ms, {100 * (measured[0] / fastest - 1):.1f}% above the "
          f"fastest plan measured ({fastest * 1e3:.2f} ms); prediction error {100 * min(errors):.0f}-"
          f"{100 * max(errors):.0f}% across the plans ({args.rounds} rounds of {args.steps} steps)")


if __name__ == "__main__":
    main()
