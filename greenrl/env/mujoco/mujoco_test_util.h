// mujoco_test_util.h: helpers shared by mujoco_test.cc (the v4 tasks) and mujoco_v5_test.cc
// (the v5 tasks): a VecEnv whose LocomotionEnv rows a test can reach, random actions, recorded
// trajectories, and ShadowSteps, which checks each env step against an independently stepped
// copy of the row's MuJoCo state, with the step checks a task's v4 and v5 share. Test code only
// (GoogleTest assertions inside).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/mujoco/mujoco_model.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/vec_env.h"

namespace greenrl::env::mujoco {

// A VecEnv over a LocomotionEnv whose rows the test can reach (the VecEnv owns it).
struct Harness {
  LocomotionEnv* env = nullptr;  // owned by vec
  std::unique_ptr<VecEnv> vec;
};

// num_envs rows of Task in a VecEnv stepped on `threads` threads, reset with `seed`.
template <typename Task>
Harness Make(int num_envs, uint64_t seed, int threads) {
  std::unique_ptr<BatchedEnv> batched = Task::MakeBatched(num_envs);
  Harness h;
  h.env = static_cast<LocomotionEnv*>(batched.get());
  h.vec = std::make_unique<VecEnv>(std::move(batched), seed, threads);
  h.vec->Reset();
  return h;
}

// Fills the action buffer with U(-1, 1) actions from `rng`.
inline void RandomActions(VecEnv& vec, Rng& rng) {
  const int64_t n = vec.num_envs() * vec.spec().act_dim();
  for (int64_t k = 0; k < n; ++k) {
    vec.continuous_actions()[k] = static_cast<float>(rng.Uniform(-1.0, 1.0));
  }
}

// The id of the body named `name`, -1 if there is none.
inline int BodyId(const mjModel& m, const char* name) { return mj_name2id(&m, mjOBJ_BODY, name); }

// The obs after a reset with `seed`, then for each of `steps` steps of U(-1, 1) actions (the same
// actions for every call) obs, final_obs, rewards and terminations, all rows, in one vector.
template <typename Task>
std::vector<float> Trajectory(int num_envs, uint64_t seed, int threads, int steps) {
  Harness h = Make<Task>(num_envs, seed, threads);
  const int64_t obs_n = num_envs * h.vec->spec().obs_dim();
  std::vector<float> out(h.vec->obs(), h.vec->obs() + obs_n);
  Rng rng(99);  // the same actions for every run
  for (int t = 0; t < steps; ++t) {
    RandomActions(*h.vec, rng);
    h.vec->Step();
    out.insert(out.end(), h.vec->obs(), h.vec->obs() + obs_n);
    out.insert(out.end(), h.vec->final_obs(), h.vec->final_obs() + obs_n);
    out.insert(out.end(), h.vec->reward(), h.vec->reward() + num_envs);
    for (int i = 0; i < num_envs; ++i) out.push_back(h.vec->terminated()[i]);
  }
  return out;
}

// Seed 3 gives the same trajectory (obs, final_obs, rewards, terminations) on 1 and 2 threads;
// seed 4 another one.
template <typename Task>
void ExpectSeedDeterminesTrajectory(int num_envs, int steps) {
  const std::vector<float> one = Trajectory<Task>(num_envs, 3, 1, steps);
  EXPECT_EQ(one, Trajectory<Task>(num_envs, 3, 2, steps)) << Task::Task().id;
  EXPECT_NE(one, Trajectory<Task>(num_envs, 4, 2, steps)) << Task::Task().id;
}

// Steps row 0 of a task for `steps` actions U(-bound, bound) and hands `check` the step number,
// the action (float32 [act_dim]), the row's state before the step, an independently stepped copy
// of it (frame_skip mj_step calls of the action, then mj_rnePostConstraint, as Gymnasium's
// MujocoEnv) and the VecEnv after its step. Returns the terminations.
template <typename Task, typename Check>
int ShadowSteps(uint64_t env_seed, uint64_t action_seed, int steps, double bound, Check check) {
  Harness h = Make<Task>(1, env_seed, 1);
  const mjModel& m = h.env->model();
  DataPtr before = MakeData(m);
  DataPtr shadow = MakeData(m);
  Rng rng(action_seed);
  int terminations = 0;
  std::vector<float> action(m.nu);
  for (int t = 0; t < steps; ++t) {
    mj_copyData(before.get(), &m, &h.env->data(0));
    mj_copyData(shadow.get(), &m, &h.env->data(0));
    for (int k = 0; k < m.nu; ++k) {
      action[k] = static_cast<float>(rng.Uniform(-bound, bound));
      h.vec->continuous_actions()[k] = action[k];
      shadow->ctrl[k] = action[k];
    }
    for (int k = 0; k < Task::Task().frame_skip; ++k) mj_step(&m, shadow.get());
    mj_rnePostConstraint(&m, shadow.get());
    h.vec->Step();
    check(t, action.data(), *before, *shadow, *h.vec);
    terminations += h.vec->terminated()[0];
    if (::testing::Test::HasFailure()) break;  // one step's report is enough
  }
  return terminations;
}

// |xpos(a) - xpos(b)| in m, bodies named.
inline double Distance(const mjModel& m, const mjData& d, const char* a, const char* b) {
  const int ia = BodyId(m, a);
  const int ib = BodyId(m, b);
  double sq = 0.0;
  for (int c = 0; c < 3; ++c) {
    const double v = d.xpos[3 * ia + c] - d.xpos[3 * ib + c];
    sq += v * v;
  }
  return std::sqrt(sq);
}

// x of humanoid_v4.py's (and humanoid_v5.py's) mass_center: sum(body_mass * xipos) /
// sum(body_mass).
inline double MassCenterX(const mjModel& m, const mjData& d) {
  double weighted = 0.0, mass = 0.0;
  for (int b = 0; b < m.nbody; ++b) {
    weighted += m.body_mass[b] * d.xipos[3 * b];
    mass += m.body_mass[b];
  }
  return weighted / mass;
}

// HopperEnv.is_healthy (hopper_v4.py and hopper_v5.py) on a float64 state: every entry of
// [qpos[2:], qvel] in (-100, 100), z = qpos[1] > 0.7, angle = qpos[2] in (-0.2, 0.2).
inline bool HopperHealthy(const mjData& d) {
  for (int k = 2; k < 6; ++k) {
    if (!(-100.0 < d.qpos[k] && d.qpos[k] < 100.0)) return false;
  }
  for (int k = 0; k < 6; ++k) {
    if (!(-100.0 < d.qvel[k] && d.qvel[k] < 100.0)) return false;
  }
  return 0.7 < d.qpos[1] && -0.2 < d.qpos[2] && d.qpos[2] < 0.2;
}

// Walker2dEnv.is_healthy (walker2d_v4.py and walker2d_v5.py) on a float64 state: z and angle
// only, z = qpos[1] in (0.8, 2), angle = qpos[2] in (-1, 1).
inline bool Walker2dHealthy(const mjData& d) {
  return 0.8 < d.qpos[1] && d.qpos[1] < 2.0 && -1.0 < d.qpos[2] && d.qpos[2] < 1.0;
}

// A registered MuJoCo task's spec as Gymnasium registers and builds it.
struct ExpectedSpec {
  const char* id;
  int64_t obs_dim, act_dim;
  float action_bound;  // the actuators' ctrlrange [-bound, bound]
  std::optional<double> reward_threshold;
  int max_episode_steps = 1000;
};

// FindEnvSpec(e.id) has e's sizes, TimeLimit, threshold and action bounds, and an unbounded
// observation Box, for every e in `table`.
inline void ExpectSpecs(const std::vector<ExpectedSpec>& table) {
  for (const ExpectedSpec& e : table) {
    const EnvSpec& spec = FindEnvSpec(e.id);
    EXPECT_EQ(spec.obs_dim(), e.obs_dim) << e.id;
    EXPECT_EQ(spec.act_dim(), e.act_dim) << e.id;
    EXPECT_EQ(spec.max_episode_steps, e.max_episode_steps) << e.id;
    EXPECT_EQ(spec.reward_threshold, e.reward_threshold) << e.id;
    const Box& action = std::get<Box>(spec.action_space);
    for (int64_t k = 0; k < spec.act_dim(); ++k) {
      EXPECT_EQ(action.low[k], -e.action_bound) << e.id;
      EXPECT_EQ(action.high[k], e.action_bound) << e.id;
    }
    for (int64_t k = 0; k < spec.obs_dim(); ++k) {
      EXPECT_TRUE(std::isinf(spec.observation_space.high[k])) << e.id;
    }
  }
}

// Runs 1000 random-action steps on 2 rows of a task without a health rule: no step terminates,
// the 1000th truncates both rows and resets them (simulated time back to 0, a new obs; for the
// humanoids a first obs whose cfrc_ext, the last 78 or 84 values, is 0: a reset makes no
// mj_rnePostConstraint call).
template <typename Task>
void ExpectTruncationAfter1000StepsOnly() {
  Harness h = Make<Task>(2, 1, 1);
  Rng rng(5);
  for (int t = 1; t <= 1000; ++t) {
    RandomActions(*h.vec, rng);
    h.vec->Step();
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(h.vec->terminated()[i], 0) << "step " << t;
      ASSERT_EQ(h.vec->truncated()[i], t == 1000 ? 1 : 0) << "step " << t;
    }
  }
  EXPECT_EQ(h.vec->episode_length()[0], 1000);
  EXPECT_EQ(h.vec->episode_length()[1], 1000);
  EXPECT_EQ(h.env->non_finite_resets(), 0);
  const int64_t obs_dim = h.vec->spec().obs_dim();
  const bool humanoid = Task::Task().observation == Observation::kHumanoid ||
                        Task::Task().observation == Observation::kHumanoidV5;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(h.env->data(i).time, 0.0) << i;
    const float* obs = h.vec->obs() + i * obs_dim;
    const float* final_obs = h.vec->final_obs() + i * obs_dim;
    EXPECT_FALSE(std::equal(obs, obs + obs_dim, final_obs)) << i;
    if (humanoid) {
      for (int64_t k = obs_dim - 78; k < obs_dim; ++k) EXPECT_EQ(obs[k], 0.0f) << i << " " << k;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Step checks shared by a task's v4 and v5 (v5: the *_v5.py file's rule, see locomotion.h).
// ---------------------------------------------------------------------------------------------

// |a|^2 of an action float32 [n].
inline double CtrlSq(const float* a, int n) {
  double sq = 0.0;
  for (int k = 0; k < n; ++k) sq += static_cast<double>(a[k]) * a[k];
  return sq;
}

// min(weight sum(cfrc_ext^2), 10) over a humanoid's 14 bodies: humanoid_v5.py's contact_cost
// (weight 5e-7) and HumanoidStandup's quad_impact_cost (0.5e-6).
inline double HumanoidContactCost(const mjData& d, double weight) {
  double sq = 0.0;
  for (int k = 0; k < 84; ++k) sq += d.cfrc_ext[k] * d.cfrc_ext[k];
  return std::min(weight * sq, 10.0);
}

// final_obs of a humanoid at state d after step t: v4 [qpos[2:], qvel, cinert, cvel,
// qfrc_actuator, cfrc_ext] (376); v5 the same without the world body's rows and the free joint's
// six actuator forces, [qpos[2:], qvel, cinert[1:], cvel[1:], qfrc_actuator[6:], cfrc_ext[1:]]
// (348). Returns the largest |cfrc_ext| entry (N or N m).
inline double ExpectHumanoidObs(const mjData& d, const float* final_obs, int t, bool v5) {
  const int skip = v5 ? 1 : 0;  // bodies left out at the front
  std::vector<double> want(d.qpos + 2, d.qpos + 24);
  want.insert(want.end(), d.qvel, d.qvel + 23);
  want.insert(want.end(), d.cinert + 10 * skip, d.cinert + 140);
  want.insert(want.end(), d.cvel + 6 * skip, d.cvel + 84);
  want.insert(want.end(), d.qfrc_actuator + 6 * skip, d.qfrc_actuator + 23);
  const size_t cfrc_ext_at = want.size();
  want.insert(want.end(), d.cfrc_ext + 6 * skip, d.cfrc_ext + 84);
  EXPECT_EQ(want.size(), v5 ? 348u : 376u);
  double largest = 0.0;
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(final_obs[k], static_cast<float>(want[k])) << "step " << t << " obs " << k;
    if (k >= cfrc_ext_at) largest = std::max(largest, std::abs(want[k]));
  }
  return largest;
}

