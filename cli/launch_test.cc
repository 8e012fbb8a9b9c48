// Data-parallel runs of the greenrl executable on loopback: `greenrl launch` with 2 ranks
// (energy.json sums both), and ranks started by hand as torchrun would start them, one of which
// is killed or hung mid-run: the other must exit non-zero within 3x dist.timeout_s, naming it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "greenrl/core/install_paths.h"
#include "greenrl/core/test_paths.h"

namespace {

namespace fs = std::filesystem;
namespace test_paths = greenrl::test_paths;
using greenrl::SourceTreeDir;
using Clock = std::chrono::steady_clock;

std::string Preset() { return SourceTreeDir() + "/configs/ppo/cartpole.yaml"; }

std::string Dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/greenrl_launch_" + name;
  fs::remove_all(d);
  return d;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `cmd` in a shell; returns its wait status and its stdout (the commands here redirect
// stderr into it).
std::pair<int, std::string> RunShell(const std::string& cmd) {
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string output;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) output += buf.data();
  return {::pclose(pipe), output};
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Starts `greenrl args...` with torchrun's variables for `rank`, stdout+stderr into `log`.
pid_t StartRank(int rank, int world, int port, const std::vector<std::string>& args,
                const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* f = std::fopen(log.c_str(), "w");
    ::dup2(fileno(f), 1);
    ::dup2(fileno(f), 2);
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
    ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("MASTER_ADDR", "127.0.0.1", 1);
    ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    std::vector<std::string> a = args;
    std::vector<char*> argv{const_cast<char*>(test_paths::GreenrlBin())};
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    ::execv(test_paths::GreenrlBin(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits up to limit_s for `pid`; returns its status, or -1 (and kills it) when it is still
// running then. *waited_s: seconds waited.
int WaitFor(pid_t pid, double limit_s, double* waited_s) {
  const auto t0 = Clock::now();
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::duration<double>(Clock::now() - t0).count() > limit_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      status = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *waited_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return status;
}

// A launcher's end: WaitFor's status (-1: it still ran after 60 s, and was killed), and its log
// (stdout and stderr) read then.
struct LauncherEnd {
  int status;
  std::string output;
};
LauncherEnd WaitForLauncher(pid_t launcher, const std::string& log) {
  double waited_s = 0.0;
  const int status = WaitFor(launcher, 60.0, &waited_s);
  return {status, ReadFile(log)};
}

// Waits until rank 0 has written `rows` metrics rows (training is under way on both ranks);
// false when that takes longer than limit_s or a rank exits first.
bool WaitForRows(const std::string& metrics_csv, int rows, double limit_s, const pid_t* pids) {
  const auto t0 = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - t0).count() < limit_s) {
    for (int r = 0; r < 2; ++r) {
      if (::waitpid(pids[r], nullptr, WNOHANG) == pids[r]) return false;
    }
    const std::string s = ReadFile(metrics_csv);
    if (std::count(s.begin(), s.end(), '\n') >= rows + 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(LaunchTest, TwoRanksTrainAndEnergyJsonSumsBoth) {
  const std::string out = Dir("two");
  const std::string cmd = std::string(test_paths::GreenrlBin()) +
                          " launch --nproc 2 -- train --config " + Preset() +
                          " --set n_envs=4 --set batch_size=128 --set n_timesteps=2048"
                          " --set eval.final_episodes=1"
                          " --set energy.meter=estimator --set dist.timeout_s=60 --quiet --out " +
                          out + " 2>&1";
  const auto [status, output] = RunShell(cmd);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find("[rank 0]"), std::string::npos) << output;
  const auto j = nlohmann::json::parse(ReadFile(out + "/energy.json"));
  ASSERT_TRUE(j.contains("distributed")) << j.dump(2);
  const auto& d = j["distributed"];
  EXPECT_EQ(d["world_size"], 2);
  EXPECT_EQ(d["launcher"], "greenrl launch");
  ASSERT_EQ(d["ranks"].size(), 2u);
  EXPECT_GT(d["rank0_allreduce_calls"].get<int64_t>(), 0);
  // Steps are summed over ranks: 2 ranks x 4 envs x 32 steps per iteration, 8 iterations.
  EXPECT_EQ(j["steps"], 2048);
  double ranks_total = 0.0;
  for (const auto& [domain, v] : j["domains"].items()) {
    const double r0 = d["ranks"][0]["energy_j"][domain].get<double>();
    const double r1 = d["ranks"][1]["energy_j"][domain].get<double>();
    EXPECT_GT(r0, 0.0) << domain;
    EXPECT_GT(r1, 0.0) << domain;
    EXPECT_NEAR(v["energy_j"].get<double>(), r0 + r1, 1e-9 * (r0 + r1)) << domain;
    ranks_total += r0 + r1;
  }
  EXPECT_NEAR(j["total_energy_j"].get<double>(), ranks_total, 1e-9 * ranks_total);
  EXPECT_TRUE(fs::exists(out + "/checkpoints/final.pt"));
  // config.yaml says how to rerun it: its keys alone would train one rank.
  const std::string config = ReadFile(out + "/config.yaml");
  EXPECT_EQ(config.rfind("# trained by 2 data-parallel ranks: greenrl launch --nproc 2 -- train "
                         "--config <this file> reruns it\n#",
                         0),
            0u)
      << config;
}

// A port no socket can have is refused by the launcher itself, naming its flag, before any rank
// starts (the ranks would each refuse MASTER_PORT).
TEST(LaunchTest, BadMasterPortIsRefusedBeforeAnyRankStarts) {
  const std::string cmd =
      std::string(test_paths::GreenrlBin()) + " launch --nproc 2 --master-port 70000 -- train 2>&1";
  const auto [status, output] = RunShell(cmd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << output;
  EXPECT_EQ(output,
            "greenrl: error: --master-port: got '70000'; an integer in [1, 65535], or 0 for a "
            "free port (the default)\n");
}

// Only train is data-parallel: another command under the launcher is refused before any rank
// starts (bench printed each rank's share of the job, rank 1's row all zeros), and bench started
// by another launcher (torchrun's WORLD_SIZE) refuses itself.
TEST(LaunchTest, CommandsOtherThanTrainAreRefused) {
  const std::string bin = test_paths::GreenrlBin();
  auto [status, output] = RunShell(bin + " launch --nproc 2 -- bench ppo-cartpole 2>&1");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << output;
  EXPECT_EQ(output,
            "greenrl: error: command: got 'bench'; train (-- train --config X ...): the one "
            "data-parallel command; run the others without greenrl launch\n");
  // Refused before the launcher's other variables are checked (no MASTER_ADDR here).
  std::tie(status, output) =
      RunShell("RANK=1 WORLD_SIZE=2 " + bin + " bench ppo-cartpole --seeds 1 --steps 512 2>&1");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << output;
  EXPECT_EQ(output,
            "greenrl: error: WORLD_SIZE: got '2'; 1 (a launcher's variable): greenrl bench times "
            "one process; run it without a launcher\n");
}

TEST(LaunchTest, FailingRankMakesLaunchExitNonZero) {
  const std::string cmd = std::string(test_paths::GreenrlBin()) +
                          " launch --nproc 2 --grace-s 30 -- train --set n_step=1 2>&1";
  const auto [status, output] = RunShell(cmd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << output;
  // Both ranks find the same config error; it is shown once, under whichever rank printed it
  // first, and the other rank's copy is counted.
  const std::string error = "] greenrl: error: n_step";
  const size_t at = output.find(error);
  EXPECT_NE(at, std::string::npos) << output;
  EXPECT_EQ(output.find(error, at + 1), std::string::npos) << "shown once:\n" << output;
  EXPECT_NE(output.find("exited with code 2 (bad input: the error above, not a crash); every "
                        "other rank has ended too\n"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("to stop"), std::string::npos) << "no grace period to grant:\n" << output;
  EXPECT_NE(output.find("greenrl launch: 1 line from rank "), std::string::npos) << output;
  EXPECT_NE(output.find(" repeated another rank's word for word (shown once, above)"),
            std::string::npos)
      << output;
}

// A run directory that refuses the run is refused by every rank before they connect, not by rank
// 0 alone while the others wait dist.timeout_s at the rendezvous (then the launcher's grace
// period and SIGTERM): a non-empty --out, and a --resume of a directory another process holds.
TEST(LaunchTest, RunDirectoryRefusalsAreEveryRanksAtOnce) {
  const std::string out = Dir("refused_dir");
  fs::create_directories(out);
  std::ofstream(out + "/notes.txt") << "not a run\n";
  const std::string launch = std::string(test_paths::GreenrlBin()) +
                             " launch --nproc 2 --grace-s 60 -- train --set dist.timeout_s=120 ";
  auto expect_refused_fast = [](const std::string& cmd, const std::string& error) {
    const auto start = std::chrono::steady_clock::now();
    const auto [status, output] = RunShell(cmd + " 2>&1");
    const double took_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << output;
    EXPECT_LT(took_s, 30.0) << output;
    EXPECT_NE(output.find(error), std::string::npos) << output;
    EXPECT_NE(output.find(" repeated another rank's word for word"), std::string::npos) << output;
    EXPECT_EQ(output.find("could not join"), std::string::npos) << output;
    EXPECT_EQ(output.find("stopping the remaining rank"), std::string::npos) << output;
    EXPECT_NE(output.find("; every other rank has ended too\n"), std::string::npos) << output;
  };
  expect_refused_fast(launch + "--out " + out,
                      "greenrl: error: --out: got '" + out +
                          "'; a new or empty directory (it exists and is not empty)");
  // Another process holds train.lock (a run still training or stopping there).
  fs::copy_file(Preset(), out + "/config.yaml");
  const int fd = ::open((out + "/train.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  expect_refused_fast(launch + "--resume " + out,
                      "greenrl: error: --resume: got '" + out +
                          "'; a run directory no other greenrl process is training in");
  ::close(fd);
}

// Runs `cmd` (stderr into stdout) and returns its exit code (-1 when it did not exit) and output.
std::pair<int, std::string> RunCommand(const std::string& cmd) {
  FILE* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  std::string output;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) output += buf.data();
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// The global steps of `dir`'s step_*.pt files, increasing.
std::vector<int64_t> CheckpointSteps(const std::string& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step_", 0) == 0 && name.size() == 20 && name.substr(17) == ".pt") {
      steps.push_back(std::stoll(name.substr(5, 12)));
    }
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// Resumes the run in `out` with 2 ranks for `more_steps` more global steps; expects it to
// finish (exit 0, final.pt) from one of the `allowed` steps and returns the step it resumed
// from.
int64_t ExpectTwoRankResumeFinishes(const std::string& out, const std::vector<int64_t>& allowed,
                                    int64_t more_steps) {
  const auto [code, output] =
      RunCommand(std::string(test_paths::GreenrlBin()) + " launch --nproc 2 -- train --resume " +
                 out + " --set n_timesteps=" + std::to_string(allowed.back() + more_steps) +
                 " --set eval.final_episodes=1 --set dist.timeout_s=60");
  EXPECT_EQ(code, 0) << output;
  EXPECT_TRUE(fs::exists(out + "/checkpoints/final.pt")) << output;
  const std::string key = "[rank 0] greenrl: resuming " + out + " from ";
  const size_t at = output.find(key);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no resume line\n" << output;
    return -1;
  }
  const size_t step_at = output.find("(step ", at) + 6;
  const int64_t from = std::stoll(output.substr(step_at));
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), from), allowed.end())
      << "resumed from step " << from << "\n" << output;
  EXPECT_NE(output.find("[rank 1] greenrl: resuming " + out + " from " + out +
                        "/checkpoints/rank1/step_"),
            std::string::npos)
      << output;
  return from;
}

// Rank `victim` is killed (SIGKILL) or stopped (SIGSTOP: a hang) once training runs; the other
// rank must exit non-zero within 3x dist.timeout_s, naming the collective and the rank. When
// rank 1 is killed, rank 0's last checkpoint (one per iteration here) is intact: a 2-rank
// --resume continues from it (or from the one before, when rank 1 died before writing its own
// file of the newest step).
void ExpectSurvivorFails(const std::string& name, int victim, int sig) {
  const double timeout_s = 3.0;
  const std::string out = Dir(name);
  const int port = FreePort();
  const std::vector<std::string> args = {
      "train",          "--config",
      Preset(),         "--set",
      "n_envs=2",       "--set",
      "batch_size=64",  "--set",
      "n_timesteps=100000000", "--set",
      "eval.freq=0",    "--set",
      "checkpoint_freq=128", "--set",
      "energy.meter=estimator", "--set",
      "dist.timeout_s=" + std::to_string(timeout_s), "--quiet",
      "--out",          out};
  const std::string log0 = out + "_rank0.log", log1 = out + "_rank1.log";
  const pid_t pids[2] = {StartRank(0, 2, port, args, log0), StartRank(1, 2, port, args, log1)};
  if (!WaitForRows(out + "/metrics.csv", 2, 90.0, pids)) {
    for (pid_t pid : pids) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
    FAIL() << "training did not start on both ranks\n" << ReadFile(log0) << ReadFile(log1);
  }
  ::kill(pids[victim], sig);
  const int survivor = 1 - victim;
  double waited_s = 0.0;
  const int status = WaitFor(pids[survivor], 3.0 * timeout_s + 5.0, &waited_s);
  ::kill(pids[victim], SIGKILL);
  int ignored;
  ::waitpid(pids[victim], &ignored, 0);
  const std::string log = ReadFile(survivor == 0 ? log0 : log1);
  ASSERT_NE(status, -1) << "rank " << survivor << " still running after " << waited_s << " s\n"
                        << log;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << log;
  EXPECT_LT(waited_s, 3.0 * timeout_s) << log;
  EXPECT_NE(log.find("dist: "), std::string::npos) << log;
  if (victim == 1) {
    EXPECT_NE(log.find("rank(s) 1 did not report it"), std::string::npos) << log;
    // What rank 0 wrote before the failure is still there.
    const std::string rows = ReadFile(out + "/metrics.csv");
    EXPECT_GE(std::count(rows.begin(), rows.end(), '\n'), 3) << rows;
    if (sig == SIGKILL) {
      // 2 ranks x 2 envs x 32 steps = 128 global steps per iteration, a checkpoint each.
      const std::vector<int64_t> kept = CheckpointSteps(out + "/checkpoints");
      ASSERT_FALSE(kept.empty()) << log;
      const int64_t newest = kept.back();
      ExpectTwoRankResumeFinishes(out, {newest - 128, newest}, 256);
    }
  } else {
    EXPECT_NE(log.find("rank 0"), std::string::npos) << log;
  }
}

TEST(LaunchTest, KilledRankMakesTheOtherExitWithinThreeTimeouts) {
  ExpectSurvivorFails("killed", /*victim=*/1, SIGKILL);
}

TEST(LaunchTest, HungRankMakesTheOtherExitWithinThreeTimeouts) {
  ExpectSurvivorFails("hung", /*victim=*/1, SIGSTOP);
}

TEST(LaunchTest, KilledRankZeroMakesRankOneExit) {
  ExpectSurvivorFails("killed0", /*victim=*/0, SIGKILL);
}

// SIGINT to `greenrl launch`'s whole process group, as Ctrl-C in a terminal sends it: the
// launcher alone is in it (each rank leads its own group) and forwards it once, so the ranks
// agree to stop at the end of the same iteration, rank 0 and rank 1 write their resume
// checkpoints of that step, every process exits 130, nothing hangs. The run then refuses a
// 1-process resume (exit 2, naming both world sizes) and finishes with a 2-rank resume.
// Starts `greenrl launch --nproc 2` of a long CartPole run into `out` (output to `log`) as the
// leader of its own process group, as a shell job, and waits until it has written 2 rows.
// Returns the launcher's pid, or -1 (launcher killed) when training did not start in 90 s.
pid_t StartLongLaunch(const std::string& out, const std::string& log, bool ignore_sigint = false) {
  const pid_t launcher = ::fork();
  if (launcher == 0) {
    ::setpgid(0, 0);  // the launcher leads a process group, as a shell job does
    if (ignore_sigint) ::signal(SIGINT, SIG_IGN);  // as a script's `cmd &` starts it
    std::FILE* f = std::fopen(log.c_str(), "w");
    ::dup2(fileno(f), 1);
    ::dup2(fileno(f), 2);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    std::vector<std::string> a = {"launch", "--nproc", "2", "--", "train", "--config", Preset(),
                                  "--set", "n_envs=2", "--set", "batch_size=64", "--set",
                                  "n_timesteps=100000000", "--set", "eval.freq=0", "--set",
                                  "checkpoint_freq=0", "--set", "energy.meter=estimator", "--set",
                                  "dist.timeout_s=30", "--quiet", "--out", out};
    std::vector<char*> argv{const_cast<char*>(test_paths::GreenrlBin())};
    for (auto& x : a) argv.push_back(x.data());
    argv.push_back(nullptr);
    ::execv(test_paths::GreenrlBin(), argv.data());
    ::_exit(127);
  }
  const pid_t both[2] = {launcher, launcher};
  if (!WaitForRows(out + "/metrics.csv", 2, 90.0, both)) {
    ::kill(launcher, SIGKILL);
    ::waitpid(launcher, nullptr, 0);
    return -1;
  }
  return launcher;
}

// The pid of `parent`'s child whose environment holds RANK=<rank> (a rank greenrl launch
// started), from /proc; -1 when none.
pid_t ChildWithRank(pid_t parent, int rank) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile(entry.path().string() + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 1));
    std::string state;
    long ppid = 0;
    fields >> state >> ppid;
    if (ppid != parent) continue;
    std::string environ = ReadFile(entry.path().string() + "/environ");
    std::replace(environ.begin(), environ.end(), '\0', '\n');
    if (("\n" + environ).find("\nRANK=" + std::to_string(rank) + "\n") != std::string::npos) {
      return static_cast<pid_t>(std::stol(name));
    }
  }
  return -1;
}

TEST(LaunchTest, SigintStopsBothRanksWithCheckpointsAndResumes) {
  const std::string out = Dir("sigint");
  const std::string log = out + "_launch.log";
  const pid_t launcher = StartLongLaunch(out, log);
  if (launcher < 0) FAIL() << "training did not start\n" << ReadFile(log);
  ::kill(-launcher, SIGINT);  // the group: launcher and both ranks, as a terminal's Ctrl-C
  const auto [status, output] = WaitForLauncher(launcher, log);
  ASSERT_NE(status, -1) << "the launcher still runs after 60 s\n" << output;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << output;
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(output.find("[rank " + std::to_string(r) + "] greenrl: stopped by signal 2 at step"),
              std::string::npos)
        << output;
  }
  // Both ranks' checkpoints of the same (last) step; metrics.csv ends with that step's row.
  const std::vector<int64_t> r0 = CheckpointSteps(out + "/checkpoints");
  const std::vector<int64_t> r1 = CheckpointSteps(out + "/checkpoints/rank1");
  ASSERT_EQ(r0.size(), 1u) << output;
  ASSERT_EQ(r1, r0) << output;
  const std::string rows = ReadFile(out + "/metrics.csv");
  const size_t last_row = rows.rfind('\n', rows.size() - 2) + 1;
  EXPECT_EQ(std::stoll(rows.substr(last_row)), r0[0]) << rows;
  EXPECT_FALSE(fs::exists(out + "/checkpoints/final.pt"));

  const auto [code1, out1] =
      RunCommand(std::string(test_paths::GreenrlBin()) + " train --resume " + out);
  EXPECT_EQ(code1, 2) << out1;
  EXPECT_NE(out1.find("WORLD_SIZE 2, this launch has WORLD_SIZE 1"), std::string::npos) << out1;

  ExpectTwoRankResumeFinishes(out, r0, 256);
}

// Whether `pid` has ended: no /proc entry, or a zombie no one has reaped yet (a rank whose
// launcher died is reparented).
bool Ended(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || stat.compare(paren + 1, 3, " Z ") == 0;
}

// Each rank leads its own process group, as torchrun starts each worker in a new session, so a
// terminal's Ctrl-C cannot reach a rank twice (directly, then forwarded). A launcher killed
// outright (SIGKILL: it forwards nothing) still stops its ranks: each gets SIGTERM as its parent
// dies.
TEST(LaunchTest, RanksLeadTheirOwnGroupsAndStopWhenTheLauncherIsKilled) {
  const std::string out = Dir("launcher_killed");
  const std::string log = out + "_launch.log";
  const pid_t launcher = StartLongLaunch(out, log);
  if (launcher < 0) FAIL() << "training did not start\n" << ReadFile(log);
  const pid_t ranks[2] = {ChildWithRank(launcher, 0), ChildWithRank(launcher, 1)};
  for (const pid_t rank : ranks) {
    if (rank > 0) {
      EXPECT_EQ(::getpgid(rank), rank) << "a rank in its launcher's process group";
    }
  }
  ::kill(launcher, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  for (const pid_t rank : ranks) {
    ASSERT_GT(rank, 0) << "no child of the launcher with that RANK";
    const auto start = std::chrono::steady_clock::now();
    bool ended = false;
    for (; !ended && std::chrono::steady_clock::now() - start < std::chrono::seconds(60);) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ended = Ended(rank);
    }
    if (!ended) ::kill(rank, SIGKILL);
    EXPECT_TRUE(ended) << "rank pid " << rank << " still runs 60 s after its launcher was killed";
  }
}

// Whether `pid` has installed its own SIGINT handler (/proc/<pid>/status, SigCgt).
bool CatchesSigint(pid_t pid) {
  std::istringstream status(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigCgt:", 0) == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1) & 1) != 0;
    }
  }
  return false;
}

