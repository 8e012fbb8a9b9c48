#include "greenrl/core/did_you_mean.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "greenrl/core/config.h"
#include "greenrl/core/errors.h"

namespace greenrl {
namespace {

TEST(DidYouMeanTest, EditDistanceByHand) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);  // k->s, e->i, +g
  EXPECT_EQ(EditDistance("CartPol-v1", "CartPole-v1"), 1u);
  EXPECT_EQ(EditDistance("ppo", "PPO"), 3u) << "case sensitive";
  EXPECT_EQ(EditDistance("bset", "best"), 1u) << "adjacent letters swapped";
  EXPECT_EQ(EditDistance("ab", "ba"), 1u);
  EXPECT_EQ(EditDistance("ca", "abc"), 3u) << "optimal string alignment: no edit of a swap";
  EXPECT_EQ(EditDistance("n_setps", "n_steps"), 1u);
}

TEST(DidYouMeanTest, ClosestWithinAQuarterOfTheLength) {
  const std::vector<std::string> envs = {"CartPole-v1", "Acrobot-v1", "MountainCar-v0",
                                         "MountainCarContinuous-v0", "Pendulum-v1"};
  EXPECT_EQ(DidYouMean("CartPol-v1", envs), "did you mean 'CartPole-v1'? ");
  EXPECT_EQ(DidYouMean("cartpole-v1", envs), "did you mean 'CartPole-v1'? ") << "any case";
  EXPECT_EQ(DidYouMean("CartPole-v0", envs), "did you mean 'CartPole-v1'? ");
  EXPECT_EQ(DidYouMean("MountainCar-v1", envs), "did you mean 'MountainCar-v0'? ");
  EXPECT_EQ(DidYouMean("Hopper-v4", envs), "") << "nothing close";
  // 4 letters: 1 edit at most.
  EXPECT_EQ(DidYouMean("ppoo", {"ppo", "dqn", "sac"}), "did you mean 'ppo'? ");
  EXPECT_EQ(DidYouMean("fp61", {"fp32", "bf16", "fp16"}), "did you mean 'fp16'? ")
      << "one swap from fp16";
  EXPECT_EQ(DidYouMean("fx62", {"fp32", "bf16", "fp16"}), "") << "2 edits from fp32, 3 from fp16";
  EXPECT_EQ(DidYouMean("fp31", {"fp32", "bf16", "fp16"}), "did you mean 'fp32'? ");
  EXPECT_EQ(DidYouMean("tpu", {"auto", "cpu", "cuda"}), "") << "3 letters: case only";
  EXPECT_EQ(DidYouMean("CPU", {"auto", "cpu", "cuda"}), "did you mean 'cpu'? ");
  // Ties: up to three, in the candidates' order.
  EXPECT_EQ(DidYouMean("abcd", {"abcx", "xbcd", "zzzz", "abcy", "abcz"}),
            "did you mean one of 'abcx', 'xbcd', 'abcy'? ");
}

// An id without its version finds the versioned one; a name merely ending in "-v" is no version.
TEST(DidYouMeanTest, AnIdWithoutItsVersionFindsIt) {
  const std::vector<std::string> envs = {"CartPole-v1", "MountainCar-v0",
                                         "MountainCarContinuous-v0", "Hopper-v4"};
  EXPECT_EQ(DidYouMean("CartPole", envs), "did you mean 'CartPole-v1'? ");
  EXPECT_EQ(DidYouMean("hopper", envs), "did you mean 'Hopper-v4'? ");
  EXPECT_EQ(DidYouMean("cartpol", envs), "did you mean 'CartPole-v1'? ") << "1 edit from the name";
  EXPECT_EQ(DidYouMean("MountainCar", envs), "did you mean 'MountainCar-v0'? ");
  EXPECT_EQ(DidYouMean("Mountain", envs), "") << "3 edits from MountainCar, 2 allowed";
  EXPECT_EQ(DidYouMean("sample", {"sample-v", "other"}), "") << "'-v' without digits";
}

TEST(DidYouMeanTest, OneOfWithHintListsEveryCandidate) {
  EXPECT_EQ(OneOfWithHint("sacc", {"ppo", "dqn", "sac"}),
            "did you mean 'sac'? one of: ppo, dqn, sac");
  EXPECT_EQ(OneOfWithHint("a2c", {"ppo", "dqn", "sac"}), "one of: ppo, dqn, sac");
}

// A string key with choices names the close one before the list.
TEST(DidYouMeanTest, ConfigChoicesSuggest) {
  ConfigSchema schema;
  AddKey(&schema, "precision", ValueType::kString, "fp32", "precision", {}, {},
         {"fp32", "bf16", "fp16"});
  try {
    Config::Load(schema, "", {"precision=Bf16"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "precision");
    EXPECT_STREQ(e.what(), "precision: got 'Bf16'; did you mean 'bf16'? one of: fp32, bf16, fp16");
  }
}

}  // namespace
}  // namespace greenrl