// Humanoid-v4: reward = 1.25 d(mass center x)/dt + 5 - 0.1 |a|^2 (also on the terminating
// step); Humanoid-v5: the 5 on healthy steps only, less min(5e-7 |cfrc_ext|^2, 10). Terminated
// exactly when z = qpos[2] leaves the open (1, 2); final_obs per ExpectHumanoidObs (cfrc_ext
// after mj_rnePostConstraint, as Gymnasium's MujocoEnv: the contact forces, large when it falls);
// the autoreset's first observation has cfrc_ext 0 (a reset does not make that call).
template <typename Task>
void ExpectHumanoidSteps(bool v5) {
  Harness probe = Make<Task>(1, 0, 1);
  const mjModel& m = probe.env->model();
  const int obs_dim = v5 ? 348 : 376;
  double max_x_gap = 0.0;  // |reward had x been the torso's qpos[0] - the env's reward|
  double max_cfrc_ext = 0.0, contact_cost_max = 0.0;
  const int terminations = ShadowSteps<Task>(
      91, 92, 600, 0.4,
      [&](int t, const float* a, const mjData& before, const mjData& d, const VecEnv& vec) {
        const bool healthy = 1.0 < d.qpos[2] && d.qpos[2] < 2.0;
        EXPECT_EQ(vec.terminated()[0], healthy ? 0 : 1) << "step " << t;
        const double contact_cost = v5 ? HumanoidContactCost(d, 5e-7) : 0.0;
        contact_cost_max = std::max(contact_cost_max, contact_cost);
        const double dx = MassCenterX(m, d) - MassCenterX(m, before);
        const double alive = healthy || !v5 ? 5.0 : 0.0;
        const double expected = 1.25 * dx / 0.015 + alive - 0.1 * CtrlSq(a, 17) - contact_cost;
        EXPECT_NEAR(vec.reward()[0], expected, 1e-5 * (1.0 + std::abs(expected))) << "step " << t;
        max_x_gap = std::max(
            max_x_gap, std::abs(1.25 * (d.qpos[0] - before.qpos[0]) / 0.015 - 1.25 * dx / 0.015));
        max_cfrc_ext = std::max(max_cfrc_ext, ExpectHumanoidObs(d, vec.final_obs(), t, v5));
        if (!healthy) {
          for (int k = obs_dim - 78; k < obs_dim; ++k) {
            EXPECT_EQ(vec.obs()[k], 0.0f) << "reset obs " << k;
          }
        }
      });
  EXPECT_GE(terminations, 5);     // random torques topple it within a few dozen steps
  EXPECT_GT(max_x_gap, 1e-2);     // the mass center is not the torso
  EXPECT_GT(max_cfrc_ext, 10.0);  // contact forces of tens of newtons or more on landing
  if (v5) {
    EXPECT_GT(contact_cost_max, 1e-3);
  }
}

