#include "greenrl/core/shell_word.h"

#include <gtest/gtest.h>

namespace greenrl {
namespace {

// Words a shell takes as they are stay so; others are single-quoted, a quote inside written '\''.
TEST(ShellWordTest, QuotesOnlyWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(ShellWord("runs/CartPole-v1_ppo_s0_2026-12-07T21:00:00Z"),
            "runs/CartPole-v1_ppo_s0_2026-12-07T21:00:00Z");
  EXPECT_EQ(ShellWord("key=a,b+c@d%e"), "key=a,b+c@d%e");
  EXPECT_EQ(ShellWord("my run"), "'my run'");
  EXPECT_EQ(ShellWord("$HOME/*"), "'$HOME/*'");
  EXPECT_EQ(ShellWord("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellWord(""), "''");
}

}  // namespace
}  // namespace greenrl
