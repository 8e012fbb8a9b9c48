#include "greenrl/env/mujoco/locomotion.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "greenrl/core/errors.h"

namespace greenrl::env::mujoco {
namespace {

// MuJoCo's own instability warnings: BADQPOS/BADQVEL/BADQACC come with a reset of the data by
// MuJoCo (mj_checkPos, mj_checkVel, mj_checkAcc), so the row's state is no longer the episode's;
// CONTACTFULL/CNSTRFULL mean contacts or constraint rows beyond the model's nconmax/njmax were
// dropped, so the step's physics is not the model's. Counters are cleared by mj_resetData.
bool UnstableWarning(const mjData& data) {
  return data.warning[mjWARN_BADQPOS].number > 0 || data.warning[mjWARN_BADQVEL].number > 0 ||
         data.warning[mjWARN_BADQACC].number > 0 || data.warning[mjWARN_CONTACTFULL].number > 0 ||
         data.warning[mjWARN_CNSTRFULL].number > 0;
}

bool AllFinite(const mjtNum* x, int n) {
  for (int k = 0; k < n; ++k) {
    if (!std::isfinite(x[k])) return false;
  }
  return true;
}

}  // namespace

EnvSpec MakeLocomotionSpec(const LocomotionTask& task, float action_low, float action_high) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EnvSpec spec;
  spec.id = task.id;
  spec.observation_space.low.assign(task.obs_dim, -kInf);
  spec.observation_space.high.assign(task.obs_dim, kInf);
  spec.observation_space.shape = {task.obs_dim};
  Box action;
  action.low.assign(task.act_dim, action_low);
  action.high.assign(task.act_dim, action_high);
  action.shape = {task.act_dim};
  spec.action_space = action;
  spec.max_episode_steps = task.max_episode_steps;
  spec.reward_threshold = task.reward_threshold;
  return spec;
}

LocomotionEnv::LocomotionEnv(const LocomotionTask& task, const EnvSpec& spec, int num_envs)
    : task_(task), spec_(spec), model_(LoadAsset(task.asset)) {
  GREENRL_CHECK(num_envs >= 1, "LocomotionEnv needs num_envs >= 1");
  const mjModel& m = *model_;
  const std::string where = "mujoco: model '" + task.asset + "' for " + task.id + ": ";
  int observed = m.nq - task.excluded_qpos + m.nv;
  std::string rule = "nq - " + std::to_string(task.excluded_qpos) + " + nv";
  if (task.observation == Observation::kDoublePendulum) {
    observed = 2 * m.nq - 1 + 2 * m.nv;
    rule = "2 nq - 1 + 2 nv";
  } else if (task.observation == Observation::kReacher) {
    observed = m.nq + 7;
    rule = "nq + 7";
  } else if (task.observation == Observation::kHumanoid) {
    observed = m.nq - task.excluded_qpos + 2 * m.nv + 22 * m.nbody;
    rule = "nq - " + std::to_string(task.excluded_qpos) + " + 2 nv + 22 nbody";
  } else if (task.observation == Observation::kPusher) {
    observed = m.nq + m.nv - 8 + 9;
    rule = "nq + nv - 8 + 9";
  } else if (task.observation == Observation::kPositionsVelocitiesContacts) {
    observed = m.nq - task.excluded_qpos + m.nv + 6 * (m.nbody - 1);
    rule = "nq - " + std::to_string(task.excluded_qpos) + " + nv + 6 (nbody - 1)";
  } else if (task.observation == Observation::kHumanoidV5) {
    observed = m.nq - task.excluded_qpos + 2 * m.nv - 6 + 22 * (m.nbody - 1);
    rule = "nq - " + std::to_string(task.excluded_qpos) + " + 2 nv - 6 + 22 (nbody - 1)";
  } else if (task.observation == Observation::kDoublePendulumV5) {
    observed = 2 * m.nq - 1 + m.nv + 1;
    rule = "2 nq - 1 + nv + 1";
  } else if (task.observation == Observation::kReacherV5) {
    observed = m.nq + 6;
    rule = "nq + 6";
  }
  if (observed != task.obs_dim) {
    throw MujocoError(where + rule + " = " + std::to_string(observed) + ", expected obs_dim " +
                      std::to_string(task.obs_dim));
  }
  if (!task.x_body.empty()) {
    x_body_id_ = mj_name2id(&m, mjOBJ_BODY, task.x_body.c_str());
    if (x_body_id_ < 0) throw MujocoError(where + "no body named '" + task.x_body + "'");
  }
  if (task.reward == Reward::kTipDistance || task.health == Health::kTipHeight) {
    tip_site_id_ = mj_name2id(&m, mjOBJ_SITE, task.tip_site.c_str());
    if (tip_site_id_ < 0) throw MujocoError(where + "no site named '" + task.tip_site + "'");
  }
  const bool arm =
      task.observation == Observation::kReacher || task.observation == Observation::kReacherV5 ||
      task.observation == Observation::kPusher || task.reward == Reward::kFingertipDistance ||
      task.reward == Reward::kPushDistance;
  const bool pusher =
      task.observation == Observation::kPusher || task.reward == Reward::kPushDistance;
  auto body_id = [&](const std::string& name) {
    const int id = mj_name2id(&m, mjOBJ_BODY, name.c_str());
    if (id < 0) throw MujocoError(where + "no body named '" + name + "'");
    return id;
  };
  if (arm) {
    fingertip_body_id_ = body_id(task.fingertip_body);
    target_body_id_ = body_id(task.target_body);
  }
  if (pusher) object_body_id_ = body_id(task.object_body);
  if (m.nu != task.act_dim) {
    throw MujocoError(where + "nu = " + std::to_string(m.nu) + ", expected act_dim " +
                      std::to_string(task.act_dim));
  }
  // The action space is the actuators' ctrlrange (Gymnasium's MujocoEnv._set_action_space).
  const Box& action = std::get<Box>(spec.action_space);
  for (int a = 0; a < m.nu; ++a) {
    if (!m.actuator_ctrllimited[a] ||
        static_cast<float>(m.actuator_ctrlrange[2 * a]) != action.low[a] ||
        static_cast<float>(m.actuator_ctrlrange[2 * a + 1]) != action.high[a]) {
      throw MujocoError(where + "actuator " + std::to_string(a) +
                        " ctrlrange differs from the spec's action bounds");
    }
  }
  dt_ = task.frame_skip * m.opt.timestep;
  post_constraint_ = task.observation == Observation::kHumanoid ||
                     task.observation == Observation::kHumanoidV5 ||
                     task.observation == Observation::kPositionsVelocitiesContacts ||
                     task.contact_cost_weight != 0.0;
  rows_.resize(num_envs);
  for (Row& row : rows_) row.data = MakeData(m);
}

