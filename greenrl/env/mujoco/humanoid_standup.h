// humanoid_standup.h: HumanoidStandup-v4 and, at the end, HumanoidStandup-v5.
//
// HumanoidStandup-v4 (gymnasium/envs/mujoco/humanoidstandup_v4.py, as
// registered by gymnasium.make("HumanoidStandup-v4"): TimeLimit 1000 steps, no reward
// threshold).
//
// Humanoid-v4's humanoid (17 hinges, two hip-knee tendons, 17 motors, gears 25-300) starts lying
// on the floor (assets/humanoidstandup.xml) and is rewarded for raising its torso.
// frame_skip 5 with timestep 0.003 s (RK4, Newton solver): dt = 0.015 s.
// reward = qpos[2] / 0.003 - 0.1 sum(a^2) - min(0.5e-6 sum(cfrc_ext^2), 10) + 1, after the step:
// the torso's height (m) over MuJoCo's timestep (not dt), 35 per step lying at the start;
// cfrc_ext, the bodies' external (contact) forces, as mj_rnePostConstraint leaves it after the
// step (Gymnasium's MujocoEnv makes that call), so the impact cost is small but not 0.
// Never terminates; the TimeLimit truncates after 1000 steps.
// obs float32 [376] = [qpos[2:24] (22), qvel (23), cinert (14 bodies x 10), cvel (14 x 6),
// qfrc_actuator (23), cfrc_ext (14 x 6)], as Humanoid-v4's.
// Reset: qpos0 + U(-0.01, 0.01) on all 24 qpos entries (the quaternion's too; set_state's
// mj_forward normalises it), qvel U(-0.01, 0.01) on all 23.
// Action Box [-0.4, 0.4]^17 in Humanoid-v4's actuator order.
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct HumanoidStandup : LocomotionEnvOf<HumanoidStandup> {
  static constexpr int kObsDim = 376;
  static constexpr int kActDim = 17;

  // The task constants: HumanoidStandupEnv (frame_skip 5, its reward and reset noise 0.01),
  // Humanoid-v4's observation; the model's ctrlrange [-0.4, 0.4].
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "HumanoidStandup-v4"; obs Box float32 [376] unbounded; action
  // Box float32 [17] in [-0.4, 0.4]; max_episode_steps 1000; no reward threshold.
};

// HumanoidStandup-v5 (gymnasium/envs/mujoco/humanoidstandup_v5.py, Gymnasium 1.0):
// HumanoidStandup-v4's model, frame_skip, reward (its weights now arguments with v4's values),
// reset and (no) termination, with Humanoid-v5's observation float32 [348] (the world body's
// rows and the free joint's actuator forces left out; Gymnasium issue 204). TimeLimit 1000, no
// reward threshold.
struct HumanoidStandupV5 : LocomotionEnvOf<HumanoidStandupV5> {
  static constexpr int kObsDim = 348;
  static constexpr int kActDim = 17;

  // HumanoidStandup::Task() with humanoidstandup_v5.py's observation.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
