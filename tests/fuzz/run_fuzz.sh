#!/usr/bin/env bash
# Builds the libFuzzer targets (PIPELAB_FUZZ=ON, clang) in their own build
# folder and runs each for SECONDS on its seed corpus. Exits non-zero on the
# first crash, hang (over 10 s for one input) or memory over 2 GiB; the input
# that caused it is saved in BUILD/fuzz-findings/.
#
#   bash tests/fuzz/run_fuzz.sh [SECONDS] [BUILD]     # defaults: 30, build-fuzz
#   TARGETS="csv_fuzz idx_fuzz" bash tests/fuzz/run_fuzz.sh 600
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds="${1:-30}"
build="${2:-build-fuzz}"
targets="${TARGETS:-experiment_fuzz set_override_fuzz cli_args_fuzz idx_fuzz idx_folder_fuzz csv_fuzz run_file_fuzz live_stream_fuzz}"

# A target whose seeds are this build's bytes has a NAME_seeds program that
# writes them (tests/fuzz/NAME_seeds.cpp); the others have committed seeds.
seed_writers=""
for target in $targets; do
  name="${target%_fuzz}"
  [ -f "tests/fuzz/${name}_seeds.cpp" ] && seed_writers="$seed_writers ${name}_seeds"
done

cmake -S . -B "$build" -DPIPELAB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ > /dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"$(nproc)" --target $targets $seed_writers

findings="$build/fuzz-findings"
mkdir -p "$findings"
for target in $targets; do
  # New inputs go to the first folder; the committed seeds stay as they are.
  work_corpus="$build/fuzz-corpus/$target"
  mkdir -p "$work_corpus"
  dictionary=""
  name="${target%_fuzz}"
  [ -f "tests/fuzz/$name.dict" ] && dictionary="-dict=tests/fuzz/$name.dict"
  seeds=""
  [ -d "tests/fuzz/corpus/$target" ] && seeds="tests/fuzz/corpus/$target"
  [ -x "$build/tests/fuzz/${name}_seeds" ] && "$build/tests/fuzz/${name}_seeds" "$work_corpus"
  echo "== $target: $seconds s"
  # shellcheck disable=SC2086
  if ! "$build/tests/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$findings/$target-" $dictionary \
      "$work_corpus" $seeds 2> "$findings/$target.log"; then
    tail -n 60 "$findings/$target.log"
    echo "$target found a problem; the input is in $findings/" >&2
    exit 1
  fi
  grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::peak_rss_mb" \
    "$findings/$target.log" | sed "s/^/  /"
done
