#!/usr/bin/env bash
# Packs what a GPU machine without Debian packages needs to build PipeLab's
# headless targets into .gpu-deps/ (git ignores it), from this Debian 12
# machine's packages: GoogleTest's sources (libgtest-dev), nlohmann_json's
# headers and CMake package, OpenBLAS with its CBLAS header and the runtime
# libraries it needs (libgfortran, libquadmath), and zlib. About 45 MB.
# tests/gpu/gpu_check.sh picks it up; carry `.gpu-deps` to the GPU machine.
#
# Usage: bash tests/gpu/pack_gpu_deps.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
deps=.gpu-deps
multiarch=/usr/lib/x86_64-linux-gnu

need() {
  [[ -e "$1" ]] || { echo "error: $1 is missing; install the Debian package $2" >&2; exit 2; }
}
need /usr/src/googletest libgtest-dev
need /usr/include/nlohmann/json.hpp nlohmann-json3-dev
need "${multiarch}/libopenblas.so.0" libopenblas-dev
need /usr/include/zlib.h zlib1g-dev

rm -rf "${deps}"
mkdir -p "${deps}/src" "${deps}/include" "${deps}/lib" "${deps}/share/cmake"
cp -r /usr/src/googletest "${deps}/src/googletest"
cp -r /usr/include/nlohmann "${deps}/include/"
cp -r /usr/share/cmake/nlohmann_json "${deps}/share/cmake/"
cblas_dir="$(dirname "$(find /usr/include -name cblas.h -path '*openblas*' | head -n 1)")"
cp "${cblas_dir}/cblas.h" "${cblas_dir}/openblas_config.h" "${deps}/include/"
cp /usr/include/zlib.h /usr/include/zconf.h "${deps}/include/" 2>/dev/null ||
  cp /usr/include/zlib.h "$(find /usr/include -name zconf.h | head -n 1)" "${deps}/include/"
# Real files (-L), under the names the linker and the loader look for.
cp -L "${multiarch}/libopenblas.so.0" "${deps}/lib/libopenblas.so.0"
ln -s libopenblas.so.0 "${deps}/lib/libopenblas.so"
for library in libgfortran.so.5 libquadmath.so.0; do
  cp -L "${multiarch}/${library}" "${deps}/lib/${library}"
done
cp -L "${multiarch}/libz.so" "${deps}/lib/libz.so.1"
ln -s libz.so.1 "${deps}/lib/libz.so"
grep -qx '/.gpu-deps/' .gitignore || echo '/.gpu-deps/' >>.gitignore
du -sh "${deps}"
