// mujoco_test.cc: HalfCheetah-v4, Hopper-v4, Walker2d-v4, Ant-v4, Swimmer-v4, Humanoid-v4,
// HumanoidStandup-v4, InvertedPendulum-v4, InvertedDoublePendulum-v4, Reacher-v4 and Pusher-v4 on
// libmujoco: the models' physical constants against Gymnasium's published values, loader errors,
// spaces and reset bounds, determinism per seed across thread counts, the reward identity, each
// task's termination rule, the TimeLimits, Swimmer's fluid, Pusher's contacts, and recovery from
// numerical faults and engine errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "greenrl/core/rng.h"
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
#include "greenrl/env/vec_env.h"

namespace greenrl::env::mujoco {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Joint `id` is limited to [low_deg, high_deg] degrees (MuJoCo stores radians).
void ExpectLimitedDegrees(const mjModel& m, int id, double low_deg, double high_deg) {
  const char* name = mj_id2name(&m, mjOBJ_JOINT, id);
  EXPECT_TRUE(m.jnt_limited[id]) << name;
  EXPECT_NEAR(m.jnt_range[2 * id], low_deg * kPi / 180.0, 1e-12) << name;
  EXPECT_NEAR(m.jnt_range[2 * id + 1], high_deg * kPi / 180.0, 1e-12) << name;
}

// The model's sizes (nq, nv, nu), its timestep (s) and the RK4 integrator, as Gymnasium's model
// sets them (every model here but HalfCheetah's and Pusher's, which keep MuJoCo's default Euler).
void ExpectSizesAndRk4(const mjModel& m, int nq, int nv, int nu, double timestep) {
  EXPECT_EQ(m.nq, nq);
  EXPECT_EQ(m.nv, nv);
  EXPECT_EQ(m.nu, nu);
  EXPECT_DOUBLE_EQ(m.opt.timestep, timestep);
  EXPECT_EQ(m.opt.integrator, mjINT_RK4);
}
int JointId(const mjModel& m, const char* name) { return mj_name2id(&m, mjOBJ_JOINT, name); }

// ---------------------------------------------------------------------------------------------
// Physical constants. Published values:
//  - body masses as the mujoco >= 2.1 bindings compile Gymnasium's v4 models
//    (env.unwrapped.model.body_mass, as printed in public Gymnasium projects' parameter tables):
//    HalfCheetah [0, 6.25020921, 1.54351464, 1.5874477, 1.09539749, 1.43807531, 1.20083682,
//    0.88451883] (settotalmass 14 kg); Hopper [0, 3.66519143, 4.05789051, 2.78135670, 5.31557477]
//    (capsules of density 1000 kg/m^3, e.g. the torso 1000 (pi 0.05^2 0.4 + 4/3 pi 0.05^3) =
//    3.66519 kg). (Tables made with mujoco-py, HalfCheetah-v2/v3, list 6.36031332, 1.53524804,
//    ...: the old engine counted a capsule's end caps as 3/4 of a sphere; MuJoCo 2.x counts the
//    full sphere, and so do greenrl's numbers.)
//  - joint ranges, damping, stiffness, armature, gears and timesteps: Gymnasium's
//    gymnasium/envs/mujoco/assets/half_cheetah.xml and hopper.xml; frame_skip 5 and 4:
//    half_cheetah_v4.py and hopper_v4.py (their docstrings: dt = 5 x 0.01 = 0.05 and
//    dt = 4 x 0.002 = 0.008).
// ---------------------------------------------------------------------------------------------

TEST(MujocoModelTest, HalfCheetahPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("half_cheetah.xml"));
  const mjModel& m = *model;
  EXPECT_EQ(m.nq, 9);
  EXPECT_EQ(m.nv, 9);
  EXPECT_EQ(m.nu, 6);
  EXPECT_EQ(m.nbody, 8);
  EXPECT_DOUBLE_EQ(m.opt.timestep, 0.01);
  EXPECT_DOUBLE_EQ(m.opt.gravity[2], -9.81);
  const char* bodies[] = {"torso", "bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot"};
  const double masses[] = {6.25020921, 1.54351464, 1.5874477, 1.09539749,
                           1.43807531, 1.20083682, 0.88451883};
  double total = 0.0;
  for (int b = 0; b < 7; ++b) {
    const int id = BodyId(m, bodies[b]);
    ASSERT_GE(id, 0) << bodies[b];
    EXPECT_NEAR(m.body_mass[id], masses[b], 1e-8) << bodies[b];
  }
  for (int b = 0; b < m.nbody; ++b) total += m.body_mass[b];
  EXPECT_NEAR(total, 14.0, 1e-9);
  // name, range low/high (rad), damping, stiffness, armature, gear
  struct Joint {
    const char* name;
    double low, high, damping, stiffness, armature, gear;
  };
  const Joint joints[] = {
      {"bthigh", -.52, 1.05, 6.0, 240.0, 0.1, 120.0}, {"bshin", -.785, .785, 4.5, 180.0, 0.1, 90.0},
      {"bfoot", -.4, .785, 3.0, 120.0, 0.1, 60.0},    {"fthigh", -1.0, .7, 4.5, 180.0, 0.1, 120.0},
      {"fshin", -1.2, .87, 3.0, 120.0, 0.1, 60.0},    {"ffoot", -.5, .5, 1.5, 60.0, 0.1, 30.0},
  };
  for (int a = 0; a < 6; ++a) {
    const Joint& j = joints[a];
    const int id = JointId(m, j.name);
    ASSERT_GE(id, 0) << j.name;
    const int dof = m.jnt_dofadr[id];
    EXPECT_TRUE(m.jnt_limited[id]) << j.name;
    EXPECT_DOUBLE_EQ(m.jnt_range[2 * id], j.low) << j.name;
    EXPECT_DOUBLE_EQ(m.jnt_range[2 * id + 1], j.high) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_damping[dof], j.damping) << j.name;
    EXPECT_DOUBLE_EQ(m.jnt_stiffness[id], j.stiffness) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_armature[dof], j.armature) << j.name;
    EXPECT_EQ(m.actuator_trnid[2 * a], id) << "actuator " << a;
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], j.gear) << j.name;
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a], -1.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a + 1], 1.0);
  }
  // The planar root: no damping, stiffness or armature.
  for (const char* root : {"rootx", "rootz", "rooty"}) {
    const int id = JointId(m, root);
    ASSERT_GE(id, 0);
    EXPECT_FALSE(m.jnt_limited[id]);
    EXPECT_EQ(m.dof_damping[m.jnt_dofadr[id]], 0.0);
    EXPECT_EQ(m.dof_armature[m.jnt_dofadr[id]], 0.0);
  }
}

TEST(MujocoModelTest, HopperPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("hopper.xml"));
  const mjModel& m = *model;
  ExpectSizesAndRk4(m, 6, 6, 3, 0.002);
  const char* bodies[] = {"torso", "thigh", "leg", "foot"};
  const double masses[] = {3.66519143, 4.05789051, 2.78135670, 5.31557477};
  double total = 0.0;
  for (int b = 0; b < 4; ++b) {
    const int id = BodyId(m, bodies[b]);
    ASSERT_GE(id, 0) << bodies[b];
    EXPECT_NEAR(m.body_mass[id], masses[b], 1e-7) << bodies[b];
    total += masses[b];
  }
  double model_total = 0.0;
  for (int b = 0; b < m.nbody; ++b) model_total += m.body_mass[b];
  EXPECT_NEAR(model_total, total, 1e-7);  // 15.81999 kg
  EXPECT_DOUBLE_EQ(m.qpos0[1], 1.25);     // rootz ref: the torso starts 1.25 m up
  struct Joint {
    const char* name;
    double low_deg, high_deg;
  };
  const Joint joints[] = {
      {"thigh_joint", -150, 0}, {"leg_joint", -150, 0}, {"foot_joint", -45, 45}};
  for (int a = 0; a < 3; ++a) {
    const int id = JointId(m, joints[a].name);
    ASSERT_GE(id, 0) << joints[a].name;
    const int dof = m.jnt_dofadr[id];
    EXPECT_NEAR(m.jnt_range[2 * id], joints[a].low_deg * kPi / 180.0, 1e-12);
    EXPECT_NEAR(m.jnt_range[2 * id + 1], joints[a].high_deg * kPi / 180.0, 1e-12);
    EXPECT_DOUBLE_EQ(m.dof_damping[dof], 1.0);
    EXPECT_DOUBLE_EQ(m.dof_armature[dof], 1.0);
    EXPECT_DOUBLE_EQ(m.jnt_stiffness[id], 0.0);
    EXPECT_EQ(m.actuator_trnid[2 * a], id);
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], 200.0);
  }
  // Foot friction 2.0, the other limbs 0.9 (sliding friction coefficient).
  EXPECT_DOUBLE_EQ(m.geom_friction[3 * mj_name2id(&m, mjOBJ_GEOM, "foot_geom")], 2.0);
  EXPECT_DOUBLE_EQ(m.geom_friction[3 * mj_name2id(&m, mjOBJ_GEOM, "thigh_geom")], 0.9);
}

// Mass of a capsule of radius r and half-length h at density 1000 kg/m^3, as MuJoCo >= 2.1
// computes it (inertiafromgeom): a cylinder plus two full hemispheres.
double CapsuleMass(double r, double h) {
  return 1000.0 * (kPi * r * r * 2.0 * h + 4.0 / 3.0 * kPi * r * r * r);
}

// Walker2d-v4's model: Gymnasium's walker2d.xml (masses from its capsules; joint ranges,
// damping, armature, gears, friction, timestep), walker2d_v4.py's frame_skip 4.
TEST(MujocoModelTest, Walker2dPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("walker2d.xml"));
  const mjModel& m = *model;
  ExpectSizesAndRk4(m, 9, 9, 6, 0.002);
  EXPECT_EQ(m.nbody, 8);
  EXPECT_DOUBLE_EQ(m.opt.gravity[2], -9.81);
  struct Body {
    const char* name;
    double radius, half_length, mass;  // mass: the published figure to 5 decimals
  };
  const Body bodies[] = {{"torso", 0.05, 0.2, 3.66519},        {"thigh", 0.05, 0.225, 4.05789},
                         {"leg", 0.04, 0.25, 2.78136},         {"foot", 0.06, 0.1, 3.16673},
                         {"thigh_left", 0.05, 0.225, 4.05789}, {"leg_left", 0.04, 0.25, 2.78136},
                         {"foot_left", 0.06, 0.1, 3.16673}};
  double total = 0.0;
  for (const Body& b : bodies) {
    const int id = BodyId(m, b.name);
    ASSERT_GE(id, 0) << b.name;
    EXPECT_NEAR(m.body_mass[id], CapsuleMass(b.radius, b.half_length), 1e-9) << b.name;
    EXPECT_NEAR(m.body_mass[id], b.mass, 5e-6) << b.name;
    total += m.body_mass[id];
  }
  EXPECT_NEAR(total, 23.67714, 1e-5);
  EXPECT_DOUBLE_EQ(m.qpos0[1], 1.25);  // rootz ref: the torso starts 1.25 m up
  struct Joint {
    const char* name;
    double low_deg, high_deg;
  };
  // In Walker2d-v4's action order.
  const Joint joints[] = {{"thigh_joint", -150, 0},    {"leg_joint", -150, 0},
                          {"foot_joint", -45, 45},     {"thigh_left_joint", -150, 0},
                          {"leg_left_joint", -150, 0}, {"foot_left_joint", -45, 45}};
  for (int a = 0; a < 6; ++a) {
    const int id = JointId(m, joints[a].name);
    ASSERT_GE(id, 0) << joints[a].name;
    const int dof = m.jnt_dofadr[id];
    EXPECT_TRUE(m.jnt_limited[id]) << joints[a].name;
    EXPECT_NEAR(m.jnt_range[2 * id], joints[a].low_deg * kPi / 180.0, 1e-12);
    EXPECT_NEAR(m.jnt_range[2 * id + 1], joints[a].high_deg * kPi / 180.0, 1e-12);
    EXPECT_DOUBLE_EQ(m.dof_damping[dof], 0.1) << joints[a].name;
    EXPECT_DOUBLE_EQ(m.dof_armature[dof], 0.01) << joints[a].name;
    EXPECT_DOUBLE_EQ(m.jnt_stiffness[id], 0.0);
    EXPECT_EQ(m.actuator_trnid[2 * a], id) << "actuator " << a;
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], 100.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a], -1.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a + 1], 1.0);
  }
  for (const char* root : {"rootx", "rootz", "rooty"}) {
    const int dof = m.jnt_dofadr[JointId(m, root)];
    EXPECT_DOUBLE_EQ(m.dof_damping[dof], 0.0) << root;
    EXPECT_DOUBLE_EQ(m.dof_armature[dof], 0.0) << root;
  }
  // Sliding friction 0.9 on every limb but the left foot's 1.9 (v4), the floor 0.7; only the
  // floor has conaffinity, so limbs touch the floor and never each other.
  for (int g = 0; g < m.ngeom; ++g) {
    const std::string name = mj_id2name(&m, mjOBJ_GEOM, g);
    const double sliding = name == "floor" ? 0.7 : name == "foot_left_geom" ? 1.9 : 0.9;
    EXPECT_DOUBLE_EQ(m.geom_friction[3 * g], sliding) << name;
    EXPECT_DOUBLE_EQ(m.geom_friction[3 * g + 1], 0.1) << name;
    EXPECT_DOUBLE_EQ(m.geom_friction[3 * g + 2], 0.1) << name;
    EXPECT_EQ(m.geom_conaffinity[g], name == "floor" ? 1 : 0) << name;
    EXPECT_EQ(m.geom_contype[g], 1) << name;
    EXPECT_EQ(m.geom_condim[g], 3) << name;
  }
  // Foot capsules lie along x, from the ankle 0.2 m forward (global (0, 0.1) to (0.2, 0.1)).
  mjData* d = mj_makeData(&m);
  mj_forward(&m, d);
  const int foot = mj_name2id(&m, mjOBJ_GEOM, "foot_geom");
  EXPECT_NEAR(d->geom_xpos[3 * foot + 0], 0.1, 1e-12);
  EXPECT_NEAR(d->geom_xpos[3 * foot + 2], 0.1, 1e-12);
  const int thigh = mj_name2id(&m, mjOBJ_GEOM, "thigh_left_geom");
  EXPECT_NEAR(d->geom_xpos[3 * thigh + 2], 0.825, 1e-12);  // from 1.05 down to 0.6
  mj_deleteData(d);
}

