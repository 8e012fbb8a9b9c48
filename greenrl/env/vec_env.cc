#include "greenrl/env/vec_env.h"

#include <algorithm>
#include <utility>

#include "greenrl/core/aligned_vector.h"
#include "greenrl/core/errors.h"

namespace greenrl::env {
namespace {

// Smallest slice of rows a thread claims at a time (ThreadPool::ParallelFor's grain): 64
// CartPole rows are ~2 us of work, so a claim (one compare-and-swap) costs ~1% of it, and a
// thread's share of 1,024 rows over 2 threads is 8 slices a faster thread can take over. A
// multiple of 8 and of 16, so slices of power-of-two row counts keep the batched envs' SIMD
// loops free of scalar tails.
constexpr int kRowsPerSlice = 64;

// The pool size for num_threads requested over num_envs rows: no thread without a row.
int PoolSize(int num_threads, int num_envs) {
  return num_threads < 1 ? num_threads : std::min(num_threads, std::max(num_envs, 1));
}

}  // namespace

// Everything a root VecEnv owns: the envs, their SoA buffers and the pool stepping them.
struct VecEnv::Root {
  Root(std::unique_ptr<BatchedEnv> batched, uint64_t seed, int num_threads)
      : envs(std::move(batched)), pool(PoolSize(num_threads, envs->num_envs())) {
    const EnvSpec& s = envs->spec();
    const size_t n = static_cast<size_t>(envs->num_envs());
    const size_t obs_dim = static_cast<size_t>(s.obs_dim());
    if (s.discrete_actions()) {
      discrete_actions.assign(n, 0);
    } else {
      continuous_actions.assign(n * static_cast<size_t>(s.act_dim()), 0.0f);
    }
    obs.assign(n * obs_dim, 0.0f);
    reward.assign(n, 0.0f);
    terminated.assign(n, 0);
    truncated.assign(n, 0);
    final_obs.assign(n * obs_dim, 0.0f);
    episode_return.assign(n, 0.0f);
    episode_length.assign(n, 0);

    buffers.discrete_actions = discrete_actions.empty() ? nullptr : discrete_actions.data();
    buffers.continuous_actions = continuous_actions.empty() ? nullptr : continuous_actions.data();
    buffers.obs = obs.data();
    buffers.reward = reward.data();
    buffers.terminated = terminated.data();
    buffers.truncated = truncated.data();
    buffers.final_obs = final_obs.data();
    buffers.episode_return = episode_return.data();
    buffers.episode_length = episode_length.data();

    reset_rows = [this, seed](int begin, int end) { envs->ResetRows(begin, end, seed, buffers); };
    step_rows = [this](int begin, int end) { envs->StepRows(begin, end, buffers); };
    random_step_rows = [this](int begin, int end) {
      SampleActionRows(envs->spec().action_space, random_key, begin, end, discrete_actions.data(),
                       continuous_actions.data());
      envs->StepRows(begin, end, buffers);
    };
  }

  std::unique_ptr<BatchedEnv> envs;
  bool has_reset = false;

  CacheAlignedVector<int64_t> discrete_actions;  // int64 [N]; empty for Box action spaces
  CacheAlignedVector<float> continuous_actions;  // float32 [N, act_dim]; empty for Discrete spaces
  CacheAlignedVector<float> obs;                 // float32 [N, obs_dim]
  CacheAlignedVector<float> reward;              // float32 [N]
  CacheAlignedVector<uint8_t> terminated;        // uint8 [N]
  CacheAlignedVector<uint8_t> truncated;         // uint8 [N]
  CacheAlignedVector<float> final_obs;           // float32 [N, obs_dim]
  CacheAlignedVector<float> episode_return;      // float32 [N]
  CacheAlignedVector<int32_t> episode_length;    // int32 [N], steps
  VecBuffers buffers;                     // views of the vectors above

  ThreadPool pool;
  ThreadPool::RangeFn reset_rows;  // built once so Reset/Step allocate nothing
  ThreadPool::RangeFn step_rows;
  ThreadPool::RangeFn random_step_rows;  // StepRandom: draw the slice's actions, then step it
  uint64_t random_key = 0;               // StepRandom's key for the job in flight
  bool sampleable_checked = false;       // CheckSampleable passed once (the spec never changes)

  // CheckSampleable on the first call only (the spec never changes).
  void CheckSampleableOnce() {
    if (sampleable_checked) return;
    CheckSampleable(envs->spec().id, envs->spec().action_space);
    sampleable_checked = true;
  }

