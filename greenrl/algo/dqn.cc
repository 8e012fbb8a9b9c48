// dqn.cc: DQN for Discrete actions, in CleanRL's order (cleanrl/dqn.py): config keys, epsilon
// schedule, Q-network, replay buffer, seeding and networks, rollout (epsilon-greedy, store,
// target update), training (sample, TD target, Huber loss, clip, Adam), acting, checkpoint.
// Semantics and defaults are SB3's (stable_baselines3/dqn/dqn.py); where greenrl differs it says
// so in a comment.
#include "greenrl/algo/dqn.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "greenrl/algo/checkpoint.h"
#include "greenrl/core/errors.h"
#include "greenrl/env/wrappers.h"
#include "greenrl/nn/categorical.h"
#include "greenrl/nn/init.h"

extern "C" void sgemv_(const char* trans, const int* m, const int* n, const float* alpha,
                       const float* a, const int* lda, const float* x, const int* incx,
                       const float* beta, float* y, const int* incy);

namespace greenrl::algo {

// ---------------------------------------------------------------------------------------------
// Config: SB3 DQN defaults (stable_baselines3/dqn/dqn.py, dqn/policies.py: net_arch [64, 64],
// nn.ReLU).
void AddDqnKeys(ConfigSchema* schema) {
  AddKey(schema, "policy", ValueType::kString, "MlpPolicy", "policy class (SB3 name)", std::nullopt,
         std::nullopt, std::vector<std::string>{"MlpPolicy"});
  AddKey(schema, "learning_rate", ValueType::kSchedule, "0.0001",
         "Adam step size (or lin_<initial>)", 0.0, 1.0);
  AddKey(schema, "buffer_size", ValueType::kInt, "1000000",
         "replay capacity in transitions (summed over envs)", 1, 1e8);
  AddKey(schema, "learning_starts", ValueType::kInt, "100",
         "env steps of uniform random actions before the first gradient step", 0, 1e12);
  AddKey(schema, "batch_size", ValueType::kInt, "32", "transitions per gradient step", 1, 1 << 20);
  AddKey(schema, "tau", ValueType::kFloat, "1.0", "target update coefficient (1: hard copy)", 0.0,
         1.0, std::vector<std::string>{}, /*min_exclusive=*/true);
  AddKey(schema, "gamma", ValueType::kFloat, "0.99", "discount factor", 0.0, 1.0);
  AddKey(schema, "train_freq", ValueType::kInt, "4", "vec steps per rollout (between updates)", 1,
         1 << 24, {}, false, kTrainFreqAccepted);
  AddKey(schema, "gradient_steps", ValueType::kInt, "1",
         "gradient steps per update (-1: as many as env steps collected, train_freq * n_envs; 0: "
         "none, as SB3)",
         -1, 1 << 20);
  AddKey(schema, "target_update_interval", ValueType::kInt, "10000",
         "env steps (summed over envs) between target-network updates", 1, 1e12);
  AddKey(schema, "exploration_fraction", ValueType::kFloat, "0.1",
         "share of n_timesteps over which epsilon decays linearly", 0.0, 1.0);
  AddKey(schema, "exploration_initial_eps", ValueType::kFloat, "1.0", "epsilon at the start", 0.0,
         1.0);
  AddKey(schema, "exploration_final_eps", ValueType::kFloat, "0.05", "epsilon after the decay", 0.0,
         1.0);
  AddKey(schema, "max_grad_norm", ValueType::kFloat, "10.0", "global gradient-norm clip", 0.0, 1e6,
         std::vector<std::string>{}, /*min_exclusive=*/true);
  AddKey(schema, "double_q", ValueType::kBool, "false",
         "double DQN: the online network picks a', the target network values it");
  AddKey(schema, "threads.update", ValueType::kInt, "1",
         "update threads: 1, or 2 (a worker takes the target forward pass, the dW GEMMs and half "
         "of Adam; it spins during an update and blocks between updates)",
         1, 2);
  AddKey(schema, "policy_kwargs.net_arch", ValueType::kIntList, "[64, 64]",
         "Q-network hidden sizes", 1, 65536);
  AddKey(schema, "policy_kwargs.activation_fn", ValueType::kString, "relu", "hidden activation",
         std::nullopt, std::nullopt, nn::ActivationNames());
}

DqnConfig DqnConfigFromConfig(const Config& config) {
  DqnConfig c;
  c.n_envs = static_cast<int>(config.GetInt("n_envs"));
  c.total_timesteps = config.GetInt("n_timesteps");
  c.seed = static_cast<uint64_t>(config.GetInt("seed"));
  c.update_threads = static_cast<int>(config.GetInt("threads.update"));
  c.learning_rate = config.GetSchedule("learning_rate");
  c.buffer_size = config.GetInt("buffer_size");
  c.learning_starts = config.GetInt("learning_starts");
  c.batch_size = static_cast<int>(config.GetInt("batch_size"));
  c.tau = config.GetFloat("tau");
  c.gamma = config.GetFloat("gamma");
  c.train_freq = static_cast<int>(config.GetInt("train_freq"));
  c.gradient_steps = static_cast<int>(config.GetInt("gradient_steps"));
  // SB3's -1: as many gradient steps as the rollout collected env steps.
  if (c.gradient_steps == -1) c.gradient_steps = c.train_freq * c.n_envs;
  c.target_update_interval = config.GetInt("target_update_interval");
  c.exploration_fraction = config.GetFloat("exploration_fraction");
  c.exploration_initial_eps = config.GetFloat("exploration_initial_eps");
  c.exploration_final_eps = config.GetFloat("exploration_final_eps");
  c.max_grad_norm = config.GetFloat("max_grad_norm");
  c.double_q = config.GetBool("double_q");
  const std::vector<int64_t> arch = config.GetIntList("policy_kwargs.net_arch");
  c.net_arch.assign(arch.begin(), arch.end());
  c.activation = nn::ParseActivation("policy_kwargs.activation_fn",
                                     config.GetString("policy_kwargs.activation_fn"));
  return c;
}

// ---------------------------------------------------------------------------------------------
// Epsilon schedule (SB3 get_linear_fn; CleanRL's linear_schedule is the same line).
double LinearEpsilon(double initial, double final, double fraction, double progress_remaining) {
  const double progress = 1.0 - progress_remaining;
  if (fraction <= 0.0 || progress > fraction) return final;
  return initial + progress * (final - initial) / fraction;
}

// ---------------------------------------------------------------------------------------------
// TD target and Huber loss (SB3 DQN.train).
void ComputeTdTargets(const float* rewards, const uint8_t* terminated, const float* next_q_target,
                      const float* next_q_online, int batch, int num_actions, double gamma,
                      float* targets) {
  for (int i = 0; i < batch; ++i) {
    const float* qt = next_q_target + static_cast<size_t>(i) * num_actions;
    float next_q;
    if (next_q_online != nullptr) {
      next_q = qt[nn::ArgmaxRow(next_q_online + static_cast<size_t>(i) * num_actions, num_actions)];
    } else {
      next_q = *std::max_element(qt, qt + num_actions);
    }
    const double not_done = terminated[i] ? 0.0 : 1.0;
    targets[i] = static_cast<float>(rewards[i] + not_done * gamma * next_q);
  }
}

double HuberTdLossAndGrad(const float* q, const int64_t* actions, const float* targets, int batch,
                          int num_actions, float* grad_q, double* mean_q) {
  std::fill(grad_q, grad_q + static_cast<size_t>(batch) * num_actions, 0.0f);
  const double inv_b = 1.0 / batch;
  double loss = 0.0, q_sum = 0.0;
  for (int i = 0; i < batch; ++i) {
    const size_t row = static_cast<size_t>(i) * num_actions;
    const double q_a = q[row + actions[i]];
    const double d = q_a - targets[i];
    const double abs_d = std::fabs(d);
    loss += abs_d < 1.0 ? 0.5 * d * d : abs_d - 0.5;
    grad_q[row + actions[i]] = static_cast<float>(std::clamp(d, -1.0, 1.0) * inv_b);
    q_sum += q_a;
  }
  if (mean_q != nullptr) *mean_q = q_sum * inv_b;
  return loss * inv_b;
}

// ---------------------------------------------------------------------------------------------
// Q-network: SB3's QNetwork is create_mlp(obs_dim, num_actions, net_arch, activation_fn) with
// torch.nn.Linear's default init (DQNPolicy applies no orthogonal init): nn::InitMlp with
// ortho = false.
namespace {

nn::MlpSpec QNetworkSpec(int obs_dim, int num_actions, const DqnConfig& config) {
  nn::MlpSpec spec;
  spec.sizes.push_back(obs_dim);
  spec.sizes.insert(spec.sizes.end(), config.net_arch.begin(), config.net_arch.end());
  spec.sizes.push_back(num_actions);
  spec.activation = config.activation;
  return spec;
}

// Gradient steps per TargetForward: up to this many sampled rows at once (the whole update of
// the CartPole preset, 128 x 64), so that repeated draws of one transition are forwarded once
// and the target network runs a few large GEMMs per layer instead of gradient_steps small ones
// (it does not change within an update; see TrainOnIndices).
constexpr int kTargetSetRows = 16384;
// The target network's forward passes take at most this many distinct rows each (or one
// minibatch, when batch_size is larger).
constexpr int kTargetChunkRows = 2048;

constexpr int64_t kCheckpointFormatVersion = 1;

// Slots of TargetForward's open-addressing table for `rows` sampled indices: the smallest power
// of two >= 2 rows (at most half full, so probes stay short), and >= 2.
size_t DistinctTableSlots(size_t rows) {
  size_t slots = 2;
  while (slots < 2 * rows) slots *= 2;
  return slots;
}

// Discrete(n)'s n. Errors: ConfigError("env_id", ...) for a Box action space.
int DiscreteActionCount(const env::EnvSpec& spec) {
  if (!spec.discrete_actions()) {
    throw ConfigError("env_id", spec.id, "an env with a Discrete action space (DQN)");
  }
  return static_cast<int>(spec.num_actions());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Seeding, networks, optimiser, target network (a copy of the online one), storage.
Dqn::Dqn(const DqnConfig& config, const env::EnvSpec& spec)
    : config_(config),
      spec_(spec),
      obs_dim_(static_cast<int>(spec.obs_dim())),
      num_actions_(DiscreteActionCount(spec)),
      num_envs_(config.n_envs),
      // Two update threads: one minibatch per target pass, run beside the online forward pass.
      target_chunk_steps_(config.update_threads > 1
                              ? 1
                              : std::clamp(kTargetSetRows / config.batch_size, 1,
                                           std::max(config.gradient_steps, 1))),
      explore_rng_(DeriveSeed(config.seed, 1)),
      sample_rng_(DeriveSeed(config.seed, 2)),
      q_spec_(QNetworkSpec(obs_dim_, num_actions_, config)),
      q_net_(q_spec_, std::max({config.batch_size, config.n_envs, 64})),
      target_net_(q_spec_,
                  std::max(config.batch_size,
                           std::min(kTargetChunkRows, target_chunk_steps_ * config.batch_size))),
      adam_(q_spec_.num_params(), nn::AdamOptions{0.9, 0.999, 1e-8}),
      buffer_(config.buffer_size, obs_dim_, /*act_dim=*/1) {
  Rng init_rng(DeriveSeed(config.seed, 0));
  q_params_.assign(q_spec_.num_params(), 0.0f);
  nn::InitMlp(q_spec_, q_params_.data(), /*ortho=*/false, 1.0, 1.0, init_rng);
  q_grads_.assign(q_params_.size(), 0.0f);
  if (config_.update_threads > 1) {
    GREENRL_CHECK(config_.update_threads == 2, "update_threads must be 1 or 2");
    update_pool_ = std::make_unique<ThreadPool>(config_.update_threads, nn::blas::OneThreadHere);
    // Backward only: the forward passes run as whole tasks (forward_tasks_), and Forward must not
    // use the pool from inside one of its jobs.
    q_net_.set_thread_pool(update_pool_.get(), nn::FusedMlp::ThreadedPasses::kBackward);
    const int64_t n = q_spec_.num_params();
    split_ = n / 2 / 16 * 16;  // 64-byte aligned, so the halves share no cache line
    forward_tasks_ = [this](int begin, int end) {
      for (int task = begin; task < end; ++task) {
        if (task == 0) {
          OnlineForward(task_idx_);
        } else {
          TargetForward(task_idx_, config_.batch_size);
          std::fill(q_grads_.begin(), q_grads_.end(), 0.0f);  // Backward adds into them
        }
      }
    };
    norm_tasks_ = [this, n](int begin, int end) {
      for (int t = begin; t < end; ++t) {
        const int64_t lo = t == 0 ? 0 : split_, hi = t == 0 ? split_ : n;
        range_sum_sq_[t] = nn::SumOfSquares(q_grads_.data() + lo, hi - lo);
      }
    };
    adam_tasks_ = [this, n](int begin, int end) {
      for (int t = begin; t < end; ++t) {
        const int64_t lo = t == 0 ? 0 : split_, hi = t == 0 ? split_ : n;
        if (clip_coef_ != 1.0f) {
          for (int64_t i = lo; i < hi; ++i) q_grads_[i] *= clip_coef_;
        }
        adam_.StepRange(adam_coef_, q_params_.data(), q_grads_.data(), lo, hi);
      }
    };
  }
  target_params_ = q_params_;  // SB3: q_net_target.load_state_dict(q_net.state_dict())
  exploration_rate_ = LinearEpsilon(config_.exploration_initial_eps, config_.exploration_final_eps,
                                    config_.exploration_fraction, 1.0);

  const size_t b = static_cast<size_t>(config_.batch_size);
  last_obs_.assign(static_cast<size_t>(num_envs_) * obs_dim_, 0.0f);
  indices_.assign(b * config_.gradient_steps, 0);
  const size_t chunk_rows = b * target_chunk_steps_;
  chunk_next_obs_.assign(static_cast<size_t>(target_net_.max_batch()) * obs_dim_, 0.0f);
  slot_index_.assign(DistinctTableSlots(chunk_rows), -1);
  slot_row_.assign(slot_index_.size(), 0);
  distinct_idx_.assign(chunk_rows, 0);
  sample_row_.assign(chunk_rows, 0);
  distinct_q_.assign(chunk_rows * num_actions_, 0.0f);
  chunk_next_q_.assign(chunk_rows * num_actions_, 0.0f);
  mb_obs_.assign(b * obs_dim_, 0.0f);
  if (config_.double_q) mb_next_obs_.assign(b * obs_dim_, 0.0f);
  mb_actions_.assign(b, 0);
  mb_rewards_.assign(b, 0.0f);
  mb_terminated_.assign(b, 0);
  mb_next_q_online_.assign(b * num_actions_, 0.0f);
  mb_targets_.assign(b, 0.0f);
  grad_q_.assign(b * num_actions_, 0.0f);
  const int width = *std::max_element(q_spec_.sizes.begin(), q_spec_.sizes.end());
  row_a_.assign(width, 0.0f);
  row_b_.assign(width, 0.0f);
  for (const char* key :
       {"charts/learning_rate", "charts/epsilon", "losses/td_loss", "losses/q_values",
        "losses/grad_norm", "losses/n_updates", "losses/target_updates"}) {
    metrics_.emplace_back(key, 0.0);
  }
}

// Polyak update (SB3 polyak_update): target = (1 - tau) target + tau online; tau = 1 copies.
void Dqn::UpdateTarget() {
  if (config_.tau == 1.0) {
    std::copy(q_params_.begin(), q_params_.end(), target_params_.begin());
  } else {
    const float tau = static_cast<float>(config_.tau);
    for (size_t k = 0; k < q_params_.size(); ++k) {
      target_params_[k] = target_params_[k] * (1.0f - tau) + tau * q_params_[k];
    }
  }
  ++target_updates_;
}

// ---------------------------------------------------------------------------------------------
// Rollout: train_freq vec steps. Per step, as SB3's collect_rollouts + _on_step:
// 1. action: uniform random for every env while num_timesteps < learning_starts; afterwards one
//    coin per vec step (SB3 DQN.predict, CleanRL): with probability epsilon uniform random
//    actions for every env, else argmax_a Q(obs, a);
// 2. step; store (obs, final_obs, action, reward, terminated, truncated) per env;
// 3. num_timesteps += n_envs; target update when num_timesteps passes a multiple of
//    target_update_interval (see below); epsilon from the schedule at the new progress.
//
// Target-update count: the issue asks for an update every target_update_interval env steps
// counted across all envs, so one update follows each vec step after which
// floor(num_timesteps / target_update_interval) grew (at most one per vec step, also when
// n_envs > target_update_interval). SB3 counts vec steps instead, updating every
// max(target_update_interval // n_envs, 1) of them; the two agree whenever n_envs divides
// target_update_interval (always for n_envs = 1). A run of S vec steps of n envs updates the
// target floor(S n / target_update_interval) times when target_update_interval >= n.
//
// Epsilon at the very first step is the schedule's start; SB3 starts exploration_rate at 0 until
// its first _on_step, which only matters with learning_starts = 0.
int64_t Dqn::CollectRollout(env::VecEnv& env, std::vector<EpisodeRecord>* episodes) {
  GREENRL_CHECK(env.num_envs() == num_envs_, "VecEnv size differs from n_envs");
  const int n = num_envs_;
  int64_t* env_actions = env.discrete_actions();
  const double total = static_cast<double>(config_.total_timesteps);
  for (int t = 0; t < config_.train_freq; ++t) {
    const float* obs = env.obs();
    std::copy(obs, obs + static_cast<size_t>(n) * obs_dim_, last_obs_.begin());
    if (replay_normalizer_ != nullptr) {  // SB3's _last_original_obs
      const float* raw = replay_normalizer_->raw_obs();
      last_raw_obs_.assign(raw, raw + static_cast<size_t>(n) * obs_dim_);
    }
    const bool random =
        num_timesteps_ < config_.learning_starts || explore_rng_.Uniform() < exploration_rate_;
    if (random) {
      for (int i = 0; i < n; ++i) {
        env_actions[i] = static_cast<int64_t>(explore_rng_.Below(num_actions_));
      }
    } else {
      Act(last_obs_.data(), n, /*deterministic=*/true, env_actions);
    }

    env.Step();

    // normalize: true: the raw values, as SB3's _store_transition (normalised when sampled).
    const bool raw = replay_normalizer_ != nullptr;
    const float* stored_obs = raw ? last_raw_obs_.data() : last_obs_.data();
    const float* final_obs = raw ? replay_normalizer_->raw_final_obs() : env.final_obs();
    const float* reward = raw ? replay_normalizer_->raw_reward() : env.reward();
    for (int i = 0; i < n; ++i) {
      const size_t row = static_cast<size_t>(i) * obs_dim_;
      const bool terminated = env.terminated()[i] != 0, truncated = env.truncated()[i] != 0;
      buffer_.AddDiscrete(&stored_obs[row], final_obs + row, env_actions[i], reward[i], terminated,
                          truncated);
    }
    AppendFinishedEpisodes(env, t, episodes);
    // Data-parallel: every rank steps its n envs at once, so the job advanced n x world_size
    // env steps; learning_starts, target updates and epsilon count those (as n_timesteps does).
    const int64_t before = num_timesteps_;
    num_timesteps_ += static_cast<int64_t>(n) * (collectives_ ? collectives_->world_size() : 1);
    if (num_timesteps_ / config_.target_update_interval > before / config_.target_update_interval) {
      UpdateTarget();
    }
    exploration_rate_ =
        LinearEpsilon(config_.exploration_initial_eps, config_.exploration_final_eps,
                      config_.exploration_fraction, 1.0 - num_timesteps_ / total);
  }
  return static_cast<int64_t>(config_.train_freq) * n;
}

void Dqn::SetCollectives(Collectives* collectives) {
  collectives_ = collectives;
  if (collectives_ == nullptr) return;
  const auto n = static_cast<int64_t>(q_params_.size());
  collectives_->Broadcast(q_params_.data(), n, "dqn parameters");
  collectives_->Broadcast(target_params_.data(), n, "dqn target parameters");
}

// ---------------------------------------------------------------------------------------------
// Update: gradient_steps minibatches, each batch_size transitions drawn uniformly with
// replacement from the buffer (SB3 ReplayBuffer.sample), once num_timesteps > learning_starts
// (and, after a resume without the saved buffer, > refill_until_).
const Metrics& Dqn::Update(double progress_remaining) {
  const double lr = config_.learning_rate.Value(progress_remaining) * lr_scale_;
  if (num_timesteps_ <= std::max(config_.learning_starts, refill_until_) || buffer_.size() == 0 ||
      config_.gradient_steps == 0) {  // SB3's gradient_steps 0: collect only
    WriteMetrics(lr, 0, 0.0, 0.0, 0.0);
    return metrics_;
  }
  const uint64_t size = static_cast<uint64_t>(buffer_.size());
  for (int64_t& index : indices_) index = static_cast<int64_t>(sample_rng_.Below(size));
  return TrainOnIndices(indices_.data(), config_.gradient_steps, lr);
}

// Per gradient step (SB3 DQN.train):
//   y = r + gamma (1 - terminated) max_a Q_target(s', a)      (double DQN: see ComputeTdTargets)
//   loss = smooth_l1(Q(s, a), y); clip the gradient norm to max_grad_norm; Adam.
// The target network does not change during an update (SB3 updates it in _on_step, during
// collection), so Q_target(s', .) for a chunk of target_chunk_steps_ minibatches comes from one
// forward pass; the result is the same as one pass per minibatch.
//
// threads.update 2 (Dqn::update_pool_): four hand-offs per gradient step between the training
// thread and one worker, each splitting the work in two independent halves of about equal cost
// rather than slicing each GEMM (a 64-column sgemm loses ~15% of its rate in halves and
// every slice is one more hand-off):
//   1. online forward pass (training thread) | target forward pass of the same minibatch and
//      zeroing of the gradients (worker);
//   2. for each hidden layer, dX and the activation derivative | dW (FusedMlp::Backward);
//   3. sum of squares of the two halves of the gradient buffer;
//   4. clipping and Adam over the two halves.
// The worker spins between them (ThreadPool::Burst) and blocks after the update. Results equal
// one thread's up to float rounding (the target pass of 64 rows instead of 2048, and the norm
// summed in two parts) and are deterministic for a given thread count.
const Metrics& Dqn::TrainOnIndices(const int64_t* indices, int num_steps, double lr) {
  const int b = config_.batch_size;
  const size_t a = static_cast<size_t>(num_actions_);
  double loss_sum = 0.0, q_sum = 0.0, grad_norm_sum = 0.0;
  ThreadPool::Burst burst(update_pool_.get());
  // Two update threads: this thread's sgemm calls stay on it, as the worker's do.
  std::optional<nn::blas::ScopedOneThread> one_blas_thread;
  if (update_pool_ != nullptr) one_blas_thread.emplace();
  for (int start = 0; start < num_steps; start += target_chunk_steps_) {
    const int steps = std::min(target_chunk_steps_, num_steps - start);
    const int64_t* chunk = indices + static_cast<size_t>(start) * b;
    if (update_pool_ != nullptr) {  // steps == 1
      task_idx_ = chunk;
      update_pool_->ParallelFor(2, forward_tasks_);
    } else {
      TargetForward(chunk, steps * b);
    }
    for (int k = 0; k < steps; ++k) {
      if (update_pool_ == nullptr) {
        OnlineForward(chunk + static_cast<size_t>(k) * b);
        std::fill(q_grads_.begin(), q_grads_.end(), 0.0f);
      }
      ComputeTdTargets(mb_rewards_.data(), mb_terminated_.data(),
                       step_next_q_target_ + static_cast<size_t>(k) * b * a,
                       config_.double_q ? mb_next_q_online_.data() : nullptr, b, num_actions_,
                       config_.gamma, mb_targets_.data());
      double mean_q = 0.0;
      const double loss = HuberTdLossAndGrad(step_q_, mb_actions_.data(), mb_targets_.data(), b,
                                             num_actions_, grad_q_.data(), &mean_q);
      loss_sum += loss;
      q_sum += mean_q;
      q_net_.Backward(q_params_.data(), grad_q_.data(), q_grads_.data());
      // A non-finite loss (or a test's injection) poisons the gradient before the all-reduce,
      // so with several ranks every rank sees it and skips this step alike (ClipAndStep).
      if (inject_nonfinite_ > 0 || !std::isfinite(loss)) {
        q_grads_[0] = std::numeric_limits<float>::quiet_NaN();
      }
      if (collectives_ != nullptr) {
        collectives_->AllReduceMean(q_grads_.data(), static_cast<int64_t>(q_grads_.size()),
                                    "dqn gradients");
      }
      const double norm = ClipAndStep(lr, loss);
      if (std::isfinite(norm) && std::isfinite(loss)) grad_norm_sum += norm;
    }
  }
  if (inject_nonfinite_ > 0) --inject_nonfinite_;
  WriteMetrics(lr, num_steps, loss_sum, q_sum, grad_norm_sum);
  return metrics_;
}

void Dqn::OnlineForward(const int64_t* idx) {
  const int b = config_.batch_size;
  for (int j = 0; j < b; ++j) {
    const float* s = buffer_.obs(idx[j]);
    std::copy(s, s + obs_dim_, &mb_obs_[static_cast<size_t>(j) * obs_dim_]);
    mb_actions_[j] = buffer_.discrete_action(idx[j]);
    mb_rewards_[j] = buffer_.reward(idx[j]);
    mb_terminated_[j] = buffer_.terminated(idx[j]);
  }
  if (replay_normalizer_ != nullptr) {  // SB3 ReplayBuffer._get_samples: current statistics
    replay_normalizer_->NormalizeObs(mb_obs_.data(), mb_obs_.data(), b);
    replay_normalizer_->NormalizeRewards(mb_rewards_.data(), b);
  }
  if (config_.double_q) {
    for (int j = 0; j < b; ++j) {
      const float* s = buffer_.next_obs(idx[j]);
      std::copy(s, s + obs_dim_, &mb_next_obs_[static_cast<size_t>(j) * obs_dim_]);
    }
    if (replay_normalizer_ != nullptr) {
      replay_normalizer_->NormalizeObs(mb_next_obs_.data(), mb_next_obs_.data(), b);
    }
    const float* q_next = q_net_.Forward(q_params_.data(), mb_next_obs_.data(), b);
    std::copy(q_next, q_next + static_cast<size_t>(b) * num_actions_, mb_next_q_online_.begin());
  }
  step_q_ = q_net_.Forward(q_params_.data(), mb_obs_.data(), b);
}

// One minibatch (two update threads, or gradient_steps 1) is forwarded as drawn. Several: the
// distinct indices of idx[0, rows) by open addressing (Fibonacci hashing, linear probing), then
// Q_target(s', .) for those in passes of up to target_net_.max_batch() rows, copied back to
// every sample. Each sample's values are those of one forward pass of its next_obs (a GEMM
// column's value does not depend on the other columns, up to the BLAS kernel's blocking).
void Dqn::TargetForward(const int64_t* idx, int rows) {
  if (rows <= config_.batch_size) {  // one minibatch: as drawn (repeats are rare)
    step_next_q_target_ = TargetForwardRows(idx, rows);
    return;
  }
  const size_t slots = DistinctTableSlots(static_cast<size_t>(rows));
  const int shift = 64 - __builtin_ctzll(slots);  // slots >= 2: shift in [1, 63]
  std::fill(slot_index_.begin(), slot_index_.begin() + static_cast<ptrdiff_t>(slots), -1);
  int distinct = 0;
  for (int r = 0; r < rows; ++r) {
    const int64_t i = idx[r];
    size_t s = (static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull) >> shift;
    while (slot_index_[s] != -1 && slot_index_[s] != i) s = (s + 1) & (slots - 1);
    if (slot_index_[s] == -1) {
      slot_index_[s] = i;
      slot_row_[s] = distinct;
      distinct_idx_[distinct++] = i;
    }
    sample_row_[r] = slot_row_[s];
  }
  const size_t a = static_cast<size_t>(num_actions_);
  for (int start = 0; start < distinct; start += target_net_.max_batch()) {
    const int n = std::min(target_net_.max_batch(), distinct - start);
    const float* q = TargetForwardRows(distinct_idx_.data() + start, n);
    std::copy(q, q + n * a, distinct_q_.begin() + static_cast<ptrdiff_t>(start * a));
  }
  for (int r = 0; r < rows; ++r) {
    const float* q = &distinct_q_[static_cast<size_t>(sample_row_[r]) * a];
    std::copy(q, q + a, &chunk_next_q_[static_cast<size_t>(r) * a]);
  }
  step_next_q_target_ = chunk_next_q_.data();
}

const float* Dqn::TargetForwardRows(const int64_t* idx, int n) {
  for (int r = 0; r < n; ++r) {
    const float* s = buffer_.next_obs(idx[r]);
    std::copy(s, s + obs_dim_, &chunk_next_obs_[static_cast<size_t>(r) * obs_dim_]);
  }
  if (replay_normalizer_ != nullptr) {
    replay_normalizer_->NormalizeObs(chunk_next_obs_.data(), chunk_next_obs_.data(), n);
  }
  return target_net_.Forward(target_params_.data(), chunk_next_obs_.data(), n);
}

double Dqn::ClipAndStep(double lr, double loss) {
  const auto n = static_cast<int64_t>(q_grads_.size());
  double norm = 0.0;
  if (update_pool_ == nullptr) {
    norm = nn::ClipGradNorm(q_grads_.data(), n, config_.max_grad_norm);
  } else {
    update_pool_->ParallelFor(2, norm_tasks_);
    norm = std::sqrt(range_sum_sq_[0] + range_sum_sq_[1]);
  }
  if (!std::isfinite(norm) || !std::isfinite(loss)) {
    ++nonfinite_skips_;  // the guard: skip the step, the parameters stay as they were
    return norm;
  }
  if (update_pool_ == nullptr) {
    adam_.Step(q_params_.data(), q_grads_.data(), lr);
  } else {
    clip_coef_ = nn::ClipCoefficient(norm, config_.max_grad_norm);
    adam_coef_ = adam_.BeginStep(lr);
    update_pool_->ParallelFor(2, adam_tasks_);
  }
  ++n_updates_;
  return norm;
}

// Writes the values of the fixed keys (built in the constructor): no allocation.
void Dqn::WriteMetrics(double lr, int steps, double loss_sum, double q_sum, double grad_norm_sum) {
  const double m = steps > 0 ? static_cast<double>(steps) : std::nan("");
  const double values[] = {lr,
                           exploration_rate_,
                           loss_sum / m,
                           q_sum / m,
                           grad_norm_sum / m,
                           static_cast<double>(n_updates_),
                           static_cast<double>(target_updates_)};
  static_assert(sizeof(values) / sizeof(values[0]) == 7);
  for (size_t k = 0; k < metrics_.size(); ++k) metrics_[k].second = values[k];
}

// ---------------------------------------------------------------------------------------------
// Acting, in chunks of the online network's workspace. One row (a single training env) takes a
// matrix-vector path: sgemm with one column packs the whole weight matrix on every call (~35 us
// for [256, 256] against ~5 us for sgemv), and the rollout acts once per env step.
void Dqn::Act(const float* obs, int n, bool deterministic, int64_t* actions) {
  if (!deterministic && explore_rng_.Uniform() < exploration_rate_) {
    for (int i = 0; i < n; ++i) actions[i] = static_cast<int64_t>(explore_rng_.Below(num_actions_));
    return;
  }
  if (n == 1) {
    actions[0] = nn::ArgmaxRow(ForwardOneRow(obs), num_actions_);
    return;
  }
  const int max_rows = q_net_.max_batch();
  for (int start = 0; start < n; start += max_rows) {
    const int rows = std::min(max_rows, n - start);
    const float* q =
        q_net_.Forward(q_params_.data(), obs + static_cast<size_t>(start) * obs_dim_, rows);
    for (int i = 0; i < rows; ++i) {
      actions[start + i] = nn::ArgmaxRow(q + static_cast<size_t>(i) * num_actions_, num_actions_);
    }
  }
}

// y = MLP(x) for one row, layer by layer: y_l = W_l y_{l-1} + b_l (sgemv on the row-major W_l,
// which BLAS sees as its column-major transpose), then the activation on hidden layers.
const float* Dqn::ForwardOneRow(const float* x) {
  const float* input = x;
  const int last = q_spec_.num_layers() - 1;
  const float one = 1.0f;
  const int inc = 1;
  for (int l = 0; l <= last; ++l) {
    const int in = q_spec_.sizes[l], out = q_spec_.sizes[l + 1];
    const float* w = q_params_.data() + q_spec_.weight_offset(l);
    const float* b = q_params_.data() + q_spec_.bias_offset(l);
    float* y = (l % 2 == 0) ? row_a_.data() : row_b_.data();
    std::copy(b, b + out, y);
    sgemv_("T", &in, &out, &one, w, &in, input, &inc, &one, y, &inc);
    if (l < last) {
      for (int k = 0; k < out; ++k) {
        y[k] = config_.activation == nn::Activation::kReLU ? std::max(y[k], 0.0f)
                                                           : nn::TanhApprox(y[k]);
      }
    }
    input = y;
  }
  return input;
}

// ---------------------------------------------------------------------------------------------
// Checkpoint: a LibTorch archive (torch::serialize) with both networks, Adam's moments and step,
// the counters, and what the network was built for, so a mismatching load fails clearly.
void Dqn::SaveCheckpoint(const std::string& path) const {
  CheckpointWriter w("dqn", spec_.id, kCheckpointFormatVersion);
  WriteModel(w);
  w.Save(path);
}

void Dqn::WriteModel(CheckpointWriter& w) const {
  w.WriteInt("obs_dim", obs_dim_);
  w.WriteInt("num_actions", num_actions_);
  w.WriteInts("net_arch", config_.net_arch);
  w.WriteString("activation", nn::ToString(config_.activation));
  const int64_t n = static_cast<int64_t>(q_params_.size());
  w.WriteFloats("q_params", q_params_.data(), n);
  w.WriteFloats("target_params", target_params_.data(), n);
  w.WriteFloats("adam.exp_avg", adam_.exp_avg().data(), n);
  w.WriteFloats("adam.exp_avg_sq", adam_.exp_avg_sq().data(), n);
  w.WriteInt("adam.step", adam_.step_count());
  w.WriteInt("num_timesteps", num_timesteps_);
  w.WriteInt("n_updates", n_updates_);
  w.WriteInt("target_updates", target_updates_);
}

void Dqn::LoadCheckpoint(const std::string& path) {
  CheckpointReader r(path, "dqn", spec_.id, kCheckpointFormatVersion);
  ReadModel(r);
}

void Dqn::ResetNumTimesteps() {
  num_timesteps_ = 0;
  refill_until_ = 0;
  exploration_rate_ = LinearEpsilon(config_.exploration_initial_eps, config_.exploration_final_eps,
                                    config_.exploration_fraction, 1.0);
}

void Dqn::SaveTrainingState(const std::string& path, bool replay_buffer,
                            const std::function<void(CheckpointWriter&)>& extra) const {
  CheckpointWriter w("dqn", spec_.id, kCheckpointFormatVersion);
  WriteModel(w);
  w.WriteRng("rng.explore", explore_rng_);
  w.WriteRng("rng.sample", sample_rng_);
  WriteOffPolicyResumeState(w, {nonfinite_skips_, lr_scale_, replay_buffer, refill_until_}, buffer_,
                            replay_buffer);
  if (extra) extra(w);
  w.Save(path);
}

void Dqn::LoadTrainingState(const std::string& path,
                            const std::function<void(CheckpointReader&)>& extra) {
  CheckpointReader r(path, "dqn", spec_.id, kCheckpointFormatVersion);
  const Rng::State explore = r.RngState("rng.explore");
  const Rng::State sample = r.RngState("rng.sample");
  const OffPolicyResumeState guard = ReadOffPolicyResumeState(r);
  ReadModel(r);
  RestoreReplayBuffer(r, guard.has_replay, buffer_);
  explore_rng_.SetState(explore);
  sample_rng_.SetState(sample);
  nonfinite_skips_ = guard.nonfinite_skips;
  lr_scale_ = guard.lr_scale;
  refill_until_ = RefillUntil(guard, num_timesteps_, config_.learning_starts);
  if (extra) extra(r);
}

void Dqn::ReadModel(CheckpointReader& r) {
  r.ExpectInts("net_arch", "net_arch", config_.net_arch);
  r.ExpectString("activation_fn", "activation", nn::ToString(config_.activation));
  // Read everything before writing anything, so a bad file leaves the agent as it was.
  const int64_t n = static_cast<int64_t>(q_params_.size());
  std::vector<float> q(n), target(n), m(n), v(n);
  r.ReadFloats("q_params", q.data(), n);
  r.ReadFloats("target_params", target.data(), n);
  r.ReadFloats("adam.exp_avg", m.data(), n);
  r.ReadFloats("adam.exp_avg_sq", v.data(), n);
  const int64_t step = r.Int("adam.step");
  const int64_t num_timesteps = r.Int("num_timesteps");
  const int64_t n_updates = r.Int("n_updates");
  const int64_t target_updates = r.Int("target_updates");
  q_params_ = q;
  target_params_ = target;
  adam_.exp_avg() = m;
  adam_.exp_avg_sq() = v;
  adam_.set_step_count(step);
  num_timesteps_ = num_timesteps;
  n_updates_ = n_updates;
  target_updates_ = target_updates;
  exploration_rate_ = LinearEpsilon(
      config_.exploration_initial_eps, config_.exploration_final_eps, config_.exploration_fraction,
      1.0 - static_cast<double>(num_timesteps_) / static_cast<double>(config_.total_timesteps));
}

std::unique_ptr<Algorithm> MakeDqn(const DqnConfig& config, const env::EnvSpec& spec) {
  return std::make_unique<Dqn>(config, spec);
}

}  // namespace greenrl::algo
