// mujoco_v5_test.cc: Gymnasium's v5 MuJoCo tasks (HalfCheetah-v5, Hopper-v5, Walker2d-v5,
// Ant-v5, Swimmer-v5, InvertedPendulum-v5, InvertedDoublePendulum-v5, Reacher-v5, Humanoid-v5,
// HumanoidStandup-v5, Pusher-v5) against the rules of Gymnasium 1.0's *_v5.py files: specs and
// registration, the two v5 models against their v4 originals, resets, and every step's reward,
// termination and observation against an independently stepped copy of the MuJoCo state
// (ShadowSteps), with the v5 changes exercised (terminating steps, contact forces above the clip,
// distances after the step).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "greenrl/env/mujoco/ant.h"
#include "greenrl/env/mujoco/half_cheetah.h"
#include "greenrl/env/mujoco/hopper.h"
#include "greenrl/env/mujoco/humanoid.h"
#include "greenrl/env/mujoco/humanoid_standup.h"
#include "greenrl/env/mujoco/inverted_double_pendulum.h"
#include "greenrl/env/mujoco/inverted_pendulum.h"
#include "greenrl/env/mujoco/locomotion.h"
#include "greenrl/env/mujoco/mujoco_model.h"
#include "greenrl/env/mujoco/mujoco_test_util.h"
#include "greenrl/env/mujoco/pusher.h"
#include "greenrl/env/mujoco/reacher.h"
#include "greenrl/env/mujoco/swimmer.h"
#include "greenrl/env/mujoco/walker2d.h"
#include "greenrl/env/registry.h"