// Ant-v4's model: Gymnasium's ant.xml (a free-joint sphere torso and four legs of capsules at
// density 5 kg/m^3; hinge ranges, damping, armature, gear 150, friction, margin, timestep 0.01 s
// with RK4), ant_v4.py's frame_skip 5.
TEST(MujocoModelTest, AntPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("ant.xml"));
  const mjModel& m = *model;
  ExpectSizesAndRk4(m, 15, 14, 8, 0.01);  // free joint 7 (x, y, z, quaternion) + 8 hinges
  EXPECT_EQ(m.nbody, 14);
  EXPECT_DOUBLE_EQ(m.opt.gravity[2], -9.81);
  // qpos0: the torso 0.75 m up, upright (quaternion 1, 0, 0, 0), every hinge at 0.
  const double qpos0[15] = {0, 0, 0.75, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 15; ++k) EXPECT_EQ(m.qpos0[k], qpos0[k]) << k;
  // Masses at density 5: the sphere 5 (4/3 pi 0.25^3); capsules of radius 0.08 (a cylinder
  // plus two full hemispheres) 0.2 sqrt(2) m long (hip segments) and 0.4 sqrt(2) m (shins).
  const double sphere = 5.0 * 4.0 / 3.0 * kPi * 0.25 * 0.25 * 0.25;
  const double hemis = 5.0 * 4.0 / 3.0 * kPi * 0.08 * 0.08 * 0.08;
  const double short_capsule = 5.0 * kPi * 0.08 * 0.08 * 0.2 * std::sqrt(2.0) + hemis;
  const double long_capsule = 5.0 * kPi * 0.08 * 0.08 * 0.4 * std::sqrt(2.0) + hemis;
  EXPECT_NEAR(m.body_mass[BodyId(m, "torso")], sphere, 1e-12);
  EXPECT_NEAR(sphere, 0.32725, 5e-6);
  EXPECT_NEAR(short_capsule, 0.03916, 5e-6);
  EXPECT_NEAR(long_capsule, 0.06759, 5e-6);
  for (const char* leg : {"front_left_leg", "front_right_leg", "back_leg", "right_back_leg"}) {
    const int upper = BodyId(m, leg);
    ASSERT_GE(upper, 0) << leg;
    EXPECT_NEAR(m.body_mass[upper], short_capsule, 1e-12) << leg;
    EXPECT_NEAR(m.body_mass[upper + 1], short_capsule, 1e-12) << leg;  // aux_i
    EXPECT_NEAR(m.body_mass[upper + 2], long_capsule, 1e-12) << leg;   // the shin
  }
  double total = 0.0;
  for (int b = 0; b < m.nbody; ++b) total += m.body_mass[b];
  EXPECT_NEAR(total, sphere + 4 * (2 * short_capsule + long_capsule), 1e-12);
  EXPECT_NEAR(total, 0.91088, 5e-6);
  // The free root: no damping, armature or limit.
  const int root = JointId(m, "root");
  ASSERT_GE(root, 0);
  EXPECT_EQ(m.jnt_type[root], mjJNT_FREE);
  EXPECT_FALSE(m.jnt_limited[root]);
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(m.dof_damping[k], 0.0) << k;
    EXPECT_EQ(m.dof_armature[k], 0.0) << k;
  }
  struct Joint {
    const char* name;
    double low_deg, high_deg;
    double axis_x, axis_y;  // the hinge axis's direction in its body (normalised by MuJoCo)
  };
  // In Ant-v4's action order.
  const Joint joints[] = {{"hip_4", -30, 30, 0, 0}, {"ankle_4", 30, 70, 1, 1},
                          {"hip_1", -30, 30, 0, 0}, {"ankle_1", 30, 70, -1, 1},
                          {"hip_2", -30, 30, 0, 0}, {"ankle_2", -70, -30, 1, 1},
                          {"hip_3", -30, 30, 0, 0}, {"ankle_3", -70, -30, -1, 1}};
  for (int a = 0; a < 8; ++a) {
    const Joint& j = joints[a];
    const int id = JointId(m, j.name);
    ASSERT_GE(id, 0) << j.name;
    const int dof = m.jnt_dofadr[id];
    ExpectLimitedDegrees(m, id, j.low_deg, j.high_deg);
    const bool hip = j.axis_x == 0.0;
    const double s = hip ? 0.0 : std::sqrt(0.5);
    EXPECT_NEAR(m.jnt_axis[3 * id + 0], j.axis_x * s, 1e-12) << j.name;
    EXPECT_NEAR(m.jnt_axis[3 * id + 1], j.axis_y * s, 1e-12) << j.name;
    EXPECT_NEAR(m.jnt_axis[3 * id + 2], hip ? 1.0 : 0.0, 1e-12) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_damping[dof], 1.0) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_armature[dof], 1.0) << j.name;
    EXPECT_DOUBLE_EQ(m.jnt_stiffness[id], 0.0) << j.name;
    EXPECT_EQ(m.actuator_trnid[2 * a], id) << "actuator " << a;
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], 150.0) << j.name;
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a], -1.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a + 1], 1.0);
  }
  // Friction (1, 0.5, 0.5) and margin 0.01 m everywhere, the floor included; only the floor has
  // conaffinity, so the legs touch the floor and never each other or the torso.
  for (int g = 0; g < m.ngeom; ++g) {
    const std::string name = mj_id2name(&m, mjOBJ_GEOM, g);
    EXPECT_DOUBLE_EQ(m.geom_friction[3 * g], 1.0) << name;
    EXPECT_DOUBLE_EQ(m.geom_friction[3 * g + 1], 0.5) << name;
    EXPECT_DOUBLE_EQ(m.geom_friction[3 * g + 2], 0.5) << name;
    EXPECT_DOUBLE_EQ(m.geom_margin[g], 0.01) << name;
    EXPECT_EQ(m.geom_conaffinity[g], name == "floor" ? 1 : 0) << name;
    EXPECT_EQ(m.geom_contype[g], 1) << name;
    EXPECT_EQ(m.geom_condim[g], 3) << name;
  }
  // The legs point along the diagonals: the front left foot's tip at (0.8, 0.8) m from the torso
  // centre when every hinge is at 0 (0.2 + 0.2 + 0.4 along x and y).
  mjData* d = mj_makeData(&m);
  mj_forward(&m, d);
  const int shin = mj_name2id(&m, mjOBJ_GEOM, "left_ankle_geom");
  EXPECT_NEAR(d->geom_xpos[3 * shin + 0], 0.6, 1e-12);  // the shin capsule's centre
  EXPECT_NEAR(d->geom_xpos[3 * shin + 1], 0.6, 1e-12);
  EXPECT_NEAR(d->geom_xpos[3 * shin + 2], 0.75, 1e-12);
  const int back_shin = mj_name2id(&m, mjOBJ_GEOM, "third_ankle_geom");
  EXPECT_NEAR(d->geom_xpos[3 * back_shin + 0], -0.6, 1e-12);
  EXPECT_NEAR(d->geom_xpos[3 * back_shin + 1], -0.6, 1e-12);
  mj_deleteData(d);
}

// Swimmer-v4's model: Gymnasium's swimmer.xml (three capsules of radius 0.1 m and length 1 m at
// density 1000 kg/m^3; slides x, y and a hinge at the front, two rotors limited to +-100 degrees,
// armature 0.1 everywhere, gear 150; a fluid of density 4000 and viscosity 0.1; timestep 0.01 s
// with RK4), swimmer_v4.py's frame_skip 4.
TEST(MujocoModelTest, SwimmerPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("swimmer.xml"));
  const mjModel& m = *model;
  ExpectSizesAndRk4(m, 5, 5, 2, 0.01);
  EXPECT_EQ(m.nbody, 4);  // the world, torso, mid, back
  EXPECT_DOUBLE_EQ(m.opt.density, 4000.0);
  EXPECT_DOUBLE_EQ(m.opt.viscosity, 0.1);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(m.qpos0[k], 0.0) << k;
  // Each link: 1000 (pi 0.1^2 1 + 4/3 pi 0.1^3) = 35.6047 kg.
  EXPECT_NEAR(CapsuleMass(0.1, 0.5), 35.6047, 5e-5);
  for (const char* body : {"torso", "mid", "back"}) {
    EXPECT_NEAR(m.body_mass[BodyId(m, body)], CapsuleMass(0.1, 0.5), 1e-10) << body;
  }
  // Links 1 m apart along -x: mid's frame 0.5 m behind the torso's, back's 1 m behind mid's.
  EXPECT_DOUBLE_EQ(m.body_pos[3 * BodyId(m, "mid")], 0.5);
  EXPECT_DOUBLE_EQ(m.body_pos[3 * BodyId(m, "back")], -1.0);
  struct Joint {
    const char* name;
    int type;
    int axis;  // 0 x, 1 y, 2 z
    bool limited;
  };
  // In qpos order.
  const Joint joints[] = {{"slider1", mjJNT_SLIDE, 0, false},
                          {"slider2", mjJNT_SLIDE, 1, false},
                          {"free_body_rot", mjJNT_HINGE, 2, false},
                          {"motor1_rot", mjJNT_HINGE, 2, true},
                          {"motor2_rot", mjJNT_HINGE, 2, true}};
  for (int k = 0; k < 5; ++k) {
    const Joint& j = joints[k];
    const int id = JointId(m, j.name);
    ASSERT_EQ(id, k) << j.name;
    EXPECT_EQ(m.jnt_type[id], j.type) << j.name;
    EXPECT_EQ(m.jnt_qposadr[id], k) << j.name;
    for (int c = 0; c < 3; ++c) EXPECT_EQ(m.jnt_axis[3 * id + c], c == j.axis ? 1.0 : 0.0);
    EXPECT_EQ(m.jnt_limited[id], j.limited) << j.name;
    if (j.limited) {
      EXPECT_NEAR(m.jnt_range[2 * id], -100.0 * kPi / 180.0, 1e-12) << j.name;
      EXPECT_NEAR(m.jnt_range[2 * id + 1], 100.0 * kPi / 180.0, 1e-12) << j.name;
    }
    EXPECT_DOUBLE_EQ(m.dof_armature[k], 0.1) << j.name;
    EXPECT_EQ(m.dof_damping[k], 0.0) << j.name;
    EXPECT_EQ(m.jnt_stiffness[id], 0.0) << j.name;
  }
  for (int a = 0; a < 2; ++a) {
    EXPECT_EQ(m.actuator_trnid[2 * a], 3 + a);  // motor1_rot, motor2_rot
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], 150.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a], -1.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a + 1], 1.0);
  }
  // No geom can collide (contype and conaffinity 0 on all four, the floor included).
  ASSERT_EQ(m.ngeom, 4);
  for (int g = 0; g < m.ngeom; ++g) {
    EXPECT_EQ(m.geom_contype[g], 0) << g;
    EXPECT_EQ(m.geom_conaffinity[g], 0) << g;
  }
}

