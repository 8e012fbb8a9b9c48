// GAE against a hand-computed case with a truncation and a termination inside the rollout.
#include "greenrl/algo/gae.h"

#include <gtest/gtest.h>

namespace greenrl::algo {
namespace {

// One env, T = 5, gamma = 0.9, lambda = 0.5:
//   t:          0     1     2      3     4
//   reward:     1     1     1      1     1
//   value:      2     3     4      5     6
//   terminated: 0     0     1      0     0
//   truncated:  0     1     0      0     0
//   final_value at t=1 (V(final_obs)): 10;  last_value: 7
// By hand:
//   t=4: next = 7 (last),           delta = 1 + 0.9*7 - 6  = 1.3;   A4 = 1.3
//   t=3: next = V(t=4) = 6,         delta = 1 + 5.4 - 5    = 1.4;   A3 = 1.4 + 0.45*1.3 = 1.985
//   t=2: terminated, next = 0,      delta = 1 - 4          = -3;    A2 = -3 (no carry-over)
//   t=1: truncated, next = 10,      delta = 1 + 9 - 3      = 7;     A1 = 7  (no carry-over)
//   t=0: next = V(t=1) = 3,         delta = 1 + 2.7 - 2    = 1.7;   A0 = 1.7 + 0.45*7 = 4.85
TEST(GaeTest, HandComputedTruncationAndTermination) {
  const float rewards[5] = {1, 1, 1, 1, 1};
  const float values[5] = {2, 3, 4, 5, 6};
  const uint8_t terminated[5] = {0, 0, 1, 0, 0};
  const uint8_t truncated[5] = {0, 1, 0, 0, 0};
  const float final_values[5] = {0, 10, 99, 0, 0};  // 99 at a terminated row must be ignored
  const float last_values[1] = {7};
  float adv[5], ret[5];
  ComputeGae(5, 1, 0.9, 0.5, rewards, values, terminated, truncated, final_values, last_values, adv,
             ret);
  const float expected[5] = {4.85f, 7.0f, -3.0f, 1.985f, 1.3f};
  for (int t = 0; t < 5; ++t) {
    EXPECT_NEAR(adv[t], expected[t], 1e-6) << "t=" << t;
    EXPECT_NEAR(ret[t], expected[t] + values[t], 1e-6) << "t=" << t;
  }
}

// Rows of different envs are independent: env 1 of a [2, 2] rollout with gamma = 1, lambda = 1
// gives Monte-Carlo returns bootstrapped from last_values.
TEST(GaeTest, EnvsAreIndependentAndLambdaOneIsMonteCarlo) {
  const float rewards[4] = {1, 2, 3, 4};  // [t][env]
  const float values[4] = {0, 0, 0, 0};
  const uint8_t none[4] = {0, 0, 0, 0};
  const uint8_t terminated[4] = {0, 0, 1, 0};  // env 0 terminates at t = 1
  const float zeros[4] = {0, 0, 0, 0};
  const float last_values[2] = {100, 10};
  float adv[4], ret[4];
  ComputeGae(2, 2, 1.0, 1.0, rewards, values, terminated, none, zeros, last_values, adv, ret);
  EXPECT_FLOAT_EQ(adv[0], 1 + 3);       // env 0, t=0: 1 + 3, stops at the termination
  EXPECT_FLOAT_EQ(adv[2], 3);           // env 0, t=1
  EXPECT_FLOAT_EQ(adv[1], 2 + 4 + 10);  // env 1, t=0: 2 + 4 + V_last
  EXPECT_FLOAT_EQ(adv[3], 4 + 10);      // env 1, t=1
}

}  // namespace
}  // namespace greenrl::algo
