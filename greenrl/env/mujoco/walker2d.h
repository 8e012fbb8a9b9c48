// walker2d.h: Walker2d-v4 and, at the end, Walker2d-v5.
//
// Walker2d-v4 (gymnasium/envs/mujoco/walker2d_v4.py, as registered by
// gymnasium.make("Walker2d-v4"): TimeLimit 1000 steps, no reward_threshold).
//
// A planar biped (torso; right and left thigh, leg and foot; 6 actuated hinges,
// assets/walker2d.xml) walks forward. frame_skip 4 with timestep 0.002 s (RK4): dt = 0.008 s.
// reward = dx/dt + 1 (healthy_reward, also on the terminating step) - 0.001 sum(a^2).
// Terminates when unhealthy: z = qpos[1] not in (0.8, 2.0) or angle = qpos[2] not in (-1, 1)
// (strict bounds; unlike Hopper, no bound on the rest of the state).
// obs float32 [17] = [qpos[1:9] (rootz, rooty, thigh, leg, foot, thigh_left, leg_left,
// foot_left), clip(qvel, -10, 10)]. Reset: qpos0 + U(-0.005, 0.005), qvel U(-0.005, 0.005).
// Action Box [-1, 1]^6 (right thigh, leg, foot, then the left ones).
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct Walker2d : LocomotionEnvOf<Walker2d> {
  static constexpr int kObsDim = 17;
  static constexpr int kActDim = 6;

  // The task constants: Walker2dEnv.__init__ defaults (forward_reward_weight 1.0,
  // ctrl_cost_weight 1e-3, healthy_reward 1.0, terminate_when_unhealthy True, healthy_z_range
  // (0.8, 2.0), healthy_angle_range (-1.0, 1.0), reset_noise_scale 5e-3), obs qvel clipped to
  // [-10, 10] (_get_obs), MujocoEnv frame_skip 4.
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "Walker2d-v4"; obs Box float32 [17] unbounded; action Box float32
  // [6] in [-1, 1]; max_episode_steps 1000; no reward_threshold.
};

// Walker2d-v5 (gymnasium/envs/mujoco/walker2d_v5.py, Gymnasium 1.0): Walker2d-v4 on
// assets/walker2d_v5.xml, whose right foot has the left foot's friction 1.9 (v4: 0.9; Gymnasium
// issue 477), and with the healthy reward 1 paid on healthy steps only, so none on the
// terminating step (issue 526). TimeLimit 1000, no reward_threshold.
struct Walker2dV5 : LocomotionEnvOf<Walker2dV5> {
  static constexpr int kObsDim = 17;
  static constexpr int kActDim = 6;

  // Walker2d::Task() on walker2d_v5.xml, the healthy reward on healthy steps only.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
