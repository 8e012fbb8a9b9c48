// SAC: the update's pieces against hand-computed values (TD target with truncation and
// termination, Polyak, the entropy-coefficient Adam step), Box-action evaluation through
// train::EvaluatePolicy, config errors, gSDE (its rollout schedule, training, clip_mean), the
// checkpoint round trip and short smoke trainings of configs/sac/pendulum.yaml and the gSDE
// preset configs/sac/mountaincarcontinuous.yaml.
#include "greenrl/algo/sac.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "greenrl/algo/checkpoint.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/energy/estimator_meter.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/wrappers.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/evaluate.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::algo {
namespace {

namespace fs = std::filesystem;

std::string Preset() { return SourceTreeDir() + "/configs/sac/pendulum.yaml"; }

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/greenrl_sac_" + name;
  fs::remove_all(dir);
  return dir;
}

// A small SAC for fast tests: [32, 32] networks, batch 16, training from step 50.
SacConfig SmallConfig(uint64_t seed = 0) {
  SacConfig c;
  c.seed = seed;
  c.net_arch = {32, 32};
  c.batch_size = 16;
  c.learning_starts = 50;
  c.buffer_size = 10000;
  c.learning_rate = Schedule::Constant(1e-3);
  return c;
}

// ---------------------------------------------------------------------------------------------
// TD target: the replay buffer keeps terminated and truncated apart, next_obs is the final obs,
// done = terminated. Four transitions, by hand (gamma 0.9, alpha 0.2):
//   row 0 truncated only:  y = 1 + 0.9 (min(10, 8) - 0.2 (-1))  = 1 + 0.9 x 8.2  = 8.38
//   row 1 terminated only: y = 2
//   row 2 both:            y = 3 (termination wins: no bootstrap)
//   row 3 neither:         y = 4 + 0.9 (min(5, 6) - 0.2 x 0.5)  = 4 + 0.9 x 4.9  = 8.41
TEST(SacTest, TdTargetBootstrapsThroughTruncationNotTermination) {
  ReplayBuffer buffer(/*capacity=*/8, /*obs_dim=*/2, /*act_dim=*/1);
  const float obs[] = {0, 0, 1, 1, 2, 2, 3, 3};
  const float actions[] = {-1.0f, -0.5f, 0.5f, 1.0f};
  const float rewards[] = {1, 2, 3, 4};
  const uint8_t terminated[] = {0, 1, 1, 0};
  const uint8_t truncated[] = {1, 0, 1, 0};
  // final_obs: the real last observations (a VecEnv's obs already holds the reset ones).
  const float final_obs[] = {10, 11, 20, 21, 30, 31, 40, 41};
  buffer.Add(obs, actions, rewards, terminated, truncated, final_obs, 4);
  ASSERT_EQ(buffer.size(), 4);
  EXPECT_TRUE(buffer.truncated(0) && !buffer.terminated(0));
  EXPECT_TRUE(buffer.terminated(1) && !buffer.truncated(1));
  EXPECT_TRUE(buffer.terminated(2) && buffer.truncated(2));
  EXPECT_EQ(buffer.next_obs(0)[0], 10.0f);  // the truncated row keeps its real final obs
  EXPECT_EQ(buffer.next_obs(0)[1], 11.0f);

  const int64_t idx[] = {0, 1, 2, 3};
  float b_obs[8], b_act[4], b_rew[4], b_done[4], b_next[8];
  buffer.Gather(idx, 4, b_obs, b_act, b_rew, b_done, b_next);
  EXPECT_EQ(std::vector<float>(b_done, b_done + 4), (std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(std::vector<float>(b_next, b_next + 8), std::vector<float>(final_obs, final_obs + 8));
  EXPECT_EQ(std::vector<float>(b_act, b_act + 4), std::vector<float>(actions, actions + 4));

  const float next_q1[] = {10, 10, 10, 5}, next_q2[] = {8, 12, 9, 6};
  const float next_log_prob[] = {-1, -1, -1, 0.5f};
  float y[4];
  SacTdTarget(b_rew, b_done, next_q1, next_q2, next_log_prob, /*alpha=*/0.2, /*gamma=*/0.9, 4, y);
  EXPECT_NEAR(y[0], 8.38, 1e-5);
  EXPECT_FLOAT_EQ(y[1], 2.0f);
  EXPECT_FLOAT_EQ(y[2], 3.0f);
  EXPECT_NEAR(y[3], 8.41, 1e-5);
}

TEST(SacTest, ReplayBufferIsARing) {
  ReplayBuffer buffer(/*capacity=*/3, /*obs_dim=*/1, /*act_dim=*/1);
  const uint8_t zero[] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const float obs[] = {static_cast<float>(2 * k), static_cast<float>(2 * k + 1)};
    buffer.Add(obs, obs, obs, zero, zero, obs, 2);
  }
  EXPECT_EQ(buffer.size(), 3);
  const int64_t idx[] = {0, 1, 2};
  float o[3], a[3], r[3], d[3], n[3];
  buffer.Gather(idx, 3, o, a, r, d, n);
  EXPECT_EQ(std::vector<float>(o, o + 3), (std::vector<float>{3, 1, 2}));  // row 0 overwritten
}

// A buffer the machine cannot reserve (here 2^40 Humanoid rows, 3 PB) is a ConfigError naming
// buffer_size and the bytes, not a raw std::bad_alloc.
TEST(SacTest, ReplayBufferTooLargeForTheMachineNamesBufferSize) {
  try {
    ReplayBuffer buffer(int64_t{1} << 40, /*obs_dim=*/376, /*act_dim=*/17);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "buffer_size");
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("1099511627776 rows of 3082 bytes are 3388694.8 GB"));
  }
}

// target = (1 - tau) target + tau params: tau 0.1 on (1, 2, -3) from (0, 4, 1) gives
// (0.1, 3.8, 0.6); tau 1 copies.
TEST(SacTest, PolyakUpdateByHand) {
  const float params[] = {1, 2, -3};
  float target[] = {0, 4, 1};
  PolyakUpdate(params, target, 3, 0.1);
  EXPECT_FLOAT_EQ(target[0], 0.1f);
  EXPECT_FLOAT_EQ(target[1], 3.8f);
  EXPECT_FLOAT_EQ(target[2], 0.6f);
  PolyakUpdate(params, target, 3, 1.0);
  EXPECT_EQ(std::vector<float>(target, target + 3), std::vector<float>(params, params + 3));
}

