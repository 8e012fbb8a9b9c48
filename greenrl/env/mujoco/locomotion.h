// locomotion.h: Gymnasium's MuJoCo locomotion envs (HalfCheetah, Hopper, Walker2d, Ant, Swimmer,
// Humanoid, HumanoidStandup), its two inverted pendulums (InvertedPendulum,
// InvertedDoublePendulum) and its two arms (Reacher, Pusher), each in its v4 and its v5 version,
// as one batched env driven by a table of task constants.
//
// v4 (gymnasium/envs/mujoco/*_v4.py) is what rl-baselines3-zoo's presets name; v5
// (gymnasium/envs/mujoco/*_v5.py, Gymnasium 1.0) is what Gymnasium 1.x recommends. The v5 files
// change, per task (their "Version History" sections): the healthy reward paid on healthy steps
// only (healthy_reward_only_when_healthy below; Gymnasium issues 526 and 500), contact costs for
// Ant and Humanoid (contact_cost_weight), observations without entries that are always 0 (the
// world body's rows, InvertedDoublePendulum's hinge constraint forces, Reacher's z distance),
// Reacher's and Pusher's distance terms taken after the step (distance_after_step; issue 821),
// Walker2d's right foot given the left foot's friction (walker2d_v5.xml; issue 477) and Pusher's
// object made denser than air (pusher_v5.xml; issue 950). HalfCheetah-v5 and Swimmer-v5 step
// exactly as their v4. The v5 files' other changes (info keys, constructor arguments) change no
// observation, reward or termination. They also require MuJoCo >= 2.3.3; greenrl runs both
// versions on Debian's 2.2.2, so contact-rich trajectories may differ numerically from a newer
// MuJoCo's (README, "The v5 versions").
//
// The locomotion tasks share Gymnasium's MujocoEnv step
// (gymnasium/envs/mujoco/{half_cheetah,hopper,walker2d,ant,swimmer,humanoid}_v4.py, Gymnasium
// 0.29 / 1.0, which keep the v4 classes unchanged; the _v5.py files step the same way):
//   x_before = x; ctrl = action; mj_step x frame_skip; x_after = x
//   reward = forward_reward_weight * (x_after - x_before) / dt + healthy_reward
//            - ctrl_cost_weight * sum(action^2),          dt = frame_skip * timestep
//   obs = [qpos[excluded_qpos:], clip(qvel, -qvel_clip, qvel_clip)]
// where x is qpos[0] for the planar tasks and Swimmer (the root x slide), for Ant-v4 the
// torso's mjData.xpos x (Gymnasium's get_body_com("torso")[0]), for Humanoid-v4 the x of the
// bodies' mass-weighted mean xipos (Gymnasium's mass_center), and the first excluded_qpos
// entries of qpos (the root x; Ant, Swimmer and Humanoid: x and y) are left out of obs (Humanoid
// appends more, Observation below). The TimeLimit is gymnasium.make's (1000 steps; Reacher's 50,
// Pusher's 100; truncated). Actions are not clipped by the env (as in Gymnasium):
// MuJoCo clamps ctrl to the actuators' ctrlrange, and the control cost uses the action as given.
// The inverted pendulums (inverted_pendulum_v4.py, inverted_double_pendulum_v4.py), the arms
// (reacher_v4.py, pusher_v4.py) and HumanoidStandup (humanoidstandup_v4.py) step the same way and
// differ in their observation, reward, termination and start state (Observation, Reward, Health
// and StartState below).
// After the frame_skip mj_step calls, Gymnasium's MujocoEnv._step_mujoco_simulation calls
// mj_rnePostConstraint (MuJoCo >= 2.0 computes cacc, cfrc_int and cfrc_ext only for models with
// force or acceleration sensors; gym issue 1541). Of those only cfrc_ext is read, by the humanoids
// and Ant-v5 (kHumanoid, kHumanoidV5, kPositionsVelocitiesContacts, and the contact costs), so
// only their steps make that call; the other tasks' observations and rewards are the same with or
// without it. A reset (mj_resetData, then
// mj_forward) does not make it, as in Gymnasium, so the first observation's cfrc_ext is 0.
//
// Layout (EnvPool style, ../shared/STYLE.md points 1-3): the mjModel is loaded once per batched
// env and shared read-only; every row owns an mjData, its own Rng seeded from (seed, row), its
// TimeLimit count and episode statistics. Rows are independent, so threads step disjoint row
// ranges and the results never depend on the number of threads.
//
// Numerical faults (../shared/STYLE.md, "Errors"): when a step leaves a non-finite qpos/qvel or
// MuJoCo flags an unstable state (its mjWARN_BADQPOS/BADQVEL/BADQACC warnings, after which MuJoCo
// itself resets the data) or dropped contacts (mjWARN_CONTACTFULL/CNSTRFULL), or MuJoCo raises an
// error inside mj_step (e.g. "Stack overflow"; thrown as MujocoError, reported on stderr as
// "greenrl: MuJoCo error: ..."), the row's episode is ended as truncated with reward 0, final_obs
// is the last finite observation (the one before the faulty step), the row is reset from its own
// Rng, the fault is counted (non_finite_resets()), and the run goes on.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/mujoco/mujoco_model.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env::mujoco {

