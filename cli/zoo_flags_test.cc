// rl-zoo's flags translated to greenrl's: values carried over, forms with '=' and several values.
#include "cli/zoo_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace greenrl::cli {
namespace {

TEST(ZooFlagsTest, TrainFlagsKeepTheirValues) {
  EXPECT_EQ(ZooFlagsHint("train", {"-n", "5000", "-params", "n_steps:64", "gamma:0.9",
                                   "--eval-freq=-1", "--num-threads", "2"}),
            "rl-zoo's flags, which `greenrl train` spells otherwise: -n 5000 -> --set "
            "n_timesteps=5000; -params n_steps:64 gamma:0.9 -> --set n_steps=64 --set gamma=0.9; "
            "--eval-freq -1 -> --set eval.freq=-1; --num-threads 2 -> --set threads.torch=2");
  EXPECT_EQ(ZooFlagsHint("train", {"--hyperparams", "learning_rate:lin_1e-3"}),
            "rl-zoo's flag, which `greenrl train` spells otherwise: --hyperparams "
            "learning_rate:lin_1e-3 -> --set learning_rate=lin_1e-3");
  // Without its value, the placeholder; a flag greenrl needs nothing for says why.
  EXPECT_EQ(ZooFlagsHint("train", {"--save-freq", "-P"}),
            "rl-zoo's flags, which `greenrl train` spells otherwise: --save-freq -> --set "
            "checkpoint_freq=N; -P -> nothing: the progress line shows whenever stderr is a "
            "terminal");
  EXPECT_EQ(ZooFlagsHint("train", {"-tb", "logs/tb", "-f", "logs"}),
            "rl-zoo's flags, which `greenrl train` spells otherwise: -tb logs/tb -> nothing: "
            "TensorBoard event files are always written into the run directory; -f logs -> "
            "--out DIR (one run's own new or empty directory; default "
            "runs/<env>_<algo>_s<seed>_<time>)");
}

TEST(ZooFlagsTest, EvalFlagsAndOtherArgumentsAreLeftAlone) {
  EXPECT_EQ(ZooFlagsHint("eval", {"--load-best", "-f", "logs", "--no-render"}),
            "rl-zoo's flags, which `greenrl eval` spells otherwise: --load-best -> --best; -f "
            "logs -> --run RUN_DIR (one run's directory, written by greenrl train); --no-render "
            "-> nothing: greenrl eval does not render");
  EXPECT_EQ(ZooFlagsHint("train", {"--bset", "x"}), "");           // a misspelling, not rl-zoo's
  EXPECT_EQ(ZooFlagsHint("train", {"--load-best"}), "");           // enjoy.py's, not train.py's
  EXPECT_EQ(ZooFlagsHint("report", {"-n", "5"}), "");              // no rl-zoo counterpart
  EXPECT_EQ(ZooFlagsHint("train", {"5", "--n-timesteps-x"}), "");  // whole names only
}

}  // namespace
}  // namespace greenrl::cli