int64_t LocomotionEnv::non_finite_resets() const {
  int64_t total = 0;
  for (const Row& row : rows_) total += row.non_finite_resets;
  return total;
}

void LocomotionEnv::ResetRow(Row& row) const {
  // MujocoEnv.reset -> mj_resetData, then reset_model: qpos noise for all nq entries first, then
  // qvel noise for all nv entries, then set_state (which ends with mj_forward).
  const mjModel& m = *model_;
  mjData& d = *row.data;
  mj_resetData(&m, &d);  // qpos = qpos0, qvel = 0, time = 0, warnings cleared
  if (task_.start_state == StartState::kReacherGoal) {
    // ReacherEnv.reset_model: qpos noise U(-0.1, 0.1) on all nq; the goal by rejection from
    // U(-0.2, 0.2)^2 until |goal| < 0.2, into qpos[-2:]; qvel U(-0.005, 0.005), qvel[-2:] = 0.
    for (int k = 0; k < m.nq; ++k) d.qpos[k] = m.qpos0[k] + row.rng.Uniform(-0.1, 0.1);
    double gx = 0.0, gy = 0.0;
    do {
      gx = row.rng.Uniform(-0.2, 0.2);
      gy = row.rng.Uniform(-0.2, 0.2);
    } while (!(std::sqrt(gx * gx + gy * gy) < 0.2));
    d.qpos[m.nq - 2] = gx;
    d.qpos[m.nq - 1] = gy;
    for (int k = 0; k < m.nv; ++k) d.qvel[k] = row.rng.Uniform(-0.005, 0.005);
    d.qvel[m.nv - 2] = d.qvel[m.nv - 1] = 0.0;
  } else if (task_.start_state == StartState::kPusherGoal) {
    // PusherEnv.reset_model: qpos = init_qpos; cylinder_pos = [U(-0.3, 0), U(-0.2, 0.2)] drawn
    // until |cylinder_pos - goal_pos| > 0.17 with goal_pos = (0, 0); qpos[-4:-2] = cylinder_pos
    // (the object's y and x slides), qpos[-2:] = goal_pos; qvel = U(-0.005, 0.005) on all nv,
    // then qvel[-4:] = 0.
    for (int k = 0; k < m.nq; ++k) d.qpos[k] = m.qpos0[k];
    double c0 = 0.0, c1 = 0.0;
    do {
      c0 = row.rng.Uniform(-0.3, 0.0);
      c1 = row.rng.Uniform(-0.2, 0.2);
    } while (!(std::sqrt(c0 * c0 + c1 * c1) > 0.17));
    d.qpos[m.nq - 4] = c0;
    d.qpos[m.nq - 3] = c1;
    d.qpos[m.nq - 2] = d.qpos[m.nq - 1] = 0.0;
    for (int k = 0; k < m.nv; ++k) d.qvel[k] = row.rng.Uniform(-0.005, 0.005);
    for (int k = m.nv - 4; k < m.nv; ++k) d.qvel[k] = 0.0;
  } else {
    const double s = task_.reset_noise_scale;
    for (int k = 0; k < m.nq; ++k) d.qpos[k] = m.qpos0[k] + row.rng.Uniform(-s, s);
    for (int k = 0; k < m.nv; ++k) {
      d.qvel[k] = task_.velocity_noise == VelocityNoise::kNormal ? s * row.rng.Normal()
                                                                 : row.rng.Uniform(-s, s);
    }
  }
  mj_forward(&m, &d);
  row.elapsed_steps = 0;
  row.has_reset = true;
}

