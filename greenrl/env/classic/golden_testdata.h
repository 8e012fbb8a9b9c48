// golden_testdata.h (tests only): the reference trajectories Gymnasium 1.0.0 recorded for the
// classic-control envs, $GREENRL_TESTDATA/classic_control/<env id>.json (schema in that folder's
// README; GREENRL_TESTDATA defaults to ../shared/testdata beside the checkout).
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "greenrl/core/test_paths.h"

namespace greenrl::env::testing {

// The test data folder: $GREENRL_TESTDATA when set and non-empty, else the build's default.
inline std::string TestDataDir() {
  const char* dir = std::getenv("GREENRL_TESTDATA");
  return dir != nullptr && dir[0] != '\0' ? dir : test_paths::DefaultTestdataDir();
}

// The parsed <env_id>.json, read once per id and kept for the test binary's lifetime.
// Errors: std::runtime_error naming the path when it cannot be opened; nlohmann::json's
// parse_error for a malformed file.
inline const nlohmann::json& GoldenTrajectories(const std::string& env_id) {
  static std::map<std::string, nlohmann::json> cache;
  auto it = cache.find(env_id);
  if (it == cache.end()) {
    const std::string path = TestDataDir() + "/classic_control/" + env_id + ".json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    it = cache.emplace(env_id, nlohmann::json::parse(in)).first;
  }
  return it->second;
}

}  // namespace greenrl::env::testing