// How the reset noise is added to qvel (Gymnasium's reset_model).
enum class VelocityNoise {
  // qvel = qvel0 + reset_noise_scale * N(0, 1): HalfCheetah, Ant, InvertedDoublePendulum.
  kNormal,
  // qvel = qvel0 + U(-reset_noise_scale, reset_noise_scale): Hopper, Walker2d, Swimmer,
  // Humanoid, InvertedPendulum.
  kUniform,
};

// When a step ends the episode as unhealthy (terminated); Gymnasium's is_healthy of each task.
enum class Health {
  kNone,        // never (HalfCheetah, Swimmer, Reacher, Pusher, HumanoidStandup: v4 and v5)
  kPlanar,      // Hopper, Walker2d: see LocomotionTask::healthy_state_min
  kHeight,      // Ant: z = qpos[2] (the free joint's height) in the closed healthy_z range
  kHeightOpen,  // Humanoid: z = qpos[2] strictly inside (healthy_z_min, healthy_z_max)
  kPoleAngle,   // InvertedPendulum: |qpos[1]| (the pole's angle, rad) <= healthy_angle_max
  kTipHeight,   // InvertedDoublePendulum: the tip site's z (m) > healthy_z_min
};

// What the observation holds (Gymnasium's _get_obs), float32 [obs_dim].
enum class Observation {
  // [qpos[excluded_qpos:], clip(qvel, -qvel_clip, qvel_clip)]: every locomotion task but Ant-v5
  // and the humanoids, and InvertedPendulum with nothing excluded or clipped ([x, angle, x',
  // angle']).
  kPositionsVelocities,
  // InvertedDoublePendulum-v4: [qpos[0], sin(qpos[1:]), cos(qpos[1:]), clip(qvel, +-qvel_clip),
  // clip(qfrc_constraint, +-qvel_clip)]: 1 + 2 + 2 + 3 + 3 = 11 values (qvel_clip 10).
  kDoublePendulum,
  // Reacher-v4: [cos(qpos[0:2]), sin(qpos[0:2]), qpos[2:] (the target's x, y), qvel[0:2],
  // xpos(fingertip_body) - xpos(target_body)]: 2 + 2 + 2 + 2 + 3 = 11 values.
  kReacher,
  // Humanoid-v4, HumanoidStandup-v4: [qpos[excluded_qpos:], qvel, cinert (nbody x 10), cvel
  // (nbody x 6), qfrc_actuator (nv), cfrc_ext (nbody x 6)], the world body's rows included:
  // 22 + 23 + 140 + 84 + 23 + 84 = 376 values; cfrc_ext (the external, mostly contact, force
  // and torque on each body) as mj_rnePostConstraint leaves it after the step (see above).
  kHumanoid,
  // Pusher-v4, Pusher-v5: [qpos[0:7], qvel[0:7] (the arm's seven joints), xpos(fingertip_body),
  // xpos(object_body), xpos(target_body)]: 7 + 7 + 3 + 3 + 3 = 23 values (m, rad, rad/s).
  kPusher,
  // Ant-v5: [qpos[excluded_qpos:], qvel, clip(cfrc_ext[1:], -contact_force_clip,
  // contact_force_clip)], cfrc_ext without the world body's row: 13 + 14 + 13 x 6 = 105 values.
  kPositionsVelocitiesContacts,
  // Humanoid-v5, HumanoidStandup-v5: kHumanoid without the world body's rows of cinert, cvel and
  // cfrc_ext and without qfrc_actuator's six free-joint entries: [qpos[excluded_qpos:], qvel,
  // cinert[1:], cvel[1:], qfrc_actuator[6:], cfrc_ext[1:]]: 22 + 23 + 130 + 78 + 17 + 78 = 348.
  kHumanoidV5,
  // InvertedDoublePendulum-v5: kDoublePendulum with qfrc_constraint's first entry only (the
  // cart's; the hinges' are always 0): 1 + 2 + 2 + 3 + 1 = 9 values.
  kDoublePendulumV5,
  // Reacher-v5: kReacher without the z of fingertip - target (always 0): 10 values.
  kReacherV5,
};

