// sac.cc: SAC for Box actions, in CleanRL's order (cleanrl/sac_continuous_action.py): config
// keys, seeding, networks and optimisers, storage, rollout, update (entropy coefficient, critic,
// actor, Polyak), acting, checkpoint. Semantics and defaults are SB3's (sac/sac.py train(),
// sac/policies.py); where CleanRL differs (its log-std squashing, qf_loss without SB3's 0.5) SB3
// wins and the metric keys are CleanRL's.
//
// Networks are LibTorch modules (256-wide layers at batch 256 are GEMM-bound, so the dispatch
// cost of autograd is small next to the matrix products). Every parameter of the actor, of the
// two critics and of the two target critics lives in one flat float32 buffer per group, with
// .grad views into one flat gradient buffer, so each optimiser step is one nn::FlatAdam pass and
// the Polyak update one loop. Nothing is allocated on the host per step except LibTorch's own
// activations.
#include "greenrl/algo/sac.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "greenrl/algo/checkpoint.h"
#include "greenrl/core/did_you_mean.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"
#include "greenrl/core/thread_pool.h"
#include "greenrl/env/wrappers.h"
#include "greenrl/nn/flat_optim.h"
#include "greenrl/nn/squashed_gaussian.h"
#include "greenrl/nn/squashed_gaussian_actor.h"

namespace greenrl::algo {
namespace {
// What ent_coef and target_entropy accept (SacConfigFromConfig), also named by a Load error.
constexpr const char* kEntCoefAccepted =
    "auto, auto_<initial value > 0> (e.g. auto_0.1) or a number >= 0";
constexpr const char* kTargetEntropyAccepted = "auto (-dim(A)) or a finite number";
}  // namespace

// ---------------------------------------------------------------------------------------------
// Config: SB3 SAC defaults (stable_baselines3/sac/sac.py __init__, sac/policies.py).
void AddSacKeys(ConfigSchema* schema) {
  AddKey(schema, "policy", ValueType::kString, "MlpPolicy", "policy class (SB3 name)", std::nullopt,
         std::nullopt, std::vector<std::string>{"MlpPolicy"});
  AddKey(schema, "learning_rate", ValueType::kSchedule, "0.0003",
         "Adam step size of actor, critics and entropy coefficient (or lin_<initial>)", 0.0, 1.0);
  AddKey(schema, "buffer_size", ValueType::kInt, "1000000", "replay buffer capacity (transitions)",
         1, 1e10);
  AddKey(schema, "learning_starts", ValueType::kInt, "100",
         "env steps of uniform random actions before the first gradient step", 0, 1e12);
  AddKey(schema, "batch_size", ValueType::kInt, "256", "transitions per gradient step", 1, 1 << 20);
  AddKey(schema, "tau", ValueType::kFloat, "0.005", "Polyak coefficient of the target critics", 0.0,
         1.0, std::vector<std::string>{}, /*min_exclusive=*/true);
  AddKey(schema, "gamma", ValueType::kFloat, "0.99", "discount factor", 0.0, 1.0);
  AddKey(schema, "train_freq", ValueType::kInt, "1", "VecEnv steps between updates (unit: step)", 1,
         1 << 24, {}, false, kTrainFreqAccepted);
  AddKey(schema, "gradient_steps", ValueType::kInt, "1",
         "gradient steps per update (-1: as many as env steps collected)", -1, 1 << 24);
  AddKey(schema, "ent_coef", ValueType::kString, "auto",
         "entropy coefficient: auto (learned from 1.0), auto_<initial>, or a fixed number", {}, {},
         {}, false, kEntCoefAccepted);
  AddKey(schema, "target_entropy", ValueType::kString, "auto",
         "target entropy of the learned coefficient: auto (-dim(A)) or a number", {}, {}, {}, false,
         kTargetEntropyAccepted);
  AddKey(schema, "target_update_interval", ValueType::kInt, "1",
         "target-critic updates at gradient steps 0, N, 2N, ... of each update (SB3's count, "
         "from 0 in every update)",
         1, 1e9);
  AddKey(schema, "policy_kwargs.net_arch", ValueType::kIntList, "[256, 256]",
         "hidden sizes of the actor and of each critic", 1, 65536);
  AddKey(schema, "policy_kwargs.activation_fn", ValueType::kString, "relu", "hidden activation",
         std::nullopt, std::nullopt, nn::ActivationNames());
  AddKey(schema, "use_sde", ValueType::kBool, "false",
         "generalized state-dependent exploration (gSDE) instead of the actor's log-std head");
  AddKey(schema, "sde_sample_freq", ValueType::kInt, "-1",
         "gSDE: VecEnv steps between noise-matrix draws within a rollout (-1 or any value <= 0: "
         "once per rollout, as SB3)",
         -(1 << 30), 1 << 30);
  AddKey(schema, "use_sde_at_warmup", ValueType::kBool, "false",
         "gSDE: act with the gSDE policy instead of uniform actions before learning_starts");
  AddKey(schema, "policy_kwargs.log_std_init", ValueType::kFloat, "-3.0",
         "gSDE: initial value of the log std parameter", -20.0, 2.0);
  AddKey(schema, "policy_kwargs.clip_mean", ValueType::kFloat, "2.0",
         "gSDE: the actor's mean is clipped to [-clip_mean, clip_mean] (0: no clip)", 0.0, 1e6);
  AddKey(schema, "update_path", ValueType::kString, "auto",
         "the gradient step's forward and backward (critics and actor): fused (hand-written over "
         "BLAS), autograd (LibTorch); auto: fused",
         std::nullopt, std::nullopt, std::vector<std::string>{"auto", "fused", "autograd"});
  AddKey(schema, "threads.update", ValueType::kInt, "1",
         "update threads: 1, or 2 (the fused update: a worker runs the second critic's passes, "
         "the a' sample and half of the actor's backward GEMMs, the same results bit for bit; it "
         "spins between updates, up to 2 ms at a time: 5-19% more CPU seconds for 1.7-1.9x the "
         "speed on an "
         "idle 2-core machine, README)",
         1, 2);
}

SacConfig SacConfigFromConfig(const Config& config) {
  SacConfig c;
  c.n_envs = static_cast<int>(config.GetInt("n_envs"));
  c.seed = static_cast<uint64_t>(config.GetInt("seed"));
  c.learning_rate = config.GetSchedule("learning_rate");
  c.buffer_size = config.GetInt("buffer_size");
  c.learning_starts = config.GetInt("learning_starts");
  c.batch_size = static_cast<int>(config.GetInt("batch_size"));
  c.tau = config.GetFloat("tau");
  c.gamma = config.GetFloat("gamma");
  c.train_freq = static_cast<int>(config.GetInt("train_freq"));
  c.gradient_steps = static_cast<int>(config.GetInt("gradient_steps"));
  c.target_update_interval = static_cast<int>(config.GetInt("target_update_interval"));
  // ent_coef as SB3 reads it: "auto" (learned, init 1.0), "auto_0.1" (learned, init 0.1), or a
  // float (fixed).
  const std::string ent_coef = config.GetString("ent_coef");
  if (ent_coef.rfind("auto", 0) == 0) {
    c.learn_ent_coef = true;
    c.ent_coef_init = 1.0;
    if (ent_coef.size() > 4) {
      const auto v = ent_coef[4] == '_' ? internal::ParseYamlNumber(ent_coef.substr(5))
                                        : std::optional<double>();
      if (!v || !(*v > 0.0) || !std::isfinite(*v))
        throw ConfigError("ent_coef", ent_coef, kEntCoefAccepted);
      c.ent_coef_init = *v;
    }
  } else {
    const auto v = internal::ParseYamlNumber(ent_coef);
    if (!v || !(*v >= 0.0) || !std::isfinite(*v)) {  // "atuo", "Auto": a guess at auto
      throw ConfigError("ent_coef", ent_coef,
                        (v ? std::string() : DidYouMean(ent_coef, {"auto"})) + kEntCoefAccepted);
    }
    c.learn_ent_coef = false;
    c.ent_coef_init = *v;
  }
  const std::string target_entropy = config.GetString("target_entropy");
  if (target_entropy != "auto") {
    const auto v = internal::ParseYamlNumber(target_entropy);
    if (!v || !std::isfinite(*v)) {
      throw ConfigError(
          "target_entropy", target_entropy,
          (v ? std::string() : DidYouMean(target_entropy, {"auto"})) + kTargetEntropyAccepted);
    }
    c.target_entropy = *v;
  }
  c.net_arch.clear();
  for (int64_t h : config.GetIntList("policy_kwargs.net_arch"))
    c.net_arch.push_back(static_cast<int>(h));
  c.activation = nn::ParseActivation("policy_kwargs.activation_fn",
                                     config.GetString("policy_kwargs.activation_fn"));
  c.use_sde = config.GetBool("use_sde");
  c.sde_sample_freq = static_cast<int>(config.GetInt("sde_sample_freq"));
  c.use_sde_at_warmup = config.GetBool("use_sde_at_warmup");
  c.log_std_init = config.GetFloat("policy_kwargs.log_std_init");
  c.clip_mean = config.GetFloat("policy_kwargs.clip_mean");
  c.update_path = config.GetString("update_path") == "autograd" ? "autograd" : "fused";
  c.update_threads = static_cast<int>(config.GetInt("threads.update"));
  if (c.update_threads > 1 && c.update_path == "autograd") {
    throw ConfigError("threads.update", std::to_string(c.update_threads),
                      "1 when update_path is autograd (the second thread takes part of the fused "
                      "update: set update_path fused or auto to use 2)");
  }
  // batch_size > buffer_size is valid, as in SB3 and greenrl's DQN: minibatches are drawn with
  // replacement (ReplayBuffer.sample's randint).
  return c;
}

// ---------------------------------------------------------------------------------------------
// The update's pieces (sac.h).
void SacTdTarget(const float* rewards, const float* dones, const float* next_q1,
                 const float* next_q2, const float* next_log_prob, double alpha, double gamma,
                 int n, float* target) {
  for (int i = 0; i < n; ++i) {
    const double next_q =
        std::min(next_q1[i], next_q2[i]) - alpha * static_cast<double>(next_log_prob[i]);
    target[i] = static_cast<float>(rewards[i] + (1.0 - dones[i]) * gamma * next_q);
  }
}

void PolyakUpdate(const float* params, float* target, int64_t n, double tau) {
  const float a = static_cast<float>(1.0 - tau), b = static_cast<float>(tau);
  for (int64_t k = 0; k < n; ++k) target[k] = a * target[k] + b * params[k];
}

double EntropyCoefStep(const float* log_probs, int n, double target_entropy, double lr,
                       nn::FlatAdam& adam, float* log_alpha) {
  double mean = 0.0;
  for (int i = 0; i < n; ++i) mean += static_cast<double>(log_probs[i]) + target_entropy;
  mean /= n;
  const double loss = -static_cast<double>(*log_alpha) * mean;
  const float grad = static_cast<float>(-mean);
  adam.Step(log_alpha, &grad, lr);
  return loss;
}

namespace {

constexpr int64_t kCheckpointFormatVersion = 1;
// SB3 sac/policies.py: log std of the actor clamped to [LOG_STD_MIN, LOG_STD_MAX].
constexpr double kLogStdMin = -20.0;
constexpr double kLogStdMax = 2.0;

// ---------------------------------------------------------------------------------------------
// Networks (SB3 sac/policies.py Actor and ContinuousCritic, share_features_extractor=False).

// A Linear layer initialised as PyTorch's default (kaiming_uniform_(a=sqrt(5)) for the weight and
// U(-1/sqrt(in), 1/sqrt(in)) for the bias, i.e. both U(-1/sqrt(in), 1/sqrt(in))), drawn from
// `rng` instead of torch's global generator.
torch::nn::Linear MakeLinear(int in, int out, Rng& rng) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in, out));
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  for (torch::Tensor* t : {&linear->weight, &linear->bias}) {
    float* p = t->data_ptr<float>();
    for (int64_t k = 0; k < t->numel(); ++k) p[k] = static_cast<float>(rng.Uniform(-bound, bound));
  }
  return linear;
}