// InvertedPendulum-v4's and InvertedDoublePendulum-v4's models: Gymnasium's
// inverted_pendulum.xml and inverted_double_pendulum.xml (geometry at density 1000, joint
// limits and damping, gears and ctrlranges, gravity, timesteps with RK4), frame_skip 2 and 5.
TEST(MujocoModelTest, InvertedPendulumsPhysicalConstantsMatchGymnasium) {
  ModelPtr single = LoadModel(AssetPath("inverted_pendulum.xml"));
  const mjModel& m = *single;
  ExpectSizesAndRk4(m, 2, 2, 1, 0.02);
  EXPECT_DOUBLE_EQ(m.opt.gravity[0], 0.0);
  EXPECT_DOUBLE_EQ(m.opt.gravity[2], -9.81);
  // The cart: a capsule of radius 0.1 and half-length 0.1; the pole: radius 0.049 from the
  // origin to (0.001, 0, 0.6).
  EXPECT_NEAR(m.body_mass[BodyId(m, "cart")], CapsuleMass(0.1, 0.1), 1e-10);
  EXPECT_NEAR(m.body_mass[BodyId(m, "cart")], 10.4720, 5e-5);
  const double pole_length = std::sqrt(0.001 * 0.001 + 0.6 * 0.6);
  EXPECT_NEAR(m.body_mass[BodyId(m, "pole")], CapsuleMass(0.049, pole_length / 2), 1e-10);
  EXPECT_NEAR(m.body_mass[BodyId(m, "pole")], 5.0186, 5e-5);
  const int slider = JointId(m, "slider");
  const int hinge = JointId(m, "hinge");
  EXPECT_EQ(m.jnt_type[slider], mjJNT_SLIDE);
  EXPECT_EQ(m.jnt_type[hinge], mjJNT_HINGE);
  EXPECT_DOUBLE_EQ(m.jnt_axis[3 * slider], 1.0);
  EXPECT_DOUBLE_EQ(m.jnt_axis[3 * hinge + 1], 1.0);
  EXPECT_TRUE(m.jnt_limited[slider]);
  EXPECT_TRUE(m.jnt_limited[hinge]);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * slider], -1.0);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * slider + 1], 1.0);
  EXPECT_NEAR(m.jnt_range[2 * hinge], -kPi / 2, 1e-12);
  EXPECT_NEAR(m.jnt_range[2 * hinge + 1], kPi / 2, 1e-12);
  for (int k = 0; k < 2; ++k) {
    EXPECT_DOUBLE_EQ(m.dof_damping[k], 1.0) << k;
    EXPECT_EQ(m.dof_armature[k], 0.0) << k;
  }
  EXPECT_EQ(m.actuator_trnid[0], slider);
  EXPECT_DOUBLE_EQ(m.actuator_gear[0], 100.0);
  EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[0], -3.0);
  EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[1], 3.0);
  for (int g = 0; g < m.ngeom; ++g) EXPECT_EQ(m.geom_contype[g], 0) << g;

  ModelPtr two = LoadModel(AssetPath("inverted_double_pendulum.xml"));
  const mjModel& m2 = *two;
  ExpectSizesAndRk4(m2, 3, 3, 1, 0.01);
  EXPECT_DOUBLE_EQ(m2.opt.gravity[0], 1e-5);  // Gymnasium's, kept
  EXPECT_DOUBLE_EQ(m2.opt.gravity[2], -9.81);
  EXPECT_NEAR(m2.body_mass[BodyId(m2, "cart")], CapsuleMass(0.1, 0.1), 1e-10);
  for (const char* pole : {"pole", "pole2"}) {
    EXPECT_NEAR(m2.body_mass[BodyId(m2, pole)], CapsuleMass(0.045, 0.3), 1e-10) << pole;
  }
  EXPECT_NEAR(CapsuleMass(0.045, 0.3), 4.1987, 5e-5);
  const int slider2 = JointId(m2, "slider");
  EXPECT_TRUE(m2.jnt_limited[slider2]);
  EXPECT_DOUBLE_EQ(m2.jnt_range[2 * slider2 + 1], 1.0);
  EXPECT_DOUBLE_EQ(m2.jnt_margin[slider2], 0.01);
  EXPECT_FALSE(m2.jnt_limited[JointId(m2, "hinge")]);
  EXPECT_FALSE(m2.jnt_limited[JointId(m2, "hinge2")]);
  for (int k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(m2.dof_damping[k], 0.05) << k;
  EXPECT_DOUBLE_EQ(m2.actuator_gear[0], 500.0);
  EXPECT_DOUBLE_EQ(m2.actuator_ctrlrange[1], 1.0);
  for (int g = 0; g < m2.ngeom; ++g) EXPECT_EQ(m2.geom_contype[g], 0) << g;
  // Upright, the tip site is 1.2 m up.
  DataPtr d = MakeData(m2);
  mj_forward(&m2, d.get());
  const int tip = mj_name2id(&m2, mjOBJ_SITE, "tip");
  ASSERT_EQ(tip, 0);
  EXPECT_NEAR(d->site_xpos[0], 0.0, 1e-15);
  EXPECT_NEAR(d->site_xpos[2], 1.2, 1e-12);
}

// Reacher-v4's model: Gymnasium's reacher.xml (two 0.1 m links of radius 0.01 at density 1000,
// armature 1 and damping 1, joint1 limited to +-3 rad, gear 200; the target on two undamped
// slides limited to +-0.27 m with refs 0.1 and -0.1; timestep 0.01 s with RK4), frame_skip 2.
TEST(MujocoModelTest, ReacherPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("reacher.xml"));
  const mjModel& m = *model;
  ExpectSizesAndRk4(m, 4, 4, 2, 0.01);
  const double qpos0[4] = {0.0, 0.0, 0.1, -0.1};  // the target slides' refs
  for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(m.qpos0[k], qpos0[k]) << k;
  for (const char* body : {"body0", "body1"}) {
    EXPECT_NEAR(m.body_mass[BodyId(m, body)], CapsuleMass(0.01, 0.05), 1e-12) << body;
  }
  EXPECT_NEAR(m.body_mass[BodyId(m, "fingertip")], 1000.0 * 4.0 / 3.0 * kPi * 1e-6, 1e-12);
  EXPECT_NEAR(m.body_mass[BodyId(m, "target")], 1000.0 * 4.0 / 3.0 * kPi * 0.009 * 0.009 * 0.009,
              1e-12);
  const int joint0 = JointId(m, "joint0");
  const int joint1 = JointId(m, "joint1");
  EXPECT_FALSE(m.jnt_limited[joint0]);
  EXPECT_TRUE(m.jnt_limited[joint1]);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * joint1], -3.0);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * joint1 + 1], 3.0);
  for (int k = 0; k < 2; ++k) {
    EXPECT_DOUBLE_EQ(m.dof_armature[k], 1.0) << k;
    EXPECT_DOUBLE_EQ(m.dof_damping[k], 1.0) << k;
    EXPECT_EQ(m.actuator_trnid[2 * k], k);
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * k], 200.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * k], -1.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * k + 1], 1.0);
  }
  for (const char* slide : {"target_x", "target_y"}) {
    const int id = JointId(m, slide);
    EXPECT_EQ(m.jnt_type[id], mjJNT_SLIDE) << slide;
    EXPECT_TRUE(m.jnt_limited[id]) << slide;
    EXPECT_DOUBLE_EQ(m.jnt_range[2 * id], -0.27) << slide;
    EXPECT_DOUBLE_EQ(m.jnt_range[2 * id + 1], 0.27) << slide;
    EXPECT_EQ(m.dof_armature[m.jnt_dofadr[id]], 0.0) << slide;
    EXPECT_EQ(m.dof_damping[m.jnt_dofadr[id]], 0.0) << slide;
  }
  for (int g = 0; g < m.ngeom; ++g) EXPECT_EQ(m.geom_contype[g], 0) << g;
  // Straight out, the fingertip is 0.21 m from the base, 0.01 m up; the target at (0.1, -0.1).
  DataPtr d = MakeData(m);
  mj_forward(&m, d.get());
  EXPECT_NEAR(d->xpos[3 * BodyId(m, "fingertip")], 0.21, 1e-12);
  EXPECT_NEAR(d->xpos[3 * BodyId(m, "fingertip") + 2], 0.01, 1e-12);
  EXPECT_NEAR(d->xpos[3 * BodyId(m, "target")], 0.1, 1e-12);
  EXPECT_NEAR(d->xpos[3 * BodyId(m, "target") + 1], -0.1, 1e-12);
}

