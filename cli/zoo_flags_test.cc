// rl-zoo's flags translated to greenrl's: values carried over, -1 sentinels, -params' Python
// values, shell quoting, forms with '=' and several values, and the arguments left for others.
#include "cli/zoo_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace greenrl::cli {
namespace {

std::string Hint(const std::string& command, const std::vector<std::string>& args,
                 const std::string& algo = "") {
  return ZooFlagsHint(command, args, algo).hint;
}

TEST(ZooFlagsTest, TrainFlagsKeepTheirValues) {
  EXPECT_EQ(Hint("train", {"-n", "5000", "-params", "n_steps:64", "gamma:0.9", "--eval-freq=2000",
                           "--num-threads", "2"}),
            "rl-zoo's flags, which `greenrl train` spells otherwise: -n 5000 -> --set "
            "n_timesteps=5000; -params n_steps:64 gamma:0.9 -> --set n_steps=64 --set gamma=0.9; "
            "--eval-freq 2000 -> --set eval.freq=2000; --num-threads 2 -> --set threads.torch=2");
  EXPECT_EQ(Hint("train", {"--hyperparams", "learning_rate:lin_1e-3"}),
            "rl-zoo's flag, which `greenrl train` spells otherwise: --hyperparams "
            "learning_rate:lin_1e-3 -> --set learning_rate=lin_1e-3");
  // rl-zoo reads any "<word>_<value>" schedule as linear: the hint writes greenrl's lin_.
  EXPECT_EQ(Hint("train", {"-params", "learning_rate:linear_0.002", "clip_range:cos_0.1"}),
            "rl-zoo's flag, which `greenrl train` spells otherwise: -params "
            "learning_rate:linear_0.002 clip_range:cos_0.1 -> --set learning_rate=lin_0.002 "
            "--set clip_range=lin_0.1");
  // Quoted for Python's eval, as rl-zoo's -params needs them.
  const std::string quoted = Hint("train", {"-params", "learning_rate:'cos_1e-3'"});
  EXPECT_NE(quoted.find(" -> --set learning_rate=lin_1e-3"), std::string::npos) << quoted;
  // Without its value, the placeholder; a flag greenrl needs nothing for says why.
  EXPECT_EQ(Hint("train", {"--save-freq", "-P"}),
            "rl-zoo's flags, which `greenrl train` spells otherwise: --save-freq -> --set "
            "checkpoint_freq=N; -P -> nothing: the progress line shows whenever stderr is a "
            "terminal");
  // Only flags greenrl needs nothing for: said so, not "spells otherwise".
  EXPECT_EQ(
      Hint("train", {"--vec-env", "subproc"}),
      "rl-zoo's flag, which `greenrl train` has no equivalent of: --vec-env subproc -> nothing: "
      "envs run natively, in threads (threads.env), not in subprocesses, and an evaluation "
      "steps all its episodes at once, one env each");
  // rl-zoo's replay_buffer.pkl beside the final model, for -i: greenrl's final.pt holds none.
  EXPECT_EQ(Hint("train", {"--save-replay-buffer"}),
            "rl-zoo's flag, which `greenrl train` has no equivalent of: --save-replay-buffer -> "
            "nothing: --trained-agent starts with an empty replay buffer (final.pt holds none); "
            "--resume's checkpoints hold it (checkpoint_replay_buffer, true by default)");
  EXPECT_EQ(Hint("train", {"-tb", "logs/tb", "-f", "logs"}),
            "rl-zoo's flags, which `greenrl train` spells otherwise: -tb logs/tb -> nothing: "
            "TensorBoard event files are always written into the run directory; -f logs -> "
            "--out DIR (one run's own new or empty directory; default "
            "runs/<env>_<algo>_s<seed>_<time>)");
}

// rl-zoo's -1 means "off" or "keep": greenrl's own spelling of that, never a value it refuses.
TEST(ZooFlagsTest, MinusOneSentinelsBecomeGreenrlsOwn) {
  EXPECT_EQ(Hint("train", {"--eval-freq", "-1", "--save-freq=-1", "-n", "-1", "--verbose", "0",
                           "--verbose=2"}),
            "rl-zoo's flags, which `greenrl train` spells otherwise: --eval-freq -1 -> --set "
            "eval.freq=0 (no periodic evaluation; the final one still runs); --save-freq -1 -> "
            "--set checkpoint_freq=0 (no periodic resume checkpoint); -n -1 -> nothing: "
            "n_timesteps stays the preset's; --verbose 0 -> --quiet; --verbose 2 -> nothing: log "
            "lines are on unless --quiet");
}

// -params' values are Python: policy_kwargs and normalize stay whole values, which greenrl reads
// as rl-zoo does (the whole value replaces the preset's); int(...), float(...) and train_freq's
// (n, 'step') become greenrl's numbers; a --set a shell would split is quoted.
TEST(ZooFlagsTest, ParamsPythonValuesBecomeGreenrlKeysQuotedForTheShell) {
  EXPECT_EQ(
      Hint("train", {"-params", "policy_kwargs:dict(net_arch=[64, 64], ortho_init=False)",
                     "normalize:{'norm_obs': True, 'norm_reward': False}"}),
      "rl-zoo's flag, which `greenrl train` spells otherwise: -params "
      "'policy_kwargs:dict(net_arch=[64, 64], ortho_init=False)' 'normalize:{'\\''norm_obs'\\'': "
      "True, '\\''norm_reward'\\'': False}' -> --set 'policy_kwargs=dict(net_arch=[64, 64], "
      "ortho_init=False)' --set 'normalize={'\\''norm_obs'\\'': True, '\\''norm_reward'\\'': "
      "False}'");
  EXPECT_EQ(Hint("train", {"-params", "train_freq:(4, 'step')", "n_timesteps:int(1e5)",
                           "train_freq:[1, 'episode']"}),
            "rl-zoo's flag, which `greenrl train` spells otherwise: -params "
            "'train_freq:(4, '\\''step'\\'')' 'n_timesteps:int(1e5)' 'train_freq:[1, "
            "'\\''episode'\\'']' -> --set train_freq=4 --set n_timesteps=1e5 --set "
            "'train_freq=[1, '\\''episode'\\'']'");
  // --device is a PPO key: for DQN and SAC, nothing in its place.
  EXPECT_EQ(Hint("train", {"--device", "cpu"}, "sac"),
            "rl-zoo's flag, which `greenrl train` has no equivalent of: --device cpu -> nothing: "
            "greenrl's DQN and SAC run on the CPU (device is a PPO key)");
  EXPECT_EQ(Hint("train", {"--device", "cuda"}, "ppo"),
            "rl-zoo's flag, which `greenrl train` spells otherwise: --device cuda -> --set "
            "device=cuda");
  // SB3's None for target_kl and clip_range_vf is greenrl's 0 (off).
  EXPECT_EQ(Hint("train", {"-params", "target_kl:None", "clip_range_vf:None"}),
            "rl-zoo's flag, which `greenrl train` spells otherwise: -params target_kl:None "
            "clip_range_vf:None -> --set target_kl=0 --set clip_range_vf=0");
  // What greenrl cannot read stays as given, for its own check to name.
  EXPECT_EQ(Hint("train", {"-params", "policy_kwargs:foo(1)"}),
            "rl-zoo's flag, which `greenrl train` spells otherwise: -params "
            "'policy_kwargs:foo(1)' -> --set 'policy_kwargs=foo(1)'");
}

// CleanRL's flags (tyro's --kebab-case Args of ppo.py, dqn.py, sac_continuous_action.py) get
// greenrl's spelling too, said as CleanRL's; with rl-zoo's beside them, as both.
TEST(ZooFlagsTest, CleanRlFlagsGetGreenrlsSpelling) {
  EXPECT_EQ(Hint("train", {"--env-id", "CartPole-v1", "--total-timesteps", "50000", "--num-envs",
                           "4", "--update-epochs=4", "--anneal-lr"}),
            "CleanRL's flags, which `greenrl train` spells otherwise: --env-id CartPole-v1 -> "
            "--env CartPole-v1; --total-timesteps 50000 -> --set n_timesteps=50000; --num-envs 4 "
            "-> --set n_envs=4; --update-epochs 4 -> --set n_epochs=4; --anneal-lr -> --set "
            "learning_rate=lin_LR (SB3's linear schedule from LR to 0, what anneal_lr does; SB3 "
            "reads it after each rollout, CleanRL before, so each update's rate is one rollout "
            "lower)");
  // --learning-rate alone: CleanRL's PPO anneals it (anneal_lr defaults to true), its DQN not.
  EXPECT_EQ(Hint("train", {"--learning-rate", "2.5e-4"}, "ppo"),
            "CleanRL's flag, which `greenrl train` spells otherwise: --learning-rate 2.5e-4 -> "
            "--set learning_rate=lin_2.5e-4 (CleanRL's PPO anneals by default: SB3's linear "
            "schedule from it to 0; with --no-anneal-lr, or for DQN, --set learning_rate=2.5e-4)");
  EXPECT_EQ(Hint("train", {"--learning-rate", "2.5e-4"}, "dqn")
                .rfind("CleanRL's flag, which `greenrl train` spells otherwise: --learning-rate "
                       "2.5e-4 -> --set learning_rate=2.5e-4. Beyond its flags, CleanRL's dqn.py",
                       0),
            0u);
  // CleanRL's value loss is 0.5 x the mean squared error: its vf_coef is twice greenrl's.
  EXPECT_EQ(Hint("train", {"--vf-coef", "0.5", "--target-kl", "0.015"}),
            "CleanRL's flags, which `greenrl train` spells otherwise: --vf-coef 0.5 -> --set "
            "vf_coef=0.25 (half CleanRL's: its value loss is half the mean squared error that SB3 "
            "and greenrl weigh); --target-kl 0.015 -> --set target_kl=0.015 (SB3's rule: each "
            "minibatch is checked before its step and ends the update at approx_kl > 1.5 x "
            "target_kl; CleanRL checks after each epoch, at target_kl)");
  // With --learning-rate, one value: annealed (lin_) or constant.
  EXPECT_EQ(Hint("train", {"--learning-rate", "2.5e-4", "--anneal-lr"}),
            "CleanRL's flags, which `greenrl train` spells otherwise: --learning-rate 2.5e-4 -> "
            "--set learning_rate=lin_2.5e-4 (annealed: SB3's linear schedule from it to 0); "
            "--anneal-lr -> nothing: --learning-rate's learning_rate=lin_2.5e-4 says it");
  EXPECT_EQ(Hint("train", {"--anneal-lr", "False", "--learning-rate=1e-3"}),
            "CleanRL's flags, which `greenrl train` spells otherwise: --anneal-lr False -> "
            "nothing: --learning-rate's learning_rate=1e-3 says it; --learning-rate 1e-3 -> --set "
            "learning_rate=1e-3");
  EXPECT_EQ(Hint("train", {"--target-network-frequency", "500", "--start-e", "1"}),
            "CleanRL's flags, which `greenrl train` spells otherwise: --target-network-frequency "
            "500 -> --set target_update_interval=500; --start-e 1 -> --set "
            "exploration_initial_eps=1. Beyond its flags, CleanRL's dqn.py has a [120, 84] "
            "network (SB3's and greenrl's default is [64, 64]: --set "
            "policy_kwargs.net_arch=[120,84]), no gradient clipping (greenrl's max_grad_norm is "
            "10: --set max_grad_norm=1e6 clips practically nothing) and a mean squared error loss "
            "(SB3's and greenrl's is the Huber loss, which no key changes)");
  // A flag CleanRL's SAC has too (--buffer-size) says it with --algo dqn only.
  EXPECT_EQ(Hint("train", {"--buffer-size", "10000"}),
            "CleanRL's flag, which `greenrl train` spells otherwise: --buffer-size 10000 -> --set "
            "buffer_size=10000");
  EXPECT_NE(Hint("train", {"--buffer-size", "10000"}, "dqn").find("Beyond its flags"),
            std::string::npos);
  EXPECT_EQ(Hint("train", {"-n", "5", "--clip-coef", "0.1"}),
            "rl-zoo's and CleanRL's flags, which `greenrl train` spells otherwise: -n 5 -> --set "
            "n_timesteps=5; --clip-coef 0.1 -> --set clip_range=0.1");
  EXPECT_EQ(
      Hint("train", {"--cuda"}, "sac"),
      "CleanRL's flag, which `greenrl train` has no equivalent of: --cuda -> nothing: greenrl's "
      "DQN and SAC run on the CPU (device is a PPO key)");
  // Older CleanRL's `--flag False` (argparse's strtobool): the value is read, false as --no-.
  EXPECT_EQ(Hint("train", {"--anneal-lr", "False", "--cuda=false", "--norm-adv", "True"}),
            "CleanRL's flags, which `greenrl train` spells otherwise: --anneal-lr False -> --set "
            "learning_rate=LR (a constant rate); --cuda false -> nothing: device is cpu by "
            "default; --norm-adv True -> --set normalize_advantage=true");
  EXPECT_EQ(Hint("eval", {"--total-timesteps", "5"}), "");  // train's only
  // SAC's --alpha counts only with --no-autotune: CleanRL's autotune, on by default, learns the
  // coefficient (from 1, as ent_coef auto) and ignores it.
  EXPECT_EQ(Hint("train", {"--alpha", "0.5"}),
            "CleanRL's flag, which `greenrl train` has no equivalent of: --alpha 0.5 -> nothing: "
            "CleanRL's autotune (its default) learns the coefficient and ignores --alpha; with "
            "--no-autotune, --set ent_coef=ALPHA");
  EXPECT_EQ(Hint("train", {"--alpha", "0.5", "--autotune", "False"}),
            "CleanRL's flags, which `greenrl train` spells otherwise: --alpha 0.5 -> --set "
            "ent_coef=0.5 (a fixed coefficient); --autotune False -> nothing: --alpha's "
            "ent_coef=0.5 says it");
  EXPECT_EQ(Hint("train", {"--no-autotune"}),
            "CleanRL's flag, which `greenrl train` spells otherwise: --no-autotune -> --set "
            "ent_coef=0.2 (a fixed coefficient, CleanRL's default --alpha)");
}

TEST(ZooFlagsTest, EvalFlagsAndOtherArgumentsAreLeftAlone) {
  EXPECT_EQ(Hint("eval", {"--load-best", "-f", "logs", "--no-render"}),
            "rl-zoo's flags, which `greenrl eval` spells otherwise: --load-best -> --best; -f "
            "logs -> --run RUN_DIR (one run's directory, written by greenrl train); --no-render "
            "-> nothing: greenrl eval does not render");
  EXPECT_EQ(Hint("eval", {"--verbose", "0"}),
            "rl-zoo's flag, which `greenrl eval` spells otherwise: --verbose 0 -> --quiet");
  // train.py's evaluation count (SB3's n_eval_episodes), given to eval.
  for (const char* flag : {"--eval-episodes", "--n-eval-episodes", "--n_eval_episodes"}) {
    EXPECT_EQ(Hint("eval", {flag, "5"}), std::string("rl-zoo's flag, which `greenrl eval` spells "
                                                     "otherwise: ") +
                                             flag + " 5 -> --episodes 5");
  }
  EXPECT_EQ(Hint("train", {"--bset", "x"}), "");           // a misspelling, not rl-zoo's
  EXPECT_EQ(Hint("train", {"--load-best"}), "");           // enjoy.py's, not train.py's
  EXPECT_EQ(Hint("report", {"-n", "5"}), "");              // no rl-zoo counterpart
  EXPECT_EQ(Hint("train", {"5", "--n-timesteps-x"}), "");  // whole names only
  // The arguments that are no rl-zoo flag or value, for the caller to report beside the hint.
  const ZooFlags mixed = ZooFlagsHint("train", {"-n", "5000", "--dry-rn", "--sed=3", "x"});
  EXPECT_EQ(mixed.others, (std::vector<std::string>{"--dry-rn", "--sed=3", "x"}));
}

}  // namespace
}  // namespace greenrl::cli
