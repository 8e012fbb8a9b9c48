// policy_export_test: `greenrl export`'s TorchScript module (policy_export.h). A hand-built policy
// gives hand-computed actions; for each algorithm a short training run's exported module, loaded
// with torch::jit::load, takes the actions the agent itself takes in evaluation, step by step on
// the raw observations of an evaluation env (normalisation inside the module).
#include "greenrl/train/policy_export.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "greenrl/core/install_paths.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/wrappers.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trained_agent.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train {
namespace {

std::string FreshDir(const std::string& name) {
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("greenrl_policy_export_test_" + std::to_string(::getpid()) + "_" + name))
          .string();
  std::filesystem::remove_all(dir);
  return dir;
}

torch::Tensor Rows(const float* data, int64_t rows, int64_t cols) {
  return torch::from_blob(const_cast<float*>(data), {rows, cols}, torch::kFloat32).clone();
}

// A two-layer tanh policy with hand-set weights over a 3-D observation.
algo::DeterministicPolicy HandPolicy(algo::PolicyHead head) {
  algo::DeterministicPolicy p;
  p.algo = "ppo";
  p.obs_dim = 3;  // Pendulum-v1's
  p.action_dim = head == algo::PolicyHead::kArgmax ? 2 : 1;
  algo::DenseLayer hidden{3, 2, {1, 0, 0, 0, 1, 0}, {0.0f, 0.5f}};  // h = tanh([x0, x1 + 0.5])
  algo::DenseLayer out{2, p.action_dim, {}, {}};
  if (p.action_dim == 2) {
    out.weight = {1, 0, 0, 1};  // y = h
    out.bias = {0, 0};
  } else {
    out.weight = {2, -1};  // y = 2 h0 - h1 + 0.25
    out.bias = {0.25f};
  }
  p.layers = {hidden, out};
  p.activation = nn::Activation::kTanh;
  p.head = head;
  if (head != algo::PolicyHead::kArgmax) {
    p.low = {-2.0f};
    p.high = {2.0f};
  }
  return p;
}

