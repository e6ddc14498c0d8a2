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
# Debian's PyTorch does its GEMMs in the system OpenBLAS, whose threads
# torch.set_num_threads does not control: pin them with OPENBLAS_NUM_THREADS, or
# "single-threaded" PyTorch quietly uses every core. On all cores PyTorch is
# fastest with OpenBLAS on every core and its own intra-op pool at 1 (its
# OpenMP and OpenBLAS pools otherwise fight over the cores); we time both
# settings and compare against the faster one.
torch_ms() {  # blas_threads torch_threads
  OPENBLAS_NUM_THREADS="$1" OMP_NUM_THREADS="$2" \
    "${python}" "${here}/torch_mlp_step.py" "${steps}" 3 "$2"
}
for threads in 1 "${cores}"; do
  # Alternate the two so a change in machine load hits both alike.
  cpu_line="$("${cpu_bench}" "${steps}" 3 "${threads}")"
  torch_line="$(torch_ms "${threads}" "${threads}")"
  torch_alt_line="$(torch_ms "${threads}" 1)"
  echo "${cpu_line}"
  echo "${torch_line}"
  echo "${torch_alt_line}"
  "${python}" - "${cpu_line}" "${torch_line}" "${torch_alt_line}" <<'PY'
import json, sys
cpu = json.loads(sys.argv[1])
torch = min((json.loads(line) for line in sys.argv[2:]), key=lambda t: t["ms_per_step"])
print(json.dumps({"bench": "cpu_vs_torch_mlp_step", "cores": cpu["threads"],
                  "pipelab_ms": cpu["ms_per_step"], "torch_ms": torch["ms_per_step"],
                  "torch_intra_op_threads": torch["threads"],
                  "ratio_pipelab_over_torch": round(cpu["ms_per_step"] / torch["ms_per_step"], 3)}))
PY
done
