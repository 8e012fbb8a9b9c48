# ctest's external_project_configures (examples/CMakeLists.txt): configures
# examples/external_project against this checkout in a fresh build folder, as a user's project
# that add_subdirectory's greenrl, and checks what it generated: the user's program (my_rl) and
# greenrl's libraries are targets, greenrl's tests are not. Configuring only (seconds); the build
# itself (about 7 minutes on 2 cores) is not part of `make test`.
#   cmake -DGREENRL_DIR=<checkout> -DCHECK_DIR=<scratch folder> -DCXX=<compiler>
#         -P check_external_project.cmake
file(REMOVE_RECURSE "${CHECK_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${GREENRL_DIR}/examples/external_project" -B "${CHECK_DIR}"
          "-DGREENRL_DIR=${GREENRL_DIR}" "-DCMAKE_CXX_COMPILER=${CXX}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring examples/external_project failed (${rc}):\n${out}\n${err}")
endif()
if(err MATCHES "CMake (Warning|Error)")
  message(FATAL_ERROR "configuring examples/external_project warned:\n${err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${CHECK_DIR}" --target help
                RESULT_VARIABLE rc OUTPUT_VARIABLE targets)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "listing the targets of examples/external_project failed (${rc})")
endif()
foreach(want my_rl greenrl_cli_lib greenrl_train)
  if(NOT targets MATCHES "\\.\\.\\. ${want}\n")
    message(FATAL_ERROR "examples/external_project has no target ${want}:\n${targets}")
  endif()
endforeach()
foreach(unwanted cli_test greenrl_test_exec greenrl_bench_envs greenrl_example_custom_env)
  if(targets MATCHES "\\.\\.\\. ${unwanted}\n")
    message(FATAL_ERROR "examples/external_project builds greenrl's own ${unwanted}")
  endif()
endforeach()
message(STATUS "examples/external_project configures: my_rl and greenrl's libraries, no tests")
file(REMOVE_RECURSE "${CHECK_DIR}")
