// `greenrl train` under SIGINT and SIGTERM, as a user or a job scheduler sends them to the real
// binary: the first signal finishes the iteration, writes a resume checkpoint and the reports and
// exits 128 + signal; a second one exits at once; `greenrl train --resume` continues either way
// from the last good checkpoint (README "Checkpoints, resume and signals").
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "greenrl/core/install_paths.h"
#include "greenrl/core/test_paths.h"

namespace {

namespace fs = std::filesystem;
namespace test_paths = greenrl::test_paths;
using greenrl::SourceTreeDir;

std::string Preset() { return SourceTreeDir() + "/configs/ppo/cartpole.yaml"; }

std::string Dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/greenrl_signals_" + name;
  fs::remove_all(d);
  return d;
}

// Starts greenrl with `args`, stdout and stderr into `log`; with ignore_sigint, SIGINT ignored
// from its start (as a non-interactive shell starts `cmd &`).
pid_t Spawn(const std::vector<std::string>& args, const std::string& log,
            bool ignore_sigint = false) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (ignore_sigint) ::signal(SIGINT, SIG_IGN);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(test_paths::GreenrlBin()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(test_paths::GreenrlBin(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// The exit code, or 128 + the signal that killed it.
int Wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int RunGreenrl(const std::vector<std::string>& args, const std::string& log) {
  return Wait(Spawn(args, log));
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Polls `done` every 20 ms; gives up after 300 s (a guard against a hang, not a timing check).
bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 15000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

size_t MetricsRows(const std::string& dir) {
  const std::string text = Slurp(dir + "/metrics.csv");
  return text.empty() ? 0 : static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) - 1;
}

// Steps of the checkpoints/step_<steps>.pt files, increasing.
std::vector<long long> CheckpointSteps(const std::string& dir) {
  std::vector<long long> steps;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/checkpoints", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step_", 0) == 0 && name.size() == 20 && name.substr(17) == ".pt") {
      steps.push_back(std::stoll(name.substr(5, 12)));
    }
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// The global_step column of metrics.csv (the first column).
std::vector<long long> MetricSteps(const std::string& dir) {
  std::istringstream in(Slurp(dir + "/metrics.csv"));
  std::string line;
  std::getline(in, line);
  std::vector<long long> steps;
  while (std::getline(in, line)) steps.push_back(std::stoll(line.substr(0, line.find(','))));
  return steps;
}

// Resumes `dir` for one more iteration of `rollout` steps (n_envs x n_steps) past from_step.
void ExpectResumes(const std::string& dir, long long from_step, long long rollout = 256) {
  const long long target = from_step + rollout;
  const int code =
      RunGreenrl({"train", "--resume", dir, "--set", "n_timesteps=" + std::to_string(target),
                  "--set", "eval.final_episodes=1"},
                 dir + "_resume.log");
  EXPECT_EQ(code, 0) << Slurp(dir + "_resume.log");
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/final.pt"));
  const std::vector<long long> steps = MetricSteps(dir);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back(), target);
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_LT(steps[i - 1], steps[i]) << "row " << i;
}

TEST(SignalsTest, SigintCheckpointsReportsAndExits130) {
  const std::string dir = Dir("int");
  const pid_t pid = Spawn({"train", "--config", Preset(), "--set", "n_timesteps=10000000", "--set",
                           "eval.freq=0", "--set", "checkpoint_freq=0", "--quiet", "--out", dir},
                          dir + ".log");
  ASSERT_TRUE(WaitFor([&] { return MetricsRows(dir) >= 2; }));
  ::kill(pid, SIGINT);
  EXPECT_EQ(Wait(pid), 130) << Slurp(dir + ".log");
  EXPECT_NE(Slurp(dir + ".log").find("greenrl: stopped by signal 2 at step"), std::string::npos)
      << Slurp(dir + ".log");
  EXPECT_TRUE(fs::exists(dir + "/energy.json"));
  EXPECT_TRUE(fs::exists(dir + "/emissions.csv"));
  EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  const std::vector<long long> ckpt = CheckpointSteps(dir);
  ASSERT_EQ(ckpt.size(), 1u);  // checkpoint_freq 0: only the one the signal asked for
  EXPECT_EQ(MetricSteps(dir).back(), ckpt[0]);
  ExpectResumes(dir, ckpt[0]);
}

// A SIGINT ignored from the start stays ignored, as POSIX shells and Python leave it; SIGTERM
// still stops the run gracefully.
TEST(SignalsTest, SigintIgnoredAtStartStaysIgnored) {
  const std::string dir = Dir("int_ignored");
  const pid_t pid = Spawn({"train", "--config", Preset(), "--set", "n_timesteps=10000000", "--set",
                           "eval.freq=0", "--set", "checkpoint_freq=0", "--out", dir},
                          dir + ".log", /*ignore_sigint=*/true);
  ASSERT_TRUE(WaitFor([&] { return MetricsRows(dir) >= 2; }));
  ::kill(pid, SIGINT);
  const size_t rows = MetricsRows(dir);
  int status = 0;
  pid_t exited = 0;  // the run goes on: three more iterations, unless it exits first
  ASSERT_TRUE(WaitFor([&] {
    exited = ::waitpid(pid, &status, WNOHANG);
    return exited != 0 || MetricsRows(dir) >= rows + 3;
  }));
  ASSERT_EQ(exited, 0) << "exited after an ignored SIGINT: " << Slurp(dir + ".log");
  ::kill(pid, SIGTERM);
  EXPECT_EQ(Wait(pid), 143) << Slurp(dir + ".log");
  EXPECT_NE(Slurp(dir + ".log").find("greenrl: stopped by signal 15 at step"), std::string::npos)
      << Slurp(dir + ".log");
  // Said at the start (not with --quiet).
  EXPECT_NE(Slurp(dir + ".log")
                .find("greenrl: SIGINT is ignored: this process started with it "
                      "ignored (a script's `cmd &` starts it so; `set -m` does "
                      "not) and leaves it so; SIGTERM stops the run\n"),
            std::string::npos)
      << Slurp(dir + ".log");
}

// The same signal twice at once is one stop request (GNU timeout signals the child and then its
// process group): a graceful stop, 143 for SIGTERM, reports and checkpoint written.
TEST(SignalsTest, SigtermDeliveredTwiceAtOnceIsOneGracefulStopExits143) {
  const std::string dir = Dir("term_twice");
  const pid_t pid = Spawn({"train", "--config", Preset(), "--set", "n_timesteps=10000000", "--set",
                           "eval.freq=0", "--set", "checkpoint_freq=0", "--quiet", "--out", dir},
                          dir + ".log");
  ASSERT_TRUE(WaitFor([&] { return MetricsRows(dir) >= 2; }));
  ::kill(pid, SIGTERM);
  ::kill(pid, SIGTERM);
  EXPECT_EQ(Wait(pid), 143) << Slurp(dir + ".log");
  EXPECT_NE(Slurp(dir + ".log").find("greenrl: stopped by signal 15 at step"), std::string::npos)
      << Slurp(dir + ".log");
  EXPECT_TRUE(fs::exists(dir + "/energy.json"));
  const std::vector<long long> ckpt = CheckpointSteps(dir);
  ASSERT_EQ(ckpt.size(), 1u);
  ExpectResumes(dir, ckpt[0]);
}

TEST(SignalsTest, SecondSignalExitsAtOnceKeepingCheckpoint) {
  // Long iterations (8 envs x 2048 steps, 20 epochs), so the second signal lands mid-iteration.
  // A different signal is never a duplicate delivery of the first: it ends the run at once.
  const std::string dir = Dir("term");
  const pid_t pid = Spawn(
      {"train", "--config", Preset(), "--set", "n_timesteps=10000000", "--set", "n_steps=2048",
       "--set", "eval.freq=0", "--set", "checkpoint_freq=16384", "--quiet", "--out", dir},
      dir + ".log");
  ASSERT_TRUE(WaitFor([&] { return !CheckpointSteps(dir).empty(); }));
  ::kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(pid, SIGINT);
  EXPECT_EQ(Wait(pid), 130);
  // _exit: no summary, no "stopped" line, no reports of this segment.
  EXPECT_EQ(Slurp(dir + ".log").find("stopped by signal"), std::string::npos)
      << Slurp(dir + ".log");
  const std::vector<long long> ckpt = CheckpointSteps(dir);
  ASSERT_FALSE(ckpt.empty());
  ExpectResumes(dir, ckpt.back(), 16384);
}

TEST(SignalsTest, UnwritableRunDirIsOneClearLine) {
  // A run dir below a regular file cannot be created, whoever runs the test (root included).
  const std::string dir = Dir("blocked");
  std::ofstream(dir) << "a file, not a directory";
  const int code = RunGreenrl(
      {"train", "--config", Preset(), "--set", "n_timesteps=256", "--quiet", "--out", dir + "/run"},
      dir + ".log");
  const std::string log = Slurp(dir + ".log");
  EXPECT_EQ(code, 1) << log;
  EXPECT_EQ(log,
            "greenrl: failed: cannot create run directory '" + dir + "/run': Not a directory\n");
  fs::remove(dir);
}

TEST(SignalsTest, FullDiskIsOneClearLineAndLastCheckpointResumes) {
  const std::string dir = Dir("enospc");
  ::setenv("GREENRL_FAIL_WRITES_AFTER", "2", 1);  // config.yaml, checkpoint 1 ok; checkpoint 2 not
  const int code =
      RunGreenrl({"train", "--config", Preset(), "--set", "n_timesteps=4096", "--set",
                  "eval.freq=0", "--set", "checkpoint_freq=512", "--quiet", "--out", dir},
                 dir + ".log");
  ::unsetenv("GREENRL_FAIL_WRITES_AFTER");
  const std::string log = Slurp(dir + ".log");
  EXPECT_EQ(code, 1) << log;
  EXPECT_NE(
      log.find("greenrl: failed: cannot write '" + dir + "/checkpoints/step_000000001024.pt.tmp."),
      std::string::npos)
      << log;
  EXPECT_NE(log.find("': No space left on device\n"), std::string::npos) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_EQ(CheckpointSteps(dir), std::vector<long long>{512});
  ExpectResumes(dir, 512);
}

}  // namespace
