#include "greenrl/env/mujoco/reacher.h"

namespace greenrl::env::mujoco {

const LocomotionTask& Reacher::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "Reacher-v4";
    t.asset = "reacher.xml";
    t.frame_skip = 2;  // MujocoEnv.__init__(self, "reacher.xml", 2, ...)
    t.observation = Observation::kReacher;
    t.reward = Reward::kFingertipDistance;
    t.start_state = StartState::kReacherGoal;
    t.obs_dim = kObsDim;
    t.fingertip_body = "fingertip";  // get_body_com("fingertip") - get_body_com("target")
    t.target_body = "target";
    t.act_dim = kActDim;
    t.health = Health::kNone;  // step() returns terminated=False
    t.max_episode_steps = 50;  // gymnasium/envs/__init__.py registration
    t.reward_threshold = -3.75;
    return t;
  }();
  return task;
}

const LocomotionTask& ReacherV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = Reacher::Task();
    t.id = "Reacher-v5";
    t.observation = Observation::kReacherV5;  // (fingertip - target)[:2]
    t.obs_dim = kObsDim;
    t.distance_after_step = true;  // step(): do_simulation, then _get_rew
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
