// inverted_double_pendulum.h: InvertedDoublePendulum-v4 and, at the end,
// InvertedDoublePendulum-v5.
//
// InvertedDoublePendulum-v4
// (gymnasium/envs/mujoco/inverted_double_pendulum_v4.py, as registered by
// gymnasium.make("InvertedDoublePendulum-v4"): TimeLimit 1000 steps, reward_threshold 9100).
//
// A cart on a rail (slider limited to +-1 m) carries two poles of 0.6 m, one on the other, on
// unlimited hinges (assets/inverted_double_pendulum.xml); one motor pushes the cart with gear
// 500. frame_skip 5 with timestep 0.01 s (RK4): dt = 0.05 s.
// reward = 10 - (0.01 x^2 + (y - 2)^2) - (1e-3 v1^2 + 5e-3 v2^2), where (x, y) is the "tip"
// site's (x, z) in m (mjData.site_xpos as the last mj_step left it, as Gymnasium reads it) and
// v1, v2 = qvel[1], qvel[2] (rad/s); also on the terminating step.
// Terminates when y <= 1 m (upright, the tip is at 1.2 m).
// obs float32 [11] = [qpos[0] (cart x), sin(qpos[1]), sin(qpos[2]), cos(qpos[1]),
// cos(qpos[2]), clip(qvel[0:3], -10, 10), clip(qfrc_constraint[0:3], -10, 10)]. Reset: qpos0
// (0) + U(-0.1, 0.1) on the 3 positions, qvel 0.1 N(0, 1) on the 3 velocities.
// Action Box [-1, 1]^1: the motor's ctrl (a force of 500 ctrl N on the cart).
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct InvertedDoublePendulum : LocomotionEnvOf<InvertedDoublePendulum> {
  static constexpr int kObsDim = 11;
  static constexpr int kActDim = 1;

  // The task constants: InvertedDoublePendulumEnv (frame_skip 5, its reward, termination and
  // observation, reset noise U(+-0.1) on qpos and 0.1 N(0, 1) on qvel).
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "InvertedDoublePendulum-v4"; obs Box float32 [11] unbounded;
  // action Box float32 [1] in [-1, 1]; max_episode_steps 1000; reward_threshold 9100.
};

// InvertedDoublePendulum-v5 (gymnasium/envs/mujoco/inverted_double_pendulum_v5.py, Gymnasium
// 1.0): InvertedDoublePendulum-v4 with the alive bonus 10 paid only when not terminated
// (Gymnasium issue 500), and obs float32 [9] = [qpos[0], sin(qpos[1:3]), cos(qpos[1:3]),
// clip(qvel, -10, 10), clip(qfrc_constraint[0], -10, 10)] (the hinges' constraint forces, always
// 0, left out; issue 228). TimeLimit 1000, reward_threshold 9100.
struct InvertedDoublePendulumV5 : LocomotionEnvOf<InvertedDoublePendulumV5> {
  static constexpr int kObsDim = 9;
  static constexpr int kActDim = 1;

  // InvertedDoublePendulum::Task() with inverted_double_pendulum_v5.py's observation and alive
  // bonus.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
