// PPO on a CUDA device (the autograd path on the GPU, with and without the CUDA graph, and
// fp16/bf16 autocast with the loss scaler) against the CPU fused path, plus the `device` and
// `update_path` config rules. The GPU tests need a CUDA build of LibTorch and a GPU (README,
// section GPU); on a CPU-only build they report themselves skipped and the config tests run.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "greenrl/algo/ppo.h"
#include "greenrl/core/errors.h"
#include "greenrl/env/registry.h"
#include "greenrl/precision/autocast.h"

namespace greenrl::algo {
namespace {

#define GREENRL_REQUIRE_CUDA() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device in this build"

PpoConfig SmallConfig(const std::string& device, bool graph) {
  PpoConfig c;
  c.n_envs = 4;
  c.n_steps = 64;
  c.batch_size = 64;  // 4 minibatches x 3 epochs = 12 steps per update: warm-up 3, then graph
  c.n_epochs = 3;
  c.gamma = 0.98;
  c.gae_lambda = 0.8;
  c.learning_rate = Schedule::Linear(1e-3);
  c.clip_range = Schedule::Linear(0.2);
  c.ent_coef = 0.01;
  c.update_path = device == "cpu" ? "fused" : "autograd";
  c.device = device;
  c.cuda_graph = graph;
  c.seed = 3;
  return c;
}

struct RunResult {
  std::vector<float> params;
  std::vector<Metrics> metrics;
};

RunResult Train(const PpoConfig& c, int iterations) {
  auto env = env::MakeVecEnv("CartPole-v1", c.n_envs, 11, 1);
  env->Reset();
  auto ppo = MakePpo(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  RunResult r;
  for (int it = 0; it < iterations; ++it) {
    ppo->CollectRollout(*env, &episodes);
    r.metrics.push_back(ppo->Update(ProgressRemaining(256 * (it + 1), 1024)));
  }
  r.params = ppo->GetParameters();
  return r;
}

double MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
  return d;
}

// The GPU update (eager) and the CPU fused update agree on every parameter and metric after
// two iterations from the same seed (float32 on both; cuBLAS without TF32, LibTorch's default).
TEST(PpoCudaTest, EagerGpuUpdateMatchesCpuFused) {
  GREENRL_REQUIRE_CUDA();
  const RunResult cpu = Train(SmallConfig("cpu", false), 2);
  const RunResult gpu = Train(SmallConfig("cuda", false), 2);
  ASSERT_EQ(cpu.params.size(), gpu.params.size());
  EXPECT_LT(MaxDiff(cpu.params, gpu.params), 2e-5);
  for (size_t k = 0; k < cpu.metrics[1].size(); ++k) {
    EXPECT_NEAR(cpu.metrics[1][k].second, gpu.metrics[1][k].second,
                1e-4 * std::max(1.0, std::fabs(cpu.metrics[1][k].second)))
        << cpu.metrics[1][k].first;
  }
}

// Replaying the captured minibatch step gives what eager execution gives (3 iterations: 36
// steps, 33 of them replays).
TEST(PpoCudaTest, GraphReplayMatchesEager) {
  GREENRL_REQUIRE_CUDA();
  const RunResult eager = Train(SmallConfig("cuda", false), 3);
  const RunResult graph = Train(SmallConfig("cuda", true), 3);
  EXPECT_LT(MaxDiff(eager.params, graph.params), 1e-6);
  for (size_t k = 0; k < eager.metrics[2].size(); ++k) {
    EXPECT_NEAR(eager.metrics[2][k].second, graph.metrics[2][k].second,
                1e-5 * std::max(1.0, std::fabs(eager.metrics[2][k].second)))
        << eager.metrics[2][k].first;
  }
}

// fp16 autocast with the loss scaler (ATen's _amp_ ops on CUDA), inside the graph: finite
// parameters close to the fp32 run, a scale that is a power of two, no more than 65536.
TEST(PpoCudaTest, Fp16WithLossScalerAndBf16StayCloseToFp32) {
  GREENRL_REQUIRE_CUDA();
  const RunResult fp32 = Train(SmallConfig("cuda", true), 1);
  for (auto precision : {precision::Precision::kFp16, precision::Precision::kBf16}) {
    PpoConfig c = SmallConfig("cuda", true);
    c.precision = precision;
    c.grad_scaler.enabled = precision == precision::Precision::kFp16;
    const RunResult low = Train(c, 1);
    for (float p : low.params) ASSERT_TRUE(std::isfinite(p));
    // 12 Adam steps of at most lr ~ 1e-3 each bound how far the runs can drift apart.
    EXPECT_LT(MaxDiff(fp32.params, low.params), 12 * 1e-3 * 1.01) << precision::ToString(precision);
    const Metrics& m = low.metrics[0];
    for (const auto& [key, value] : m) EXPECT_TRUE(std::isfinite(value)) << key;
    double scale = 0;
    for (const auto& [key, value] : m) {
      if (key == "charts/loss_scale") scale = value;
    }
    if (precision == precision::Precision::kFp16) {
      EXPECT_LE(scale, 65536.0);
      EXPECT_EQ(std::exp2(std::round(std::log2(scale))), scale);
    } else {
      EXPECT_EQ(scale, 1.0);
    }
  }
}

// Under CUDA fp16 autocast a Linear computes in fp16 while its weight and gradient stay fp32.
TEST(PpoCudaTest, CudaAutocastKeepsMasterWeightsFp32) {
  GREENRL_REQUIRE_CUDA();
  torch::nn::Linear linear(4, 3);
  linear->to(torch::kCUDA);
  auto x = torch::randn({5, 4}, torch::kCUDA);
  torch::Tensor y;
  {
    precision::AutocastScope scope(precision::Precision::kFp16, precision::AutocastDevice::kCuda);
    y = linear->forward(x);
  }
  EXPECT_EQ(y.scalar_type(), torch::kHalf);
  y.to(torch::kFloat32).sum().backward();
  EXPECT_EQ(linear->weight.scalar_type(), torch::kFloat32);
  EXPECT_EQ(linear->weight.grad().scalar_type(), torch::kFloat32);
}

Config LoadPpoConfig(const std::vector<std::string>& sets) {
  ConfigSchema schema;
  AddPpoKeys(&schema);
  AddKey(&schema, "n_envs", ValueType::kInt, "1", "envs", 1, 1 << 20);
  AddKey(&schema, "seed", ValueType::kInt, "0", "seed", 0, 1e15);
  return Config::Load(schema, "", sets);
}

TEST(PpoDeviceConfigTest, DeviceAndUpdatePathRules) {
  const bool cuda = torch::cuda::is_available();
  const PpoConfig automatic = PpoConfigFromConfig(LoadPpoConfig({"device=auto"}));
  EXPECT_EQ(automatic.device, cuda ? "cuda" : "cpu");
  EXPECT_EQ(automatic.update_path, cuda ? "autograd" : "fused");
  EXPECT_EQ(PpoConfigFromConfig(LoadPpoConfig({})).update_path, "fused");
  const PpoConfig bf16 = PpoConfigFromConfig(LoadPpoConfig({"precision=bf16"}));
  EXPECT_EQ(bf16.precision, precision::Precision::kBf16);
  EXPECT_EQ(bf16.update_path, "autograd");  // auto: the fused path is float32 only
  // ... and the run reports the path that runs.
  EXPECT_EQ(MakePpo(bf16, env::FindEnvSpec("CartPole-v1"))->UpdatePath(), "autograd, bf16");
  EXPECT_EQ(MakePpo(PpoConfigFromConfig(LoadPpoConfig({})), env::FindEnvSpec("CartPole-v1"))
                ->UpdatePath(),
            "fused");
  try {
    PpoConfigFromConfig(LoadPpoConfig({"precision=bf16", "update_path=fused"}));
    ADD_FAILURE() << "the fused path is float32 only";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "update_path");
    EXPECT_NE(std::string(e.what()).find("autograd or auto with precision bf16"), std::string::npos)
        << e.what();
  }
  for (const char* path : {"update_path=auto", "update_path=fused"}) {
    try {  // named for precision, whatever update_path says
      PpoConfigFromConfig(LoadPpoConfig({"precision=fp16", path}));
      ADD_FAILURE() << "fp16 on the CPU must be refused";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "precision") << path;
    }
  }
  if (cuda) {
    try {
      PpoConfigFromConfig(LoadPpoConfig({"device=cuda", "update_path=fused"}));
      ADD_FAILURE() << "the fused path is CPU-only";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "update_path");
    }
  } else {
    try {
      PpoConfigFromConfig(LoadPpoConfig({"device=cuda"}));
      ADD_FAILURE() << "device cuda without CUDA must be refused";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "device");
      EXPECT_NE(std::string(e.what()).find("cpu or auto"), std::string::npos) << e.what();
    }
  }
}

