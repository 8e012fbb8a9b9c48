// DQN: hand-computed TD targets (truncated vs terminated vs both, double DQN), the epsilon
// schedule, the number of target-network updates, the fused Huber-loss gradient and update
// against LibTorch autograd, checkpoint round trip and refusals, and a short smoke training of
// the CartPole preset.
#include "greenrl/algo/dqn.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>

#include "greenrl/algo/ppo.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/wrappers.h"
#include "greenrl/nn/flat_optim.h"

namespace greenrl::algo {
namespace {

// A counter env: obs = [steps since reset], reward 1 per step, terminated once the count reaches
// kTerminateAt, truncated by its TimeLimit at kLimit steps. Actions are ignored.
template <int kTerminateAt, int kLimit>
class CounterEnv {
 public:
  using Action = int64_t;
  static constexpr int kObsDim = 1;
  using StepResult = env::StepResult<kObsDim>;
  static const env::EnvSpec& Spec() {
    static const env::EnvSpec spec = [] {
      env::EnvSpec s;
      s.id = "Counter-v0";
      s.observation_space.low = {0.0f};
      s.observation_space.high = {1000.0f};
      s.observation_space.shape = {1};
      s.action_space = env::Discrete{2};
      s.max_episode_steps = kLimit;
      return s;
    }();
    return spec;
  }
  std::array<float, 1> Reset(uint64_t) { return Reset(); }
  std::array<float, 1> Reset() {
    t_ = 0;
    return {0.0f};
  }
  StepResult Step(Action) {
    ++t_;
    StepResult r;
    r.obs = {static_cast<float>(t_)};
    r.reward = 1.0;
    r.terminated = t_ >= kTerminateAt;
    r.truncated = t_ >= kLimit;
    return r;
  }