namespace greenrl::env::mujoco {
namespace {

// ---------------------------------------------------------------------------------------------
// Registration, models, resets.
// ---------------------------------------------------------------------------------------------

// Gymnasium 1.0's gymnasium/envs/__init__.py registers every v5 id with its v4's TimeLimit and
// reward_threshold; the observation sizes are the v5 files' (Ant 105 with cfrc_ext, the humanoids
// 348, InvertedDoublePendulum 9, Reacher 10); the action spaces and dt are v4's.
TEST(LocomotionV5Test, RegisteredSpecsFollowGymnasiumV5) {
  ExpectSpecs({
      {"HalfCheetah-v5", 17, 6, 1.0f, 4800.0},
      {"Hopper-v5", 11, 3, 1.0f, 3800.0},
      {"Walker2d-v5", 17, 6, 1.0f, std::nullopt},
      {"Ant-v5", 105, 8, 1.0f, 6000.0},
      {"Swimmer-v5", 8, 2, 1.0f, 360.0},
      {"InvertedPendulum-v5", 4, 1, 3.0f, 950.0},
      {"InvertedDoublePendulum-v5", 9, 1, 1.0f, 9100.0},
      {"Reacher-v5", 10, 2, 1.0f, -3.75, 50},
      {"Humanoid-v5", 348, 17, 0.4f, std::nullopt},
      {"HumanoidStandup-v5", 348, 17, 0.4f, std::nullopt},
      {"Pusher-v5", 23, 7, 2.0f, 0.0, 100},
  });
  // Each v5 id is listed right after its v4 id.
  const std::string ids = RegisteredEnvIdList();
  EXPECT_NE(ids.find("HalfCheetah-v4, HalfCheetah-v5, Hopper-v4, Hopper-v5"), std::string::npos);
  EXPECT_NE(ids.find("HumanoidStandup-v5, Pusher-v4, Pusher-v5"), std::string::npos);
  EXPECT_DOUBLE_EQ(Make<HopperV5>(1, 0, 1).env->dt(), 0.008);
  EXPECT_DOUBLE_EQ(Make<Walker2dV5>(1, 0, 1).env->dt(), 0.008);
  EXPECT_DOUBLE_EQ(Make<AntV5>(1, 0, 1).env->dt(), 0.05);
  EXPECT_DOUBLE_EQ(Make<HumanoidV5>(1, 0, 1).env->dt(), 0.015);
  EXPECT_DOUBLE_EQ(Make<ReacherV5>(1, 0, 1).env->dt(), 0.02);
  EXPECT_DOUBLE_EQ(Make<PusherV5>(1, 0, 1).env->dt(), 0.05);
  EXPECT_DOUBLE_EQ(Make<InvertedPendulumV5>(1, 0, 1).env->dt(), 0.04);
  EXPECT_DOUBLE_EQ(Make<InvertedDoublePendulumV5>(1, 0, 1).env->dt(), 0.05);
}

// a[k] == b[k] for every k < n that skip(k) does not set aside.
template <typename Skip>
void ExpectSameDoubles(const char* what, const mjtNum* a, const mjtNum* b, int n, Skip skip) {
  for (int k = 0; k < n; ++k) {
    if (!skip(k)) {
      EXPECT_EQ(a[k], b[k]) << what << "[" << k << "]";
    }
  }
}

// a[k] == b[k] for every k < n.
void ExpectSameDoubles(const char* what, const mjtNum* a, const mjtNum* b, int n) {
  ExpectSameDoubles(what, a, b, n, [](int) { return false; });
}

// A v5 model and its v4 original: the same bodies, joints and actuators, the same memory limits
// and the same solver options (timestep, integrator, iterations).
void ExpectSameStructureAndOptions(const mjModel& a, const mjModel& b) {
  ASSERT_EQ(a.nbody, b.nbody);
  ASSERT_EQ(a.njnt, b.njnt);
  ASSERT_EQ(a.nu, b.nu);
  EXPECT_EQ(a.njmax, b.njmax);
  EXPECT_EQ(a.nconmax, b.nconmax);
  EXPECT_EQ(a.nstack, b.nstack);
  EXPECT_EQ(a.opt.timestep, b.opt.timestep);
  EXPECT_EQ(a.opt.integrator, b.opt.integrator);
  EXPECT_EQ(a.opt.iterations, b.opt.iterations);
}

// A task's v4 model and its v5 model, loaded from the assets; ExpectSameStructureAndOptions
// holds between them (checked here).
struct ModelPair {
  ModelPtr v4, v5;
};
ModelPair LoadV4AndV5(const char* v4_file, const char* v5_file) {
  ModelPair pair{LoadModel(AssetPath(v4_file)), LoadModel(AssetPath(v5_file))};
  ExpectSameStructureAndOptions(*pair.v4, *pair.v5);
  return pair;
}

// walker2d_v5.xml is walker2d.xml with the right foot's friction 1.9 (v4: 0.9), as Gymnasium's
// walker2d_v5.xml: every body, joint, geom, actuator and option the same, but that one number.
TEST(LocomotionV5Test, Walker2dV5ModelIsV4sWithTheRightFootAsGrippyAsTheLeft) {
  const ModelPair models = LoadV4AndV5("walker2d.xml", "walker2d_v5.xml");
  const mjModel& a = *models.v4;
  const mjModel& b = *models.v5;
  ASSERT_EQ(a.ngeom, b.ngeom);
  ExpectSameDoubles("body_mass", a.body_mass, b.body_mass, a.nbody);
  ExpectSameDoubles("body_inertia", a.body_inertia, b.body_inertia, 3 * a.nbody);
  ExpectSameDoubles("body_pos", a.body_pos, b.body_pos, 3 * a.nbody);
  ExpectSameDoubles("jnt_range", a.jnt_range, b.jnt_range, 2 * a.njnt);
  ExpectSameDoubles("dof_damping", a.dof_damping, b.dof_damping, a.nv);
  ExpectSameDoubles("dof_armature", a.dof_armature, b.dof_armature, a.nv);
  ExpectSameDoubles("actuator_gear", a.actuator_gear, b.actuator_gear, 6 * a.nu);
  ExpectSameDoubles("geom_size", a.geom_size, b.geom_size, 3 * a.ngeom);
  const int right_foot = mj_name2id(&b, mjOBJ_GEOM, "foot_geom");
  const int left_foot = mj_name2id(&b, mjOBJ_GEOM, "foot_left_geom");
  ASSERT_GE(right_foot, 0);
  ExpectSameDoubles("geom_friction", a.geom_friction, b.geom_friction, 3 * a.ngeom,
                    [&](int k) { return k == 3 * right_foot; });
  EXPECT_DOUBLE_EQ(a.geom_friction[3 * right_foot], 0.9);
  EXPECT_DOUBLE_EQ(b.geom_friction[3 * right_foot], 1.9);
  EXPECT_DOUBLE_EQ(b.geom_friction[3 * left_foot], 1.9);
}

// pusher_v5.xml is pusher.xml with the object a single cylinder of density 0.01 (Gymnasium's
// pusher_v5.xml): pi 0.05^2 x 0.1 m^3 x 0.01 = 7.85398163e-6 kg (v4: 1.309e-8 kg), one geom
// fewer (the invisible sphere), every other body, joint, actuator and option the same.
TEST(LocomotionV5Test, PusherV5ModelIsV4sWithADenserObject) {
  const ModelPair models = LoadV4AndV5("pusher.xml", "pusher_v5.xml");
  const mjModel& a = *models.v4;
  const mjModel& b = *models.v5;
  EXPECT_EQ(b.ngeom, a.ngeom - 1);
  const int object = BodyId(b, "object");
  EXPECT_NEAR(b.body_mass[object], 3.14159265358979 * 0.05 * 0.05 * 0.1 * 0.01, 1e-15);
  EXPECT_NEAR(a.body_mass[object], 1.30899694e-08, 1e-16);
  ExpectSameDoubles("body_mass", a.body_mass, b.body_mass, a.nbody,
                    [&](int k) { return k == object; });
  ExpectSameDoubles("body_pos", a.body_pos, b.body_pos, 3 * a.nbody);
  ExpectSameDoubles("jnt_range", a.jnt_range, b.jnt_range, 2 * a.njnt);
  ExpectSameDoubles("dof_damping", a.dof_damping, b.dof_damping, a.nv);
  ExpectSameDoubles("actuator_ctrlrange", a.actuator_ctrlrange, b.actuator_ctrlrange, 2 * a.nu);
  // The object's one geom is the colliding cylinder.
  int object_geoms = 0;
  for (int g = 0; g < b.ngeom; ++g) {
    if (b.geom_bodyid[g] != object) continue;
    ++object_geoms;
    EXPECT_EQ(b.geom_type[g], mjGEOM_CYLINDER);
    EXPECT_EQ(b.geom_contype[g], 1);
  }
  EXPECT_EQ(object_geoms, 1);
}

// A v5 reset draws the start state of its v4 (the same reset_model in both files): the same seed
// gives the same qpos and qvel, row by row, for every task.
template <typename V4, typename V5>
void ExpectSameResetState() {
  Harness a = Make<V4>(6, 17, 1);
  Harness b = Make<V5>(6, 17, 1);
  const mjModel& m = a.env->model();
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < m.nq; ++k) {
      EXPECT_EQ(a.env->data(i).qpos[k], b.env->data(i).qpos[k]) << V5::Task().id << " " << k;
    }
    for (int k = 0; k < m.nv; ++k) {
      EXPECT_EQ(a.env->data(i).qvel[k], b.env->data(i).qvel[k]) << V5::Task().id << " " << k;
    }
  }
}

