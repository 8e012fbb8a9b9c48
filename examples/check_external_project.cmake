# ctest's checks of examples/external_project, a user's own project (examples/CMakeLists.txt):
#   MODE=subproject (external_project_configures): configures it against this checkout
#     (-DGREENRL_DIR, add_subdirectory) in a fresh folder and checks what it generated: the user's
#     program (my_rl) and greenrl's libraries are targets, greenrl's tests and benchmarks are not.
#     Configuring only (seconds); building it is greenrl's whole build again (5-7 minutes on
#     2 cores), not part of `make test`.
#   MODE=installed (installed_project_builds): installs this build (`cmake --install`) into a
#     fresh prefix, configures the project against it (find_package(greenrl)), builds my_rl
#     (one torch-free source, then the link: seconds; again with clang++-14, whose default
#     standard is C++14, where installed), and runs `my_rl envs` (Corridor-v0 listed),
#     the installed `greenrl envs` (the launcher finding greenrl_cli beside it), the installed
#     `greenrl bench` from a folder without configs/ (the presets installed beside it), and a
#     short Hopper-v4 training from the installed preset and MuJoCo models (and, with the
#     installed hopper.xml removed, the error naming that installed path).
#   cmake -DMODE=<mode> -DGREENRL_DIR=<checkout> -DBUILD_DIR=<its build> -DCHECK_DIR=<scratch>
#         -DCXX=<compiler> -P check_external_project.cmake
include("${GREENRL_DIR}/cmake/check_run.cmake")

function(expect_in text want what)
  string(FIND "${text}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: no '${want}' in:\n${text}")
  endif()
endfunction()

set(project "${GREENRL_DIR}/examples/external_project")
file(REMOVE_RECURSE "${CHECK_DIR}")
if(MODE STREQUAL "subproject")
  run("configuring examples/external_project with GREENRL_DIR" "${CMAKE_COMMAND}"
      -S "${project}" -B "${CHECK_DIR}" "-DGREENRL_DIR=${GREENRL_DIR}"
      "-DCMAKE_CXX_COMPILER=${CXX}")
  run("listing its targets" "${CMAKE_COMMAND}" --build "${CHECK_DIR}" --target help)
  foreach(want my_rl greenrl_cli_lib greenrl_train)
    expect_in("${out}" "... ${want}\n" "examples/external_project's targets")
  endforeach()
  foreach(unwanted cli_test greenrl_test_exec greenrl_bench_envs greenrl_example_custom_env)
    string(FIND "${out}" "... ${unwanted}\n" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "examples/external_project builds greenrl's own ${unwanted}")
    endif()
  endforeach()
elseif(MODE STREQUAL "installed")
  set(prefix "${CHECK_DIR}/prefix")
  run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
  foreach(file bin/greenrl bin/greenrl_cli include/greenrl/env/registry.h include/cli/cli_main.h
          share/greenrl/configs/ppo/cartpole.yaml share/greenrl/mujoco/hopper.xml
          lib/cmake/greenrl/greenrlConfig.cmake)
    if(NOT EXISTS "${prefix}/${file}")
      message(FATAL_ERROR "cmake --install wrote no ${file} under ${prefix}")
    endif()
  endforeach()
  # Test-only and internal headers stay out of the install (STYLE.md: non-public helpers live in
  # internal/).
  foreach(file include/greenrl/env/mujoco/mujoco_test_util.h
          include/greenrl/energy/internal/fake_powercap.h include/greenrl/nn/internal)
    if(EXISTS "${prefix}/${file}")
      message(FATAL_ERROR "cmake --install wrote ${file} under ${prefix}, which is not public")
    endif()
  endforeach()
  run("configuring examples/external_project with find_package(greenrl)" "${CMAKE_COMMAND}"
      -S "${project}" -B "${CHECK_DIR}/build" "-DCMAKE_PREFIX_PATH=${prefix}"
      "-DCMAKE_CXX_COMPILER=${CXX}" -DCMAKE_BUILD_TYPE=Release)
  run("building my_rl against the installed greenrl" "${CMAKE_COMMAND}" --build
      "${CHECK_DIR}/build" --target my_rl)
  run("my_rl envs" "${CHECK_DIR}/build/my_rl" envs)
  expect_in("${out}" "Corridor-v0" "my_rl envs")
  # The same with a compiler whose default is C++14 (clang++-14, which scripts/install-deps.sh
  # installs for the fuzz build): the installed targets pass on C++17, which greenrl's headers
  # need (the project sets no standard of its own).
  find_program(clang_cxx clang++-14)
  if(clang_cxx)
    run("configuring examples/external_project with clang++-14" "${CMAKE_COMMAND}"
        -S "${project}" -B "${CHECK_DIR}/clang" "-DCMAKE_PREFIX_PATH=${prefix}"
        "-DCMAKE_CXX_COMPILER=${clang_cxx}" -DCMAKE_BUILD_TYPE=Release)
    run("building my_rl with clang++-14" "${CMAKE_COMMAND}" --build "${CHECK_DIR}/clang"
        --target my_rl)
    run("my_rl envs (clang++-14)" "${CHECK_DIR}/clang/my_rl" envs)
    expect_in("${out}" "Corridor-v0" "my_rl envs (clang++-14)")
  endif()
  run("the installed greenrl envs" "${prefix}/bin/greenrl" envs)
  expect_in("${out}" "CartPole-v1" "the installed greenrl envs")
  # From a folder without configs/, an installed greenrl bench takes the presets installed
  # beside it (not the source tree's, nor CMAKE_INSTALL_PREFIX's).
  execute_process(COMMAND "${prefix}/bin/greenrl" bench ppo-cartpole --seeds 1 --steps 512
                  WORKING_DIRECTORY "${CHECK_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed greenrl bench failed (${rc}):\n${out}\n${err}")
  endif()
  expect_in("${out}" "preset ${prefix}/share/greenrl/configs/ppo/cartpole.yaml"
            "the installed greenrl bench")
  # The installed MuJoCo models: a short Hopper-v4 run from the installed preset, then the same
  # with the installed hopper.xml gone, which must name the installed path (the models beside
  # the program win over the source tree's, which still holds hopper.xml).
  set(hopper_run "${prefix}/bin/greenrl" train --config
      "${prefix}/share/greenrl/configs/ppo/hopper.yaml" --set n_timesteps=512 --set n_epochs=1
      --quiet)
  run("the installed greenrl training Hopper-v4" ${hopper_run} --out "${CHECK_DIR}/hopper_run")
  file(REMOVE "${prefix}/share/greenrl/mujoco/hopper.xml")
  execute_process(COMMAND ${hopper_run} --out "${CHECK_DIR}/hopper_missing"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "the installed greenrl trained Hopper-v4 without its installed "
                        "hopper.xml, so it read the models from elsewhere:\n${out}\n${err}")
  endif()
  expect_in("${err}" "${prefix}/share/greenrl/mujoco/hopper.xml"
            "the installed greenrl without its hopper.xml")
else()
  message(FATAL_ERROR "MODE: got '${MODE}'; subproject or installed")
endif()
message(STATUS "examples/external_project (${MODE}): passed")
file(REMOVE_RECURSE "${CHECK_DIR}")