// HumanoidStandup (v4 and v5): reward = qpos[2] / 0.003 (the timestep, not dt) - 0.1 |a|^2
// - min(0.5e-6 |cfrc_ext|^2, 10) + 1 after the step (cfrc_ext after mj_rnePostConstraint), never
// terminated, final_obs as Humanoid's of the same version.
template <typename Task>
void ExpectHumanoidStandupSteps(bool v5) {
  double lowest = 1e9, highest = -1e9;
  double impact_sum = 0.0, impact_max = 0.0;
  const int terminations = ShadowSteps<Task>(
      93, 94, 300, 0.4,
      [&](int t, const float* a, const mjData&, const mjData& d, const VecEnv& vec) {
        const double impact = HumanoidContactCost(d, 0.5e-6);
        impact_sum += impact;
        impact_max = std::max(impact_max, impact);
        const double expected = d.qpos[2] / 0.003 - 0.1 * CtrlSq(a, 17) - impact + 1.0;
        EXPECT_NEAR(vec.reward()[0], expected, 1e-5 * std::abs(expected)) << "step " << t;
        lowest = std::min(lowest, d.qpos[2]);
        highest = std::max(highest, d.qpos[2]);
        ExpectHumanoidObs(d, vec.final_obs(), t, v5);
      });
  EXPECT_EQ(terminations, 0);
  // The impact cost counts: 0.150 a step on average here, at most 1.52 (MuJoCo 2.2.2,
  // 2026-12-05); without mj_rnePostConstraint it would be 0.
  EXPECT_GT(impact_sum / 300, 0.05);
  EXPECT_GT(impact_max, 0.5);
  // It stays on the floor under random torques: the torso 0.074-0.120 m up over these 300 steps
  // (MuJoCo 2.2.2, 2026-12-05), so rewards of about 25-40 per step.
  EXPECT_GT(lowest, 0.05);
  EXPECT_LT(highest, 0.3);
}