TEST(LocomotionV5Test, ResetsDrawTheirV4StartStates) {
  ExpectSameResetState<HalfCheetah, HalfCheetahV5>();
  ExpectSameResetState<Hopper, HopperV5>();
  ExpectSameResetState<Walker2d, Walker2dV5>();
  ExpectSameResetState<Ant, AntV5>();
  ExpectSameResetState<Swimmer, SwimmerV5>();
  ExpectSameResetState<InvertedPendulum, InvertedPendulumV5>();
  ExpectSameResetState<InvertedDoublePendulum, InvertedDoublePendulumV5>();
  ExpectSameResetState<Reacher, ReacherV5>();
  ExpectSameResetState<Humanoid, HumanoidV5>();
  ExpectSameResetState<HumanoidStandup, HumanoidStandupV5>();
  ExpectSameResetState<Pusher, PusherV5>();
}

// HalfCheetah-v5 and Swimmer-v5 change nothing that steps: the same seed and actions give v4's
// trajectory (obs, final_obs, rewards, terminations) exactly.
TEST(LocomotionV5Test, HalfCheetahAndSwimmerV5StepExactlyAsV4) {
  EXPECT_EQ(Trajectory<HalfCheetahV5>(3, 5, 1, 200), Trajectory<HalfCheetah>(3, 5, 1, 200));
  EXPECT_EQ(Trajectory<SwimmerV5>(3, 5, 1, 200), Trajectory<Swimmer>(3, 5, 1, 200));
}