// A launch started with SIGINT ignored (a script's `cmd &`) leaves it ignored, as `greenrl
// train` does: neither the launcher nor a rank catches it, a SIGINT to the launcher's group stops
// nothing, and SIGTERM still stops the job (before, the launcher caught SIGINT and forwarded
// it). (Without --quiet each rank says so, as train does.)
TEST(LaunchTest, SigintIgnoredAtStartStaysIgnored) {
  const std::string out = Dir("sigint_ignored");
  const std::string log = out + "_launch.log";
  const pid_t launcher = StartLongLaunch(out, log, /*ignore_sigint=*/true);
  if (launcher < 0) FAIL() << "training did not start\n" << ReadFile(log);
  const pid_t rank1 = ChildWithRank(launcher, 1);
  EXPECT_FALSE(CatchesSigint(launcher));
  EXPECT_GT(rank1, 0);
  if (rank1 > 0) {
    EXPECT_FALSE(CatchesSigint(rank1));
  }
  ::kill(-launcher, SIGINT);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  int early = 0;
  EXPECT_EQ(::waitpid(launcher, &early, WNOHANG), 0) << "SIGINT stopped it\n" << ReadFile(log);
  ::kill(launcher, SIGTERM);
  const auto [status, output] = WaitForLauncher(launcher, log);
  ASSERT_NE(status, -1) << "the launcher still runs after 60 s\n" << output;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 143) << output;
}

