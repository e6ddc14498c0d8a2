#!/usr/bin/env bash
# The GPU check's scripts on a machine without a GPU: they run only on a lent
# GPU, whose minutes a typo or a broken table would waste.
#   1. every script of tests/gpu and bench parses (bash -n);
#   2. bench/run_candidate_vs_current.sh, over two stand-in build folders whose
#      programs print fixed times, alternates them, prints each one's medians
#      and the ratio, says when an attention core did not run fused, and exits 1
#      when a run fails.
# Exits 77 (skipped) without python3, which the benchmark's table needs.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}

for script in "${root}"/tests/gpu/*.sh "${root}"/bench/*.sh; do
  bash -n "${script}" || fail "${script#"${root}/"} does not parse"
done

if ! command -v python3 >/dev/null; then
  echo "skipped: no python3 (bench/run_candidate_vs_current.sh's table needs it)"
  exit 77
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# A stand-in build folder: gpu_attention_step prints ATTENTION_MS (fused or not),
# pipelab-cli writes a summary with STEP_MS, or fails when STEP_MS is "fail".
stand_in() {
  local dir="$1" attention_ms="$2" fused="$3" step_ms="$4"
  mkdir -p "${dir}/bench" "${dir}/app"
  printf '#!/bin/sh\necho "{\\"median_ms\\": %s, \\"fused\\": %s}"\n' "${attention_ms}" "${fused}" \
    >"${dir}/bench/gpu_attention_step"
  cat >"${dir}/app/pipelab-cli" <<CLI
#!/bin/sh
[ "${step_ms}" = fail ] && { echo "pipelab-cli: out of GPU memory"; exit 1; }
while [ \$# -gt 0 ]; do
  [ "\$1" = --summary ] && echo '{"step_time_ms_median": ${step_ms}, "final_loss": 2.5}' >"\$2"
  shift
done
CLI
  chmod +x "${dir}/bench/gpu_attention_step" "${dir}/app/pipelab-cli"
}

stand_in "${work}/current" 10.0 true 200.0
stand_in "${work}/candidate" 8.0 false 150.0
table="$(bash "${root}/bench/run_candidate_vs_current.sh" "${work}/current" "${work}/candidate" \
  "${work}/out" 3)" || fail "the comparison of two working builds exited $?"
grep -q '| attention core, fused, 12 blocks | 10.00 | 8.00 | 0.800 |' <<<"${table}" ||
  fail "the attention row is not 10.00 | 8.00 | 0.800: ${table}"
grep -q '| GPT-2 small step, selective recompute | 200.00 | 150.00 | 0.750 |' <<<"${table}" ||
  fail "the step row is not 200.00 | 150.00 | 0.750: ${table}"
grep -q "the candidate build's attention core did not run the fused kernels" <<<"${table}" ||
  fail "no note that the candidate's attention did not run fused: ${table}"
# Three pairs of each, the order alternating: current first in pairs 1 and 3.
order="$(python3 -c 'import json, sys
print(" ".join(json.loads(l)["build"][:3] for l in open(sys.argv[1]) if "attention" in l))' \
  "${work}/out/candidate_results.jsonl")"
[[ "${order}" == "cur can can cur cur can" ]] || fail "the attention runs' order is ${order}"

stand_in "${work}/failing" 9.0 true fail
table="$(bash "${root}/bench/run_candidate_vs_current.sh" "${work}/current" "${work}/failing" \
  "${work}/out2" 1)" && fail "a failing candidate step did not fail the comparison"
grep -q '| GPT-2 small step, selective recompute | 200.00 | pipelab-cli: out of GPU memory |  |' \
  <<<"${table}" || fail "the failing step's row does not show its error: ${table}"

((failures == 0)) && echo "gpu scripts: all checks passed"
exit $((failures > 0))