// InvertedDoublePendulum-v4: reward = 10 - (0.01 x^2 + (y - 2)^2) - (1e-3 v1^2 + 5e-3 v2^2) from
// the tip site and the poles' speeds (v5: the 10 only when not terminated), terminated exactly
// when the tip's y <= 1 m, final_obs = [x, sin, cos, clip(qvel, 10), clip(qfrc_constraint, 10)]
// (v5: qfrc_constraint[0] only; the hinges' entries, which v5 leaves out, are 0 on every step).
template <typename Task>
void ExpectDoublePendulumSteps(bool v5) {
  double max_cart_constraint = 0.0;
  const int terminations = ShadowSteps<Task>(
      71, 72, 3000, 1.0,
      [&](int t, const float*, const mjData&, const mjData& d, const VecEnv& vec) {
        const double x = d.site_xpos[0];
        const double y = d.site_xpos[2];
        const bool terminated = y <= 1.0;
        EXPECT_EQ(vec.terminated()[0], terminated ? 1 : 0) << "step " << t;
        const double alive = terminated && v5 ? 0.0 : 10.0;
        const double expected = alive - (0.01 * x * x + (y - 2.0) * (y - 2.0)) -
                                (1e-3 * d.qvel[1] * d.qvel[1] + 5e-3 * d.qvel[2] * d.qvel[2]);
        EXPECT_NEAR(vec.reward()[0], expected, 1e-5 * (1.0 + std::abs(expected))) << "step " << t;
        const float* o = vec.final_obs();
        EXPECT_EQ(o[0], static_cast<float>(d.qpos[0])) << "step " << t;
        for (int k = 1; k < 3; ++k) {
          EXPECT_EQ(o[k], static_cast<float>(std::sin(d.qpos[k]))) << "step " << t;
          EXPECT_EQ(o[k + 2], static_cast<float>(std::cos(d.qpos[k]))) << "step " << t;
        }
        for (int k = 0; k < 3; ++k) {
          EXPECT_EQ(o[5 + k], static_cast<float>(std::clamp(d.qvel[k], -10.0, 10.0)));
        }
        for (int k = 0; k < (v5 ? 1 : 3); ++k) {
          EXPECT_EQ(o[8 + k], static_cast<float>(std::clamp(d.qfrc_constraint[k], -10.0, 10.0)));
        }
        EXPECT_EQ(d.qfrc_constraint[1], 0.0) << "step " << t;
        EXPECT_EQ(d.qfrc_constraint[2], 0.0) << "step " << t;
        max_cart_constraint = std::max(max_cart_constraint, std::abs(d.qfrc_constraint[0]));
      });
  EXPECT_GE(terminations, 100);
  EXPECT_GT(max_cart_constraint, 10.0);  // the slider's limit was hit and its force clipped
}