// alpha_loss = -(log_alpha (log_pi + H*)).mean(); d/d log_alpha = -mean(log_pi + H*).
// Step 1 from log_alpha 0, log_pi (-1, -2, -3), H* = -1: mean(log_pi + H*) = -3, g = 3,
//   loss = 0; Adam (lr 1e-3, PyTorch defaults): m = 0.3, v = 0.009, m_hat = 3, v_hat = 9,
//   log_alpha = -1e-3 x 3 / (3 + 1e-8).
// Step 2 with log_pi (2, 4): mean = 2, g = -2, loss = -(log_alpha) x 2;
//   m = 0.27 - 0.2 = 0.07 (momentum still points down), v = 0.008991 + 0.004 = 0.012991,
//   m_hat = 0.07 / 0.19, v_hat = 0.012991 / (1 - 0.999^2).
// From a fresh optimiser the same batch (entropy below target) makes alpha grow.
TEST(SacTest, EntropyCoefficientAdamStepByHand) {
  nn::FlatAdam adam(1, nn::AdamOptions{});
  float log_alpha = 0.0f;
  const float lp1[] = {-1, -2, -3};
  double loss = EntropyCoefStep(lp1, 3, /*target_entropy=*/-1.0, 1e-3, adam, &log_alpha);
  EXPECT_DOUBLE_EQ(loss, 0.0);
  const double a1 = -1e-3 * 3.0 / (3.0 + 1e-8);
  EXPECT_NEAR(log_alpha, a1, 1e-9);
  const float lp2[] = {2, 4};
  loss = EntropyCoefStep(lp2, 2, -1.0, 1e-3, adam, &log_alpha);
  EXPECT_NEAR(loss, -a1 * 2.0, 1e-9);
  const double m_hat = 0.07 / 0.19, v_hat = 0.012991 / (1.0 - 0.999 * 0.999);
  EXPECT_NEAR(log_alpha, a1 - 1e-3 * m_hat / (std::sqrt(v_hat) + 1e-8), 1e-8);
  nn::FlatAdam fresh(1, nn::AdamOptions{});
  float grows = 0.0f;
  EntropyCoefStep(lp2, 2, -1.0, 1e-3, fresh, &grows);
  EXPECT_NEAR(grows, 1e-3 * 2.0 / (2.0 + 1e-8), 1e-9);
}

