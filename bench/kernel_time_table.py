#!/usr/bin/env python3
"""Where a GPU program's time goes, kernel by kernel, from Nsight Compute's CSV.

Reads the output of
    ncu --csv --metrics gpu__time_duration.sum --clock-control none PROGRAM ...
(a file, or standard input) and prints each kernel's launches and total time,
largest first, then the total over every kernel: the GPU's busy time, which
is the step's time less the gaps between kernels.

Usage: kernel_time_table.py [ncu.csv] [--top N] [--per STEPS]
  --per STEPS  divides every time by STEPS (the steps the program ran)
"""
import argparse
import csv
import re
import sys

UNIT_TO_MS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3,
              "msecond": 1.0, "ms": 1.0, "second": 1e3, "s": 1e3}


def short_name(kernel):
    """The kernel's name without its parameter list or namespaces."""
    name = kernel.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    name = re.sub(r"^void ", "", name).split("(")[0]
    name = name.split("::")[-1]
    return name or kernel[:60]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv", nargs="?", default="-")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--per", type=float, default=1.0)
    args = parser.parse_args()
    source = sys.stdin if args.csv == "-" else open(args.csv, newline="")
    # ncu prints its own lines (==PROF==) before the CSV: start at the header.
    lines = [line for line in source if line.startswith('"')]
    totals, counts = {}, {}
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = UNIT_TO_MS.get(row.get("Metric Unit", "").strip())
        if unit is None:
            sys.exit(f"unknown time unit {row.get('Metric Unit')!r}")
        value = float(row["Metric Value"].replace(",", "")) * unit
        name = short_name(row["Kernel Name"])
        totals[name] = totals.get(name, 0.0) + value
        counts[name] = counts.get(name, 0) + 1
    if not totals:
        sys.exit("no gpu__time_duration.sum rows: was the CSV made with --csv --metrics gpu__time_duration.sum?")
    grand = sum(totals.values())
    print(f"| kernel | launches | ms | share |")
    print(f"|---|---|---|---|")
    for name, ms in sorted(totals.items(), key=lambda item: -item[1])[: args.top]:
        print(f"| {name[:70]} | {counts[name] / args.per:g} | {ms / args.per:.3f} | {100 * ms / grand:.1f}% |")
    print(f"| every kernel | {sum(counts.values()) / args.per:g} | {grand / args.per:.3f} | 100% |")


if __name__ == "__main__":
    main()