// Reacher: reward = -|fingertip - target| - |a|^2, the distance BEFORE the step (v4) or AFTER it
// (v5); never terminated, truncated every 50 steps; final_obs = [cos, sin of the angles, the
// target's x, y, the arm's speeds, fingertip - target (v4: x, y, z; v5: x, y)] from the stepped
// state; the target never moves.
template <typename Task>
void ExpectReacherSteps(bool v5) {
  Harness probe = Make<Task>(1, 0, 1);
  const mjModel& m = probe.env->model();
  const int tip = BodyId(m, "fingertip");
  const int target = BodyId(m, "target");
  double max_gap = 0.0;  // |reward with the distance of the other side of the step - the env's|
  const int terminations = ShadowSteps<Task>(
      81, 82, 500, 1.0,
      [&](int t, const float* a, const mjData& before, const mjData& d, const VecEnv& vec) {
        const mjData& read = v5 ? d : before;
        const mjData& other = v5 ? before : d;
        const double expected = -Distance(m, read, "fingertip", "target") - CtrlSq(a, 2);
        EXPECT_NEAR(vec.reward()[0], expected, 1e-6) << "step " << t;
        max_gap = std::max(max_gap, std::abs(-Distance(m, other, "fingertip", "target") -
                                             CtrlSq(a, 2) - expected));
        EXPECT_EQ(vec.truncated()[0], (t + 1) % 50 == 0 ? 1 : 0) << "step " << t;
        const float* o = vec.final_obs();
        for (int k = 0; k < 2; ++k) {
          EXPECT_EQ(o[k], static_cast<float>(std::cos(d.qpos[k]))) << "step " << t;
          EXPECT_EQ(o[2 + k], static_cast<float>(std::sin(d.qpos[k]))) << "step " << t;
          EXPECT_EQ(o[4 + k], static_cast<float>(d.qpos[2 + k])) << "step " << t;
          EXPECT_EQ(o[6 + k], static_cast<float>(d.qvel[k])) << "step " << t;
        }
        for (int c = 0; c < (v5 ? 2 : 3); ++c) {
          EXPECT_EQ(o[8 + c], static_cast<float>(d.xpos[3 * tip + c] - d.xpos[3 * target + c]));
        }
        EXPECT_EQ(d.qvel[2], 0.0);  // the target never moves
        EXPECT_EQ(d.qvel[3], 0.0);
      });
  EXPECT_EQ(terminations, 0);
  EXPECT_GT(max_gap, 1e-3);  // the distance on the other side of the step gives other rewards
}