TEST(LocomotionV5Test, HalfCheetahSwimmerAndHumanoidStandupV5TruncateAfter1000StepsOnly) {
  ExpectTruncationAfter1000StepsOnly<HalfCheetahV5>();
  ExpectTruncationAfter1000StepsOnly<SwimmerV5>();
  ExpectTruncationAfter1000StepsOnly<HumanoidStandupV5>();
}

TEST(LocomotionV5Test, SameSeedSameTrajectoryAcrossThreadCountsOtherSeedDiffers) {
  ExpectSeedDeterminesTrajectory<HopperV5>(5, 300);
  ExpectSeedDeterminesTrajectory<Walker2dV5>(5, 300);
  ExpectSeedDeterminesTrajectory<AntV5>(5, 300);
  ExpectSeedDeterminesTrajectory<InvertedPendulumV5>(5, 300);
  ExpectSeedDeterminesTrajectory<InvertedDoublePendulumV5>(5, 300);
  ExpectSeedDeterminesTrajectory<ReacherV5>(5, 300);
  ExpectSeedDeterminesTrajectory<HumanoidV5>(3, 100);
  ExpectSeedDeterminesTrajectory<HumanoidStandupV5>(3, 100);
  ExpectSeedDeterminesTrajectory<PusherV5>(5, 300);
}

// ---------------------------------------------------------------------------------------------
// Steps.
// ---------------------------------------------------------------------------------------------

// Hopper-v5 and Walker2d-v5 (hopper_v5.py, walker2d_v5.py): reward = dx/dt + 1 if the step ends
// healthy (0 on the terminating step, where v4 pays 1) - 1e-3 |a|^2, x = qpos[0], dt 0.008 s;
// terminated exactly when unhealthy; obs [qpos[1:], clip(qvel, -10, 10)].
template <typename Task>
void ExpectPlanarV5Steps(uint64_t seed, bool (*healthy)(const mjData&)) {
  const int nq = Make<Task>(1, 0, 1).env->model().nq;
  const int terminations = ShadowSteps<Task>(
      seed, seed + 1, 2000, 1.0,
      [&](int t, const float* a, const mjData& before, const mjData& d, const VecEnv& vec) {
        const bool is_healthy = healthy(d);
        EXPECT_EQ(vec.terminated()[0], is_healthy ? 0 : 1) << "step " << t;
        const double expected = (d.qpos[0] - before.qpos[0]) / 0.008 + (is_healthy ? 1.0 : 0.0) -
                                1e-3 * CtrlSq(a, Task::kActDim);
        EXPECT_NEAR(vec.reward()[0], expected, 1e-5 * (1.0 + std::abs(expected))) << "step " << t;
        for (int k = 1; k < nq; ++k) {
          EXPECT_EQ(vec.final_obs()[k - 1], static_cast<float>(d.qpos[k])) << "step " << t;
        }
        for (int k = 0; k < nq; ++k) {
          EXPECT_EQ(vec.final_obs()[nq - 1 + k],
                    static_cast<float>(std::clamp(d.qvel[k], -10.0, 10.0)))
              << "step " << t;
        }
      });
  EXPECT_GE(terminations, 10) << Task::Task().id;  // random actions topple it again and again
}

