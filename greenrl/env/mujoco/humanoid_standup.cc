#include "greenrl/env/mujoco/humanoid_standup.h"

namespace greenrl::env::mujoco {

const LocomotionTask& HumanoidStandup::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "HumanoidStandup-v4";
    t.asset = "humanoidstandup.xml";
    t.frame_skip = 5;  // MujocoEnv.__init__(self, "humanoidstandup.xml", 5, ...)
    t.observation = Observation::kHumanoid;  // _get_obs: qpos[2:], qvel, cinert, cvel, ...
    t.reward = Reward::kStandUp;
    // quad_impact_cost = min(0.5e-6 * np.square(self.data.cfrc_ext).sum(), 10)
    t.contact_cost_weight = 0.5e-6;
    t.contact_cost_max = 10.0;
    t.obs_dim = kObsDim;
    t.excluded_qpos = 2;
    t.act_dim = kActDim;
    t.action_bound = 0.4;                        // <motor ctrlrange="-.4 .4"> (the default class)
    t.reset_noise_scale = 0.01;                  // reset_model: c = 0.01
    t.velocity_noise = VelocityNoise::kUniform;  // init_qvel + uniform(-c, c, nv)
    t.health = Health::kNone;                    // step() returns terminated=False
    t.max_episode_steps = 1000;  // gymnasium/envs/__init__.py registration, no reward_threshold
    return t;
  }();
  return task;
}

const LocomotionTask& HumanoidStandupV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = HumanoidStandup::Task();
    t.id = "HumanoidStandup-v5";
    t.observation = Observation::kHumanoidV5;  // cinert[1:], cvel[1:], qfrc_actuator[6:], ...
    t.obs_dim = kObsDim;
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
