// dqn.h: Deep Q-Network (Mnih et al., 2015, Nature 518:529) for Discrete action spaces, with
// Stable-Baselines3's hyperparameters, defaults and semantics (SB3 2.x
// stable_baselines3/dqn/dqn.py, common/off_policy_algorithm.py, common/buffers.py) and double DQN
// (van Hasselt et al., 2016, arXiv:1509.06461) as an option. dqn.cc reads top to bottom in
// CleanRL's order (cleanrl/dqn.py).
//
// How the Algorithm interface maps onto SB3's off-policy loop:
// - CollectRollout = SB3's collect_rollouts for `train_freq` vec steps: epsilon-greedy actions
//   (uniform random before `learning_starts`), transitions into the replay buffer, the epsilon
//   schedule and the target-network update after every vec step (SB3's _on_step). Returns
//   train_freq * n_envs env steps.
// - Update = SB3's train(gradient_steps) once num_timesteps > learning_starts (SB3's learn():
//   `num_timesteps > learning_starts`, strictly); before that a no-op returning the same keys.
//
// The hot loop runs on flat float32 buffers: nn::FusedMlp forward/backward over BLAS, the Huber
// loss gradient by hand, nn::ClipGradNorm and nn::FlatAdam; dqn_test.cc checks it against
// LibTorch autograd. Nothing is allocated per step after construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/algo/replay_buffer.h"
#include "greenrl/core/config.h"
#include "greenrl/core/rng.h"
#include "greenrl/core/schedule.h"
#include "greenrl/core/thread_pool.h"
#include "greenrl/env/spaces.h"
#include "greenrl/nn/flat_optim.h"
#include "greenrl/nn/fused_mlp.h"

