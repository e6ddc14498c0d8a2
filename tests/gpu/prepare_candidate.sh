#!/usr/bin/env bash
# Builds a candidate revision's GPU programs (a kernel change that has never
# run on a GPU, kept on a branch) and packs them beside the prepared check's,
# so that one device call runs both on the same GPU: gpu_check.sh's
# "candidate" step runs the candidate's fused-attention tests and the compute
# sanitizers on them, and times its attention core and GPT-2 step against
# this checkout's, pair by pair. Whether to merge the branch is then a
# measurement, not a guess.
#
# Usage: bash tests/gpu/prepare_candidate.sh REV [BUILD_DIR=build]
# after tests/gpu/prepare_prebuilt.sh (which empties .gpu-run/). It checks REV
# out in this working tree, builds the three programs in BUILD_DIR (only what
# REV changes is compiled), packs them into .gpu-run/candidate.tar.xz, and
# checks the starting branch out again; the working tree must be clean. Build
# BUILD_DIR again afterwards: it then holds REV's objects.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $# -lt 1 ]]; then
  echo "usage: bash tests/gpu/prepare_candidate.sh REV [BUILD_DIR=build]" >&2
  exit 2
fi
rev="$1"
build_dir="${2:-build}"
out=.gpu-run
if [[ ! -f "${out}/paths.env" ]]; then
  echo "error: no ${out}/paths.env: run tests/gpu/prepare_prebuilt.sh first (it empties ${out})" >&2
  exit 2
fi
if ! git diff --quiet || ! git diff --cached --quiet; then
  echo "error: the working tree has changes: commit or stash them (this checks ${rev} out)" >&2
  exit 2
fi
candidate="$(git rev-parse --verify --short "${rev}^{commit}")"
start="$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)"
trap 'git checkout -q "${start}"' EXIT
git checkout -q "${candidate}"

targets="test_gpu pipelab-cli gpu_attention_step"
# shellcheck disable=SC2086
cmake --build "${build_dir}" -j"${JOBS:-$(nproc)}" --target ${targets}

staging="$(mktemp -d)"
trap 'git checkout -q "${start}"; rm -rf "${staging}"' EXIT
mkdir -p "${staging}/candidate/tests" "${staging}/candidate/app" "${staging}/candidate/bench"
strip -o "${staging}/candidate/tests/test_gpu" "${build_dir}/tests/test_gpu"
strip -o "${staging}/candidate/app/pipelab-cli" "${build_dir}/app/pipelab-cli"
strip -o "${staging}/candidate/bench/gpu_attention_step" "${build_dir}/bench/gpu_attention_step"
git log -1 --format='%h %s' "${candidate}" | cut -c1-200 >"${staging}/candidate/revision.txt"
# Compressed: the three programs together would not fit beside the check's.
tar -C "${staging}" -cJf "${out}/candidate.tar.xz" candidate

bytes=$(du -sb "${out}" | cut -f1)
echo "${out}: $((bytes / 1024 / 1024)) MiB with the candidate $(cat "${staging}/candidate/revision.txt" | cut -c1-60)"
if ((bytes > 56 * 1024 * 1024)); then
  echo "error: ${out} is over 56 MiB, too large to carry with the checkout" >&2
  rm -f "${out}/candidate.tar.xz"
  exit 1
fi
