// run_compare_testing.h (tests only): compares two finished run directories, for the tests that
// check a resumed or data-parallel run against an uninterrupted one (resume_test,
// data_parallel_test).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "greenrl/core/config.h"
#include "greenrl/env/registry.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train::testing {

// The parameters in run `dir`'s checkpoints/<checkpoint> (final.pt unless named), float32
// [num_params], for `config`'s model.
inline std::vector<float> FinalParameters(const Config& config, const std::string& dir,
                                          const std::string& checkpoint = "final.pt") {
  auto algorithm = MakeAlgorithm(config, env::FindEnvSpec(config.GetString("env_id")));
  algorithm->LoadCheckpoint(dir + "/checkpoints/" + checkpoint);
  return algorithm->GetParameters();
}

// energy.json's total_energy_j of run `dir`, J.
inline double TotalJ(const std::string& dir) {
  std::ifstream in(dir + "/energy.json");
  return nlohmann::json::parse(in)["total_energy_j"].get<double>();
}

// Both runs' final parameters (or those of checkpoints/<checkpoint>) are equal bit for bit.
inline void ExpectBitIdenticalParameters(const Config& config, const std::string& dir_a,
                                         const std::string& dir_b,
                                         const std::string& checkpoint = "final.pt") {
  const std::vector<float> pa = FinalParameters(config, dir_a, checkpoint);
  const std::vector<float> pb = FinalParameters(config, dir_b, checkpoint);
  ASSERT_EQ(pa.size(), pb.size());
  size_t differ = 0;
  for (size_t k = 0; k < pa.size(); ++k) differ += std::memcmp(&pa[k], &pb[k], sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u) << "of " << pa.size() << " parameters";
}

// Both runs' metrics.csv have the same header, as many rows (`rows` of them unless 0), and equal
// training columns
// (global_step, losses/*, charts/episodic_*, rollout/ep_rew_mean, eval/mean_reward; NaN where the
// other is NaN). Time, speed and energy columns differ between runs and are not compared.
inline void ExpectSameLearningColumns(const std::string& dir_a, const std::string& dir_b,
                                      size_t rows = 0) {
  const auto [ha, ra] = report::ReadMetricsCsv(dir_a + "/metrics.csv");
  const auto [hb, rb] = report::ReadMetricsCsv(dir_b + "/metrics.csv");
  ASSERT_EQ(ha, hb);
  ASSERT_EQ(ra.size(), rb.size());
  if (rows != 0) {
    ASSERT_EQ(ra.size(), rows);
  }
  for (size_t c = 0; c < ha.size(); ++c) {
    const std::string& key = ha[c];
    if (key.rfind("losses/", 0) != 0 && key != "global_step" && key.rfind("charts/epis", 0) != 0 &&
        key != "rollout/ep_rew_mean" && key != "rollout/ep_len_mean" && key != "eval/mean_reward") {
      continue;
    }
    for (size_t i = 0; i < ra.size(); ++i) {
      if (std::isnan(ra[i][c])) {
        EXPECT_TRUE(std::isnan(rb[i][c])) << key << " row " << i;
      } else {
        EXPECT_EQ(ra[i][c], rb[i][c]) << key << " row " << i;
      }
    }
  }
}

}  // namespace greenrl::train::testing