// Hand-computed forward values: tanh MLP, each head, a 1-D observation, and VecNormalize's
// transform (mean, var, epsilon, clip) computed in float64.
TEST(PolicyExportTest, HandBuiltPolicyGivesHandComputedActions) {
  const std::string dir = FreshDir("hand");
  std::filesystem::create_directories(dir);
  const torch::Tensor obs = torch::tensor({{0.3f, -0.1f, 9.0f}, {-1.0f, 2.0f, 0.0f}});
  const double h00 = std::tanh(0.3), h01 = std::tanh(0.4), h10 = std::tanh(-1.0),
               h11 = std::tanh(2.5);

  ExportTorchScriptPolicy(HandPolicy(algo::PolicyHead::kArgmax), nullptr, {"Pendulum-v1", "hand"},
                          dir + "/argmax.pt");
  torch::jit::Module argmax = torch::jit::load(dir + "/argmax.pt");
  const torch::Tensor a = argmax.forward({obs}).toTensor();
  ASSERT_EQ(a.scalar_type(), torch::kInt64);
  EXPECT_EQ(a[0].item<int64_t>(), 1);  // tanh(0.3) < tanh(0.4)
  EXPECT_EQ(a[1].item<int64_t>(), 1);
  EXPECT_EQ(argmax.forward({obs[0]}).toTensor().dim(), 0);  // 1-D obs: one action
  EXPECT_EQ(argmax.attr("head").toStringRef(), "argmax");
  EXPECT_FALSE(argmax.attr("normalize").toBool());

  ExportTorchScriptPolicy(HandPolicy(algo::PolicyHead::kClipToBox), nullptr,
                          {"Pendulum-v1", "hand"}, dir + "/clip.pt");
  const torch::Tensor c = torch::jit::load(dir + "/clip.pt").forward({obs}).toTensor();
  ASSERT_EQ(c.sizes(), (std::vector<int64_t>{2, 1}));
  EXPECT_NEAR(c[0][0].item<float>(), 2 * h00 - h01 + 0.25, 1e-6);  // 0.4530...
  EXPECT_FLOAT_EQ(c[1][0].item<float>(), -2.0f);  // 2 tanh(-1) - tanh(2.5) + 0.25 = -2.26, clipped

  ExportTorchScriptPolicy(HandPolicy(algo::PolicyHead::kTanhToBox), nullptr,
                          {"Pendulum-v1", "hand"}, dir + "/tanh.pt");
  const torch::Tensor t = torch::jit::load(dir + "/tanh.pt").forward({obs}).toTensor();
  EXPECT_NEAR(t[0][0].item<float>(), 2 * std::tanh(2 * h00 - h01 + 0.25), 1e-6);
  EXPECT_NEAR(t[1][0].item<float>(), 2 * std::tanh(2 * h10 - h11 + 0.25), 1e-6);

  // gSDE's clip_mean: the mean is clamped to [-0.5, 0.5] before tanh.
  algo::DeterministicPolicy sde = HandPolicy(algo::PolicyHead::kTanhToBox);
  sde.clip_mean = 0.5;
  ExportTorchScriptPolicy(sde, nullptr, {"Pendulum-v1", "hand"}, dir + "/sde.pt");
  const torch::Tensor s = torch::jit::load(dir + "/sde.pt").forward({obs}).toTensor();
  EXPECT_NEAR(s[0][0].item<float>(), 2 * std::tanh(2 * h00 - h01 + 0.25), 1e-6);  // 0.45 < 0.5
  EXPECT_NEAR(s[1][0].item<float>(), 2 * std::tanh(-0.5), 1e-6);

  // Normalisation: z = clip((x - mean) / sqrt(var + eps), -clip_obs, clip_obs).
  NormalizerSnapshot n;
  n.options.epsilon = 1e-8;
  n.options.clip_obs = 5.0;
  n.state = {1.0, 3.0, 100.0, 0.1, 1.0, 0.0, 4.0, 0.25, 1e-4, 1.0, 0.0, 1.0};
  ExportTorchScriptPolicy(HandPolicy(algo::PolicyHead::kClipToBox), &n, {"Pendulum-v1", "hand"},
                          dir + "/norm.pt");
  torch::jit::Module norm = torch::jit::load(dir + "/norm.pt");
  EXPECT_TRUE(norm.attr("normalize").toBool());
  const torch::Tensor z = norm.run_method("normalize_obs", obs).toTensor();
  EXPECT_FLOAT_EQ(z[0][0].item<float>(),
                  static_cast<float>((double{0.3f} - 0.1) / std::sqrt(4.0 + 1e-8)));
  EXPECT_FLOAT_EQ(z[0][1].item<float>(),
                  static_cast<float>((double{-0.1f} - 1.0) / std::sqrt(0.25 + 1e-8)));
  EXPECT_FLOAT_EQ(z[0][2].item<float>(), 5.0f);  // 9 / sqrt(1e-4 + 1e-8) = 900, clipped to 5
  EXPECT_FLOAT_EQ(z[1][1].item<float>(), static_cast<float>(1.0 / std::sqrt(0.25 + 1e-8)));

  // A wrong observation size names what the policy takes.
  try {
    argmax.forward({torch::zeros({2, 4})});
    ADD_FAILURE() << "accepted obs of 4 values";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("obs must have 3 values in its last dimension"),
              std::string::npos)
        << e.what();
  }
  // Statistics for another obs_dim are refused by name.
  n.state.resize(8);
  EXPECT_THROW(ExportTorchScriptPolicy(HandPolicy(algo::PolicyHead::kArgmax), &n,
                                       {"Pendulum-v1", "hand"}, dir + "/bad.pt"),
               ConfigError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad.pt"));
  std::filesystem::remove_all(dir);
}

