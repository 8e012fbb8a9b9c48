// GradScaler's rules pinned on a scripted sequence of finite and non-finite gradients.
#include "greenrl/precision/grad_scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/core/errors.h"

namespace greenrl::precision {
namespace {

// init 1024, growth 2 every 3 finite steps, backoff 0.5:
//   step: 1    2    3     4    5    6    7     8    9    10
//   grad: ok   ok   ok    inf  ok   nan  ok    ok   ok   ok
//   scale after Update:
//         1024 1024 2048  1024 1024 512  512   512  1024 1024
//   optimiser steps taken: 8 (steps 4 and 6 skipped)
TEST(GradScalerTest, ScriptedSequenceGivesExactScalesAndStepCount) {
  GradScaler scaler({true, 1024.0, 2.0, 0.5, 3});
  const std::vector<float> script = {1, 1, 1, INFINITY, 1, NAN, 1, 1, 1, 1};
  const std::vector<double> expected = {1024, 1024, 2048, 1024, 1024, 512, 512, 512, 1024, 1024};
  int steps_taken = 0;
  for (size_t i = 0; i < script.size(); ++i) {
    std::vector<float> grads = {2.0f * static_cast<float>(scaler.scale()), script[i]};
    const bool found_inf = scaler.UnscaleAndCheck(grads.data(), 2);
    EXPECT_EQ(found_inf, !std::isfinite(script[i])) << i;
    if (!found_inf) {
      EXPECT_FLOAT_EQ(grads[0], 2.0f);  // unscaled exactly
      ++steps_taken;
    }
    scaler.Update(found_inf);
    EXPECT_EQ(scaler.scale(), expected[i]) << "after step " << i + 1;
  }
  EXPECT_EQ(steps_taken, 8);
  EXPECT_EQ(scaler.skipped_steps(), 2);
  EXPECT_EQ(scaler.growth_tracker(), 1);
}

// Growth stops below float32's largest value, as in ATen's kernels (AmpGradScalerKernels.cpp).
// 2^126 x 2 = 2^127 is finite, 2^127 x 2 overflows float32 and the scale stays 2^127; a
// back-off halves it as usual. A growth factor of 1.5 rounds each product to float32.
TEST(GradScalerTest, GrowthStopsAtTheLargestFiniteFloat) {
  GradScaler scaler({true, std::ldexp(1.0, 126), 2.0, 0.5, 1});
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), std::ldexp(1.0, 127));
  for (int i = 0; i < 3; ++i) {
    scaler.Update(false);
    EXPECT_EQ(scaler.scale(), std::ldexp(1.0, 127)) << i;
    EXPECT_EQ(scaler.growth_tracker(), 0);
  }
  scaler.Update(true);
  EXPECT_EQ(scaler.scale(), std::ldexp(1.0, 126));
  GradScaler odd({true, 0.1, 1.5, 0.5, 1});
  EXPECT_EQ(odd.scale(), static_cast<double>(0.1f));
  odd.Update(false);
  EXPECT_EQ(odd.scale(), static_cast<double>(static_cast<float>(static_cast<double>(0.1f) * 1.5)));
}

TEST(GradScalerTest, DisabledIsIdentityButStillDetects) {
  GradScaler scaler({false, 65536.0, 2.0, 0.5, 2000});
  EXPECT_EQ(scaler.scale(), 1.0);
  std::vector<float> grads = {3.0f, INFINITY};
  EXPECT_TRUE(scaler.UnscaleAndCheck(grads.data(), 2));
  EXPECT_EQ(grads[0], 3.0f);
  scaler.Update(true);
  EXPECT_EQ(scaler.scale(), 1.0);
}

TEST(GradScalerTest, BadOptionsNameTheirKey) {
  const std::pair<GradScalerOptions, std::string> bad[] = {
      {{true, 0.0, 2.0, 0.5, 1}, "grad_scaler.init_scale: got '0'; a finite number > 0"},
      {{true, 1.0, 1.0, 0.5, 1}, "grad_scaler.growth_factor: got '1'; a number > 1"},
      // The schema's range (0, 1] lets 1 through: refused here, as the value was written.
      {{true, 1.0, 2.0, 1.0, 1}, "grad_scaler.backoff_factor: got '1'; a number in (0, 1)"},
      {{true, 1.0, 2.0, 0.5, 0}, "grad_scaler.growth_interval: got '0'; an integer >= 1"}};
  for (const auto& [options, message] : bad) {
    try {
      GradScaler scaler(options);
      ADD_FAILURE() << message;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
}

}  // namespace
}  // namespace greenrl::precision