// How a step's reward is computed (Gymnasium's step).
enum class Reward {
  // forward_reward_weight dx/dt + healthy_reward - ctrl_cost_weight |a|^2 - contact cost (see
  // LocomotionTask::contact_cost_weight; 0 but for Ant-v5 and Humanoid-v5): every locomotion
  // task, and InvertedPendulum as weight 0, healthy_reward 1, cost 0 (a reward of 1; v5: 0 on
  // the terminating step).
  kForward,
  // InvertedDoublePendulum: alive bonus (healthy_reward, 10) - (0.01 x^2 + (z - 2)^2)
  // - (1e-3 qvel[1]^2 + 5e-3 qvel[2]^2), (x, z) the tip site's mjData.site_xpos as the last
  // mj_step left it.
  kTipDistance,
  // Reacher: -|xpos(fingertip_body) - xpos(target_body)| - |a|^2, the distance taken BEFORE the
  // step in v4 (reacher_v4.py computes the reward, then simulates), after it in v5
  // (distance_after_step).
  kFingertipDistance,
  // Pusher: -|xpos(object_body) - xpos(target_body)| - 0.1 |a|^2
  // - 0.5 |xpos(object_body) - xpos(fingertip_body)|, the distances taken BEFORE the step in v4
  // (pusher_v4.py computes the reward, then simulates), after it in v5 (distance_after_step).
  kPushDistance,
  // HumanoidStandup (v4 and v5): qpos[2] / timestep - 0.1 |a|^2 - contact cost + 1, after the
  // step, the contact cost min(0.5e-6 |cfrc_ext|^2, 10) (the task's contact_cost_* fields): the
  // torso's height (m) over MuJoCo's timestep (0.003 s, not dt), so 35 per step lying at the
  // start (0.105 m) and about 467 at Humanoid's standing 1.4 m; cfrc_ext as
  // mj_rnePostConstraint leaves it after the step (see kHumanoid).
  kStandUp,
};

// How a reset draws the start state (Gymnasium's reset_model), after mj_resetData.
enum class StartState {
  // qpos = qpos0 + U(-reset_noise_scale, reset_noise_scale), qvel per velocity_noise: every task
  // but Reacher and Pusher.
  kNoise,
  // Reacher-v4: qpos = qpos0 + U(-0.1, 0.1), then the target's qpos[2:4] = a goal drawn
  // U(-0.2, 0.2)^2 until its norm is below 0.2 (uniform in the disk); qvel = U(-0.005, 0.005)
  // with the target's qvel[2:4] = 0.
  kReacherGoal,
  // Pusher-v4: qpos = qpos0, then the object's qpos[7:9] (its y and x slides, in that order) = c
  // with c[0] ~ U(-0.3, 0), c[1] ~ U(-0.2, 0.2) drawn until |c| > 0.17, and the goal's
  // qpos[9:11] = 0; qvel = U(-0.005, 0.005) with the object's and goal's qvel[7:11] = 0.
  kPusherGoal,
};

