#!/usr/bin/env bash
# Runs the small-GPT training-step benchmark (bench/cpu_transformer_step.cpp)
# and its PyTorch peer (bench/torch_transformer_step.py) in the same run, both
# on one thread, and prints each median step time and the ratio (PipeLab ms /
# PyTorch ms; at or below 1 means PipeLab is as fast or faster). The two
# alternate for ROUNDS rounds (default 3) so a change in machine load hits both
# alike; the summary takes each side's median over the rounds. It also prints
# the same ratio of CPU time per step, which holds steadier than wall time
# when other work loads the machine. Without PyTorch it prints PipeLab's time,
# says PyTorch was not found, and exits 0.
#
# Usage: bench/run_transformer_vs_torch.sh [build-dir=build] [steps=20]
# Set PYTHON to pick the interpreter that has torch, ROUNDS for the rounds.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="${1:-build}"
steps="${2:-20}"
rounds="${ROUNDS:-3}"
warmup=3
cpu_bench="${build_dir}/bench/cpu_transformer_step"
if [[ ! -x "${cpu_bench}" ]]; then
  echo "error: ${cpu_bench} not found; build it with: cmake --build ${build_dir} --target cpu_transformer_step" >&2
  exit 1
fi

# One thread everywhere: PipeLab pins OpenBLAS itself (set_blas_threads(1));
# Debian's PyTorch does its GEMMs in the system OpenBLAS, which
# torch.set_num_threads does not control, so pin every pool by environment too.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# The first interpreter that can import torch (pyenv or venv python3s often cannot
# see the distribution's python3-torch).
python=""
for candidate in "${PYTHON:-}" python3 /usr/bin/python3; do
  if [[ -n "${candidate}" ]] && "${candidate}" -c "import torch" >/dev/null 2>&1; then
    python="${candidate}"
    break
  fi
done
if [[ -z "${python}" ]]; then
  "${cpu_bench}" "${steps}" "${warmup}" 1
  echo "PyTorch was not found (no python3 can import torch): PipeLab's time only, no ratio."
  exit 0
fi

cpu_lines=()
torch_lines=()
for ((round = 1; round <= rounds; ++round)); do
  cpu_line="$("${cpu_bench}" "${steps}" "${warmup}" 1)"
  torch_line="$("${python}" "${here}/torch_transformer_step.py" "${steps}" "${warmup}" 1)"
  echo "${cpu_line}"
  echo "${torch_line}"
  cpu_lines+=("${cpu_line}")
  torch_lines+=("${torch_line}")
done
"${python}" - "${rounds}" "${cpu_lines[@]}" "${torch_lines[@]}" <<'PY'
import json, statistics, sys
rounds = int(sys.argv[1])
lines = [json.loads(line) for line in sys.argv[2:]]
cpu, torch = lines[:rounds], lines[rounds:]
pipelab_ms = statistics.median(line["median_ms"] for line in cpu)
torch_ms = statistics.median(line["median_ms"] for line in torch)
ratios = [c["median_ms"] / t["median_ms"] for c, t in zip(cpu, torch)]
pipelab_cpu_ms = statistics.median(line["cpu_median_ms"] for line in cpu)
torch_cpu_ms = statistics.median(line["cpu_median_ms"] for line in torch)
print(json.dumps({"bench": "transformer_vs_torch_step", "threads": 1, "rounds": rounds,
                  "steps": cpu[0]["steps"], "pipelab_median_ms": round(pipelab_ms, 3),
                  "torch_median_ms": round(torch_ms, 3),
                  "ratio_pipelab_over_torch": round(pipelab_ms / torch_ms, 3),
                  "ratio_per_round": [round(r, 3) for r in ratios],
                  "pipelab_cpu_median_ms": round(pipelab_cpu_ms, 3),
                  "torch_cpu_median_ms": round(torch_cpu_ms, 3),
                  "cpu_time_ratio": round(pipelab_cpu_ms / torch_cpu_ms, 3),
                  "torch": torch[0]["torch"], "torch_attention": torch[0]["attention"]}))
PY
