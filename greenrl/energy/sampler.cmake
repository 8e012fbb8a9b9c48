# Sampler thread (power.csv), energy-source listing for `greenrl meters` (issue 3, parts 3 and 8).
# Included by CMakeLists.txt after greenrl_energy and energy_test are defined.
target_sources(greenrl_energy PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/sampler.cc
  ${CMAKE_CURRENT_LIST_DIR}/sources.cc
)
# sources.cc probes NVML with dlopen (no link-time dependency on the driver).
target_link_libraries(greenrl_energy PRIVATE ${CMAKE_DL_LIBS})

if(GREENRL_BUILD_TESTS)
  target_sources(energy_test PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/sampler_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sources_test.cc
  )
endif()
