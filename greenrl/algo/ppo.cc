// ppo.cc: PPO for Discrete and Box actions (categorical, diagonal Gaussian, gSDE), in CleanRL's
// order: config keys, seeding, networks and optimiser, storage, rollout, bootstrap and GAE,
// epochs x minibatches, logging, checkpoint.
//
// Two update paths compute the same loss and gradients (ppo_test.cc compares them):
// - "fused": forward and backward of both MLPs by hand over BLAS (nn/fused_mlp.h) with the
//   loss gradient written out below; ~20 BLAS calls and a few loops per minibatch;
// - "autograd": LibTorch modules viewing the same flat buffers, loss.backward().
// Either way Adam and gradient clipping run once over the flat gradient buffer.
#include "greenrl/algo/ppo.h"

#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "greenrl/algo/checkpoint.h"
#include "greenrl/algo/gae.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"
#include "greenrl/nn/actor_critic.h"
#include "greenrl/nn/actor_critic_module.h"
#include "greenrl/nn/categorical.h"
#include "greenrl/nn/cuda_graph.h"
#include "greenrl/nn/flat_optim.h"
#include "greenrl/nn/squashed_gaussian.h"
#include "greenrl/nn/tensor_optim.h"

namespace greenrl::algo {

double ProgressRemaining(int64_t num_timesteps, int64_t total_timesteps) {
  if (total_timesteps <= 0) return 0.0;
  const double p = 1.0 - static_cast<double>(num_timesteps) / static_cast<double>(total_timesteps);
  return std::clamp(p, 0.0, 1.0);
}

// ---------------------------------------------------------------------------------------------
// Config: SB3 PPO defaults (stable_baselines3/ppo/ppo.py, policies.py).
void AddPpoKeys(ConfigSchema* schema) {
  AddKey(schema, "policy", ValueType::kString, "MlpPolicy", "policy class (SB3 name)", std::nullopt,
         std::nullopt, std::vector<std::string>{"MlpPolicy"});
  AddKey(schema, "n_steps", ValueType::kInt, "2048", "steps per env per rollout", 1, 1 << 24);
  AddKey(schema, "batch_size", ValueType::kInt, "64", "minibatch size", 1, 1 << 24);
  AddKey(schema, "n_epochs", ValueType::kInt, "10", "passes over each rollout", 1, 10000);
  AddKey(schema, "gamma", ValueType::kFloat, "0.99", "discount factor", 0.0, 1.0);
  AddKey(schema, "gae_lambda", ValueType::kFloat, "0.95", "GAE lambda", 0.0, 1.0);
  AddKey(schema, "learning_rate", ValueType::kSchedule, "0.0003",
         "Adam step size (or lin_<initial>)", 0.0, 1.0);
  AddKey(schema, "clip_range", ValueType::kSchedule, "0.2", "PPO clip epsilon (or lin_<initial>)",
         0.0, 10.0);
  AddKey(schema, "clip_range_vf", ValueType::kSchedule, "0.0",
         "value clipping around the rollout's values (SB3's clip_range_vf; 0: off, SB3's None)",
         0.0, 1e6, {}, false, "0 is off (SB3's None)");
  AddKey(schema, "ent_coef", ValueType::kFloat, "0.0", "entropy bonus weight", 0.0, 10.0);
  AddKey(schema, "vf_coef", ValueType::kFloat, "0.5", "value loss weight", 0.0, 100.0);
  AddKey(schema, "max_grad_norm", ValueType::kFloat, "0.5", "global gradient-norm clip", 0.0, 1e6,
         std::vector<std::string>{}, /*min_exclusive=*/true);
  AddKey(schema, "normalize_advantage", ValueType::kBool, "true",
         "normalise advantages per minibatch");
  AddKey(schema, "target_kl", ValueType::kFloat, "0.0",
         "early-stop epochs when approx_kl > 1.5 target_kl (0: off)", 0.0, 10.0, {}, false,
         "0 is off (SB3's None)");
  AddKey(schema, "policy_kwargs.net_arch.pi", ValueType::kIntList, "[64, 64]", "actor hidden sizes",
         1, 65536);
  AddKey(schema, "policy_kwargs.net_arch.vf", ValueType::kIntList, "[64, 64]",
         "critic hidden sizes", 1, 65536);
  // SB3 >= 1.8: net_arch=[64, 64] gives the actor and the critic the same hidden sizes.
  schema->AddShorthand("policy_kwargs.net_arch",
                       {"policy_kwargs.net_arch.pi", "policy_kwargs.net_arch.vf"});
  AddKey(schema, "policy_kwargs.activation_fn", ValueType::kString, "tanh", "hidden activation",
         std::nullopt, std::nullopt, nn::ActivationNames());
  AddKey(schema, "policy_kwargs.log_std_init", ValueType::kFloat, "0.0",
         "Box actions: initial log std of the diagonal Gaussian", -20.0, 2.0);
  AddKey(schema, "use_sde", ValueType::kBool, "false",
         "Box actions: generalized state-dependent exploration (gSDE)");
  AddKey(schema, "sde_sample_freq", ValueType::kInt, "-1",
         "gSDE: steps between noise-matrix draws (-1 or any value <= 0: once per rollout, as SB3)",
         -(1 << 30), 1 << 30);
  AddKey(schema, "policy_kwargs.ortho_init", ValueType::kBool, "true",
         "orthogonal init (gains sqrt(2), 0.01 actor head, 1 value head)");
  AddKey(schema, "precision", ValueType::kString, "fp32",
         "forward pass dtype (the loss stays float32): fp32, bf16 (CPU or CUDA autocast), fp16 "
         "(CUDA autocast)",
         std::nullopt, std::nullopt, std::vector<std::string>{"fp32", "bf16", "fp16"});
  AddKey(schema, "grad_scaler.enabled", ValueType::kString, "auto",
         "loss scaling: auto (on for fp16 only), true, false", std::nullopt, std::nullopt,
         std::vector<std::string>{"auto", "true", "false"});
  // Bounded so that the scale and its reciprocal are normal float32 numbers.
  AddKey(schema, "grad_scaler.init_scale", ValueType::kFloat, "65536.0", "initial loss scale",
         1e-30, 1e30);
  AddKey(schema, "grad_scaler.growth_factor", ValueType::kFloat, "2.0",
         "scale growth after growth_interval finite steps", 1.0, 1e6, std::vector<std::string>{},
         /*min_exclusive=*/true);
  {  // in (0, 1), as torch.cuda.amp.GradScaler requires (its backoff_factor check)
    KeySpec backoff;
    backoff.key = "grad_scaler.backoff_factor";
    backoff.type = ValueType::kFloat;
    backoff.default_yaml = "0.5";
    backoff.doc = "scale backoff after a non-finite step";
    backoff.min = 0.0;
    backoff.max = 1.0;
    backoff.min_exclusive = true;
    backoff.max_exclusive = true;
    schema->Add(std::move(backoff));
  }
  AddKey(schema, "grad_scaler.growth_interval", ValueType::kInt, "2000",
         "finite steps in a row before the scale grows", 1, 1e9);
  AddKey(schema, "update_path", ValueType::kString, "auto",
         "fused: hand-written backward over BLAS (CPU, fp32); autograd: LibTorch on `device`; "
         "auto: fused where it applies (CPU and fp32), else autograd",
         std::nullopt, std::nullopt, std::vector<std::string>{"auto", "fused", "autograd"});
  AddKey(schema, "device", ValueType::kString, "cpu",
         "where policy and update run: cpu, cuda, auto (cuda when present)", std::nullopt,
         std::nullopt, std::vector<std::string>{"cpu", "cuda", "auto"});
  AddKey(schema, "cuda_graph", ValueType::kBool, "true",
         "device cuda: replay each minibatch step as one captured CUDA graph");
}

PpoConfig PpoConfigFromConfig(const Config& config) {
  PpoConfig c;
  c.n_envs = static_cast<int>(config.GetInt("n_envs"));
  c.seed = static_cast<uint64_t>(config.GetInt("seed"));
  c.n_steps = static_cast<int>(config.GetInt("n_steps"));
  c.batch_size = static_cast<int>(config.GetInt("batch_size"));
  c.n_epochs = static_cast<int>(config.GetInt("n_epochs"));
  c.gamma = config.GetFloat("gamma");
  c.gae_lambda = config.GetFloat("gae_lambda");
  c.learning_rate = config.GetSchedule("learning_rate");
  c.clip_range = config.GetSchedule("clip_range");
  c.clip_range_vf = config.GetSchedule("clip_range_vf");
  c.ent_coef = config.GetFloat("ent_coef");
  c.vf_coef = config.GetFloat("vf_coef");
  c.max_grad_norm = config.GetFloat("max_grad_norm");
  c.normalize_advantage = config.GetBool("normalize_advantage");
  c.target_kl = config.GetFloat("target_kl");
  auto to_ints = [](const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); };
  c.pi_arch = to_ints(config.GetIntList("policy_kwargs.net_arch.pi"));
  c.vf_arch = to_ints(config.GetIntList("policy_kwargs.net_arch.vf"));
  c.activation = nn::ParseActivation("policy_kwargs.activation_fn",
                                     config.GetString("policy_kwargs.activation_fn"));
  c.ortho_init = config.GetBool("policy_kwargs.ortho_init");
  c.log_std_init = config.GetFloat("policy_kwargs.log_std_init");
  c.use_sde = config.GetBool("use_sde");
  c.sde_sample_freq = static_cast<int>(config.GetInt("sde_sample_freq"));
  c.precision = precision::ParsePrecision("precision", config.GetString("precision"));
  const std::string& device = config.GetString("device");
  const bool cuda = torch::cuda::is_available();
  if (device == "cuda" && !cuda) {
    throw ConfigError("device", "cuda",
                      "cpu or auto (this LibTorch " + std::string(TORCH_VERSION) +
                          " sees no CUDA device; GPU runs need a CUDA build: README, section GPU)");
  }
  c.device = device == "auto" ? (cuda ? "cuda" : "cpu") : device;
  c.cuda_graph = config.GetBool("cuda_graph");
  if (c.precision == precision::Precision::kFp16 && c.device == "cpu") {
    // LibTorch 1.13 CPU autocast is bf16 only.
    throw ConfigError("precision", "fp16",
                      "fp32 or bf16 with device cpu (fp16 autocast needs device cuda)");
  }
  const std::string& path = config.GetString("update_path");
  if (path == "fused" && c.device == "cuda") {
    throw ConfigError("update_path", "fused",
                      "autograd or auto with device cuda (the fused path runs on the CPU)");
  }
  const bool fp32 = c.precision == precision::Precision::kFp32;
  if (path == "fused" && !fp32) {
    throw ConfigError("update_path", "fused",
                      "autograd or auto with precision " + config.GetString("precision") +
                          " (the fused path is float32 only; autocast runs on LibTorch)");
  }
  c.update_path = path == "auto" ? (c.device == "cpu" && fp32 ? "fused" : "autograd") : path;
  const std::string& scaler = config.GetString("grad_scaler.enabled");
  c.grad_scaler.enabled =
      scaler == "true" || (scaler == "auto" && c.precision == precision::Precision::kFp16);
  c.grad_scaler.init_scale = config.GetFloat("grad_scaler.init_scale");
  c.grad_scaler.growth_factor = config.GetFloat("grad_scaler.growth_factor");
  c.grad_scaler.backoff_factor = config.GetFloat("grad_scaler.backoff_factor");
  c.grad_scaler.growth_interval = config.GetInt("grad_scaler.growth_interval");
  // batch_size above n_steps * n_envs is SB3's one minibatch of the whole rollout per epoch
  // (rl-zoo's tuned MountainCarContinuous-v0: 256 over a rollout of 8); the trainer says so.
  // A one-row minibatch has no advantage standard deviation: SB3's PPO.__init__ asserts
  // batch_size > 1 and n_steps * n_envs > 1 when normalize_advantage is on.
  if (c.normalize_advantage && c.batch_size < 2) {
    throw ConfigError("batch_size", std::to_string(c.batch_size),
                      "an integer >= 2 with normalize_advantage: true (a one-row minibatch has "
                      "no advantage standard deviation; SB3 refuses it too), or set "
                      "normalize_advantage: false");
  }
  if (c.normalize_advantage && static_cast<int64_t>(c.n_steps) * c.n_envs < 2) {
    throw ConfigError("n_steps", std::to_string(c.n_steps),
                      "n_steps * n_envs >= 2 with normalize_advantage: true (n_envs is " +
                          std::to_string(c.n_envs) +
                          "; a one-row rollout has no advantage standard deviation; SB3 "
                          "refuses it too), or set normalize_advantage: false");
  }
  return c;
}

