#include "greenrl/env/mujoco/pusher.h"

namespace greenrl::env::mujoco {

const LocomotionTask& Pusher::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t;
    t.id = "Pusher-v4";
    t.asset = "pusher.xml";
    t.frame_skip = 5;  // MujocoEnv.__init__(self, "pusher.xml", 5, ...)
    t.observation = Observation::kPusher;
    t.reward = Reward::kPushDistance;
    t.start_state = StartState::kPusherGoal;
    t.obs_dim = kObsDim;
    t.fingertip_body = "tips_arm";  // get_body_com("tips_arm"), ("object"), ("goal")
    t.object_body = "object";
    t.target_body = "goal";
    t.act_dim = kActDim;
    t.action_bound = 2.0;       // <motor ctrlrange="-2.0 2.0"> on every joint
    t.health = Health::kNone;   // step() returns terminated=False
    t.max_episode_steps = 100;  // gymnasium/envs/__init__.py registration
    t.reward_threshold = 0.0;
    return t;
  }();
  return task;
}

const LocomotionTask& PusherV5::Task() {
  static const LocomotionTask task = [] {
    LocomotionTask t = Pusher::Task();
    t.id = "Pusher-v5";
    t.asset = "pusher_v5.xml";     // PusherEnv.__init__(xml_file="pusher_v5.xml", ...)
    t.distance_after_step = true;  // step(): do_simulation, then _get_rew
    return t;
  }();
  return task;
}

}  // namespace greenrl::env::mujoco
