// mujoco_presets_test.cc: the MuJoCo presets
// (configs/{ppo,sac}/{halfcheetah,hopper,walker2d,ant,swimmer}.yaml,
// configs/ppo/{invertedpendulum,inverteddoublependulum,reacher,humanoidstandup}.yaml,
// configs/{ppo,sac}/humanoid.yaml) hold rl-baselines3-zoo's values and each trains end to end for
// a few thousand steps.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/core/install_paths.h"
#include "greenrl/core/schedule.h"
#include "greenrl/energy/estimator_meter.h"
#include "greenrl/env/registry.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train {
namespace {

namespace fs = std::filesystem;

std::string ConfigPath(const std::string& rel) { return SourceTreeDir() + "/configs/" + rel; }

// Values from rl-baselines3-zoo hyperparams/ppo.yml (HalfCheetah-v3, Hopper-v3, Walker2d-v3,
// Ant-v3; Swimmer-v4, InvertedPendulum-v2, InvertedDoublePendulum-v2, Reacher-v2 and Humanoid-v4
// at 208b6fd).
TEST(MujocoPresetTest, PpoPresetsHoldRlZooValues) {
  const Config c = LoadRunConfig(ConfigPath("ppo/halfcheetah.yaml"), {}, std::nullopt);
  EXPECT_EQ(c.GetString("env_id"), "HalfCheetah-v4");
  EXPECT_TRUE(c.GetBool("normalize"));
  EXPECT_EQ(c.GetInt("n_envs"), 1);
  EXPECT_EQ(c.GetInt("n_steps"), 512);
  EXPECT_EQ(c.GetInt("batch_size"), 64);
  EXPECT_EQ(c.GetInt("n_epochs"), 20);
  EXPECT_EQ(c.GetSchedule("learning_rate"), Schedule::Constant(2.0633e-05));
  EXPECT_EQ(c.GetSchedule("clip_range"), Schedule::Constant(0.1));
  EXPECT_EQ(c.GetFloat("gamma"), 0.98);
  EXPECT_EQ(c.GetFloat("gae_lambda"), 0.92);
  EXPECT_EQ(c.GetFloat("ent_coef"), 0.000401762);
  EXPECT_EQ(c.GetFloat("vf_coef"), 0.58096);
  EXPECT_EQ(c.GetFloat("max_grad_norm"), 0.8);
  EXPECT_EQ(c.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(c.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(c.GetString("policy_kwargs.activation_fn"), "relu");
  EXPECT_FALSE(c.GetBool("policy_kwargs.ortho_init"));
  EXPECT_EQ(c.GetFloat("policy_kwargs.log_std_init"), -2.0);
  EXPECT_EQ(c.GetInt("n_timesteps"), 1000000);

  const Config h = LoadRunConfig(ConfigPath("ppo/hopper.yaml"), {}, std::nullopt);
  EXPECT_EQ(h.GetString("env_id"), "Hopper-v4");
  EXPECT_EQ(h.GetInt("batch_size"), 32);
  EXPECT_EQ(h.GetInt("n_epochs"), 5);
  EXPECT_EQ(h.GetSchedule("clip_range"), Schedule::Constant(0.2));
  EXPECT_EQ(h.GetFloat("gamma"), 0.999);
  EXPECT_EQ(h.GetFloat("gae_lambda"), 0.99);
  EXPECT_EQ(h.GetSchedule("learning_rate"), Schedule::Constant(9.80828e-05));
  EXPECT_EQ(h.GetFloat("vf_coef"), 0.835671);

  const Config w = LoadRunConfig(ConfigPath("ppo/walker2d.yaml"), {}, std::nullopt);
  EXPECT_EQ(w.GetString("env_id"), "Walker2d-v4");
  EXPECT_TRUE(w.GetBool("normalize"));
  EXPECT_EQ(w.GetInt("n_envs"), 1);
  EXPECT_EQ(w.GetInt("n_steps"), 512);
  EXPECT_EQ(w.GetInt("batch_size"), 32);
  EXPECT_EQ(w.GetInt("n_epochs"), 20);
  EXPECT_EQ(w.GetSchedule("learning_rate"), Schedule::Constant(5.05041e-05));
  EXPECT_EQ(w.GetSchedule("clip_range"), Schedule::Constant(0.1));
  EXPECT_EQ(w.GetFloat("gamma"), 0.99);
  EXPECT_EQ(w.GetFloat("gae_lambda"), 0.95);
  EXPECT_EQ(w.GetFloat("ent_coef"), 0.000585045);
  EXPECT_EQ(w.GetFloat("vf_coef"), 0.871923);
  EXPECT_EQ(w.GetFloat("max_grad_norm"), 1.0);
  // No policy_kwargs in rl-zoo's section: SB3's MlpPolicy.
  EXPECT_EQ(w.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(w.GetString("policy_kwargs.activation_fn"), "tanh");
  EXPECT_TRUE(w.GetBool("policy_kwargs.ortho_init"));
  EXPECT_EQ(w.GetInt("n_timesteps"), 1000000);

  // Ant-v3's section is the mujoco-defaults anchor: normalize, 1e6 steps, SB3's PPO otherwise.
  const Config a = LoadRunConfig(ConfigPath("ppo/ant.yaml"), {}, std::nullopt);
  EXPECT_EQ(a.GetString("env_id"), "Ant-v4");
  EXPECT_TRUE(a.GetBool("normalize"));
  EXPECT_EQ(a.GetInt("n_timesteps"), 1000000);
  EXPECT_EQ(a.GetInt("n_envs"), 1);
  EXPECT_EQ(a.GetInt("n_steps"), 2048);
  EXPECT_EQ(a.GetInt("batch_size"), 64);
  EXPECT_EQ(a.GetInt("n_epochs"), 10);
  EXPECT_EQ(a.GetSchedule("learning_rate"), Schedule::Constant(3e-4));
  EXPECT_EQ(a.GetSchedule("clip_range"), Schedule::Constant(0.2));
  EXPECT_EQ(a.GetFloat("gamma"), 0.99);
  EXPECT_EQ(a.GetFloat("gae_lambda"), 0.95);
  EXPECT_EQ(a.GetFloat("ent_coef"), 0.0);
  EXPECT_EQ(a.GetFloat("vf_coef"), 0.5);
  EXPECT_EQ(a.GetFloat("max_grad_norm"), 0.5);
  EXPECT_EQ(a.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(a.GetString("policy_kwargs.activation_fn"), "tanh");

  // Swimmer-v4 ("tuned"): the anchor plus gamma, n_envs, n_steps, batch_size, learning_rate and
  // gae_lambda; SB3's PPO otherwise.
  const Config s = LoadRunConfig(ConfigPath("ppo/swimmer.yaml"), {}, std::nullopt);
  EXPECT_EQ(s.GetString("env_id"), "Swimmer-v4");
  EXPECT_TRUE(s.GetBool("normalize"));
  EXPECT_EQ(s.GetInt("n_timesteps"), 1000000);
  EXPECT_EQ(s.GetFloat("gamma"), 0.9999);
  EXPECT_EQ(s.GetInt("n_envs"), 4);
  EXPECT_EQ(s.GetInt("n_steps"), 1024);
  EXPECT_EQ(s.GetInt("batch_size"), 256);
  EXPECT_EQ(s.GetSchedule("learning_rate"), Schedule::Constant(6e-4));
  EXPECT_EQ(s.GetFloat("gae_lambda"), 0.98);
  EXPECT_EQ(s.GetInt("n_epochs"), 10);
  EXPECT_EQ(s.GetSchedule("clip_range"), Schedule::Constant(0.2));
  EXPECT_EQ(s.GetFloat("ent_coef"), 0.0);
  EXPECT_EQ(s.GetFloat("vf_coef"), 0.5);
  EXPECT_EQ(s.GetFloat("max_grad_norm"), 0.5);
  EXPECT_EQ(s.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(s.GetString("policy_kwargs.activation_fn"), "tanh");

  const Config ip = LoadRunConfig(ConfigPath("ppo/invertedpendulum.yaml"), {}, std::nullopt);
  EXPECT_EQ(ip.GetString("env_id"), "InvertedPendulum-v4");
  EXPECT_TRUE(ip.GetBool("normalize"));
  EXPECT_EQ(ip.GetInt("n_timesteps"), 1000000);
  EXPECT_EQ(ip.GetInt("n_envs"), 1);
  EXPECT_EQ(ip.GetInt("batch_size"), 64);
  EXPECT_EQ(ip.GetInt("n_steps"), 32);
  EXPECT_EQ(ip.GetFloat("gamma"), 0.999);
  EXPECT_EQ(ip.GetSchedule("learning_rate"), Schedule::Constant(0.000222425));
  EXPECT_EQ(ip.GetFloat("ent_coef"), 1.37976e-07);
  EXPECT_EQ(ip.GetSchedule("clip_range"), Schedule::Constant(0.4));
  EXPECT_EQ(ip.GetInt("n_epochs"), 5);
  EXPECT_EQ(ip.GetFloat("gae_lambda"), 0.9);
  EXPECT_EQ(ip.GetFloat("max_grad_norm"), 0.3);
  EXPECT_EQ(ip.GetFloat("vf_coef"), 0.19816);
  EXPECT_EQ(ip.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{64, 64}));

  const Config idp = LoadRunConfig(ConfigPath("ppo/inverteddoublependulum.yaml"), {}, std::nullopt);
  EXPECT_EQ(idp.GetString("env_id"), "InvertedDoublePendulum-v4");
  EXPECT_TRUE(idp.GetBool("normalize"));
  EXPECT_EQ(idp.GetInt("n_timesteps"), 1000000);
  EXPECT_EQ(idp.GetInt("n_envs"), 1);
  EXPECT_EQ(idp.GetInt("batch_size"), 512);
  EXPECT_EQ(idp.GetInt("n_steps"), 128);
  EXPECT_EQ(idp.GetFloat("gamma"), 0.98);
  EXPECT_EQ(idp.GetSchedule("learning_rate"), Schedule::Constant(0.000155454));
  EXPECT_EQ(idp.GetFloat("ent_coef"), 1.05057e-06);
  EXPECT_EQ(idp.GetSchedule("clip_range"), Schedule::Constant(0.4));
  EXPECT_EQ(idp.GetInt("n_epochs"), 10);
  EXPECT_EQ(idp.GetFloat("gae_lambda"), 0.8);
  EXPECT_EQ(idp.GetFloat("max_grad_norm"), 0.5);
  EXPECT_EQ(idp.GetFloat("vf_coef"), 0.695929);
  EXPECT_EQ(idp.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{64, 64}));

  const Config r = LoadRunConfig(ConfigPath("ppo/reacher.yaml"), {}, std::nullopt);
  EXPECT_EQ(r.GetString("env_id"), "Reacher-v4");
  EXPECT_TRUE(r.GetBool("normalize"));
  EXPECT_EQ(r.GetInt("n_timesteps"), 1000000);
  EXPECT_EQ(r.GetInt("n_envs"), 1);
  EXPECT_EQ(r.GetInt("batch_size"), 32);
  EXPECT_EQ(r.GetInt("n_steps"), 512);
  EXPECT_EQ(r.GetFloat("gamma"), 0.9);
  EXPECT_EQ(r.GetSchedule("learning_rate"), Schedule::Constant(0.000104019));
  EXPECT_EQ(r.GetFloat("ent_coef"), 7.52585e-08);
  EXPECT_EQ(r.GetSchedule("clip_range"), Schedule::Constant(0.3));
  EXPECT_EQ(r.GetInt("n_epochs"), 5);
  EXPECT_EQ(r.GetFloat("gae_lambda"), 1.0);
  EXPECT_EQ(r.GetFloat("max_grad_norm"), 0.9);
  EXPECT_EQ(r.GetFloat("vf_coef"), 0.950368);

  const Config hu = LoadRunConfig(ConfigPath("ppo/humanoid.yaml"), {}, std::nullopt);
  EXPECT_EQ(hu.GetString("env_id"), "Humanoid-v4");
  EXPECT_TRUE(hu.GetBool("normalize"));
  EXPECT_EQ(hu.GetInt("n_timesteps"), 10000000);
  EXPECT_EQ(hu.GetInt("batch_size"), 256);
  EXPECT_EQ(hu.GetInt("n_steps"), 512);
  EXPECT_EQ(hu.GetFloat("gamma"), 0.95);
  EXPECT_EQ(hu.GetSchedule("learning_rate"), Schedule::Constant(3.56987e-05));
  EXPECT_EQ(hu.GetFloat("ent_coef"), 0.00238306);
  EXPECT_EQ(hu.GetSchedule("clip_range"), Schedule::Constant(0.3));
  EXPECT_EQ(hu.GetInt("n_epochs"), 5);
  EXPECT_EQ(hu.GetFloat("gae_lambda"), 0.9);
  EXPECT_EQ(hu.GetFloat("max_grad_norm"), 2.0);
  EXPECT_EQ(hu.GetFloat("vf_coef"), 0.431892);
  EXPECT_EQ(hu.GetFloat("policy_kwargs.log_std_init"), -2.0);
  EXPECT_FALSE(hu.GetBool("policy_kwargs.ortho_init"));
  EXPECT_EQ(hu.GetString("policy_kwargs.activation_fn"), "relu");
  EXPECT_EQ(hu.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(hu.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{256, 256}));

  // rl-zoo's HumanoidStandup-v2 section (208b6fd).
  const Config hs = LoadRunConfig(ConfigPath("ppo/humanoidstandup.yaml"), {}, std::nullopt);
  EXPECT_EQ(hs.GetString("env_id"), "HumanoidStandup-v4");
  EXPECT_TRUE(hs.GetBool("normalize"));
  EXPECT_EQ(hs.GetInt("n_envs"), 1);
  EXPECT_EQ(hs.GetInt("n_timesteps"), 10000000);
  EXPECT_EQ(hs.GetInt("batch_size"), 32);
  EXPECT_EQ(hs.GetInt("n_steps"), 512);
  EXPECT_EQ(hs.GetFloat("gamma"), 0.99);
  EXPECT_EQ(hs.GetSchedule("learning_rate"), Schedule::Constant(2.55673e-05));
  EXPECT_EQ(hs.GetFloat("ent_coef"), 3.62109e-06);
  EXPECT_EQ(hs.GetSchedule("clip_range"), Schedule::Constant(0.3));
  EXPECT_EQ(hs.GetInt("n_epochs"), 20);
  EXPECT_EQ(hs.GetFloat("gae_lambda"), 0.9);
  EXPECT_EQ(hs.GetFloat("max_grad_norm"), 0.7);
  EXPECT_EQ(hs.GetFloat("vf_coef"), 0.430793);
  EXPECT_EQ(hs.GetFloat("policy_kwargs.log_std_init"), -2.0);
  EXPECT_FALSE(hs.GetBool("policy_kwargs.ortho_init"));
  EXPECT_EQ(hs.GetString("policy_kwargs.activation_fn"), "relu");
  EXPECT_EQ(hs.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(hs.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{256, 256}));
}

TEST(MujocoPresetTest, SacPresetsAreSb3DefaultsWithLearningStarts10000) {
  for (const char* rel : {"sac/halfcheetah.yaml", "sac/hopper.yaml", "sac/walker2d.yaml",
                          "sac/ant.yaml", "sac/swimmer.yaml", "sac/humanoid.yaml"}) {
    const Config c = LoadRunConfig(ConfigPath(rel), {}, std::nullopt);
    const std::string name = rel;
    EXPECT_EQ(c.GetString("algo"), "sac") << rel;
    EXPECT_EQ(c.GetInt("learning_starts"), 10000) << rel;
    // rl-zoo's Humanoid-v3 section sets n_timesteps 2e6 over the anchor's 1e6.
    EXPECT_EQ(c.GetInt("n_timesteps"), name == "sac/humanoid.yaml" ? 2000000 : 1000000) << rel;
    EXPECT_EQ(c.GetInt("batch_size"), 256) << rel;
    EXPECT_EQ(c.GetInt("buffer_size"), 1000000) << rel;
    // rl-zoo's Swimmer-v4 section (208b6fd) adds gamma 0.999 to the anchor.
    EXPECT_EQ(c.GetFloat("gamma"), name == "sac/swimmer.yaml" ? 0.999 : 0.99) << rel;
  }
}

// About a thousand steps of each preset (fewer epochs, smaller SAC batches, to stay within
// seconds): the run finishes, evaluates, and reports finite figures; run without verbose output
// (`--quiet`), it prints no MuJoCo warning. SAC starts learning at 1000
// steps here (the preset's 10000 would leave the run without updates).
TEST(MujocoPresetTest, EveryPresetTrainsBriefly) {
  struct Case {
    const char* rel;
    std::vector<std::string> sets;
  };
  const Case cases[] = {
      {"ppo/halfcheetah.yaml", {"n_timesteps=1024", "n_epochs=2"}},
      {"ppo/hopper.yaml", {"n_timesteps=1024", "n_epochs=2"}},
      {"sac/halfcheetah.yaml", {"n_timesteps=1200", "learning_starts=1000", "batch_size=64"}},
      {"sac/hopper.yaml", {"n_timesteps=1200", "learning_starts=1000", "batch_size=64"}},
      {"ppo/walker2d.yaml", {"n_timesteps=1024", "n_epochs=2"}},
      {"sac/walker2d.yaml", {"n_timesteps=1200", "learning_starts=1000", "batch_size=64"}},
      {"ppo/ant.yaml", {"n_timesteps=1024", "n_steps=512", "n_epochs=2"}},
      {"sac/ant.yaml", {"n_timesteps=1200", "learning_starts=1000", "batch_size=64"}},
      {"ppo/swimmer.yaml", {"n_timesteps=1024", "n_steps=256", "n_epochs=2"}},
      {"sac/swimmer.yaml", {"n_timesteps=1200", "learning_starts=1000", "batch_size=64"}},
      {"ppo/invertedpendulum.yaml", {"n_timesteps=1024"}},
      {"ppo/inverteddoublependulum.yaml", {"n_timesteps=1024"}},
      {"ppo/reacher.yaml", {"n_timesteps=1024", "n_epochs=2"}},
      {"ppo/humanoid.yaml", {"n_timesteps=1024", "n_epochs=2"}},
      {"ppo/humanoidstandup.yaml", {"n_timesteps=1024", "n_epochs=2"}},
      {"sac/humanoid.yaml", {"n_timesteps=1200", "learning_starts=1000", "batch_size=64"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> sets = c.sets;
    sets.push_back("eval.freq=0");
    sets.push_back("eval.final_episodes=1");
    const Config config = LoadRunConfig(ConfigPath(c.rel), sets, 3);
    TrainOptions options;
    options.out_dir = ::testing::TempDir() + "/greenrl_mujoco_preset_" +
                      std::to_string(&c - cases);
    fs::remove_all(options.out_dir);
    options.verbose = false;
    // The meter is read throughout the run: it records whether MuJoCo's warnings were printed.
    auto cpu_s = std::make_shared<double>(0.0);
    auto warnings_printed = std::make_shared<int>(0);
    options.meter_override = std::make_unique<energy::EstimatorMeter>(12.0, [=] {
      *warnings_printed += env::SimulatorWarningsPrinted() ? 1 : 0;
      return *cpu_s += 0.25;
    });
    const int printed_before_train = *warnings_printed;  // the meter reads once when made
    const TrainResult result = Train(config, std::move(options));
    EXPECT_EQ(*warnings_printed, printed_before_train)
        << c.rel << ": a quiet run prints no MuJoCo warning";
    EXPECT_TRUE(env::SimulatorWarningsPrinted()) << c.rel << ": restored when Train returns";
    const report::RunReport& r = result.report;
    EXPECT_GE(r.steps, config.GetInt("n_timesteps")) << c.rel;
    EXPECT_EQ(r.eval_episodes, 1) << c.rel;
    EXPECT_TRUE(std::isfinite(r.eval_mean_return)) << c.rel;
    EXPECT_EQ(r.env_non_finite_resets, 0) << c.rel;
    EXPECT_TRUE(fs::exists(result.checkpoint_path)) << c.rel;
  }
}

}  // namespace
}  // namespace greenrl::train