namespace {

constexpr int64_t kCheckpointFormatVersion = 1;
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // log(2 pi) / 2

class Ppo final : public Algorithm {
 public:
  Ppo(const PpoConfig& config, const env::EnvSpec& spec);

  std::string name() const override { return "ppo"; }
  // What runs now, and in which precision when not float32 ("autograd, bf16"): the budget's
  // reduced-precision rung moves a run to autograd in bf16.
  std::string UpdatePath() const override {
    return std::string(use_autograd_ ? "autograd" : "fused") +
           (config_.precision == precision::Precision::kFp32
                ? ""
                : std::string(", ") + precision::ToString(config_.precision)) +
           (config_.device == "cpu" ? "" : " on " + config_.device);
  }
  int64_t CollectRollout(env::VecEnv& env, std::vector<EpisodeRecord>* episodes) override;
  const Metrics& Update(double progress_remaining) override;
  void Act(const float* obs, int n, bool deterministic, int64_t* actions) override;
  void ActContinuous(const float* obs, int n, bool deterministic, float* actions) override;
  void SeedActing(uint64_t seed) override { sample_rng_.Seed(DeriveSeed(seed, 1)); }
  void SaveCheckpoint(const std::string& path) const override;
  void LoadCheckpoint(const std::string& path) override;
  void SaveTrainingState(const std::string& path, bool replay_buffer,
                         const std::function<void(CheckpointWriter&)>& extra) const override;
  void LoadTrainingState(const std::string& path,
                         const std::function<void(CheckpointReader&)>& extra) override;
  bool CanReducePrecision(std::string* why_not) const override;
  void ReducePrecision() override;
  // device cuda: torch::cuda::synchronize(); the CPU: nothing.
  void SynchronizeDevice() const override {
    if (device_.is_cuda()) torch::cuda::synchronize();
  }
  std::vector<float> GetParameters() const override {
    return std::vector<float>(params_.params(), params_.params() + params_.num_params());
  }
  // The actor MLP: argmax of its logits (Discrete), or its Gaussian mean clipped to the Box.
  DeterministicPolicy ExportDeterministicPolicy() const override {
    DeterministicPolicy p;
    p.algo = name();
    p.obs_dim = obs_dim_;
    p.action_dim = num_actions_;
    const nn::MlpSpec spec = params_.spec().actor_spec();
    p.layers = DenseLayersFromFlat(spec, params_.params());
    p.activation = spec.activation;
    p.head = gaussian_ ? PolicyHead::kClipToBox : PolicyHead::kArgmax;
    if (gaussian_) {
      p.low = action_low_;
      p.high = action_high_;
    }
    return p;
  }
  void SetCollectives(Collectives* collectives) override;
  PpoRolloutView RolloutView() {
    PpoRolloutView v;
    v.n_steps = num_steps_;
    v.n_envs = num_envs_;
    v.obs_dim = obs_dim_;
    v.act_dim = gaussian_ ? num_actions_ : 0;
    v.obs = obs_.data();
    v.actions = gaussian_ ? nullptr : actions_.data();
    v.cont_actions = gaussian_ ? cont_actions_.data() : nullptr;
    v.log_probs = log_probs_.data();
    v.values = values_.data();
    v.advantages = advantages_.data();
    v.returns = returns_.data();
    return v;
  }

 private:
  struct MinibatchStats {
    double pg_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, old_approx_kl = 0,
           clip_fraction = 0;
  };
  void GatherMinibatch(const int64_t* indices, int batch);
  void NormalizeAdvantages(int batch);
  // SB3's KL early stop (approx_kl > 1.5 target_kl), on the rank-averaged approx_kl when
  // data-parallel so that every rank stops at the same minibatch.
  bool KlStop(double approx_kl);
  // Data-parallel: averages the flat gradient buffer over the ranks (no-op single-process).
  void AllReduceGradients(float* grads);
  // clip_range_vf: value clipping of this update, < 0 when off (see PpoConfig).
  MinibatchStats FusedLossAndGrad(int batch, double clip_range, double clip_range_vf);
  // Policy logits float32 [n, A] and values float32 [n] for host obs float32 [n, obs_dim]
  // (fused forward on the CPU; the module on the device otherwise). Valid until the next call.
  std::pair<const float*, const float*> PolicyForward(const float* obs, int n);
  // gSDE: the actor's last hidden features float32 [n, latent] of the last PolicyForward.
  const float* policy_latent_ = nullptr;
  // gSDE: draws each env's exploration matrix E_i ~ N(0, exp(log_std)^2) into sde_noise_.
  void ResampleSdeNoise();
  // gSDE: the action std float32 [A] of one row with features h float32 [latent], from
  // sde_var_weight_ (exp(2 log_std), refreshed by RefreshSdeWeights). Writes std into out[A].
  void SdeStd(const float* h, double* out) const;
  void RefreshSdeWeights();
  // The autograd path: device state, one epoch loop over device tensors, one minibatch step.
  void EnsureTensorState();
  void TensorUpdate(double lr, double clip_range, double clip_range_vf, MinibatchStats* sum,
                    int64_t* num_minibatches, double* grad_norm_sum, int* epochs_run,
                    bool* kl_stopped);
  // Loss and backward for the minibatch at rows `index` (int64 [batch] on the device) of the
  // device rollout; accumulates the stats into stats_. No host sync (capturable).
  void TensorLossAndGrad(const torch::Tensor& index, int batch);
  // Checkpoint entries of the model, Adam and the loss scaler (SaveCheckpoint's content).
  void WriteModel(CheckpointWriter& w) const;
  void ReadModel(CheckpointReader& r);

  // Config and sizes.
  PpoConfig config_;
  env::EnvSpec spec_;
  int obs_dim_, num_actions_, num_envs_, num_steps_;  // num_actions_: logits or Gaussian dims
  bool gaussian_;                                     // Box actions: diagonal Gaussian policy
  bool use_sde_;     // Box actions with gSDE: std from the actor's last hidden features
  int latent_dim_;   // gSDE feature size (latent_sde_dim)
  std::vector<float> action_low_, action_high_;       // float32 [A]: the Box bounds (Gaussian)
  int64_t buffer_size_;
  // The largest minibatch, min(batch_size, n_steps * n_envs): SB3's RolloutBuffer.get yields
  // slices of the rollout, so a batch_size above the rollout is one minibatch of the whole of it
  // and the minibatch buffers need no more rows than that.
  int minibatch_rows_;
  int max_batch_;

  // Seeding: init, sampling and shuffling each own a generator derived from the seed.
  Rng sample_rng_;
  Rng shuffle_rng_;

  // Networks and optimiser: one flat buffer [actor | critic], Adam with SB3's eps = 1e-5.
  nn::ActorCriticParams params_;
  nn::FusedMlp actor_, critic_;
  nn::FlatAdam adam_;
  precision::GradScaler scaler_;
  Collectives* collectives_ = nullptr;  // data-parallel ranks (SetCollectives); null: one process
  // The path each minibatch takes: fused (CPU fp32 only) or autograd (any precision, device).
  bool use_autograd_ = false;