namespace greenrl::algo {

// DQN's flat config (../shared/STYLE.md point 6). Each field comes from one YAML key or --set
// override (DqnConfigFromConfig; most have the key's name, the others say which); defaults
// are SB3's DQN defaults; configs/dqn/*.yaml hold rl-zoo's presets.
struct DqnConfig {
  int n_envs = 1;                    // parallel envs (rows of the VecEnv)
  int64_t total_timesteps = 100000;  // n_timesteps: the horizon of the epsilon schedule, env steps
  Schedule learning_rate = Schedule::Constant(1e-4);  // Adam step size, or lin_<initial>
  int64_t buffer_size = 1000000;  // replay capacity, transitions (summed over envs)
  int64_t learning_starts = 100;  // env steps of uniform random actions before learning
  int batch_size = 32;            // transitions per gradient step (sampled with replacement)
  double tau = 1.0;               // target update coefficient (1: hard copy; else Polyak)
  double gamma = 0.99;            // discount factor
  int train_freq = 4;             // vec steps per rollout (SB3 train_freq in "step" units)
  int gradient_steps =
      1;  // gradient steps per update (the config's -1: train_freq * n_envs; 0: none)
  // Env steps (summed over envs) between target updates: one update after each vec step at which
  // floor(num_timesteps / target_update_interval) grew (issue #6). SB3 counts vec steps,
  // max(target_update_interval // n_envs, 1) of them; the two agree when n_envs divides it.
  int64_t target_update_interval = 10000;
  double exploration_fraction = 0.1;       // share of total_timesteps over which epsilon decays
  double exploration_initial_eps = 1.0;    // epsilon at the start
  double exploration_final_eps = 0.05;     // epsilon after the decay
  double max_grad_norm = 10.0;             // global gradient-norm clip
  bool double_q = false;  // double DQN: a* = argmax_a Q(s', a), evaluated by the target network
  std::vector<int> net_arch{64, 64};                  // policy_kwargs.net_arch (hidden sizes)
  nn::Activation activation = nn::Activation::kReLU;  // policy_kwargs.activation_fn
  uint64_t seed = 0;  // network init, exploration and replay sampling
  // threads.update: 1 runs the update on the training thread; 2 adds one worker (greenrl's
  // ThreadPool, blocked between updates) that takes, each gradient step, the target network's
  // forward pass, the weight-gradient GEMM of each hidden layer and half of the gradient norm and
  // Adam step (Dqn::TrainOnIndices). Accepted: 1 or 2.
  int update_threads = 1;
};

// Declares DQN's keys (names, types, SB3 defaults, ranges, one-line docs) in `schema`.
void AddDqnKeys(ConfigSchema* schema);

// Reads DQN's fields from a loaded config (keys declared by AddDqnKeys plus the common "n_envs",
// "n_timesteps" and "seed"). Every key's range is checked when the Config loads (ConfigError
// naming the key); batch_size > buffer_size is valid (sampling is with replacement) and
// exploration_final_eps > exploration_initial_eps is valid as in SB3.
// gradient_steps: -1 is SB3's "as many as the rollout's env steps", 0 SB3's "none" (the run only
// collects). Errors: ConfigError("policy_kwargs.activation_fn", ...) for an activation other than
// tanh or relu.
DqnConfig DqnConfigFromConfig(const Config& config);

// SB3's get_linear_fn (stable_baselines3/common/utils.py) for the exploration rate: with
// progress = 1 - progress_remaining, returns `final` once progress > fraction, else
// initial + progress * (final - initial) / fraction. fraction == 0 returns `final` (SB3 would
// divide by zero at progress 0). Args: progress_remaining in [0, 1] (1 at the start).
double LinearEpsilon(double initial, double final, double fraction, double progress_remaining);

// The 1-step TD target of SB3's DQN.train (and, with next_q_online, double DQN):
//   y_i = r_i + gamma * (1 - terminated_i) * q'_i,
//   q'_i = max_a Q_target(s'_i, a)                              (next_q_online == nullptr)
//   q'_i = Q_target(s'_i, argmax_a Q_online(s'_i, a))          (double DQN; ties: lowest a)
// Truncation is not an input: a truncated row bootstraps like a running one, from the real final
// observation that the replay buffer stored as s' (SB3 handle_timeout_termination: dones are
// multiplied by 1 - timeout, and a timeout is `truncated and not terminated`, so a row both
// terminated and truncated does not bootstrap).
// Args: rewards float32 [batch]; terminated uint8 [batch] (0/1); next_q_target float32
//   [batch, num_actions]; next_q_online float32 [batch, num_actions] or nullptr; out: targets
//   float32 [batch].
void ComputeTdTargets(const float* rewards, const uint8_t* terminated, const float* next_q_target,
                      const float* next_q_online, int batch, int num_actions, double gamma,
                      float* targets);

// The Huber loss of SB3's DQN.train, F.smooth_l1_loss(Q(s, a), y) with beta 1 and mean
// reduction, and its gradient with respect to the network's outputs:
//   d_i = Q(s_i, a_i) - y_i;  loss = (1/B) sum_i (|d_i| < 1 ? d_i^2 / 2 : |d_i| - 1/2)
//   dloss/dQ(s_i, a_i) = clamp(d_i, -1, 1) / B, 0 for the other actions.
// Args: q float32 [batch, num_actions]; actions int64 [batch]; targets float32 [batch];
//   out: grad_q float32 [batch, num_actions] (overwritten); *mean_q (may be null) gets the mean of
//   Q(s_i, a_i) (CleanRL's losses/q_values). Returns: the loss.
double HuberTdLossAndGrad(const float* q, const int64_t* actions, const float* targets, int batch,
                          int num_actions, float* grad_q, double* mean_q);

// DQN. Declared here (PPO keeps its class in ppo.cc) so that tests can read the replay buffer,
// the target network and the counters, and drive a gradient step on chosen transitions.
// Thread-safety: one thread at a time.
class Dqn final : public Algorithm {
 public:
  // Errors: ConfigError("env_id", id, "an env with a Discrete action space") for Box actions.
  Dqn(const DqnConfig& config, const env::EnvSpec& spec);

