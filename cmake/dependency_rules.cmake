# The dependency rules of core/ and gpu/ (docs/architecture.md), checked by the
# build: a forbidden link fails the configure step, and the test
# structure_includes (tests/structure/check_includes.cmake) fails on an include
# that points against them.
#
# core/: a folder may include only the folders its library links, directly or
# through others (core/CMakeLists.txt), and these links are forbidden:
set(PIPELAB_FORBIDDEN_LINKS
  "runtime:sim"   # the runtime runs schedules; what it needs from a prediction it is given
  "io:sim"        # io reads and writes files and predicts nothing
  "mpi:cli")      # runs over processes sit below the commands that start them
# gpu/: sub-folders in layers, lowest first; no include points up this order.
# kernels sit below memory because a device tensor's fill and bf16 conversions
# are kernels.
set(PIPELAB_GPU_LAYERS device kernels memory layers comm executor)

# The pipelab_* libraries `target` links, directly or through others.
function(pipelab_linked_libraries target out)
  set(seen "")
  set(pending ${target})
  while(pending)
    list(POP_FRONT pending current)
    get_target_property(type ${current} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${current} INTERFACE_LINK_LIBRARIES)
    else()
      get_target_property(links ${current} LINK_LIBRARIES)
    endif()
    foreach(link IN LISTS links)
      if(link MATCHES "^pipelab_" AND TARGET ${link} AND NOT link IN_LIST seen)
        list(APPEND seen ${link})
        list(APPEND pending ${link})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Each core folder's allowed folders, written for the include check.
file(GLOB pipelab_core_folders LIST_DIRECTORIES true RELATIVE ${PROJECT_SOURCE_DIR}/core
     ${PROJECT_SOURCE_DIR}/core/*)
set(pipelab_rules "set(PIPELAB_GPU_LAYERS ${PIPELAB_GPU_LAYERS})\n")
foreach(folder IN LISTS pipelab_core_folders)
  if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/core/${folder})
    continue()
  endif()
  if(NOT TARGET pipelab_${folder})
    # Built only with an optional dependency (mpi/): its links are unknown here,
    # so its includes are checked against every folder but its forbidden ones.
    set(allowed ${pipelab_core_folders})
  else()
    pipelab_linked_libraries(pipelab_${folder} linked)
    set(allowed ${folder})
    foreach(library IN LISTS linked)
      string(REGEX REPLACE "^pipelab_" "" linked_folder ${library})
      list(APPEND allowed ${linked_folder})
    endforeach()
  endif()
  foreach(rule IN LISTS PIPELAB_FORBIDDEN_LINKS)
    string(REPLACE ":" ";" pair ${rule})
    list(GET pair 0 from)
    list(GET pair 1 to)
    if(from STREQUAL folder AND to IN_LIST allowed)
      if(TARGET pipelab_${folder})
        message(FATAL_ERROR "pipelab_${from} links pipelab_${to}, directly or through another "
                            "library: core/${from} must not depend on core/${to} "
                            "(cmake/dependency_rules.cmake, docs/architecture.md)")
      endif()
      list(REMOVE_ITEM allowed ${to})
    endif()
  endforeach()
  string(APPEND pipelab_rules "set(PIPELAB_ALLOWED_${folder} ${allowed})\n")
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/include_rules.cmake "${pipelab_rules}")
