#!/usr/bin/env bash
# A candidate revision's GPU programs (tests/gpu/prepare_candidate.sh packs
# them) against this checkout's, on the same GPU in the same run, pair by
# pair with the order alternating, so that a drift of the GPU's clocks falls
# on both:
#   attention  GPT-2 small's attention core, 12 blocks forward and backward,
#              through the fused kernels in bf16-mixed (bench/gpu_attention_step)
#   step       GPT-2 small's training step under selective recompute, where
#              bf16-mixed runs the fused attention (pipelab-cli train on
#              bench/configs/gpt2_small.json, its summary's median step)
# Prints the JSON lines, then a Markdown table of each one's medians over the
# pairs and ratio = candidate ms / current ms (below 1: the candidate is faster);
# exits 1 when a run failed or found no GPU.
#
# Usage: bench/run_candidate_vs_current.sh CURRENT_BUILD CANDIDATE_BUILD [out-dir=candidate-bench]
#        [pairs=3] (each build folder holds app/pipelab-cli and bench/gpu_attention_step)
# BATCH (default 16) sets both programs' batch, CANDIDATE_STEPS (default 6) the step's.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/.." && pwd)"
if [[ $# -lt 2 ]]; then
  echo "usage: bench/run_candidate_vs_current.sh CURRENT_BUILD CANDIDATE_BUILD [out-dir] [pairs]" >&2
  exit 2
fi
current="$1"
candidate="$2"
out_dir="${3:-candidate-bench}"
pairs="${4:-3}"
batch="${BATCH:-16}"
steps="${CANDIDATE_STEPS:-6}"
mkdir -p "${out_dir}"
results="${out_dir}/candidate_results.jsonl"
: >"${results}"

# One line into the results: which build, what, then the program's JSON line.
record() {
  echo "{\"build\": \"$1\", \"what\": \"$2\", \"result\": ${3:-null}}" | tee -a "${results}"
}

attention() {
  local build="$1" label="$2"
  record "${label}" attention "$("${build}/bench/gpu_attention_step" "${batch}" bf16-mixed fused 10 | tail -n 1)"
}

step() {
  local build="$1" label="$2" summary="${out_dir}/${2}_step.json"
  if "${build}/app/pipelab-cli" train --config "${root}/bench/configs/gpt2_small.json" \
      --steps "${steps}" --quiet --set training.batch_size="${batch}" \
      --set parallel.recompute=selective --summary "${summary}" >"${out_dir}/${label}_step.log" 2>&1; then
    record "${label}" step "$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(json.dumps({"median_ms": s["step_time_ms_median"], "final_loss": s["final_loss"]}))' "${summary}")"
  else
    record "${label}" step "{\"error\": \"$(tail -n 1 "${out_dir}/${label}_step.log" | tr -d '"\\')\"}"
  fi
}

for ((pair = 0; pair < pairs; ++pair)); do
  for what in attention step; do
    if ((pair % 2 == 0)); then
      "${what}" "${current}" current
      "${what}" "${candidate}" candidate
    else
      "${what}" "${candidate}" candidate
      "${what}" "${current}" current
    fi
  done
done

python3 - "${results}" "${batch}" <<'EOF'
import json, statistics, sys
times = {}
errors = {}
unfused = set()
for line in open(sys.argv[1]):
    entry = json.loads(line)
    result = entry["result"] or {}
    key = (entry["what"], entry["build"])
    value = result.get("median_ms")
    if result.get("fused") is False:
        unfused.add(entry["build"])
    if value is None:
        errors[key] = result.get("error") or result.get("skipped") or "no time"
    else:
        times.setdefault(key, []).append(float(value))
print(f"\n| batch {sys.argv[2]} | current ms | candidate ms | ratio (candidate / current) |")
print("|---|---|---|---|")
for what, label in [("attention", "attention core, fused, 12 blocks"),
                    ("step", "GPT-2 small step, selective recompute")]:
    cells = []
    for build in ("current", "candidate"):
        values = times.get((what, build))
        cells.append(f"{statistics.median(values):.2f}" if values else errors.get((what, build), "not run"))
    a, b = times.get((what, "current")), times.get((what, "candidate"))
    ratio = f"{statistics.median(b) / statistics.median(a):.3f}" if a and b else ""
    print(f"| {label} | {cells[0]} | {cells[1]} | {ratio} |")
for build in sorted(unfused):
    print(f"note: the {build} build's attention core did not run the fused kernels at this shape")
# A run that failed fails the comparison (the check's report then says so).
sys.exit(1 if errors else 0)
EOF
