#!/usr/bin/env python3
"""The split search against published configurations: for every experiment in
examples/published/ (and LLaMA 2 70B on 1,024 H100s, the issue's speed case),
runs `pipelab-cli plan --planner search` on the same model, GPUs and batch and
`pipelab-cli simulate` on the published split, and prints

  - the published split's predicted step and the search's best plan and step
    (the search may only be faster: the published split is one of its candidates
    whenever its schedule and partition are in the search space);
  - the search's wall time, and its ratio to one `simulate` of the published
    split timed in the same run (the peer: what checking one split by hand costs).

    python3 bench/plan_published.py [--cli build/app/pipelab-cli] [--only NAME] [--most-gpus N] [--space cp=1]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(command):
    start = time.perf_counter()
    output = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if output.returncode != 0:
        sys.exit(" ".join(command) + ": " + output.stderr.strip())
    return json.loads(output.stdout), wall


def split_text(parallel):
    text = f"tp {parallel.get('tp', 1)} cp {parallel.get('cp', 1)} pp {parallel.get('pp', 1)} dp {parallel.get('dp', 1)}"
    return text + f" zero {parallel.get('zero', 0)} {parallel.get('schedule', '1f1b')} m {parallel.get('microbatches', 1)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "pipelab-cli"))
    parser.add_argument("--only", help="run only the experiments whose file name contains this")
    parser.add_argument("--space", action="append", default=[],
                        help="passed to the search as --space (e.g. cp=1: what Megatron-LM had in 2021)")
    parser.add_argument("--most-gpus", type=int, default=0,
                        help="skip experiments on more GPUs than this (the searches of 2,000-3,000 GPUs take minutes)")
    args = parser.parse_args()
    cases = [(path, []) for path in sorted(glob.glob(os.path.join(ROOT, "examples", "published", "*.json")))]
    # LLaMA 2 70B on 128 DGX H100 nodes, 512 sequences of 4,096 tokens.
    cases.append((os.path.join(ROOT, "examples", "llama_70b_predict.json"),
                  ["--set", "training.batch_size=512", "--set", "parallel.dp=16",
                   "--set", "simulation.cluster.nodes=128"]))
    print("| experiment | GPUs | published split | its step | search's best | its step | faster by | search | simulate | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path, settings in cases:
        name = os.path.basename(path)
        if args.only and args.only not in name:
            continue
        with open(path, encoding="utf-8") as file:
            experiment = json.load(file)
        gpus = experiment.get("published", {}).get("gpus", 1024)
        if args.most_gpus and gpus > args.most_gpus:
            continue
        parallel = dict(experiment["parallel"])
        for setting in settings[1::2]:
            key, value = setting.split("=")
            if key.startswith("parallel."):
                parallel[key.split(".")[1]] = int(value)
        own, simulate_wall = timed([args.cli, "simulate", "--config", path, *settings])
        spaces = [part for space in args.space for part in ("--space", space)]
        search, search_wall = timed([args.cli, "plan", "--config", path, "--planner", "search", "--json", *settings,
                                     *spaces])
        own_step = own["throughput"]["step_time"]
        gpus = own["throughput"]["devices"]
        if not search["plans"]:
            print(f"| `{name}` | {gpus} | {split_text(parallel)} | {own_step:.3f} s | none fits | | | {search_wall:.1f} s | {simulate_wall:.2f} s | {search_wall / simulate_wall:.0f}x |")
            continue
        best = search["plans"][0]
        faster = own_step / best["step_s"] - 1
        print(f"| `{name}` | {gpus} | {split_text(parallel)} | {own_step:.3f} s | {best['split']['label']} | "
              f"{best['step_s']:.3f} s | {100 * faster:+.1f}% | {search_wall:.1f} s | {simulate_wall:.2f} s | "
              f"{search_wall / simulate_wall:.0f}x |")


if __name__ == "__main__":
    main()