// [in, hidden..., out] with the activation after every hidden layer (SB3 create_mlp); out < 1
// leaves the last hidden layer as the output (the actor's latent).
torch::nn::Sequential MakeMlp(int in, const std::vector<int>& hidden, int out,
                              nn::Activation activation, Rng& rng) {
  torch::nn::Sequential seq;
  int last = in;
  for (int h : hidden) {
    seq->push_back(MakeLinear(last, h, rng));
    if (activation == nn::Activation::kTanh) {
      seq->push_back(torch::nn::Tanh());
    } else {
      seq->push_back(torch::nn::ReLU());
    }
    last = h;
  }
  if (out > 0) seq->push_back(MakeLinear(last, out, rng));
  return seq;
}

// The actor's outputs for a batch of B observations.
struct ActorOutput {
  torch::Tensor mean;     // float32 [B, A], pre-tanh mean
  torch::Tensor log_std;  // float32 [B, A]; with gSDE the parameter float32 [L, A]
  torch::Tensor latent;   // float32 [B, L], the last hidden layer's output (gSDE's features)
};

// pi(a|s): latent = MLP(s); without gSDE mean = mu(latent) and log_std = clamp(log_std(latent),
// -20, 2); with gSDE mean = clamp(mu(latent), -clip_mean, clip_mean) (SB3's Hardtanh, when
// clip_mean > 0) and log_std a parameter float32 [L, A] filled with log_std_init (SB3
// StateDependentNoiseDistribution.proba_distribution_net with full_std=True).
class ActorImpl : public torch::nn::Module {
 public:
  ActorImpl(int obs_dim, int act_dim, const SacConfig& config, Rng& rng)
      : use_sde_(config.use_sde), clip_mean_(config.clip_mean) {
    latent_ =
        register_module("latent_pi", MakeMlp(obs_dim, config.net_arch, 0, config.activation, rng));
    const int last = config.net_arch.empty() ? obs_dim : config.net_arch.back();
    mu_ = register_module("mu", MakeLinear(last, act_dim, rng));
    if (use_sde_) {
      sde_log_std_ =
          register_parameter("log_std", torch::full({last, act_dim}, config.log_std_init));
    } else {
      log_std_ = register_module("log_std", MakeLinear(last, act_dim, rng));
    }
  }
  // obs float32 [B, obs_dim] -> ActorOutput.
  ActorOutput forward(const torch::Tensor& obs) {
    ActorOutput out;
    out.latent = latent_->is_empty() ? obs : latent_->forward(obs);  // net_arch []: obs
    out.mean = mu_->forward(out.latent);
    if (use_sde_) {
      if (clip_mean_ > 0.0) out.mean = torch::clamp(out.mean, -clip_mean_, clip_mean_);
      out.log_std = sde_log_std_;
    } else {
      out.log_std = torch::clamp(log_std_->forward(out.latent), kLogStdMin, kLogStdMax);
    }
    return out;
  }

  // The layers from obs to the mean, copied: latent_pi's Linears, then mu.
  std::vector<DenseLayer> MeanLayers() const {
    std::vector<DenseLayer> layers;
    torch::Tensor weight;
    for (const auto& item : named_parameters(/*recurse=*/true)) {
      const std::string& key = item.key();
      if (key.rfind("latent_pi.", 0) != 0 && key.rfind("mu.", 0) != 0) continue;
      const torch::Tensor t = item.value().detach().to(torch::kCPU).contiguous();
      if (t.dim() == 2) {
        weight = t;
        continue;
      }
      DenseLayer d;
      d.out_dim = static_cast<int>(weight.size(0));
      d.in_dim = static_cast<int>(weight.size(1));
      d.weight.assign(weight.data_ptr<float>(), weight.data_ptr<float>() + weight.numel());
      d.bias.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
      layers.push_back(std::move(d));
    }
    return layers;
  }

 private:
  bool use_sde_;
  double clip_mean_;
  torch::nn::Sequential latent_{nullptr};
  torch::nn::Linear mu_{nullptr}, log_std_{nullptr};
  torch::Tensor sde_log_std_;
};
TORCH_MODULE(Actor);

// Q(s, a) = MLP(cat(s, a)) -> float32 [B].
class SoftQNetworkImpl : public torch::nn::Module {
 public:
  SoftQNetworkImpl(int obs_dim, int act_dim, const std::vector<int>& arch,
                   nn::Activation activation, Rng& rng) {
    q_ = register_module("qf", MakeMlp(obs_dim + act_dim, arch, 1, activation, rng));
  }
  torch::Tensor forward(const torch::Tensor& obs, const torch::Tensor& action) {
    return q_->forward(torch::cat({obs, action}, /*dim=*/1)).squeeze(/*dim=*/1);
  }

 private:
  torch::nn::Sequential q_{nullptr};
};
TORCH_MODULE(SoftQNetwork);

