// acrobot.h: Acrobot-v1, a re-implementation of Gymnasium 1.0.0's
// gymnasium/envs/classic_control/acrobot.py (commit 9938990977eb5e85ea4523ecf5cb2678c1708ba4)
// as registered by gymnasium.make("Acrobot-v1"), i.e. with its TimeLimit of 500 steps.
//
// Two links hang from a fixed pivot; the joint between them is actuated with a torque of -1, 0 or
// +1 N m. The goal is to swing the tip above the height of one link above the pivot. Dynamics are
// the "book" variant (Sutton and Barto) integrated with one classic RK4 step of dt = 0.2 s per
// env step, in float64 in Gymnasium's order of operations, so trajectories match the reference data
// in ../shared/testdata/classic_control/ (with glibc's libm and -ffp-contract=off).
#pragma once

#include <array>
#include <cstdint>

#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/classic/classic_env_base.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env {

// One Acrobot-v1 env with its own Rng. Thread-safety: none; one thread per instance.
class Acrobot : public ClassicEnvBase<Acrobot, 4> {
 public:
  using Action = int64_t;                          // 0: torque -1, 1: torque 0, 2: torque +1
  static constexpr int kObsDim = 6;                // [cos t1, sin t1, cos t2, sin t2, dt1, dt2]
  using Observation = std::array<float, kObsDim>;  // float32 [6]
  using State = std::array<double, 4>;  // float64 [4]: theta1 (rad, 0 = hanging down), theta2
                                        //   (rad, relative to link 1), dtheta1, dtheta2 (rad/s)
  using StepResult = env::StepResult<kObsDim>;

  // Constants of Gymnasium 1.0.0 acrobot.py (AcrobotEnv class attributes).
  static constexpr double kPi = 3.141592653589793;  // numpy.pi
  static constexpr double kDt = 0.2;                // s per env step (one RK4 step)
  static constexpr double kLinkLength1 = 1.0;       // m
  static constexpr double kLinkLength2 = 1.0;       // m
  static constexpr double kLinkMass1 = 1.0;         // kg
  static constexpr double kLinkMass2 = 1.0;         // kg
  static constexpr double kLinkComPos1 = 0.5;       // m, pivot to centre of mass of link 1
  static constexpr double kLinkComPos2 = 0.5;       // m, joint to centre of mass of link 2
  static constexpr double kLinkMoi = 1.0;           // kg m^2, moment of inertia of either link
  static constexpr double kGravity = 9.8;           // m/s^2
  static constexpr double kMaxVel1 = 4 * kPi;       // rad/s, |dtheta1| is clipped to this
  static constexpr double kMaxVel2 = 9 * kPi;       // rad/s, |dtheta2| is clipped to this
  static constexpr double kAvailTorque[3] = {-1.0, 0.0, 1.0};  // N m, indexed by the action
  static constexpr double kResetLow = -0.1;  // reset: each state component ~ U(-0.1, 0.1)
  static constexpr double kResetHigh = 0.1;
  static constexpr int kMaxEpisodeSteps = 500;        // TimeLimit of the registered Acrobot-v1
  static constexpr double kRewardThreshold = -100.0;  // reward_threshold of Acrobot-v1

  // The static spec: id "Acrobot-v1"; observation Box float32 [6] with
  // high = [1, 1, 1, 1, 4 pi, 9 pi] and low = -high; action Discrete(3); max_episode_steps 500;
  // reward_threshold -100.
  static const EnvSpec& Spec();

  explicit Acrobot(uint64_t seed = 0) : ClassicEnvBase(seed) {}

  using ClassicEnvBase::Reset;  // Reset(seed): reseed the Rng, then Reset()
  // Draws each state component from U(-0.1, 0.1) (order theta1, theta2, dtheta1, dtheta2) and
  // rounds it to float32, as Gymnasium does (`.astype(np.float32)`); clears the TimeLimit count.
  // Returns: float32 [6], the initial observation.
  Observation Reset();

  // One RK4 step of dt = 0.2 s with the action's torque held fixed; then theta1 and theta2 are
  // wrapped into [-pi, pi] (by whole turns while outside; exactly +-pi stays), and only then
  // dtheta1 / dtheta2 are clipped to +-4 pi / +-9 pi.
  // Returns: the observation of the new state; terminated when -cos(t1) - cos(t1 + t2) > 1
  //   (strict); reward -1.0, or 0.0 on a terminating step; truncated when the steps since Reset()
  //   reach 500. Steps after termination keep integrating (no latch; as Gymnasium).
  // Errors: std::invalid_argument naming the action when it is not 0, 1 or 2 (nothing changes);
  //   greenrl::InternalError (GREENRL_CHECK) when called before any Reset().
  StepResult Step(Action action);
};

}  // namespace greenrl::env