// A stop signal that reaches rank 1 while it waits for rank 0's store (rank 0 not started yet)
// is acted on as README's "Signals" says: the rank keeps waiting (before, the wait ended at once,
// reported as a failed rendezvous), and once rank 0 joins, both stop after the first iteration
// with their checkpoints of the same step and exit 130.
TEST(LaunchTest, StopSignalDuringRendezvousStopsAfterTheFirstIteration) {
  const std::string out = Dir("rendezvous_signal");
  const int port = FreePort();
  const std::vector<std::string> args = {"train",
                                         "--config",
                                         Preset(),
                                         "--set",
                                         "n_envs=2",
                                         "--set",
                                         "batch_size=64",
                                         "--set",
                                         "n_timesteps=100000000",
                                         "--set",
                                         "eval.freq=0",
                                         "--set",
                                         "checkpoint_freq=0",
                                         "--set",
                                         "energy.meter=estimator",
                                         "--set",
                                         "dist.timeout_s=60",
                                         "--quiet",
                                         "--out",
                                         out};
  const std::string log0 = out + "_rank0.log", log1 = out + "_rank1.log";
  const pid_t rank1 = StartRank(1, 2, port, args, log1);
  const auto start = Clock::now();
  while (!CatchesSigint(rank1) && Clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into the rendezvous
  ::kill(rank1, SIGINT);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  int status1 = 0;
  if (::waitpid(rank1, &status1, WNOHANG) == rank1) {
    FAIL() << "rank 1 ended on a stop signal before rank 0 started\n" << ReadFile(log1);
  }
  const pid_t rank0 = StartRank(0, 2, port, args, log0);
  double waited_s = 0.0;
  status1 = WaitFor(rank1, 90.0, &waited_s);
  const int status0 = WaitFor(rank0, 90.0, &waited_s);
  const std::string logs = ReadFile(log0) + ReadFile(log1);
  EXPECT_TRUE(WIFEXITED(status1) && WEXITSTATUS(status1) == 130) << logs;
  EXPECT_TRUE(WIFEXITED(status0) && WEXITSTATUS(status0) == 130) << logs;
  const std::vector<int64_t> r0 = CheckpointSteps(out + "/checkpoints");
  ASSERT_EQ(r0.size(), 1u) << logs;
  EXPECT_EQ(CheckpointSteps(out + "/checkpoints/rank1"), r0) << logs;
}

// Waits up to 60 s for a launcher that a stop signal reached, and checks that it exited with
// `code` and that both ranks wrote a checkpoint of one and the same step. Returns its output.
std::string ExpectStoppedWithOneCheckpointEach(pid_t launcher, const std::string& log,
                                               const std::string& out, int code) {
  const auto [status, output] = WaitForLauncher(launcher, log);
  EXPECT_NE(status, -1) << "the launcher still runs after 60 s\n" << output;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == code) << output;
  const std::vector<int64_t> r0 = CheckpointSteps(out + "/checkpoints");
  EXPECT_EQ(r0.size(), 1u) << output;
  EXPECT_EQ(CheckpointSteps(out + "/checkpoints/rank1"), r0) << output;
  return output;
}