// One flat float32 buffer holding every parameter of some modules (in registration order), and
// one for their gradients: each parameter becomes a view of its slice, its .grad a view of the
// same slice of `grads`, so autograd accumulates straight into the flat gradient buffer.
struct FlatParams {
  torch::Tensor params;             // float32 [num_params]
  torch::Tensor grads;              // float32 [num_params]; undefined when bound without gradients
  std::vector<torch::Tensor> list;  // the bound parameters (backward's `inputs`)

  int64_t numel() const { return params.numel(); }
  float* data() { return params.data_ptr<float>(); }
  const float* data() const { return params.data_ptr<float>(); }
};

FlatParams BindFlat(const std::vector<torch::nn::Module*>& modules, bool with_grads) {
  FlatParams f;
  for (torch::nn::Module* m : modules) {
    for (auto& p : m->parameters()) f.list.push_back(p);
  }
  int64_t total = 0;
  for (const auto& p : f.list) total += p.numel();
  f.params = torch::empty({total}, torch::kFloat32);
  if (with_grads) f.grads = torch::zeros({total}, torch::kFloat32);
  int64_t offset = 0;
  for (auto& p : f.list) {
    const int64_t n = p.numel();
    {
      torch::NoGradGuard no_grad;
      torch::Tensor slice = f.params.narrow(/*dim=*/0, offset, n).view(p.sizes());
      slice.copy_(p);
      p.set_data(slice);
    }
    if (with_grads) {
      p.mutable_grad() = f.grads.narrow(/*dim=*/0, offset, n).view(p.sizes());
    } else {
      p.requires_grad_(false);
    }
    offset += n;
  }
  return f;
}

torch::Tensor View(float* data, std::vector<int64_t> shape) {
  return torch::from_blob(data, shape, torch::TensorOptions().dtype(torch::kFloat32));
}

class Sac final : public Algorithm {
 public:
  Sac(const SacConfig& config, const env::EnvSpec& spec);

  std::string name() const override { return "sac"; }
  std::string UpdatePath() const override {
    if (fused_actor_) return "fused";
    return fused_ ? "fused critics, autograd actor" : "autograd";
  }
  int64_t CollectRollout(env::VecEnv& env, std::vector<EpisodeRecord>* episodes) override;
  const Metrics& Update(double progress_remaining) override;
  void Act(const float* obs, int n, bool deterministic, int64_t* actions) override;
  void ActContinuous(const float* obs, int n, bool deterministic, float* actions) override;
  void SeedActing(uint64_t seed) override { action_rng_.Seed(DeriveSeed(seed, 1)); }
  void SaveCheckpoint(const std::string& path) const override;
  void LoadCheckpoint(const std::string& path) override;
  int64_t updates_wait_until() const override {
    return std::max(config_.learning_starts, refill_until_);
  }
  void ResetNumTimesteps() override {  // learning_starts counts again
    num_timesteps_ = 0;
    refill_until_ = 0;
  }
  // threads.update 2: the burst Update opens ends until the next update reopens it.
  void ReleaseSpinningThreads() override { update_burst_.reset(); }
  bool HasSpinningThreads() const override { return update_burst_.has_value(); }
  // Resume: SaveCheckpoint's entries plus the three generators, the guard's counters and, with
  // replay_buffer, the replay buffer (ReplayBuffer::Save gives its size; without it the resumed
  // run starts from an empty buffer and refills it before it updates: refill_until_).
  void SaveTrainingState(const std::string& path, bool replay_buffer,
                         const std::function<void(CheckpointWriter&)>& extra) const override;
  void LoadTrainingState(const std::string& path,
                         const std::function<void(CheckpointReader&)>& extra) override;
  // Actor parameters, then both critics' (qf1 | qf2).
  std::vector<float> GetParameters() const override {
    std::vector<float> v(actor_flat_.data(), actor_flat_.data() + actor_flat_.numel());
    v.insert(v.end(), critic_flat_.data(), critic_flat_.data() + critic_flat_.numel());
    return v;
  }
  // The actor's squashed mean tanh(mu(latent)) rescaled to the Box (SB3's deterministic action).
  DeterministicPolicy ExportDeterministicPolicy() const override {
    DeterministicPolicy p;
    p.algo = name();
    p.obs_dim = obs_dim_;
    p.action_dim = act_dim_;
    p.layers = actor_->MeanLayers();
    p.activation = config_.activation;
    p.head = PolicyHead::kTanhToBox;
    p.clip_mean = config_.use_sde ? config_.clip_mean : 0.0;
    p.low = low_;
    p.high = high_;
    return p;
  }
  // Data-parallel: broadcasts actor, critics, targets and log alpha from rank 0; then averages
  // the critic and actor gradients and the entropy coefficient's mean log-prob over the ranks.
  void SetCollectives(Collectives* collectives) override {
    collectives_ = collectives;
    if (collectives_ == nullptr) return;
    collectives_->Broadcast(actor_flat_.data(), actor_flat_.numel(), "sac actor parameters");
    collectives_->Broadcast(critic_flat_.data(), critic_flat_.numel(), "sac critic parameters");
    collectives_->Broadcast(target_flat_.data(), target_flat_.numel(), "sac target parameters");
    collectives_->Broadcast(&log_alpha_, 1, "sac log alpha");
  }
  // normalize: true: the replay buffer holds raw transitions, normalised when sampled
  // (Algorithm::SetReplayNormalizer; SB3's SAC with VecNormalize).
  void SetReplayNormalizer(const env::NormalizeVecEnv* normalizer) override {
    replay_normalizer_ = normalizer;
  }

 private:
  // Policy actions in [-1, 1] for rows of obs (float32 [n, obs_dim]) into out (float32
  // [n, act_dim]), in chunks of act_chunk_ rows. With gSDE, a stochastic action uses row i's
  // exploration noise sde_eps + i * L * A (float32 [n, L, A], N(0, 1) draws) when given, else a
  // fresh draw from the marginal N(mean, SdeStd^2).
  void ActUnit(const float* obs, int n, bool deterministic, float* out,
               const float* sde_eps = nullptr);
  void FillNormal(std::vector<float>* v, Rng& rng);
  // The entropy coefficient: exp(log alpha) when learned, else the fixed ent_coef as given
  // (exp(log 0.1f) would be 0.0999999968).
  double Alpha() const {
    return config_.learn_ent_coef ? std::exp(static_cast<double>(log_alpha_))
                                  : config_.ent_coef_init;
  }
  void WriteModel(CheckpointWriter& w) const;
  void ReadModel(CheckpointReader& r);
  // Fused critics: x_q_ = [obs | actions] row by row, float32 [n, obs_dim + act_dim].
  void FillCriticInput(const float* obs, const float* actions, int n);
  // The fused critics' passes of a gradient step, critic k (0: qf1, 1: qf2) on the parameters
  // at params + k * q_params_ and the rows of x_q_: on one thread one after the other, with
  // threads.update 2 at once, critic 1's on the worker (TwinTask). Each critic's arithmetic is
  // the same either way, so the results are equal bit for bit.
  enum class TwinStage {
    kForward,        // twin_q_[k] = Qk(x_q_), float32 [B], in critic k's workspace
    kCriticStep,     // Qk(x_q_) against b_target_: twin_loss_[k] = MSE, twin_q_mean_[k] =
                     // mean Qk, dq{k+1}_ = (Qk - y) / B, and dL/dparams added into twin_grads_
    kBackwardInput,  // dx_q{k+1}_ = dQk/dx for dQk = dq{k+1}_ (after kForward)
    kActorForward,   // the fused actor (params: actor_flat_) samples a_pi on b_obs_ (k = 0,
                     // actor_pi_) and a' on b_next_obs_ (k = 1, actor_next_)
  };
  void RunTwin(TwinStage stage, const float* params);
  void TwinTask(int k);

  // Config and sizes.
  SacConfig config_;
  env::EnvSpec spec_;
  int obs_dim_, act_dim_, num_envs_, act_chunk_;
  int latent_dim_;                 // L: the actor's last hidden size (gSDE's features)
  std::vector<float> low_, high_;  // float32 [act_dim], the env's Box
  double target_entropy_;

  // Seeding: init, rollout actions (warm-up uniforms and actor noise), update noise and replay
  // indices each own a generator derived from the seed.
  Rng action_rng_, update_rng_, replay_rng_;