  // Autograd path state on device_ (built at first use from the host state above, which it
  // mirrors back after every update so that Act, checkpoints and GetParameters read the host).
  torch::Device device_{torch::kCPU};
  bool tensor_ready_ = false;
  nn::TensorOptimState opt_;               // flat params, grads, Adam, scaler on the device
  nn::ActorCriticModule module_{nullptr};  // LibTorch view of opt_.params / opt_.grads
  torch::Tensor dev_obs_;         // float32 [T * N, obs_dim]: the rollout, uploaded per update
  torch::Tensor dev_actions_;     // int64 [T * N] (Discrete) or float32 [T * N, A] (Box)
  torch::Tensor dev_log_probs_;   // float32 [T * N]
  torch::Tensor dev_advantages_;  // float32 [T * N]
  torch::Tensor dev_returns_;     // float32 [T * N]
  torch::Tensor dev_perm_;        // int64 [T * N]: this epoch's shuffled row order
  torch::Tensor mb_index_;        // int64 [minibatch_rows_]: the graph's minibatch rows (static)
  torch::Tensor clip_t_;          // float32 [1]: clip range of this update (static)
  torch::Tensor clip_vf_t_;       // float32 [1]: clip_range_vf of this update (static)
  torch::Tensor dev_old_values_;  // float32 [T * N]: the rollout's values (clip_range_vf)
  torch::Tensor stats_;       // float32 [7]: sums of pg, value, entropy, kl, old kl, clipfrac, norm
  torch::Tensor last_stats_;  // float32 [6]: the last minibatch's share of the first six
  std::unique_ptr<nn::CudaGraph> graph_;  // the full-size minibatch step, after kWarmupSteps
  int eager_steps_ = 0;  // full-size steps run eagerly so far (warm-up before capture)
  static constexpr int kWarmupSteps = 3;  // PyTorch's docs warm up 3 iterations on a side stream
  std::vector<float> dev_logits_host_, dev_values_host_;  // rollout forward results on the host

  // Storage, t-major [n_steps, n_envs, ...].
  std::vector<float> obs_;           // float32 [T, N, obs_dim]
  std::vector<int64_t> actions_;     // int64 [T, N] (Discrete)
  std::vector<float> cont_actions_;  // float32 [T, N, A] (Box): the unclipped Gaussian samples
  std::vector<float> log_probs_;     // float32 [T, N]
  std::vector<float> values_;        // float32 [T, N]
  std::vector<float> rewards_;       // float32 [T, N]
  std::vector<uint8_t> terminated_;  // uint8 [T, N]
  std::vector<uint8_t> truncated_;   // uint8 [T, N]
  std::vector<float> final_values_;  // float32 [T, N]: V(final_obs) where truncated
  std::vector<float> last_values_;   // float32 [N]: V(obs after the rollout)
  std::vector<float> advantages_;    // float32 [T, N]
  std::vector<float> returns_;       // float32 [T, N]