TEST(LocomotionV5Test, HopperAndWalker2dV5PayTheHealthyRewardOnHealthyStepsOnly) {
  ExpectPlanarV5Steps<HopperV5>(21, &HopperHealthy);
  ExpectPlanarV5Steps<Walker2dV5>(31, &Walker2dHealthy);
}

// Ant-v5 (ant_v5.py): x the torso's xpos (main_body 1), dt 0.05 s;
// reward = dx/dt + 1 if healthy - 0.5 |a|^2 - 5e-4 sum(clip(cfrc_ext, -1, 1)^2) (all 14 bodies);
// terminated exactly when z = qpos[2] leaves [0.2, 1]; obs = [qpos[2:], qvel,
// clip(cfrc_ext[1:], -1, 1)] with cfrc_ext after mj_rnePostConstraint; the autoreset's first obs
// has cfrc_ext 0 (a reset does not make that call).
TEST(LocomotionV5Test, AntV5StepsRewardsAndObservesAsGymnasium) {
  Harness probe = Make<AntV5>(1, 0, 1);
  const mjModel& m = probe.env->model();
  const int torso = BodyId(m, "torso");
  double contact_cost_max = 0.0;
  int clipped = 0;  // cfrc_ext entries beyond +-1 (the clip at work)
  const int terminations = ShadowSteps<AntV5>(
      41, 42, 2000, 1.0,
      [&](int t, const float* a, const mjData& before, const mjData& d, const VecEnv& vec) {
        const bool healthy = 0.2 <= d.qpos[2] && d.qpos[2] <= 1.0;
        EXPECT_EQ(vec.terminated()[0], healthy ? 0 : 1) << "step " << t;
        double contact_sq = 0.0;
        for (int k = 0; k < 6 * m.nbody; ++k) {
          const double f = std::clamp(d.cfrc_ext[k], -1.0, 1.0);
          contact_sq += f * f;
          clipped += std::abs(d.cfrc_ext[k]) > 1.0;
        }
        const double contact_cost = 5e-4 * contact_sq;
        contact_cost_max = std::max(contact_cost_max, contact_cost);
        const double dx = d.xpos[3 * torso] - before.xpos[3 * torso];
        const double expected =
            dx / 0.05 + (healthy ? 1.0 : 0.0) - 0.5 * CtrlSq(a, 8) - contact_cost;
        EXPECT_NEAR(vec.reward()[0], expected, 1e-5 * (1.0 + std::abs(expected))) << "step " << t;
        std::vector<double> want(d.qpos + 2, d.qpos + 15);
        want.insert(want.end(), d.qvel, d.qvel + 14);
        for (int k = 6; k < 6 * 14; ++k) want.push_back(std::clamp(d.cfrc_ext[k], -1.0, 1.0));
        ASSERT_EQ(want.size(), 105u);
        for (int k = 0; k < 105; ++k) {
          EXPECT_EQ(vec.final_obs()[k], static_cast<float>(want[k])) << "step " << t << " " << k;
        }
        if (!healthy) {
          for (int k = 27; k < 105; ++k) EXPECT_EQ(vec.obs()[k], 0.0f) << "reset obs " << k;
        }
      });
  EXPECT_GE(terminations, 5);
  EXPECT_GT(clipped, 100);  // the feet's contact forces pass 1 N often
  // Every foot on the floor clipped at 1 on its 6 entries is 4 x 6 x 5e-4 = 0.012 at most here.
  EXPECT_GT(contact_cost_max, 1e-3);
}

// Humanoid-v5 (ExpectHumanoidSteps): the healthy reward 5 on healthy steps only, the contact
// cost min(5e-7 |cfrc_ext|^2, 10), the 348-value observation.
TEST(LocomotionV5Test, HumanoidV5StepsRewardsAndObservesAsGymnasium) {
  ExpectHumanoidSteps<HumanoidV5>(true);
}

