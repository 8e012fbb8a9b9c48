// PPO: the fused update against the LibTorch autograd update, schedules at the first and last
// update of the CartPole preset, checkpoint round trip and refusal of foreign checkpoints.
#include "greenrl/algo/ppo.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/env/registry.h"

namespace greenrl::algo {
namespace {

PpoConfig SmallConfig(const std::string& update_path) {
  PpoConfig c;
  c.n_envs = 4;
  c.n_steps = 64;
  c.batch_size = 64;
  c.n_epochs = 3;
  c.gamma = 0.98;
  c.gae_lambda = 0.8;
  c.learning_rate = Schedule::Linear(1e-3);
  c.clip_range = Schedule::Linear(0.2);
  c.ent_coef = 0.01;  // exercise the entropy gradient too
  c.update_path = update_path;
  c.seed = 3;
  return c;
}

// Two iterations (rollout + update of 3 epochs x 4 minibatches) from the same seed: the fused
// path and the autograd path must agree on every parameter and on the logged losses, and the
// update must move the parameters. Returns the initial and final fused parameters.
std::pair<std::vector<float>, std::vector<float>> ExpectFusedMatchesAutograd(
    const std::string& env_id, PpoConfig config) {
  auto env_a = env::MakeVecEnv(env_id, 4, 11, 1);
  auto env_b = env::MakeVecEnv(env_id, 4, 11, 1);
  env_a->Reset();
  env_b->Reset();
  config.update_path = "fused";
  auto fused = MakePpo(config, env_a->spec());
  config.update_path = "autograd";
  auto autograd = MakePpo(config, env_b->spec());
  const std::vector<float> initial = fused->GetParameters();
  EXPECT_EQ(initial, autograd->GetParameters());
  std::vector<EpisodeRecord> ep_a, ep_b;
  for (int iteration = 0; iteration < 2; ++iteration) {
    fused->CollectRollout(*env_a, &ep_a);
    autograd->CollectRollout(*env_b, &ep_b);
    const double progress = ProgressRemaining(256 * (iteration + 1), 1024);
    const Metrics ma = fused->Update(progress);
    const Metrics mb = autograd->Update(progress);
    EXPECT_EQ(ma.size(), mb.size());
    for (size_t k = 0; k < std::min(ma.size(), mb.size()); ++k) {
      EXPECT_EQ(ma[k].first, mb[k].first);
      EXPECT_NEAR(ma[k].second, mb[k].second, 1e-4 * std::max(1.0, std::fabs(mb[k].second)))
          << ma[k].first;
    }
    const auto pa = fused->GetParameters();
    const auto pb = autograd->GetParameters();
    EXPECT_EQ(pa.size(), pb.size());
    double max_diff = 0, moved = 0;
    for (size_t i = 0; i < std::min(pa.size(), pb.size()); ++i) {
      max_diff = std::max(max_diff, double(std::fabs(pa[i] - pb[i])));
      moved = std::max(moved, double(std::fabs(pa[i] - initial[i])));
    }
    EXPECT_LT(max_diff, 2e-5) << env_id << " iteration " << iteration;
    EXPECT_GT(moved, 1e-3) << "the update must move the parameters";
  }
  EXPECT_EQ(ep_a.size(), ep_b.size());
  return {initial, fused->GetParameters()};
}

TEST(PpoTest, FusedUpdateMatchesAutograd) {
  ExpectFusedMatchesAutograd("CartPole-v1", SmallConfig("fused"));
}

// An env whose episodes only ever end by its TimeLimit (3 steps): obs [0], [1], [2], then the
// final observation [1]; reward 1, never terminated. V(final_obs) is so a value the rollout
// stored (the episode's second row), and neither the truncated row's own V([2]) nor the next
// row's V(reset obs [0]).
class Climb {
 public:
  using Action = int64_t;
  static constexpr int kObsDim = 1;
  using StepResult = env::StepResult<kObsDim>;
  static const env::EnvSpec& Spec() {
    static const env::EnvSpec spec = [] {
      env::EnvSpec s;
      s.id = "TestClimb-v0";
      s.observation_space = env::Box{{0.0f}, {2.0f}, {1}};
      s.action_space = env::Discrete{2};
      s.max_episode_steps = 3;
      return s;
    }();
    return spec;
  }
  std::array<float, 1> Reset(uint64_t) { return Reset(); }
  std::array<float, 1> Reset() {
    steps_ = 0;
    return {0.0f};
  }
  StepResult Step(Action) {
    ++steps_;
    StepResult r;
    r.obs = {static_cast<float>(steps_ == 3 ? 1 : steps_)};
    r.reward = 1.0;
    return r;
  }

