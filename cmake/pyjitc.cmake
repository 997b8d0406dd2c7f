# pyjitc_add_vmfb: build a .vmfb from a Python function at build time, through the `pyjitc` command.
#
#   include(path/to/pyjitc/cmake/pyjitc.cmake)      # or add_subdirectory(path/to/pyjitc)
#   pyjitc_add_vmfb(NAME softmax_kernel
#                   SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/kernels.py:softmax
#                   ARGS f32[1000,5]
#                   TARGET llvm-cpu [CPU host])
#
# Creates the build target NAME and the file ${CMAKE_CURRENT_BINARY_DIR}/NAME.vmfb (its path is
# in the NAME_VMFB variable and the target's VMFB property). The .vmfb is rebuilt when the Python
# source changes. PYJITC_EXECUTABLE (cache variable) names the pyjitc command to run.

find_program(PYJITC_EXECUTABLE pyjitc DOC "the pyjitc command")

function(pyjitc_add_vmfb)
  cmake_parse_arguments(P "" "NAME;SOURCE;TARGET;CPU" "ARGS" ${ARGN})
  if(NOT P_NAME OR NOT P_SOURCE)
    message(FATAL_ERROR "pyjitc_add_vmfb: NAME and SOURCE (module.py:function) are required")
  endif()
  if(NOT PYJITC_EXECUTABLE)
    message(FATAL_ERROR "pyjitc_add_vmfb: the pyjitc command was not found; set PYJITC_EXECUTABLE")
  endif()
  if(NOT P_TARGET)
    set(P_TARGET llvm-cpu)
  endif()
  if(NOT P_CPU)
    set(P_CPU host)
  endif()
  string(REGEX REPLACE ":[^:]*$" "" source_file "${P_SOURCE}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${P_NAME}.vmfb")
  set(arg_flags "")
  foreach(a IN LISTS P_ARGS)
    list(APPEND arg_flags --arg "${a}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${PYJITC_EXECUTABLE}" compile "${P_SOURCE}" ${arg_flags}
            --target "${P_TARGET}" --cpu "${P_CPU}" -o "${out}"
    DEPENDS "${source_file}"
    COMMENT "pyjitc: compiling ${P_SOURCE} for ${P_TARGET}"
    VERBATIM)
  add_custom_target(${P_NAME} ALL DEPENDS "${out}")
  set_target_properties(${P_NAME} PROPERTIES VMFB "${out}")
  set(${P_NAME}_VMFB "${out}" PARENT_SCOPE)
endfunction()
