// swimmer.h: Swimmer-v4 and, at the end, Swimmer-v5.
//
// Swimmer-v4 (gymnasium/envs/mujoco/swimmer_v4.py with its defaults, as registered by
// gymnasium.make("Swimmer-v4"): TimeLimit 1000 steps, reward_threshold 360).
//
// Three links in a viscous fluid (assets/swimmer.xml: the front link on slides x, y and a hinge
// about z, two rotors between the links; 2 motors) swim forward along x. frame_skip 4 with
// timestep 0.01 s (RK4): dt = 0.04 s.
// reward = dx/dt - 1e-4 sum(a^2), where x = qpos[0] (the front link's slide); no healthy reward.
// Never terminates; the TimeLimit truncates after 1000 steps.
// obs float32 [8] = [qpos[2:5] (front link's angle, rotor 1, rotor 2; rad), qvel[0:5] (x and y
// velocity in m/s, then the three angular velocities in rad/s)]; qvel is not clipped.
// Reset: qpos0 (all 0) + U(-0.1, 0.1) on all 5 entries, qvel U(-0.1, 0.1) on all 5.
// Action Box [-1, 1]^2: torques on motor1_rot and motor2_rot (gear 150).
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct Swimmer : LocomotionEnvOf<Swimmer> {
  static constexpr int kObsDim = 8;
  static constexpr int kActDim = 2;

  // The task constants: SwimmerEnv.__init__ defaults (forward_reward_weight 1.0,
  // ctrl_cost_weight 1e-4, reset_noise_scale 0.1, exclude_current_positions_from_observation
  // True), MujocoEnv frame_skip 4; no health rule.
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "Swimmer-v4"; obs Box float32 [8] unbounded; action Box float32
  // [2] in [-1, 1]; max_episode_steps 1000; reward_threshold 360.
};

// Swimmer-v5 (gymnasium/envs/mujoco/swimmer_v5.py, Gymnasium 1.0): steps, rewards, observes and
// resets exactly as Swimmer-v4 (same model, frame_skip, weights and noise); registered with the
// same TimeLimit 1000 and reward_threshold 360.
struct SwimmerV5 : LocomotionEnvOf<SwimmerV5> {
  static constexpr int kObsDim = 8;
  static constexpr int kActDim = 2;

  // Swimmer::Task() under the id "Swimmer-v5".
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
