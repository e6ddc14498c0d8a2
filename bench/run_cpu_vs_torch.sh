#!/usr/bin/env bash
# Runs the CPU MLP training-step benchmark and its PyTorch peer, both
# single-threaded and then both on every core, and prints each ratio (PipeLab ms /
# PyTorch ms; below 1 means PipeLab is faster). Without PyTorch it says so and
# exits 0.
#
# Usage: bench/run_cpu_vs_torch.sh [build-dir=build] [steps=20]
# Set PYTHON to pick the interpreter that has torch.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="${1:-build}"
steps="${2:-20}"
cpu_bench="${build_dir}/bench/cpu_mlp_step"
if [[ ! -x "${cpu_bench}" ]]; then
  echo "error: ${cpu_bench} not found; build it with: cmake --build ${build_dir} --target cpu_mlp_step" >&2
  exit 1
fi

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
  "${cpu_bench}" "${steps}"
  echo "PyTorch is not installed (no python3 can import torch): no ratio to print."
  exit 0
fi

cores="$(nproc)"
for threads in 1 "${cores}"; do
  # Alternate the two so a change in machine load hits both alike.
  cpu_line="$("${cpu_bench}" "${steps}" 3 "${threads}")"
  torch_line="$("${python}" "${here}/torch_mlp_step.py" "${steps}" 3 "${threads}")"
  echo "${cpu_line}"
  echo "${torch_line}"
  "${python}" - "${cpu_line}" "${torch_line}" <<'PY'
import json, sys
cpu, torch = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({"bench": "cpu_vs_torch_mlp_step", "threads": cpu["threads"],
                  "pipelab_ms": cpu["ms_per_step"], "torch_ms": torch["ms_per_step"],
                  "ratio_pipelab_over_torch": round(cpu["ms_per_step"] / torch["ms_per_step"], 3)}))
PY
done