  std::string name() const override { return "dqn"; }
  // DQN has one update path: greenrl's fused MLP over BLAS ("fused").
  std::string UpdatePath() const override { return "fused"; }
  // Steps `env` train_freq vec steps; returns train_freq * n_envs. Errors: GREENRL_CHECK when
  // env.num_envs() != n_envs.
  int64_t CollectRollout(env::VecEnv& env, std::vector<EpisodeRecord>* episodes) override;
  // gradient_steps gradient steps on uniformly sampled minibatches once num_timesteps >
  // learning_starts, else none. Keys, in order: charts/learning_rate, charts/epsilon,
  // losses/td_loss, losses/q_values, losses/grad_norm (each a mean over the update's steps; NaN
  // when no step ran), losses/n_updates (gradient steps so far), losses/target_updates (target
  // updates so far).
  const Metrics& Update(double progress_remaining) override;
  // deterministic: argmax_a Q(s, a) (ties: lowest a); else epsilon-greedy at the current
  // exploration rate, one coin for the whole batch (SB3 DQN.predict).
  void Act(const float* obs, int n, bool deterministic, int64_t* actions) override;
  void SeedActing(uint64_t seed) override { explore_rng_.Seed(DeriveSeed(seed, 1)); }
  // The online and target Q parameters, Adam's moments and step, and the counters (env steps,
  // gradient steps, target updates) in a LibTorch archive, written atomically. The replay buffer
  // and the generators are not saved: a loaded DQN evaluates and acts as saved, and training on
  // from it would refill the buffer.
  void SaveCheckpoint(const std::string& path) const override;
  void LoadCheckpoint(const std::string& path) override;
  // num_timesteps to 0 and epsilon to exploration_initial_eps (Algorithm::ResetNumTimesteps).
  void ResetNumTimesteps() override;
  int64_t updates_wait_until() const override {
    return std::max(config_.learning_starts, refill_until_);
  }
  // Resume: SaveCheckpoint's entries plus the exploration and sampling generators, the guard's
  // counters and, with replay_buffer, the replay buffer (ReplayBuffer::Save gives its size).
  // Without it the resumed run starts from an empty buffer and refills it with learning_starts
  // transitions before its updates go on (OffPolicyResumeState::refill_until).
  void SaveTrainingState(const std::string& path, bool replay_buffer,
                         const std::function<void(CheckpointWriter&)>& extra) const override;
  void LoadTrainingState(const std::string& path,
                         const std::function<void(CheckpointReader&)>& extra) override;
  // The online Q network's parameters, float32 [num_params] (fused_mlp.h layout).
  std::vector<float> GetParameters() const override { return q_params_; }
  // The online Q-network: argmax of its Q-values (the greedy action, epsilon not applied).
  DeterministicPolicy ExportDeterministicPolicy() const override {
    DeterministicPolicy p;
    p.algo = name();
    p.obs_dim = obs_dim_;
    p.action_dim = num_actions_;
    p.layers = DenseLayersFromFlat(q_spec_, q_params_.data());
    p.activation = q_spec_.activation;
    p.head = PolicyHead::kArgmax;
    return p;
  }
  // Data-parallel: broadcasts the online and target Q parameters from rank 0; then averages the
  // Q gradients over the ranks before each clip and Adam step, and counts env steps over all
  // ranks (n_envs x world_size per vec step), so learning_starts, target_update_interval and the
  // epsilon schedule follow the job's steps, as n_timesteps does.
  void SetCollectives(Collectives* collectives) override;
  // normalize: true: the replay buffer holds raw transitions, normalised when sampled
  // (Algorithm::SetReplayNormalizer; SB3's DQN with VecNormalize).
  void SetReplayNormalizer(const env::NormalizeVecEnv* normalizer) override {
    replay_normalizer_ = normalizer;
  }