void LocomotionEnv::WriteObs(const mjData& data, float* dst) const {
  const mjModel& m = *model_;
  const double c = task_.qvel_clip;
  const Observation kind = task_.observation;
  if (kind == Observation::kDoublePendulum || kind == Observation::kDoublePendulumV5) {
    // InvertedDoublePendulumEnv._get_obs: qpos[:1], sin(qpos[1:]), cos(qpos[1:]),
    // clip(qvel, -10, 10), clip(qfrc_constraint, -10, 10) (v5: its [:1]).
    *dst++ = static_cast<float>(data.qpos[0]);
    for (int k = 1; k < m.nq; ++k) *dst++ = static_cast<float>(std::sin(data.qpos[k]));
    for (int k = 1; k < m.nq; ++k) *dst++ = static_cast<float>(std::cos(data.qpos[k]));
    for (int k = 0; k < m.nv; ++k) *dst++ = static_cast<float>(std::clamp(data.qvel[k], -c, c));
    const int constraint_forces = kind == Observation::kDoublePendulum ? m.nv : 1;
    for (int k = 0; k < constraint_forces; ++k) {
      *dst++ = static_cast<float>(std::clamp(data.qfrc_constraint[k], -c, c));
    }
    return;
  }
  if (kind == Observation::kReacher || kind == Observation::kReacherV5) {
    // ReacherEnv._get_obs: cos(qpos[:2]), sin(qpos[:2]), qpos[2:], qvel[:2],
    // get_body_com("fingertip") - get_body_com("target") (v5: its [:2]).
    for (int k = 0; k < 2; ++k) *dst++ = static_cast<float>(std::cos(data.qpos[k]));
    for (int k = 0; k < 2; ++k) *dst++ = static_cast<float>(std::sin(data.qpos[k]));
    for (int k = 2; k < m.nq; ++k) *dst++ = static_cast<float>(data.qpos[k]);
    for (int k = 0; k < 2; ++k) *dst++ = static_cast<float>(data.qvel[k]);
    const int axes = kind == Observation::kReacher ? 3 : 2;
    for (int axis = 0; axis < axes; ++axis) {
      *dst++ = static_cast<float>(data.xpos[3 * fingertip_body_id_ + axis] -
                                  data.xpos[3 * target_body_id_ + axis]);
    }
    return;
  }
  if (task_.observation == Observation::kPusher) {
    // PusherEnv._get_obs: qpos[:7], qvel[:7], get_body_com("tips_arm"), get_body_com("object"),
    // get_body_com("goal").
    for (int k = 0; k < m.nq - 4; ++k) *dst++ = static_cast<float>(data.qpos[k]);
    for (int k = 0; k < m.nv - 4; ++k) *dst++ = static_cast<float>(data.qvel[k]);
    for (const int body : {fingertip_body_id_, object_body_id_, target_body_id_}) {
      for (int axis = 0; axis < 3; ++axis) *dst++ = static_cast<float>(data.xpos[3 * body + axis]);
    }
    return;
  }
  for (int k = task_.excluded_qpos; k < m.nq; ++k) *dst++ = static_cast<float>(data.qpos[k]);
  for (int k = 0; k < m.nv; ++k) *dst++ = static_cast<float>(std::clamp(data.qvel[k], -c, c));
  auto copy = [&dst](const mjtNum* src, int n) {
    for (int k = 0; k < n; ++k) *dst++ = static_cast<float>(src[k]);
  };
  if (kind == Observation::kHumanoid) {
    // HumanoidEnv._get_obs (v4): then cinert, cvel, qfrc_actuator, cfrc_ext, each .flat.
    copy(data.cinert, 10 * m.nbody);
    copy(data.cvel, 6 * m.nbody);
    copy(data.qfrc_actuator, m.nv);
    copy(data.cfrc_ext, 6 * m.nbody);
  } else if (kind == Observation::kHumanoidV5) {
    // HumanoidEnv._get_obs (v5): cinert[1:], cvel[1:], qfrc_actuator[6:], cfrc_ext[1:].
    copy(data.cinert + 10, 10 * (m.nbody - 1));
    copy(data.cvel + 6, 6 * (m.nbody - 1));
    copy(data.qfrc_actuator + 6, m.nv - 6);
    copy(data.cfrc_ext + 6, 6 * (m.nbody - 1));
  } else if (kind == Observation::kPositionsVelocitiesContacts) {
    // AntEnv._get_obs (v5): contact_forces[1:], contact_forces = clip(cfrc_ext, -1, 1).
    const double f = task_.contact_force_clip;
    for (int k = 6; k < 6 * m.nbody; ++k) {
      *dst++ = static_cast<float>(std::clamp(data.cfrc_ext[k], -f, f));
    }
  }
}

