#include "greenrl/env/mujoco/walker2d.h"

#include <limits>
#include <optional>

#include "greenrl/env/mujoco/hopper.h"

namespace greenrl::env::mujoco {

const LocomotionTask& Walker2d::Task() {
  // Walker2dEnv "builds on the hopper environment" (its docstring): Hopper-v4's frame_skip 4,
  // reward weights (1.0, ctrl 1e-3, healthy_reward 1.0), uniform reset noise 5e-3 and qvel clip
  // 10, with its own model, sizes, health ranges and registration.
  static const LocomotionTask task = [] {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    LocomotionTask t = Hopper::Task();
    t.id = "Walker2d-v4";
    t.asset = "walker2d.xml";  // MujocoEnv.__init__(self, "walker2d.xml", 4, ...)
    t.obs_dim = kObsDim;
    t.act_dim = kActDim;
    // Walker2dEnv.is_healthy reads z and angle only: no bound on the rest of the state.
    t.healthy_state_min = -kInf;
    t.healthy_state_max = kInf;
    t.healthy_z_min = 0.8;
    t.healthy_z_max = 2.0;
    t.healthy_angle_min = -1.0;
    t.healthy_angle_max = 1.0;
    t.reward_threshold = std::nullopt;  // gymnasium/envs/__init__.py registers none
    return t;
  }();
  return task;
}

const LocomotionTask& Walker2dV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = Walker2d::Task();
    t.id = "Walker2d-v5";
    t.asset = "walker2d_v5.xml";  // Walker2dEnv.__init__(xml_file="walker2d_v5.xml", ...)
    t.healthy_reward_only_when_healthy = true;  // healthy_reward = is_healthy * healthy_reward
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