  // For tests: `num_steps` gradient steps with minibatch k made of the transitions
  // indices[k * batch_size, (k + 1) * batch_size) (each in [0, replay_buffer().size())), at
  // learning rate lr. Returns the metrics as Update does.
  const Metrics& TrainOnIndices(const int64_t* indices, int num_steps, double lr);

  const DqnConfig& config() const { return config_; }
  const ReplayBuffer& replay_buffer() const { return buffer_; }
  // The target network's parameters, float32 [num_params].
  const std::vector<float>& target_parameters() const { return target_params_; }
  // Epsilon used for the next action (SB3's exploration_rate).
  double exploration_rate() const { return exploration_rate_; }
  int64_t num_timesteps() const { return num_timesteps_; }
  int64_t n_updates() const { return n_updates_; }
  int64_t target_updates() const { return target_updates_; }

 private:
  void UpdateTarget();
  // TrainOnIndices' pieces. OnlineForward: the minibatch `idx` (int64 [B] replay indices) into
  // mb_*, Q(s, .) of the online network into step_q_ (float32 [B, A]) and, for double DQN,
  // Q(s', .) into mb_next_q_online_. TargetForward: Q_target(s', .) of `rows` transitions
  // `idx` (int64 [rows]) into step_next_q_target_ (float32 [rows, A]), forwarding each distinct
  // transition once (sampling with replacement repeats some: 8192 draws from a 10,000-entry
  // buffer hold about 5,600 distinct ones). The two touch disjoint state, so with
  // update_threads 2 they run at once (forward_tasks_).
  void OnlineForward(const int64_t* idx);
  void TargetForward(const int64_t* idx, int rows);
  // Q_target(s', .) of the n transitions idx[0, n) (n <= target_net_.max_batch()): their
  // next_obs gathered into chunk_next_obs_, one forward pass; returns float32 [n, A] in
  // target_net_'s workspace, valid until its next Forward.
  const float* TargetForwardRows(const int64_t* idx, int n);
  // Clips the gradient norm to max_grad_norm and takes an Adam step at lr, split over the update
  // pool's threads when there is one. Returns the norm before clipping; a non-finite norm or
  // loss skips the step (the parameters stay as they were) and counts it in nonfinite_skips_.
  double ClipAndStep(double lr, double loss);
  // Q(x, .) of the online network for one row x float32 [obs_dim]; returns float32
  // [num_actions] in row_a_ or row_b_, valid until the next call.
  const float* ForwardOneRow(const float* x);
  void WriteMetrics(double lr, int steps, double loss_sum, double q_sum, double grad_norm_sum);
  void WriteModel(CheckpointWriter& w) const;
  void ReadModel(CheckpointReader& r);

  // Config and sizes.
  DqnConfig config_;
  env::EnvSpec spec_;
  int obs_dim_, num_actions_, num_envs_;
  int target_chunk_steps_;  // gradient steps whose target Q-values one TargetForward computes

  // Seeding: init, exploration and sampling each own a generator derived from the seed.
  Rng explore_rng_;
  Rng sample_rng_;

  // Networks and optimiser: online Q and target Q as flat buffers; Adam (SB3 DQNPolicy passes no
  // optimizer_kwargs, so PyTorch's eps 1e-8).
  nn::MlpSpec q_spec_;
  std::vector<float> q_params_;       // float32 [num_params]
  std::vector<float> q_grads_;        // float32 [num_params]
  Collectives* collectives_ = nullptr;  // data-parallel ranks (SetCollectives); null: one process
  std::vector<float> target_params_;  // float32 [num_params]
  nn::FusedMlp q_net_;                // online forward/backward workspace
  nn::FusedMlp target_net_;           // target forward workspace, up to kTargetChunkRows rows
  std::unique_ptr<ThreadPool> update_pool_;  // update_threads 2: the training thread + 1 worker
  nn::FlatAdam adam_;