// HumanoidStandup-v5 (ExpectHumanoidStandupSteps): v4's reward with the 348-value observation.
TEST(LocomotionV5Test, HumanoidStandupV5StepsRewardsAndObservesAsGymnasium) {
  ExpectHumanoidStandupSteps<HumanoidStandupV5>(true);
}

// The contact cost's cap: HumanoidStandup dropped from 3 m lands with contact forces whose
// 0.5e-6 |cfrc_ext|^2 passes 10, and the reward then subtracts 10 (the cost's range
// (-inf, 10), as humanoid_v5.py's contact_cost_range and HumanoidStandup's impact_cost_range).
TEST(LocomotionV5Test, ContactCostIsCappedAtTen) {
  Harness h = Make<HumanoidStandupV5>(1, 3, 1);
  const mjModel& m = h.env->model();
  mj_forward(&m, &h.env->data(0));
  h.env->data(0).qpos[2] = 3.0;
  mj_forward(&m, &h.env->data(0));
  DataPtr shadow = MakeData(m);
  double largest_uncapped = 0.0;
  for (int t = 0; t < 100; ++t) {
    mj_copyData(shadow.get(), &m, &h.env->data(0));
    for (int k = 0; k < 17; ++k) h.vec->continuous_actions()[k] = shadow->ctrl[k] = 0.0f;
    for (int k = 0; k < 5; ++k) mj_step(&m, shadow.get());
    mj_rnePostConstraint(&m, shadow.get());
    h.vec->Step();
    double sq = 0.0;
    for (int k = 0; k < 84; ++k) sq += shadow->cfrc_ext[k] * shadow->cfrc_ext[k];
    largest_uncapped = std::max(largest_uncapped, 0.5e-6 * sq);
    const double expected = shadow->qpos[2] / 0.003 - std::min(0.5e-6 * sq, 10.0) + 1.0;
    ASSERT_NEAR(h.vec->reward()[0], expected, 1e-5 * std::abs(expected)) << "step " << t;
  }
  EXPECT_GT(largest_uncapped, 10.0);  // the landing passes the cap
}

// InvertedPendulum-v5 (inverted_pendulum_v5.py): reward = int(not terminated), so 0 on the
// terminating step (v4: 1), terminated exactly when |angle| > 0.2 rad.
TEST(LocomotionV5Test, InvertedPendulumV5EarnsNothingOnTheTerminatingStep) {
  const int terminations = ShadowSteps<InvertedPendulumV5>(
      61, 62, 3000, 3.0,
      [](int t, const float*, const mjData&, const mjData& d, const VecEnv& vec) {
        const bool terminated = std::abs(d.qpos[1]) > 0.2;
        EXPECT_EQ(vec.terminated()[0], terminated ? 1 : 0) << "step " << t;
        EXPECT_EQ(vec.reward()[0], terminated ? 0.0f : 1.0f) << "step " << t;
        EXPECT_EQ(vec.final_obs()[1], static_cast<float>(d.qpos[1])) << "step " << t;
      });
  EXPECT_GE(terminations, 100);
}

// InvertedDoublePendulum-v5 (ExpectDoublePendulumSteps): the alive bonus 10 only when not
// terminated, the cart's constraint force the only one observed (9 values).
TEST(LocomotionV5Test, InvertedDoublePendulumV5StepsRewardsAndObservesAsGymnasium) {
  ExpectDoublePendulumSteps<InvertedDoublePendulumV5>(true);
}

// Reacher-v5 (ExpectReacherSteps): the distance AFTER the step, fingertip - target as x, y.
TEST(LocomotionV5Test, ReacherV5RewardsTheDistanceAfterTheStep) {
  ExpectReacherSteps<ReacherV5>(true);
}

// Pusher-v5 (ExpectPusherSteps): the distances AFTER the step.
TEST(LocomotionV5Test, PusherV5RewardsTheDistancesAfterTheStep) {
  ExpectPusherSteps<PusherV5>(true);
}

}  // namespace
}  // namespace greenrl::env::mujoco
