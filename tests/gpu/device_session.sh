#!/usr/bin/env bash
# The lent GPU's one call: the prebuilt check's chosen steps, then the files
# worth bringing back into $OUT (the device tool returns what is there). Run
# tests/gpu/prepare_prebuilt.sh here first (and prepare_candidate.sh for a
# candidate branch), then on the device, carrying .gpu-run:
#
#   bash tests/gpu/device_session.sh        (device timeout_s: about 560)
#
# A fresh machine takes minutes to start and the session has about 15 minutes
# of device time in all, so the defaults run what has never run and what the
# GPU issue asks for, and DEADLINE (seconds) leaves out every step that would
# start later, with the report still written. The console's last lines are the
# report's table.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
out="${OUT:-device-out}"
mkdir -p "${out}"
r="$(mktemp -d)"
steps="tests gpt2 profile mpi attention-sanitizer"
[[ -f .gpu-run/candidate.tar.xz ]] && steps="tests gpt2 candidate profile mpi attention-sanitizer"
STEPS="${STEPS:-${steps}}" SUITES="${SUITES:-test_gpu test_conformance test_runtime}" \
  CONFORMANCE_FILTER="${CONFORMANCE_FILTER:-*/cuda}" COMPILE="${COMPILE:-0}" DEADLINE="${DEADLINE:-300}" \
  bash tests/gpu/run_prebuilt.sh "${r}" >"${out}/console.txt" 2>&1
cp "${r}/gpu_check_report.md" "${r}/gpu_check_logs.txt" "${out}/" 2>/dev/null
cp "${r}/gpt2_table.txt" "${r}/candidate_table.txt" "${out}/" 2>/dev/null
cp "${r}/profile/gpt2_b16_kernels.md" "${r}/profile/fused_attention_ncu.txt" "${out}/" 2>/dev/null
cp "${r}/gpt2/calibrate_gpt2.json" "${r}/gpt2/calibrate_pipeline.json" "${out}/" 2>/dev/null
cp "${r}/gpt2/gpu-measured-gpt2.json" "${r}/gpt2/gpu-measured-pipeline.json" "${out}/" 2>/dev/null
cp "${r}/gpt2/pipeline_bubble_summary.json" "${out}/" 2>/dev/null
# The run file the app opens (its timeline) and the trace, compressed.
for file in gpt2_b4.run.json gpt2_b4_trace.json; do
  [[ -f "${r}/gpt2/${file}" ]] && xz -c "${r}/gpt2/${file}" >"${out}/${file}.xz"
done
grep "^|" "${r}/gpu_check_report.md" | head -n 60