  // Storage.
  ReplayBuffer buffer_;
  // normalize: true: the env whose raw values the buffer stores and whose current statistics
  // normalise each sampled batch (SetReplayNormalizer); null: the buffer holds what the env gives.
  const env::NormalizeVecEnv* replay_normalizer_ = nullptr;

  // Counters and schedule state.
  int64_t num_timesteps_ = 0;   // env steps so far (summed over envs and data-parallel ranks)
  int64_t refill_until_ = 0;    // OffPolicyResumeState::refill_until: no update at or before it
  int64_t n_updates_ = 0;       // gradient steps so far
  int64_t target_updates_ = 0;  // target-network updates so far
  double exploration_rate_;

  // Scratch (allocated once).
  std::vector<float> last_obs_;          // float32 [n_envs, obs_dim]: obs before the step
  std::vector<float> last_raw_obs_;      // float32 [n_envs, obs_dim]: its raw values (normalize)
  std::vector<int64_t> indices_;         // int64 [gradient_steps * batch_size]
  std::vector<float> chunk_next_obs_;    // float32 [target_net_ max batch, obs_dim]
  // TargetForward's distinct transitions: an open-addressing table (power-of-two size, at least
  // twice target_chunk_steps_ * B) from replay index (-1: empty) to its row among the distinct.
  std::vector<int64_t> slot_index_;
  std::vector<int32_t> slot_row_;
  std::vector<int64_t> distinct_idx_;  // int64 [chunk rows]: the distinct indices, first-seen order
  std::vector<int32_t> sample_row_;    // int32 [chunk rows]: each sample's distinct row
  std::vector<float> distinct_q_;      // float32 [chunk rows, A]: Q_target(s', .) per distinct
  std::vector<float> chunk_next_q_;    // float32 [chunk rows, A]: Q_target(s', .) per sample
  std::vector<float> mb_next_obs_;       // float32 [B, obs_dim] (double DQN)
  std::vector<float> mb_obs_;            // float32 [B, obs_dim]
  std::vector<int64_t> mb_actions_;      // int64 [B]
  std::vector<float> mb_rewards_;        // float32 [B]
  std::vector<uint8_t> mb_terminated_;   // uint8 [B]
  std::vector<float> mb_next_q_online_;  // float32 [B, A] (double DQN)
  std::vector<float> mb_targets_;        // float32 [B]
  std::vector<float> grad_q_;            // float32 [B, A]
  std::vector<float> row_a_, row_b_;     // float32 [max layer width]: ForwardOneRow
  // Two-thread update state, read by the pool tasks (built once: no allocation per step).
  const int64_t* task_idx_ = nullptr;          // the step's minibatch indices, int64 [B]
  const float* step_q_ = nullptr;              // OnlineForward's Q(s, .), float32 [B, A]
  const float* step_next_q_target_ = nullptr;  // TargetForward's Q_target(s', .)
  ThreadPool::RangeFn forward_tasks_;  // task 0: OnlineForward; 1: TargetForward, zero grads
  ThreadPool::RangeFn norm_tasks_;     // task t: SumOfSquares of grads range t
  ThreadPool::RangeFn adam_tasks_;     // task t: clip and Adam over range t
  int64_t split_ = 0;                  // the ranges: [0, split_), [split_, num_params)
  double range_sum_sq_[2] = {0.0, 0.0};
  float clip_coef_ = 1.0f;
  nn::FlatAdam::StepCoefficients adam_coef_{};
  Metrics metrics_;                      // returned by Update; keys fixed at construction
};

// Creates DQN for `spec` (Discrete actions only).
// Errors: ConfigError("env_id", id, "an env with a Discrete action space") for Box actions.
std::unique_ptr<Algorithm> MakeDqn(const DqnConfig& config, const env::EnvSpec& spec);

}  // namespace greenrl::algo