double LocomotionEnv::XPosition(const mjData& data) const {
  if (task_.x_mass_center) {
    // humanoid_v4.py's mass_center: sum(body_mass * xipos) / sum(body_mass), its x.
    const mjModel& m = *model_;
    double weighted = 0.0, mass = 0.0;
    for (int b = 0; b < m.nbody; ++b) {
      weighted += m.body_mass[b] * data.xipos[3 * b];
      mass += m.body_mass[b];
    }
    return weighted / mass;
  }
  return x_body_id_ < 0 ? data.qpos[0] : data.xpos[3 * x_body_id_];
}

double LocomotionEnv::BodyDistance(const mjData& data, int a, int b) const {
  double sq = 0.0;
  for (int c = 0; c < 3; ++c) {
    const double v = data.xpos[3 * a + c] - data.xpos[3 * b + c];
    sq += v * v;
  }
  return std::sqrt(sq);
}

double LocomotionEnv::DistanceTerms(const mjData& data) const {
  if (task_.reward == Reward::kFingertipDistance) {
    // ReacherEnv: reward_dist = -norm(fingertip - target).
    return -BodyDistance(data, fingertip_body_id_, target_body_id_);
  }
  if (task_.reward == Reward::kPushDistance) {
    // PusherEnv: reward_near = -norm(object - tips_arm), reward_dist = -norm(object - goal);
    // reward = reward_dist + 0.1 reward_ctrl + 0.5 reward_near.
    return -BodyDistance(data, object_body_id_, target_body_id_) -
           0.5 * BodyDistance(data, object_body_id_, fingertip_body_id_);
  }
  return 0.0;
}

double LocomotionEnv::ContactCost(const mjData& data) const {
  if (task_.contact_cost_weight == 0.0) return 0.0;
  // ant_v5.py: contact_cost_weight * sum(square(clip(cfrc_ext, -1, 1))); humanoid_v5.py and
  // HumanoidStandup: clip(contact_cost_weight * sum(square(cfrc_ext)), -inf, 10).
  const double f = task_.contact_force_clip;
  double sq = 0.0;
  for (int k = 0; k < 6 * model_->nbody; ++k) {
    const double v = std::clamp(data.cfrc_ext[k], -f, f);
    sq += v * v;
  }
  return std::min(task_.contact_cost_weight * sq, task_.contact_cost_max);
}

