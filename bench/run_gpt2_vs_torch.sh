#!/usr/bin/env bash
# GPT-2 small (124M, sequence 1024, bf16-mixed, AdamW) on one GPU: PipeLab's
# training step (pipelab-cli train on bench/configs/gpt2_small.json, the cuda
# backend) against the same model in PyTorch on the same GPU in the same run
# (bench/torch_gpt2_step.py: eager with scaled_dot_product_attention, then
# torch.compile), at batch 4 and 16. PipeLab runs three times per batch:
# keeping the attention probabilities (its default), and under selective
# recompute with the fused attention kernels (what bf16-mixed runs by
# default there) and unfused (PIPELAB_FUSED_ATTENTION=0); the attention core alone is timed
# beside PyTorch's (bench/gpu_attention_step.cpp), for its share of the step.
# Also the tiny GPT at tp 2 with sequence parallelism against tp 1 on the one
# GPU: the cost of sharding when both shards share it.
#
# Prints the JSON lines, then a Markdown table: step time, tokens per second
# and ratio = PipeLab ms / PyTorch eager ms (at or below 1: as fast or faster).
# Without a GPU or PyTorch it says so and exits 0.
#
# Usage: bench/run_gpt2_vs_torch.sh [build-dir=build] [out-dir=gpt2-bench] [steps=10]
# Set PYTHON to pick the interpreter that has torch; BATCHES (default "4 16");
# COMPILE=0 leaves torch.compile out.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/.." && pwd)"
build_dir="${1:-build}"
out_dir="${2:-gpt2-bench}"
steps="${3:-10}"
batches="${BATCHES:-4 16}"
cli="${build_dir}/app/pipelab-cli"
attention="${build_dir}/bench/gpu_attention_step"
config="${root}/bench/configs/gpt2_small.json"
mkdir -p "${out_dir}"
results="${out_dir}/gpt2_results.jsonl"
: >"${results}"

python=""
for candidate in "${PYTHON:-}" python3 /usr/bin/python3; do
  if [[ -n "${candidate}" ]] && "${candidate}" -c "import torch" >/dev/null 2>&1; then
    python="${candidate}"
    break
  fi
done

# One line into the results: $1 the run's label, then the JSON (file or text).
record() {
  local label="$1" json="$2"
  [[ -f "${json}" ]] && json="$(tr -d '\n' <"${json}")"
  echo "{\"run\": \"${label}\", \"result\": ${json:-null}}" | tee -a "${results}"
}

# PipeLab's step: pipelab-cli train, its summary's median step.
pipelab_step() {
  local label="$1" batch="$2"
  shift 2
  local summary="${out_dir}/${label}.json"
  if "${cli}" train --config "${config}" --steps "${steps}" --quiet \
      --set training.batch_size="${batch}" --summary "${summary}" "$@" \
      >"${out_dir}/${label}.log" 2>&1; then
    record "${label}" "$(${python:-python3} - "${summary}" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(json.dumps({"median_ms": s["step_time_ms_median"], "final_loss": s["final_loss"],
                  "peak_bytes": s["peak_bytes"][0]["total"] if s["peak_bytes"] else None}))
EOF
)"
  else
    record "${label}" "{\"error\": \"$(tail -n 1 "${out_dir}/${label}.log" | tr -d '"\\')\"}"
  fi
}

