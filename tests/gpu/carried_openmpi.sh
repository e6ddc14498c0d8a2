# Sourced (by gpu_check.sh, or by hand before mpirun on a GPU machine): when
# the checkout carries the OpenMPI that pack_gpu_deps.sh packed, points OpenMPI
# at that copy (OPAL_* move its compiled-in paths), puts its mpirun first on
# PATH and its libraries first on LD_LIBRARY_PATH, and sets mpi_cmake_args so
# CMake takes the library without the compiler wrapper. Also when the machine
# has an MPI of its own: binaries built elsewhere (run_prebuilt.sh) were linked
# against the carried libmpi.so.40 and libmpi_cxx.so.40, which another MPI
# (MPICH, Open MPI 5) does not provide, and then pipelab-cli would not even
# load. Run from the repository root.
mpi_cmake_args=()
if [[ -d .gpu-deps/openmpi ]]; then
  ompi="$(pwd)/.gpu-deps/openmpi"
  export OPAL_PREFIX="${ompi}" OPAL_EXEC_PREFIX="${ompi}" OPAL_BINDIR="${ompi}/bin" OPAL_LIBDIR="${ompi}/lib"
  export OPAL_PKGLIBDIR="${ompi}/lib/openmpi3" OPAL_INCLUDEDIR="${ompi}/include" OPAL_SYSCONFDIR="${ompi}/etc"
  export OPAL_DATAROOTDIR="${ompi}/share" OPAL_DATADIR="${ompi}/share" OPAL_PKGDATADIR="${ompi}/share/openmpi"
  export PATH="${ompi}/bin:${PATH}" LD_LIBRARY_PATH="${ompi}/lib${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
  mpi_cmake_args=(-DMPI_CXX_HEADER_DIR="${ompi}/include" -DMPI_CXX_LIB_NAMES="mpi_cxx;mpi"
    -DMPI_mpi_LIBRARY="${ompi}/lib/libmpi.so" -DMPI_mpi_cxx_LIBRARY="${ompi}/lib/libmpi_cxx.so")
fi