  // Networks and optimisers: actor; critics qf1 | qf2 in one buffer; their targets in another;
  // log alpha. Adam with PyTorch's defaults (SB3 SAC passes no optimizer_kwargs).
  Actor actor_{nullptr};
  SoftQNetwork qf1_{nullptr}, qf2_{nullptr}, qf1_target_{nullptr}, qf2_target_{nullptr};
  FlatParams actor_flat_, critic_flat_, target_flat_;
  nn::FlatAdam actor_adam_, critic_adam_, alpha_adam_;
  float log_alpha_ = 0.0f;  // log of the entropy coefficient (learned) or of the fixed value
  Collectives* collectives_ = nullptr;  // data-parallel ranks (SetCollectives); null: one process
  // update_path fused: the critics (and, on their parameters, the target critics) as FusedMlp
  // over the flat buffers; qf1's parameters are the first q_params_ floats, qf2's the rest. The
  // actor too (fused_actor_) unless net_arch is empty: one instance samples a_pi, one a'.
  bool fused_ = false, fused_actor_ = false;
  std::unique_ptr<nn::FusedMlp> q1_mlp_, q2_mlp_;
  int64_t q_params_ = 0;
  // threads.update 2: the training thread and one worker (RunTwin); null with one thread. The
  // stage, its parameters and its outputs are fields, so twin_fn_ allocates nothing per call.
  std::unique_ptr<ThreadPool> update_pool_;
  std::function<void(int, int)> twin_fn_;
  TwinStage twin_stage_ = TwinStage::kForward;
  const float* twin_params_ = nullptr;
  float* twin_grads_ = nullptr;
  const float* twin_q_[2] = {nullptr, nullptr};
  double twin_loss_[2] = {0.0, 0.0}, twin_q_mean_[2] = {0.0, 0.0};
  std::optional<ThreadPool::Burst> update_burst_;  // open from the first update on (Update)
  std::unique_ptr<nn::FusedSquashedGaussianActor> actor_pi_, actor_next_;

  // Storage.
  ReplayBuffer buffer_;
  // normalize: true: the env whose raw values the buffer stores and whose current statistics
  // normalise each sampled batch (SetReplayNormalizer); null: the buffer holds what the env gives.
  const env::NormalizeVecEnv* replay_normalizer_ = nullptr;
  int64_t num_timesteps_ = 0;  // env steps taken (all envs of all ranks), SB3's num_timesteps
  int64_t refill_until_ = 0;   // OffPolicyResumeState::refill_until: no update at or before it
  int64_t n_updates_ = 0;      // gradient steps taken
  int64_t last_rollout_steps_ = 0;

  // Scratch, allocated once.
  std::vector<float> step_obs_;                // float32 [N, obs_dim]: obs before the step
  std::vector<float> step_raw_obs_;            // float32 [N, obs_dim]: its raw values (normalize)
  std::vector<float> step_actions_;            // float32 [N, act_dim]: actions in [-1, 1]
  std::vector<float> act_noise_;               // float32 [act_chunk, act_dim]
  std::vector<int64_t> indices_;               // int64 [B]
  std::vector<float> b_obs_, b_next_obs_;      // float32 [B, obs_dim]
  std::vector<float> b_actions_;               // float32 [B, act_dim]
  std::vector<float> b_rewards_, b_dones_;     // float32 [B]
  std::vector<float> b_noise_, b_next_noise_;  // float32 [B, act_dim]
  std::vector<float> b_target_;                // float32 [B]
  std::vector<float> sde_rollout_eps_;         // gSDE: float32 [N, L, A], one matrix per env
  std::vector<float> sde_update_eps_;          // gSDE: float32 [L, A], one per gradient step
  // Fused critics' scratch: input rows float32 [B, obs_dim + act_dim]; dL/dQ of each critic
  // float32 [B]; dQ/d input of each float32 [B, obs_dim + act_dim]; the actor loss's gradient
  // at a_pi float32 [B, act_dim].
  std::vector<float> x_q_, dq1_, dq2_, dx_q1_, dx_q2_, grad_a_;
  Metrics metrics_;
};

Sac::Sac(const SacConfig& config, const env::EnvSpec& spec)
    : config_(config),
      spec_(spec),
      obs_dim_(static_cast<int>(spec.obs_dim())),
      act_dim_(static_cast<int>(spec.act_dim())),
      num_envs_(config.n_envs),
      act_chunk_(std::max({config.batch_size, config.n_envs, 64})),
      latent_dim_(config.net_arch.empty() ? obs_dim_ : config.net_arch.back()),
      target_entropy_(std::isnan(config.target_entropy) ? -static_cast<double>(spec.act_dim())
                                                        : config.target_entropy),
      action_rng_(DeriveSeed(config.seed, 1)),
      update_rng_(DeriveSeed(config.seed, 2)),
      replay_rng_(DeriveSeed(config.seed, 3)),
      actor_adam_(1, nn::AdamOptions{}),
      critic_adam_(1, nn::AdamOptions{}),
      alpha_adam_(1, nn::AdamOptions{}),
      buffer_(config.buffer_size, obs_dim_, act_dim_) {
  const env::Box& box = std::get<env::Box>(spec.action_space);
  low_ = box.low;
  high_ = box.high;

  // Networks: actor, critics, then targets as exact copies of the critics (SB3:
  // critic_target.load_state_dict(critic.state_dict())).
  Rng init_rng(DeriveSeed(config.seed, 0));
  actor_ = Actor(obs_dim_, act_dim_, config, init_rng);
  qf1_ = SoftQNetwork(obs_dim_, act_dim_, config.net_arch, config.activation, init_rng);
  qf2_ = SoftQNetwork(obs_dim_, act_dim_, config.net_arch, config.activation, init_rng);
  qf1_target_ = SoftQNetwork(obs_dim_, act_dim_, config.net_arch, config.activation, init_rng);
  qf2_target_ = SoftQNetwork(obs_dim_, act_dim_, config.net_arch, config.activation, init_rng);
  actor_flat_ = BindFlat({actor_.ptr().get()}, /*with_grads=*/true);
  critic_flat_ = BindFlat({qf1_.ptr().get(), qf2_.ptr().get()}, /*with_grads=*/true);
  target_flat_ = BindFlat({qf1_target_.ptr().get(), qf2_target_.ptr().get()}, /*with_grads=*/false);
  target_flat_.params.copy_(critic_flat_.params);
  actor_adam_ = nn::FlatAdam(actor_flat_.numel(), nn::AdamOptions{});
  critic_adam_ = nn::FlatAdam(critic_flat_.numel(), nn::AdamOptions{});
  // SB3: log_ent_coef = log(init) as a learned parameter; a fixed ent_coef is used as given.
  log_alpha_ = static_cast<float>(std::log(config.ent_coef_init));

  const size_t b = static_cast<size_t>(config.batch_size);
  step_obs_.assign(static_cast<size_t>(num_envs_) * obs_dim_, 0.0f);
  step_actions_.assign(static_cast<size_t>(num_envs_) * act_dim_, 0.0f);
  act_noise_.assign(static_cast<size_t>(act_chunk_) * act_dim_, 0.0f);
  indices_.assign(b, 0);
  b_obs_.assign(b * obs_dim_, 0.0f);
  b_next_obs_.assign(b * obs_dim_, 0.0f);
  b_actions_.assign(b * act_dim_, 0.0f);
  b_rewards_.assign(b, 0.0f);
  b_dones_.assign(b, 0.0f);
  b_noise_.assign(b * act_dim_, 0.0f);
  b_next_noise_.assign(b * act_dim_, 0.0f);
  b_target_.assign(b, 0.0f);
  fused_ = config.update_path == "fused";
  if (fused_) {
    nn::MlpSpec q_spec{{obs_dim_ + act_dim_}, config.activation};
    for (int h : config.net_arch) q_spec.sizes.push_back(h);
    q_spec.sizes.push_back(1);
    q_params_ = q_spec.num_params();
    GREENRL_CHECK(2 * q_params_ == critic_flat_.numel(), "critic layout differs from FusedMlp's");
    q1_mlp_ = std::make_unique<nn::FusedMlp>(q_spec, config.batch_size);
    q2_mlp_ = std::make_unique<nn::FusedMlp>(q_spec, config.batch_size);
    const size_t in = static_cast<size_t>(obs_dim_ + act_dim_);
    x_q_.assign(b * in, 0.0f);
    dq1_.assign(b, 0.0f);
    dq2_.assign(b, 0.0f);
    dx_q1_.assign(b * in, 0.0f);
    dx_q2_.assign(b * in, 0.0f);
    grad_a_.assign(b * act_dim_, 0.0f);
    twin_fn_ = [this](int begin, int end) {
      for (int k = begin; k < end; ++k) TwinTask(k);
    };
    if (config.update_threads > 1) {
      GREENRL_CHECK(config.update_threads == 2, "update_threads must be 1 or 2");
      update_pool_ = std::make_unique<ThreadPool>(2, nn::blas::OneThreadHere);
    }
  }
  fused_actor_ = fused_ && !config.net_arch.empty();
  if (fused_actor_) {
    // The fused actor reads the LibTorch actor's parameters where BindFlat put them.
    std::map<std::string, int64_t> at;
    for (const auto& p : actor_->named_parameters()) {
      at[p.key()] = p.value().data_ptr<float>() - actor_flat_.data();
    }
    nn::SquashedGaussianActorLayout layout;
    layout.obs_dim = obs_dim_;
    layout.act_dim = act_dim_;
    layout.net_arch = config.net_arch;
    layout.activation = config.activation;
    layout.use_sde = config.use_sde;
    layout.clip_mean = config.clip_mean;
    layout.latent = at.at("latent_pi.0.weight");
    nn::MlpSpec latent{{obs_dim_}, config.activation};
    for (int h : config.net_arch) latent.sizes.push_back(h);
    for (int l = 0; l < latent.num_layers(); ++l) {  // Linear, activation, Linear, ...
      GREENRL_CHECK(at.at(fmt::format("latent_pi.{}.weight", 2 * l)) ==
                            layout.latent + latent.weight_offset(l) &&
                        at.at(fmt::format("latent_pi.{}.bias", 2 * l)) ==
                            layout.latent + latent.bias_offset(l),
                    "the actor's latent layout differs from FusedMlp's");
    }
    layout.mu_weight = at.at("mu.weight");
    layout.mu_bias = at.at("mu.bias");
    if (config.use_sde) {
      layout.sde_log_std = at.at("log_std");
    } else {
      layout.log_std_weight = at.at("log_std.weight");
      layout.log_std_bias = at.at("log_std.bias");
    }
    actor_pi_ = std::make_unique<nn::FusedSquashedGaussianActor>(layout, config.batch_size);
    actor_pi_->set_thread_pool(update_pool_.get());  // null with one update thread
    actor_next_ = std::make_unique<nn::FusedSquashedGaussianActor>(layout, config.batch_size);
  }
  if (config.use_sde) {
    sde_rollout_eps_.assign(static_cast<size_t>(num_envs_) * latent_dim_ * act_dim_, 0.0f);
    sde_update_eps_.assign(static_cast<size_t>(latent_dim_) * act_dim_, 0.0f);
  }
}

