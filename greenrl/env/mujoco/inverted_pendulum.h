// inverted_pendulum.h: InvertedPendulum-v4 and, at the end, InvertedPendulum-v5.
//
// InvertedPendulum-v4 (gymnasium/envs/mujoco/inverted_pendulum_v4.py, as
// registered by gymnasium.make("InvertedPendulum-v4"): TimeLimit 1000 steps, reward_threshold
// 950).
//
// A cart on a rail (slider limited to +-1 m) carries a pole on a hinge (assets/
// inverted_pendulum.xml); one motor pushes the cart with gear 100. frame_skip 2 with timestep
// 0.02 s (RK4): dt = 0.04 s.
// reward = 1 on every step, the terminating one included.
// Terminates when |qpos[1]| (the pole's angle from upright) > 0.2 rad.
// obs float32 [4] = [qpos[0] (cart x, m), qpos[1] (pole angle, rad), qvel[0] (m/s), qvel[1]
// (rad/s)]; nothing excluded or clipped. Reset: qpos0 (0) + U(-0.01, 0.01) on both positions,
// qvel U(-0.01, 0.01) on both velocities.
// Action Box [-3, 3]^1: the motor's ctrl (a force of 100 ctrl N on the cart).
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct InvertedPendulum : LocomotionEnvOf<InvertedPendulum> {
  static constexpr int kObsDim = 4;
  static constexpr int kActDim = 1;

  // The task constants: InvertedPendulumEnv (frame_skip 2, reward 1.0, the 0.2 rad angle bound,
  // reset noise U(+-0.01)); the model's ctrlrange [-3, 3].
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "InvertedPendulum-v4"; obs Box float32 [4] unbounded; action
  // Box float32 [1] in [-3, 3]; max_episode_steps 1000; reward_threshold 950.
};

// InvertedPendulum-v5 (gymnasium/envs/mujoco/inverted_pendulum_v5.py, Gymnasium 1.0):
// InvertedPendulum-v4 with reward = int(not terminated): 1 on every step but the terminating
// one, which earns 0 (Gymnasium issue 500). TimeLimit 1000, reward_threshold 950.
struct InvertedPendulumV5 : LocomotionEnvOf<InvertedPendulumV5> {
  static constexpr int kObsDim = 4;
  static constexpr int kActDim = 1;

  // InvertedPendulum::Task() with its reward of 1 on healthy steps only.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
