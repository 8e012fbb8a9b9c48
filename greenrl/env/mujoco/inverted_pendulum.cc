#include "greenrl/env/mujoco/inverted_pendulum.h"

namespace greenrl::env::mujoco {

const LocomotionTask& InvertedPendulum::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "InvertedPendulum-v4";
    t.asset = "inverted_pendulum.xml";
    t.frame_skip = 2;  // MujocoEnv.__init__(self, "inverted_pendulum.xml", 2, ...)
    t.obs_dim = kObsDim;
    t.excluded_qpos = 0;  // _get_obs: concatenate([qpos, qvel])
    t.act_dim = kActDim;
    t.action_bound = 3.0;  // <motor ctrlrange="-3 3">
    // reward = 1.0: no forward term, no control cost.
    t.forward_reward_weight = 0.0;
    t.healthy_reward = 1.0;
    t.ctrl_cost_weight = 0.0;
    t.reset_noise_scale = 0.01;  // uniform(low=-0.01, high=0.01) on qpos and qvel
    t.velocity_noise = VelocityNoise::kUniform;
    t.health = Health::kPoleAngle;  // terminated = np.abs(ob[1]) > 0.2
    t.healthy_angle_max = 0.2;
    t.max_episode_steps = 1000;  // gymnasium/envs/__init__.py registration
    t.reward_threshold = 950.0;
    return t;
  }();
  return task;
}

const LocomotionTask& InvertedPendulumV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = InvertedPendulum::Task();
    t.id = "InvertedPendulum-v5";
    t.healthy_reward_only_when_healthy = true;  // reward = int(not terminated)
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
