# nvml.cmake: the NVML meter, power-limit control and their fake libnvidia-ml (issue 3, parts 1
# and 6). Included by CMakeLists.txt after greenrl_energy and energy_test are defined. NVML is
# loaded with dlopen at run time, so nothing links against libnvidia-ml.
target_sources(greenrl_energy PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/integrated_meter.cc
  ${CMAKE_CURRENT_LIST_DIR}/nvml_meter.cc
  ${CMAKE_CURRENT_LIST_DIR}/power_limit.cc
)
target_link_libraries(greenrl_energy PRIVATE ${CMAKE_DL_LIBS})

if(GREENRL_BUILD_TESTS)
  # The fake libnvidia-ml: a shared library the tests dlopen by path (testing/fake_nvml.cc).
  add_library(greenrl_fake_nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/testing/fake_nvml.cc)
  target_include_directories(greenrl_fake_nvml PRIVATE ${PROJECT_SOURCE_DIR})
  set_target_properties(greenrl_fake_nvml PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)

  target_sources(energy_test PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/integrated_meter_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/nvml_meter_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/power_limit_test.cc
  )
  add_dependencies(energy_test greenrl_fake_nvml)  # test_paths::FakeNvmlLibrary()
endif()
