#include "cli/same_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace greenrl::cli {
namespace {

// The lines Show returns, copied (its views are valid until the next call).
std::vector<std::string> Shown(SameLines* same, int rank, const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view line : same->Show(rank, text)) out.emplace_back(line);
  return out;
}

using Lines = std::vector<std::string>;

TEST(SameLinesTest, OneLineErrorEveryRankPrintsIsShownOnceAndCounted) {
  SameLines same;
  const std::string error = "greenrl: error: n_step: got 'n_step'; did you mean 'n_steps'?";
  EXPECT_EQ(Shown(&same, 1, error), Lines{error});
  EXPECT_EQ(Shown(&same, 0, error), Lines{});
  EXPECT_EQ(Shown(&same, 2, error), Lines{});
  EXPECT_EQ(same.hidden(), 2);
  EXPECT_EQ(same.hidden_from(), (std::set<int>{0, 2}));
}

TEST(SameLinesTest, GreenrlWarningLinesAreMessagesToo) {
  SameLines same;
  const std::string warning = "greenrl warning: RAPL counter wrapped twice between two reads";
  EXPECT_EQ(Shown(&same, 0, warning), Lines{warning});
  EXPECT_EQ(Shown(&same, 1, warning), Lines{});
  EXPECT_EQ(same.hidden(), 1);
}

TEST(SameLinesTest, OtherLinesAndARanksOwnRepeatsAreAlwaysShown) {
  SameLines same;
  const std::string torch = "[W ProcessGroupGloo.cpp:694] Warning: Unable to resolve hostname";
  EXPECT_EQ(Shown(&same, 0, torch), Lines{torch});
  EXPECT_EQ(Shown(&same, 1, torch), Lines{torch});  // before any greenrl message: not one
  const std::string warning = "greenrl: n_envs 3 does not divide 1024";
  EXPECT_EQ(Shown(&same, 0, warning), Lines{warning});
  EXPECT_EQ(Shown(&same, 0, warning), Lines{warning});  // its own repeat
  EXPECT_EQ(same.hidden(), 0);
  EXPECT_TRUE(same.hidden_from().empty());
}

// A LibTorch error's what() spans lines after "greenrl: failed: ": lines every rank prints
// alike under the same first line are hidden with it.
TEST(SameLinesTest, LaterLinesOfAMessageEveryRankPrintsAreHiddenWithIt) {
  SameLines same;
  const Lines message = {"greenrl: failed: [/gloo/transport/tcp/pair.cc:598] Connection closed",
                         "Exception raised from recvFromPeer at gloo/pair.cc:598 (most recent "
                         "call first):",
                         "frame #0: c10::Error::Error"};
  for (const std::string& line : message) EXPECT_EQ(Shown(&same, 0, line), Lines{line});
  for (const std::string& line : message) EXPECT_EQ(Shown(&same, 1, line), Lines{});
  EXPECT_EQ(same.hidden(), 3);
  EXPECT_EQ(same.hidden_from(), std::set<int>{1});
}

// A later line that differs from every other rank's is shown, after its hidden first line, so
// that it does not stand alone; the first line is then no longer counted as hidden.
TEST(SameLinesTest, ALaterLineThatDiffersIsShownWithItsFirstLine) {
  SameLines same;
  const std::string first = "greenrl: failed: [gloo] Timed out waiting 30000ms for recv";
  EXPECT_EQ(Shown(&same, 0, first), Lines{first});
  EXPECT_EQ(Shown(&same, 0, "frame #0: 0x7f00aa"), Lines{"frame #0: 0x7f00aa"});
  EXPECT_EQ(Shown(&same, 1, first), Lines{});
  EXPECT_EQ(same.hidden(), 1);
  EXPECT_EQ(Shown(&same, 1, "frame #0: 0x7f00bb"), (Lines{first, "frame #0: 0x7f00bb"}));
  EXPECT_EQ(same.hidden(), 0);
  EXPECT_TRUE(same.hidden_from().empty());
  EXPECT_EQ(Shown(&same, 1, "frame #1: main"), Lines{"frame #1: main"});  // first already shown
}

// The same text under another first line is another line.
TEST(SameLinesTest, ALaterLineIsKeyedByItsFirstLine) {
  SameLines same;
  EXPECT_EQ(Shown(&same, 0, "greenrl: failed: A"), Lines{"greenrl: failed: A"});
  EXPECT_EQ(Shown(&same, 0, "  details"), Lines{"  details"});
  EXPECT_EQ(Shown(&same, 1, "greenrl: failed: B"), Lines{"greenrl: failed: B"});
  EXPECT_EQ(Shown(&same, 1, "  details"), Lines{"  details"});
  EXPECT_EQ(same.hidden(), 0);
}

}  // namespace
}  // namespace greenrl::cli
