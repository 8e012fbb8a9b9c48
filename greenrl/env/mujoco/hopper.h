// hopper.h: Hopper-v4 and, at the end, Hopper-v5.
//
// Hopper-v4 (gymnasium/envs/mujoco/hopper_v4.py, as registered by
// gymnasium.make("Hopper-v4"): TimeLimit 1000 steps, reward_threshold 3800).
//
// A planar one-legged hopper (torso, thigh, leg, foot; 3 actuated hinges, assets/hopper.xml)
// hops forward. frame_skip 4 with timestep 0.002 s (RK4): dt = 0.008 s. (Issue #7 says frame_skip
// 5 for both tasks; Gymnasium's HopperEnv passes 4, and greenrl follows Gymnasium.)
// reward = dx/dt + 1 (healthy_reward, also on the terminating step) - 0.001 sum(a^2).
// Terminates when unhealthy: some entry of [qpos[2:], qvel] outside (-100, 100), z = qpos[1]
// not in (0.7, inf) or angle = qpos[2] not in (-0.2, 0.2) (strict bounds).
// obs float32 [11] = [qpos[1:6] (rootz, rooty, thigh, leg, foot), clip(qvel, -10, 10)].
// Reset: qpos0 + U(-0.005, 0.005), qvel U(-0.005, 0.005). Action Box [-1, 1]^3.
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct Hopper : LocomotionEnvOf<Hopper> {
  static constexpr int kObsDim = 11;
  static constexpr int kActDim = 3;

  // The task constants: HopperEnv.__init__ defaults (forward_reward_weight 1.0, ctrl_cost_weight
  // 1e-3, healthy_reward 1.0, terminate_when_unhealthy True, healthy_state_range (-100, 100),
  // healthy_z_range (0.7, inf), healthy_angle_range (-0.2, 0.2), reset_noise_scale 5e-3), obs
  // qvel clipped to [-10, 10] (_get_obs), MujocoEnv frame_skip 4.
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "Hopper-v4"; obs Box float32 [11] unbounded; action Box float32
  // [3] in [-1, 1]; max_episode_steps 1000; reward_threshold 3800.
};

// Hopper-v5 (gymnasium/envs/mujoco/hopper_v5.py, Gymnasium 1.0): Hopper-v4 with the healthy
// reward 1 paid on healthy steps only, so none on the terminating step (Gymnasium issue 526).
// TimeLimit 1000, reward_threshold 3800.
struct HopperV5 : LocomotionEnvOf<HopperV5> {
  static constexpr int kObsDim = 11;
  static constexpr int kActDim = 3;

  // Hopper::Task() with the healthy reward on healthy steps only.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
