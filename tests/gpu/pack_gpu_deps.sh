#!/usr/bin/env bash
# Packs what a GPU machine without Debian packages needs to build PipeLab's
# headless targets into .gpu-deps/ (git ignores it), from this Debian 12
# machine's packages: GoogleTest's sources (libgtest-dev), nlohmann_json's
# headers and CMake package, OpenBLAS with its CBLAS header and the runtime
# libraries it needs (libgfortran, libquadmath), and zlib. About 45 MB. With
# openmpi-bin and libopenmpi-dev installed, also OpenMPI (about 13 MB more),
# for the check's mpi step. tests/gpu/gpu_check.sh picks it up; carry
# `.gpu-deps` to the GPU machine.
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

# OpenMPI (openmpi-bin, libopenmpi-dev), optional: a relocatable copy in
# ${deps}/openmpi (mpirun, the libraries, the plugins one machine needs and
# what they load, the C and C++ headers, help texts and settings), so the GPU
# check can run its mpi step; gpu_check.sh points OpenMPI at it with
# OPAL_PREFIX and its siblings. Left out to stay small: the plugins for
# InfiniBand and other fabrics (UCX, libfabric, verbs, PSM) and OpenSHMEM's.
pack_openmpi() {
  local prefix="${deps}/openmpi" ompi="${multiarch}/openmpi"
  mkdir -p "${prefix}/bin" "${prefix}/lib" "${prefix}/etc" "${prefix}/share" "${prefix}/include/openmpi/ompi/mpi"
  cp -L /usr/bin/orterun "${prefix}/bin/mpirun"
  cp -L /usr/bin/orted "${prefix}/bin/orted"
  cp "${ompi}/include/"{mpi.h,mpi-ext.h,mpi_portable_platform.h} "${prefix}/include/"
  cp -r "${ompi}/include/openmpi/mpiext" "${prefix}/include/openmpi/"
  cp -r "${ompi}/include/openmpi/ompi/mpi/cxx" "${prefix}/include/openmpi/ompi/mpi/"
  cp -r "${ompi}/lib/openmpi3" "${prefix}/lib/openmpi3"
  local plugin
  for plugin in "${prefix}/lib/openmpi3/"*.so; do
    if ldd "${plugin}" | grep -qE 'lib(fabric|ucp|ucs|uct|psm2|psm_infinipath|ibverbs|oshmem)\.so'; then
      rm "${plugin}"
    fi
  done
  cp -r /usr/share/openmpi "${prefix}/share/openmpi"
  cp /etc/openmpi/* "${prefix}/etc/"
  for library in libmpi libmpi_cxx libopen-rte libopen-pal; do
    cp -L "${multiarch}/${library}.so.40" "${prefix}/lib/${library}.so.40"
    ln -s "${library}.so.40" "${prefix}/lib/${library}.so"
  done
  # What those load, but the C and C++ runtimes every machine has.
  find "${prefix}/bin" "${prefix}/lib" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
    xargs -0 ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so' |
    while read -r library; do
      [[ -e "${prefix}/lib/$(basename "${library}")" ]] || cp -L "${library}" "${prefix}/lib/"
    done
}

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
if [[ -e /usr/bin/orterun && -e "${multiarch}/openmpi/include/mpi.h" ]]; then
  pack_openmpi
else
  echo "note: no OpenMPI here (openmpi-bin libopenmpi-dev): the GPU check's mpi step will not run" >&2
fi
grep -qx '/.gpu-deps/' .gitignore || echo '/.gpu-deps/' >>.gitignore
du -sh "${deps}"