double LocomotionEnv::StepReward(const mjData& data, double x_before, double distance_before,
                                 double ctrl_sq, bool healthy) const {
  const double distance = task_.distance_after_step ? DistanceTerms(data) : distance_before;
  // v4 pays the healthy reward (alive bonus) on every step; v5 on healthy steps only.
  const double healthy_reward =
      healthy || !task_.healthy_reward_only_when_healthy ? task_.healthy_reward : 0.0;
  if (task_.reward == Reward::kFingertipDistance) {
    // ReacherEnv.step: reward_dist + reward_ctrl, reward_ctrl = -sum(a^2).
    return distance - ctrl_sq;
  }
  if (task_.reward == Reward::kPushDistance) {
    // PusherEnv.step: reward_ctrl = -sum(a^2), weighted 0.1.
    return distance - 0.1 * ctrl_sq;
  }
  if (task_.reward == Reward::kStandUp) {
    // HumanoidStandupEnv.step: uph_cost = (qpos[2] - 0) / model.opt.timestep; quad_ctrl_cost =
    // 0.1 sum(ctrl^2); quad_impact_cost = min(0.5e-6 sum(cfrc_ext^2), 10); reward = uph_cost -
    // quad_ctrl_cost - quad_impact_cost + 1.
    return data.qpos[2] / model_->opt.timestep - 0.1 * ctrl_sq - ContactCost(data) + 1.0;
  }
  if (task_.reward == Reward::kTipDistance) {
    // InvertedDoublePendulumEnv.step: x, _, y = site_xpos[0]; alive_bonus 10; dist_penalty =
    // 0.01 x^2 + (y - 2)^2; v1, v2 = qvel[1:3]; vel_penalty = 1e-3 v1^2 + 5e-3 v2^2.
    const double x = data.site_xpos[3 * tip_site_id_];
    const double y = data.site_xpos[3 * tip_site_id_ + 2];
    const double v1 = data.qvel[1];
    const double v2 = data.qvel[2];
    return healthy_reward - (0.01 * x * x + (y - 2.0) * (y - 2.0)) -
           (1e-3 * v1 * v1 + 5e-3 * v2 * v2);
  }
  const double x_velocity = (XPosition(data) - x_before) / dt_;
  return task_.forward_reward_weight * x_velocity + healthy_reward -
         task_.ctrl_cost_weight * ctrl_sq - ContactCost(data);
}

bool LocomotionEnv::Healthy(const mjData& data) const {
  const LocomotionTask& t = task_;
  switch (t.health) {
    case Health::kNone:
      return true;
    case Health::kHeight:
      // AntEnv.is_healthy: min_z <= state[2] <= max_z, both bounds closed.
      return t.healthy_z_min <= data.qpos[2] && data.qpos[2] <= t.healthy_z_max;
    case Health::kHeightOpen:
      // HumanoidEnv.is_healthy: min_z < qpos[2] < max_z.
      return t.healthy_z_min < data.qpos[2] && data.qpos[2] < t.healthy_z_max;
    case Health::kPoleAngle:
      // InvertedPendulumEnv.step: terminated = np.abs(ob[1]) > 0.2, ob[1] = qpos[1].
      return std::abs(data.qpos[1]) <= t.healthy_angle_max;
    case Health::kTipHeight:
      // InvertedDoublePendulumEnv.step: terminated = y <= 1, y = site_xpos[0][2].
      return data.site_xpos[3 * tip_site_id_ + 2] > t.healthy_z_min;
    case Health::kPlanar:
      break;
  }
  // HopperEnv.is_healthy: state_vector()[2:] = [qpos[2:], qvel], z = qpos[1], angle = qpos[2],
  // every comparison strict (Walker2dEnv.is_healthy: z and angle, its state range infinite).
  const mjModel& m = *model_;
  for (int k = 2; k < m.nq; ++k) {
    if (!(t.healthy_state_min < data.qpos[k] && data.qpos[k] < t.healthy_state_max)) return false;
  }
  for (int k = 0; k < m.nv; ++k) {
    if (!(t.healthy_state_min < data.qvel[k] && data.qvel[k] < t.healthy_state_max)) return false;
  }
  const double z = data.qpos[1];
  const double angle = data.qpos[2];
  return t.healthy_z_min < z && z < t.healthy_z_max && t.healthy_angle_min < angle &&
         angle < t.healthy_angle_max;
}