  // Minibatch scratch (allocated once).
  std::vector<int64_t> indices_;        // int64 [T * N], permuted each epoch
  std::vector<float> mb_obs_;           // float32 [B, obs_dim]
  std::vector<int64_t> mb_actions_;     // int64 [B]
  std::vector<float> mb_cont_actions_;  // float32 [B, A]
  std::vector<float> mb_log_probs_, mb_advantages_, mb_returns_;  // float32 [B]
  std::vector<float> mb_old_values_;  // float32 [B]: the rollout's values (clip_range_vf)
  std::vector<float> grad_logits_;                                // float32 [B, A]
  std::vector<float> grad_values_;                                // float32 [B]
  Metrics metrics_;                       // returned by Update; keys fixed after the first call
  std::vector<float> row_log_probs_;      // float32 [A]
  std::vector<double> log_std_grad_acc_;  // float64 [log_std_size]: d loss / d log std, summed
  std::vector<float> sde_noise_;          // float32 [N, latent, A]: gSDE exploration matrices
  std::vector<double> sde_var_weight_;    // float64 [latent, A]: exp(2 log_std) (gSDE)
  std::vector<double> row_std_;           // float64 [A]: one row's gSDE std
  std::vector<double> row_probs_;         // float64 [A]: one row's softmax (Discrete actions)
  std::vector<float> dev_latent_host_;    // float32 [n, latent]: device rollout features (gSDE)
};

Ppo::Ppo(const PpoConfig& config, const env::EnvSpec& spec)
    : config_(config),
      spec_(spec),
      obs_dim_(static_cast<int>(spec.obs_dim())),
      num_actions_(static_cast<int>(spec.discrete_actions() ? spec.num_actions() : spec.act_dim())),
      num_envs_(config.n_envs),
      num_steps_(config.n_steps),
      gaussian_(!spec.discrete_actions()),
      use_sde_(config.use_sde && gaussian_),
      latent_dim_(config.pi_arch.empty() ? obs_dim_ : config.pi_arch.back()),
      buffer_size_(static_cast<int64_t>(config.n_steps) * config.n_envs),
      minibatch_rows_(static_cast<int>(std::min<int64_t>(config.batch_size, buffer_size_))),
      max_batch_(std::max({minibatch_rows_, config.n_envs, 64})),
      sample_rng_(DeriveSeed(config.seed, 1)),
      shuffle_rng_(DeriveSeed(config.seed, 2)),
      params_(nn::ActorCriticSpec{obs_dim_, num_actions_, gaussian_, config.log_std_init,
                                  config.pi_arch, config.vf_arch, config.activation,
                                  config.ortho_init, use_sde_}),
      actor_(params_.spec().actor_spec(), max_batch_),
      critic_(params_.spec().critic_spec(), max_batch_),
      adam_(params_.num_params(), nn::AdamOptions{0.9, 0.999, 1e-5}),
      scaler_(config.grad_scaler) {
  Rng init_rng(DeriveSeed(config.seed, 0));
  params_.Initialize(init_rng);
  use_autograd_ =
      config_.update_path == "autograd" || config_.precision != precision::Precision::kFp32;
  if (config_.device == "cuda") {
    GREENRL_CHECK(use_autograd_, "device cuda needs update_path autograd");
    device_ = torch::Device(torch::kCUDA, 0);
  }

  const size_t tn = static_cast<size_t>(buffer_size_);
  obs_.assign(tn * obs_dim_, 0.0f);
  actions_.assign(gaussian_ ? 0 : tn, 0);
  cont_actions_.assign(gaussian_ ? tn * num_actions_ : 0, 0.0f);
  if (gaussian_) {
    const auto& box = std::get<env::Box>(spec.action_space);
    action_low_ = box.low;
    action_high_ = box.high;
  }
  log_probs_.assign(tn, 0.0f);
  values_.assign(tn, 0.0f);
  rewards_.assign(tn, 0.0f);
  terminated_.assign(tn, 0);
  truncated_.assign(tn, 0);
  final_values_.assign(tn, 0.0f);
  last_values_.assign(num_envs_, 0.0f);
  advantages_.assign(tn, 0.0f);
  returns_.assign(tn, 0.0f);
  indices_.resize(tn);
  const size_t b = static_cast<size_t>(minibatch_rows_);
  mb_obs_.assign(b * obs_dim_, 0.0f);
  mb_actions_.assign(b, 0);
  mb_cont_actions_.assign(gaussian_ ? b * num_actions_ : 0, 0.0f);
  mb_log_probs_.assign(b, 0.0f);
  mb_advantages_.assign(b, 0.0f);
  mb_returns_.assign(b, 0.0f);
  mb_old_values_.assign(b, 0.0f);
  grad_logits_.assign(b * num_actions_, 0.0f);
  grad_values_.assign(b, 0.0f);
  row_log_probs_.assign(num_actions_, 0.0f);
  row_probs_.assign(num_actions_, 0.0);
  log_std_grad_acc_.assign(params_.spec().log_std_size(), 0.0);
  if (use_sde_) {
    sde_noise_.assign(static_cast<size_t>(num_envs_) * latent_dim_ * num_actions_, 0.0f);
    sde_var_weight_.assign(static_cast<size_t>(latent_dim_) * num_actions_, 0.0);
    row_std_.assign(num_actions_, 0.0);
  }
}

// gSDE (SB3 StateDependentNoiseDistribution, full_std=True, use_expln=False): std of action k
// for features h is sqrt(sum_j h_j^2 exp(2 log_std[j, k]) + 1e-6); the noise of env i is
// h^T E_i with E_i[j, k] ~ N(0, exp(log_std[j, k])^2), whose variance is that sum.
void Ppo::RefreshSdeWeights() {
  const float* log_std = params_.log_std();
  for (size_t jk = 0; jk < sde_var_weight_.size(); ++jk) {
    sde_var_weight_[jk] = std::exp(2.0 * static_cast<double>(log_std[jk]));
  }
}

void Ppo::SdeStd(const float* h, double* out) const {
  for (int k = 0; k < num_actions_; ++k) out[k] = 0.0;
  for (int j = 0; j < latent_dim_; ++j) {
    const double h2 = static_cast<double>(h[j]) * h[j];
    const double* w = &sde_var_weight_[static_cast<size_t>(j) * num_actions_];
    for (int k = 0; k < num_actions_; ++k) out[k] += h2 * w[k];
  }
  for (int k = 0; k < num_actions_; ++k) out[k] = std::sqrt(out[k] + nn::kSdeEpsilon);
}

void Ppo::ResampleSdeNoise() {
  const float* log_std = params_.log_std();
  const size_t per_env = static_cast<size_t>(latent_dim_) * num_actions_;
  for (int i = 0; i < num_envs_; ++i) {
    for (size_t jk = 0; jk < per_env; ++jk) {
      sde_noise_[i * per_env + jk] =
          static_cast<float>(std::exp(static_cast<double>(log_std[jk])) * sample_rng_.Normal());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rollout: sample a ~ pi(.|obs) (fused forward, no autograd), step the envs, store. Truncated
// rows get V(final_obs) for the bootstrap; the value of the obs after the last step closes the
// rollout (GAE below).
int64_t Ppo::CollectRollout(env::VecEnv& env, std::vector<EpisodeRecord>* episodes) {
  GREENRL_CHECK(env.num_envs() == num_envs_, "VecEnv size differs from n_envs");
  if (device_.is_cuda()) EnsureTensorState();
  const int n = num_envs_;
  int64_t* env_actions = gaussian_ ? nullptr : env.discrete_actions();
  if (use_sde_) RefreshSdeWeights();
  // The weights change only in Update: each wide layer's W is transposed once per rollout
  // instead of once per forward (the same outputs, bit for bit).
  nn::FusedMlp::FrozenWeights frozen_actor(actor_, params_.actor_params());
  nn::FusedMlp::FrozenWeights frozen_critic(critic_, params_.critic_params());
  for (int t = 0; t < num_steps_; ++t) {
    const size_t row = static_cast<size_t>(t) * n;
    float* obs_t = &obs_[row * obs_dim_];
    std::copy(env.obs(), env.obs() + static_cast<size_t>(n) * obs_dim_, obs_t);
    const auto [logits, values] = PolicyForward(obs_t, n);
    if (use_sde_ && (t == 0 || (config_.sde_sample_freq > 0 && t % config_.sde_sample_freq == 0))) {
      ResampleSdeNoise();  // SB3: reset_noise at the rollout's start and every sde_sample_freq
    }
    if (use_sde_) {
      // a = mean + h^T E_i; log N(a; mean, std(h)) with std(h) as SdeStd.
      float* env_cont = env.continuous_actions();
      const size_t per_env = static_cast<size_t>(latent_dim_) * num_actions_;
      for (int i = 0; i < n; ++i) {
        const float* h = policy_latent_ + static_cast<size_t>(i) * latent_dim_;
        const float* e = &sde_noise_[i * per_env];
        SdeStd(h, row_std_.data());
        double log_prob = 0.0;
        for (int k = 0; k < num_actions_; ++k) {
          double noise = 0.0;
          for (int j = 0; j < latent_dim_; ++j) {
            noise += static_cast<double>(h[j]) * e[static_cast<size_t>(j) * num_actions_ + k];
          }
          const size_t ik = static_cast<size_t>(i) * num_actions_ + k;
          const float a = static_cast<float>(logits[ik] + noise);
          const double u = (static_cast<double>(a) - logits[ik]) / row_std_[k];
          log_prob += -0.5 * u * u - std::log(row_std_[k]) - kHalfLog2Pi;
          cont_actions_[row * num_actions_ + ik] = a;
          env_cont[ik] = std::clamp(a, action_low_[k], action_high_[k]);
        }
        log_probs_[row + i] = static_cast<float>(log_prob);
      }
    } else if (gaussian_) {
      // a = mean + std * eps, eps ~ N(0, I); log N(a; mean, std) = sum_j -eps_j^2 / 2 - log std_j
      // - log(2 pi) / 2. The env gets a clipped to the Box; the buffer keeps a.
      const float* log_std = params_.log_std();
      float* env_cont = env.continuous_actions();
      for (int i = 0; i < n; ++i) {
        double log_prob = 0.0;
        for (int j = 0; j < num_actions_; ++j) {
          const size_t k = static_cast<size_t>(i) * num_actions_ + j;
          const double eps = sample_rng_.Normal();
          const float a =
              static_cast<float>(logits[k] + std::exp(static_cast<double>(log_std[j])) * eps);
          log_prob += -0.5 * eps * eps - log_std[j] - kHalfLog2Pi;
          cont_actions_[row * num_actions_ + k] = a;
          env_cont[k] = std::clamp(a, action_low_[j], action_high_[j]);
        }
        log_probs_[row + i] = static_cast<float>(log_prob);
      }
    } else {
      for (int i = 0; i < n; ++i) {
        nn::LogSoftmaxRow(logits + static_cast<size_t>(i) * num_actions_, num_actions_,
                          row_log_probs_.data());
        const int64_t a = nn::SampleCategorical(row_log_probs_.data(), num_actions_, sample_rng_);
        actions_[row + i] = a;
        log_probs_[row + i] = row_log_probs_[a];
        env_actions[i] = a;
      }
    }
    std::copy(values, values + n, &values_[row]);

    env.Step();

    bool any_truncated = false;
    for (int i = 0; i < n; ++i) {
      rewards_[row + i] = env.reward()[i];
      terminated_[row + i] = env.terminated()[i];
      truncated_[row + i] = env.truncated()[i];
      final_values_[row + i] = 0.0f;
      any_truncated |= env.truncated()[i] && !env.terminated()[i];
    }
    AppendFinishedEpisodes(env, t, episodes);
    if (any_truncated) {
      const float* final_values = PolicyForward(env.final_obs(), n).second;
      for (int i = 0; i < n; ++i) {
        if (truncated_[row + i] && !terminated_[row + i]) final_values_[row + i] = final_values[i];
      }
    }
  }
  const float* last = PolicyForward(env.obs(), n).second;
  std::copy(last, last + n, last_values_.begin());

  // Bootstrap and GAE.
  ComputeGae(num_steps_, n, config_.gamma, config_.gae_lambda, rewards_.data(), values_.data(),
             terminated_.data(), truncated_.data(), final_values_.data(), last_values_.data(),
             advantages_.data(), returns_.data());
  return buffer_size_;
}

std::pair<const float*, const float*> Ppo::PolicyForward(const float* obs, int n) {
  if (!device_.is_cuda()) {
    const float* logits = actor_.Forward(params_.actor_params(), obs, n);
    const int hidden = actor_.spec().num_layers() - 2;
    policy_latent_ = hidden >= 0 ? actor_.LayerOutput(hidden) : obs;
    return {logits, critic_.Forward(params_.critic_params(), obs, n)};
  }
  torch::NoGradGuard no_grad;
  auto host_obs = torch::from_blob(const_cast<float*>(obs), {n, obs_dim_}, torch::kFloat32);
  auto [logits, values, latent] = module_->ForwardWithLatent(host_obs.to(device_));
  if (use_sde_) {
    dev_latent_host_.resize(static_cast<size_t>(n) * latent_dim_);
    torch::from_blob(dev_latent_host_.data(), {n, latent_dim_}, torch::kFloat32).copy_(latent);
    policy_latent_ = dev_latent_host_.data();
  }
  dev_logits_host_.resize(static_cast<size_t>(n) * num_actions_);
  dev_values_host_.resize(n);
  torch::from_blob(dev_logits_host_.data(), {n, num_actions_}, torch::kFloat32).copy_(logits);
  torch::from_blob(dev_values_host_.data(), {n}, torch::kFloat32).copy_(values);
  return {dev_logits_host_.data(), dev_values_host_.data()};
}

// ---------------------------------------------------------------------------------------------
// Update: n_epochs x shuffled minibatches (the last one may be smaller, as SB3's
// RolloutBuffer.get), loss = pg_loss + ent_coef * entropy_loss + vf_coef * value_loss,
// gradient-norm clip, Adam; KL early stop as SB3 (approx_kl > 1.5 target_kl).
const Metrics& Ppo::Update(double progress_remaining) {
  const double lr = config_.learning_rate.Value(progress_remaining) * lr_scale_;
  const double clip_range = config_.clip_range.Value(progress_remaining);
  // Off (SB3's None) when configured as 0; a schedule that decays to 0 stays on (SB3 alike).
  const double clip_range_vf = config_.clip_range_vf.Value(1.0) > 0.0
                                   ? config_.clip_range_vf.Value(progress_remaining)
                                   : -1.0;
  const int64_t skipped_before = scaler_.skipped_steps();
  const bool inject_nonfinite = inject_nonfinite_ > 0;
  if (inject_nonfinite) --inject_nonfinite_;
  MinibatchStats sum;
  int64_t num_minibatches = 0;
  double grad_norm_sum = 0.0;
  bool stop = false;
  bool kl_stopped = false;  // the last minibatch's loss was computed, and its step not taken
  int epochs_run = 0;
  if (use_autograd_) {
    TensorUpdate(lr, clip_range, clip_range_vf, &sum, &num_minibatches, &grad_norm_sum, &epochs_run,
                 &kl_stopped);
    stop = true;  // the fused loop below is skipped
  }
  for (int epoch = 0; epoch < config_.n_epochs && !stop; ++epoch) {
    ++epochs_run;
    std::iota(indices_.begin(), indices_.end(), 0);
    for (int64_t i = buffer_size_ - 1; i > 0; --i) {  // Fisher-Yates
      std::swap(indices_[i], indices_[shuffle_rng_.Below(static_cast<uint64_t>(i) + 1)]);
    }
    for (int64_t start = 0; start < buffer_size_; start += config_.batch_size) {
      const int batch =
          static_cast<int>(std::min<int64_t>(config_.batch_size, buffer_size_ - start));
      GatherMinibatch(&indices_[start], batch);
      NormalizeAdvantages(batch);
      params_.ZeroGrads();
      const MinibatchStats s = FusedLossAndGrad(batch, clip_range, clip_range_vf);
      if (inject_nonfinite) params_.grads()[0] = std::numeric_limits<float>::quiet_NaN();
      sum.pg_loss += s.pg_loss;
      sum.value_loss += s.value_loss;
      sum.entropy += s.entropy;
      sum.approx_kl += s.approx_kl;
      sum.old_approx_kl += s.old_approx_kl;
      sum.clip_fraction += s.clip_fraction;
      ++num_minibatches;
      if (KlStop(s.approx_kl)) {
        stop = true;  // SB3: skip this step and the remaining epochs
        kl_stopped = true;
        break;
      }
      AllReduceGradients(params_.grads());
      // Gradients were computed for loss x scale: unscale, and skip a step with inf or NaN
      // (GradScaler.step), then update the scale (GradScaler.update).
      // Without loss scaling there is nothing to unscale, and the gradient norm (summed in
      // float64, so it cannot overflow for float32 entries) is non-finite exactly when an entry
      // is inf or NaN: one pass over the buffer checks and measures.
      bool found_inf =
          scaler_.enabled() && scaler_.UnscaleAndCheck(params_.grads(), params_.num_params());
      if (!found_inf) {
        const double norm =
            nn::ClipGradNorm(params_.grads(), params_.num_params(), config_.max_grad_norm);
        found_inf = !std::isfinite(norm);
        if (!found_inf) {
          grad_norm_sum += norm;
          adam_.Step(params_.params(), params_.grads(), lr);
        }
      }
      // With loss scaling, a skip at a scale <= 1 is no back-off from an overflow the scale
      // caused: the loss or gradient itself is not finite, which the guard counts.
      if (found_inf && scaler_.enabled() && scaler_.scale() <= 1.0) ++nonfinite_skips_;
      scaler_.Update(found_inf);
    }
  }
  // Without loss scaling a skipped step means a non-finite loss or gradient (the guard counts
  // them); with it, skipped steps are the scaler's normal back-off, but for those at a scale
  // <= 1 (counted above, and by the autograd path's skipped_unscaled).
  if (!scaler_.enabled()) nonfinite_skips_ += scaler_.skipped_steps() - skipped_before;
  // Explained variance of the rollout's values for its returns (SB3: 1 - Var[y - y_pred] / Var[y]).
  double mean_y = 0, mean_d = 0;
  for (int64_t k = 0; k < buffer_size_; ++k) {
    mean_y += returns_[k];
    mean_d += returns_[k] - values_[k];
  }
  mean_y /= buffer_size_;
  mean_d /= buffer_size_;
  double var_y = 0, var_d = 0;
  for (int64_t k = 0; k < buffer_size_; ++k) {
    var_y += (returns_[k] - mean_y) * (returns_[k] - mean_y);
    const double d = returns_[k] - values_[k] - mean_d;
    var_d += d * d;
  }
  const double explained_variance = var_y == 0.0 ? std::nan("") : 1.0 - var_d / var_y;
  // The losses are means over every minibatch whose loss was computed, the KL-stopped one
  // included (SB3 records its losses before the check); the gradient norm is the mean over the
  // steps attempted (a step skipped for inf/NaN adds 0), which leaves the KL-stopped one out.
  const double m = static_cast<double>(std::max<int64_t>(num_minibatches, 1));
  const int64_t steps_attempted = num_minibatches - (kl_stopped ? 1 : 0);
  // The keys are built once (first call); later calls only write values: no allocation.
  const double values[] = {
      lr, clip_range, sum.value_loss / m, sum.pg_loss / m, sum.entropy / m, sum.old_approx_kl / m,
      sum.approx_kl / m, sum.clip_fraction / m, explained_variance,
      // None when target_kl stopped the first minibatch: NaN, an empty metrics.csv field.
      steps_attempted > 0 ? grad_norm_sum / static_cast<double>(steps_attempted) : std::nan(""),
      static_cast<double>(adam_.step_count()), static_cast<double>(epochs_run), scaler_.scale(),
      // The scaler's skips (README: 0 when it is off; the guard counts
      // non-finite steps without loss scaling, nonfinite_skips_).
      scaler_.enabled() ? static_cast<double>(scaler_.skipped_steps()) : 0.0};
  static const char* const kKeys[] = {
      "charts/learning_rate", "charts/clip_range",   "losses/value_loss",
      "losses/policy_loss",   "losses/entropy",      "losses/old_approx_kl",
      "losses/approx_kl",     "losses/clipfrac",     "losses/explained_variance",
      "losses/grad_norm",     "losses/n_updates",    "losses/epochs",
      "charts/loss_scale",    "losses/skipped_steps"};
  constexpr size_t kNumKeys = sizeof(kKeys) / sizeof(kKeys[0]);
  static_assert(sizeof(values) / sizeof(values[0]) == kNumKeys);
  if (metrics_.empty()) {
    for (const char* key : kKeys) metrics_.emplace_back(key, 0.0);
    // SB3 logs train/clip_range_vf only when value clipping is on; so does this (a run's
    // clip_range_vf is on or off for all its updates).
    if (clip_range_vf >= 0.0) metrics_.emplace_back("charts/clip_range_vf", 0.0);
    // SB3's train/std for a Gaussian policy, under SB3's own key (CleanRL has none): the mean
    // of exp(log_std) over its entries after the update (th.exp(policy.log_std).mean(); with
    // gSDE the [features, actions] matrix's, so not the action std itself).
    if (gaussian_) metrics_.emplace_back("train/std", 0.0);
  }
  for (size_t k = 0; k < kNumKeys; ++k) metrics_[k].second = values[k];
  size_t extra = kNumKeys;
  if (clip_range_vf >= 0.0) metrics_[extra++].second = clip_range_vf;
  if (gaussian_) {
    const float* log_std = params_.log_std();
    const int64_t n = params_.spec().log_std_size();
    double sum_std = 0.0;
    for (int64_t j = 0; j < n; ++j) sum_std += std::exp(static_cast<double>(log_std[j]));
    metrics_[extra].second = sum_std / static_cast<double>(std::max<int64_t>(n, 1));
  }
  return metrics_;
}

bool Ppo::KlStop(double approx_kl) {
  if (config_.target_kl <= 0.0) return false;
  if (collectives_ != nullptr) {
    collectives_->AllReduceSum(&approx_kl, 1, "ppo approx_kl");
    approx_kl /= collectives_->world_size();
  }
  return approx_kl > 1.5 * config_.target_kl;
}

void Ppo::AllReduceGradients(float* grads) {
  if (collectives_ != nullptr) {
    collectives_->AllReduceMean(grads, params_.num_params(), "ppo gradients");
  }
}

// Data-parallel PPO as DD-PPO (Wijmans et al., 2020, arXiv:1911.00357): rank 0's initial
// parameters everywhere, then gradients averaged per minibatch (AllReduceGradients). The
// all-reduce reads host buffers, so the CUDA device (and its graph capture) is refused.
void Ppo::SetCollectives(Collectives* collectives) {
  if (collectives != nullptr && device_.is_cuda()) {
    throw ConfigError("device", "cuda",
                      "cpu when training data-parallel (the gradient all-reduce reads host "
                      "buffers)");
  }
  collectives_ = collectives;
  if (collectives_ == nullptr) return;
  collectives_->Broadcast(params_.params(), params_.num_params(), "ppo parameters");
  tensor_ready_ = false;  // the autograd path rebuilds its state from the host parameters
}

void Ppo::GatherMinibatch(const int64_t* indices, int batch) {
  for (int j = 0; j < batch; ++j) {
    const int64_t k = indices[j];
    std::copy(&obs_[k * obs_dim_], &obs_[(k + 1) * obs_dim_],
              &mb_obs_[static_cast<size_t>(j) * obs_dim_]);
    if (gaussian_) {
      std::copy(&cont_actions_[k * num_actions_], &cont_actions_[(k + 1) * num_actions_],
                &mb_cont_actions_[static_cast<size_t>(j) * num_actions_]);
    } else {
      mb_actions_[j] = actions_[k];
    }
    mb_log_probs_[j] = log_probs_[k];
    mb_advantages_[j] = advantages_[k];
    mb_returns_[j] = returns_[k];
    mb_old_values_[j] = values_[k];
  }
}

// (A - mean) / (std + 1e-8) with the unbiased std, as SB3 (torch.std). A minibatch of one row
// is left as it is: its std is undefined (SB3 >= 1.8 skips normalisation when len == 1, since
// the result would be NaN).
void Ppo::NormalizeAdvantages(int batch) {
  if (!config_.normalize_advantage || batch < 2) return;
  double mean = 0.0;
  for (int j = 0; j < batch; ++j) mean += mb_advantages_[j];
  mean /= batch;
  double var = 0.0;
  for (int j = 0; j < batch; ++j) var += (mb_advantages_[j] - mean) * (mb_advantages_[j] - mean);
  const double std = std::sqrt(var / (batch - 1));
  for (int j = 0; j < batch; ++j) {
    mb_advantages_[j] = static_cast<float>((mb_advantages_[j] - mean) / (std + 1e-8));
  }
}

// The loss and its gradient by hand. Per row i with logits z, p = softmax(z), action a,
// r = exp(log p_a - old_log_prob), advantage A, clip range c, batch size B:
//   pg_loss      = -(1/B) sum_i min(r A, clamp(r, 1-c, 1+c) A)
//     d/d log p_a = -(1/B) g r, with g = A where r A < clamp(r) A or (tie and r in [1-c, 1+c]),
//                   A / 2 on a tie outside, 0 where clamp(r) A < r A (torch.min splits ties in
//                   half; torch.clamp passes gradient only inside [1-c, 1+c], bounds included)
//   entropy_loss = -(1/B) sum_i H_i,  dH/dz_k = -p_k (log p_k + H)
//   value_loss   = (1/B) sum_i (R_i - v_i)^2,  d/dv_i = 2 (v_i - R_i) / B; with clip_range_vf
//                  c_v (SB3), v_i is replaced by v_old_i + clamp(v_i - v_old_i, -c_v, c_v), whose
//                  derivative is 1 inside [-c_v, c_v] (bounds included, as torch.clamp) and 0
//                  outside
//   d log p_a / dz_k = [k == a] - p_k
Ppo::MinibatchStats Ppo::FusedLossAndGrad(int batch, double clip_range, double clip_range_vf) {
  const float* logits = actor_.Forward(params_.actor_params(), mb_obs_.data(), batch);
  const float* values = critic_.Forward(params_.critic_params(), mb_obs_.data(), batch);
  const double inv_b = 1.0 / batch;
  const double lo = 1.0 - clip_range, hi = 1.0 + clip_range;
  const double loss_scale = scaler_.scale();
  MinibatchStats s;
  // Gaussian (Box actions): with u_j = (a_j - mean_j) / std_j,
  //   log p = sum_j -u_j^2 / 2 - log std_j - log(2 pi) / 2,
  //   H = sum_j log std_j + (1 + log 2 pi) / 2,
  //   d log p / d mean_j = u_j / std_j, d log p / d log std_j = u_j^2 - 1, dH / d log std_j = 1.
  const float* log_std = params_.log_std();
  double gaussian_entropy = 0.0;
  if (gaussian_) {
    for (int j = 0; j < num_actions_; ++j) gaussian_entropy += log_std[j] + 0.5 + kHalfLog2Pi;
  }
  std::fill(log_std_grad_acc_.begin(), log_std_grad_acc_.end(), 0.0);
  // gSDE: with s_k = std of action k (SdeStd) and u_k = (a_k - mean_k) / s_k,
  //   log p = sum_k -u_k^2 / 2 - log s_k - log(2 pi) / 2,  H = sum_k log s_k + (1 + log 2 pi) / 2,
  //   d log p / d mean_k = u_k / s_k,  d log p / d s_k = (u_k^2 - 1) / s_k,  dH / d s_k = 1 / s_k,
  //   d s_k / d log_std[j, k] = h_j^2 exp(2 log_std[j, k]) / s_k (h detached, as SB3's
  //   learn_features=False, so nothing flows back into the actor's hidden layers from s).
  const int hidden = actor_.spec().num_layers() - 2;
  const float* latent = use_sde_ ? (hidden >= 0 ? actor_.LayerOutput(hidden) : mb_obs_.data())
                                 : nullptr;
  if (use_sde_) RefreshSdeWeights();
  for (int i = 0; i < batch; ++i) {
    const float* z = logits + static_cast<size_t>(i) * num_actions_;
    float* logp = row_log_probs_.data();
    double entropy = 0.0, log_prob = 0.0;
    int64_t a = 0;
    const float* h = use_sde_ ? latent + static_cast<size_t>(i) * latent_dim_ : nullptr;
    if (use_sde_) {
      SdeStd(h, row_std_.data());
      const float* act = &mb_cont_actions_[static_cast<size_t>(i) * num_actions_];
      for (int k = 0; k < num_actions_; ++k) {
        const double u = (static_cast<double>(act[k]) - z[k]) / row_std_[k];
        const double log_s = std::log(row_std_[k]);
        log_prob += -0.5 * u * u - log_s - kHalfLog2Pi;
        entropy += log_s + 0.5 + kHalfLog2Pi;
      }
    } else if (gaussian_) {
      entropy = gaussian_entropy;
      const float* act = &mb_cont_actions_[static_cast<size_t>(i) * num_actions_];
      for (int j = 0; j < num_actions_; ++j) {
        const double u = (static_cast<double>(act[j]) - z[j]) * std::exp(-double(log_std[j]));
        log_prob += -0.5 * u * u - log_std[j] - kHalfLog2Pi;
      }
    } else {
      entropy = nn::LogSoftmaxRow(z, num_actions_, logp, row_probs_.data());
      a = mb_actions_[i];
      log_prob = logp[a];
    }
    const double log_ratio = log_prob - mb_log_probs_[i];
    const double ratio = std::exp(log_ratio);
    const double adv = mb_advantages_[i];
    const double s1 = ratio * adv;
    const double s2 = std::clamp(ratio, lo, hi) * adv;
    s.pg_loss -= std::min(s1, s2) * inv_b;
    const bool in_range = ratio >= lo && ratio <= hi;
    const double g_ratio = s1 < s2 ? adv : (s1 == s2 ? adv * (in_range ? 1.0 : 0.5) : 0.0);
    const double d_logp_a = -inv_b * g_ratio * ratio;
    float* g = &grad_logits_[static_cast<size_t>(i) * num_actions_];
    if (use_sde_) {
      const float* act = &mb_cont_actions_[static_cast<size_t>(i) * num_actions_];
      for (int k = 0; k < num_actions_; ++k) {
        const double inv_s = 1.0 / row_std_[k];
        const double u = (static_cast<double>(act[k]) - z[k]) * inv_s;
        g[k] = static_cast<float>(loss_scale * d_logp_a * u * inv_s);
        // d loss / d s_k: the ratio term and the entropy term -ent_coef * mean(H).
        const double d_s = loss_scale * (d_logp_a * (u * u - 1.0) - config_.ent_coef * inv_b) * inv_s;
        for (int j = 0; j < latent_dim_; ++j) {
          const size_t jk = static_cast<size_t>(j) * num_actions_ + k;
          log_std_grad_acc_[jk] +=
              d_s * static_cast<double>(h[j]) * h[j] * sde_var_weight_[jk] * inv_s;
        }
      }
    } else if (gaussian_) {
      const float* act = &mb_cont_actions_[static_cast<size_t>(i) * num_actions_];
      for (int j = 0; j < num_actions_; ++j) {
        const double inv_std = std::exp(-double(log_std[j]));
        const double u = (static_cast<double>(act[j]) - z[j]) * inv_std;
        g[j] = static_cast<float>(loss_scale * d_logp_a * u * inv_std);
        // The entropy term -ent_coef * mean(H) adds -ent_coef / B per row to d/d log std.
        log_std_grad_acc_[j] += loss_scale * (d_logp_a * (u * u - 1.0) - config_.ent_coef * inv_b);
      }
    }
    for (int k = 0; k < num_actions_ && !gaussian_; ++k) {
      const double p = row_probs_[k];  // exp(logp[k]), from LogSoftmaxRow
      const double d_entropy_term = config_.ent_coef * inv_b * p * (logp[k] + entropy);
      g[k] =
          static_cast<float>(loss_scale * (d_logp_a * ((k == a ? 1.0 : 0.0) - p) + d_entropy_term));
    }
    double value_pred = values[i], value_gate = 1.0;
    if (clip_range_vf >= 0.0) {
      const double old = mb_old_values_[i], d = value_pred - old;
      value_pred = old + std::clamp(d, -clip_range_vf, clip_range_vf);
      value_gate = d >= -clip_range_vf && d <= clip_range_vf ? 1.0 : 0.0;
    }
    const double err = value_pred - mb_returns_[i];
    s.value_loss += err * err * inv_b;
    grad_values_[i] =
        static_cast<float>(loss_scale * config_.vf_coef * 2.0 * err * inv_b * value_gate);
    s.entropy += entropy * inv_b;
    s.approx_kl += ((ratio - 1.0) - log_ratio) * inv_b;
    s.old_approx_kl += -log_ratio * inv_b;
    s.clip_fraction += (std::fabs(ratio - 1.0) > clip_range ? 1.0 : 0.0) * inv_b;
  }
  for (size_t j = 0; j < log_std_grad_acc_.size(); ++j) {
    params_.log_std_grads()[j] += static_cast<float>(log_std_grad_acc_[j]);
  }
  actor_.Backward(params_.actor_params(), grad_logits_.data(), params_.actor_grads());
  critic_.Backward(params_.critic_params(), grad_values_.data(), params_.critic_grads());
  return s;
}

// ---------------------------------------------------------------------------------------------
// The autograd path: the same loss written with LibTorch ops (SB3's ppo.py train()) on device_,
// gradients by autograd into the flat gradient tensor the module's .grad tensors view, and the
// optimiser step as a few ops over the flat tensors (nn/tensor_optim.h). Nothing in a minibatch
// step waits for the host, so on CUDA the full-size step is captured once in a graph and
// replayed. The minibatch order comes from the same host shuffle as the fused path.
void Ppo::EnsureTensorState() {
  if (tensor_ready_) return;
  const auto options = torch::TensorOptions().device(device_);
  opt_ =
      nn::MakeTensorOptimState(params_.params(), adam_.exp_avg().data(), adam_.exp_avg_sq().data(),
                               params_.num_params(), adam_.step_count(), scaler_.scale(),
                               scaler_.growth_tracker(), scaler_.skipped_steps(), options);
  module_ = nn::ActorCriticModule(params_.spec(), opt_.params, opt_.grads);
  const auto f32 = options.dtype(torch::kFloat32);
  const auto i64 = options.dtype(torch::kInt64);
  dev_obs_ = torch::zeros({buffer_size_, obs_dim_}, f32);
  dev_actions_ = gaussian_ ? torch::zeros({buffer_size_, num_actions_}, f32)
                           : torch::zeros({buffer_size_}, i64);
  dev_log_probs_ = torch::zeros({buffer_size_}, f32);
  dev_advantages_ = torch::zeros({buffer_size_}, f32);
  dev_returns_ = torch::zeros({buffer_size_}, f32);
  dev_perm_ = torch::zeros({buffer_size_}, i64);
  mb_index_ = torch::zeros({minibatch_rows_}, i64);
  clip_t_ = torch::zeros({1}, f32);
  clip_vf_t_ = torch::zeros({1}, f32);
  dev_old_values_ = torch::zeros({buffer_size_}, f32);
  stats_ = torch::zeros({7}, f32);
  last_stats_ = torch::zeros({6}, f32);
  graph_ = std::make_unique<nn::CudaGraph>();  // never replay a graph over the old tensors
  eager_steps_ = 0;
  tensor_ready_ = true;
}

void Ppo::TensorUpdate(double lr, double clip_range, double clip_range_vf, MinibatchStats* sum,
                       int64_t* num_minibatches, double* grad_norm_sum, int* epochs_run,
                       bool* kl_stopped) {
  EnsureTensorState();
  auto host = [](auto* data, int64_t n, torch::ScalarType t) {
    return torch::from_blob(static_cast<void*>(data), {n}, t);
  };
  dev_obs_.view({-1}).copy_(host(obs_.data(), buffer_size_ * obs_dim_, torch::kFloat32));
  if (gaussian_) {
    dev_actions_.view({-1}).copy_(
        host(cont_actions_.data(), buffer_size_ * num_actions_, torch::kFloat32));
  } else {
    dev_actions_.copy_(host(actions_.data(), buffer_size_, torch::kInt64));
  }
  dev_log_probs_.copy_(host(log_probs_.data(), buffer_size_, torch::kFloat32));
  dev_advantages_.copy_(host(advantages_.data(), buffer_size_, torch::kFloat32));
  dev_returns_.copy_(host(returns_.data(), buffer_size_, torch::kFloat32));
  if (clip_range_vf >= 0.0) {
    dev_old_values_.copy_(host(values_.data(), buffer_size_, torch::kFloat32));
  }
  opt_.lr.fill_(lr);
  clip_t_.fill_(clip_range);
  clip_vf_t_.fill_(clip_range_vf);
  stats_.zero_();
  const nn::ScaleUpdateOptions scale_update{scaler_.enabled(), config_.grad_scaler.growth_factor,
                                            config_.grad_scaler.backoff_factor,
                                            config_.grad_scaler.growth_interval};
  const nn::AdamOptions adam{0.9, 0.999, 1e-5};
  auto step = [&](const torch::Tensor& index, int batch) {
    TensorLossAndGrad(index, batch);
    AllReduceGradients(opt_.grads.data_ptr<float>());  // CPU only (SetCollectives)
    nn::TensorOptimStep(opt_, adam, config_.max_grad_norm, scale_update);
    torch::NoGradGuard no_grad;
    stats_.narrow(0, 6, 1).add_(opt_.grad_norm.masked_fill(opt_.found_inf > 0, 0.0));
  };
  const bool early_stop = config_.target_kl > 0.0;
  const bool use_graph = device_.is_cuda() && config_.cuda_graph && !early_stop;
  std::optional<nn::CudaSideStream> side;
  if (device_.is_cuda()) side.emplace();
  bool stop = false;
  for (int epoch = 0; epoch < config_.n_epochs && !stop; ++epoch) {
    ++*epochs_run;
    std::iota(indices_.begin(), indices_.end(), 0);
    for (int64_t i = buffer_size_ - 1; i > 0; --i) {  // Fisher-Yates, as the fused path
      std::swap(indices_[i], indices_[shuffle_rng_.Below(static_cast<uint64_t>(i) + 1)]);
    }
    dev_perm_.copy_(host(indices_.data(), buffer_size_, torch::kInt64));
    for (int64_t start = 0; start < buffer_size_; start += config_.batch_size) {
      const int batch =
          static_cast<int>(std::min<int64_t>(config_.batch_size, buffer_size_ - start));
      const torch::Tensor rows = dev_perm_.narrow(0, start, batch);
      ++*num_minibatches;
      if (early_stop) {
        // SB3: compute the loss, and skip the step and the remaining epochs when
        // approx_kl > 1.5 target_kl (one host read per minibatch).
        TensorLossAndGrad(rows, batch);
        if (KlStop(last_stats_[3].item<double>())) {
          stop = true;
          *kl_stopped = true;
          break;
        }
        AllReduceGradients(opt_.grads.data_ptr<float>());
        nn::TensorOptimStep(opt_, adam, config_.max_grad_norm, scale_update);
        torch::NoGradGuard no_grad;
        stats_.narrow(0, 6, 1).add_(opt_.grad_norm.masked_fill(opt_.found_inf > 0, 0.0));
      } else if (use_graph && batch == minibatch_rows_) {
        mb_index_.copy_(rows);
        if (graph_->captured()) {
          graph_->Replay();
        } else if (eager_steps_ < kWarmupSteps) {
          step(mb_index_, batch);
          ++eager_steps_;
        } else {
          graph_->Capture([&] { step(mb_index_, batch); });
          graph_->Replay();  // capture records the work; this runs it
        }
      } else {
        step(rows, batch);
      }
    }
  }
  // One host read of everything the metrics and the host mirror need.
  const torch::Tensor stats = stats_.to(torch::kCPU, torch::kFloat64);
  const double* st = stats.data_ptr<double>();
  sum->pg_loss = st[0];
  sum->value_loss = st[1];
  sum->entropy = st[2];
  sum->approx_kl = st[3];
  sum->old_approx_kl = st[4];
  sum->clip_fraction = st[5];
  *grad_norm_sum = st[6];
  auto to_host = [](const torch::Tensor& from, float* to) {
    torch::from_blob(to, {from.numel()}, torch::kFloat32).copy_(from);
  };
  to_host(opt_.params, params_.params());
  to_host(opt_.exp_avg, adam_.exp_avg().data());
  to_host(opt_.exp_avg_sq, adam_.exp_avg_sq().data());
  adam_.set_step_count(static_cast<int64_t>(opt_.step.item<float>()));
  scaler_.Restore(opt_.scale.item<double>(), opt_.growth_tracker.item<int>(),
                  static_cast<int64_t>(opt_.skipped.item<float>()));
  if (scaler_.enabled()) {  // skips at a scale <= 1: the fused path's count (Update above)
    nonfinite_skips_ += static_cast<int64_t>(opt_.skipped_unscaled.item<float>());
    opt_.skipped_unscaled.zero_();
  }
}

void Ppo::TensorLossAndGrad(const torch::Tensor& index, int batch) {
  auto obs = dev_obs_.index_select(0, index);
  auto actions = dev_actions_.index_select(0, index);
  auto old_log_prob = dev_log_probs_.index_select(0, index);
  auto advantages = dev_advantages_.index_select(0, index);
  auto returns = dev_returns_.index_select(0, index);
  if (config_.normalize_advantage && batch > 1) {  // unbiased std, as SB3 (see the fused path)
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8);
  }
  opt_.grads.zero_();
  torch::Tensor logits, values, latent;
  {
    // Forward under autocast; the loss is computed from float32 copies of the outputs, so
    // log-softmax and the squared error keep float32 accuracy. No autocast weight cache on CUDA
    // (a captured region must not use it).
    precision::AutocastScope autocast(
        config_.precision,
        device_.is_cuda() ? precision::AutocastDevice::kCuda : precision::AutocastDevice::kCpu,
        /*cache_enabled=*/!device_.is_cuda());
    auto [logits_raw, values_raw, latent_raw] = module_->ForwardWithLatent(obs);
    logits = logits_raw.to(torch::kFloat32);
    values = values_raw.to(torch::kFloat32);
    if (use_sde_) latent = latent_raw.detach().to(torch::kFloat32);  // learn_features=False
  }
  torch::Tensor log_prob, entropy;
  if (use_sde_) {  // SB3 StateDependentNoiseDistribution: Normal(mean, sqrt(h^2 @ std^2 + eps))
    const torch::Tensor& log_std = module_->log_std();
    const torch::Tensor std = nn::SdeStd(latent, log_std);
    auto u = (actions - logits) / std;
    log_prob = (-0.5 * u * u - torch::log(std) - kHalfLog2Pi).sum(/*dim=*/1);
    entropy = (torch::log(std) + (0.5 + kHalfLog2Pi)).sum(/*dim=*/1);
  } else if (gaussian_) {  // SB3 DiagGaussianDistribution: Normal(mean, exp(log_std)), summed over dims
    const torch::Tensor& log_std = module_->log_std();
    auto u = (actions - logits) * torch::exp(-log_std);
    log_prob = (-0.5 * u * u - log_std - kHalfLog2Pi).sum(/*dim=*/1);
    entropy = (log_std + (0.5 + kHalfLog2Pi)).sum().expand({batch});
  } else {
    auto log_probs_all = torch::log_softmax(logits, /*dim=*/1);
    log_prob = log_probs_all.gather(/*dim=*/1, actions.unsqueeze(1)).squeeze(/*dim=*/1);
    entropy = -(log_probs_all.exp() * log_probs_all).sum(/*dim=*/1);
  }
  auto log_ratio = log_prob - old_log_prob;
  auto ratio = torch::exp(log_ratio);
  auto policy_loss_1 = advantages * ratio;
  auto policy_loss_2 = advantages * torch::clamp(ratio, 1.0 - clip_t_, 1.0 + clip_t_);
  auto policy_loss = -torch::min(policy_loss_1, policy_loss_2).mean();
  // SB3's clip_range_vf: values_pred = old_values + clamp(values - old_values, -c, c). Whether
  // it is on is fixed for the run (config), so a captured graph never changes shape.
  torch::Tensor values_pred = values;
  if (config_.clip_range_vf.Value(1.0) > 0.0) {
    const torch::Tensor old_values = dev_old_values_.index_select(0, index);
    values_pred = old_values + torch::clamp(values - old_values, -clip_vf_t_, clip_vf_t_);
  }
  auto value_loss = torch::nn::functional::mse_loss(returns, values_pred);
  auto entropy_loss = -entropy.mean();
  auto loss = policy_loss + config_.ent_coef * entropy_loss + config_.vf_coef * value_loss;
  (loss * opt_.scale.squeeze(0)).backward();
  torch::NoGradGuard no_grad;
  last_stats_.copy_(torch::stack({policy_loss, value_loss, entropy.mean(),
                                  ((ratio - 1) - log_ratio).mean(), (-log_ratio).mean(),
                                  ((ratio - 1).abs() > clip_t_).to(torch::kFloat32).mean()}));
  stats_.narrow(0, 0, 6).add_(last_stats_);
}

// ---------------------------------------------------------------------------------------------
// Precision: the energy budget's first rung switches to bf16 autocast where that saves energy,
// which on greenrl's CPU paths it never did: LibTorch 1.13's CPU autocast runs op by op, and
// without native bf16 it also converts in software. Measured 2026-12-02 on a 2-core Xeon with
// avx512_bf16 and amx_bf16 (torch::mm bf16 at ~100 GFLOP/s there): the CartPole preset took
// 12.9 s in bf16 against 1.9 s on the fused float32 path and 8.7 s on float32 autograd; the
// HalfCheetah preset's [256, 256] update, 10,240 steps, 11.7 s in bf16 against 2.4 s fused and
// 11.1 s float32 autograd. So the rung is taken on CUDA only (bf16 autocast there, with the
// loss scaler's rules for a later fp16).
bool Ppo::CanReducePrecision(std::string* why_not) const {
  if (config_.precision != precision::Precision::kFp32) {
    *why_not = std::string("the update already runs in ") + precision::ToString(config_.precision);
    return false;
  }
  if (config_.device != "cuda") {
    *why_not = precision::CpuHasNativeBf16()
                   ? "on the CPU, bf16 autocast (LibTorch, op by op) costs more time and energy "
                     "than the float32 update even with native bf16 (README, Precision)"
                   : "this CPU has no native bf16 (no avx512_bf16 or amx_bf16): bf16 autocast "
                     "would cost more time and energy than the float32 update";
    return false;
  }
  return true;
}

void Ppo::ReducePrecision() {
  config_.precision = precision::Precision::kBf16;
  use_autograd_ = true;
  tensor_ready_ = false;  // rebuilt from the host state, with no graph captured in fp32
}

// ---------------------------------------------------------------------------------------------
// Acting for evaluation, in chunks of the workspace size.
void Ppo::ActContinuous(const float* obs, int n, bool deterministic, float* actions) {
  GREENRL_CHECK(gaussian_, "PPO for Discrete actions acts through Act()");
  const float* log_std = params_.log_std();
  for (int start = 0; start < n; start += max_batch_) {
    const int rows = std::min(max_batch_, n - start);
    const float* rows_obs = obs + static_cast<size_t>(start) * obs_dim_;
    const float* mean = actor_.Forward(params_.actor_params(), rows_obs, rows);
    const int hidden = actor_.spec().num_layers() - 2;
    const float* latent = hidden >= 0 ? actor_.LayerOutput(hidden) : rows_obs;
    if (use_sde_ && !deterministic) RefreshSdeWeights();
    for (int i = 0; i < rows; ++i) {
      // gSDE: a fresh draw from N(mean, std(h)^2), the marginal of mean + h^T E for one E.
      if (use_sde_ && !deterministic) {
        SdeStd(latent + static_cast<size_t>(i) * latent_dim_, row_std_.data());
      }
      for (int j = 0; j < num_actions_; ++j) {
        const size_t k = static_cast<size_t>(i) * num_actions_ + j;
        float a = mean[k];
        if (!deterministic) {
          const double std =
              use_sde_ ? row_std_[j] : std::exp(static_cast<double>(log_std[j]));
          a = static_cast<float>(a + std * sample_rng_.Normal());
        }
        actions[static_cast<size_t>(start) * num_actions_ + k] =
            std::clamp(a, action_low_[j], action_high_[j]);
      }
    }
  }
}

void Ppo::Act(const float* obs, int n, bool deterministic, int64_t* actions) {
  GREENRL_CHECK(!gaussian_, "PPO for Box actions acts through ActContinuous()");
  for (int start = 0; start < n; start += max_batch_) {
    const int rows = std::min(max_batch_, n - start);
    const float* logits =
        actor_.Forward(params_.actor_params(), obs + static_cast<size_t>(start) * obs_dim_, rows);
    for (int i = 0; i < rows; ++i) {
      const float* z = logits + static_cast<size_t>(i) * num_actions_;
      if (deterministic) {
        actions[start + i] = nn::ArgmaxRow(z, num_actions_);
      } else {
        nn::LogSoftmaxRow(z, num_actions_, row_log_probs_.data());
        actions[start + i] =
            nn::SampleCategorical(row_log_probs_.data(), num_actions_, sample_rng_);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Checkpoint: a LibTorch archive (torch::serialize) holding the flat parameters, Adam's moments
// and step count, and what the network was built for, so a mismatching load fails clearly.
void Ppo::SaveCheckpoint(const std::string& path) const {
  CheckpointWriter w("ppo", spec_.id, kCheckpointFormatVersion);
  WriteModel(w);
  w.Save(path);
}

void Ppo::WriteModel(CheckpointWriter& w) const {
  w.WriteInt("obs_dim", obs_dim_);
  w.WriteInt("num_actions", num_actions_);
  w.WriteInts("pi_arch", config_.pi_arch);
  w.WriteInts("vf_arch", config_.vf_arch);
  w.WriteString("activation", nn::ToString(config_.activation));
  w.WriteString("use_sde", use_sde_ ? "true" : "false");
  const int64_t n = params_.num_params();
  w.WriteFloats("params", params_.params(), n);
  w.WriteFloats("adam.exp_avg", adam_.exp_avg().data(), n);
  w.WriteFloats("adam.exp_avg_sq", adam_.exp_avg_sq().data(), n);
  w.WriteInt("adam.step", adam_.step_count());
  w.WriteString("grad_scaler.enabled", scaler_.enabled() ? "true" : "false");
  w.WriteDouble("grad_scaler.scale", scaler_.scale());
  w.WriteInt("grad_scaler.growth_tracker", scaler_.growth_tracker());
  w.WriteInt("grad_scaler.skipped_steps", scaler_.skipped_steps());
}

void Ppo::LoadCheckpoint(const std::string& path) {
  CheckpointReader r(path, "ppo", spec_.id, kCheckpointFormatVersion);
  ReadModel(r);
}

void Ppo::ReadModel(CheckpointReader& r) {
  r.ExpectInts("net_arch.pi", "pi_arch", config_.pi_arch);
  r.ExpectInts("net_arch.vf", "vf_arch", config_.vf_arch);
  r.ExpectString("activation_fn", "activation", nn::ToString(config_.activation));
  r.ExpectString("use_sde", "use_sde", use_sde_ ? "true" : "false");
  // Read everything before writing anything, so a bad file leaves the agent as it was.
  const int64_t n = params_.num_params();
  std::vector<float> params(n), m(n), v(n);
  r.ReadFloats("params", params.data(), n);
  r.ReadFloats("adam.exp_avg", m.data(), n);
  r.ReadFloats("adam.exp_avg_sq", v.data(), n);
  const int64_t step = r.Int("adam.step");
  const double scale = r.Double("grad_scaler.scale");
  const int64_t growth_tracker = r.Int("grad_scaler.growth_tracker");
  const int64_t skipped = r.Int("grad_scaler.skipped_steps");
  // A checkpoint written with the scaler off holds no scaler state: an enabled scaler starts
  // from init_scale, as a fresh GradScaler (PyTorch's load_state_dict refuses a disabled
  // scaler's empty state instead). Checkpoints older than the "grad_scaler.enabled" entry saved
  // an off scaler as scale 1 with growth tracker 0; an on scaler in that state restarts the same.
  const bool saved_enabled = r.Has("grad_scaler.enabled")
                                 ? r.String("grad_scaler.enabled") == "true"
                                 : !(scale == 1.0 && growth_tracker == 0);
  std::copy(params.begin(), params.end(), params_.params());
  adam_.exp_avg() = m;
  adam_.exp_avg_sq() = v;
  adam_.set_step_count(step);
  if (saved_enabled || !scaler_.enabled()) {
    scaler_.Restore(scale, growth_tracker, skipped);
  } else {
    scaler_.Restore(static_cast<float>(config_.grad_scaler.init_scale), 0, 0);
  }
  tensor_ready_ = false;  // the autograd path's device state is rebuilt from the loaded state
}

// Resume: the model plus the sampling and shuffling generators, the guard's counters and the
// learning-rate factor. The rollout buffers are not saved: checkpoints are taken between
// iterations, and the next rollout refills them (gSDE noise is redrawn at its first step).
void Ppo::SaveTrainingState(const std::string& path, bool /*replay_buffer*/,
                            const std::function<void(CheckpointWriter&)>& extra) const {
  CheckpointWriter w("ppo", spec_.id, kCheckpointFormatVersion);
  WriteModel(w);
  w.WriteRng("rng.sample", sample_rng_);
  w.WriteRng("rng.shuffle", shuffle_rng_);
  w.WriteInt("guard.nonfinite_skips", nonfinite_skips_);
  w.WriteDouble("guard.lr_scale", lr_scale_);
  if (extra) extra(w);
  w.Save(path);
}

void Ppo::LoadTrainingState(const std::string& path,
                            const std::function<void(CheckpointReader&)>& extra) {
  CheckpointReader r(path, "ppo", spec_.id, kCheckpointFormatVersion);
  const Rng::State sample = r.RngState("rng.sample");
  const Rng::State shuffle = r.RngState("rng.shuffle");
  const int64_t skips = r.Int("guard.nonfinite_skips");
  const double lr_scale = r.Double("guard.lr_scale");
  ReadModel(r);
  sample_rng_.SetState(sample);
  shuffle_rng_.SetState(shuffle);
  nonfinite_skips_ = skips;
  lr_scale_ = lr_scale;
  if (extra) extra(r);
}

}  // namespace

std::unique_ptr<Algorithm> MakePpo(const PpoConfig& config, const env::EnvSpec& spec) {
  if (config.use_sde && spec.discrete_actions()) {
    throw ConfigError("use_sde", "true",
                      "false for a Discrete action space like " + spec.id +
                          "'s (gSDE explores Box actions)");
  }
  if (!spec.discrete_actions()) {
    const auto& box = std::get<env::Box>(spec.action_space);
    for (size_t j = 0; j < box.low.size(); ++j) {
      if (!std::isfinite(box.low[j]) || !std::isfinite(box.high[j])) {
        throw ConfigError("env_id", spec.id,
                          "an env with a Discrete or bounded Box action space (PPO clips "
                          "Gaussian samples to the bounds)");
      }
    }
  }
  return std::make_unique<Ppo>(config, spec);
}


PpoRolloutView PpoRolloutForTesting(Algorithm* ppo) {
  auto* p = dynamic_cast<Ppo*>(ppo);
  if (p == nullptr) throw std::invalid_argument("PpoRolloutForTesting: not a PPO algorithm");
  return p->RolloutView();
}

}  // namespace greenrl::algo