 private:
  int steps_ = 0;
};

// The rollout's truncation wiring (SB3's collect_rollouts adds gamma * V(terminal_observation) to
// a truncated step's reward): a row the TimeLimit ended bootstraps from V(final_obs), not from
// the next row's V(reset obs), from the row's own value, nor from 0. With gae_lambda 0 each
// advantage is one TD error: rows 2 and 5 (truncated) give 1 + gamma V([1]) - V([2]), the others
// 1 + gamma V(next) - V(obs).
TEST(PpoTest, TruncatedRowsBootstrapFromTheFinalObservationsValue) {
  static const bool registered = [] {
    env::RegisterEnv(env::EnvRegistrationOf<Climb>());
    return true;
  }();
  ASSERT_TRUE(registered);
  for (const std::string path : {"fused", "autograd"}) {
    auto env = env::MakeVecEnv("TestClimb-v0", 2, 5, 1);
    env->Reset();
    PpoConfig c = SmallConfig(path);
    c.n_envs = 2;
    c.n_steps = 6;
    c.batch_size = 12;
    c.gamma = 0.9;
    c.gae_lambda = 0.0;
    auto ppo = MakePpo(c, env->spec());
    std::vector<EpisodeRecord> episodes;
    ppo->CollectRollout(*env, &episodes);
    EXPECT_EQ(episodes.size(), 4u);  // two 3-step episodes per env
    const PpoRolloutView v = PpoRolloutForTesting(ppo.get());
    const double gamma = 0.9;
    for (int e = 0; e < 2; ++e) {
      auto at = [&](const float* a, int t) { return static_cast<double>(a[t * 2 + e]); };
      const double v0 = at(v.values, 0), v1 = at(v.values, 1), v2 = at(v.values, 2);
      ASSERT_TRUE(v0 != v1 && v1 != v2 && v0 != v2) << "the test needs three values";
      const double expected[6] = {1 + gamma * v1 - v0, 1 + gamma * v2 - v1, 1 + gamma * v1 - v2,
                                  1 + gamma * v1 - v0, 1 + gamma * v2 - v1, 1 + gamma * v1 - v2};
      for (int t = 0; t < 6; ++t) {
        EXPECT_EQ(at(v.obs, t), static_cast<float>(t % 3)) << t;
        EXPECT_NEAR(at(v.advantages, t), expected[t], 1e-6) << path << " row " << t;
        EXPECT_NEAR(at(v.returns, t), expected[t] + at(v.values, t), 1e-6) << path << " row " << t;
      }
    }
  }
}

// A batch_size above the rollout (n_steps * n_envs = 256 here) is one minibatch of the whole
// rollout per epoch, as SB3's RolloutBuffer.get slices it: the same parameters as batch_size 256,
// on both paths, and buffers of the rollout's size (2^24 rows of minibatch and MLP workspace would
// take gigabytes: a dry run of the CartPole preset with batch_size 2^24 ran out of 24 GB).
TEST(PpoTest, BatchSizeAboveTheRolloutIsOneMinibatchOfIt) {
  // Resident memory, bytes (/proc/self/statm's second field, in pages).
  auto resident_bytes = [] {
    std::ifstream statm("/proc/self/statm");
    long long size = 0, resident = 0;
    statm >> size >> resident;
    return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  };
  for (const std::string path : {"fused", "autograd"}) {
    std::vector<std::vector<float>> params;
    for (int batch_size : {256, 1 << 24}) {
      auto env = env::MakeVecEnv("CartPole-v1", 4, 11, 1);
      env->Reset();
      PpoConfig config = SmallConfig(path);
      config.batch_size = batch_size;
      const double before = resident_bytes();
      auto ppo = MakePpo(config, env->spec());
      // Buffers of 2^24 minibatch rows would be gigabytes; the rollout's 256 are kilobytes.
      EXPECT_LT(resident_bytes() - before, 64e6) << "batch_size " << batch_size;
      std::vector<EpisodeRecord> episodes;
      ppo->CollectRollout(*env, &episodes);
      ppo->Update(1.0);
      params.push_back(ppo->GetParameters());
    }
    EXPECT_EQ(params[0], params[1]) << path;
  }
}

// The CartPole preset (n_envs 8, n_steps 32: 256 steps per rollout, 1e5 steps, lin_0.001 and
// lin_0.2): SB3 computes progress after each rollout, so the first update sees
// 1 - 256 / 1e5 = 0.99744 and the last (391st, at 100,096 steps) sees a negative value, clamped
// to 0.
TEST(PpoTest, LinearSchedulesAtFirstAndLastUpdateOfPreset) {
  EXPECT_DOUBLE_EQ(ProgressRemaining(256, 100000), 0.99744);
  EXPECT_DOUBLE_EQ(ProgressRemaining(391 * 256, 100000), 0.0);
  const Schedule lr = Schedule::Linear(0.001), clip = Schedule::Linear(0.2);
  EXPECT_NEAR(lr.Value(ProgressRemaining(256, 100000)), 0.00099744, 1e-15);
  EXPECT_NEAR(clip.Value(ProgressRemaining(256, 100000)), 0.199488, 1e-15);
  EXPECT_EQ(lr.Value(ProgressRemaining(100096, 100000)), 0.0);
  EXPECT_EQ(clip.Value(ProgressRemaining(100096, 100000)), 0.0);

  // And the update logs exactly those values.
  PpoConfig c = SmallConfig("fused");
  c.n_envs = 8;
  c.n_steps = 32;
  c.batch_size = 256;
  c.n_epochs = 1;
  auto env = env::MakeVecEnv("CartPole-v1", 8, 0, 1);
  env->Reset();
  auto ppo = MakePpo(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  ppo->CollectRollout(*env, &episodes);
  Metrics first = ppo->Update(ProgressRemaining(256, 100000));
  EXPECT_NEAR(first[0].second, 0.00099744, 1e-15);
  EXPECT_EQ(first[0].first, "charts/learning_rate");
  EXPECT_NEAR(first[1].second, 0.199488, 1e-15);
  ppo->CollectRollout(*env, &episodes);
  const auto before = ppo->GetParameters();
  Metrics last = ppo->Update(ProgressRemaining(100096, 100000));
  EXPECT_EQ(last[0].second, 0.0);
  EXPECT_EQ(ppo->GetParameters(), before);  // lr 0: Adam moves nothing
}

TEST(PpoTest, CheckpointRoundTripAndRefusals) {
  auto env = env::MakeVecEnv("CartPole-v1", 4, 5, 1);
  env->Reset();
  PpoConfig c = SmallConfig("fused");
  auto ppo = MakePpo(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  ppo->CollectRollout(*env, &episodes);
  ppo->Update(0.9);
  const std::string path = ::testing::TempDir() + "/ppo_ckpt.pt";
  ppo->SaveCheckpoint(path);

  PpoConfig other_seed = c;
  other_seed.seed = 99;
  auto restored = MakePpo(other_seed, env->spec());
  EXPECT_NE(restored->GetParameters(), ppo->GetParameters());
  restored->LoadCheckpoint(path);
  EXPECT_EQ(restored->GetParameters(), ppo->GetParameters());

  PpoConfig wider = c;
  wider.pi_arch = {32};
  auto mismatch = MakePpo(wider, env->spec());
  try {
    mismatch->LoadCheckpoint(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("net_arch.pi"), std::string::npos) << e.what();
  }
  const std::string garbage = ::testing::TempDir() + "/garbage.pt";
  std::ofstream(garbage) << "not a checkpoint";
  EXPECT_THROW(restored->LoadCheckpoint(garbage), ConfigError);
  EXPECT_THROW(restored->LoadCheckpoint(::testing::TempDir() + "/missing.pt"), ConfigError);
  // A flipped bit in a stored weight (found by its bytes: LibTorch stores float32 raw) fails the
  // entry's CRC-32, which LibTorch's own reader does not check: refused, not loaded as another
  // weight.
  std::string bytes = greenrl::ReadFile(path);
  const std::vector<float> params = ppo->GetParameters();
  const std::string pattern(reinterpret_cast<const char*>(&params[100]), 4 * sizeof(float));
  const size_t at = bytes.find(pattern);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = static_cast<char>(bytes[at + 3] ^ 0x20);  // an exponent bit of params[100]
  const std::string flipped = ::testing::TempDir() + "/ppo_ckpt_flipped.pt";
  greenrl::WriteFileAtomic(flipped, bytes);
  try {
    restored->LoadCheckpoint(flipped);
    ADD_FAILURE() << "a damaged checkpoint loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(the file is damaged: entry "), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("CRC error"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  std::remove(garbage.c_str());
  std::remove(flipped.c_str());
}

// SB3's clip_range_vf: the value loss reads v_old + clamp(v - v_old, -c, c). On Pendulum (returns
// in the hundreds, so a clip of 0.05 binds on most rows after the first minibatch) the fused
// gradient, which passes nothing through a bound that binds, matches LibTorch's autograd of the
// same loss; the clip changes the update; and a clip that never binds (1e6) leaves the fused
// update bitwise as without it.
TEST(PpoTest, ClipRangeVfFusedMatchesAutogradAndBinds) {
  PpoConfig config = SmallConfig("fused");
  config.clip_range_vf = Schedule::Constant(0.05);
  const auto clipped = ExpectFusedMatchesAutograd("Pendulum-v1", config).second;
  auto fused_run = [](PpoConfig c) {
    auto env = env::MakeVecEnv("Pendulum-v1", 4, 11, 1);
    env->Reset();
    c.update_path = "fused";
    auto ppo = MakePpo(c, env->spec());
    std::vector<EpisodeRecord> episodes;
    for (int iteration = 0; iteration < 2; ++iteration) {
      ppo->CollectRollout(*env, &episodes);
      ppo->Update(ProgressRemaining(256 * (iteration + 1), 1024));
    }
    return ppo->GetParameters();
  };
  const std::vector<float> off = fused_run(SmallConfig("fused"));
  EXPECT_EQ(fused_run(config), clipped);
  EXPECT_NE(clipped, off) << "a clip of 0.05 binds";
  config.clip_range_vf = Schedule::Constant(1e6);
  EXPECT_EQ(fused_run(config), off) << "a clip that never binds changes nothing";
}

// SB3 logs train/clip_range_vf when value clipping is on; greenrl logs charts/clip_range_vf then
// (the schedule's value of this update, as charts/clip_range) and leaves it out when it is off.
TEST(PpoTest, LogsClipRangeVfOnlyWhenOn) {
  for (const double clip_range_vf : {0.0, 0.05}) {
    PpoConfig config = SmallConfig("fused");
    config.clip_range_vf = Schedule::Constant(clip_range_vf);
    auto env = env::MakeVecEnv("Pendulum-v1", 4, 11, 1);
    env->Reset();
    auto ppo = MakePpo(config, env->spec());
    std::vector<EpisodeRecord> episodes;
    ppo->CollectRollout(*env, &episodes);
    const Metrics& metrics = ppo->Update(1.0);
    const auto it = std::find_if(metrics.begin(), metrics.end(),
                                 [](const auto& m) { return m.first == "charts/clip_range_vf"; });
    if (clip_range_vf == 0.0) {
      EXPECT_EQ(it, metrics.end()) << "off: not logged";
    } else {
      ASSERT_NE(it, metrics.end());
      EXPECT_EQ(it->second, 0.05);
      const Metrics& again = ppo->Update(0.5);
      EXPECT_EQ(again[metrics.size() - 2].first, "charts/clip_range_vf") << "the same keys again";
      EXPECT_EQ(again.back().first, "train/std");
    }
  }
}

// A bounded Box is accepted; an unbounded one is refused (samples are clipped to the bounds).
TEST(PpoTest, RefusesUnboundedBoxActions) {
  PpoConfig c = SmallConfig("fused");
  env::EnvSpec box = env::FindEnvSpec("CartPole-v1");
  box.action_space = env::Box{{-1.0f}, {1.0f}, {1}};
  EXPECT_NO_THROW(MakePpo(c, box));
  box.action_space = env::Box{{-1.0f}, {std::numeric_limits<float>::infinity()}, {1}};
  try {
    MakePpo(c, box);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "env_id");
  }
}

}  // namespace
}  // namespace greenrl::algo

namespace greenrl::algo {
namespace {

// Loss scaling by a power of two is exact in float32: the fused update with the scaler on
// (scale 2^16) moves the parameters to exactly where it does without it.
TEST(PpoPrecisionTest, LossScalingByPowerOfTwoIsExact) {
  PpoConfig plain = SmallConfig("fused");
  PpoConfig scaled = plain;
  scaled.grad_scaler = {true, 65536.0, 2.0, 0.5, 2000};
  auto env_a = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
  auto env_b = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
  env_a->Reset();
  env_b->Reset();
  auto a = MakePpo(plain, env_a->spec());
  auto b = MakePpo(scaled, env_b->spec());
  std::vector<EpisodeRecord> episodes;
  a->CollectRollout(*env_a, &episodes);
  b->CollectRollout(*env_b, &episodes);
  a->Update(0.9);
  const Metrics mb = b->Update(0.9);
  EXPECT_EQ(a->GetParameters(), b->GetParameters());
  for (const auto& [key, value] : mb) {
    if (key == "charts/loss_scale") {
      EXPECT_EQ(value, 65536.0);
    }
    if (key == "losses/skipped_steps") {
      EXPECT_EQ(value, 0.0);
    }
  }
}

double MetricValue(const Metrics& metrics, const std::string& key) {
  for (const auto& [k, value] : metrics) {
    if (k == key) return value;
  }
  ADD_FAILURE() << "no metric " << key;
  return std::nan("");
}

// The scaler's state across a checkpoint written with it off (an fp32 run resumed, or its agent
// fine-tuned, with grad_scaler.enabled true): the enabled scaler starts at its init_scale, as a
// fresh GradScaler, not at the scale 1 an off scaler reports. With the scaler off,
// losses/skipped_steps stays 0 while the guard counts a non-finite step (nonfinite_skips).
TEST(PpoPrecisionTest, ScalerTurnedOnAfterAnOffCheckpointStartsAtInitScale) {
  PpoConfig plain = SmallConfig("fused");
  auto env = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
  env->Reset();
  auto a = MakePpo(plain, env->spec());
  std::vector<EpisodeRecord> episodes;
  a->CollectRollout(*env, &episodes);
  a->InjectNonFiniteForTesting(1);
  const Metrics ma = a->Update(0.9);
  EXPECT_GT(a->nonfinite_skips(), 0);
  EXPECT_EQ(MetricValue(ma, "losses/skipped_steps"), 0.0);
  EXPECT_EQ(MetricValue(ma, "charts/loss_scale"), 1.0);
  const std::string path = ::testing::TempDir() + "/ppo_scaler_off.pt";
  a->SaveCheckpoint(path);
  for (const char* update_path : {"fused", "autograd"}) {
    SCOPED_TRACE(update_path);
    PpoConfig scaled = SmallConfig(update_path);
    scaled.grad_scaler = {true, 1024.0, 2.0, 0.5, 2000};
    auto b = MakePpo(scaled, env->spec());
    b->LoadCheckpoint(path);
    b->CollectRollout(*env, &episodes);
    const Metrics mb = b->Update(0.9);
    EXPECT_EQ(MetricValue(mb, "charts/loss_scale"), 1024.0);
    EXPECT_EQ(MetricValue(mb, "losses/skipped_steps"), 0.0);
  }
}

// A scale so small that 1 / scale overflows float32 (reached by backing off, or given): finite
// scaled gradients unscale to inf, and both update paths skip the step (the autograd path once
// took it, writing NaN into the parameters). A skip at a scale <= 1 is no back-off from an
// overflow the scale caused, so the numerical guard counts it (nonfinite_skips); above 1 it
// does not.
TEST(PpoPrecisionTest, SkipsAtScaleAtMostOneReachTheGuard) {
  // One update from `init_scale`, with a NaN gradient throughout it when `nan`: the metrics and
  // the guard's count.
  auto update = [](const char* update_path, double init_scale, bool nan) {
    PpoConfig config = SmallConfig(update_path);
    config.grad_scaler = {true, init_scale, 2.0, 0.5, 2000};
    auto env = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
    env->Reset();
    auto ppo = MakePpo(config, env->spec());
    std::vector<EpisodeRecord> episodes;
    ppo->CollectRollout(*env, &episodes);
    if (nan) ppo->InjectNonFiniteForTesting(1);
    const Metrics m = ppo->Update(0.9);
    return std::make_pair(m, ppo->nonfinite_skips());
  };
  for (const char* update_path : {"fused", "autograd"}) {
    SCOPED_TRACE(update_path);
    const auto [m, nonfinite] = update(update_path, 1e-39, false);
    EXPECT_EQ(MetricValue(m, "losses/n_updates"), 0.0);  // no step taken
    EXPECT_GT(MetricValue(m, "losses/skipped_steps"), 0.0);
    EXPECT_EQ(nonfinite, MetricValue(m, "losses/skipped_steps"));
  }
  // From a scale of 2: the skip at 2 is the scaler's own back-off; the later ones, at 1 and
  // below, are counted.
  const auto [m, nonfinite] = update("fused", 2.0, true);
  ASSERT_GT(MetricValue(m, "losses/skipped_steps"), 1.0);
  EXPECT_EQ(nonfinite, MetricValue(m, "losses/skipped_steps") - 1.0);
}

// Steps the scaler skips (gradients that overflow at a scale near float32's largest) are left
// out of losses/grad_norm on both update paths, so the metric stays finite; it averages over
// every minibatch, skipped ones adding 0.
TEST(PpoPrecisionTest, SkippedStepsLeaveGradNormFinite) {
  for (const char* update_path : {"fused", "autograd"}) {
    SCOPED_TRACE(update_path);
    PpoConfig config = SmallConfig(update_path);
    config.grad_scaler = {true, 3e38, 2.0, 0.5, 2000};
    auto env = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
    env->Reset();
    auto ppo = MakePpo(config, env->spec());
    std::vector<EpisodeRecord> episodes;
    ppo->CollectRollout(*env, &episodes);
    const Metrics m = ppo->Update(0.9);
    EXPECT_GT(MetricValue(m, "losses/skipped_steps"), 0.0);
    EXPECT_LT(MetricValue(m, "charts/loss_scale"), 3e38);
    EXPECT_TRUE(std::isfinite(MetricValue(m, "losses/grad_norm")));
    EXPECT_GT(MetricValue(m, "losses/grad_norm"), 0.0);
  }
}

// target_kl (SB3's early stop): the minibatch whose approx_kl exceeds 1.5 target_kl takes no
// step and ends the update. With one minibatch per epoch and a tiny target_kl, epoch 1 steps
// and epoch 2's minibatch stops: one optimiser step, and losses/grad_norm is that step's norm,
// the grad_norm of the same update cut to one epoch (the stopped minibatch adds nothing to it).
TEST(PpoTest, TargetKlStopTakesNoStepAndLeavesGradNormOfTheStepsTaken) {
  for (const char* update_path : {"fused", "autograd"}) {
    SCOPED_TRACE(update_path);
    PpoConfig config = SmallConfig(update_path);
    config.batch_size = config.n_steps * config.n_envs;  // one minibatch per epoch
    config.n_epochs = 2;
    config.target_kl = 1e-9;
    PpoConfig one_epoch = config;
    one_epoch.n_epochs = 1;
    one_epoch.target_kl = 0.0;
    Metrics metrics[2];
    for (int k = 0; k < 2; ++k) {
      auto env = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
      env->Reset();
      auto ppo = MakePpo(k == 0 ? config : one_epoch, env->spec());
      std::vector<EpisodeRecord> episodes;
      ppo->CollectRollout(*env, &episodes);
      metrics[k] = ppo->Update(1.0);
    }
    EXPECT_EQ(MetricValue(metrics[0], "losses/n_updates"), 1.0);
    EXPECT_EQ(MetricValue(metrics[0], "losses/epochs"), 2.0);
    EXPECT_GT(MetricValue(metrics[0], "losses/approx_kl"), 0.0);
    EXPECT_EQ(MetricValue(metrics[1], "losses/n_updates"), 1.0);
    EXPECT_GT(MetricValue(metrics[1], "losses/grad_norm"), 0.0);
    EXPECT_DOUBLE_EQ(MetricValue(metrics[0], "losses/grad_norm"),
                     MetricValue(metrics[1], "losses/grad_norm"));
  }
}

// bf16 autocast (CPU): the update runs, stays finite and lands near the float32 update, but not
// on it (an autocast region that did nothing would give the float32 parameters).
TEST(PpoPrecisionTest, Bf16UpdateIsFiniteAndCloseToFp32) {
  PpoConfig fp32 = SmallConfig("autograd");
  PpoConfig bf16 = fp32;
  bf16.precision = precision::Precision::kBf16;
  auto env_a = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
  auto env_b = env::MakeVecEnv("CartPole-v1", 4, 2, 1);
  env_a->Reset();
  env_b->Reset();
  auto a = MakePpo(fp32, env_a->spec());
  auto b = MakePpo(bf16, env_b->spec());
  std::vector<EpisodeRecord> episodes;
  a->CollectRollout(*env_a, &episodes);
  b->CollectRollout(*env_b, &episodes);
  const Metrics ma = a->Update(0.9);
  const Metrics mb = b->Update(0.9);
  const auto pa = a->GetParameters(), pb = b->GetParameters();
  double max_diff = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    ASSERT_TRUE(std::isfinite(pb[i]));
    max_diff = std::max(max_diff, double(std::fabs(pa[i] - pb[i])));
  }
  // 12 Adam steps of at most lr = 9e-4 each: bf16 may change the direction of some steps but
  // stays within that envelope.
  EXPECT_LT(max_diff, 12 * 9e-4 * 1.01);
  EXPECT_GT(max_diff, 1e-6);
  EXPECT_NEAR(ma[2].second, mb[2].second, 0.05 * std::fabs(ma[2].second));  // value loss
}

// Box actions (Pendulum-v1, a diagonal Gaussian): the hand-written Gaussian loss gradient
// (means and the log std) against LibTorch autograd, as for the categorical policy.
TEST(PpoGaussianTest, FusedUpdateMatchesAutograd) {
  PpoConfig config = SmallConfig("fused");
  config.log_std_init = -0.5;
  const auto [initial, final_params] = ExpectFusedMatchesAutograd("Pendulum-v1", config);
  // The log std block (last entry: Pendulum has one action dimension) starts at log_std_init
  // and is trained.
  EXPECT_EQ(initial.back(), -0.5f);
  EXPECT_NE(final_params.back(), initial.back()) << "the log std must be trained";
}

// SB3's train/std: mean of exp(log_std) after the update, logged for Gaussian policies only. On
// Pendulum (one action) it is exp of the trained log std; with gSDE and a learning rate of 0 the
// [features, actions] matrix keeps log_std_init in every entry; CartPole's logs none.
TEST(PpoGaussianTest, LogsSb3sTrainStd) {
  auto update = [](PpoConfig c, const std::string& env_id, std::vector<float>* params) {
    auto env = env::MakeVecEnv(env_id, 4, 11, 1);
    env->Reset();
    auto ppo = MakePpo(c, env->spec());
    std::vector<EpisodeRecord> episodes;
    ppo->CollectRollout(*env, &episodes);
    Metrics m = ppo->Update(1.0);
    if (params != nullptr) *params = ppo->GetParameters();
    return m;
  };
  for (const char* update_path : {"fused", "autograd"}) {
    SCOPED_TRACE(update_path);
    PpoConfig c = SmallConfig(update_path);
    c.log_std_init = -0.5;
    std::vector<float> params;
    const Metrics m = update(c, "Pendulum-v1", &params);
    EXPECT_NE(params.back(), -0.5f);
    EXPECT_DOUBLE_EQ(MetricValue(m, "train/std"), std::exp(static_cast<double>(params.back())));
    c.use_sde = true;
    c.learning_rate = Schedule::Constant(0.0);
    EXPECT_NEAR(MetricValue(update(c, "Pendulum-v1", nullptr), "train/std"),
                std::exp(static_cast<double>(-0.5f)), 1e-14);  // a mean of 64 equal entries
    const Metrics discrete = update(SmallConfig(update_path), "CartPole-v1", nullptr);
    for (const auto& [key, value] : discrete) EXPECT_NE(key, "train/std");
  }
}

// The env gets samples clipped to the Box while the buffer keeps the unclipped sample and its
// log-prob: with a wide Gaussian (std e^2 = 7.4 against bounds [-2, 2], so most samples are
// clipped) and a learning rate of 0, every ratio is exactly 1 (approx_kl 0, clipfrac 0), which
// would fail if log-probs were taken of the clipped actions. The entropy is the closed form
// log std + (1 + log 2 pi) / 2 = 2 + 1.41893853.
TEST(PpoGaussianTest, EnvGetsClippedActionsBufferKeepsSamples) {
  for (const std::string path : {"fused", "autograd"}) {
    auto env = env::MakeVecEnv("Pendulum-v1", 4, 3, 1);
    env->Reset();
    PpoConfig c = SmallConfig(path);
    c.learning_rate = Schedule::Constant(0.0);
    c.n_epochs = 1;
    c.log_std_init = 2.0;
    auto ppo = MakePpo(c, env->spec());
    std::vector<EpisodeRecord> episodes;
    ppo->CollectRollout(*env, &episodes);
    for (int i = 0; i < 4; ++i) {
      EXPECT_LE(std::fabs(env->continuous_actions()[i]), 2.0f);
    }
    const Metrics m = ppo->Update(1.0);
    auto get = [&](const std::string& key) {
      for (const auto& [k, v] : m) {
        if (k == key) return v;
      }
      ADD_FAILURE() << key;
      return 0.0;
    };
    EXPECT_NEAR(get("losses/approx_kl"), 0.0, 1e-7) << path;
    EXPECT_NEAR(get("losses/old_approx_kl"), 0.0, 1e-6) << path;
    EXPECT_EQ(get("losses/clipfrac"), 0.0) << path;
    EXPECT_NEAR(get("losses/entropy"), 2.0 + 1.4189385332046727, 1e-6) << path;
    std::vector<float> obs(3 * 5, 0.5f), actions(5, 99.f);
    ppo->ActContinuous(obs.data(), 5, /*deterministic=*/false, actions.data());
    for (float a : actions) EXPECT_LE(std::fabs(a), 2.0f);
  }
}

// gSDE (use_sde, SB3's StateDependentNoiseDistribution): the hand-written gradient of the
// state-dependent std (means, and the log-std matrix [64, 1] over the actor's last hidden
// features, which stay detached) against LibTorch autograd.
TEST(PpoSdeTest, FusedUpdateMatchesAutograd) {
  PpoConfig config = SmallConfig("fused");
  config.use_sde = true;
  config.sde_sample_freq = 4;
  config.log_std_init = -0.5;
  const auto [initial, final_params] = ExpectFusedMatchesAutograd("Pendulum-v1", config);
  ASSERT_GT(initial.size(), 64u);
  int trained = 0;
  for (size_t i = initial.size() - 64; i < initial.size(); ++i) {
    EXPECT_EQ(initial[i], -0.5f);
    trained += final_params[i] != initial[i];
  }
  EXPECT_GT(trained, 32) << "the log-std matrix must be trained";
}

// With the learning rate at 0 the update must see ratio 1 everywhere: the rollout's log-probs
// (mean + h^T E, under std(h)) agree with the update's, on both paths.
TEST(PpoSdeTest, RolloutLogProbsMatchUpdate) {
  for (const std::string path : {"fused", "autograd"}) {
    auto env = env::MakeVecEnv("Pendulum-v1", 4, 5, 1);
    env->Reset();
    PpoConfig c = SmallConfig(path);
    c.use_sde = true;
    c.sde_sample_freq = 4;
    c.learning_rate = Schedule::Constant(0.0);
    c.n_epochs = 1;
    auto ppo = MakePpo(c, env->spec());
    std::vector<EpisodeRecord> episodes;
    ppo->CollectRollout(*env, &episodes);
    const Metrics m = ppo->Update(1.0);
    for (const auto& [key, value] : m) {
      if (key == "losses/approx_kl") {
        EXPECT_NEAR(value, 0.0, 1e-7) << path;
      }
      if (key == "losses/clipfrac") {
        EXPECT_EQ(value, 0.0) << path;
      }
    }
  }
}

// Without hidden layers the gSDE features are the observation itself, so the std is known by
// hand: obs (0.6, 0.8, 0) and log_std 0.5 ln 0.25 (std 0.5 per entry) give
// std = sqrt(0.25 (0.36 + 0.64 + 0) + 1e-6) = 0.500001. 20,000 stochastic actions at that obs
// (mean within 0.1 of 0, so the +-2 bounds, 4 std away, clip almost nothing) have that spread.
TEST(PpoSdeTest, StochasticActionsHaveTheStateDependentStd) {
  auto env = env::MakeVecEnv("Pendulum-v1", 1, 0, 1);
  PpoConfig c = SmallConfig("fused");
  c.n_envs = 1;
  c.use_sde = true;
  c.pi_arch = {};
  c.log_std_init = 0.5 * std::log(0.25);
  auto ppo = MakePpo(c, env->spec());
  const int n = 20000;
  std::vector<float> obs(3 * n), actions(n), mean(1);
  for (int i = 0; i < n; ++i) {
    obs[3 * i] = 0.6f;
    obs[3 * i + 1] = 0.8f;
    obs[3 * i + 2] = 0.0f;
  }
  ppo->ActContinuous(obs.data(), 1, /*deterministic=*/true, mean.data());
  ppo->ActContinuous(obs.data(), n, /*deterministic=*/false, actions.data());
  double sum = 0, sum_sq = 0;
  for (float a : actions) {
    sum += a - mean[0];
    sum_sq += double(a - mean[0]) * (a - mean[0]);
  }
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(sum_sq / n), 0.500001, 0.01);  // sampling error of the std: 0.0025
}

TEST(PpoSdeTest, RefusesDiscreteActions) {
  auto env = env::MakeVecEnv("CartPole-v1", 1, 0, 1);
  PpoConfig c = SmallConfig("fused");
  c.use_sde = true;
  try {
    MakePpo(c, env->spec());
    FAIL() << "use_sde with Discrete actions must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("use_sde"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace greenrl::algo
