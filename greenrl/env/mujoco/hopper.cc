#include "greenrl/env/mujoco/hopper.h"

#include <limits>

namespace greenrl::env::mujoco {

const LocomotionTask& Hopper::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "Hopper-v4";
    t.asset = "hopper.xml";
    t.frame_skip = 4;  // MujocoEnv.__init__(self, "hopper.xml", 4, ...)
    t.obs_dim = kObsDim;
    t.act_dim = kActDim;
    t.forward_reward_weight = 1.0;
    t.ctrl_cost_weight = 1e-3;
    t.reset_noise_scale = 5e-3;
    t.velocity_noise = VelocityNoise::kUniform;  // init_qvel + uniform(-scale, scale, nv)
    t.qvel_clip = 10.0;                          // np.clip(qvel, -10, 10) in _get_obs
    t.health = Health::kPlanar;                  // terminate_when_unhealthy=True
    t.healthy_reward = 1.0;
    t.healthy_state_min = -100.0;
    t.healthy_state_max = 100.0;
    t.healthy_z_min = 0.7;
    t.healthy_z_max = std::numeric_limits<double>::infinity();
    t.healthy_angle_min = -0.2;
    t.healthy_angle_max = 0.2;
    t.max_episode_steps = 1000;  // gymnasium/envs/__init__.py registration
    t.reward_threshold = 3800.0;
    return t;
  }();
  return task;
}

const LocomotionTask& HopperV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = Hopper::Task();
    t.id = "Hopper-v5";
    t.healthy_reward_only_when_healthy = true;  // healthy_reward = is_healthy * healthy_reward
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
