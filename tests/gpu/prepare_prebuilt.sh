#!/usr/bin/env bash
# Builds the GPU check's binaries on this Debian machine and packs them, with
# what they need to run, into .gpu-run/ (git ignores it): a lent GPU machine
# then spends its minutes on the check, not on a build. On the GPU machine,
# from a checkout of the same commit with .gpu-run carried along:
#
#   bash tests/gpu/run_prebuilt.sh REPORT_DIR
#
# .gpu-run/ holds
#   build/{tests,app,bench}/  the check's programs, stripped
#   deps.tar.xz               the carried runtime libraries (OpenBLAS and what
#                             it loads, zlib) and OpenMPI, from pack_gpu_deps.sh
#   mnist-t10k/               the MNIST files the tests and examples read
#   paths.env                 where this build looked for its sources, build
#                             folder and ../shared (the tests have these paths
#                             compiled in; run_prebuilt.sh links them there)
#
# Usage: bash tests/gpu/prepare_prebuilt.sh [BUILD_DIR=build-gpu] (an existing
# build folder, such as build/, is used as it is configured)
# JOBS sets build parallelism. Needs the CUDA toolkit (nvcc) and the Debian
# packages pack_gpu_deps.sh names; with openmpi-bin and libopenmpi-dev the mpi
# step's programs and OpenMPI come along.
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${1:-build-gpu}"
jobs="${JOBS:-$(nproc)}"
out=.gpu-run
# The device tool sends tracked and untracked-but-not-ignored files, and the
# carried folders, 64 MiB in all; leave room for the checkout itself.
max_bytes=$((56 * 1024 * 1024))

grep -qx '/.gpu-run/' .git/info/exclude 2>/dev/null || echo '/.gpu-run/' >>.git/info/exclude

bash tests/gpu/pack_gpu_deps.sh

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# A build folder already configured (the everyday one, with the app) is built
# as it is: a fresh CUDA tree takes an hour on two cores, an incremental one
# minutes. It must have the CUDA backend and the benchmarks.
if [[ -f "${build_dir}/CMakeCache.txt" ]]; then
  echo "${build_dir} is configured already: building its GPU check targets as it is"
else
  cmake -S . -B "${build_dir}" -DCMAKE_BUILD_TYPE=Release -DPIPELAB_UI=OFF -DPIPELAB_CUDA=ON \
    -DPIPELAB_BENCH=ON -DPIPELAB_MPI=AUTO "${launcher[@]}" >/dev/null
fi
# A target in the generator's help: "... name" (Makefiles) or "name: phony" (Ninja).
has_target() { cmake --build "${build_dir}" --target help 2>/dev/null | grep -cE "(^|\.\.\. )$1(: phony)?\$" >/dev/null; }
if ! has_target test_gpu; then
  echo "error: ${build_dir} does not build the CUDA backend (no test_gpu target): configure it with -DPIPELAB_CUDA=ON -DPIPELAB_BENCH=ON" >&2
  exit 1
fi
# The targets gpu_check.sh runs (its `targets`), test_mpi when MPI was found.
targets="test_gpu test_conformance test_runtime pipelab-cli gpu_mlp_step gpu_pipeline_bubble gpu_attention_step"
# (grep reads all of it: with -q it would stop early, and pipefail would count cmake's broken pipe.)
has_target test_mpi && targets="${targets} test_mpi"
# shellcheck disable=SC2086
cmake --build "${build_dir}" -j"${jobs}" --target ${targets}

rm -rf "${out}"
mkdir -p "${out}/build/tests" "${out}/build/app" "${out}/build/bench"
for target in ${targets}; do
  case "${target}" in
    test_*) folder=tests ;;
    pipelab-cli) folder=app ;;
    *) folder=bench ;;
  esac
  strip -o "${out}/build/${folder}/${target}" "${build_dir}/${folder}/${target}"
done

tar -C .gpu-deps -cJf "${out}/deps.tar.xz" lib $([[ -d .gpu-deps/openmpi ]] && echo openmpi)

shared="$(cd .. && pwd)/shared"
if [[ -d "${shared}/datasets/mnist-t10k" ]]; then
  cp -r "${shared}/datasets/mnist-t10k" "${out}/mnist-t10k"
else
  echo "note: no ${shared}/datasets/mnist-t10k; the tests that read MNIST will skip there" >&2
fi

{
  echo "PIPELAB_BUILT_SOURCE_DIR=$(pwd)"
  echo "PIPELAB_BUILT_BUILD_DIR=$(cd "${build_dir}" && pwd)"
  echo "PIPELAB_BUILT_SHARED_DIR=${shared}"
} >"${out}/paths.env"

bytes=$(du -sb "${out}" | cut -f1)
echo "${out}: $((bytes / 1024 / 1024)) MiB (${targets})"
if ((bytes > max_bytes)); then
  echo "error: ${out} is over $((max_bytes / 1024 / 1024)) MiB, too large to carry with the checkout" >&2
  exit 1
fi
echo "On the GPU machine (device run, carry [\"${out}\"]):"
echo "  bash tests/gpu/run_prebuilt.sh \$OUT"
