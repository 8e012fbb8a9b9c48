// ant.h: Ant-v4 and, at the end, Ant-v5.
//
// Ant-v4 (gymnasium/envs/mujoco/ant_v4.py with its defaults, as registered by
// gymnasium.make("Ant-v4"): TimeLimit 1000 steps, reward_threshold 6000).
//
// A quadruped (a sphere torso on a free joint, four legs of two hinges each; 8 motors,
// assets/ant.xml) walks forward along x. frame_skip 5 with timestep 0.01 s (RK4): dt = 0.05 s.
// reward = dx/dt + 1 (healthy_reward, also on the terminating step) - 0.5 sum(a^2), where x is
// the torso body's position (get_body_com("torso")[0], mjData.xpos as the last mj_step left it).
// v4's default use_contact_forces=False: no contact cost and no contact forces in obs.
// Terminates when unhealthy: z = qpos[2] not in [0.2, 1.0] (closed bounds).
// obs float32 [27] = [qpos[2:15] (z, orientation quaternion w x y z, hip_1, ankle_1, hip_2,
// ankle_2, hip_3, ankle_3, hip_4, ankle_4), qvel[0:14] (torso linear velocity, angular velocity,
// then the 8 hinge speeds)]; qvel is not clipped. Reset: qpos0 + U(-0.1, 0.1) on all 15 entries
// (the quaternion's too; set_state's mj_forward then normalises it in place), qvel 0.1 N(0, 1).
// Action Box [-1, 1]^8 in the actuators' order: hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2,
// hip_3, ankle_3.
#pragma once

#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

struct Ant : LocomotionEnvOf<Ant> {
  static constexpr int kObsDim = 27;
  static constexpr int kActDim = 8;

  // The task constants: AntEnv.__init__ defaults (ctrl_cost_weight 0.5, use_contact_forces False,
  // healthy_reward 1.0, terminate_when_unhealthy True, healthy_z_range (0.2, 1.0),
  // reset_noise_scale 0.1, exclude_current_positions_from_observation True), MujocoEnv
  // frame_skip 5; forward_reward_weight 1 (ant_v4.py's forward_reward is x_velocity itself).
  static const LocomotionTask& Task();
  // Spec() (LocomotionEnvOf): id "Ant-v4"; obs Box float32 [27] unbounded; action Box float32
  // [8] in [-1, 1]; max_episode_steps 1000; reward_threshold 6000.
};

// Ant-v5 (gymnasium/envs/mujoco/ant_v5.py, Gymnasium 1.0): Ant-v4's model, frame_skip, weights,
// health rule and reset, with
//   reward = dx/dt + 1 (healthy steps only, Gymnasium issue 526) - 0.5 |a|^2
//            - 5e-4 sum(clip(cfrc_ext, -1, 1)^2)   (contact_cost, now always in the reward)
//   obs float32 [105] = [qpos[2:15], qvel (14), clip(cfrc_ext[1:], -1, 1) (13 bodies x 6)]
// (include_cfrc_ext_in_observation True; the world body's row left out, issue 204), x the
// torso's xpos as in v4 (main_body 1). TimeLimit 1000, reward_threshold 6000.
struct AntV5 : LocomotionEnvOf<AntV5> {
  static constexpr int kObsDim = 105;
  static constexpr int kActDim = 8;

  // Ant::Task() with the contact cost and contact observation of ant_v5.py and the healthy
  // reward on healthy steps only.
  static const LocomotionTask& Task();
};

}  // namespace greenrl::env::mujoco
