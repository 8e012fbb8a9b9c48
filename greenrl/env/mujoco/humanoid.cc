#include "greenrl/env/mujoco/humanoid.h"

namespace greenrl::env::mujoco {

const LocomotionTask& Humanoid::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "Humanoid-v4";
    t.asset = "humanoid.xml";
    t.frame_skip = 5;  // MujocoEnv.__init__(self, "humanoid.xml", 5, ...)
    t.observation = Observation::kHumanoid;
    t.obs_dim = kObsDim;
    t.excluded_qpos = 2;     // exclude_current_positions_from_observation: position[2:]
    t.x_mass_center = true;  // xy_position = mass_center(self.model, self.data)
    t.act_dim = kActDim;
    t.action_bound = 0.4;  // <motor ctrlrange="-.4 .4"> (the default class)
    t.forward_reward_weight = 1.25;
    t.ctrl_cost_weight = 0.1;  // np.sum(np.square(self.data.ctrl)): ctrl = the action
    t.reset_noise_scale = 1e-2;
    t.velocity_noise = VelocityNoise::kUniform;  // init_qvel + uniform(-scale, scale, nv)
    t.health = Health::kHeightOpen;              // min_z < qpos[2] < max_z
    t.healthy_reward = 5.0;
    t.healthy_z_min = 1.0;
    t.healthy_z_max = 2.0;
    t.max_episode_steps = 1000;  // gymnasium/envs/__init__.py registration, no reward_threshold
    return t;
  }();
  return task;
}

const LocomotionTask& HumanoidV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = Humanoid::Task();
    t.id = "Humanoid-v5";
    t.observation = Observation::kHumanoidV5;  // cinert[1:], cvel[1:], qfrc_actuator[6:], ...
    t.obs_dim = kObsDim;
    t.healthy_reward_only_when_healthy = true;  // healthy_reward = is_healthy * healthy_reward
    t.contact_cost_weight = 5e-7;               // contact_cost_weight
    t.contact_cost_max = 10.0;                  // contact_cost_range (-inf, 10.0)
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
