#!/usr/bin/env bash
# Builds the libFuzzer targets (PIPELAB_FUZZ=ON, clang) in their own build
# folder and runs each for SECONDS on its seed corpus, as many at once as the
# machine has cores. Exits non-zero when any target finds a crash, a hang (over
# 10 s for one input) or memory over 2 GiB; the input that caused it is saved in
# BUILD/fuzz-findings/.
#
#   bash tests/fuzz/run_fuzz.sh [SECONDS] [BUILD]     # defaults: 30, build-fuzz
#   TARGETS="csv_fuzz idx_fuzz" bash tests/fuzz/run_fuzz.sh 600
#   JOBS=1 bash tests/fuzz/run_fuzz.sh                 # one target at a time
#   RUNS=1000000 bash tests/fuzz/run_fuzz.sh           # each target for that many
#                                                      # inputs instead, however long
#   REUSE_BUILD=1 bash tests/fuzz/run_fuzz.sh 30 B     # B is already configured with
#                                                      # PIPELAB_FUZZ=ON (.ci/run's ASan tree)
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds="${1:-30}"
build="${2:-build-fuzz}"
targets="${TARGETS:-experiment_fuzz set_override_fuzz cli_args_fuzz idx_fuzz idx_folder_fuzz csv_fuzz text_corpus_fuzz run_file_fuzz hardware_fuzz live_stream_fuzz}"
jobs="${JOBS:-$(nproc)}"

# A target whose seeds are this build's bytes has a NAME_seeds program that
# writes them (tests/fuzz/NAME_seeds.cpp); the others have committed seeds.
seed_writers=""
for target in $targets; do
  name="${target%_fuzz}"
  [ -f "tests/fuzz/${name}_seeds.cpp" ] && seed_writers="$seed_writers ${name}_seeds"
done

# -O1 with line tables: what libFuzzer's own examples use, and about half the
# compile time of -O2 -g; reports keep file and line.
if [ "${REUSE_BUILD:-0}" = 1 ] && [ -f "$build/CMakeCache.txt" ]; then
  grep -q '^PIPELAB_FUZZ:BOOL=ON' "$build/CMakeCache.txt" ||
    { echo "$build is not configured with PIPELAB_FUZZ=ON" >&2; exit 2; }
else
  cmake -S . -B "$build" -DPIPELAB_FUZZ=ON -DPIPELAB_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ > /dev/null
fi
# shellcheck disable=SC2086
cmake --build "$build" -j"$(nproc)" --target $targets $seed_writers

findings="$build/fuzz-findings"
mkdir -p "$findings"

# fuzz TARGET: runs one target; its log goes to findings/TARGET.log and its
# summary, printed when all are done, to findings/TARGET.summary.
fuzz() {
  local target="$1" name="${1%_fuzz}" dictionary="" seeds=""
  # New inputs go to the first folder; the committed seeds stay as they are.
  local work_corpus="$build/fuzz-corpus/$target"
  mkdir -p "$work_corpus"
  [ -f "tests/fuzz/$name.dict" ] && dictionary="-dict=tests/fuzz/$name.dict"
  [ -d "tests/fuzz/corpus/$target" ] && seeds="tests/fuzz/corpus/$target"
  # The hardware catalogue's own files are that parser's seeds.
  [ "$target" = hardware_fuzz ] && seeds="hardware/devices hardware/nodes"
  [ -x "$build/tests/fuzz/${name}_seeds" ] && "$build/tests/fuzz/${name}_seeds" "$work_corpus"
  # shellcheck disable=SC2086
  local limit="-max_total_time=$seconds"
  [ -n "${RUNS:-}" ] && limit="-runs=$RUNS"
  if ! "$build/tests/fuzz/$target" "$limit" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$findings/$target-" $dictionary \
      "$work_corpus" $seeds 2> "$findings/$target.log"; then
    { tail -n 60 "$findings/$target.log"
      echo "$target found a problem; the input is in $findings/"; } > "$findings/$target.summary"
    return 1
  fi
  grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::peak_rss_mb" \
    "$findings/$target.log" | sed "s/^/  /" > "$findings/$target.summary"
}

failed=0
running=0
for target in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  echo "== $target: $seconds s"
  fuzz "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done

for target in $targets; do
  echo "$target:"
  cat "$findings/$target.summary"
done
if [ "$failed" -ne 0 ]; then
  echo "a fuzz target found a problem: see above and $findings/" >&2
  exit 1
fi