// ---------------------------------------------------------------------------------------------
// Config and construction errors name the field.
TEST(SacTest, BadConfigNamesTheField) {
  auto field_of = [](std::vector<std::string> sets) {
    try {
      train::LoadRunConfig(Preset(), sets, std::nullopt);
    } catch (const ConfigError& e) {
      return e.field();
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(field_of({"ent_coef=bogus"}), "ent_coef");
  EXPECT_EQ(field_of({"ent_coef=auto_-1"}), "ent_coef");
  EXPECT_EQ(field_of({"ent_coef=-0.5"}), "ent_coef");
  EXPECT_EQ(field_of({"target_entropy=x"}), "target_entropy");
  EXPECT_EQ(field_of({"batch_size=512", "buffer_size=100"}), "(no error)");  // as SB3 (below)
  EXPECT_EQ(field_of({"threads.update=2", "update_path=autograd"}), "threads.update");
  EXPECT_EQ(field_of({"threads.update=3"}), "threads.update");
  EXPECT_EQ(field_of({"threads.update=2"}), "(no error)");
  EXPECT_EQ(field_of({"tau=0"}), "tau");
  EXPECT_EQ(field_of({"gradient_steps=-2"}), "gradient_steps");
  EXPECT_EQ(field_of({"policy_kwargs.activation_fn=gelu"}), "policy_kwargs.activation_fn");
  EXPECT_EQ(field_of({"use_sde=maybe"}), "use_sde");
  EXPECT_EQ(field_of({"sde_sample_freq=0"}), "(no error)");  // SB3's: as -1
  EXPECT_EQ(field_of({"sde_sample_freq=-2"}), "(no error)");               // any value <= 0, as SB3
  EXPECT_EQ(field_of({"sde_sample_freq=4294967296"}), "sde_sample_freq");  // beyond int
  EXPECT_EQ(field_of({"policy_kwargs.clip_mean=-1"}), "policy_kwargs.clip_mean");
  EXPECT_EQ(field_of({"policy_kwargs.log_std_init=5"}), "policy_kwargs.log_std_init");
  EXPECT_EQ(field_of({}), "(no error)");
  // A misspelt auto gets a guess, as a misspelt choice of a key does.
  auto message_of = [](std::vector<std::string> sets) {
    try {
      train::LoadRunConfig(Preset(), sets, std::nullopt);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message_of({"ent_coef=atuo"}),
            "ent_coef: got 'atuo'; did you mean 'auto'? auto, auto_<initial value > 0> (e.g. "
            "auto_0.1) or a number >= 0");
  EXPECT_EQ(message_of({"target_entropy=Auto"}),
            "target_entropy: got 'Auto'; did you mean 'auto'? auto (-dim(A)) or a finite number");
  EXPECT_EQ(
      message_of({"ent_coef=-0.5"}),
      "ent_coef: got '-0.5'; auto, auto_<initial value > 0> (e.g. auto_0.1) or a number >= 0");
  const Config ok = train::LoadRunConfig(Preset(), {"ent_coef=auto_0.1", "target_entropy=-2"}, 0);
  const SacConfig c = SacConfigFromConfig(ok);
  EXPECT_TRUE(c.learn_ent_coef);
  EXPECT_DOUBLE_EQ(c.ent_coef_init, 0.1);
  EXPECT_DOUBLE_EQ(c.target_entropy, -2.0);
  const SacConfig fixed = SacConfigFromConfig(train::LoadRunConfig(Preset(), {"ent_coef=0.05"}, 0));
  EXPECT_FALSE(fixed.learn_ent_coef);
  // rl-zoo's preset over SB3's defaults.
  const SacConfig preset = SacConfigFromConfig(train::LoadRunConfig(Preset(), {}, 0));
  EXPECT_DOUBLE_EQ(preset.learning_rate.Value(1.0), 1e-3);
  EXPECT_EQ(preset.buffer_size, 1000000);
  EXPECT_EQ(preset.learning_starts, 100);
  EXPECT_EQ(preset.batch_size, 256);
  EXPECT_DOUBLE_EQ(preset.tau, 0.005);
  EXPECT_EQ(preset.net_arch, (std::vector<int>{256, 256}));
  EXPECT_TRUE(std::isnan(preset.target_entropy));
  EXPECT_FALSE(preset.use_sde);  // SB3's gSDE defaults: off, -1, no warm-up, -3, 2.0
  EXPECT_EQ(preset.sde_sample_freq, -1);
  EXPECT_FALSE(preset.use_sde_at_warmup);
  EXPECT_DOUBLE_EQ(preset.log_std_init, -3.0);
  EXPECT_DOUBLE_EQ(preset.clip_mean, 2.0);
  // rl-zoo's MountainCarContinuous-v0 preset: gSDE with log_std_init -3.67.
  const SacConfig mcc = SacConfigFromConfig(
      train::LoadRunConfig(SourceTreeDir() + "/configs/sac/mountaincarcontinuous.yaml", {}, 0));
  EXPECT_TRUE(mcc.use_sde);
  EXPECT_DOUBLE_EQ(mcc.log_std_init, -3.67);
  EXPECT_EQ(mcc.net_arch, (std::vector<int>{64, 64}));
  EXPECT_FALSE(mcc.learn_ent_coef);
  EXPECT_DOUBLE_EQ(mcc.ent_coef_init, 0.1);

  try {
    MakeSac(SmallConfig(), env::FindEnvSpec("CartPole-v1"));
    FAIL() << "SAC accepted a Discrete env";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "env_id");
  }
}

// ---------------------------------------------------------------------------------------------
// Rollout and update on Pendulum-v1.
// A minibatch larger than the buffer is drawn with replacement, as SB3's ReplayBuffer.sample
// (randint over the filled rows) and greenrl's DQN do.
TEST(SacTest, BatchLargerThanTheBufferIsDrawnWithReplacement) {
  auto env = env::MakeVecEnv("Pendulum-v1", 1, /*seed=*/3, 1);
  SacConfig config = SmallConfig();
  config.buffer_size = 20;
  config.batch_size = 64;
  config.learning_starts = 30;
  auto sac = MakeSac(config, env->spec());
  env->Reset();
  std::vector<EpisodeRecord> episodes;
  double n_updates = 0.0;
  for (int t = 0; t < 40; ++t) {
    sac->CollectRollout(*env, &episodes);
    const Metrics m = sac->Update(1.0 - t / 40.0);
    for (const auto& [name, v] : m) {
      if (name == "losses/n_updates") n_updates = v;
    }
    if (t < 30) continue;  // training starts after learning_starts env steps
    for (const auto& [name, v] : m) EXPECT_TRUE(std::isfinite(v)) << name << " at step " << t;
  }
  EXPECT_EQ(n_updates, 10.0);  // steps 31..40, one gradient step each
  for (float p : sac->GetParameters()) ASSERT_TRUE(std::isfinite(p));
}

// A resume without the replay buffer refills it before the updates go on: learning_starts (50)
// env steps counted from the checkpoint's step.
TEST(SacTest, ResumeWithoutTheBufferRefillsItBeforeUpdating) {
  auto env = env::MakeVecEnv("Pendulum-v1", 1, /*seed=*/3, 1);
  const SacConfig config = SmallConfig();
  auto sac = MakeSac(config, env->spec());
  env->Reset();
  std::vector<EpisodeRecord> episodes;
  auto n_updates = [](const Metrics& m) {
    for (const auto& [name, v] : m) {
      if (name == "losses/n_updates") return v;
    }
    return std::nan("");
  };
  for (int t = 0; t < 60; ++t) {  // updates at steps 51..60
    sac->CollectRollout(*env, &episodes);
    sac->Update(1.0);
  }
  const std::string path = FreshDir("refill") + "/state.pt";
  fs::create_directories(fs::path(path).parent_path());
  sac->SaveTrainingState(path, /*replay_buffer=*/false, [](CheckpointWriter&) {});
  auto resumed = MakeSac(config, env->spec());
  resumed->LoadTrainingState(path, [](CheckpointReader&) {});
  for (int t = 61; t <= 111; ++t) {  // no update through 60 + 50 = 110; then one per step
    resumed->CollectRollout(*env, &episodes);
    EXPECT_EQ(n_updates(resumed->Update(1.0)), t <= 110 ? 10.0 : 11.0) << t;
  }
}

TEST(SacTest, WarmupThenTrainingWithFiniteMetricsAndActionsInBounds) {
  auto env = env::MakeVecEnv("Pendulum-v1", 2, /*seed=*/3, 1);
  SacConfig config = SmallConfig();
  config.n_envs = 2;
  auto sac = MakeSac(config, env->spec());
  env->Reset();
  std::vector<EpisodeRecord> episodes;
  const std::vector<std::string> keys = {
      "charts/learning_rate", "losses/qf1_loss", "losses/qf2_loss",   "losses/qf_loss",
      "losses/actor_loss",    "losses/alpha",    "losses/alpha_loss", "losses/qf1_values",
      "losses/qf2_values",    "losses/n_updates"};
  auto key_list = [](const Metrics& m) {
    std::vector<std::string> k;
    for (const auto& [name, v] : m) k.push_back(name);
    return k;
  };
  auto value = [](const Metrics& m, const std::string& key) {
    for (const auto& [name, v] : m) {
      if (name == key) return v;
    }
    return std::nan("");
  };
  // 25 rollouts x 2 envs = 50 env steps = learning_starts: no training yet (SB3: > starts).
  for (int t = 0; t < 25; ++t) {
    EXPECT_EQ(sac->CollectRollout(*env, &episodes), 2);
    const Metrics& m = sac->Update(1.0);
    ASSERT_EQ(key_list(m), keys);
    EXPECT_TRUE(std::isnan(value(m, "losses/qf_loss")));
    EXPECT_EQ(value(m, "losses/n_updates"), 0.0);
    EXPECT_EQ(value(m, "losses/alpha"), 1.0);
  }
  const std::vector<float> before = sac->GetParameters();
  for (int t = 0; t < 100; ++t) {
    sac->CollectRollout(*env, &episodes);
    const float* a = env->continuous_actions();
    EXPECT_TRUE(a[0] >= -2.0f && a[0] <= 2.0f && a[1] >= -2.0f && a[1] <= 2.0f);
    const Metrics& m = sac->Update(0.5);
    ASSERT_EQ(key_list(m), keys);
    for (const auto& [name, v] : m) EXPECT_TRUE(std::isfinite(v)) << name;
    EXPECT_EQ(value(m, "losses/n_updates"), t + 1.0);
  }
  // Both flat buffers moved: autograd accumulated into the actor's and the critics' flat
  // gradient views. Actor [32, 32] on obs 3, act 1: 3*32+32 + 32*32+32 + 2*(32+1) = 1250.
  const std::vector<float> after = sac->GetParameters();
  const size_t actor_n = 1250;
  ASSERT_EQ(after.size(), actor_n + 2 * (4 * 32 + 32 + 32 * 32 + 32 + 33));
  EXPECT_NE(std::vector<float>(after.begin(), after.begin() + actor_n),
            std::vector<float>(before.begin(), before.begin() + actor_n));
  EXPECT_NE(std::vector<float>(after.begin() + actor_n, after.end()),
            std::vector<float>(before.begin() + actor_n, before.end()));
  // The learned alpha moved from 1 (Pendulum's target entropy is -1).
  EXPECT_NE(value(sac->Update(0.5), "losses/alpha"), 1.0);
  // 125 steps per env so far; 75 more reach Pendulum's TimeLimit (200) in both rows.
  EXPECT_TRUE(episodes.empty());
  for (int t = 0; t < 75; ++t) sac->CollectRollout(*env, &episodes);
  ASSERT_EQ(episodes.size(), 2u);
  EXPECT_EQ(episodes[0].episode_length, 200);
}

// ---------------------------------------------------------------------------------------------
// Box evaluation through train::EvaluatePolicy.

// A scripted Box policy: the same torque everywhere; counts its calls.
class ConstantTorque final : public Algorithm {
 public:
  explicit ConstantTorque(float torque) : torque_(torque) {}
  std::string name() const override { return "constant"; }
  int64_t CollectRollout(env::VecEnv&, std::vector<EpisodeRecord>*) override { return 0; }
  const Metrics& Update(double) override { return metrics_; }
  void Act(const float*, int, bool, int64_t*) override { ++discrete_calls; }
  void ActContinuous(const float*, int n, bool, float* actions) override {
    ++continuous_calls;
    for (int i = 0; i < n; ++i) actions[i] = torque_;
  }
  void SeedActing(uint64_t) override {}
  void SaveCheckpoint(const std::string&) const override {}
  void LoadCheckpoint(const std::string&) override {}
  std::vector<float> GetParameters() const override { return {}; }
  int discrete_calls = 0, continuous_calls = 0;

 private:
  float torque_;
  Metrics metrics_;
};

// A Discrete-only algorithm: ActContinuous keeps the interface's default.
class DiscreteOnly final : public Algorithm {
 public:
  std::string name() const override { return "discrete"; }
  int64_t CollectRollout(env::VecEnv&, std::vector<EpisodeRecord>*) override { return 0; }
  const Metrics& Update(double) override { return metrics_; }
  void Act(const float*, int n, bool, int64_t* actions) override {
    for (int i = 0; i < n; ++i) actions[i] = 0;
  }
  void SeedActing(uint64_t) override {}
  void SaveCheckpoint(const std::string&) const override {}
  void LoadCheckpoint(const std::string&) override {}
  std::vector<float> GetParameters() const override { return {}; }

 private:
  Metrics metrics_;
};

TEST(SacTest, EvaluatePolicyDrivesBoxEnvsThroughActContinuous) {
  ConstantTorque policy(0.5f);
  const train::EvalResult r = train::EvaluatePolicy(policy, "Pendulum-v1", 3, /*seed=*/11);
  EXPECT_EQ(policy.discrete_calls, 0);
  EXPECT_EQ(policy.continuous_calls, 200);  // Pendulum's TimeLimit, all three in parallel
  ASSERT_EQ(r.returns.size(), 3u);
  // The same episodes driven by hand: eval envs use DeriveSeed(seed, "eval") (evaluate.cc).
  auto env = env::MakeVecEnv("Pendulum-v1", 3, DeriveSeed(11, 0x6576616cULL), 1);
  env->Reset();
  std::vector<double> returns(3, 0.0);
  for (int t = 0; t < 200; ++t) {
    for (int i = 0; i < 3; ++i) env->continuous_actions()[i] = 0.5f;
    env->Step();
    for (int i = 0; i < 3; ++i) returns[i] += env->reward()[i];
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.lengths[i], 200);
    EXPECT_NEAR(r.returns[i], returns[i], 1e-3 * std::fabs(returns[i]));
  }
  // SAC's deterministic policy through the same path: finite, full-length, reproducible.
  auto sac = MakeSac(SmallConfig(), env::FindEnvSpec("Pendulum-v1"));
  const train::EvalResult a = train::EvaluatePolicy(*sac, "Pendulum-v1", 2, 5);
  const train::EvalResult b = train::EvaluatePolicy(*sac, "Pendulum-v1", 2, 5);
  EXPECT_TRUE(std::isfinite(a.mean_return));
  EXPECT_EQ(a.returns, b.returns);
  EXPECT_EQ(a.lengths[0], 200);
  // A Discrete-only algorithm on a Box env is a bug caught by the interface's default.
  DiscreteOnly discrete;
  EXPECT_THROW(train::EvaluatePolicy(discrete, "Pendulum-v1", 1, 0), InternalError);
}

// ---------------------------------------------------------------------------------------------
// gSDE (SB3 SAC use_sde).

// The rollout's exploration matrices are drawn as SB3's collect_rollouts draws them: at each
// rollout's start and every sde_sample_freq VecEnv steps of it. Two agents of the same seed on
// two envs of the same seed take the same actions exactly when they draw at the same steps, so
// the envs' observations tell the schedules apart: with train_freq 4, sde_sample_freq 4 draws
// only at t = 0, as -1 does; 2 draws again at t = 2. use_sde_at_warmup acts with the policy
// before learning_starts instead of uniformly.
TEST(SacTest, SdeRolloutDrawsItsMatricesAsSb3) {
  auto obs_after = [](int sde_sample_freq, bool at_warmup, int64_t learning_starts) {
    SacConfig config = SmallConfig(7);
    config.use_sde = true;
    config.sde_sample_freq = sde_sample_freq;
    config.use_sde_at_warmup = at_warmup;
    config.learning_starts = learning_starts;
    config.train_freq = 4;
    config.n_envs = 2;
    config.log_std_init = 0.0;  // noise large enough to move the pendulum visibly
    auto env = env::MakeVecEnv("Pendulum-v1", 2, /*seed=*/3, 1);
    auto sac = MakeSac(config, env->spec());
    env->Reset();
    std::vector<EpisodeRecord> episodes;
    for (int r = 0; r < 3; ++r) sac->CollectRollout(*env, &episodes);  // no update: same actor
    return std::vector<float>(env->obs(), env->obs() + 2 * 3);
  };
  const std::vector<float> once = obs_after(-1, false, 0);
  EXPECT_EQ(obs_after(4, false, 0), once);
  EXPECT_EQ(obs_after(0, false, 0), once);  // SB3 redraws only when sde_sample_freq > 0
  EXPECT_EQ(obs_after(-7, false, 0), once);
  EXPECT_NE(obs_after(2, false, 0), once);
  EXPECT_NE(obs_after(1, false, 0), obs_after(2, false, 0));
  // Warm-up: uniform actions unless use_sde_at_warmup, which then acts as after the warm-up.
  EXPECT_NE(obs_after(-1, false, 1000), once);
  EXPECT_EQ(obs_after(-1, true, 1000), once);
}

// Training with gSDE: finite losses, actions inside the Box, the log-std parameter [L, A] moves
// (gradients reach it), and the deterministic action is tanh of the clipped mean: with clip_mean
// 0.01 every Pendulum torque is within 2 tanh(0.01) of 0, which the unclipped actor exceeds.
TEST(SacTest, SdeTrainsAndClipsTheMean) {
  auto make = [](double clip_mean) {
    SacConfig config = SmallConfig(3);
    config.use_sde = true;
    config.clip_mean = clip_mean;
    config.learning_starts = 20;
    return config;
  };
  auto env = env::MakeVecEnv("Pendulum-v1", 1, /*seed=*/5, 1);
  auto sac = MakeSac(make(2.0), env->spec());
  const std::vector<float> before = sac->GetParameters();
  env->Reset();
  std::vector<EpisodeRecord> episodes;
  for (int t = 0; t < 60; ++t) {
    sac->CollectRollout(*env, &episodes);
    const Metrics& m = sac->Update(1.0);
    for (const auto& [key, value] : m) {
      if (t >= 20) {
        EXPECT_TRUE(std::isfinite(value)) << key;
      }
    }
    EXPECT_GE(env->continuous_actions()[0], -2.0f);
    EXPECT_LE(env->continuous_actions()[0], 2.0f);
  }
  // The actor's parameters start with log_std [32, 1] (LibTorch lists a module's own parameters
  // before its submodules'), initialised to log_std_init -3.
  const std::vector<float> after = sac->GetParameters();
  const size_t log_std_at = 0;
  int moved = 0;
  for (size_t k = log_std_at; k < log_std_at + 32; ++k) {
    EXPECT_EQ(before[k], -3.0f) << k;
    moved += after[k] != before[k];
  }
  // Rows j whose ReLU feature h_j was 0 in every sampled batch get no gradient (d/d log_std_j
  // carries h_j); here 17 of 32 moved.
  EXPECT_GE(moved, 8);

  std::vector<float> obs;
  for (int i = 0; i < 50; ++i) {
    const double th = 0.3 * i;
    obs.insert(obs.end(), {static_cast<float>(std::cos(th)), static_cast<float>(std::sin(th)),
                           static_cast<float>(0.3 * i - 7.0)});
  }
  std::vector<float> clipped(50), free(50);
  MakeSac(make(0.01), env->spec())->ActContinuous(obs.data(), 50, true, clipped.data());
  MakeSac(make(0.0), env->spec())->ActContinuous(obs.data(), 50, true, free.data());
  float max_free = 0.0f;
  for (int i = 0; i < 50; ++i) {
    EXPECT_LE(std::fabs(clipped[i]), 2.0 * std::tanh(0.01) + 1e-6) << i;
    max_free = std::max(max_free, std::fabs(free[i]));
  }
  EXPECT_GT(max_free, 2.0 * std::tanh(0.01) * 2);
}

// The numerical guard: an update whose critic gradient is not finite skips each of its gradient
// steps whole. The saved model (actor, critics, targets, log alpha and all three Adam states,
// the entropy coefficient's included) is byte for byte what it was before; the next clean update
// trains again.
// SmallConfig's SAC (gradient_steps 3, update path `path`) on one Pendulum env, after 60
// rollout-and-update iterations: 10 training updates after learning_starts (50), 30 gradient
// steps. *env receives the env.
std::unique_ptr<Algorithm> WarmSmallSac(const char* path, std::unique_ptr<env::VecEnv>* env) {
  *env = env::MakeVecEnv("Pendulum-v1", 1, 0, 1);
  SacConfig config = SmallConfig();
  config.gradient_steps = 3;
  config.update_path = path;
  auto sac = MakeSac(config, (*env)->spec());
  (*env)->Reset();
  std::vector<EpisodeRecord> episodes;
  for (int t = 0; t < 60; ++t) {
    sac->CollectRollout(**env, &episodes);
    sac->Update(1.0);
  }
  return sac;
}

TEST(SacTest, NonFiniteUpdateLeavesModelAndEntropyCoefficientAsTheyWere) {
  for (const char* path : {"fused", "autograd"}) {
    SCOPED_TRACE(path);
    const std::string dir = FreshDir(std::string("guard_") + path);
    fs::create_directories(dir);
    std::unique_ptr<env::VecEnv> env;
    auto sac = WarmSmallSac(path, &env);
    auto bytes = [](const std::string& path) {
      std::ifstream in(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    sac->SaveCheckpoint(dir + "/before.pt");
    sac->InjectNonFiniteForTesting(1);
    sac->Update(1.0);
    EXPECT_EQ(sac->nonfinite_skips(), 3);
    sac->SaveCheckpoint(dir + "/after.pt");
    EXPECT_EQ(bytes(dir + "/after.pt"), bytes(dir + "/before.pt"));
    sac->Update(1.0);
    EXPECT_EQ(sac->nonfinite_skips(), 3);
    sac->SaveCheckpoint(dir + "/trained.pt");
    EXPECT_NE(bytes(dir + "/trained.pt"), bytes(dir + "/before.pt"));
  }
}

// The actor's own guard: a non-finite actor gradient after the critics' finite step skips the
// actor's step. The actor's parameters stay bitwise as they were, the critics moved (their step
// came first, SB3's order), each gradient step counts as skipped and losses/n_updates does not
// advance; the next clean update moves the actor again.
TEST(SacTest, NonFiniteActorGradientSkipsTheActorStep) {
  for (const char* path : {"fused", "autograd"}) {
    SCOPED_TRACE(path);
    std::unique_ptr<env::VecEnv> env;
    auto sac = WarmSmallSac(path, &env);  // 30 gradient steps so far
    auto n_updates = [](const Metrics& m) {
      for (const auto& [key, value] : m) {
        if (key == "losses/n_updates") return value;
      }
      return std::nan("");
    };
    // GetParameters: the actor, then both critics (Pendulum: 3 obs + 1 action in, [32, 32]).
    const size_t critics = 2 * ((3 + 1) * 32 + 32 + 32 * 32 + 32 + 32 + 1);
    const std::vector<float> before = sac->GetParameters();
    const size_t actor = before.size() - critics;
    sac->InjectNonFiniteActorForTesting(1);
    EXPECT_EQ(n_updates(sac->Update(1.0)), 30);
    EXPECT_EQ(sac->nonfinite_skips(), 3);
    const std::vector<float> after = sac->GetParameters();
    EXPECT_TRUE(std::equal(before.begin(), before.begin() + actor, after.begin()))
        << "the actor did not step";
    EXPECT_FALSE(std::equal(before.begin() + actor, before.end(), after.begin() + actor))
        << "the critics stepped";
    EXPECT_EQ(n_updates(sac->Update(1.0)), 33);
    EXPECT_EQ(sac->nonfinite_skips(), 3);
    const std::vector<float> trained = sac->GetParameters();
    EXPECT_FALSE(std::equal(after.begin(), after.begin() + actor, trained.begin()));
  }
}

// ---------------------------------------------------------------------------------------------
// update_path: fused runs the critics (forward, backward, and dQ/da for the actor's loss) as
// nn::FusedMlp and the actor as nn::FusedSquashedGaussianActor over the flat buffers (with an
// empty net_arch the actor stays on LibTorch), autograd runs LibTorch modules. From the same
// seed and the same replay data (64 HalfCheetah transitions: 17 observation and 6 action dims,
// so the action's columns of the critics' input gradient are told apart), four gradient steps
// leave both agents' parameters equal to float32 rounding, with and without gSDE, with a learned
// and a fixed entropy coefficient; the logged losses agree too.
TEST(SacTest, FusedUpdateMatchesAutograd) {
  struct Case {
    bool use_sde, learn_ent_coef;
    std::vector<int> net_arch;
  };
  const Case cases[] = {{false, true, {32, 32}}, {false, false, {32, 32}}, {true, true, {32, 32}},
                        {true, false, {32, 32}}, {false, true, {}},        {true, true, {}}};
  for (const Case& c : cases) {
    {
      const bool use_sde = c.use_sde, learn_ent_coef = c.learn_ent_coef;
      SCOPED_TRACE(std::string(use_sde ? "gSDE" : "Gaussian") +
                   (learn_ent_coef ? ", learned alpha" : ", fixed alpha") +
                   (c.net_arch.empty() ? ", net_arch []" : ""));
      std::vector<float> initial, params[2];
      std::vector<std::pair<std::string, double>> metrics[2];
      for (int k = 0; k < 2; ++k) {
        SacConfig config = SmallConfig(5);
        config.update_path = k == 0 ? "fused" : "autograd";
        config.net_arch = c.net_arch;
        config.use_sde = use_sde;
        config.log_std_init = -1.0;
        config.learn_ent_coef = learn_ent_coef;
        config.ent_coef_init = learn_ent_coef ? 1.0 : 0.2;
        config.n_envs = 2;
        config.train_freq = 32;
        config.gradient_steps = 4;
        auto env = env::MakeVecEnv("HalfCheetah-v4", 2, /*seed=*/3, 1);
        auto sac = MakeSac(config, env->spec());
        // What the run's summary reports as its update path.
        EXPECT_EQ(sac->UpdatePath(), k == 1               ? "autograd"
                                     : c.net_arch.empty() ? "fused critics, autograd actor"
                                                          : "fused");
        initial = sac->GetParameters();
        env->Reset();
        std::vector<EpisodeRecord> episodes;
        sac->CollectRollout(*env, &episodes);  // 64 env steps > learning_starts (50)
        metrics[k] = sac->Update(1.0);
        params[k] = sac->GetParameters();
      }
      ASSERT_EQ(params[0].size(), params[1].size());
      double moved = 0.0;
      for (size_t j = 0; j < params[0].size(); ++j) {
        ASSERT_NEAR(params[0][j], params[1][j], 2e-6 * std::max(1.0f, std::fabs(params[1][j])))
            << "parameter " << j;
        moved = std::max(moved, static_cast<double>(std::fabs(params[1][j] - initial[j])));
      }
      EXPECT_GT(moved, 1e-3);  // the four steps moved the parameters well beyond the tolerance
      ASSERT_EQ(metrics[0].size(), metrics[1].size());
      for (size_t m = 0; m < metrics[0].size(); ++m) {
        const double a = metrics[0][m].second, b = metrics[1][m].second;
        if (std::isnan(b)) {
          EXPECT_TRUE(std::isnan(a)) << metrics[0][m].first;
        } else {
          EXPECT_NEAR(a, b, 1e-5 * std::max(1.0, std::fabs(b))) << metrics[0][m].first;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// threads.update 2 runs the second critic's passes on a worker: the parameters and the metrics
// after three rollouts and updates equal one thread's bit for bit, with the fused actor, with
// gSDE, and with the LibTorch actor (net_arch []).
TEST(SacTest, TwoUpdateThreadsMatchOneBitForBit) {
  struct Case {
    bool use_sde;
    std::vector<int> net_arch;
  };
  for (const Case& c : {Case{false, {64, 64}}, Case{true, {64, 64}}, Case{false, {}}}) {
    SCOPED_TRACE(std::string(c.use_sde ? "gSDE" : "Gaussian") +
                 (c.net_arch.empty() ? ", net_arch []" : ""));
    std::vector<float> initial, params[2];
    std::vector<std::pair<std::string, double>> metrics[2];
    for (int k = 0; k < 2; ++k) {
      SacConfig config = SmallConfig(7);
      config.update_threads = k + 1;
      config.net_arch = c.net_arch;
      config.use_sde = c.use_sde;
      config.batch_size = 64;
      config.n_envs = 2;
      config.train_freq = 32;
      config.gradient_steps = 8;
      auto env = env::MakeVecEnv("HalfCheetah-v4", 2, /*seed=*/5, 1);
      auto sac = MakeSac(config, env->spec());
      initial = sac->GetParameters();
      env->Reset();
      std::vector<EpisodeRecord> episodes;
      for (int round = 0; round < 3; ++round) {
        sac->CollectRollout(*env, &episodes);  // 64 env steps a round; learning_starts 50
        metrics[k] = sac->Update(1.0);
        // The worker spins between updates from the first on; released (as the budget's
        // throttle does before it sleeps) it blocks until the next update, the results alike.
        EXPECT_EQ(sac->HasSpinningThreads(), k == 1);
        if (round == 1) sac->ReleaseSpinningThreads();
        EXPECT_EQ(sac->HasSpinningThreads(), k == 1 && round != 1);
      }
      params[k] = sac->GetParameters();
    }
    ASSERT_EQ(params[0].size(), params[1].size());
    size_t moved = 0;
    for (size_t j = 0; j < params[0].size(); ++j) {
      ASSERT_EQ(params[0][j], params[1][j]) << "parameter " << j;
      moved += params[1][j] != initial[j];
    }
    EXPECT_GT(moved, params[0].size() / 2);  // the updates changed most parameters
    ASSERT_EQ(metrics[0].size(), metrics[1].size());
    for (size_t m = 0; m < metrics[0].size(); ++m) {
      const double a = metrics[0][m].second, b = metrics[1][m].second;
      EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << metrics[0][m].first;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Checkpoint round trip: a second agent (another seed) that loads the first one's checkpoint
// has its parameters and acts identically; files for another algorithm or shape are refused.
// normalize: true, as SB3's SAC with VecNormalize: the replay buffer holds the raw obs, final_obs
// and rewards (OffPolicyAlgorithm._store_transition; read back from a resume checkpoint here),
// and sampled batches are normalised with the statistics current at the update
// (ReplayBuffer._get_samples): with statistics frozen, that equals storing the normalised
// values, bit for bit; with statistics that move, it differs.
TEST(SacTest, NormalizeStoresRawTransitionsAndNormalisesSampledBatches) {
  const std::string dir = FreshDir("normalize");
  fs::create_directories(dir);
  env::NormalizeVecEnv env(env::MakeVecEnv("Pendulum-v1", 1, 5, 1), env::NormalizeOptions{});
  SacConfig config = SmallConfig(3);
  auto sac = MakeSac(config, env.spec());
  sac->SetReplayNormalizer(&env);
  env.Reset();
  std::vector<float> obs, next_obs, rewards;
  std::vector<EpisodeRecord> episodes;
  for (int t = 0; t < 60; ++t) {
    obs.insert(obs.end(), env.raw_obs(), env.raw_obs() + 3);
    sac->CollectRollout(env, &episodes);
    sac->Update(1.0);
    next_obs.insert(next_obs.end(), env.raw_final_obs(), env.raw_final_obs() + 3);
    rewards.push_back(env.raw_reward()[0]);
    ASSERT_NE(env.reward()[0], env.raw_reward()[0]) << t;  // the env's own reward is scaled
  }
  const std::string path = dir + "/state.pt";
  sac->SaveTrainingState(path, /*replay_buffer=*/true, [](CheckpointWriter&) {});
  CheckpointReader r(path, "sac", "Pendulum-v1", /*format_version=*/1);  // sac.cc's
  ASSERT_EQ(r.Int("replay.size"), 60);
  std::vector<float> stored_obs(180), stored_next(180), stored_rewards(60);
  r.ReadFloats("replay.obs", stored_obs.data(), 180);
  r.ReadFloats("replay.next_obs", stored_next.data(), 180);
  r.ReadFloats("replay.rewards", stored_rewards.data(), 60);
  EXPECT_EQ(stored_obs, obs);
  EXPECT_EQ(stored_next, next_obs);
  EXPECT_EQ(stored_rewards, rewards);

  // Frozen statistics: the same run whether the buffer stores raw values normalised when sampled
  // or the normalised values themselves. Moving statistics: not the same run.
  const std::vector<double> stats = env.GetState();
  for (const bool frozen : {true, false}) {
    std::vector<std::vector<float>> params;
    for (const bool replay_normalizer : {true, false}) {
      env::NormalizeVecEnv e(env::MakeVecEnv("Pendulum-v1", 1, 8, 1), env::NormalizeOptions{});
      e.SetState(stats);
      e.set_training(!frozen);
      auto agent = MakeSac(config, e.spec());
      if (replay_normalizer) agent->SetReplayNormalizer(&e);
      e.Reset();
      for (int t = 0; t < 80; ++t) {
        agent->CollectRollout(e, &episodes);
        agent->Update(1.0);
      }
      params.push_back(agent->GetParameters());
    }
    if (frozen) {
      EXPECT_EQ(params[0], params[1]);
    } else {
      EXPECT_NE(params[0], params[1]);
    }
  }
}

// target_update_interval N counts as SB3's train() does: Polyak updates at gradient steps 0, N,
// 2N, ... of each update, from 0 again in the next. With tau 1 (a copy) the target critics equal
// the critics after an update exactly when its last gradient step g took one (g % N == 0): one
// step per update with N = 1000 copies every time (a run-wide count would never reach 1000); 3
// steps with N = 2 copy at g = 2; with N = 3 only at g = 0, which steps 1 and 2 then leave behind
// (a run-wide count would copy at the end of every update).
TEST(SacTest, TargetUpdateIntervalCountsGradientStepsOfEachUpdate) {
  const std::string dir = FreshDir("target_interval");
  fs::create_directories(dir);
  struct Case {
    int gradient_steps, interval;
    bool target_is_critic;
  };
  for (const Case& c : {Case{1, 1000, true}, Case{3, 2, true}, Case{3, 3, false}}) {
    SCOPED_TRACE(::testing::Message() << c.gradient_steps << " steps, N " << c.interval);
    auto env = env::MakeVecEnv("Pendulum-v1", 1, 0, 1);
    SacConfig config = SmallConfig();
    config.tau = 1.0;
    config.gradient_steps = c.gradient_steps;
    config.target_update_interval = c.interval;
    auto sac = MakeSac(config, env->spec());
    env->Reset();
    std::vector<EpisodeRecord> episodes;
    for (int t = 0; t < 60; ++t) {  // learning_starts 50: 10 updates
      sac->CollectRollout(*env, &episodes);
      sac->Update(1.0);
    }
    const std::string path = dir + "/sac.pt";
    sac->SaveCheckpoint(path);
    CheckpointReader r(path, "sac", "Pendulum-v1", 1);
    const int64_t n = 2 * ((3 + 1) * 32 + 32 + 32 * 32 + 32 + 32 + 1);  // both critics
    std::vector<float> critic(n), target(n);
    r.ReadFloats("critic", critic.data(), n);
    r.ReadFloats("critic_target", target.data(), n);
    EXPECT_EQ(critic == target, c.target_is_critic);
  }
}

TEST(SacTest, CheckpointRoundTrip) {
  const std::string dir = FreshDir("ckpt");
  fs::create_directories(dir);
  auto env = env::MakeVecEnv("Pendulum-v1", 1, 0, 1);
  auto sac = MakeSac(SmallConfig(0), env->spec());
  env->Reset();
  std::vector<EpisodeRecord> episodes;
  for (int t = 0; t < 80; ++t) {
    sac->CollectRollout(*env, &episodes);
    sac->Update(1.0);
  }
  const std::string path = dir + "/sac.pt";
  sac->SaveCheckpoint(path);
  auto other = MakeSac(SmallConfig(42), env->spec());
  EXPECT_NE(other->GetParameters(), sac->GetParameters());
  other->LoadCheckpoint(path);
  EXPECT_EQ(other->GetParameters(), sac->GetParameters());
  const float obs[] = {1.0f, 0.0f, 0.5f, -0.6f, 0.8f, -3.0f};
  float a1[2], a2[2];
  sac->ActContinuous(obs, 2, true, a1);
  other->ActContinuous(obs, 2, true, a2);
  EXPECT_EQ(a1[0], a2[0]);
  EXPECT_EQ(a1[1], a2[1]);
  // The replay buffer and the generators are not saved (sac.cc, "Checkpoint"), so training
  // resumed from the file is not compared step for step; the saved state is.

  SacConfig wide = SmallConfig();
  wide.net_arch = {64, 64};
  auto mismatched = MakeSac(wide, env->spec());
  EXPECT_THROW(mismatched->LoadCheckpoint(path), ConfigError);
  EXPECT_THROW(other->LoadCheckpoint(dir + "/missing.pt"), ConfigError);
  const std::vector<float> kept = other->GetParameters();
  { std::ofstream(dir + "/junk.pt") << "not a checkpoint"; }
  EXPECT_THROW(other->LoadCheckpoint(dir + "/junk.pt"), ConfigError);
  EXPECT_EQ(other->GetParameters(), kept);

  // gSDE: a round trip acts the same; an agent with and one without gSDE refuse each other's
  // files, naming use_sde.
  SacConfig sde = SmallConfig(5);
  sde.use_sde = true;
  auto sde_agent = MakeSac(sde, env->spec());
  sde_agent->SaveCheckpoint(dir + "/sde.pt");
  sde.seed = 6;
  auto sde_other = MakeSac(sde, env->spec());
  sde_other->LoadCheckpoint(dir + "/sde.pt");
  EXPECT_EQ(sde_other->GetParameters(), sde_agent->GetParameters());
  for (const auto& [agent, file] :
       {std::pair<Algorithm*, std::string>{sde_agent.get(), path},
        std::pair<Algorithm*, std::string>{other.get(), dir + "/sde.pt"}}) {
    try {
      agent->LoadCheckpoint(file);
      ADD_FAILURE() << "loaded " << file;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("use_sde"), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Trains `config` through train::Train, quietly, into a fresh temp dir named after `name`.
train::TrainResult TrainQuietly(const Config& config, const std::string& name) {
  train::TrainOptions options;
  options.out_dir = FreshDir(name);
  options.verbose = false;
  return train::Train(config, std::move(options));
}

// The last metrics.csv row's value of `key`; NaN and a test failure when there is no such column.
double LastRowValue(const std::vector<std::string>& header,
                    const std::vector<std::vector<double>>& rows, const std::string& key) {
  for (size_t k = 0; k < header.size(); ++k) {
    if (header[k] == key) return rows.back()[k];
  }
  ADD_FAILURE() << "no column " << key;
  return std::nan("");
}

// Smoke training of the preset through the trainer: a short run with finite metrics, and
// `greenrl eval`'s path (MakeAlgorithm + LoadCheckpoint) reproduces the final evaluation.
// Narrower networks and batches than the preset's [256, 256] x 256 keep it to seconds (each
// 256-wide gradient step is ~0.5 GFLOP); every other key is the preset's.
TEST(SacTest, PresetSmokeTraining) {
  const Config config =
      train::LoadRunConfig(Preset(),
                           {"n_timesteps=1200", "policy_kwargs.net_arch=[64, 64]", "batch_size=64",
                            "eval.final_episodes=2", "energy.meter=estimator"},
                           1);
  const train::TrainResult result = TrainQuietly(config, "smoke");
  const report::RunReport& r = result.report;
  EXPECT_EQ(r.steps, 1200);
  EXPECT_TRUE(std::isfinite(r.eval_mean_return));
  auto [header, rows] = report::ReadMetricsCsv(r.run_dir + "/metrics.csv");
  // log_interval 4 episodes (SB3's off-policy default) of 200 steps: a row at 800 and the last.
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], 800.0);
  EXPECT_EQ(rows[1][0], 1200.0);
  for (const std::string key :
       {"losses/qf1_loss", "losses/qf2_loss", "losses/qf_loss", "losses/actor_loss", "losses/alpha",
        "losses/alpha_loss", "losses/qf1_values", "losses/qf2_values", "charts/learning_rate"}) {
    EXPECT_TRUE(std::isfinite(LastRowValue(header, rows, key))) << key;
  }
  auto reloaded = train::MakeAlgorithm(config, env::FindEnvSpec("Pendulum-v1"));
  reloaded->LoadCheckpoint(result.checkpoint_path);
  const train::EvalResult e = train::EvaluatePolicy(*reloaded, "Pendulum-v1", 2, 1);
  EXPECT_NEAR(e.mean_return, r.eval_mean_return, 1e-6 * std::fabs(r.eval_mean_return));
}

// The gSDE preset (rl-zoo's MountainCarContinuous-v0) trains through the trainer with every
// key as rl-zoo's, for 2048 of its 5e4 steps: finite losses, a fixed alpha of 0.1, 64 gradient
// steps per 64 env steps, and eval reproduced from final.pt.
TEST(SacTest, SdePresetSmokeTraining) {
  const std::string preset = SourceTreeDir() + "/configs/sac/mountaincarcontinuous.yaml";
  const Config config = train::LoadRunConfig(
      preset, {"n_timesteps=2048", "eval.final_episodes=2", "energy.meter=estimator"}, 1);
  const train::TrainResult result = TrainQuietly(config, "sde_smoke");
  const report::RunReport& r = result.report;
  EXPECT_EQ(r.steps, 2048);
  EXPECT_TRUE(std::isfinite(r.eval_mean_return));
  auto [header, rows] = report::ReadMetricsCsv(r.run_dir + "/metrics.csv");
  ASSERT_FALSE(rows.empty());
  auto column = [&](const std::string& key) { return LastRowValue(header, rows, key); };
  EXPECT_EQ(column("losses/n_updates"), 2048.0);  // learning_starts 0: 32 per 32 env steps
  EXPECT_EQ(column("losses/alpha"), 0.1);  // the fixed value itself, not exp(log 0.1f) or a mean
  for (const std::string key : {"losses/qf_loss", "losses/actor_loss", "losses/qf1_values"}) {
    EXPECT_TRUE(std::isfinite(column(key))) << key;
  }
  auto reloaded = train::MakeAlgorithm(config, env::FindEnvSpec("MountainCarContinuous-v0"));
  reloaded->LoadCheckpoint(result.checkpoint_path);
  const train::EvalResult e = train::EvaluatePolicy(*reloaded, "MountainCarContinuous-v0", 2, 1);
  EXPECT_NEAR(e.mean_return, r.eval_mean_return, 1e-6 * std::fabs(r.eval_mean_return) + 1e-9);
}

}  // namespace
}  // namespace greenrl::algo