// Humanoid-v4's model: Gymnasium's humanoid.xml (geoms at density 1000; the hinges' ranges,
// stiffness, damping and armature; the hip-knee tendons; gears; the Newton solver with 50
// iterations; timestep 0.003 s with RK4), humanoid_v4.py's frame_skip 5.
TEST(MujocoModelTest, HumanoidPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("humanoid.xml"));
  const mjModel& m = *model;
  ExpectSizesAndRk4(m, 24, 23, 17, 0.003);  // free joint 7 + 17 hinges
  EXPECT_EQ(m.nbody, 14);
  EXPECT_EQ(m.ntendon, 2);
  EXPECT_EQ(m.opt.solver, mjSOL_NEWTON);
  EXPECT_EQ(m.opt.iterations, 50);
  EXPECT_DOUBLE_EQ(m.qpos0[2], 1.4);
  EXPECT_DOUBLE_EQ(m.qpos0[3], 1.0);
  // Body masses, the world first, as the mujoco >= 2.1 bindings compile Gymnasium's model (public
  // parameter tables of Humanoid-v4, e.g. MO-Gymnasium's: torso 8.907462370478262, lwaist
  // 2.261946710584651, ...): the torso is its capsule (r 0.07, 0.14 m), head sphere (r 0.09) and
  // upper waist (r 0.06, 0.12 m); the feet are spheres of radius 0.075.
  const double masses[14] = {0.0,        8.90746237, 2.26194671, 6.61619413, 4.75175093,
                             2.75569617, 1.76714587, 4.75175093, 2.75569617, 1.76714587,
                             1.66108048, 1.22954019, 1.66108048, 1.22954019};
  double total = 0.0;
  for (int b = 0; b < 14; ++b) {
    EXPECT_NEAR(m.body_mass[b], masses[b], 5e-8) << mj_id2name(&m, mjOBJ_BODY, b);
    total += m.body_mass[b];
  }
  EXPECT_NEAR(total, 42.11603, 5e-5);
  const double sphere = [](double r) { return 1000.0 * 4.0 / 3.0 * kPi * r * r * r; }(0.09);
  EXPECT_NEAR(m.body_mass[BodyId(m, "torso")],
              CapsuleMass(0.07, 0.07) + sphere + CapsuleMass(0.06, 0.06), 1e-10);
  EXPECT_NEAR(m.body_mass[BodyId(m, "right_foot")],
              1000.0 * 4.0 / 3.0 * kPi * 0.075 * 0.075 * 0.075, 1e-10);
  struct Joint {
    const char* name;
    double low_deg, high_deg, stiffness, damping, armature, gear;
  };
  // In the actuators' order.
  const Joint joints[17] = {{"abdomen_y", -75, 30, 10, 5, 0.02, 100},
                            {"abdomen_z", -45, 45, 20, 5, 0.02, 100},
                            {"abdomen_x", -35, 35, 10, 5, 0.02, 100},
                            {"right_hip_x", -25, 5, 10, 5, 0.01, 100},
                            {"right_hip_z", -60, 35, 10, 5, 0.01, 100},
                            {"right_hip_y", -110, 20, 20, 5, 0.008, 300},
                            {"right_knee", -160, -2, 0, 1, 0.006, 200},
                            {"left_hip_x", -25, 5, 10, 5, 0.01, 100},
                            {"left_hip_z", -60, 35, 10, 5, 0.01, 100},
                            {"left_hip_y", -110, 20, 20, 5, 0.01, 300},
                            {"left_knee", -160, -2, 1, 1, 0.006, 200},
                            {"right_shoulder1", -85, 60, 1, 1, 0.0068, 25},
                            {"right_shoulder2", -85, 60, 1, 1, 0.0051, 25},
                            {"right_elbow", -90, 50, 0, 1, 0.0028, 25},
                            {"left_shoulder1", -60, 85, 1, 1, 0.0068, 25},
                            {"left_shoulder2", -60, 85, 1, 1, 0.0051, 25},
                            {"left_elbow", -90, 50, 0, 1, 0.0028, 25}};
  for (int a = 0; a < 17; ++a) {
    const Joint& j = joints[a];
    const int id = JointId(m, j.name);
    ASSERT_GE(id, 0) << j.name;
    const int dof = m.jnt_dofadr[id];
    ExpectLimitedDegrees(m, id, j.low_deg, j.high_deg);
    EXPECT_DOUBLE_EQ(m.jnt_stiffness[id], j.stiffness) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_damping[dof], j.damping) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_armature[dof], j.armature) << j.name;
    EXPECT_EQ(m.actuator_trnid[2 * a], id) << j.name;
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], j.gear) << j.name;
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a], -0.4) << j.name;
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a + 1], 0.4) << j.name;
  }
  // The tendons: -hip_y + knee on each side.
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(m.tendon_num[t], 2);
    const int adr = m.tendon_adr[t];
    EXPECT_EQ(m.wrap_prm[adr], -1.0);
    EXPECT_EQ(m.wrap_prm[adr + 1], 1.0);
  }
  // Every body geom collides (contype/conaffinity 1, condim 1, margin 0.001); the floor has
  // condim 3 and friction (1, 0.1, 0.1).
  for (int g = 0; g < m.ngeom; ++g) {
    const std::string name = mj_id2name(&m, mjOBJ_GEOM, g);
    EXPECT_EQ(m.geom_contype[g], 1) << name;
    EXPECT_EQ(m.geom_conaffinity[g], 1) << name;
    EXPECT_DOUBLE_EQ(m.geom_margin[g], 0.001) << name;
    EXPECT_EQ(m.geom_condim[g], name == "floor" ? 3 : 1) << name;
  }
  const int floor = mj_name2id(&m, mjOBJ_GEOM, "floor");
  EXPECT_DOUBLE_EQ(m.geom_friction[3 * floor + 1], 0.1);
}

// HumanoidStandup-v4's model: Gymnasium's humanoidstandup.xml, Humanoid-v4's body lying on the
// floor along x: the same geoms (so the same masses), joints, tendons, gears and solver, the root
// 0.105 m up, and the left hip's y range [-120, 20] degrees where humanoid.xml has [-110, 20].
TEST(MujocoModelTest, HumanoidStandupPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("humanoidstandup.xml"));
  ModelPtr upright = LoadModel(AssetPath("humanoid.xml"));
  const mjModel& m = *model;
  ExpectSizesAndRk4(m, 24, 23, 17, 0.003);
  EXPECT_EQ(m.nbody, 14);
  EXPECT_EQ(m.ntendon, 2);
  EXPECT_EQ(m.opt.solver, mjSOL_NEWTON);
  EXPECT_EQ(m.opt.iterations, 50);
  EXPECT_DOUBLE_EQ(m.qpos0[2], 0.105);
  EXPECT_DOUBLE_EQ(m.qpos0[3], 1.0);
  for (int b = 0; b < 14; ++b) {
    EXPECT_NEAR(m.body_mass[b], upright->body_mass[b], 1e-12) << mj_id2name(&m, mjOBJ_BODY, b);
  }
  for (int j = 0; j < m.njnt; ++j) {
    const std::string name = mj_id2name(&m, mjOBJ_JOINT, j);
    EXPECT_EQ(name, mj_id2name(upright.get(), mjOBJ_JOINT, j));
    if (name == "left_hip_y") {
      ExpectLimitedDegrees(m, j, -120, 20);
      ExpectLimitedDegrees(*upright, j, -110, 20);
    } else {
      EXPECT_DOUBLE_EQ(m.jnt_range[2 * j], upright->jnt_range[2 * j]) << name;
      EXPECT_DOUBLE_EQ(m.jnt_range[2 * j + 1], upright->jnt_range[2 * j + 1]) << name;
    }
    EXPECT_DOUBLE_EQ(m.jnt_stiffness[j], upright->jnt_stiffness[j]) << name;
  }
  for (int v = 0; v < m.nv; ++v) {
    EXPECT_DOUBLE_EQ(m.dof_damping[v], upright->dof_damping[v]) << v;
    EXPECT_DOUBLE_EQ(m.dof_armature[v], upright->dof_armature[v]) << v;
  }
  for (int a = 0; a < 17; ++a) {
    EXPECT_EQ(m.actuator_trnid[2 * a], upright->actuator_trnid[2 * a]) << a;
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], upright->actuator_gear[6 * a]) << a;
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a], -0.4) << a;
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a + 1], 0.4) << a;
  }
  for (int k = 0; k < m.nwrap; ++k) EXPECT_EQ(m.wrap_prm[k], upright->wrap_prm[k]) << k;
  // Lying along x: at qpos0 the right foot's body is 0.21 + 0.165 + 0.403 + 0.35 = 1.128 m out
  // along x, 0.1 m below the torso, and its sphere (0.1 m above the body's origin) at the
  // torso's height, 0.105 m (within 0.01 m: the waist and pelvis are tilted slightly, their
  // quat (1, 0, -0.002, 0)).
  DataPtr d = MakeData(m);
  mj_forward(&m, d.get());
  const int foot = BodyId(m, "right_foot");
  EXPECT_NEAR(d->xpos[3 * foot], 0.21 + 0.165 + 0.403 + 0.35, 0.01);
  EXPECT_NEAR(d->xpos[3 * foot + 2], 0.105 - 0.1, 0.01);
  EXPECT_NEAR(d->xipos[3 * foot + 2], 0.105, 0.01);
}

// Pusher-v4's model: Gymnasium's pusher.xml (arm geoms at density 300, joints with armature 0.04,
// their ranges and damping, 7 motors of gear 1 and ctrlrange [-2, 2]; the object of density
// 1e-5 on slides y, x; no gravity; Euler at 0.01 s with 20 iterations), pusher_v4.py's
// frame_skip 5. The object's mass, 1.30899694e-08 kg, is the one Gymnasium's pull request 1019
// quotes for Pusher-v4 (Pusher-v5 makes it 7.85398163e-06 kg).
TEST(MujocoModelTest, PusherPhysicalConstantsMatchGymnasium) {
  ModelPtr model = LoadModel(AssetPath("pusher.xml"));
  const mjModel& m = *model;
  EXPECT_EQ(m.nq, 11);
  EXPECT_EQ(m.nv, 11);
  EXPECT_EQ(m.nu, 7);
  EXPECT_DOUBLE_EQ(m.opt.timestep, 0.01);
  EXPECT_EQ(m.opt.integrator, mjINT_EULER);
  EXPECT_EQ(m.opt.iterations, 20);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(m.opt.gravity[c], 0.0) << c;
  for (int k = 0; k < m.nq; ++k) EXPECT_EQ(m.qpos0[k], 0.0) << k;
  EXPECT_NEAR(m.body_mass[BodyId(m, "object")], 1.30899694e-08, 1e-16);
  // The wrist-roll link is its three capsules (r 0.02, lengths 0.2, 0.1, 0.1) at density 300.
  EXPECT_NEAR(m.body_mass[BodyId(m, "r_wrist_roll_link")],
              0.3 * (CapsuleMass(0.02, 0.1) + 2.0 * CapsuleMass(0.02, 0.05)), 1e-12);
  EXPECT_NEAR(m.body_mass[BodyId(m, "r_upper_arm_link")], 0.3 * CapsuleMass(0.06, 0.2), 1e-12);
  struct Joint {
    const char* name;
    double low, high, damping;
  };
  const Joint joints[11] = {{"r_shoulder_pan_joint", -2.2854, 1.714602, 1.0},
                            {"r_shoulder_lift_joint", -0.5236, 1.3963, 1.0},
                            {"r_upper_arm_roll_joint", -1.5, 1.7, 0.1},
                            {"r_elbow_flex_joint", -2.3213, 0.0, 0.1},
                            {"r_forearm_roll_joint", -1.5, 1.5, 0.1},
                            {"r_wrist_flex_joint", -1.094, 0.0, 0.1},
                            {"r_wrist_roll_joint", -1.5, 1.5, 0.1},
                            {"obj_slidey", -10.3213, 10.3, 0.5},
                            {"obj_slidex", -10.3213, 10.3, 0.5},
                            {"goal_slidey", -10.3213, 10.3, 0.5},
                            {"goal_slidex", -10.3213, 10.3, 0.5}};
  for (int k = 0; k < 11; ++k) {
    const Joint& j = joints[k];
    EXPECT_EQ(JointId(m, j.name), k) << j.name;  // qpos order
    EXPECT_EQ(m.jnt_type[k], k < 7 ? mjJNT_HINGE : mjJNT_SLIDE) << j.name;
    EXPECT_TRUE(m.jnt_limited[k]) << j.name;
    EXPECT_DOUBLE_EQ(m.jnt_range[2 * k], j.low) << j.name;
    EXPECT_DOUBLE_EQ(m.jnt_range[2 * k + 1], j.high) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_damping[k], j.damping) << j.name;
    EXPECT_DOUBLE_EQ(m.dof_armature[k], 0.04) << j.name;
  }
  for (int a = 0; a < 7; ++a) {
    EXPECT_EQ(m.actuator_trnid[2 * a], a);
    EXPECT_DOUBLE_EQ(m.actuator_gear[6 * a], 1.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a], -2.0);
    EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * a + 1], 2.0);
  }
  // Contacts: the table, the wrist's three capsules and the object's cylinder, nothing else.
  std::vector<std::string> colliding;
  for (int g = 0; g < m.ngeom; ++g) {
    EXPECT_DOUBLE_EQ(m.geom_margin[g], 0.002) << g;
    EXPECT_EQ(m.geom_condim[g], 1) << g;
    if (m.geom_contype[g] != 0 || m.geom_conaffinity[g] != 0) {
      colliding.push_back(mj_id2name(&m, mjOBJ_BODY, m.geom_bodyid[g]));
    }
  }
  EXPECT_EQ(colliding, (std::vector<std::string>{"world", "r_wrist_roll_link", "r_wrist_roll_link",
                                                 "r_wrist_roll_link", "object"}));
  // Straight out, tips_arm is 0.1 + 0.4 + 0.321 m along x from the shoulder at (0, -0.6, 0); the
  // object and the goal sit at (0.45, -0.05), 0.275 m and 0.323 m below the shoulder.
  DataPtr d = MakeData(m);
  mj_forward(&m, d.get());
  const double tips[3] = {0.821, -0.6, 0.0};
  const double object[3] = {0.45, -0.05, -0.275};
  const double goal[3] = {0.45, -0.05, -0.323};
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(d->xpos[3 * BodyId(m, "tips_arm") + c], tips[c], 1e-12) << c;
    EXPECT_NEAR(d->xpos[3 * BodyId(m, "object") + c], object[c], 1e-12) << c;
    EXPECT_NEAR(d->xpos[3 * BodyId(m, "goal") + c], goal[c], 1e-12) << c;
  }
}