  // Steps every row with `rows` (step_rows or random_step_rows) over the pool. `caller` names
  // the method for the before-Reset check. A throwing row leaves the rows partly stepped, so
  // the next step demands a Reset().
  void StepAll(const ThreadPool::RangeFn& rows, const char* caller) {
    GREENRL_CHECK(has_reset, std::string("VecEnv::") + caller +
                                 "() called before Reset() (or after a failed Step())");
    try {
      pool.ParallelFor(envs->num_envs(), rows, kRowsPerSlice);
    } catch (...) {
      has_reset = false;
      throw;
    }
  }
};

namespace {

const EnvSpec* CheckedSpec(const std::unique_ptr<BatchedEnv>& envs) {
  GREENRL_CHECK(envs != nullptr, "VecEnv needs a BatchedEnv");
  GREENRL_CHECK(envs->num_envs() >= 1, "VecEnv needs at least one env");
  return &envs->spec();
}

}  // namespace

VecEnv::VecEnv(std::unique_ptr<BatchedEnv> envs, uint64_t seed, int num_threads)
    : spec_(CheckedSpec(envs)), num_envs_(envs->num_envs()), seed_(seed) {
  root_ = std::make_unique<Root>(std::move(envs), seed, num_threads);
  views_.discrete_actions =
      root_->discrete_actions.empty() ? nullptr : root_->discrete_actions.data();
  views_.continuous_actions =
      root_->continuous_actions.empty() ? nullptr : root_->continuous_actions.data();
  views_.obs = root_->buffers.obs;
  views_.reward = root_->buffers.reward;
  views_.terminated = root_->buffers.terminated;
  views_.truncated = root_->buffers.truncated;
  views_.final_obs = root_->buffers.final_obs;
  views_.episode_return = root_->buffers.episode_return;
  views_.episode_length = root_->buffers.episode_length;
}

VecEnv::VecEnv(const EnvSpec* spec, int num_envs, uint64_t seed)
    : spec_(spec), num_envs_(num_envs), seed_(seed) {
  GREENRL_CHECK(spec != nullptr, "VecEnv decorator needs a spec");
  GREENRL_CHECK(num_envs >= 1, "VecEnv needs at least one env");
}

VecEnv::~VecEnv() = default;

int64_t VecEnv::non_finite_outputs() const {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override non_finite_outputs()");
  return root_->envs->non_finite_outputs();
}

int64_t VecEnv::non_finite_resets() const {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override non_finite_resets()");
  return root_->envs->non_finite_resets();
}

int VecEnv::num_threads() const {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override num_threads()");
  return root_->pool.num_threads();
}

void VecEnv::SetActiveThreads(int threads) {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override SetActiveThreads()");
  root_->pool.set_active_threads(threads);
}

void VecEnv::Reset() {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override Reset()");
  root_->pool.ParallelFor(num_envs_, root_->reset_rows, kRowsPerSlice);
  root_->has_reset = true;
}

int64_t* VecEnv::discrete_actions() {
  GREENRL_CHECK(spec().discrete_actions(),
                spec().id + " has a Box action space: use continuous_actions()");
  return views_.discrete_actions;
}

float* VecEnv::continuous_actions() {
  GREENRL_CHECK(!spec().discrete_actions(),
                spec().id + " has a Discrete action space: use discrete_actions()");
  return views_.continuous_actions;
}

void VecEnv::Step() {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override Step()");
  root_->StepAll(root_->step_rows, "Step");
}

void VecEnv::SampleActions(uint64_t key) {
  if (root_ != nullptr) {
    root_->CheckSampleableOnce();
  } else {
    CheckSampleable(spec().id, spec().action_space);
  }
  SampleActionRows(spec().action_space, key, 0, num_envs_, views_.discrete_actions,
                   views_.continuous_actions);
}

void VecEnv::StepRandom(uint64_t key) {
  if (root_ == nullptr) {  // a decorator: draw on this thread, then its own Step()
    SampleActions(key);
    Step();
    return;
  }
  root_->CheckSampleableOnce();
  root_->random_key = key;
  root_->StepAll(root_->random_step_rows, "StepRandom");
}

bool VecEnv::SaveState(std::string* bytes) const {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override SaveState()");
  if (!root_->envs->SaveState(bytes)) return false;
  const Root& r = *root_;
  AppendVector(bytes, r.discrete_actions);
  AppendVector(bytes, r.continuous_actions);
  AppendVector(bytes, r.obs);
  AppendVector(bytes, r.reward);
  AppendVector(bytes, r.terminated);
  AppendVector(bytes, r.truncated);
  AppendVector(bytes, r.final_obs);
  AppendVector(bytes, r.episode_return);
  AppendVector(bytes, r.episode_length);
  const uint8_t has_reset = r.has_reset ? 1 : 0;
  AppendBytes(bytes, &has_reset, 1);
  return true;
}

void VecEnv::LoadState(const std::string& bytes, size_t* offset) {
  GREENRL_CHECK(root_ != nullptr, "a VecEnv decorator must override LoadState()");
  root_->envs->LoadState(bytes, offset);
  Root& r = *root_;
  ReadVector(bytes, offset, &r.discrete_actions);
  ReadVector(bytes, offset, &r.continuous_actions);
  ReadVector(bytes, offset, &r.obs);
  ReadVector(bytes, offset, &r.reward);
  ReadVector(bytes, offset, &r.terminated);
  ReadVector(bytes, offset, &r.truncated);
  ReadVector(bytes, offset, &r.final_obs);
  ReadVector(bytes, offset, &r.episode_return);
  ReadVector(bytes, offset, &r.episode_length);
  uint8_t has_reset = 0;
  ReadBytes(bytes, offset, &has_reset, 1);
  r.has_reset = has_reset != 0;
}

}  // namespace greenrl::env