void Sac::FillNormal(std::vector<float>* v, Rng& rng) {
  for (float& x : *v) x = static_cast<float>(rng.Normal());
}

void Sac::FillCriticInput(const float* obs, const float* actions, int n) {
  const size_t in = static_cast<size_t>(obs_dim_ + act_dim_);
  for (int i = 0; i < n; ++i) {
    float* row = x_q_.data() + i * in;
    std::copy_n(obs + static_cast<size_t>(i) * obs_dim_, obs_dim_, row);
    std::copy_n(actions + static_cast<size_t>(i) * act_dim_, act_dim_, row + obs_dim_);
  }
}

void Sac::RunTwin(TwinStage stage, const float* params) {
  twin_stage_ = stage;
  twin_params_ = params;
  if (update_pool_ != nullptr) {
    update_pool_->ParallelFor(2, twin_fn_);
  } else {
    twin_fn_(0, 2);
  }
}

void Sac::TwinTask(int k) {
  if (twin_stage_ == TwinStage::kActorForward) {
    const float* noise = config_.use_sde ? sde_update_eps_.data()
                         : k == 0        ? b_noise_.data()
                                         : b_next_noise_.data();
    (k == 0 ? *actor_pi_ : *actor_next_)
        .Forward(twin_params_, k == 0 ? b_obs_.data() : b_next_obs_.data(), noise,
                 config_.batch_size);
    return;
  }
  nn::FusedMlp& mlp = k == 0 ? *q1_mlp_ : *q2_mlp_;
  const float* p = twin_params_ + k * q_params_;
  float* dq = k == 0 ? dq1_.data() : dq2_.data();
  const int b = config_.batch_size;
  switch (twin_stage_) {
    case TwinStage::kForward:
      twin_q_[k] = mlp.Forward(p, x_q_.data(), b);
      break;
    case TwinStage::kCriticStep: {
      // d(0.5 (MSE1 + MSE2))/dQk_i = (Qk_i - y_i) / B.
      const float* q = mlp.Forward(p, x_q_.data(), b);
      const float inv_b = 1.0f / static_cast<float>(b);
      double loss = 0.0, mean = 0.0;
      for (int i = 0; i < b; ++i) {
        const float d = q[i] - b_target_[i];
        loss += static_cast<double>(d) * d;
        mean += q[i];
        dq[i] = d * inv_b;
      }
      twin_loss_[k] = loss / b;
      twin_q_mean_[k] = mean / b;
      mlp.Backward(p, dq, twin_grads_ + k * q_params_);
      break;
    }
    case TwinStage::kBackwardInput:
      mlp.BackwardInput(p, dq, k == 0 ? dx_q1_.data() : dx_q2_.data());
      break;
    case TwinStage::kActorForward:  // above
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Rollout: train_freq VecEnv steps. Before learning_starts env steps, uniform random actions
// (SB3: action_space.sample(), stored scaled to [-1, 1]; uniform on [-1, 1] then rescaled is the
// same distribution); then a ~ pi(.|obs). The buffer stores [-1, 1] actions, the env gets them
// rescaled to its Box (SB3 unscale_action). gSDE (SB3 OffPolicyAlgorithm.collect_rollouts): one
// exploration matrix per env, drawn at the rollout's start and every sde_sample_freq steps of it;
// with use_sde_at_warmup the gSDE policy acts during the warm-up too.
int64_t Sac::CollectRollout(env::VecEnv& env, std::vector<EpisodeRecord>* episodes) {
  GREENRL_CHECK(env.num_envs() == num_envs_, "VecEnv size differs from n_envs");
  const int n = num_envs_;
  float* env_actions = env.continuous_actions();
  for (int t = 0; t < config_.train_freq; ++t) {
    std::copy(env.obs(), env.obs() + static_cast<size_t>(n) * obs_dim_, step_obs_.begin());
    if (replay_normalizer_ != nullptr) {  // SB3's _last_original_obs
      const float* raw = replay_normalizer_->raw_obs();
      step_raw_obs_.assign(raw, raw + static_cast<size_t>(n) * obs_dim_);
    }
    if (config_.use_sde &&
        (t == 0 || (config_.sde_sample_freq > 0 && t % config_.sde_sample_freq == 0))) {
      FillNormal(&sde_rollout_eps_, action_rng_);
    }
    if (num_timesteps_ < config_.learning_starts &&
        !(config_.use_sde && config_.use_sde_at_warmup)) {
      for (float& a : step_actions_) a = static_cast<float>(action_rng_.Uniform(-1.0, 1.0));
    } else {
      ActUnit(step_obs_.data(), n, /*deterministic=*/false, step_actions_.data(),
              config_.use_sde ? sde_rollout_eps_.data() : nullptr);
    }
    nn::RescaleToBox(step_actions_.data(), n, act_dim_, low_.data(), high_.data(), env_actions);
    env.Step();
    // next_obs = final_obs: the real last observation where a row ended (truncated included).
    // normalize: true: the raw values, as SB3's _store_transition (normalised when sampled).
    if (replay_normalizer_ != nullptr) {
      buffer_.Add(step_raw_obs_.data(), step_actions_.data(), replay_normalizer_->raw_reward(),
                  env.terminated(), env.truncated(), replay_normalizer_->raw_final_obs(), n);
    } else {
      buffer_.Add(step_obs_.data(), step_actions_.data(), env.reward(), env.terminated(),
                  env.truncated(), env.final_obs(), n);
    }
    AppendFinishedEpisodes(env, t, episodes);
    // Data-parallel: every rank steps its n envs at once, so the job advanced n x world_size
    // env steps; learning_starts counts those (n_timesteps counts all ranks' steps too).
    num_timesteps_ += static_cast<int64_t>(n) * (collectives_ ? collectives_->world_size() : 1);
  }
  last_rollout_steps_ = static_cast<int64_t>(config_.train_freq) * n;
  return last_rollout_steps_;
}

// ---------------------------------------------------------------------------------------------
// Update: SB3 sac.py train(), per gradient step:
//   1. a_pi, log_pi ~ pi(.|s) (reparameterised; gSDE: one fresh exploration matrix for the
//      batch, used again for a' in 3, as SB3's actor.reset_noise() before both);
//   2. alpha = exp(log_alpha) (before its step); alpha_loss = -(log_alpha (log_pi + H*)).mean();
//      Adam step of log_alpha (taken after the numerical guard's check, which changes nothing
//      for a finite step: nothing below reads log_alpha);
//   3. y = r + (1 - terminated) gamma (min Q'(s', a') - alpha log pi(a'|s')), a' ~ pi(.|s');
//   4. critic_loss = 0.5 (MSE(Q1(s, a), y) + MSE(Q2(s, a), y)); Adam step of both critics;
//   5. actor_loss = (alpha log_pi - min(Q1, Q2)(s, a_pi)).mean() with the updated critics;
//      Adam step of the actor;
//   6. Polyak update of the target critics at gradient steps 0, N, 2N, ... of this update, N =
//      target_update_interval (SB3: `gradient_step % target_update_interval == 0`, counted from
//      0 in each train() call, so the first step of every update takes one).
const Metrics& Sac::Update(double progress_remaining) {
  const double lr = config_.learning_rate.Value(progress_remaining) * lr_scale_;
  const bool inject_nonfinite = inject_nonfinite_ > 0;
  if (inject_nonfinite) --inject_nonfinite_;
  const bool inject_nonfinite_actor = inject_nonfinite_actor_ > 0;
  if (inject_nonfinite_actor) --inject_nonfinite_actor_;
  int skipped = 0;
  const int gradient_steps =
      config_.gradient_steps >= 0 ? config_.gradient_steps : static_cast<int>(last_rollout_steps_);
  // SB3 trains once num_timesteps > learning_starts (and never on an empty buffer); after a
  // resume without the saved buffer, once it is refilled (refill_until_).
  const bool train =
      num_timesteps_ > std::max(config_.learning_starts, refill_until_) && buffer_.size() > 0;
  const int steps = train ? gradient_steps : 0;
  const int b = config_.batch_size;
  double sum_qf1 = 0, sum_qf2 = 0, sum_actor = 0, sum_alpha = 0, sum_alpha_loss = 0, sum_q1v = 0,
         sum_q2v = 0;
  const auto obs = View(b_obs_.data(), {b, obs_dim_});
  const auto next_obs = View(b_next_obs_.data(), {b, obs_dim_});
  const auto actions = View(b_actions_.data(), {b, act_dim_});
  const auto noise = View(b_noise_.data(), {b, act_dim_});
  const auto next_noise = View(b_next_noise_.data(), {b, act_dim_});
  const auto target = View(b_target_.data(), {b});
  const auto sde_eps =
      config_.use_sde ? View(sde_update_eps_.data(), {latent_dim_, act_dim_}) : torch::Tensor();
  // threads.update 2: this thread's sgemm calls stay on it, as the worker's do; the worker
  // spins between hand-offs (update_burst_).
  if (steps > 0 && update_pool_ != nullptr && !update_burst_) {
    // From the first update on: with train_freq 1 the next update comes after one env step,
    // and a worker woken from its block at each one came late enough that the training thread
    // took its task instead (HalfCheetah-v4: 1.05x one thread's speed against 1.29x).
    update_burst_.emplace(update_pool_.get());
  }
  std::optional<nn::blas::ScopedOneThread> one_blas_thread;
  if (steps > 0 && update_pool_ != nullptr) one_blas_thread.emplace();
  for (int g = 0; g < steps; ++g) {
    // Storage: a uniform batch with replacement (SB3 ReplayBuffer.sample).
    for (int j = 0; j < b; ++j) {
      indices_[j] = static_cast<int64_t>(replay_rng_.Below(static_cast<uint64_t>(buffer_.size())));
    }
    buffer_.Gather(indices_.data(), b, b_obs_.data(), b_actions_.data(), b_rewards_.data(),
                   b_dones_.data(), b_next_obs_.data());
    if (replay_normalizer_ != nullptr) {  // SB3 ReplayBuffer._get_samples: current statistics
      replay_normalizer_->NormalizeObs(b_obs_.data(), b_obs_.data(), b);
      replay_normalizer_->NormalizeObs(b_next_obs_.data(), b_next_obs_.data(), b);
      replay_normalizer_->NormalizeRewards(b_rewards_.data(), b);
    }
    if (config_.use_sde) {
      FillNormal(&sde_update_eps_, update_rng_);
    } else {
      FillNormal(&b_noise_, update_rng_);
      FillNormal(&b_next_noise_, update_rng_);
    }
    const auto sample = [&](const ActorOutput& o, const torch::Tensor& gaussian_noise) {
      return config_.use_sde ? nn::SampleSquashedSde(o.mean, o.latent, o.log_std, sde_eps)
                             : nn::SampleSquashedGaussian(o.mean, o.log_std, gaussian_noise);
    };

    // 1. The actor's fresh samples, a_pi and log pi(a_pi|s): float32 [B, A] and [B].
    nn::SquashedGaussianSample pi;  // the LibTorch actor's
    torch::Tensor pi_log_prob_tensor;
    const float* pi_log_prob = nullptr;
    if (fused_actor_) {
      // a_pi ~ pi(.|s) and step 3's a' ~ pi(.|s'), from the same (not yet updated) actor.
      RunTwin(TwinStage::kActorForward, actor_flat_.data());
      pi_log_prob = actor_pi_->log_prob();
    } else {
      pi = sample(actor_->forward(obs), noise);
      pi_log_prob_tensor = pi.log_prob.detach().contiguous();
      pi_log_prob = pi_log_prob_tensor.data_ptr<float>();
    }

    // 2. Entropy coefficient: alpha is read before its step; the step itself is taken below,
    //    once the critics' guard has passed, so a step skipped there leaves log alpha and its
    //    Adam state as they were (alpha's loss depends on nothing that steps 3-4 change). A
    //    step skipped later, at the actor's guard, keeps alpha's and the critics' steps.
    const double alpha = Alpha();
    const float* lp_data = nullptr;
    int lp_n = b;
    float lp_mean = 0.0f;
    bool lp_finite = true;
    if (config_.learn_ent_coef) {
      lp_data = pi_log_prob;
      if (collectives_ != nullptr) {  // the loss reads only the mean: average it over the ranks
        double sum = 0.0;
        for (int i = 0; i < b; ++i) sum += pi_log_prob[i];
        lp_mean = static_cast<float>(sum / b);
        collectives_->AllReduceMean(&lp_mean, 1, "sac mean log-prob");
        lp_data = &lp_mean, lp_n = 1;
      }
      for (int i = 0; i < lp_n; ++i) lp_finite = lp_finite && std::isfinite(lp_data[i]);
    }

    // 3. TD target from the target critics, at a' ~ pi(.|s') (float32 [B, A], log-prob [B]).
    nn::SquashedGaussianSample next;  // the LibTorch actor's
    torch::Tensor next_action, next_log_prob;
    if (!fused_actor_) {  // the fused actor's a' came with a_pi in step 1
      torch::NoGradGuard no_grad;
      next = sample(actor_->forward(next_obs), next_noise);
      next_action = next.action.contiguous();
      next_log_prob = next.log_prob.contiguous();
    }
    const float* nlp = fused_actor_ ? actor_next_->log_prob() : next_log_prob.data_ptr<float>();
    if (fused_) {
      FillCriticInput(b_next_obs_.data(),
                      fused_actor_ ? actor_next_->action() : next_action.data_ptr<float>(), b);
      RunTwin(TwinStage::kForward, target_flat_.data());
      SacTdTarget(b_rewards_.data(), b_dones_.data(), twin_q_[0], twin_q_[1], nlp, alpha,
                  config_.gamma, b, b_target_.data());
    } else {
      torch::NoGradGuard no_grad;
      const torch::Tensor nq1 = qf1_target_->forward(next_obs, next.action).contiguous();
      const torch::Tensor nq2 = qf2_target_->forward(next_obs, next.action).contiguous();
      SacTdTarget(b_rewards_.data(), b_dones_.data(), nq1.data_ptr<float>(), nq2.data_ptr<float>(),
                  nlp, alpha, config_.gamma, b, b_target_.data());
    }

    // 4. Critics: qf_loss = 0.5 (MSE(Q1(s, a), y) + MSE(Q2(s, a), y)), so dqf_loss/dQk_i =
    //    (Qk_i - y_i) / B.
    double qf1_loss = 0.0, qf2_loss = 0.0, q1_mean = 0.0, q2_mean = 0.0;
    float* critic_grads = critic_flat_.grads.data_ptr<float>();
    critic_flat_.grads.zero_();
    if (fused_) {
      FillCriticInput(b_obs_.data(), b_actions_.data(), b);
      twin_grads_ = critic_grads;
      RunTwin(TwinStage::kCriticStep, critic_flat_.data());
      qf1_loss = twin_loss_[0], qf2_loss = twin_loss_[1];
      q1_mean = twin_q_mean_[0], q2_mean = twin_q_mean_[1];
    } else {
      const torch::Tensor q1 = qf1_->forward(obs, actions);
      const torch::Tensor q2 = qf2_->forward(obs, actions);
      const torch::Tensor l1 = (q1 - target).square().mean();
      const torch::Tensor l2 = (q2 - target).square().mean();
      (0.5 * (l1 + l2)).backward();
      qf1_loss = l1.item<double>(), qf2_loss = l2.item<double>();
      q1_mean = q1.mean().item<double>();
      q2_mean = q2.mean().item<double>();
    }
    // A non-finite critic loss (or a test's injection) poisons the gradient before the
    // all-reduce, so with several ranks every rank sees it and skips this step alike (the
    // log-prob mean above is already the ranks' own average).
    if (inject_nonfinite || !std::isfinite(qf1_loss) || !std::isfinite(qf2_loss)) {
      critic_grads[0] = NAN;
    }
    if (collectives_ != nullptr) {
      collectives_->AllReduceMean(critic_grads, critic_flat_.numel(), "sac critic gradients");
    }
    if (!lp_finite || !nn::AllFinite(critic_grads, critic_flat_.numel())) {
      ++nonfinite_skips_;  // the guard: skip this gradient step, nothing changes
      ++skipped;
      continue;
    }
    const double alpha_loss =
        config_.learn_ent_coef
            ? EntropyCoefStep(lp_data, lp_n, target_entropy_, lr, alpha_adam_, &log_alpha_)
            : 0.0;
    critic_adam_.Step(critic_flat_.data(), critic_grads, lr);

    // 5. Actor, against the updated critics; gradients only into the actor's parameters.
    //    actor_loss = mean(alpha log_pi - min(Q1, Q2)(s, a_pi)).
    double actor_loss = 0.0;
    actor_flat_.grads.zero_();
    if (fused_) {
      // The critics' part by hand: dactor_loss/da_pi = -(1/B) dQmin/da (torch.minimum's
      // backward: a tie's gradient half to each critic), then the actor (fused, or LibTorch)
      // backpropagates it and alpha/B per log-prob.
      torch::Tensor a_pi_tensor;
      if (!fused_actor_) a_pi_tensor = pi.action.detach().contiguous();
      const float* a_pi = fused_actor_ ? actor_pi_->action() : a_pi_tensor.data_ptr<float>();
      const float* lp = pi_log_prob;
      FillCriticInput(b_obs_.data(), a_pi, b);
      RunTwin(TwinStage::kForward, critic_flat_.data());
      const float* q1 = twin_q_[0];
      const float* q2 = twin_q_[1];
      const float g = -1.0f / static_cast<float>(b);
      for (int i = 0; i < b; ++i) {
        actor_loss += alpha * lp[i] - std::min(q1[i], q2[i]);
        dq1_[i] = q1[i] < q2[i] ? g : (q1[i] == q2[i] ? 0.5f * g : 0.0f);
        dq2_[i] = q2[i] < q1[i] ? g : (q1[i] == q2[i] ? 0.5f * g : 0.0f);
      }
      actor_loss /= b;
      RunTwin(TwinStage::kBackwardInput, critic_flat_.data());
      const size_t in = static_cast<size_t>(obs_dim_ + act_dim_);
      for (int i = 0; i < b; ++i) {
        for (int k = 0; k < act_dim_; ++k) {
          grad_a_[i * act_dim_ + k] = dx_q1_[i * in + obs_dim_ + k] + dx_q2_[i * in + obs_dim_ + k];
        }
      }
      if (fused_actor_) {
        actor_pi_->Backward(actor_flat_.data(), grad_a_.data(), static_cast<float>(alpha / b),
                            actor_flat_.grads.data_ptr<float>());
      } else {
        torch::autograd::backward(
            {pi.action, pi.log_prob},
            {View(grad_a_.data(), {b, act_dim_}), torch::full({b}, alpha / b, torch::kFloat32)},
            /*retain_graph=*/c10::nullopt, /*create_graph=*/false, /*inputs=*/actor_flat_.list);
      }
    } else {
      const torch::Tensor q_pi =
          torch::min(qf1_->forward(obs, pi.action), qf2_->forward(obs, pi.action));
      const torch::Tensor loss = (alpha * pi.log_prob - q_pi).mean();
      loss.backward(/*gradient=*/{}, /*retain_graph=*/c10::nullopt, /*create_graph=*/false,
                    /*inputs=*/actor_flat_.list);
      actor_loss = loss.item<double>();
    }
    // The actor's own guard: a non-finite actor loss (or a test's injection) poisons its
    // gradient before the all-reduce, so every rank skips alike. The critics and alpha have
    // stepped already (SB3's order: the actor's loss reads the updated critics), so a skipped
    // actor step leaves the actor, its Adam state and the target critics as they were, and the
    // gradient step counts as skipped (no n_updates, no Polyak update, not in the means).
    float* actor_grads = actor_flat_.grads.data_ptr<float>();
    if (inject_nonfinite_actor || !std::isfinite(actor_loss)) actor_grads[0] = NAN;
    if (collectives_ != nullptr) {
      collectives_->AllReduceMean(actor_grads, actor_flat_.numel(), "sac actor gradients");
    }
    if (!nn::AllFinite(actor_grads, actor_flat_.numel())) {
      ++nonfinite_skips_;
      ++skipped;
      continue;
    }
    actor_adam_.Step(actor_flat_.data(), actor_grads, lr);

    // 6. Targets.
    ++n_updates_;
    if (g % config_.target_update_interval == 0) {
      PolyakUpdate(critic_flat_.data(), target_flat_.data(), critic_flat_.numel(), config_.tau);
    }
    sum_alpha += alpha;
    sum_alpha_loss += alpha_loss;
    sum_qf1 += qf1_loss;
    sum_qf2 += qf2_loss;
    sum_actor += actor_loss;
    sum_q1v += q1_mean;
    sum_q2v += q2_mean;
  }
  // Means over the gradient steps (SB3 logs np.mean of each); NaN before training starts.
  const double m = steps - skipped > 0 ? static_cast<double>(steps - skipped) : std::nan("");
  const double values[] = {lr,
                           sum_qf1 / m,
                           sum_qf2 / m,
                           0.5 * (sum_qf1 + sum_qf2) / m,
                           sum_actor / m,
                           steps > 0 && config_.learn_ent_coef ? sum_alpha / m : Alpha(),
                           config_.learn_ent_coef ? sum_alpha_loss / m : std::nan(""),
                           sum_q1v / m,
                           sum_q2v / m,
                           static_cast<double>(n_updates_)};
  static const char* const kKeys[] = {
      "charts/learning_rate", "losses/qf1_loss", "losses/qf2_loss",   "losses/qf_loss",
      "losses/actor_loss",    "losses/alpha",    "losses/alpha_loss", "losses/qf1_values",
      "losses/qf2_values",    "losses/n_updates"};
  static_assert(sizeof(values) / sizeof(values[0]) == sizeof(kKeys) / sizeof(kKeys[0]));
  if (metrics_.empty()) {
    for (const char* key : kKeys) metrics_.emplace_back(key, 0.0);
  }
  for (size_t k = 0; k < metrics_.size(); ++k) metrics_[k].second = values[k];
  return metrics_;
}

// ---------------------------------------------------------------------------------------------
// Acting: tanh(mean) (deterministic, SB3's mode) or a fresh sample, then rescaled to the Box.
void Sac::ActUnit(const float* obs, int n, bool deterministic, float* out, const float* sde_eps) {
  torch::NoGradGuard no_grad;
  const size_t per_row = static_cast<size_t>(latent_dim_) * act_dim_;
  for (int start = 0; start < n; start += act_chunk_) {
    const int rows = std::min(act_chunk_, n - start);
    const torch::Tensor o =
        View(const_cast<float*>(obs) + static_cast<size_t>(start) * obs_dim_, {rows, obs_dim_});
    const ActorOutput p = actor_->forward(o);
    torch::Tensor a;
    if (deterministic) {
      a = torch::tanh(p.mean);
    } else if (config_.use_sde && sde_eps != nullptr) {
      const torch::Tensor eps =
          View(const_cast<float*>(sde_eps) + start * per_row, {rows, latent_dim_, act_dim_});
      a = nn::SampleSquashedSde(p.mean, p.latent, p.log_std, eps).action;
    } else {
      const size_t k = static_cast<size_t>(rows) * act_dim_;
      for (size_t j = 0; j < k; ++j) act_noise_[j] = static_cast<float>(action_rng_.Normal());
      const torch::Tensor std =
          config_.use_sde ? nn::SdeStd(p.latent, p.log_std) : torch::exp(p.log_std);
      a = torch::tanh(p.mean + std * View(act_noise_.data(), {rows, act_dim_}));
    }
    a = a.contiguous();
    std::copy(a.data_ptr<float>(), a.data_ptr<float>() + a.numel(),
              out + static_cast<size_t>(start) * act_dim_);
  }
}

void Sac::ActContinuous(const float* obs, int n, bool deterministic, float* actions) {
  ActUnit(obs, n, deterministic, actions);
  nn::RescaleToBox(actions, n, act_dim_, low_.data(), high_.data(), actions);
}

void Sac::Act(const float*, int, bool, int64_t*) {
  GREENRL_CHECK(false, "sac acts on Box action spaces: call ActContinuous");
}

// ---------------------------------------------------------------------------------------------
// Checkpoint: a LibTorch archive with the actor, the critics, the target critics, log alpha,
// the three Adam states and the counters, plus what the networks were built for so a
// mismatching load fails clearly. The replay buffer is not saved (up to buffer_size
// transitions; SB3 saves it separately, save_replay_buffer), so a reloaded agent acts and
// evaluates exactly, and training resumed from it refills the buffer from scratch.
void Sac::SaveCheckpoint(const std::string& path) const {
  CheckpointWriter w("sac", spec_.id, kCheckpointFormatVersion);
  WriteModel(w);
  w.Save(path);
}

void Sac::WriteModel(CheckpointWriter& w) const {
  auto write_adam = [&](const std::string& prefix, const nn::FlatAdam& adam) {
    w.WriteFloats(prefix + ".exp_avg", adam.exp_avg().data(), adam.num_params());
    w.WriteFloats(prefix + ".exp_avg_sq", adam.exp_avg_sq().data(), adam.num_params());
    w.WriteInt(prefix + ".step", adam.step_count());
  };
  w.WriteInt("obs_dim", obs_dim_);
  w.WriteInt("act_dim", act_dim_);
  w.WriteInts("net_arch", config_.net_arch);
  w.WriteString("activation", nn::ToString(config_.activation));
  w.WriteString("use_sde", config_.use_sde ? "true" : "false");
  w.WriteFloats("actor", actor_flat_.data(), actor_flat_.numel());
  w.WriteFloats("critic", critic_flat_.data(), critic_flat_.numel());
  w.WriteFloats("critic_target", target_flat_.data(), target_flat_.numel());
  w.WriteDouble("log_alpha", log_alpha_);
  write_adam("actor_adam", actor_adam_);
  write_adam("critic_adam", critic_adam_);
  write_adam("alpha_adam", alpha_adam_);
  w.WriteInt("num_timesteps", num_timesteps_);
  w.WriteInt("n_updates", n_updates_);
}

void Sac::LoadCheckpoint(const std::string& path) {
  CheckpointReader r(path, "sac", spec_.id, kCheckpointFormatVersion);
  ReadModel(r);
}

void Sac::SaveTrainingState(const std::string& path, bool replay_buffer,
                            const std::function<void(CheckpointWriter&)>& extra) const {
  CheckpointWriter w("sac", spec_.id, kCheckpointFormatVersion);
  WriteModel(w);
  w.WriteRng("rng.action", action_rng_);
  w.WriteRng("rng.update", update_rng_);
  w.WriteRng("rng.replay", replay_rng_);
  WriteOffPolicyResumeState(w, {nonfinite_skips_, lr_scale_, replay_buffer, refill_until_}, buffer_,
                            replay_buffer);
  if (extra) extra(w);
  w.Save(path);
}

void Sac::LoadTrainingState(const std::string& path,
                            const std::function<void(CheckpointReader&)>& extra) {
  CheckpointReader r(path, "sac", spec_.id, kCheckpointFormatVersion);
  const Rng::State action = r.RngState("rng.action");
  const Rng::State update = r.RngState("rng.update");
  const Rng::State replay = r.RngState("rng.replay");
  const OffPolicyResumeState guard = ReadOffPolicyResumeState(r);
  ReadModel(r);
  RestoreReplayBuffer(r, guard.has_replay, buffer_);
  action_rng_.SetState(action);
  update_rng_.SetState(update);
  replay_rng_.SetState(replay);
  nonfinite_skips_ = guard.nonfinite_skips;
  lr_scale_ = guard.lr_scale;
  refill_until_ = RefillUntil(guard, num_timesteps_, config_.learning_starts);
  if (extra) extra(r);
}

void Sac::ReadModel(CheckpointReader& r) {
  r.ExpectInts("net_arch", "net_arch", config_.net_arch);
  r.ExpectString("activation_fn", "activation", nn::ToString(config_.activation));
  if (r.Has("use_sde") || config_.use_sde) {  // checkpoints from before SAC's gSDE: no entry
    r.ExpectString("use_sde", "use_sde", config_.use_sde ? "true" : "false");
  }
  // Read everything before writing anything, so a bad file leaves the agent as it was.
  auto read = [&](const std::string& key, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    r.ReadFloats(key, v.data(), n);
    return v;
  };
  const auto actor = read("actor", actor_flat_.numel());
  const auto critic = read("critic", critic_flat_.numel());
  const auto target = read("critic_target", target_flat_.numel());
  const auto am = read("actor_adam.exp_avg", actor_flat_.numel());
  const auto av = read("actor_adam.exp_avg_sq", actor_flat_.numel());
  const auto cm = read("critic_adam.exp_avg", critic_flat_.numel());
  const auto cv = read("critic_adam.exp_avg_sq", critic_flat_.numel());
  const auto lm = read("alpha_adam.exp_avg", 1);
  const auto lv = read("alpha_adam.exp_avg_sq", 1);
  const double log_alpha = r.Double("log_alpha");
  const int64_t actor_step = r.Int("actor_adam.step");
  const int64_t critic_step = r.Int("critic_adam.step");
  const int64_t alpha_step = r.Int("alpha_adam.step");
  const int64_t num_timesteps = r.Int("num_timesteps");
  const int64_t n_updates = r.Int("n_updates");
  std::copy(actor.begin(), actor.end(), actor_flat_.data());
  std::copy(critic.begin(), critic.end(), critic_flat_.data());
  std::copy(target.begin(), target.end(), target_flat_.data());
  auto restore = [](nn::FlatAdam& adam, const std::vector<float>& m, const std::vector<float>& v,
                    int64_t step) {
    adam.exp_avg() = m;
    adam.exp_avg_sq() = v;
    adam.set_step_count(step);
  };
  restore(actor_adam_, am, av, actor_step);
  restore(critic_adam_, cm, cv, critic_step);
  restore(alpha_adam_, lm, lv, alpha_step);
  log_alpha_ = static_cast<decltype(log_alpha_)>(log_alpha);
  num_timesteps_ = num_timesteps;
  n_updates_ = n_updates;
}

}  // namespace

std::unique_ptr<Algorithm> MakeSac(const SacConfig& config, const env::EnvSpec& spec) {
  if (spec.discrete_actions()) {
    throw ConfigError("env_id", spec.id,
                      "an env with a Box action space (SAC is for continuous actions)");
  }
  const env::Box& box = std::get<env::Box>(spec.action_space);
  for (size_t k = 0; k < box.low.size(); ++k) {
    if (!std::isfinite(box.low[k]) || !std::isfinite(box.high[k]) || !(box.low[k] < box.high[k])) {
      throw ConfigError("env_id", spec.id,
                        "an env whose action Box has finite bounds low < high (SAC rescales "
                        "[-1, 1] actions to the bounds)");
    }
  }
  return std::make_unique<Sac>(config, spec);
}

}  // namespace greenrl::algo