// An empty folder under the test's temp dir (any earlier content removed).
std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// hopper.xml with its stack cut to `nstack` mjtNum, written as <dir>/hopper.xml. The real file
// has 50000; with 270 (measured 2026-12-05: loading needs 256 or more, a reset 60) the model
// loads and resets, and the first step with a foot contact overflows.
void WriteHopperWithStack(const std::string& dir, int nstack) {
  std::ifstream in(AssetPath("hopper.xml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string size = "nstack=\"50000\"";
  ASSERT_NE(text.find(size), std::string::npos);
  text.replace(text.find(size), size.size(), "nstack=\"" + std::to_string(nstack) + "\"");
  std::ofstream(dir + "/hopper.xml") << text;
}

// A MuJoCo error (here "Stack overflow", raised deep inside mj_step) throws MujocoError through
// MuJoCo's frames, where MuJoCo 2.2.2's default handler would print, wait for Enter and exit.
TEST(MujocoModelTest, EngineErrorsThrowMujocoErrorInsteadOfExiting) {
  const std::string dir = FreshDir("greenrl_small_stack");
  WriteHopperWithStack(dir, 270);
  ModelPtr model = LoadModel(dir + "/hopper.xml");
  DataPtr data = MakeData(*model);
  mj_forward(model.get(), data.get());
  Rng rng(1);
  std::string error;
  int steps = 0;
  for (; steps < 4000 && error.empty(); ++steps) {
    for (int a = 0; a < model->nu; ++a) data->ctrl[a] = rng.Uniform(-1.0, 1.0);
    try {
      mj_step(model.get(), data.get());
    } catch (const MujocoError& e) {
      error = e.what();
    }
  }
  EXPECT_EQ(error, "mujoco: Stack overflow") << "after " << steps << " mj_steps";
  // The data is usable again after a reset.
  mj_resetData(model.get(), data.get());
  EXPECT_NO_THROW(mj_forward(model.get(), data.get()));
  std::filesystem::remove_all(dir);
}

TEST(MujocoModelTest, LoaderErrorsCarryMujocosMessage) {
  try {
    LoadModel("/nonexistent/greenrl/model.xml");
    FAIL() << "expected MujocoError";
  } catch (const MujocoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot load model '/nonexistent/greenrl/model.xml': "), std::string::npos)
        << what;
    EXPECT_GT(what.size(),
              std::string("mujoco: cannot load model '/nonexistent/greenrl/model.xml': ").size())
        << "MuJoCo's own message is missing: " << what;
  }
  const std::string bad = ::testing::TempDir() + "/greenrl_bad_model.xml";
  std::ofstream(bad) << "<mujoco><worldbody><body><geom type=\"capsule\" size=\"-1\"/></body>"
                        "</worldbody></mujoco>";
  try {
    LoadModel(bad);
    FAIL() << "expected MujocoError";
  } catch (const MujocoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(bad), std::string::npos) << what;
    EXPECT_NE(what.find("Error"), std::string::npos) << "MuJoCo's message: " << what;
  }
  std::remove(bad.c_str());
}

TEST(MujocoModelTest, AssetDirOverrideIsHonouredAndAMissingModelIsReported) {
  ::setenv("GREENRL_MUJOCO_ASSETS", "/nonexistent/assets", /*overwrite=*/1);
  EXPECT_EQ(AssetDir(), "/nonexistent/assets");
  try {
    MakeVecEnv("HalfCheetah-v4", 1, 0, 1);
    ADD_FAILURE() << "expected MujocoError";
  } catch (const MujocoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no model file '/nonexistent/assets/half_cheetah.xml'"), std::string::npos)
        << what;
    EXPECT_NE(what.find("GREENRL_MUJOCO_ASSETS=/nonexistent/assets (set, so used alone)"),
              std::string::npos)
        << what;
  }
  ::unsetenv("GREENRL_MUJOCO_ASSETS");
  EXPECT_TRUE(std::ifstream(AssetPath("hopper.xml")).good()) << AssetDir();
}

// ---------------------------------------------------------------------------------------------
// Spaces, reset, TimeLimit.
// ---------------------------------------------------------------------------------------------

// Seconds per env step of a freshly built one-row env of Task.
template <typename Task>
double DtOf() {
  return Make<Task>(1, 0, 1).env->dt();
}

TEST(LocomotionTest, RegisteredSpecsFollowGymnasiumV4) {
  ExpectSpecs({
      {"HalfCheetah-v4", 17, 6, 1.0f, 4800.0},
      {"Hopper-v4", 11, 3, 1.0f, 3800.0},
      {"Walker2d-v4", 17, 6, 1.0f, std::nullopt},  // Gymnasium registers none
      {"Ant-v4", 27, 8, 1.0f, 6000.0},
      {"Swimmer-v4", 8, 2, 1.0f, 360.0},
      {"InvertedPendulum-v4", 4, 1, 3.0f, 950.0},
      {"InvertedDoublePendulum-v4", 11, 1, 1.0f, 9100.0},
      {"Reacher-v4", 11, 2, 1.0f, -3.75, 50},
      {"Humanoid-v4", 376, 17, 0.4f, std::nullopt},  // Gymnasium registers no threshold
      {"HumanoidStandup-v4", 376, 17, 0.4f, std::nullopt},
      {"Pusher-v4", 23, 7, 2.0f, 0.0, 100},
  });
  // dt = frame_skip x timestep (s), as the built env reports it.
  EXPECT_DOUBLE_EQ(DtOf<HalfCheetah>(), 0.05);
  EXPECT_DOUBLE_EQ(DtOf<Hopper>(), 0.008);
  EXPECT_DOUBLE_EQ(DtOf<Walker2d>(), 0.008);
  EXPECT_DOUBLE_EQ(DtOf<Ant>(), 0.05);
  EXPECT_DOUBLE_EQ(DtOf<Swimmer>(), 0.04);
  EXPECT_DOUBLE_EQ(DtOf<InvertedPendulum>(), 0.04);
  EXPECT_DOUBLE_EQ(DtOf<InvertedDoublePendulum>(), 0.05);
  EXPECT_DOUBLE_EQ(DtOf<Reacher>(), 0.02);
  EXPECT_DOUBLE_EQ(DtOf<Humanoid>(), 0.015);
  EXPECT_DOUBLE_EQ(DtOf<HumanoidStandup>(), 0.015);
  EXPECT_DOUBLE_EQ(DtOf<Pusher>(), 0.05);
}

TEST(LocomotionTest, ResetNoiseStaysInGymnasiumsBounds) {
  Harness cheetah = Make<HalfCheetah>(64, 7, 1);
  const float* obs = cheetah.vec->obs();
  double vel_sq = 0.0;
  for (int i = 0; i < 64; ++i) {
    // qpos0 = 0 everywhere; qpos noise U(-0.1, 0.1) (obs[0:8] = qpos[1:9]).
    for (int k = 0; k < 8; ++k) EXPECT_LE(std::abs(obs[i * 17 + k]), 0.1f);
    for (int k = 8; k < 17; ++k) vel_sq += obs[i * 17 + k] * obs[i * 17 + k];
  }
  // qvel noise 0.1 N(0, 1): the sample std over 576 draws is 0.1 within a few percent.
  EXPECT_NEAR(std::sqrt(vel_sq / (64 * 9)), 0.1, 0.01);
  Harness hopper = Make<Hopper>(64, 7, 1);
  obs = hopper.vec->obs();
  for (int i = 0; i < 64; ++i) {
    EXPECT_NEAR(obs[i * 11 + 0], 1.25f, 0.005f + 1e-6f);  // z = qpos0 1.25 + U(-0.005, 0.005)
    for (int k = 1; k < 11; ++k) EXPECT_LE(std::abs(obs[i * 11 + k]), 0.005f) << k;
  }
  Harness walker = Make<Walker2d>(64, 7, 1);
  obs = walker.vec->obs();
  for (int i = 0; i < 64; ++i) {
    EXPECT_NEAR(obs[i * 17 + 0], 1.25f, 0.005f + 1e-6f);  // z = qpos0 1.25 + U(-0.005, 0.005)
    for (int k = 1; k < 17; ++k) EXPECT_LE(std::abs(obs[i * 17 + k]), 0.005f) << k;
  }
  // Ant: every qpos entry (the quaternion's too) qpos0 + U(-0.1, 0.1); qvel 0.1 N(0, 1).
  Harness ant = Make<Ant>(64, 7, 1);
  obs = ant.vec->obs();
  vel_sq = 0.0;
  for (int i = 0; i < 64; ++i) {
    EXPECT_NEAR(obs[i * 27 + 0], 0.75f, 0.1f + 1e-6f);  // z
    // The quaternion (w, x, y, z) = (1, 0, 0, 0) + U(-0.1, 0.1) each, then unit length:
    // set_state's mj_forward normalises qpos's quaternions in place (mj_kinematics), so
    // |x|, |y|, |z| <= 0.1 / 0.9 and w >= 0.98.
    const float* q = obs + i * 27 + 1;
    EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0f, 1e-6f);
    EXPECT_GT(q[0], 0.98f);
    for (int k = 1; k < 4; ++k) EXPECT_LE(std::abs(q[k]), 0.1f / 0.9f) << k;
    for (int k = 5; k < 13; ++k) EXPECT_LE(std::abs(obs[i * 27 + k]), 0.1f) << k;  // hinges
    for (int k = 13; k < 27; ++k) vel_sq += obs[i * 27 + k] * obs[i * 27 + k];
  }
  EXPECT_NEAR(std::sqrt(vel_sq / (64 * 14)), 0.1, 0.01);
  // The torso's x and y are qpos[0:2], left out of obs; the rows start apart.
  EXPECT_NE(ant.env->data(0).qpos[0], ant.env->data(1).qpos[0]);
  EXPECT_LE(std::abs(ant.env->data(0).qpos[1]), 0.1);
  // Swimmer: all 5 qpos and all 5 qvel entries U(-0.1, 0.1) around 0; obs = qpos[2:5], qvel.
  Harness swimmer = Make<Swimmer>(64, 7, 1);
  obs = swimmer.vec->obs();
  double abs_sum = 0.0;
  for (int i = 0; i < 64; ++i) {
    for (int k = 0; k < 8; ++k) {
      EXPECT_LE(std::abs(obs[i * 8 + k]), 0.1f) << k;
      abs_sum += std::abs(obs[i * 8 + k]);
    }
    EXPECT_LE(std::abs(swimmer.env->data(i).qpos[0]), 0.1);
    EXPECT_LE(std::abs(swimmer.env->data(i).qpos[1]), 0.1);
  }
  // Uniform, not 0.1 N(0, 1): E|U(-0.1, 0.1)| = 0.05 (|0.1 N(0, 1)| would average 0.080).
  EXPECT_NEAR(abs_sum / (64 * 8), 0.05, 0.005);
  // InvertedPendulum: obs = [qpos, qvel], each U(-0.01, 0.01).
  Harness pendulum = Make<InvertedPendulum>(64, 7, 1);
  obs = pendulum.vec->obs();
  for (int i = 0; i < 64 * 4; ++i) EXPECT_LE(std::abs(obs[i]), 0.01f) << i;
  EXPECT_NE(obs[0], obs[4]);
  // InvertedDoublePendulum: qpos U(-0.1, 0.1), qvel 0.1 N(0, 1); obs from them.
  Harness double_pendulum = Make<InvertedDoublePendulum>(64, 7, 1);
  obs = double_pendulum.vec->obs();
  vel_sq = 0.0;
  for (int i = 0; i < 64; ++i) {
    const mjData& d = double_pendulum.env->data(i);
    for (int k = 0; k < 3; ++k) EXPECT_LE(std::abs(d.qpos[k]), 0.1) << k;
    for (int k = 0; k < 3; ++k) vel_sq += d.qvel[k] * d.qvel[k];
    const float* o = obs + i * 11;
    EXPECT_EQ(o[0], static_cast<float>(d.qpos[0]));
    EXPECT_EQ(o[1], static_cast<float>(std::sin(d.qpos[1])));
    EXPECT_EQ(o[4], static_cast<float>(std::cos(d.qpos[2])));
    EXPECT_EQ(o[5], static_cast<float>(d.qvel[0]));
    for (int k = 8; k < 11; ++k) EXPECT_EQ(o[k], 0.0f) << k;  // no constraint force at rest
  }
  EXPECT_NEAR(std::sqrt(vel_sq / (64 * 3)), 0.1, 0.015);
  // Reacher: the angles U(-0.1, 0.1), the target uniform in the disk of radius 0.2 (so
  // E[x^2 + y^2] = 0.2^2 / 2 = 0.02; uniform in the square it would be 0.0267), the arm's
  // speeds U(-0.005, 0.005), the target's 0; obs from that state.
  Harness reacher = Make<Reacher>(256, 7, 1);
  obs = reacher.vec->obs();
  const mjModel& rm = reacher.env->model();
  double r_sq = 0.0;
  for (int i = 0; i < 256; ++i) {
    const mjData& d = reacher.env->data(i);
    for (int k = 0; k < 2; ++k) EXPECT_LE(std::abs(d.qpos[k]), 0.1) << k;
    const double goal_sq = d.qpos[2] * d.qpos[2] + d.qpos[3] * d.qpos[3];
    EXPECT_LT(goal_sq, 0.04);
    r_sq += goal_sq;
    for (int k = 0; k < 2; ++k) EXPECT_LE(std::abs(d.qvel[k]), 0.005) << k;
    EXPECT_EQ(d.qvel[2], 0.0);
    EXPECT_EQ(d.qvel[3], 0.0);
    const float* o = obs + i * 11;
    EXPECT_EQ(o[0], static_cast<float>(std::cos(d.qpos[0])));
    EXPECT_EQ(o[5], static_cast<float>(d.qpos[3]));
    // The target's body sits at its qpos (the slides' refs are its start position).
    const int target = BodyId(rm, "target");
    EXPECT_NEAR(d.xpos[3 * target], d.qpos[2], 1e-12);
    EXPECT_NEAR(d.xpos[3 * target + 1], d.qpos[3], 1e-12);
    EXPECT_EQ(o[10], 0.0f);  // fingertip and target both 0.01 m up
  }
  EXPECT_NEAR(r_sq / 256, 0.02, 0.003);
  // Humanoid: every qpos entry qpos0 + U(-0.01, 0.01) (then the quaternion normalised), qvel
  // U(-0.01, 0.01); obs[0] = z.
  Harness humanoid = Make<Humanoid>(32, 7, 1);
  obs = humanoid.vec->obs();
  for (int i = 0; i < 32; ++i) {
    const mjData& d = humanoid.env->data(i);
    EXPECT_NEAR(obs[i * 376], 1.4f, 0.01f + 1e-6f);
    EXPECT_LE(std::abs(d.qpos[0]), 0.01);
    EXPECT_NEAR(d.qpos[3] * d.qpos[3] + d.qpos[4] * d.qpos[4] + d.qpos[5] * d.qpos[5] +
                    d.qpos[6] * d.qpos[6],
                1.0, 1e-12);
    for (int k = 7; k < 24; ++k) EXPECT_LE(std::abs(d.qpos[k]), 0.01) << k;
    for (int k = 0; k < 23; ++k) EXPECT_LE(std::abs(d.qvel[k]), 0.01) << k;
  }
  // HumanoidStandup: the same noise around its lying qpos0; obs[0] = z = 0.105 + U(-0.01, 0.01).
  Harness standup = Make<HumanoidStandup>(32, 7, 1);
  obs = standup.vec->obs();
  for (int i = 0; i < 32; ++i) {
    const mjData& d = standup.env->data(i);
    EXPECT_NEAR(obs[i * 376], 0.105f, 0.01f + 1e-6f);
    for (int k = 7; k < 24; ++k) EXPECT_LE(std::abs(d.qpos[k]), 0.01) << k;
    for (int k = 0; k < 23; ++k) EXPECT_LE(std::abs(d.qvel[k]), 0.01) << k;
  }
  // Pusher: the arm exactly at qpos0 = 0 with qvel U(-0.005, 0.005); the object's y slide
  // U(-0.3, 0) and x slide U(-0.2, 0.2), kept only beyond 0.17 m of the goal; the goal at 0; the
  // object and the goal at rest; obs = [qpos[:7], qvel[:7], the three bodies' xpos].
  Harness pusher = Make<Pusher>(64, 7, 1);
  obs = pusher.vec->obs();
  const mjModel& pm = pusher.env->model();
  int positive_x = 0;
  for (int i = 0; i < 64; ++i) {
    const mjData& d = pusher.env->data(i);
    const float* o = obs + i * 23;
    for (int k = 0; k < 7; ++k) {
      EXPECT_EQ(d.qpos[k], 0.0) << k;
      EXPECT_LE(std::abs(d.qvel[k]), 0.005) << k;
      EXPECT_EQ(o[k], 0.0f) << k;
      EXPECT_EQ(o[7 + k], static_cast<float>(d.qvel[k])) << k;
    }
    const double cy = d.qpos[7], cx = d.qpos[8];
    EXPECT_TRUE(-0.3 <= cy && cy <= 0.0) << cy;
    EXPECT_TRUE(-0.2 <= cx && cx <= 0.2) << cx;
    EXPECT_GT(cx * cx + cy * cy, 0.17 * 0.17);
    positive_x += cx > 0.0 ? 1 : 0;
    for (int k = 9; k < 11; ++k) EXPECT_EQ(d.qpos[k], 0.0) << k;
    for (int k = 7; k < 11; ++k) EXPECT_EQ(d.qvel[k], 0.0) << k;
    const int object = BodyId(pm, "object");
    EXPECT_NEAR(d.xpos[3 * object], 0.45 + cx, 1e-12);
    EXPECT_NEAR(d.xpos[3 * object + 1], -0.05 + cy, 1e-12);
    const float xyz[9] = {0.821f,
                          -0.6f,
                          0.0f,
                          static_cast<float>(0.45 + cx),
                          static_cast<float>(-0.05 + cy),
                          -0.275f,
                          0.45f,
                          -0.05f,
                          -0.323f};
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(o[14 + k], xyz[k], 1e-6f) << k;
  }
  EXPECT_GT(positive_x, 16);  // the x slide's draw spans both signs
}

