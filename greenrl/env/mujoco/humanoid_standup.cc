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

}  // namespace greenrl::env::mujoco
