#!/usr/bin/env bash
# On a lent GPU machine: the GPU check on the binaries tests/gpu/prepare_prebuilt.sh
# built and packed into .gpu-run/ (carry it), from a checkout of the same commit.
#   1. unpacks the carried libraries and OpenMPI into .gpu-deps/ (gpu_check.sh
#      puts them on the search paths);
#   2. links the paths the binaries have compiled in (the source folder, the
#      build folder, ../shared with MNIST) to this checkout, .gpu-run/build and
#      .gpu-run/mnist-t10k, where nothing is there already;
#   3. runs tests/gpu/gpu_check.sh without its build step.
#
# Usage: bash tests/gpu/run_prebuilt.sh [REPORT_DIR=gpu-check]
# STEPS (default "tests gpt2 cli mpi sanitizer", with "candidate" when
# .gpu-run/candidate.tar.xz is carried; add "bench" for the MLP
# comparison with PyTorch, "profile" for Nsight Compute), STEP_TIMEOUT (default 100 s), SUITES, CONFORMANCE_FILTER
# and DEADLINE pass through to gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
report_dir="${1:-gpu-check}"
prebuilt=.gpu-run
if [[ ! -f "${prebuilt}/paths.env" ]]; then
  echo "error: no ${prebuilt}/paths.env: run tests/gpu/prepare_prebuilt.sh where the build is, and carry ${prebuilt}" >&2
  exit 2
fi

rm -rf .gpu-deps
mkdir -p .gpu-deps
tar -C .gpu-deps -xJf "${prebuilt}/deps.tar.xz"

# Links `path` to `target` unless something is there already (then the
# binaries find what is there, which this checkout may be).
link_if_missing() {
  local path="$1" target="$2"
  [[ -e "${path}" ]] && return 0
  mkdir -p "$(dirname "${path}")"
  ln -s "${target}" "${path}"
  echo "linked ${path} -> ${target}"
}
# shellcheck disable=SC1091
source "${prebuilt}/paths.env"
here="$(pwd)"
link_if_missing "${PIPELAB_BUILT_SOURCE_DIR}" "${here}"
link_if_missing "${PIPELAB_BUILT_BUILD_DIR}" "${here}/${prebuilt}/build"
if [[ -d "${prebuilt}/mnist-t10k" ]]; then
  link_if_missing "${PIPELAB_BUILT_SHARED_DIR}/datasets/mnist-t10k" "${here}/${prebuilt}/mnist-t10k"
  # The examples name ../../shared from their own folder.
  link_if_missing "${here}/../shared/datasets/mnist-t10k" "${here}/${prebuilt}/mnist-t10k"
fi

# A candidate revision's programs, when prepare_candidate.sh packed them.
default_steps="tests gpt2 cli mpi sanitizer"
if [[ -f "${prebuilt}/candidate.tar.xz" ]]; then
  rm -rf "${prebuilt}/candidate"
  tar -C "${prebuilt}" -xJf "${prebuilt}/candidate.tar.xz"
  export CANDIDATE_DIR="${here}/${prebuilt}/candidate"
  default_steps="tests gpt2 candidate cli mpi sanitizer"
  echo "candidate: $(cat "${CANDIDATE_DIR}/revision.txt")"
fi

STEPS="${STEPS:-${default_steps}}" STEP_TIMEOUT="${STEP_TIMEOUT:-100}" \
  bash tests/gpu/gpu_check.sh "${report_dir}" "${prebuilt}/build"
