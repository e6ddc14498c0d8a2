#!/usr/bin/env bash
# Runs the GPU MLP training-step benchmark and its PyTorch peer for both model
# sizes in FP32, TF32 and bf16-mixed (PyTorch: autocast to bfloat16), and
# prints their ratios (PipeLab ms / PyTorch ms; below 1 means PipeLab is
# faster) with the TFLOP/s each achieves and the bare cuBLAS floor (SGEMM, or
# bf16 GEMMs in bf16-mixed). Without PyTorch or a GPU it says so and exits 0.
#
# Usage: bench/run_gpu_vs_torch.sh [build-dir=build] [steps=20]
# Set PYTHON to pick the interpreter that has torch.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="${1:-build}"
steps="${2:-20}"
gpu_bench="${build_dir}/bench/gpu_mlp_step"
if [[ ! -x "${gpu_bench}" ]]; then
  echo "error: ${gpu_bench} not found; configure with -DPIPELAB_CUDA=ON -DPIPELAB_BENCH=ON and build it with: cmake --build ${build_dir} --target gpu_mlp_step" >&2
  exit 1
fi

# The first interpreter that can import torch.
python=""
for candidate in "${PYTHON:-}" python3 /usr/bin/python3; do
  if [[ -n "${candidate}" ]] && "${candidate}" -c "import torch" >/dev/null 2>&1; then
    python="${candidate}"
    break
  fi
done

for size in small large; do
  for precision in fp32 tf32 bf16-mixed; do
    gpu_line="$("${gpu_bench}" "${size}" "${precision}" "${steps}")"
    echo "${gpu_line}"
    if [[ "${gpu_line}" == *'"skipped"'* ]]; then
      exit 0
    fi
    if [[ -z "${python}" ]]; then
      continue
    fi
    torch_line="$("${python}" "${here}/torch_gpu_mlp_step.py" "${size}" "${precision}" "${steps}")"
    echo "${torch_line}"
    "${python}" - "${gpu_line}" "${torch_line}" <<'PY'
import json, sys
ours, torch = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if "skipped" in torch:
    sys.exit(0)
print(json.dumps({"bench": "gpu_vs_torch_mlp_step", "model": ours["model"],
                  "precision": ours["precision"], "pipelab_ms": ours["ms_per_step"],
                  "torch_ms": torch["ms_per_step"],
                  "ratio_pipelab_over_torch": round(ours["ms_per_step"] / torch["ms_per_step"], 3),
                  "pipelab_tflops": ours["tflops"], "torch_tflops": torch["tflops"],
                  "bare_gemm_tflops": ours["gemm_tflops"]}))
PY
  done
done
if [[ -z "${python}" ]]; then
  echo "PyTorch is not installed (no python3 can import torch): skipped the comparison."
fi
