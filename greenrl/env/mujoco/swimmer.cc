#include "greenrl/env/mujoco/swimmer.h"

namespace greenrl::env::mujoco {

const LocomotionTask& Swimmer::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "Swimmer-v4";
    t.asset = "swimmer.xml";
    t.frame_skip = 4;  // MujocoEnv.__init__(self, "swimmer.xml", 4, ...)
    t.obs_dim = kObsDim;
    t.excluded_qpos = 2;  // exclude_current_positions_from_observation: position[2:]
    t.act_dim = kActDim;  // x is qpos[0]: xy_position = self.data.qpos[0:2]
    t.forward_reward_weight = 1.0;
    t.ctrl_cost_weight = 1e-4;
    t.reset_noise_scale = 0.1;
    t.velocity_noise = VelocityNoise::kUniform;  // init_qvel + uniform(-scale, scale, nv)
    t.health = Health::kNone;                    // step() returns terminated=False
    t.healthy_reward = 0.0;
    t.max_episode_steps = 1000;  // gymnasium/envs/__init__.py registration
    t.reward_threshold = 360.0;
    return t;
  }();
  return task;
}

const LocomotionTask& SwimmerV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = Swimmer::Task();
    t.id = "Swimmer-v5";
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
