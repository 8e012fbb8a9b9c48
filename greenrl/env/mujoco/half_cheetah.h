// half_cheetah.h: HalfCheetah-v4 and, at the end, HalfCheetah-v5.
//
// HalfCheetah-v4 (gymnasium/envs/mujoco/half_cheetah_v4.py, as registered by
// gymnasium.make("HalfCheetah-v4"): TimeLimit 1000 steps, reward_threshold 4800).
//
// A planar cheetah (7 bodies beside the world body, nbody 8, which Gymnasium's docstring counts
// as "9 body parts"; 6 actuated hinges; assets/half_cheetah.xml) runs forward. frame_skip 5 with
// timestep 0.01 s: dt = 0.05 s. reward = dx/dt - 0.1 sum(a^2); never terminates. obs float32 [17] =
// [qpos[1:9] (rootz, rooty, bthigh, bshin, bfoot, fthigh, fshin, ffoot), qvel[0:9]]. Reset: qpos0 +
// U(-0.1, 0.1), qvel 0.1 N(0, 1). Action Box [-1, 1]^6.
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct HalfCheetah : LocomotionEnvOf<HalfCheetah> {
  static constexpr int kObsDim = 17;
  static constexpr int kActDim = 6;

  // The task constants: HalfCheetahEnv.__init__ defaults (forward_reward_weight 1.0,
  // ctrl_cost_weight 0.1, reset_noise_scale 0.1, exclude_current_positions_from_observation True),
  // MujocoEnv frame_skip 5.
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "HalfCheetah-v4"; obs Box float32 [17] unbounded; action Box
  // float32 [6] in [-1, 1] (the actuators' ctrlrange); max_episode_steps 1000; reward_threshold
  // 4800.
};

// HalfCheetah-v5 (gymnasium/envs/mujoco/half_cheetah_v5.py, Gymnasium 1.0): steps, rewards,
// observes and resets exactly as HalfCheetah-v4 (the v5 file changes info keys and constructor
// arguments only); registered with the same TimeLimit 1000 and reward_threshold 4800.
struct HalfCheetahV5 : LocomotionEnvOf<HalfCheetahV5> {
  static constexpr int kObsDim = 17;
  static constexpr int kActDim = 6;

  // HalfCheetah::Task() under the id "HalfCheetah-v5".
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
