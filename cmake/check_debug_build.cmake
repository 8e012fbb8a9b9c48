# ctest's unoptimised_build_steps_cartpole (CMakeLists.txt): configures this checkout again in
# Debug (-O0, as a project that adds greenrl without a build type gets it) in a scratch folder,
# builds cartpole_batched_test there (torch-free: core, env, classic; about 20 s, less from
# ccache) and runs it. CartPoleBatched's AVX2 clone passes 32-byte vectors to helpers that only
# inlining keeps off the ABI; an unoptimised build that called one out of line crashed
# (cartpole_batched.cc), which an optimised suite cannot see.
#   cmake -DSOURCE_DIR=<checkout> -DCHECK_DIR=<scratch> -DCXX=<compiler> -P check_debug_build.cmake
include("${CMAKE_CURRENT_LIST_DIR}/check_run.cmake")

file(REMOVE_RECURSE "${CHECK_DIR}")
run("configuring a Debug build" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${CHECK_DIR}"
    -DCMAKE_BUILD_TYPE=Debug -DGREENRL_BUILD_BENCHMARKS=OFF "-DCMAKE_CXX_COMPILER=${CXX}")
run("building cartpole_batched_test at -O0" "${CMAKE_COMMAND}" --build "${CHECK_DIR}"
    --target cartpole_batched_test)
run("cartpole_batched_test at -O0" "${CHECK_DIR}/bin/greenrl_test_exec"
    "${CHECK_DIR}/tests/cartpole_batched_test")
message(STATUS "cartpole_batched_test passed in a Debug (-O0) build")
file(REMOVE_RECURSE "${CHECK_DIR}")