TEST(LocomotionTest, HalfCheetahSwimmerAndHumanoidStandupTruncateAfter1000StepsOnly) {
  ExpectTruncationAfter1000StepsOnly<HalfCheetah>();
  ExpectTruncationAfter1000StepsOnly<Swimmer>();
  ExpectTruncationAfter1000StepsOnly<HumanoidStandup>();
}

// ---------------------------------------------------------------------------------------------
// Determinism: the same seed gives the same trajectories whatever the number of threads.
// ---------------------------------------------------------------------------------------------

TEST(LocomotionTest, SameSeedSameTrajectoryAcrossThreadCountsOtherSeedDiffers) {
  const std::vector<float> one = Trajectory<HalfCheetah>(5, 3, 1, 120);
  EXPECT_EQ(one, Trajectory<HalfCheetah>(5, 3, 2, 120));
  EXPECT_EQ(one, Trajectory<HalfCheetah>(5, 3, 3, 120));
  EXPECT_NE(one, Trajectory<HalfCheetah>(5, 4, 1, 120));
  // Hopper (random actions make it fall within ~100 steps, so autoresets are covered).
  ExpectSeedDeterminesTrajectory<Hopper>(5, 300);
  ExpectSeedDeterminesTrajectory<Walker2d>(5, 300);
  ExpectSeedDeterminesTrajectory<Ant>(5, 300);
  ExpectSeedDeterminesTrajectory<Swimmer>(5, 300);
  ExpectSeedDeterminesTrajectory<InvertedPendulum>(5, 300);
  ExpectSeedDeterminesTrajectory<InvertedDoublePendulum>(5, 300);
  ExpectSeedDeterminesTrajectory<Reacher>(5, 300);
  ExpectSeedDeterminesTrajectory<Humanoid>(3, 100);
  ExpectSeedDeterminesTrajectory<HumanoidStandup>(3, 100);
  ExpectSeedDeterminesTrajectory<Pusher>(5, 300);
}

// ---------------------------------------------------------------------------------------------
// Rewards and termination.
// ---------------------------------------------------------------------------------------------

TEST(LocomotionTest, HalfCheetahRewardIsForwardVelocityMinusControlCost) {
  Harness h = Make<HalfCheetah>(1, 11, 1);
  Rng rng(12);
  double total_dx = 0.0;
  for (int t = 0; t < 200; ++t) {
    RandomActions(*h.vec, rng);
    const float* a = h.vec->continuous_actions();
    double ctrl_sq = 0.0;
    for (int k = 0; k < 6; ++k) ctrl_sq += static_cast<double>(a[k]) * a[k];
    const double x_before = h.env->data(0).qpos[0];
    h.vec->Step();
    const double x_after = h.env->data(0).qpos[0];
    total_dx += x_after - x_before;
    const double expected = 1.0 * (x_after - x_before) / (5 * 0.01) - 0.1 * ctrl_sq;
    ASSERT_NEAR(h.vec->reward()[0], expected, 1e-5 * (1.0 + std::abs(expected))) << "step " << t;
  }
  EXPECT_NE(total_dx, 0.0);  // the cheetah moved
}

// What a task's step must do, written out from Gymnasium's *_v4.py for StepAgainstShadowState.
struct StepRule {
  int frame_skip;                  // mj_step calls per env step
  double dt;                       // s, frame_skip x timestep
  double ctrl_cost_weight;         // weight of |a|^2
  double healthy_reward;           // added on every step
  int excluded_qpos;               // leading qpos entries not observed
  double qvel_clip;                // obs clips qvel to +-this
  const char* x_body;              // nullptr: x = qpos[0]; else this body's xpos x
  bool (*healthy)(const mjData&);  // the task's is_healthy on a float64 state; nullptr: always
  float start_z, start_z_noise;    // obs[0] after a reset: qpos0's height +- the noise scale
};

// Steps row 0 of an env with a health rule for `steps` random-action steps and checks each one
// against an independently stepped copy of its state (frame_skip mj_step calls of the action):
// terminated exactly when rule.healthy says not, reward = dx/dt + healthy_reward (on the
// terminating step too) - ctrl_cost_weight |a|^2, final_obs = [qpos[excluded_qpos:],
// clip(qvel)], and an autoreset to the start pose after a termination. Returns the terminations;
// *max_abs_qvel is the largest |qvel| seen (to show a clip was exercised) and *max_x_gap the
// largest |reward difference| had x been read from qpos[0] instead of rule.x_body's xpos.
template <typename Task>
int StepAgainstShadowState(uint64_t env_seed, uint64_t action_seed, int steps, const StepRule& rule,
                           double* max_abs_qvel, double* max_x_gap) {
  Harness probe = Make<Task>(1, env_seed, 1);
  const mjModel& m = probe.env->model();
  const int body = rule.x_body == nullptr ? -1 : BodyId(m, rule.x_body);
  auto x_of = [&](const mjData& d) { return body < 0 ? d.qpos[0] : d.xpos[3 * body]; };
  *max_abs_qvel = 0.0;
  *max_x_gap = 0.0;
  return ShadowSteps<Task>(
      env_seed, action_seed, steps, 1.0,
      [&](int t, const float* a, const mjData& before, const mjData& d, const VecEnv& vec) {
        double ctrl_sq = 0.0;
        for (int k = 0; k < m.nu; ++k) ctrl_sq += static_cast<double>(a[k]) * a[k];
        const bool is_healthy = rule.healthy == nullptr || rule.healthy(d);
        EXPECT_EQ(vec.terminated()[0], is_healthy ? 0 : 1) << "step " << t;
        const double dx = x_of(d) - x_of(before);
        const double expected =
            dx / rule.dt + rule.healthy_reward - rule.ctrl_cost_weight * ctrl_sq;
        EXPECT_NEAR(vec.reward()[0], expected, 1e-5 * (1.0 + std::abs(expected))) << "step " << t;
        *max_x_gap =
            std::max(*max_x_gap, std::abs((d.qpos[0] - before.qpos[0]) / rule.dt - dx / rule.dt));
        const int qpos_obs = m.nq - rule.excluded_qpos;
        for (int k = rule.excluded_qpos; k < m.nq; ++k) {
          EXPECT_EQ(vec.final_obs()[k - rule.excluded_qpos], static_cast<float>(d.qpos[k]))
              << "step " << t;
        }
        for (int k = 0; k < m.nv; ++k) {
          *max_abs_qvel = std::max(*max_abs_qvel, std::abs(d.qvel[k]));
          EXPECT_EQ(vec.final_obs()[qpos_obs + k],
                    static_cast<float>(std::clamp(d.qvel[k], -rule.qvel_clip, rule.qvel_clip)))
              << "step " << t;
        }
        if (!is_healthy) {
          EXPECT_GT(vec.episode_length()[0], 0);
          EXPECT_NEAR(vec.obs()[0], rule.start_z, rule.start_z_noise * 1.001f);  // autoreset
        }
      });
}

