// humanoid.h: Humanoid-v4 and, at the end, Humanoid-v5.
//
// Humanoid-v4 (gymnasium/envs/mujoco/humanoid_v4.py with its defaults, as registered
// by gymnasium.make("Humanoid-v4"): TimeLimit 1000 steps, no reward threshold).
//
// A 42.1 kg humanoid (a free-joint torso, 17 hinges, two hip-knee tendons; 17 motors, gears
// 25-300; assets/humanoid.xml) walks forward along x. frame_skip 5 with timestep 0.003 s (RK4,
// Newton solver): dt = 0.015 s.
// reward = 1.25 dx/dt + 5 (healthy_reward, also on the terminating step) - 0.1 sum(a^2), where x
// is the mass center's x (sum of body_mass x xipos over sum of body_mass; humanoid_v4.py's
// mass_center). No contact cost (v4's step computes none).
// Terminates when unhealthy: z = qpos[2] not strictly inside (1.0, 2.0).
// obs float32 [376] = [qpos[2:24] (22), qvel (23), cinert (14 bodies x 10), cvel (14 x 6),
// qfrc_actuator (23), cfrc_ext (14 x 6, after mj_rnePostConstraint, as Gymnasium's MujocoEnv
// computes it; 0 in the first observation of an episode)].
// Reset: qpos0 + U(-0.01, 0.01) on all 24 qpos entries (the quaternion's too; set_state's
// mj_forward normalises it), qvel U(-0.01, 0.01) on all 23.
// Action Box [-0.4, 0.4]^17 in the actuators' order: abdomen_y, abdomen_z, abdomen_x, then the
// right and left hips (x, z, y) and knees, then the right and left shoulders (1, 2) and elbows.
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct Humanoid : LocomotionEnvOf<Humanoid> {
  static constexpr int kObsDim = 376;
  static constexpr int kActDim = 17;

  // The task constants: HumanoidEnv.__init__ defaults (forward_reward_weight 1.25,
  // ctrl_cost_weight 0.1, healthy_reward 5.0, terminate_when_unhealthy True, healthy_z_range
  // (1.0, 2.0), reset_noise_scale 1e-2, exclude_current_positions_from_observation True),
  // MujocoEnv frame_skip 5; the model's ctrlrange [-0.4, 0.4].
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "Humanoid-v4"; obs Box float32 [376] unbounded; action Box
  // float32 [17] in [-0.4, 0.4]; max_episode_steps 1000; no reward threshold.
};

// Humanoid-v5 (gymnasium/envs/mujoco/humanoid_v5.py, Gymnasium 1.0): Humanoid-v4's model,
// frame_skip, weights, health rule and reset, with
//   reward = 1.25 dx/dt + 5 (healthy steps only, Gymnasium issue 526) - 0.1 |a|^2
//            - min(5e-7 sum(cfrc_ext^2), 10)   (contact_cost restored from v3, issue 504)
//   obs float32 [348] = [qpos[2:], qvel, cinert[1:], cvel[1:], qfrc_actuator[6:], cfrc_ext[1:]]
// (the world body's rows and the free joint's actuator forces, always 0, left out; issue 204).
// TimeLimit 1000, no reward threshold.
struct HumanoidV5 : LocomotionEnvOf<HumanoidV5> {
  static constexpr int kObsDim = 348;
  static constexpr int kActDim = 17;

  // Humanoid::Task() with the contact cost and observation of humanoid_v5.py and the healthy
  // reward on healthy steps only.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