// SIGTERM to rank 1 alone (a scheduler or `kill` reaching one process): every rank stops after
// the same iteration with its checkpoint of that step, and the launcher says so as a stop, not
// as a failure ("rank 0 exited with code 143" read as one), and exits 143.
TEST(LaunchTest, SigtermToOneRankIsSaidToBeAStop) {
  const std::string out = Dir("sigterm_one");
  const std::string log = out + "_launch.log";
  const pid_t launcher = StartLongLaunch(out, log);
  if (launcher < 0) FAIL() << "training did not start\n" << ReadFile(log);
  const pid_t rank1 = ChildWithRank(launcher, 1);
  if (rank1 < 0) {
    ::kill(-launcher, SIGKILL);
    ::waitpid(launcher, nullptr, 0);
    FAIL() << "no child of the launcher has RANK=1";
  }
  ::kill(rank1, SIGTERM);
  const std::string output = ExpectStoppedWithOneCheckpointEach(launcher, log, out, 143);
  EXPECT_NE(output.find("stopped on signal 15 (exit 143), as every rank does after a stop signal "
                        "reaches any of them: each writes its checkpoint of the same step"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("exited with code"), std::string::npos) << output;
}

// SIGHUP to the launcher (a closed terminal, a dropped ssh session) stops the ranks as SIGTERM
// does: each finishes its iteration and writes its checkpoint, where their own default action
// would end them without one.
TEST(LaunchTest, SighupStopsTheRanksAsSigtermDoes) {
  const std::string out = Dir("sighup");
  const std::string log = out + "_launch.log";
  const pid_t launcher = StartLongLaunch(out, log);
  if (launcher < 0) FAIL() << "training did not start\n" << ReadFile(log);
  ::kill(launcher, SIGHUP);  // the launcher alone: the ranks lead their own groups
  const std::string output = ExpectStoppedWithOneCheckpointEach(launcher, log, out, 143);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(output.find("[rank " + std::to_string(r) + "] greenrl: stopped by signal 15 at step"),
              std::string::npos)
        << output;
  }
}

