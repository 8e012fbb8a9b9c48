#include "greenrl/env/mujoco/half_cheetah.h"

namespace greenrl::env::mujoco {

const LocomotionTask& HalfCheetah::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "HalfCheetah-v4";
    t.asset = "half_cheetah.xml";
    t.frame_skip = 5;  // MujocoEnv.__init__(self, "half_cheetah.xml", 5, ...)
    t.obs_dim = kObsDim;
    t.act_dim = kActDim;
    t.forward_reward_weight = 1.0;
    t.ctrl_cost_weight = 0.1;
    t.reset_noise_scale = 0.1;
    t.velocity_noise = VelocityNoise::kNormal;  // init_qvel + scale * standard_normal(nv)
    t.health = Health::kNone;                   // terminated is always False
    t.max_episode_steps = 1000;                // gymnasium/envs/__init__.py registration
    t.reward_threshold = 4800.0;
    return t;
  }();
  return task;
}

const LocomotionTask& HalfCheetahV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = HalfCheetah::Task();
    t.id = "HalfCheetah-v5";
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