// Everything task-specific about one of these envs (the name is the locomotion tasks', which came
// first): Gymnasium's constructor defaults and the registration's TimeLimit. Units: SI (m, s,
// rad); rewards per env step.
struct LocomotionTask {
  std::string id;                      // registered id, e.g. "HalfCheetah-v4"
  std::string asset;                   // MJCF file name in AssetDir(), e.g. "half_cheetah.xml"
  int frame_skip = 5;                  // mj_step calls per env step
  Observation observation = Observation::kPositionsVelocities;
  Reward reward = Reward::kForward;
  StartState start_state = StartState::kNoise;
  // kPositionsVelocities: nq - excluded_qpos + nv; kDoublePendulum: 2 nq - 1 + 2 nv; kReacher:
  // nq + 7; kHumanoid: nq - excluded_qpos + 2 nv + 22 nbody; kPusher: nq + nv - 8 + 9;
  // kPositionsVelocitiesContacts: nq - excluded_qpos + nv + 6 (nbody - 1); kHumanoidV5:
  // nq - excluded_qpos + 2 nv - 6 + 22 (nbody - 1); kDoublePendulumV5: 2 nq - 1 + nv + 1;
  // kReacherV5: nq + 6.
  int obs_dim = 0;
  // Leading qpos entries not observed: root x (Ant, Swimmer and the humanoids: x, y).
  int excluded_qpos = 1;
  // Body whose mjData.xpos x is the forward position (Ant: "torso"); empty: qpos[0]. xpos is
  // what MuJoCo's last mj_step computed (at its last RK4 stage), as Gymnasium reads it.
  std::string x_body;
  // x is the mass-weighted mean of every body's mjData.xipos x (Humanoid-v4's mass_center); wins
  // over x_body.
  bool x_mass_center = false;
  // Site whose mjData.site_xpos Reward::kTipDistance and Health::kTipHeight read (the
  // InvertedDoublePendulum's "tip"); empty when neither is used.
  std::string tip_site;
  // Bodies whose mjData.xpos Observation::kReacher/kReacherV5/kPusher and
  // Reward::kFingertipDistance/kPushDistance compare (Reacher's "fingertip" and "target";
  // Pusher's "tips_arm", "object" and "goal", Gymnasium's get_body_com); empty otherwise.
  std::string fingertip_body, object_body, target_body;
  // Reward::kFingertipDistance/kPushDistance: whether the distance terms read the state after
  // the step (v5: reacher_v5.py and pusher_v5.py simulate, then compute the reward) instead of
  // the state before it (v4).
  bool distance_after_step = false;
  int act_dim = 0;                     // nu, actuators
  double action_bound = 1.0;  // action Box [-bound, bound]^act_dim = every actuator's ctrlrange
  double forward_reward_weight = 1.0;  // weight of the forward velocity dx/dt (m/s)
  double ctrl_cost_weight = 0.1;       // weight of sum(action^2)
  double reset_noise_scale = 0.1;      // qpos noise U(-s, s); qvel noise per velocity_noise
  VelocityNoise velocity_noise = VelocityNoise::kNormal;
  double qvel_clip = std::numeric_limits<double>::infinity();  // observation clips qvel to +-this
  // Health (unhealthy steps terminate). kPlanar (Hopper, Walker2d): the step is unhealthy unless
  // every entry of [qpos[2:], qvel] lies strictly inside healthy_state_range (Walker2d: (-inf,
  // inf), no bound), qpos[1] (z) strictly inside healthy_z_range and qpos[2] (angle) strictly
  // inside healthy_angle_range. kHeight (Ant): unless healthy_z_min <= qpos[2] <= healthy_z_max.
  // kHeightOpen (Humanoid): unless healthy_z_min < qpos[2] < healthy_z_max.
  // kPoleAngle (InvertedPendulum): unless |qpos[1]| <= healthy_angle_max. kTipHeight
  // (InvertedDoublePendulum): unless the tip site's z > healthy_z_min.
  // (Gymnasium also calls a non-finite state unhealthy; here such a step is a numerical fault,
  // below, before health is asked.)
  Health health = Health::kNone;
  // Reward::kForward's healthy reward and Reward::kTipDistance's alive bonus: v4 adds it on every
  // step, the terminating one included.
  double healthy_reward = 0.0;
  // v5 (Hopper, Walker2d, Ant, Humanoid, both inverted pendulums): healthy_reward only on a step
  // that ends healthy, so none on the terminating step (the v5 files' healthy_reward property:
  // is_healthy * healthy_reward; InvertedPendulum-v5: reward = int(not terminated)).
  bool healthy_reward_only_when_healthy = false;
  // Contact cost, subtracted from Reward::kForward and kStandUp: min(contact_cost_weight *
  // sum(clip(cfrc_ext, -contact_force_clip, contact_force_clip)^2), contact_cost_max) over every
  // body's 6 entries (N, N m) after the step. Ant-v5: 5e-4, clip 1, no max (ant_v5.py's
  // contact_cost); Humanoid-v5: 5e-7, no clip, max 10 (humanoid_v5.py); HumanoidStandup: 0.5e-6,
  // no clip, max 10 (its quad_impact_cost); 0 for the other tasks.
  double contact_cost_weight = 0.0;
  double contact_force_clip = std::numeric_limits<double>::infinity();
  double contact_cost_max = std::numeric_limits<double>::infinity();
  double healthy_state_min = -100.0, healthy_state_max = 100.0;
  double healthy_z_min = 0.7, healthy_z_max = std::numeric_limits<double>::infinity();
  double healthy_angle_min = -0.2, healthy_angle_max = 0.2;
  int max_episode_steps = 1000;             // TimeLimit (steps)
  std::optional<double> reward_threshold;  // Gymnasium registry's reward_threshold
};

