# Budget controller (issue 3 part 5), appended to the targets of CMakeLists.txt in this folder.
target_sources(greenrl_energy PRIVATE ${CMAKE_CURRENT_LIST_DIR}/budget.cc)
if(GREENRL_BUILD_TESTS)
  target_sources(energy_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/budget_test.cc)
endif()
