#include "greenrl/env/mujoco/ant.h"

namespace greenrl::env::mujoco {

const LocomotionTask& Ant::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "Ant-v4";
    t.asset = "ant.xml";
    t.frame_skip = 5;  // MujocoEnv.__init__(self, xml_file, 5, ...)
    t.obs_dim = kObsDim;
    t.excluded_qpos = 2;  // exclude_current_positions_from_observation: position[2:]
    t.x_body = "torso";   // xy_position = self.get_body_com("torso")[:2]
    t.act_dim = kActDim;
    t.forward_reward_weight = 1.0;
    t.ctrl_cost_weight = 0.5;
    t.reset_noise_scale = 0.1;
    t.velocity_noise = VelocityNoise::kNormal;  // init_qvel + scale * standard_normal(nv)
    t.health = Health::kHeight;                 // terminate_when_unhealthy=True
    t.healthy_reward = 1.0;
    t.healthy_z_min = 0.2;
    t.healthy_z_max = 1.0;
    t.max_episode_steps = 1000;  // gymnasium/envs/__init__.py registration
    t.reward_threshold = 6000.0;
    return t;
  }();
  return task;
}

const LocomotionTask& AntV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = Ant::Task();
    t.id = "Ant-v5";
    t.observation = Observation::kPositionsVelocitiesContacts;  // _get_obs: + contact_forces[1:]
    t.obs_dim = kObsDim;
    t.healthy_reward_only_when_healthy = true;  // healthy_reward = is_healthy * healthy_reward
    t.contact_cost_weight = 5e-4;               // contact_cost_weight
    t.contact_force_clip = 1.0;                 // contact_force_range (-1.0, 1.0)
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