// Hopper-v4 and Walker2d-v4: frame_skip 4, dt 0.008 s, ctrl cost 1e-3, root x excluded, qvel
// clipped to 10, start height 1.25 m (+- 0.005).
StepRule PlanarRule(bool (*healthy)(const mjData&)) {
  return {4, 0.008, 1e-3, 1.0, 1, 10.0, nullptr, healthy, 1.25f, 0.005f};
}

TEST(LocomotionTest, HopperTerminatesExactlyWhenItLeavesTheHealthyRange) {
  double max_abs_qvel = 0.0;
  double max_x_gap = 0.0;
  EXPECT_GE(StepAgainstShadowState<Hopper>(21, 22, 2000, PlanarRule(&HopperHealthy), &max_abs_qvel,
                                           &max_x_gap),
            5);
}

TEST(LocomotionTest, Walker2dTerminatesExactlyWhenItLeavesTheHealthyRange) {
  double max_abs_qvel = 0.0;
  double max_x_gap = 0.0;
  EXPECT_GE(StepAgainstShadowState<Walker2d>(31, 32, 3000, PlanarRule(&Walker2dHealthy),
                                             &max_abs_qvel, &max_x_gap),
            5);
  EXPECT_GT(max_abs_qvel, 10.0);  // the clip was exercised
}

// Walker2d's angle bound is 1 rad and it has no state bound: a tilt Hopper would end on (0.5 rad)
// or a joint speed beyond Hopper's 100 goes on; a tilt past 1 rad, z below 0.8 m or above 2 m
// ends it.
TEST(LocomotionTest, Walker2dTiltedOrLoweredBeyondTheRangeTerminatesAtOnce) {
  Harness h = Make<Walker2d>(5, 5, 1);
  h.env->data(0).qpos[2] = 1.2;    // angle outside (-1, 1)
  h.env->data(1).qpos[1] = 0.3;    // z far below 0.8 (inside the floor: contacts push it up)
  h.env->data(2).qpos[2] = 0.5;    // inside Walker2d's angle range, outside Hopper's
  h.env->data(3).qvel[0] = 150.0;  // forward at 150 m/s, past Hopper's state bound
  h.env->data(4).qpos[1] = 2.1;    // z above 2.0 m (in the air: nothing pushes it down fast)
  for (int i = 0; i < 5; ++i) mj_forward(&h.env->model(), &h.env->data(i));
  for (int k = 0; k < 30; ++k) h.vec->continuous_actions()[k] = 0.0f;
  h.vec->Step();
  EXPECT_EQ(h.vec->terminated()[0], 1);
  EXPECT_EQ(h.vec->terminated()[1], 1);
  EXPECT_EQ(h.vec->terminated()[2], 0);
  EXPECT_EQ(h.vec->terminated()[3], 0);
  EXPECT_EQ(h.vec->terminated()[4], 1);
  EXPECT_EQ(h.env->non_finite_resets(), 0);
}

// Knees bent and ankles pushing (actions 0.5, 0.5, -0.5 on both legs, found by a search over
// constant actions) lower the walker upright: it ends by height, at z <= 0.8 m (Hopper's bound
// would be 0.7) with the torso's angle inside (-1, 1).
TEST(LocomotionTest, Walker2dSinkingUprightEndsBelow08Metres) {
  Harness h = Make<Walker2d>(1, 0, 1);
  const float crouch[6] = {0.5f, 0.5f, -0.5f, 0.5f, 0.5f, -0.5f};
  int t = 0;
  for (; t < 300 && h.vec->terminated()[0] == 0; ++t) {
    std::copy(crouch, crouch + 6, h.vec->continuous_actions());
    h.vec->Step();
  }
  ASSERT_EQ(h.vec->terminated()[0], 1) << "still standing after " << t << " steps";
  const float z = h.vec->final_obs()[0], angle = h.vec->final_obs()[1];
  EXPECT_LE(z, 0.8f);
  EXPECT_GT(z, 0.75f);  // it ended on crossing 0.8 m, not lower
  EXPECT_LT(std::abs(angle), 1.0f);
}

// AntEnv.is_healthy on a float64 state (finite states only reach it): z in the closed [0.2, 1].
bool AntHealthy(const mjData& d) { return 0.2 <= d.qpos[2] && d.qpos[2] <= 1.0; }

// Ant-v4: frame_skip 5, dt 0.05 s, ctrl cost 0.5, x and y excluded, qvel not clipped, x from the
// torso's xpos (get_body_com), start height 0.75 m (+- 0.1).
TEST(LocomotionTest, AntStepsTerminatesAndRewardsAsGymnasium) {
  const StepRule rule{5,       0.05,        0.5,   1.0, 2, std::numeric_limits<double>::infinity(),
                      "torso", &AntHealthy, 0.75f, 0.1f};
  double max_abs_qvel = 0.0, max_x_gap = 0.0;
  // Random actions make the light ant (0.91 kg, 150 N m motors) hop above 1 m now and then.
  EXPECT_GE(StepAgainstShadowState<Ant>(41, 42, 2000, rule, &max_abs_qvel, &max_x_gap), 5);
  EXPECT_GT(max_abs_qvel, 10.0);  // no clip, unlike Hopper's and Walker2d's obs
  // The torso's xpos lags qpos[0] (MuJoCo computes it at the last RK4 stage): reading qpos[0]
  // would give rewards this test tells apart.
  EXPECT_GT(max_x_gap, 1e-3);
}

// Swimmer-v4: frame_skip 4, dt 0.04 s, ctrl cost 1e-4, no healthy reward, x and y excluded,
// qvel not clipped, x = qpos[0], never terminated (1100 steps: past the TimeLimit's autoreset).
TEST(LocomotionTest, SwimmerStepsAndRewardsAsGymnasium) {
  const StepRule rule{4,       0.04,    1e-4, 0.0, 2, std::numeric_limits<double>::infinity(),
                      nullptr, nullptr, 0.0f, 0.1f};
  double max_abs_qvel = 0.0, max_x_gap = 0.0;
  EXPECT_EQ(StepAgainstShadowState<Swimmer>(51, 52, 1100, rule, &max_abs_qvel, &max_x_gap), 0);
  EXPECT_GT(max_abs_qvel, 1.0);  // the rotors spin under random torques
}

// The fluid (density 4000, viscosity 0.1) is the swimmer's only external force: a coasting
// swimmer (1 m/s along x, no torque, 1 s) slows to 0.375 m/s in it and keeps 1 m/s exactly with
// density and viscosity set to 0; a travelling wave of torques (a = sin(wt), sin(wt + 1.5),
// w = 2 pi rad/s, 1000 env steps) carries its centre of mass forward. (Without the fluid the
// same wave sets the links spinning, and RK4 at 0.01 s then drifts the centre of mass by about
// a metre, so no "stays put" check is made on that run.)
TEST(LocomotionTest, SwimmerMovesThroughItsFluidAndCoastsWithoutIt) {
  for (const bool fluid : {true, false}) {
    ModelPtr model = LoadModel(AssetPath("swimmer.xml"));
    if (!fluid) model->opt.density = model->opt.viscosity = 0.0;
    const mjModel& m = *model;
    DataPtr d = MakeData(m);
    d->qvel[0] = 1.0;
    for (int k = 0; k < 100; ++k) mj_step(&m, d.get());
    if (fluid) {
      EXPECT_NEAR(d->qvel[0], 0.375, 0.01);  // 0.374832 (MuJoCo 2.2.2, 2026-12-05)
    } else {
      EXPECT_NEAR(d->qvel[0], 1.0, 1e-12);
    }
  }
  ModelPtr model = LoadModel(AssetPath("swimmer.xml"));
  const mjModel& m = *model;
  DataPtr d = MakeData(m);
  mj_forward(&m, d.get());
  const int torso = BodyId(m, "torso");
  const double com_x0 = d->subtree_com[3 * torso];
  for (int t = 0; t < 1000; ++t) {
    const double w = 2.0 * kPi * t * 0.04;
    d->ctrl[0] = std::sin(w);
    d->ctrl[1] = std::sin(w + 1.5);
    for (int k = 0; k < 4; ++k) mj_step(&m, d.get());
  }
  mj_forward(&m, d.get());
  EXPECT_GT(d->subtree_com[3 * torso] - com_x0, 0.5);
}

// InvertedPendulum-v4: reward 1 on every step, terminated exactly when |angle| > 0.2 rad,
// final_obs = [qpos, qvel] unclipped, actions up to the ctrlrange's 3.
TEST(LocomotionTest, InvertedPendulumStepsAndTerminatesAsGymnasium) {
  const int terminations = ShadowSteps<InvertedPendulum>(
      61, 62, 3000, 3.0,
      [](int t, const float*, const mjData&, const mjData& d, const VecEnv& vec) {
        EXPECT_EQ(vec.terminated()[0], std::abs(d.qpos[1]) > 0.2 ? 1 : 0) << "step " << t;
        EXPECT_EQ(vec.reward()[0], 1.0f) << "step " << t;
        const float expected[4] = {static_cast<float>(d.qpos[0]), static_cast<float>(d.qpos[1]),
                                   static_cast<float>(d.qvel[0]), static_cast<float>(d.qvel[1])};
        for (int k = 0; k < 4; ++k) EXPECT_EQ(vec.final_obs()[k], expected[k]) << "step " << t;
      });
  EXPECT_GE(terminations, 100);  // random pushes topple it within tens of steps
}

// InvertedDoublePendulum-v4 (ExpectDoublePendulumSteps): the alive bonus on every step, the
// constraint forces of all three joints observed.
TEST(LocomotionTest, InvertedDoublePendulumStepsRewardsAndTerminatesAsGymnasium) {
  ExpectDoublePendulumSteps<InvertedDoublePendulum>(false);
}

// Balanced at rest (no noise, no push), the first step's reward is 10 - (1.2 - 2)^2 = 9.36: the
// tip 1.2 m up, x and the poles' speeds about 0; it takes a push to end the episode.
TEST(LocomotionTest, InvertedDoublePendulumUprightEarnsItsAliveBonusLessTheHeightPenalty) {
  Harness h = Make<InvertedDoublePendulum>(1, 0, 1);
  mjData& d = h.env->data(0);
  for (int k = 0; k < 3; ++k) d.qpos[k] = d.qvel[k] = 0.0;
  mj_forward(&h.env->model(), &d);
  h.vec->continuous_actions()[0] = 0.0f;
  h.vec->Step();
  EXPECT_NEAR(h.vec->reward()[0], 10.0 - 0.8 * 0.8, 1e-6);
  EXPECT_EQ(h.vec->terminated()[0], 0);
}