// Pusher: reward = -|object - goal| - 0.1 |a|^2 - 0.5 |object - tips_arm|, the distances BEFORE
// the step (v4) or AFTER it (v5); never terminated, truncated every 100 steps; final_obs =
// [qpos[:7], qvel[:7], xpos of tips_arm, object, goal] of the stepped state; the goal never
// moves.
template <typename Task>
void ExpectPusherSteps(bool v5) {
  Harness probe = Make<Task>(1, 0, 1);
  const mjModel& m = probe.env->model();
  double max_gap = 0.0;  // |reward with the distances of the other side of the step - the env's|
  const int terminations = ShadowSteps<Task>(
      95, 96, 500, 2.0,
      [&](int t, const float* a, const mjData& before, const mjData& d, const VecEnv& vec) {
        auto reward_at = [&](const mjData& s) {
          return -Distance(m, s, "object", "goal") - 0.1 * CtrlSq(a, 7) -
                 0.5 * Distance(m, s, "object", "tips_arm");
        };
        const double expected = reward_at(v5 ? d : before);
        EXPECT_NEAR(vec.reward()[0], expected, 1e-5 * (1.0 + std::abs(expected))) << "step " << t;
        max_gap = std::max(max_gap, std::abs(reward_at(v5 ? before : d) - expected));
        EXPECT_EQ(vec.truncated()[0], (t + 1) % 100 == 0 ? 1 : 0) << "step " << t;
        const float* o = vec.final_obs();
        for (int k = 0; k < 7; ++k) {
          EXPECT_EQ(o[k], static_cast<float>(d.qpos[k])) << "step " << t;
          EXPECT_EQ(o[7 + k], static_cast<float>(d.qvel[k])) << "step " << t;
        }
        int k = 14;
        for (const char* body : {"tips_arm", "object", "goal"}) {
          for (int c = 0; c < 3; ++c) {
            EXPECT_EQ(o[k++], static_cast<float>(d.xpos[3 * BodyId(m, body) + c]))
                << "step " << t << " " << body;
          }
        }
        EXPECT_EQ(d.qpos[9], 0.0);
        EXPECT_EQ(d.qpos[10], 0.0);
      });
  EXPECT_EQ(terminations, 0);
  EXPECT_GT(max_gap, 1e-3);  // the distances on the other side of the step give other rewards
}

}  // namespace greenrl::env::mujoco
