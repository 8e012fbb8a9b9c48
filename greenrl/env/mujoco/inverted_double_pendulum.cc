#include "greenrl/env/mujoco/inverted_double_pendulum.h"

namespace greenrl::env::mujoco {

const LocomotionTask& InvertedDoublePendulum::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "InvertedDoublePendulum-v4";
    t.asset = "inverted_double_pendulum.xml";
    t.frame_skip = 5;  // MujocoEnv.__init__(self, "inverted_double_pendulum.xml", 5, ...)
    t.observation = Observation::kDoublePendulum;
    t.reward = Reward::kTipDistance;
    t.obs_dim = kObsDim;
    t.qvel_clip = 10.0;  // np.clip(qvel, -10, 10), np.clip(qfrc_constraint, -10, 10)
    t.tip_site = "tip";  // x, _, y = self.data.site_xpos[0]
    t.act_dim = kActDim;
    t.healthy_reward = 10.0;    // alive_bonus = 10
    t.reset_noise_scale = 0.1;  // uniform(-0.1, 0.1) on qpos, standard_normal * 0.1 on qvel
    t.velocity_noise = VelocityNoise::kNormal;
    t.health = Health::kTipHeight;  // terminated = bool(y <= 1)
    t.healthy_z_min = 1.0;
    t.max_episode_steps = 1000;  // gymnasium/envs/__init__.py registration
    t.reward_threshold = 9100.0;
    return t;
  }();
  return task;
}

const LocomotionTask& InvertedDoublePendulumV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = InvertedDoublePendulum::Task();
    t.id = "InvertedDoublePendulum-v5";
    t.observation = Observation::kDoublePendulumV5;  // np.clip(qfrc_constraint, -10, 10)[:1]
    t.obs_dim = kObsDim;
    t.healthy_reward_only_when_healthy = true;  // alive_bonus = healthy_reward * (not terminated)
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