// Reacher-v4 (ExpectReacherSteps): the distance BEFORE the step, fingertip - target as x, y, z.
TEST(LocomotionTest, ReacherStepsAndRewardsAsGymnasium) { ExpectReacherSteps<Reacher>(false); }

// Humanoid-v4 (ExpectHumanoidSteps): the healthy reward 5 on every step, no contact cost, the
// 376-value observation.
TEST(LocomotionTest, HumanoidStepsTerminatesAndRewardsAsGymnasium) {
  ExpectHumanoidSteps<Humanoid>(false);
}

// HumanoidStandup-v4 (ExpectHumanoidStandupSteps) with the 376-value observation.
TEST(LocomotionTest, HumanoidStandupStepsAndRewardsAsGymnasium) {
  ExpectHumanoidStandupSteps<HumanoidStandup>(false);
}

// Pusher-v4 (ExpectPusherSteps): the distances BEFORE the step.
TEST(LocomotionTest, PusherStepsAndRewardsAsGymnasium) { ExpectPusherSteps<Pusher>(false); }

// Pusher-v4 and Pusher-v5 on MuJoCo 2.2.2: the wrist's capsules push the object (under MuJoCo
// >= 3.0 the arm of Gymnasium's v4 model passes through it, Gymnasium issue 950; v5's object is
// heavier). The arm is posed with its shoulder lifted 0.39 rad, which lowers the wrist to the
// object's height, and the object is placed on the wrist: contacts push it 0.26 m away within
// 10 steps, either object (MuJoCo 2.2.2, 2026-12-05); with contacts disabled it stays.
TEST(LocomotionTest, PusherWristPushesTheObject) {
  for (const bool contacts : {true, false}) {
    for (const char* asset : {"pusher.xml", "pusher_v5.xml"}) {
      SCOPED_TRACE(asset);
      ModelPtr model = LoadModel(AssetPath(asset));
      if (!contacts) model->opt.disableflags |= mjDSBL_CONTACT;
      const mjModel& m = *model;
      DataPtr d = MakeData(m);
      d->qpos[1] = 0.39;  // r_shoulder_lift_joint
      mj_forward(&m, d.get());
      const int tips = BodyId(m, "tips_arm");
      ASSERT_NEAR(d->xpos[3 * tips + 2], -0.275, 0.01);  // the object's height
      d->qpos[7] = d->xpos[3 * tips + 1] - (-0.05);      // obj_slidey: the object's y on the wrist
      d->qpos[8] = d->xpos[3 * tips] - 0.45;             // obj_slidex
      const double start_y = d->qpos[7], start_x = d->qpos[8];
      for (int k = 0; k < 10 * 5; ++k) mj_step(&m, d.get());
      const double moved = std::hypot(d->qpos[7] - start_y, d->qpos[8] - start_x);
      if (contacts) {
        EXPECT_GT(moved, 0.01);
      } else {
        EXPECT_EQ(moved, 0.0);
      }
    }
  }
}

// Only the height ends an Ant episode: upside down at 0.6 m it goes on (Hopper's angle rule has
// no counterpart); above 1 m or below 0.2 m it ends.
TEST(LocomotionTest, AntEndsByHeightOnly) {
  Harness h = Make<Ant>(4, 5, 1);
  h.env->data(0).qpos[2] = 1.2;  // in the air, above 1 m
  h.env->data(1).qpos[2] = 0.6;  // upside down: quaternion (0, 1, 0, 0), a half turn about x
  h.env->data(1).qpos[3] = 0.0;
  h.env->data(1).qpos[4] = 1.0;
  h.env->data(1).qpos[5] = 0.0;
  h.env->data(1).qpos[6] = 0.0;
  h.env->data(2).qpos[2] = -2.0;  // buried: the floor's contact lifts it to 0.146 m in a step
  for (int i = 0; i < 4; ++i) mj_forward(&h.env->model(), &h.env->data(i));
  for (int k = 0; k < 32; ++k) h.vec->continuous_actions()[k] = 0.0f;
  h.vec->Step();
  EXPECT_EQ(h.vec->terminated()[0], 1);
  EXPECT_EQ(h.vec->terminated()[1], 0);
  EXPECT_EQ(h.vec->terminated()[2], 1);
  EXPECT_EQ(h.vec->terminated()[3], 0);
  EXPECT_EQ(h.env->non_finite_resets(), 0);
}

TEST(LocomotionTest, HopperTiltedOrLoweredBeyondTheRangeTerminatesAtOnce) {
  Harness h = Make<Hopper>(3, 5, 1);
  h.env->data(0).qpos[2] = 0.5;  // angle far outside (-0.2, 0.2)
  h.env->data(1).qpos[1] = 0.3;  // z far below 0.7 (inside the floor: contacts push it up)
  for (int i = 0; i < 3; ++i) mj_forward(&h.env->model(), &h.env->data(i));
  for (int k = 0; k < 9; ++k) h.vec->continuous_actions()[k] = 0.0f;
  h.vec->Step();
  EXPECT_EQ(h.vec->terminated()[0], 1);
  EXPECT_EQ(h.vec->terminated()[1], 1);
  EXPECT_EQ(h.vec->terminated()[2], 0);
  EXPECT_EQ(h.vec->episode_length()[0], 1);
}

// ---------------------------------------------------------------------------------------------
// Numerical faults: counted, that row reset, the run goes on.
// ---------------------------------------------------------------------------------------------

TEST(LocomotionTest, NonFiniteStateIsCountedThatRowResetAndTheRunGoesOn) {
  Harness faulty = Make<HalfCheetah>(3, 8, 2);
  Harness clean = Make<HalfCheetah>(3, 8, 2);
  Rng rng_a(30), rng_b(30);
  for (int t = 0; t < 10; ++t) {
    RandomActions(*faulty.vec, rng_a);
    RandomActions(*clean.vec, rng_b);
    faulty.vec->Step();
    clean.vec->Step();
  }
  const std::vector<float> obs_before(faulty.vec->obs() + 17, faulty.vec->obs() + 34);
  faulty.env->data(1).qvel[3] = std::numeric_limits<double>::quiet_NaN();
  RandomActions(*faulty.vec, rng_a);
  RandomActions(*clean.vec, rng_b);
  faulty.vec->Step();
  clean.vec->Step();
  EXPECT_EQ(faulty.env->non_finite_resets(), 1);
  EXPECT_EQ(faulty.vec->truncated()[1], 1);
  EXPECT_EQ(faulty.vec->terminated()[1], 0);
  EXPECT_EQ(faulty.vec->reward()[1], 0.0f);
  EXPECT_EQ(faulty.vec->episode_length()[1], 11);
  // final_obs holds the last finite observation; obs a fresh start (reset noise bounds).
  EXPECT_EQ(std::vector<float>(faulty.vec->final_obs() + 17, faulty.vec->final_obs() + 34),
            obs_before);
  for (int k = 0; k < 17; ++k) EXPECT_TRUE(std::isfinite(faulty.vec->obs()[17 + k]));
  for (int k = 0; k < 8; ++k) EXPECT_LE(std::abs(faulty.vec->obs()[17 + k]), 0.1f);
  // The other rows are untouched: identical to the run without the fault.
  for (int i : {0, 2}) {
    for (int k = 0; k < 17; ++k) {
      EXPECT_EQ(faulty.vec->obs()[i * 17 + k], clean.vec->obs()[i * 17 + k]);
    }
    EXPECT_EQ(faulty.vec->reward()[i], clean.vec->reward()[i]);
  }
  // The run goes on, finite, with no further faults.
  for (int t = 0; t < 50; ++t) {
    RandomActions(*faulty.vec, rng_a);
    faulty.vec->Step();
    for (int k = 0; k < 3 * 17; ++k) ASSERT_TRUE(std::isfinite(faulty.vec->obs()[k]));
  }
  EXPECT_EQ(faulty.env->non_finite_resets(), 1);
  EXPECT_EQ(faulty.vec->non_finite_resets(), 1);
}

// An engine error in a step is a fault like a non-finite state: counted, that row reset, the
// run goes on, and the message goes to stderr as "greenrl: MuJoCo error: ...".
TEST(LocomotionTest, EngineErrorInAStepIsCountedThatRowResetAndTheRunGoesOn) {
  const std::string dir = FreshDir("greenrl_small_stack_env");
  WriteHopperWithStack(dir, 270);
  ::setenv("GREENRL_MUJOCO_ASSETS", dir.c_str(), /*overwrite=*/1);
  Harness h = Make<Hopper>(2, 1, 1);
  ::unsetenv("GREENRL_MUJOCO_ASSETS");
  const int64_t before = WarningCount();
  testing::internal::CaptureStderr();
  Rng rng(2);
  int faults_seen = 0;
  for (int t = 0; t < 1000; ++t) {
    RandomActions(*h.vec, rng);
    h.vec->Step();
    for (int i = 0; i < 2; ++i) {
      for (int k = 0; k < 11; ++k) ASSERT_TRUE(std::isfinite(h.vec->obs()[i * 11 + k]));
    }
    faults_seen += h.vec->truncated()[0] + h.vec->truncated()[1];
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_GE(h.env->non_finite_resets(), 1);
  EXPECT_EQ(faults_seen, h.env->non_finite_resets());  // no row reached its 1000-step limit
  EXPECT_EQ(WarningCount(), before + h.env->non_finite_resets());
  if (before < kMaxPrintedWarnings) {
    EXPECT_EQ(err.rfind("greenrl: MuJoCo error: Stack overflow (that env row is reset)\n", 0), 0u)
        << err;
  }
  std::filesystem::remove_all(dir);
}

// MuJoCo's own warning on a fault goes to stderr under greenrl's name: nothing on stdout and no
// MUJOCO_LOG.TXT in the current directory (MuJoCo 2.2.2's default handler writes both).
TEST(LocomotionTest, MujocoWarningsGoToStderrOnlyAndStopAfterAFew) {
  const std::string dir = FreshDir("greenrl_mujoco_warning");
  char old_cwd[4096];
  ASSERT_NE(::getcwd(old_cwd, sizeof(old_cwd)), nullptr);
  ASSERT_EQ(::chdir(dir.c_str()), 0);

  Harness h = Make<HalfCheetah>(2, 8, 1);
  const int64_t before = WarningCount();
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  h.env->data(0).qvel[3] = std::numeric_limits<double>::quiet_NaN();
  h.vec->Step();
  for (int k = 0; k < kMaxPrintedWarnings + 2; ++k) mju_warning("greenrl test warning");
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  const bool log_written = std::ifstream(dir + "/MUJOCO_LOG.TXT").good();
  ASSERT_EQ(::chdir(old_cwd), 0);
  std::filesystem::remove_all(dir);

  EXPECT_EQ(h.env->non_finite_resets(), 1);
  EXPECT_EQ(WarningCount(), before + 1 + kMaxPrintedWarnings + 2);
  EXPECT_EQ(out, "");
  EXPECT_FALSE(log_written);
  // Lines printed: the first kMaxPrintedWarnings of the process, then one "further" line.
  std::string expected;
  for (int64_t n = before; n < before + 1 + kMaxPrintedWarnings + 2; ++n) {
    if (n < kMaxPrintedWarnings) {
      expected += n == before ? "greenrl: MuJoCo warning: Nan, Inf or huge value in QVEL at DOF 3. "
                                "The simulation is unstable. Time = 0.0000.\n"
                              : "greenrl: MuJoCo warning: greenrl test warning\n";
    } else if (n == kMaxPrintedWarnings) {
      expected +=
          "greenrl: further MuJoCo warnings are not printed (an env row that hits one is reset; "
          "the run summary counts them as env faults)\n";
    }
  }
  EXPECT_EQ(err, expected);

  // Turned off (a quiet run), the handler counts and prints nothing.
  SetWarningsPrinted(false);
  testing::internal::CaptureStderr();
  mju_warning("greenrl quiet warning");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(WarningCount(), before + 1 + kMaxPrintedWarnings + 3);
  SetWarningsPrinted(true);
}

}  // namespace
}  // namespace greenrl::env::mujoco