for batch in ${batches}; do
  # The default runs are saved as run files (the app opens them; pipelab-cli
  # calibrate --run fits the simulator to them at home); the first also
  # writes its Chrome trace.
  trace_args=(--save-run "${out_dir}/gpt2_b${batch}.run.json")
  [[ "${batch}" == "$(echo "${batches}" | awk '{print $1}')" ]] &&
    trace_args+=(--trace "${out_dir}/gpt2_b${batch}_trace.json")
  pipelab_step "pipelab_b${batch}_kept" "${batch}" "${trace_args[@]}"
  (unset PIPELAB_FUSED_ATTENTION; pipelab_step "pipelab_b${batch}_fused" "${batch}" \
    --set parallel.recompute=selective)
  PIPELAB_FUSED_ATTENTION=0 pipelab_step "pipelab_b${batch}_recompute_unfused" "${batch}" \
    --set parallel.recompute=selective
  if [[ -x "${attention}" ]]; then
    record "attention_b${batch}_kept" "$("${attention}" "${batch}" bf16-mixed kept)"
    record "attention_b${batch}_fused" "$("${attention}" "${batch}" bf16-mixed fused)"
    record "attention_b${batch}_fused_again" "$("${attention}" "${batch}" bf16-mixed fused-again)"
    record "attention_b${batch}_recompute_unfused" "$("${attention}" "${batch}" bf16-mixed recompute)"
  fi
  if [[ -n "${python}" ]]; then
    record "torch_b${batch}_eager" "$("${python}" "${here}/torch_gpt2_step.py" --batch "${batch}" \
      --steps "${steps}" --attention 2>"${out_dir}/torch_b${batch}_eager.log" | tail -n 1)"
    if [[ "${COMPILE:-1}" != 0 ]]; then
      record "torch_b${batch}_compiled" "$("${python}" "${here}/torch_gpt2_step.py" --batch "${batch}" \
        --steps "${steps}" --compile 2>"${out_dir}/torch_b${batch}_compiled.log" | tail -n 1)"
    fi
  fi
done

# The cost of sharding on one GPU: the tiny GPT at tp 1 and at tp 2 with sequence parallelism.
tiny() {
  local label="$1"
  shift
  local summary="${out_dir}/${label}.json"
  if "${cli}" train --config "${root}/examples/tiny_gpt_copy.json" --backend cuda --steps 40 --quiet \
      --set parallel.pp=1 --summary "${summary}" "$@" >"${out_dir}/${label}.log" 2>&1; then
    record "${label}" "${summary}"
  else
    record "${label}" "{\"error\": \"$(tail -n 1 "${out_dir}/${label}.log" | tr -d '"\\')\"}"
  fi
}
tiny tiny_gpt_tp1
tiny tiny_gpt_tp2_sp --set parallel.tp=2 --set parallel.sequence_parallel=true

if [[ -z "${python}" ]]; then
  echo "PyTorch was not found (no python3 can import torch): PipeLab's times only, no ratio."
  exit 0
fi
"${python}" - "${results}" "${batches}" <<'EOF'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    entry = json.loads(line)
    runs[entry["run"]] = entry["result"] or {}
def ms(name):
    value = runs.get(name, {}).get("median_ms")
    return float(value) if value is not None else None
print("\n| batch | run | step ms | tokens/s | ratio to PyTorch eager |")
print("|---|---|---|---|---|")
for batch in sys.argv[2].split():
    eager = ms(f"torch_b{batch}_eager")
    for name, label in [(f"pipelab_b{batch}_kept", "PipeLab (P kept)"),
                        (f"pipelab_b{batch}_fused", "PipeLab (selective recompute, fused attention)"),
                        (f"pipelab_b{batch}_recompute_unfused", "PipeLab (selective recompute, unfused)"),
                        (f"torch_b{batch}_eager", "PyTorch eager (SDPA)"),
                        (f"torch_b{batch}_compiled", "PyTorch torch.compile")]:
        t = ms(name)
        if t is None:
            print(f"| {batch} | {label} | {runs.get(name, {}).get('error', 'not run')} | | |")
            continue
        ratio = f"{t / eager:.2f}" if eager else ""
        print(f"| {batch} | {label} | {t:.2f} | {int(batch) * 1024 / (t / 1e3):,.0f} | {ratio} |")
print("\n| batch | attention core, 12 blocks fwd+bwd | ms |")
print("|---|---|---|")
for batch in sys.argv[2].split():
    for name, label in [(f"attention_b{batch}_kept", "PipeLab unfused, P kept"),
                        (f"attention_b{batch}_fused", "PipeLab fused, lse kept"),
                        (f"attention_b{batch}_fused_again", "PipeLab fused, forward again"),
                        (f"attention_b{batch}_recompute_unfused", "PipeLab unfused, P recomputed")]:
        t = ms(name)
        print(f"| {batch} | {label} | {t if t is not None else 'not run'} |")
    torch_attention = runs.get(f"torch_b{batch}_eager", {}).get("attention_ms")
    print(f"| {batch} | PyTorch SDPA (bf16) | {torch_attention} |")
for name in ("tiny_gpt_tp1", "tiny_gpt_tp2_sp"):
    r = runs.get(name, {})
    print(f"{name}: median step {r.get('step_time_ms_median')} ms, final loss {r.get('final_loss')}")
EOF