// SB3's PPO.__init__ asserts batch_size > 1 and n_steps * n_envs > 1 with normalize_advantage,
// since a one-row minibatch has no advantage standard deviation.
TEST(PpoDeviceConfigTest, OneRowMinibatchNeedsNormalizeAdvantageOff) {
  auto refused_field = [](const std::vector<std::string>& sets) -> std::string {
    try {
      PpoConfigFromConfig(LoadPpoConfig(sets));
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("normalize_advantage: false"), std::string::npos)
          << e.what();
      return e.field();
    }
    return "";
  };
  EXPECT_EQ(refused_field({"batch_size=1"}), "batch_size");
  EXPECT_EQ(refused_field({"n_steps=1", "batch_size=2"}), "n_steps");  // n_envs 1
  EXPECT_EQ(refused_field({"batch_size=1", "normalize_advantage=false"}), "");
  EXPECT_EQ(refused_field({"n_steps=1", "normalize_advantage=false"}), "");
  EXPECT_EQ(refused_field({"batch_size=2"}), "");
  EXPECT_EQ(refused_field({"n_steps=1", "n_envs=2"}), "");       // two rows
  EXPECT_EQ(refused_field({"n_steps=4", "batch_size=64"}), "");  // one minibatch, as SB3
}

}  // namespace
}  // namespace greenrl::algo