// A SIGINT that reaches the launcher as its ranks start ends them before their stop handler is
// installed (their default action): each such rank is named, where the launcher used to exit 130
// with no line from or about them. A rank already past that point stops on its own and says so,
// or, waiting at the rendezvous for a rank the signal ended, is killed after --grace-s, said.
TEST(LaunchTest, RanksEndedByAnEarlySignalAreNamed) {
  const std::string out = Dir("early_signal");
  const std::string log = out + "_launch.log";
  fs::remove(log);  // an earlier run's first line would be taken for this one's
  const pid_t launcher = ::fork();
  if (launcher == 0) {
    std::FILE* f = std::fopen(log.c_str(), "w");
    ::dup2(fileno(f), 1);
    ::dup2(fileno(f), 2);
    const std::vector<std::string> a = {"launch",  "--nproc", "2",
                                        "--",      "train",   "--config",
                                        Preset(),  "--set",   "energy.meter=estimator",
                                        "--quiet", "--out",   out};  // --grace-s: 10 s
    std::vector<char*> argv{const_cast<char*>(test_paths::GreenrlBin())};
    for (const auto& x : a) argv.push_back(const_cast<char*>(x.c_str()));
    argv.push_back(nullptr);
    ::execv(test_paths::GreenrlBin(), argv.data());
    ::_exit(127);
  }
  // Its first line ("greenrl launch: 2 ranks, ...") comes once it has started them.
  const auto start = Clock::now();
  while (ReadFile(log).find("greenrl launch: 2 ranks") == std::string::npos &&
         Clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(launcher, SIGINT);
  const auto [status, output] = WaitForLauncher(launcher, log);
  ASSERT_NE(status, -1) << "the launcher still runs after 60 s\n" << output;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << output;
  for (int r = 0; r < 2; ++r) {
    const std::string rank = std::to_string(r);
    EXPECT_TRUE(output.find("greenrl launch: rank " + rank +
                            " was killed by signal 2 (Interrupt) before it could stop on its own "
                            "(during its setup: it wrote no checkpoint)\n") != std::string::npos ||
                output.find("[rank " + rank + "] greenrl: stopped by signal 2") !=
                    std::string::npos ||
                output.find("greenrl launch: rank " + rank +
                            " still running 10 s after the "
                            "forwarded stop signal: killing it (SIGKILL)") != std::string::npos ||
                // Both still in their setup on a loaded machine: named together.
                output.find("greenrl launch: ranks 0-1 still running 10 s after the forwarded "
                            "stop signal: killing them (SIGKILL)") != std::string::npos)
        << output;
  }
}

}  // namespace
