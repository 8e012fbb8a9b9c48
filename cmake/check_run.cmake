# run(what command args...): the helper of ctest's script checks (check_debug_build.cmake,
# examples/check_external_project.cmake). Runs the command; stops the check (FATAL_ERROR naming
# `what`, with the output) when it exits non-zero or CMake warns or errs in its stderr; else sets
# `out` in the caller to its stdout.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  if(err MATCHES "CMake (Warning|Error)")
    message(FATAL_ERROR "${what} warned:\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