// Trains `preset` briefly, loads the run as `greenrl export` does, exports it, and steps an
// evaluation env with the agent's deterministic actions, comparing the loaded module's actions
// on the raw observations at every step (and its normalize_obs with the wrapper's observations).
void ExpectExportActsAsTheAgent(const std::string& name, const std::string& preset,
                                const std::vector<std::string>& overrides) {
  const std::string dir = FreshDir(name);
  const Config config = LoadRunConfig(SourceTreeDir() + "/configs/" + preset, overrides, 3);
  TrainOptions options;
  options.out_dir = dir;
  options.verbose = false;
  Train(config, std::move(options));

  TrainedAgent agent = LoadTrainedAgent(dir);
  const std::string env_id = agent.config.GetString("env_id");
  const algo::DeterministicPolicy policy = agent.algorithm->ExportDeterministicPolicy();
  const std::string path = dir + "/policy.torchscript.pt";
  ExportTorchScriptPolicy(policy, agent.normalizer ? &*agent.normalizer : nullptr,
                          {env_id, agent.checkpoint}, path);
  torch::jit::Module module = torch::jit::load(path);
  EXPECT_EQ(module.attr("algo").toStringRef(), agent.config.GetString("algo"));
  EXPECT_EQ(module.attr("env_id").toStringRef(), env_id);
  EXPECT_EQ(module.attr("checkpoint").toStringRef(), dir + "/checkpoints/final.pt");
  EXPECT_EQ(module.attr("action_space").toStringRef(),
            env::FormatSpace(env::FindEnvSpec(env_id).action_space));
  EXPECT_EQ(module.attr("normalize").toBool(), agent.config.GetBool("normalize"));

  const int n = 8;
  std::unique_ptr<env::VecEnv> env = env::MakeVecEnv(env_id, n, 11, 1);
  const env::VecEnv* raw = env.get();
  if (agent.normalizer) {
    auto wrapped =
        std::make_unique<env::NormalizeVecEnv>(std::move(env), agent.normalizer->options);
    wrapped->SetState(agent.normalizer->state);
    wrapped->set_training(false);
    env = std::move(wrapped);
  }
  env->Reset();
  const int obs_dim = policy.obs_dim;
  const bool discrete = policy.head == algo::PolicyHead::kArgmax;
  int compared = 0, close_calls = 0;
  double max_diff = 0.0;
  for (int step = 0; step < 300; ++step) {
    const torch::Tensor raw_obs = Rows(raw->obs(), n, obs_dim);
    if (agent.normalizer) {
      const torch::Tensor z = module.run_method("normalize_obs", raw_obs).toTensor();
      ASSERT_TRUE(torch::equal(z, Rows(env->obs(), n, obs_dim))) << name << " step " << step;
    }
    const torch::Tensor a = module.forward({raw_obs}).toTensor();
    if (discrete) {
      agent.algorithm->Act(env->obs(), n, true, env->discrete_actions());
      const torch::Tensor y = module.run_method("net", raw_obs).toTensor();
      for (int i = 0; i < n; ++i) {
        const int64_t want = env->discrete_actions()[i];
        const int64_t got = a[i].item<int64_t>();
        // float32 rounding may only decide between actions whose values are within 1e-5.
        const torch::Tensor sorted = std::get<0>(y[i].sort(0, /*descending=*/true));
        if (sorted[0].item<float>() - sorted[1].item<float>() < 1e-5f) {
          ++close_calls;
        } else {
          EXPECT_EQ(got, want) << name << " step " << step << " row " << i;
        }
        ++compared;
      }
    } else {
      agent.algorithm->ActContinuous(env->obs(), n, true, env->continuous_actions());
      const int act_dim = policy.action_dim;
      const torch::Tensor want = Rows(env->continuous_actions(), n, act_dim);
      ASSERT_EQ(a.sizes(), want.sizes());
      max_diff = std::max(max_diff, (a - want).abs().max().item<double>());
      compared += n;
    }
    env->Step();
  }
  EXPECT_EQ(compared, 300 * n);
  EXPECT_LE(close_calls, 3) << name;
  // Box actions: float32 rounding of the same formulas (tanh, BLAS against torch.linear).
  EXPECT_LE(max_diff, 1e-5) << name;
  std::filesystem::remove_all(dir);
}

TEST(PolicyExportTest, PpoCartPoleActsAsTheAgent) {
  ExpectExportActsAsTheAgent(
      "ppo_cartpole", "ppo/cartpole.yaml",
      {"n_timesteps=2048", "eval.final_episodes=1", "energy.meter=estimator"});
}

// gSDE, VecNormalize (obs and reward) and actions clipped to the Box.
TEST(PolicyExportTest, PpoPendulumWithNormalizationActsAsTheAgent) {
  ExpectExportActsAsTheAgent(
      "ppo_pendulum", "ppo/pendulum.yaml",
      {"n_timesteps=4096", "normalize=true", "eval.final_episodes=1", "energy.meter=estimator"});
}

TEST(PolicyExportTest, DqnCartPoleActsAsTheAgent) {
  ExpectExportActsAsTheAgent(
      "dqn_cartpole", "dqn/cartpole.yaml",
      {"n_timesteps=2000", "learning_starts=500", "train_freq=64", "gradient_steps=8",
       "eval.final_episodes=1", "energy.meter=estimator"});
}

TEST(PolicyExportTest, SacPendulumActsAsTheAgent) {
  ExpectExportActsAsTheAgent(
      "sac_pendulum", "sac/pendulum.yaml",
      {"n_timesteps=600", "learning_starts=200", "policy_kwargs.net_arch=[64, 64]", "batch_size=64",
       "eval.final_episodes=1", "energy.meter=estimator"});
}

// gSDE with clip_mean (rl-zoo's MountainCarContinuous preset).
TEST(PolicyExportTest, SacSdeMountainCarActsAsTheAgent) {
  ExpectExportActsAsTheAgent(
      "sac_sde", "sac/mountaincarcontinuous.yaml",
      {"n_timesteps=512", "eval.final_episodes=1", "energy.meter=estimator"});
}

}  // namespace
}  // namespace greenrl::train
