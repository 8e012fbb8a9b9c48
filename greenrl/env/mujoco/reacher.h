// reacher.h: Reacher-v4 and, at the end, Reacher-v5.
//
// Reacher-v4 (gymnasium/envs/mujoco/reacher_v4.py, as registered by
// gymnasium.make("Reacher-v4"): TimeLimit 50 steps, reward_threshold -3.75).
//
// A two-link arm in the plane (links of 0.1 m on hinges about z, the second limited to +-3 rad;
// 2 motors, gear 200) reaches for a target that sits still on two slides (assets/reacher.xml).
// frame_skip 2 with timestep 0.01 s (RK4): dt = 0.02 s.
// reward = -|fingertip - target| - sum(a^2), the distance (m, between the bodies' mjData.xpos)
// taken before the step, as reacher_v4.py computes it before simulating.
// Never terminates; the TimeLimit truncates after 50 steps.
// obs float32 [11] = [cos(qpos[0]), cos(qpos[1]), sin(qpos[0]), sin(qpos[1]), qpos[2], qpos[3]
// (the target's x, y in m), qvel[0], qvel[1] (rad/s), fingertip - target (x, y, z in m)].
// Reset: qpos0 + U(-0.1, 0.1) on the arm's angles; the target uniform in the disk of radius 0.2 m
// (rejection from U(-0.2, 0.2)^2); qvel U(-0.005, 0.005) on the arm, 0 on the target.
// Action Box [-1, 1]^2: the two motors' ctrl.
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct Reacher : LocomotionEnvOf<Reacher> {
  static constexpr int kObsDim = 11;
  static constexpr int kActDim = 2;

  // The task constants: ReacherEnv (frame_skip 2, its reward, observation and reset).
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "Reacher-v4"; obs Box float32 [11] unbounded; action Box
  // float32 [2] in [-1, 1]; max_episode_steps 50; reward_threshold -3.75.
};

// Reacher-v5 (gymnasium/envs/mujoco/reacher_v5.py, Gymnasium 1.0): Reacher-v4's model, reset and
// weights (reward_dist_weight 1, reward_control_weight 1 in the code; its docstring's table says
// 0.1, but the default argument is 1, as in v4), with the distance taken AFTER the step
// (Gymnasium issue 821) and obs float32 [10], v4's without the z of fingertip - target (always
// 0; issue 204). TimeLimit 50, reward_threshold -3.75.
struct ReacherV5 : LocomotionEnvOf<ReacherV5> {
  static constexpr int kObsDim = 10;
  static constexpr int kActDim = 2;

  // Reacher::Task() with the distance after the step and reacher_v5.py's observation.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