// Builds the static EnvSpec of a task: observation Box float32 [obs_dim] in (-inf, inf); action
// Box float32 [act_dim] with the bounds given (the model's actuator ctrlrange, checked against the
// model when a LocomotionEnv is built); TimeLimit and reward threshold from the task.
EnvSpec MakeLocomotionSpec(const LocomotionTask& task, float action_low, float action_high);

// N copies of one locomotion task sharing one mjModel. Thread-safety: ResetRows/StepRows may run
// concurrently on disjoint row ranges (the model is read-only; each row has its own mjData).
class LocomotionEnv final : public BatchedEnv {
 public:
  // Loads AssetPath(task.asset) once and allocates num_envs mjData.
  // Args: task: lives as long as this object (the tasks are function-local statics); spec: the
  //   task's static spec; num_envs: N >= 1.
  // Errors: MujocoError with MuJoCo's loader message when the model cannot be loaded, or naming
  //   the mismatch when the model's nq/nv/nu/ctrlrange disagree with task and spec, or a body
  //   or site the task names is missing.
  LocomotionEnv(const LocomotionTask& task, const EnvSpec& spec, int num_envs);

  const EnvSpec& spec() const override { return spec_; }
  int num_envs() const override { return static_cast<int>(rows_.size()); }
  void ResetRows(int begin, int end, uint64_t seed, const VecBuffers& buffers) override;
  // Errors: greenrl::InternalError (GREENRL_CHECK) for a row not reset yet (ResetRows first).
  void StepRows(int begin, int end, const VecBuffers& buffers) override;