void LocomotionEnv::ResetRows(int begin, int end, uint64_t seed, const VecBuffers& buffers) {
  const int64_t obs_dim = task_.obs_dim;
  for (int i = begin; i < end; ++i) {
    Row& row = rows_[i];
    row.rng.Seed(DeriveSeed(seed, i));
    ResetRow(row);
    WriteObs(*row.data, buffers.obs + i * obs_dim);
    std::memcpy(buffers.final_obs + i * obs_dim, buffers.obs + i * obs_dim,
                sizeof(float) * obs_dim);
    buffers.reward[i] = 0.0f;
    buffers.terminated[i] = 0;
    buffers.truncated[i] = 0;
    buffers.episode_return[i] = 0.0f;
    buffers.episode_length[i] = 0;
    row.running_return = 0.0;
    row.running_length = 0;
  }
}

void LocomotionEnv::StepRows(int begin, int end, const VecBuffers& buffers) {
  const mjModel& m = *model_;
  const int64_t obs_dim = task_.obs_dim;
  const int act_dim = task_.act_dim;
  for (int i = begin; i < end; ++i) {
    Row& row = rows_[i];
    mjData& d = *row.data;
    const float* action = buffers.continuous_actions + static_cast<int64_t>(i) * act_dim;
    float* obs = buffers.obs + i * obs_dim;
    float* final_obs = buffers.final_obs + i * obs_dim;
    GREENRL_CHECK(row.has_reset, "LocomotionEnv::StepRows called before ResetRows");

    // MujocoEnv.do_simulation: ctrl = action (float32 widened to float64), frame_skip mj_steps.
    const double x_before = XPosition(d);
    const double distance_before = task_.distance_after_step ? 0.0 : DistanceTerms(d);
    double ctrl_sq = 0.0;
    for (int a = 0; a < act_dim; ++a) {
      d.ctrl[a] = static_cast<double>(action[a]);
      ctrl_sq += d.ctrl[a] * d.ctrl[a];
    }
    // A MuJoCo error (mujoco_model.h, InstallHandlers: it throws) leaves d mid-computation:
    // a fault like the others.
    bool engine_error = false;
    try {
      for (int k = 0; k < task_.frame_skip; ++k) mj_step(&m, &d);
      // MujocoEnv._step_mujoco_simulation: cacc, cfrc_int and cfrc_ext for the stepped state.
      if (post_constraint_) mj_rnePostConstraint(&m, &d);
    } catch (const MujocoError& e) {
      engine_error = true;
      const std::string what = e.what();  // "mujoco: <MuJoCo's message>"
      ReportMessage("error", what.substr(what.find(": ") + 2) + " (that env row is reset)");
    }
    row.elapsed_steps += 1;
    row.running_length += 1;

    const bool fault =
        engine_error || UnstableWarning(d) || !AllFinite(d.qpos, m.nq) || !AllFinite(d.qvel, m.nv);
    if (fault) {
      // obs still holds the last finite observation (the one this step started from).
      std::memcpy(final_obs, obs, sizeof(float) * obs_dim);
      buffers.reward[i] = 0.0f;
      buffers.terminated[i] = 0;
      buffers.truncated[i] = 1;
      row.non_finite_resets += 1;
    } else {
      const bool terminated = !Healthy(d);
      const double reward = StepReward(d, x_before, distance_before, ctrl_sq, !terminated);
      const bool truncated = row.elapsed_steps >= task_.max_episode_steps;
      WriteObs(d, final_obs);
      buffers.reward[i] = static_cast<float>(reward);
      buffers.terminated[i] = terminated ? 1 : 0;
      buffers.truncated[i] = truncated ? 1 : 0;
      row.running_return += reward;
    }

    if (fault || buffers.terminated[i] || buffers.truncated[i]) {
      buffers.episode_return[i] = static_cast<float>(row.running_return);
      buffers.episode_length[i] = row.running_length;
      row.running_return = 0.0;
      row.running_length = 0;
      ResetRow(row);
      WriteObs(d, obs);
    } else {
      buffers.episode_return[i] = 0.0f;
      buffers.episode_length[i] = 0;
      std::memcpy(obs, final_obs, sizeof(float) * obs_dim);
    }
  }
}

}  // namespace greenrl::env::mujoco