 private:
  int t_ = 0;
};

template <int kTerminateAt, int kLimit>
std::unique_ptr<env::VecEnv> MakeCounterVecEnv() {
  return std::make_unique<env::VecEnv>(
      std::make_unique<env::BatchedEnvOf<CounterEnv<kTerminateAt, kLimit>>>(1), /*seed=*/0,
      /*num_threads=*/1);
}

DqnConfig RandomOnlyConfig() {
  DqnConfig c;
  c.learning_starts = 1000000000;  // uniform random actions throughout, no training
  c.buffer_size = 1000;
  c.train_freq = 3;
  return c;
}

// ---------------------------------------------------------------------------------------------
// TD target, by hand: reward 1, gamma 0.5, Q_target(s', .) = [2, 4] for every row.
//   running:    1 + 0.5 * max(2, 4) = 3
//   truncated:  1 + 0.5 * 4         = 3  (bootstraps from the real final observation)
//   terminated: 1                        (no bootstrap)
//   both:       1                        (terminated wins; SB3 timeout = truncated and not
//   terminated)
// Double DQN with Q_online(s', .) = [5, 1]: a' = 0, so the bootstrap value is Q_target(s', 0) = 2:
//   running/truncated 1 + 0.5 * 2 = 2, terminated/both 1.
TEST(DqnTdTargetTest, HandComputedTruncatedTerminatedBothAndDoubleQ) {
  const float rewards[] = {1, 1, 1, 1};
  const uint8_t terminated[] = {0, 0, 1, 1};  // running, truncated, terminated, both
  const float next_q_target[] = {2, 4, 2, 4, 2, 4, 2, 4};
  const float next_q_online[] = {5, 1, 5, 1, 5, 1, 5, 1};
  float y[4];
  ComputeTdTargets(rewards, terminated, next_q_target, nullptr, 4, 2, 0.5, y);
  EXPECT_FLOAT_EQ(y[0], 3.0f);
  EXPECT_FLOAT_EQ(y[1], 3.0f);
  EXPECT_FLOAT_EQ(y[2], 1.0f);
  EXPECT_FLOAT_EQ(y[3], 1.0f);
  ComputeTdTargets(rewards, terminated, next_q_target, next_q_online, 4, 2, 0.5, y);
  EXPECT_FLOAT_EQ(y[0], 2.0f);
  EXPECT_FLOAT_EQ(y[1], 2.0f);
  EXPECT_FLOAT_EQ(y[2], 1.0f);
  EXPECT_FLOAT_EQ(y[3], 1.0f);
}

// The replay buffer, filled by CollectRollout from counter envs that end at their third step:
// by TimeLimit only, by termination only, and by both on the same step. The third transition
// keeps s' = [3] (the final observation, not the reset observation [0] the env already shows),
// with the flags kept apart; its TD target (gamma 0.5, Q_target(s', .) = [2, 4]) is 3 when only
// truncated and 1 otherwise.
template <int kTerminateAt, int kLimit>
void CheckThirdTransition(bool want_terminated, bool want_truncated, float want_target) {
  auto env = MakeCounterVecEnv<kTerminateAt, kLimit>();
  env->Reset();
  Dqn dqn(RandomOnlyConfig(), env->spec());
  std::vector<EpisodeRecord> episodes;
  EXPECT_EQ(dqn.CollectRollout(*env, &episodes), 3);
  EXPECT_EQ(env->obs()[0], 0.0f);  // autoreset happened
  ASSERT_EQ(episodes.size(), 1u);
  EXPECT_EQ(episodes[0].episode_length, 3);
  EXPECT_DOUBLE_EQ(episodes[0].episode_return, 3.0);
  const ReplayBuffer& rb = dqn.replay_buffer();
  ASSERT_EQ(rb.size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rb.obs(i)[0], static_cast<float>(i));
    EXPECT_EQ(rb.next_obs(i)[0], static_cast<float>(i + 1));
    EXPECT_EQ(rb.reward(i), 1.0f);
  }
  EXPECT_EQ(rb.terminated(0) + rb.terminated(1) + rb.truncated(0) + rb.truncated(1), 0);
  EXPECT_EQ(rb.terminated(2), want_terminated ? 1 : 0);
  EXPECT_EQ(rb.truncated(2), want_truncated ? 1 : 0);
  const float reward = rb.reward(2);
  const uint8_t terminated = rb.terminated(2);
  const float next_q_target[] = {2, 4};
  float y = 0;
  ComputeTdTargets(&reward, &terminated, next_q_target, nullptr, 1, 2, 0.5, &y);
  EXPECT_FLOAT_EQ(y, want_target);
}

TEST(DqnReplayTest, TruncatedKeepsFinalObsAndBootstraps) {
  CheckThirdTransition</*kTerminateAt=*/100, /*kLimit=*/3>(false, true, 3.0f);
}
TEST(DqnReplayTest, TerminatedDoesNotBootstrap) {
  CheckThirdTransition</*kTerminateAt=*/3, /*kLimit=*/100>(true, false, 1.0f);
}
TEST(DqnReplayTest, TerminatedAndTruncatedDoesNotBootstrap) {
  CheckThirdTransition</*kTerminateAt=*/3, /*kLimit=*/3>(true, true, 1.0f);
}

TEST(DqnReplayTest, RingOverwritesOldest) {
  ReplayBuffer rb(/*capacity=*/2, /*obs_dim=*/1, /*act_dim=*/1);
  for (int i = 0; i < 3; ++i) {
    const float o = static_cast<float>(i), next = o + 1;
    rb.AddDiscrete(&o, &next, i % 2, o, false, false);
  }
  EXPECT_EQ(rb.size(), 2);
  EXPECT_EQ(rb.pos(), 1);
  EXPECT_EQ(rb.obs(0)[0], 2.0f);  // the third transition replaced the first
  EXPECT_EQ(rb.obs(1)[0], 1.0f);
}

// ---------------------------------------------------------------------------------------------
// SB3's linear schedule. Defaults (1.0 -> 0.05 over 10%): 1.0 at the start, the midpoint of the
// decay (progress 0.05) is (1.0 + 0.05) / 2 = 0.525, 0.05 at progress 0.1 and after.
TEST(DqnEpsilonTest, EndsAndMidpoint) {
  EXPECT_DOUBLE_EQ(LinearEpsilon(1.0, 0.05, 0.1, 1.0), 1.0);
  EXPECT_NEAR(LinearEpsilon(1.0, 0.05, 0.1, 0.95), 0.525, 1e-12);
  EXPECT_NEAR(LinearEpsilon(1.0, 0.05, 0.1, 0.9), 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(LinearEpsilon(1.0, 0.05, 0.1, 0.5), 0.05);
  EXPECT_DOUBLE_EQ(LinearEpsilon(1.0, 0.05, 0.1, 0.0), 0.05);
  EXPECT_DOUBLE_EQ(LinearEpsilon(1.0, 0.05, 0.0, 1.0), 0.05);  // no decay window
}

// The CartPole preset (1.0 -> 0.04 over 16% of 5e4 steps = 8000 steps) inside the algorithm:
// after 4000 env steps (progress 0.08, the midpoint) epsilon is 0.52; after 8000, 0.04.
TEST(DqnEpsilonTest, PresetScheduleInsideRollouts) {
  auto env = env::MakeVecEnv("CartPole-v1", 1, 3, 1);
  env->Reset();
  DqnConfig c = RandomOnlyConfig();
  c.total_timesteps = 50000;
  c.exploration_fraction = 0.16;
  c.exploration_final_eps = 0.04;
  c.train_freq = 1000;
  c.buffer_size = 10000;
  Dqn dqn(c, env->spec());
  EXPECT_DOUBLE_EQ(dqn.exploration_rate(), 1.0);
  std::vector<EpisodeRecord> episodes;
  for (int i = 0; i < 4; ++i) dqn.CollectRollout(*env, &episodes);
  EXPECT_NEAR(dqn.exploration_rate(), 0.52, 1e-12);
  for (int i = 0; i < 4; ++i) dqn.CollectRollout(*env, &episodes);
  EXPECT_NEAR(dqn.exploration_rate(), 0.04, 1e-12);
  EXPECT_EQ(dqn.Update(0.8)[1].first, "charts/epsilon");
  EXPECT_NEAR(dqn.Update(0.8)[1].second, 0.04, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Target updates, counted in env steps across envs (see dqn.cc):
// - the preset's run (n_envs 1, train_freq 256, 196 rollouts = 50,176 steps, interval 10):
//   floor(50176 / 10) = 5017 updates;
// - n_envs 4, interval 10, 25 vec steps = 100 env steps: floor(100 / 10) = 10 updates (SB3
//   would do 25 / max(10 // 4, 1) = 12);
// - n_envs 3, interval 7, 10 vec steps = 30 env steps: floor(30 / 7) = 4 updates.
int64_t TargetUpdatesAfter(int n_envs, int train_freq, int rollouts, int64_t interval) {
  auto env = env::MakeVecEnv("CartPole-v1", n_envs, 1, 1);
  env->Reset();
  DqnConfig c = RandomOnlyConfig();
  c.n_envs = n_envs;
  c.train_freq = train_freq;
  c.target_update_interval = interval;
  c.buffer_size = 100000;
  Dqn dqn(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  int64_t steps = 0;
  for (int i = 0; i < rollouts; ++i) steps += dqn.CollectRollout(*env, &episodes);
  EXPECT_EQ(steps, static_cast<int64_t>(n_envs) * train_freq * rollouts);
  EXPECT_EQ(dqn.Update(0.5).back().first, "losses/target_updates");
  EXPECT_EQ(dqn.Update(0.5).back().second, static_cast<double>(dqn.target_updates()));
  return dqn.target_updates();
}

TEST(DqnTargetTest, UpdatesCountedInEnvSteps) {
  EXPECT_EQ(TargetUpdatesAfter(1, 256, 196, 10), 5017);
  EXPECT_EQ(TargetUpdatesAfter(4, 5, 5, 10), 10);
  EXPECT_EQ(TargetUpdatesAfter(3, 10, 1, 7), 4);
}

// The target copies the online network at an update, and stays put through gradient steps.
TEST(DqnTargetTest, HardUpdateCopiesOnlineNetwork) {
  auto env = env::MakeVecEnv("CartPole-v1", 1, 2, 1);
  env->Reset();
  DqnConfig c;
  c.learning_starts = 0;
  c.train_freq = 4;
  c.target_update_interval = 8;
  c.learning_rate = Schedule::Constant(1e-3);
  Dqn dqn(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  dqn.CollectRollout(*env, &episodes);  // 4 steps: no target update yet
  EXPECT_EQ(dqn.target_updates(), 0);
  const std::vector<float> initial = dqn.GetParameters();
  dqn.Update(1.0);
  EXPECT_NE(dqn.GetParameters(), initial);
  EXPECT_EQ(dqn.target_parameters(), initial);
  dqn.CollectRollout(*env, &episodes);  // 8 steps: one update
  EXPECT_EQ(dqn.target_updates(), 1);
  EXPECT_EQ(dqn.target_parameters(), dqn.GetParameters());
}

// threads.update 2 runs each gradient step as four two-way hand-offs (dqn.cc, TrainOnIndices):
// the preset's network ([256, 256], batch 64, 128 gradient steps per 256 env steps) trains to the
// same parameters as one thread up to float rounding (the target pass per minibatch, the norm in
// two parts), for DQN and double DQN; with two threads, runs repeat bit for bit.
double MeanAbsDiff(const std::vector<float>& a, const std::vector<float>& b);  // below

std::vector<float> TrainTwoUpdates(int threads, bool double_q) {
  auto env = env::MakeVecEnv("CartPole-v1", 1, 4, 1);
  env->Reset();
  DqnConfig c;
  c.learning_starts = 0;
  c.train_freq = 256;
  c.gradient_steps = 128;
  c.batch_size = 64;
  c.net_arch = {256, 256};
  c.learning_rate = Schedule::Constant(2.3e-3);
  c.max_grad_norm = 0.1;  // small enough to clip in the first update (split clipping exercised)
  c.double_q = double_q;
  c.update_threads = threads;
  Dqn dqn(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  for (int i = 0; i < 2; ++i) {
    dqn.CollectRollout(*env, &episodes);
    const Metrics& m = dqn.Update(1.0);
    EXPECT_EQ(m[5].second, 128.0 * (i + 1));  // losses/n_updates
    if (i == 0) {
      EXPECT_GT(m[4].second, 0.1);  // losses/grad_norm (mean): above max_grad_norm
    }
  }
  return dqn.GetParameters();
}

TEST(DqnThreadsTest, TwoUpdateThreadsMatchOne) {
  for (bool double_q : {false, true}) {
    const std::vector<float> one = TrainTwoUpdates(1, double_q);
    const std::vector<float> two = TrainTwoUpdates(2, double_q);
    const std::vector<float> other = TrainTwoUpdates(1, !double_q);
    // Mean, not max: Adam divides a near-zero gradient by its own tiny second moment, so a
    // rounding difference can move a single weight by about lr (2.3e-3) per step. Measured on an
    // AMD EPYC VM (OpenBLAS Zen kernels), double DQN: max 4.9e-3, mean 3.7e-6; against the other
    // mode (the test can tell): mean 3.0e-3.
    EXPECT_LT(MeanAbsDiff(one, two), 3e-5) << "double_q " << double_q;
    EXPECT_GT(MeanAbsDiff(one, other), 1e-3);  // the test can tell
    EXPECT_EQ(two, TrainTwoUpdates(2, double_q)) << "double_q " << double_q;
  }
}

// The numerical guard with two update threads: an update whose gradients are NaN skips every
// step and leaves the parameters as they were; the next one trains again.
TEST(DqnThreadsTest, GuardSkipsNonFiniteStepsWithTwoThreads) {
  auto env = env::MakeVecEnv("CartPole-v1", 1, 4, 1);
  env->Reset();
  DqnConfig c;
  c.learning_starts = 0;
  c.train_freq = 64;
  c.gradient_steps = 8;
  c.batch_size = 64;
  c.net_arch = {256, 256};
  c.update_threads = 2;
  Dqn dqn(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  dqn.CollectRollout(*env, &episodes);
  const std::vector<float> before = dqn.GetParameters();
  dqn.InjectNonFiniteForTesting(1);
  dqn.Update(1.0);
  EXPECT_EQ(dqn.nonfinite_skips(), 8);
  EXPECT_EQ(dqn.n_updates(), 0);
  EXPECT_EQ(dqn.GetParameters(), before);
  dqn.Update(1.0);
  EXPECT_EQ(dqn.nonfinite_skips(), 8);
  EXPECT_EQ(dqn.n_updates(), 8);
  EXPECT_NE(dqn.GetParameters(), before);
}

// ---------------------------------------------------------------------------------------------
// LibTorch reference: the same MLP as torch::nn::Linear layers viewing copies of the flat
// parameters (fused_mlp.h's layout is Linear's: W [out, in] then b [out] per layer).
struct TorchQNet {
  mutable std::vector<torch::nn::Linear> layers;  // forward() is non-const in LibTorch
  std::vector<torch::Tensor> parameters() const {
    std::vector<torch::Tensor> p;
    for (const auto& l : layers) {
      p.push_back(l->weight);
      p.push_back(l->bias);
    }
    return p;
  }
  TorchQNet(const std::vector<int>& sizes, const std::vector<float>& flat) {
    int64_t offset = 0;
    for (size_t l = 0; l + 1 < sizes.size(); ++l) {
      torch::nn::Linear lin(sizes[l], sizes[l + 1]);
      torch::NoGradGuard no_grad;
      const int64_t nw = static_cast<int64_t>(sizes[l]) * sizes[l + 1];
      lin->weight.copy_(torch::from_blob(const_cast<float*>(flat.data()) + offset,
                                         {sizes[l + 1], sizes[l]}, torch::kFloat32));
      offset += nw;
      lin->bias.copy_(torch::from_blob(const_cast<float*>(flat.data()) + offset, {sizes[l + 1]},
                                       torch::kFloat32));
      offset += sizes[l + 1];
      layers.push_back(lin);
    }
  }
  torch::Tensor forward(torch::Tensor x) const {
    for (size_t l = 0; l < layers.size(); ++l) {
      x = layers[l]->forward(x);
      if (l + 1 < layers.size()) x = torch::relu(x);
    }
    return x;
  }
  std::vector<float> Flat() const {
    std::vector<float> out;
    for (const auto& p : parameters()) {
      auto c = p.detach().contiguous();
      out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return out;
  }
  std::vector<float> FlatGrad() const {
    std::vector<float> out;
    for (const auto& p : parameters()) {
      auto c = p.grad().contiguous();
      out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return out;
  }
};

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    m = std::max(m, static_cast<double>(std::fabs(a[i] - b[i])));
  }
  return m;
}

double MeanAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double sum = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    sum += std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

double MaxAbs(const std::vector<float>& a) {
  double m = 0;
  for (float v : a) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

// Minibatch tensors from the replay buffer.
struct TorchBatch {
  torch::Tensor obs, next_obs, actions, rewards, terminated;
};
TorchBatch Gather(const ReplayBuffer& rb, const int64_t* idx, int b) {
  const int d = rb.obs_dim();
  TorchBatch t{torch::empty({b, d}), torch::empty({b, d}), torch::empty({b, 1}, torch::kInt64),
               torch::empty({b, 1}), torch::empty({b, 1})};
  for (int j = 0; j < b; ++j) {
    for (int k = 0; k < d; ++k) {
      t.obs[j][k] = rb.obs(idx[j])[k];
      t.next_obs[j][k] = rb.next_obs(idx[j])[k];
    }
    t.actions[j][0] = rb.discrete_action(idx[j]);
    t.rewards[j][0] = rb.reward(idx[j]);
    t.terminated[j][0] = static_cast<float>(rb.terminated(idx[j]));
  }
  return t;
}

// SB3's DQN.train step in LibTorch: returns the loss; leaves the gradients (after clipping) in
// the online network's .grad.
torch::Tensor ReferenceLoss(TorchQNet& online, const TorchQNet& target, const TorchBatch& t,
                            double gamma, bool double_q) {
  torch::Tensor y;
  {
    torch::NoGradGuard no_grad;
    torch::Tensor next_q_all = target.forward(t.next_obs);
    torch::Tensor next_q;
    if (double_q) {
      next_q = next_q_all.gather(1, online.forward(t.next_obs).argmax(1, /*keepdim=*/true));
    } else {
      next_q = std::get<0>(next_q_all.max(/*dim=*/1, /*keepdim=*/true));
    }
    y = t.rewards + (1 - t.terminated) * gamma * next_q;
  }
  torch::Tensor q = online.forward(t.obs).gather(1, t.actions);
  return torch::nn::functional::smooth_l1_loss(q, y);
}

DqnConfig GradCheckConfig(bool double_q) {
  DqnConfig c = RandomOnlyConfig();
  c.net_arch = {32, 32};
  c.batch_size = 16;
  c.buffer_size = 500;
  c.train_freq = 200;
  c.gamma = 0.9;
  c.max_grad_norm = 0.5;  // small enough that the clip acts
  c.double_q = double_q;
  c.seed = 7;
  return c;
}

// A DQN of GradCheckConfig(double_q) whose replay buffer holds one rollout (train_freq steps) of
// a CartPole env seeded env_seed, with that env.
struct FilledDqn {
  std::unique_ptr<env::VecEnv> env;
  DqnConfig config;
  std::unique_ptr<Dqn> dqn;
};
FilledDqn FillGradCheckDqn(bool double_q, uint64_t env_seed) {
  FilledDqn f;
  f.env = env::MakeVecEnv("CartPole-v1", 1, env_seed, 1);
  f.env->Reset();
  f.config = GradCheckConfig(double_q);
  f.dqn = std::make_unique<Dqn>(f.config, f.env->spec());
  std::vector<EpisodeRecord> episodes;
  f.dqn->CollectRollout(*f.env, &episodes);
  return f;
}

// Part 1: the fused Huber-loss gradient (HuberTdLossAndGrad + FusedMlp::Backward + ClipGradNorm)
// on one replay minibatch equals LibTorch autograd's, before and after clipping.
TEST(DqnGradientTest, FusedHuberBackwardMatchesAutograd) {
  const FilledDqn filled = FillGradCheckDqn(false, 4);
  const DqnConfig& c = filled.config;
  Dqn& dqn = *filled.dqn;
  const int b = c.batch_size;
  std::vector<int64_t> idx(b);
  Rng rng(5);
  for (auto& i : idx) i = static_cast<int64_t>(rng.Below(200));
  const ReplayBuffer& rb = dqn.replay_buffer();

  // Scale the parameters up so that some TD errors exceed 1 (both Huber branches are used).
  std::vector<float> params = dqn.GetParameters();
  for (float& p : params) p *= 3.0f;
  const std::vector<int> sizes = {4, 32, 32, 2};
  nn::MlpSpec spec{sizes, nn::Activation::kReLU};
  nn::FusedMlp mlp(spec, b);
  TorchQNet online(sizes, params), target(sizes, dqn.target_parameters());
  const TorchBatch t = Gather(rb, idx.data(), b);

  // Fused: targets from the target network, loss gradient, backward.
  std::vector<float> obs(b * 4), next_obs(b * 4), rewards(b), next_q_target(b * 2), y(b),
      grad_q(b * 2);
  std::vector<int64_t> actions(b);
  std::vector<uint8_t> terminated(b);
  for (int j = 0; j < b; ++j) {
    std::copy(rb.obs(idx[j]), rb.obs(idx[j]) + 4, &obs[j * 4]);
    std::copy(rb.next_obs(idx[j]), rb.next_obs(idx[j]) + 4, &next_obs[j * 4]);
    actions[j] = rb.discrete_action(idx[j]);
    rewards[j] = rb.reward(idx[j]);
    terminated[j] = rb.terminated(idx[j]);
  }
  const std::vector<float> target_params = dqn.target_parameters();
  const float* nq = mlp.Forward(target_params.data(), next_obs.data(), b);
  std::copy(nq, nq + b * 2, next_q_target.begin());
  ComputeTdTargets(rewards.data(), terminated.data(), next_q_target.data(), nullptr, b, 2, c.gamma,
                   y.data());
  const float* q = mlp.Forward(params.data(), obs.data(), b);
  int large = 0;
  for (int j = 0; j < b; ++j) large += std::fabs(q[j * 2 + actions[j]] - y[j]) >= 1.0f;
  EXPECT_GT(large, 0) << "no TD error on the linear branch of the Huber loss";
  EXPECT_LT(large, b) << "no TD error on the quadratic branch of the Huber loss";
  double mean_q = 0;
  const double loss = HuberTdLossAndGrad(q, actions.data(), y.data(), b, 2, grad_q.data(), &mean_q);
  std::vector<float> grads(params.size(), 0.0f);
  mlp.Backward(params.data(), grad_q.data(), grads.data());

  torch::Tensor ref_loss = ReferenceLoss(online, target, t, c.gamma, false);
  ref_loss.backward();
  EXPECT_NEAR(loss, ref_loss.item<double>(), 1e-5 * std::max(1.0, std::fabs(loss)));
  EXPECT_NEAR(mean_q, online.forward(t.obs).gather(1, t.actions).mean().item<double>(), 1e-4);
  const std::vector<float> ref_grads = online.FlatGrad();
  EXPECT_LT(MaxAbsDiff(grads, ref_grads), 1e-5 * std::max(1.0, MaxAbs(ref_grads)));

  const double norm = nn::ClipGradNorm(grads.data(), static_cast<int64_t>(grads.size()), 0.5);
  const double ref_norm = torch::nn::utils::clip_grad_norm_(online.parameters(), 0.5);
  EXPECT_NEAR(norm, ref_norm, 1e-5 * ref_norm);
  EXPECT_GT(norm, 0.5) << "the clip should act";
  EXPECT_LT(MaxAbsDiff(grads, online.FlatGrad()), 1e-6);
}

// Part 2: two gradient steps of Dqn::TrainOnIndices (plain and double DQN) against the LibTorch
// reference with torch::optim::Adam (eps 1e-8) from the same parameters and minibatches.
class DqnUpdateTest : public ::testing::TestWithParam<bool> {};

// Two TrainOnIndices steps of `dqn` (its buffer filled, 200 transitions) at lr 3e-3 against the
// LibTorch reference fed the same replay rows, after `prepare(idx, &batch)` (what the update is
// to see of them): the metrics and the parameters agree after each step.
void ExpectTwoStepsMatchLibTorch(Dqn& dqn, const DqnConfig& c, bool double_q,
                                 const std::function<void(const int64_t*, TorchBatch*)>& prepare) {
  const std::vector<int> sizes = {4, 32, 32, 2};
  TorchQNet online(sizes, dqn.GetParameters()), target(sizes, dqn.target_parameters());
  const double lr = 3e-3;
  torch::optim::Adam adam(online.parameters(), torch::optim::AdamOptions(lr).eps(1e-8));
  Rng rng(9);
  for (int step = 0; step < 2; ++step) {
    std::vector<int64_t> idx(c.batch_size);
    for (auto& i : idx) i = static_cast<int64_t>(rng.Below(200));
    const Metrics& m = dqn.TrainOnIndices(idx.data(), 1, lr);
    TorchBatch t = Gather(dqn.replay_buffer(), idx.data(), c.batch_size);
    prepare(idx.data(), &t);
    adam.zero_grad();
    torch::Tensor loss = ReferenceLoss(online, target, t, c.gamma, double_q);
    loss.backward();
    const double ref_norm = torch::nn::utils::clip_grad_norm_(online.parameters(), 0.5);
    adam.step();
    EXPECT_EQ(m[2].first, "losses/td_loss");
    EXPECT_NEAR(m[2].second, loss.item<double>(), 1e-5);
    EXPECT_EQ(m[4].first, "losses/grad_norm");
    EXPECT_NEAR(m[4].second, ref_norm, 1e-5 * ref_norm);
    EXPECT_LT(MaxAbsDiff(dqn.GetParameters(), online.Flat()), 2e-6) << "step " << step;
  }
  EXPECT_EQ(dqn.n_updates(), 2);
  EXPECT_EQ(dqn.target_parameters(), target.Flat());  // gradient steps leave the target alone
}

TEST_P(DqnUpdateTest, TwoStepsMatchLibTorch) {
  const bool double_q = GetParam();
  const FilledDqn filled = FillGradCheckDqn(double_q, 6);
  ExpectTwoStepsMatchLibTorch(*filled.dqn, filled.config, double_q,
                              [](const int64_t*, TorchBatch*) {});
}

// normalize: true, as SB3's DQN with VecNormalize: the replay buffer holds the raw obs, final_obs
// and rewards (OffPolicyAlgorithm._store_transition), and each sampled minibatch is normalised
// with the statistics current at the update (ReplayBuffer._get_samples). Two gradient steps match
// the LibTorch reference fed the raw minibatch normalised by SB3's formulas.
TEST_P(DqnUpdateTest, NormalizeStoresRawTransitionsAndNormalisesSampledBatches) {
  const bool double_q = GetParam();
  env::NormalizeVecEnv env(env::MakeVecEnv("CartPole-v1", 1, 6, 1), env::NormalizeOptions{});
  auto raw = env::MakeVecEnv("CartPole-v1", 1, 6, 1);  // the same seed: the raw trajectory
  env.Reset();
  raw->Reset();
  const DqnConfig c = GradCheckConfig(double_q);
  Dqn dqn(c, env.spec());
  dqn.SetReplayNormalizer(&env);
  std::vector<float> raw_obs(raw->obs(), raw->obs() + 4);
  std::vector<EpisodeRecord> episodes;
  dqn.CollectRollout(env, &episodes);
  const ReplayBuffer& rb = dqn.replay_buffer();
  ASSERT_EQ(rb.size(), 200);
  for (int64_t i = 0; i < rb.size(); ++i) {  // the raw env, driven by the stored actions
    raw->discrete_actions()[0] = rb.discrete_action(i);
    raw->Step();
    for (int k = 0; k < 4; ++k) {
      ASSERT_EQ(rb.obs(i)[k], raw_obs[k]) << i;
      ASSERT_EQ(rb.next_obs(i)[k], raw->final_obs()[k]) << i;
    }
    ASSERT_EQ(rb.reward(i), 1.0f) << i;  // CartPole's raw reward, not the scaled one
    raw_obs.assign(raw->obs(), raw->obs() + 4);
  }
  // [version, obs_dim, obs_count, obs_mean[4], obs_var[4], ret_count, ret_mean, ret_var]
  const std::vector<double> state = env.GetState();
  const auto normalise = [&](float x, int k) {
    return static_cast<float>(std::clamp(
        (static_cast<double>(x) - state[3 + k]) / std::sqrt(state[7 + k] + 1e-8), -10.0, 10.0));
  };
  ExpectTwoStepsMatchLibTorch(dqn, c, double_q, [&](const int64_t* idx, TorchBatch* t) {
    for (int j = 0; j < c.batch_size; ++j) {
      for (int k = 0; k < 4; ++k) {
        t->obs[j][k] = normalise(rb.obs(idx[j])[k], k);
        t->next_obs[j][k] = normalise(rb.next_obs(idx[j])[k], k);
      }
      t->rewards[j][0] = static_cast<float>(
          std::clamp(rb.reward(idx[j]) / std::sqrt(state[13] + 1e-8), -10.0, 10.0));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(PlainAndDouble, DqnUpdateTest, ::testing::Values(false, true));

// Several gradient steps in one TrainOnIndices call take the target network's Q(s', .) from one
// pass over the distinct transitions drawn (TargetForward); here 8 minibatches of 16 from 12
// transitions repeat each many times. The result equals one step per call, where each
// minibatch's next_obs go through the target network as drawn.
TEST_P(DqnUpdateTest, RepeatedDrawsInOneCallMatchOneStepPerCall) {
  const bool double_q = GetParam();
  DqnConfig c = GradCheckConfig(double_q);
  c.gradient_steps = 8;
  std::vector<std::unique_ptr<Dqn>> agents;
  for (int k = 0; k < 2; ++k) {
    auto env = env::MakeVecEnv("CartPole-v1", 1, 6, 1);
    env->Reset();
    agents.push_back(std::make_unique<Dqn>(c, env->spec()));
    std::vector<EpisodeRecord> episodes;
    agents.back()->CollectRollout(*env, &episodes);
  }
  Rng rng(11);
  std::vector<int64_t> idx(static_cast<size_t>(c.gradient_steps) * c.batch_size);
  for (auto& i : idx) i = static_cast<int64_t>(rng.Below(12));
  const double lr = 3e-3;
  const double loss = agents[0]->TrainOnIndices(idx.data(), c.gradient_steps, lr)[2].second;
  double loss_sum = 0.0;
  for (int k = 0; k < c.gradient_steps; ++k) {
    loss_sum += agents[1]
                    ->TrainOnIndices(idx.data() + static_cast<size_t>(k) * c.batch_size, 1, lr)[2]
                    .second;
  }
  EXPECT_NEAR(loss, loss_sum / c.gradient_steps, 1e-7);
  EXPECT_LT(MaxAbsDiff(agents[0]->GetParameters(), agents[1]->GetParameters()), 1e-6);
  EXPECT_GT(MaxAbsDiff(agents[0]->GetParameters(), agents[0]->target_parameters()), 1e-3);
}

// ---------------------------------------------------------------------------------------------
// Checkpoint: a DQN of another seed that loads it has the same online and target parameters and
// counters, and continues identically (same Adam state): both then collect the same greedy
// transitions (epsilon 0) and take the same gradient steps on them.
TEST(DqnCheckpointTest, RoundTripAndRefusals) {
  DqnConfig c;
  c.learning_starts = 0;
  c.exploration_initial_eps = 0.0;
  c.exploration_final_eps = 0.0;
  c.train_freq = 32;
  c.gradient_steps = 4;
  c.target_update_interval = 50;
  c.learning_rate = Schedule::Constant(1e-3);
  c.buffer_size = 1000;
  auto env = env::MakeVecEnv("CartPole-v1", 1, 5, 1);
  env->Reset();
  Dqn a(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  for (int i = 0; i < 3; ++i) {
    a.CollectRollout(*env, &episodes);
    a.Update(1.0);
  }
  const std::string path = ::testing::TempDir() + "/dqn_ckpt.pt";
  a.SaveCheckpoint(path);

  DqnConfig other_seed = c;
  other_seed.seed = 99;
  Dqn b(other_seed, env->spec());
  EXPECT_NE(b.GetParameters(), a.GetParameters());
  b.LoadCheckpoint(path);
  EXPECT_EQ(b.GetParameters(), a.GetParameters());
  EXPECT_EQ(b.target_parameters(), a.target_parameters());
  EXPECT_EQ(b.num_timesteps(), 96);
  EXPECT_EQ(b.n_updates(), a.n_updates());
  EXPECT_EQ(b.target_updates(), 1);

  auto env_a = env::MakeVecEnv("CartPole-v1", 1, 8, 1);
  auto env_b = env::MakeVecEnv("CartPole-v1", 1, 8, 1);
  env_a->Reset();
  env_b->Reset();
  const int64_t offset = a.replay_buffer().pos();  // b's buffer starts empty
  a.CollectRollout(*env_a, &episodes);
  b.CollectRollout(*env_b, &episodes);
  std::vector<int64_t> idx_a(c.batch_size * 2), idx_b(c.batch_size * 2);
  for (size_t j = 0; j < idx_a.size(); ++j) {
    idx_b[j] = static_cast<int64_t>((j * 7) % 32);
    idx_a[j] = offset + idx_b[j];
  }
  a.TrainOnIndices(idx_a.data(), 2, 1e-3);
  b.TrainOnIndices(idx_b.data(), 2, 1e-3);
  EXPECT_EQ(a.GetParameters(), b.GetParameters());

  DqnConfig wider = c;
  wider.net_arch = {32};
  Dqn mismatch(wider, env->spec());
  try {
    mismatch.LoadCheckpoint(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("net_arch"), std::string::npos) << e.what();
  }
  // A PPO checkpoint is refused by name.
  PpoConfig ppo_config;
  ppo_config.n_steps = 8;
  ppo_config.batch_size = 8;
  const std::string ppo_path = ::testing::TempDir() + "/ppo_for_dqn.pt";
  MakePpo(ppo_config, env->spec())->SaveCheckpoint(ppo_path);
  try {
    b.LoadCheckpoint(ppo_path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("written for ppo"), std::string::npos) << e.what();
  }
  const std::string garbage = ::testing::TempDir() + "/dqn_garbage.pt";
  std::ofstream(garbage) << "not a checkpoint";
  EXPECT_THROW(b.LoadCheckpoint(garbage), ConfigError);
  EXPECT_THROW(b.LoadCheckpoint(::testing::TempDir() + "/dqn_missing.pt"), ConfigError);
  std::remove(path.c_str());
  std::remove(ppo_path.c_str());
  std::remove(garbage.c_str());
}

// A resume without the replay buffer (checkpoint_replay_buffer: false) refills it before the
// updates go on, learning_starts (64) counted from the checkpoint's step (128); a checkpoint taken
// while it refills keeps the mark, with the buffer or without it.
TEST(DqnCheckpointTest, ResumeWithoutTheBufferRefillsItBeforeUpdating) {
  DqnConfig c;
  c.learning_starts = 64;
  c.train_freq = 32;
  c.gradient_steps = 4;
  c.buffer_size = 1000;
  auto env = env::MakeVecEnv("CartPole-v1", 1, 5, 1);
  env->Reset();
  Dqn a(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  for (int i = 0; i < 4; ++i) {  // updates after 96 and 128 (num_timesteps > 64)
    a.CollectRollout(*env, &episodes);
    a.Update(1.0);
  }
  ASSERT_EQ(a.n_updates(), 8);
  const std::string path = ::testing::TempDir() + "/dqn_refill.pt";
  a.SaveTrainingState(path, /*replay_buffer=*/false, {});
  Dqn b(c, env->spec());
  b.LoadTrainingState(path, {});
  EXPECT_EQ(b.replay_buffer().size(), 0);
  b.CollectRollout(*env, &episodes);  // 160: refilling
  b.Update(1.0);
  EXPECT_EQ(b.num_timesteps(), 160);
  EXPECT_EQ(b.n_updates(), 8);
  for (const bool with_buffer : {true, false}) {
    b.SaveTrainingState(path, with_buffer, {});
    Dqn resumed(c, env->spec());
    resumed.LoadTrainingState(path, {});
    EXPECT_EQ(resumed.replay_buffer().size(), with_buffer ? 32 : 0);
    // With the buffer, the mark stays 192; without it, it moves to 160 + 64 = 224.
    for (const int64_t step : {192, 224, 256}) {
      resumed.CollectRollout(*env, &episodes);
      resumed.Update(1.0);
      const bool updated = step > (with_buffer ? 192 : 224);
      EXPECT_EQ(resumed.n_updates(),
                updated ? 8 + 4 * ((step - (with_buffer ? 192 : 224)) / 32) : 8)
          << step << (with_buffer ? " with the buffer" : " without it");
    }
  }
  std::remove(path.c_str());
}

TEST(DqnConfigTest, RefusesBoxActions) {
  env::EnvSpec box = env::FindEnvSpec("CartPole-v1");
  box.action_space = env::Box{{-1.0f}, {1.0f}, {1}};
  try {
    MakeDqn(DqnConfig{}, box);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "env_id");
  }
}

// ---------------------------------------------------------------------------------------------
// The preset: its keys load against DQN's schema with rl-zoo's values, and 3,072 steps of it
// (the first 1,024 random, then 9 updates of 128 gradient steps) run with finite metrics.
Config LoadPreset(const std::vector<std::string>& overrides) {
  ConfigSchema schema;
  AddKey(&schema, "algo", ValueType::kString, "dqn", "algorithm");
  AddKey(&schema, "env_id", ValueType::kString, "CartPole-v1", "env");
  AddKey(&schema, "seed", ValueType::kInt, "0", "seed");
  AddKey(&schema, "n_envs", ValueType::kInt, "1", "envs", 1, 65536);
  AddKey(&schema, "n_timesteps", ValueType::kInt, "100000", "steps", 1, 1e12);
  AddDqnKeys(&schema);
  return Config::Load(schema, SourceTreeDir() + "/configs/dqn/cartpole.yaml", overrides);
}

TEST(DqnPresetTest, RlZooValues) {
  const DqnConfig c = DqnConfigFromConfig(LoadPreset({}));
  EXPECT_EQ(c.total_timesteps, 50000);
  EXPECT_EQ(c.n_envs, 1);
  EXPECT_DOUBLE_EQ(c.learning_rate.initial, 2.3e-3);
  EXPECT_EQ(c.learning_rate.kind, Schedule::Kind::kConstant);
  EXPECT_EQ(c.batch_size, 64);
  EXPECT_EQ(c.buffer_size, 100000);
  EXPECT_EQ(c.learning_starts, 1000);
  EXPECT_DOUBLE_EQ(c.gamma, 0.99);
  EXPECT_EQ(c.target_update_interval, 10);
  EXPECT_EQ(c.train_freq, 256);
  EXPECT_EQ(c.gradient_steps, 128);
  EXPECT_DOUBLE_EQ(c.exploration_fraction, 0.16);
  EXPECT_DOUBLE_EQ(c.exploration_final_eps, 0.04);
  EXPECT_DOUBLE_EQ(c.exploration_initial_eps, 1.0);
  EXPECT_DOUBLE_EQ(c.tau, 1.0);
  EXPECT_DOUBLE_EQ(c.max_grad_norm, 10.0);
  EXPECT_FALSE(c.double_q);
  EXPECT_EQ(c.net_arch, (std::vector<int>{256, 256}));
  EXPECT_EQ(c.activation, nn::Activation::kReLU);
}

TEST(DqnPresetTest, BadValuesNameTheKey) {
  try {
    LoadPreset({"exploration_final_eps=1.5"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "exploration_final_eps");
  }
  for (const char* bad : {"train_freq=0", "train_freq=[256, episode]"}) {
    try {
      LoadPreset({bad});
      FAIL() << "expected ConfigError for " << bad;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "train_freq");
      // SB3's tuple form is named: [n, "step"] is written n, the episode unit is not supported.
      EXPECT_NE(std::string(e.what()).find("an integer in [1, 16777216]; vec-env steps (SB3's "
                                           "[n, \"step\"] is written n; the episode unit is "
                                           "not supported)"),
                std::string::npos)
          << e.what();
    }
  }
  try {
    LoadPreset({"threads.update=3"});  // 1 or 2
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "threads.update");
  }
  try {
    DqnConfigFromConfig(LoadPreset({"policy_kwargs.activation_fn=gelu"}));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "policy_kwargs.activation_fn");
  }
}

TEST(DqnPresetTest, SmokeTrainingIsFinite) {
  DqnConfig c = DqnConfigFromConfig(LoadPreset({"n_timesteps=3000"}));
  auto env = env::MakeVecEnv("CartPole-v1", c.n_envs, 0, 1);
  env->Reset();
  auto dqn = MakeDqn(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  int64_t steps = 0;
  int updates = 0;
  while (steps < c.total_timesteps) {
    steps += dqn->CollectRollout(*env, &episodes);
    const Metrics& m = dqn->Update(ProgressRemaining(steps, c.total_timesteps));
    ASSERT_EQ(m.size(), 7u);
    if (steps > c.learning_starts) {
      ++updates;
      for (const auto& [key, value] : m) EXPECT_TRUE(std::isfinite(value)) << key;
      EXPECT_EQ(m[5].second, 128.0 * updates);  // losses/n_updates
    } else {
      EXPECT_TRUE(std::isnan(m[2].second));  // no td_loss before learning starts
    }
  }
  EXPECT_EQ(steps, 3072);
  EXPECT_EQ(updates, 9);  // rollouts ending at 1024, 1280, ..., 3072 (> learning_starts 1000)
  EXPECT_FALSE(episodes.empty());
  for (float p : dqn->GetParameters()) ASSERT_TRUE(std::isfinite(p));
  // The one-row acting path (sgemv) picks the same greedy actions as the batched one (sgemm).
  const auto* trained = static_cast<const Dqn*>(dqn.get());
  const int rows = 200;
  std::vector<float> obs;
  for (int i = 0; i < rows; ++i) {
    const float* o = trained->replay_buffer().obs(i * 13);
    obs.insert(obs.end(), o, o + 4);
  }
  std::vector<int64_t> batched(rows), single(rows);
  dqn->Act(obs.data(), rows, /*deterministic=*/true, batched.data());
  int ones = 0;
  for (int i = 0; i < rows; ++i) {
    dqn->Act(&obs[i * 4], 1, /*deterministic=*/true, &single[i]);
    ones += single[i] == 1;
  }
  EXPECT_EQ(single, batched);
  EXPECT_GT(ones, 0);
  EXPECT_LT(ones, rows);
}

}  // namespace
}  // namespace greenrl::algo