  // Steps that hit a numerical fault, each followed by a reset of that row (summed over rows
  // since construction). Safe to read from the driving thread between Steps.
  int64_t non_finite_resets() const override;

  // The shared model (read-only) and row i's state, for tests (like SetState in classic envs).
  const mjModel& model() const { return *model_; }
  mjData& data(int i) { return *rows_[i].data; }
  // Seconds of simulated time per env step: frame_skip * timestep.
  double dt() const { return dt_; }

 private:
  struct Row {
    DataPtr data;                 // this env's simulation state
    Rng rng;                      // this env's generator
    int elapsed_steps = 0;        // TimeLimit count since reset
    double running_return = 0.0;  // return of the running episode so far
    int32_t running_length = 0;   // steps of the running episode so far
    int64_t non_finite_resets = 0;  // faults on this row since construction
    bool has_reset = false;         // ResetRows ran at least once
  };

  void ResetRow(Row& row) const;                    // noise from row.rng, then mj_forward
  void WriteObs(const mjData& data, float* dst) const;  // float32 [obs_dim]
  bool Healthy(const mjData& data) const;
  // m: qpos[0], xpos x of body x_body_id_, or the mass center's x (x_mass_center).
  double XPosition(const mjData& data) const;
  // m: |xpos(body a) - xpos(body b)|.
  double BodyDistance(const mjData& data, int a, int b) const;
  // Reacher's and Pusher's distance terms at `data` (-|fingertip - target|; -|object - goal|
  // - 0.5 |object - tips_arm|); 0 for the other tasks.
  double DistanceTerms(const mjData& data) const;
  // The contact cost of the stepped state (LocomotionTask::contact_cost_weight); 0 when the
  // weight is 0.
  double ContactCost(const mjData& data) const;
  // The step's reward; x_before: XPosition before the step (m), distance_before: DistanceTerms
  // before the step, ctrl_sq: |a|^2, healthy: Healthy() after the step.
  double StepReward(const mjData& data, double x_before, double distance_before, double ctrl_sq,
                    bool healthy) const;

  const LocomotionTask& task_;
  const EnvSpec& spec_;
  ModelPtr model_;
  double dt_ = 0.0;
  int x_body_id_ = -1;  // mj_name2id(task.x_body), -1 when x is qpos[0]
  // Whether a step ends with mj_rnePostConstraint: the task reads cfrc_ext (the humanoids,
  // Ant-v5).
  bool post_constraint_ = false;
  int tip_site_id_ = -1;  // mj_name2id(task.tip_site), -1 when the task names none
  // Reacher's and Pusher's bodies, -1 where the task names none.
  int fingertip_body_id_ = -1, object_body_id_ = -1, target_body_id_ = -1;
  std::vector<Row> rows_;
};

// Spec() and MakeBatched() of a locomotion env type, from its Task() (CRTP: struct Hopper :
// LocomotionEnvOf<Hopper> { static const LocomotionTask& Task(); ... }). The action Box is the
// motors' ctrlrange, [-action_bound, action_bound] (1 for every task here but
// InvertedPendulum's 3, Pusher's 2 and the humanoids' 0.4; LocomotionEnv checks it on the
// model).
template <typename Derived>
struct LocomotionEnvOf {
  // The task's static spec: id, obs Box float32 [obs_dim] unbounded, action Box float32
  // [act_dim] in [-action_bound, action_bound], TimeLimit and reward threshold from
  // Derived::Task().
  static const EnvSpec& Spec() {
    static const EnvSpec spec =
        MakeLocomotionSpec(Derived::Task(), static_cast<float>(-Derived::Task().action_bound),
                           static_cast<float>(Derived::Task().action_bound));
    return spec;
  }
  // num_envs rows sharing one loaded model. Errors: MujocoError (see LocomotionEnv).
  static std::unique_ptr<BatchedEnv> MakeBatched(int num_envs) {
    return std::make_unique<LocomotionEnv>(Derived::Task(), Spec(), num_envs);
  }
};

}  // namespace greenrl::env::mujoco
