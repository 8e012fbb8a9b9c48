// pusher.h: Pusher-v4 and, at the end, Pusher-v5.
//
// Pusher-v4 (gymnasium/envs/mujoco/pusher_v4.py, as registered by
// gymnasium.make("Pusher-v4"): TimeLimit 100 steps, reward_threshold 0.0).
//
// A seven-joint arm (shoulder pan, shoulder lift, upper-arm roll, elbow flex, forearm roll, wrist
// flex, wrist roll; 7 motors of gear 1) pushes a cylinder (about 1.3e-8 kg, on two damped slides)
// across a table towards a goal, without gravity (assets/pusher.xml). frame_skip 5 with
// timestep 0.01 s (Euler): dt = 0.05 s.
// reward = -|object - goal| - 0.1 sum(a^2) - 0.5 |object - tips_arm|, the distances (m, between
// the bodies' mjData.xpos, Gymnasium's get_body_com) taken before the step, as pusher_v4.py
// computes them before simulating.
// Never terminates; the TimeLimit truncates after 100 steps.
// obs float32 [23] = [qpos[0:7] (the arm's angles, rad), qvel[0:7] (rad/s), xpos of tips_arm,
// of the object and of the goal (x, y, z each, m)].
// Reset: the arm at qpos0 = 0 with qvel U(-0.005, 0.005); the object displaced from its start
// (0.45, -0.05) by c = (U(-0.3, 0) on its y slide, U(-0.2, 0.2) on its x slide), drawn until
// |c| > 0.17 m; the goal at its start (0.45, -0.05); object and goal at rest.
// Action Box [-2, 2]^7: the motors' ctrl (N m), in the joints' order.
// Gymnasium refuses Pusher-v4 on MuJoCo >= 3.0, where its arm passes through the object
// (Gymnasium issue 950); greenrl links Debian's MuJoCo 2.2.2, where the arm pushes it.
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct Pusher : LocomotionEnvOf<Pusher> {
  static constexpr int kObsDim = 23;
  static constexpr int kActDim = 7;

  // The task constants: PusherEnv (frame_skip 5, its reward, observation and reset).
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "Pusher-v4"; obs Box float32 [23] unbounded; action Box
  // float32 [7] in [-2, 2]; max_episode_steps 100; reward_threshold 0.0.
};

// Pusher-v5 (gymnasium/envs/mujoco/pusher_v5.py, Gymnasium 1.0): Pusher-v4's reward weights,
// observation and reset on assets/pusher_v5.xml, whose object is a cylinder of density 0.01
// (7.85e-6 kg; v4: 1e-5 plus an invisible sphere; Gymnasium issue 950), with the distances taken
// AFTER the step (issue 821). TimeLimit 100, reward_threshold 0.
struct PusherV5 : LocomotionEnvOf<PusherV5> {
  static constexpr int kObsDim = 23;
  static constexpr int kActDim = 7;

  // Pusher::Task() on pusher_v5.xml with the distances after the step.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
