// greenrl launch: starts N local ranks of a greenrl command with the variables torchrun sets
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), for users without
// torchrun: `greenrl launch --nproc 2 -- train --config configs/ppo/cartpole.yaml`.
// Each rank's stdout and stderr lines are forwarded with a "[rank r] " prefix; a greenrl stderr
// message that another rank already printed word for word (a config error or warning every rank
// finds alike) is shown once (cli/same_lines.h), and a last line counts the lines not shown.
// When a rank fails, the launcher names it, lets the others fail on their own for --grace-s
// (their c10d collectives time out and name the collective), then stops them (SIGTERM, SIGKILL
// 5 s later) and exits non-zero. SIGINT and SIGTERM to the launcher are forwarded to every rank (as
// torchrun does): the ranks finish their iteration, write the resume checkpoint and exit
// 128 + signal; a second signal is forwarded too (the ranks then exit at once); ranks still
// running --grace-s seconds after the first signal are killed (SIGKILL). SIGHUP (a closed
// terminal, a dropped ssh session) stops the ranks as SIGTERM does, so they write their
// checkpoints where their own default action would end them without. A rank that the forwarded
// signal ends before it can stop on its own (early in its setup) is named. The launcher exits
// 128 + signal. No torch here: it only forks and execs this same binary.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/same_lines.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"

namespace greenrl::cli {

namespace {
struct LaunchArgs {
  int nproc = 2;
  int master_port = 0;  // 0: a free port
  double grace_s = 10.0;
  std::vector<std::string> command;
};

volatile sig_atomic_t g_forward_signal = 0;
volatile sig_atomic_t g_signal_count = 0;  // signals received (each one is forwarded)
void OnSignal(int sig) {
  g_forward_signal = sig == SIGHUP ? SIGTERM : sig;  // the ranks' graceful stop (see above)
  g_signal_count = g_signal_count + 1;
}

// A free TCP port on the loopback interface (bound, read, closed; the ranks bind it soon after).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("launch: socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("launch: no free port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string SelfExe() {
  std::string exe = ExecutablePath();
  if (exe.empty()) throw std::runtime_error("launch: cannot read /proc/self/exe");
  return exe;
}

struct Rank {
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;  // read ends (-1 after EOF)
  std::string out_buf, err_buf;  // partial lines
  bool running = true;
  int status = 0;
};

// Forwards complete lines of `buf` (plus the rest at EOF) to `to` with the rank prefix; of
// stderr lines (`same` non-null), what SameLines::Show keeps.
void Flush(std::string* buf, int rank, std::FILE* to, bool eof, SameLines* same) {
  auto forward = [&](std::string_view line) {
    if (same == nullptr) {
      fmt::print(to, "[rank {}] {}\n", rank, line);
      return;
    }
    for (std::string_view shown : same->Show(rank, line)) {
      fmt::print(to, "[rank {}] {}\n", rank, shown);
    }
  };
  size_t start = 0;
  for (size_t nl; (nl = buf->find('\n', start)) != std::string::npos; start = nl + 1) {
    forward(std::string_view(*buf).substr(start, nl - start));
  }
  buf->erase(0, start);
  if (eof && !buf->empty()) {
    forward(*buf);
    buf->clear();
  }
  std::fflush(to);
}

// "1", "1-7", "1, 3-4": ranks in increasing order, runs joined.
std::string RankList(const std::set<int>& ranks) {
  std::string out;
  for (auto it = ranks.begin(); it != ranks.end();) {
    const int first = *it;
    int last = first;
    for (++it; it != ranks.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ", ";
    out += last == first ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  return "ended";
}

int RunLaunch(const LaunchArgs& a) {
  if (!(a.grace_s >= 0.0)) {
    throw ConfigError("--grace-s", fmt::format("{}", a.grace_s), "a number of seconds >= 0");
  }
  // Ranks on this machine: each is a training process with its own envs and model.
  if (a.nproc < 1 || a.nproc > 1024) {
    throw ConfigError("--nproc", std::to_string(a.nproc), "an integer in [1, 1024]");
  }
  if (a.master_port < 0 || a.master_port > 65535) {  // before any rank starts
    throw ConfigError("--master-port", std::to_string(a.master_port),
                      "an integer in [1, 65535], or 0 for a free port (the default)");
  }
  if (a.command.empty()) {
    throw ConfigError("command", "(none)", "a greenrl command after --, e.g. -- train --config X");
  }
  // Only train is data-parallel: the other commands would each run N times over, and bench's
  // figures would be each rank's share of a job (rank 1's row all zeros).
  if (a.command[0] != "train") {
    throw ConfigError("command", a.command[0],
                      "train (-- train --config X ...): the one data-parallel command; run the "
                      "others without greenrl launch");
  }
  const std::string exe = SelfExe();
  const int port = a.master_port > 0 ? a.master_port : FreePort();
  std::vector<Rank> ranks(static_cast<size_t>(a.nproc));
  // A signal ignored when the launcher starts (a script's `cmd &`, `trap '' INT`) stays ignored,
  // as `greenrl train` leaves it: the ranks inherit it ignored and say so.
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction before {};
    ::sigaction(sig, nullptr, &before);
    if (before.sa_handler != SIG_IGN) ::sigaction(sig, &sa, nullptr);
  }
  for (int r = 0; r < a.nproc; ++r) {
    if (g_signal_count > 0) {  // stopped while starting ranks: start no more (the loop below
      for (int q = r; q < a.nproc; ++q) ranks[q].running = false;  // forwards the signal)
      break;
    }
    int out[2], err[2];
    // Close-on-exec: a later rank must not inherit the earlier ranks' pipe ends (their dup2
    // copies on stdout and stderr stay open across exec).
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::string("launch: pipe: ") + std::strerror(errno));
    }
    const pid_t launcher_pid = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("launch: fork: ") + std::strerror(errno));
    if (pid == 0) {
      // Each rank leads its own process group, as torchrun starts each worker in a new session:
      // a terminal's Ctrl-C (or a kill of the launcher's group) reaches the launcher alone, which
      // forwards it once. Delivered twice, more than 100 ms apart, it would read as a second stop
      // request and end the rank at once, without its checkpoint (train/signals.h). A launcher
      // that dies (SIGKILL) stops its ranks as a forwarded SIGTERM would.
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != launcher_pid) ::_exit(128 + SIGTERM);  // it died before prctl
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      ::close(out[0]), ::close(out[1]), ::close(err[0]), ::close(err[1]);
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(a.nproc).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(a.nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("GREENRL_LAUNCH", "1", 1);  // energy.json's distributed.launcher: "greenrl launch"
      std::vector<char*> argv;
      std::string argv0 = ProgramName();  // a program of the user's own keeps its name
      argv.push_back(argv0.data());
      std::vector<std::string> args = a.command;
      for (auto& s : args) argv.push_back(s.data());
      argv.push_back(nullptr);
      ::execv(exe.c_str(), argv.data());
      std::fprintf(stderr, "launch: exec %s failed: %s\n", exe.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    ::close(out[1]), ::close(err[1]);
    ranks[r].pid = pid, ranks[r].out_fd = out[0], ranks[r].err_fd = err[0];
  }
  const auto started =
      std::count_if(ranks.begin(), ranks.end(), [](const Rank& k) { return k.pid > 0; });
  fmt::print(stderr, "greenrl launch: {} rank{}, MASTER_ADDR=127.0.0.1 MASTER_PORT={}{}\n", a.nproc,
             a.nproc == 1 ? "" : "s", port,
             started < a.nproc ? fmt::format(" (a signal came while starting them: {} started, "
                                             "stopping them)",
                                             started)
                               : std::string());

  using Clock = std::chrono::steady_clock;
  SameLines same;  // stderr lines every rank prints alike, shown once
  int first_failed = -1;
  bool failure_unsaid = false;  // first_failed's line waits for the others' exits (below)
  Clock::time_point failed_at, term_at;
  bool termed = false, killed = false;
  bool by_signal = false;  // termed by a forwarded user signal (not by a failed rank)
  int signals_forwarded = 0;
  auto still_running = [&] {  // the ranks not yet reaped
    std::set<int> left;
    for (int r = 0; r < a.nproc; ++r) {
      if (ranks[r].running) left.insert(r);
    }
    return left;
  };
  auto signal_all = [&](int sig) {
    for (const Rank& k : ranks) {
      if (k.running) ::kill(k.pid, sig);
    }
  };
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<int, bool>> who;  // (rank, is_stderr)
    for (int r = 0; r < a.nproc; ++r) {
      if (ranks[r].out_fd >= 0) {
        fds.push_back({ranks[r].out_fd, POLLIN, 0});
        who.push_back({r, false});
      }
      if (ranks[r].err_fd >= 0) {
        fds.push_back({ranks[r].err_fd, POLLIN, 0});
        who.push_back({r, true});
      }
    }
    if (!fds.empty()) ::poll(fds.data(), fds.size(), 100);
    for (size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      Rank& k = ranks[who[i].first];
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      std::string* line = who[i].second ? &k.err_buf : &k.out_buf;
      std::FILE* to = who[i].second ? stderr : stdout;
      if (n > 0) {
        line->append(buf, static_cast<size_t>(n));
        Flush(line, who[i].first, to, false, who[i].second ? &same : nullptr);
      } else if (n == 0 || errno != EINTR) {
        Flush(line, who[i].first, to, true, who[i].second ? &same : nullptr);
        ::close(fds[i].fd);
        (who[i].second ? k.err_fd : k.out_fd) = -1;
      }
    }
    bool any_running = false;
    for (int r = 0; r < a.nproc; ++r) {
      Rank& k = ranks[r];
      if (!k.running) continue;
      if (::waitpid(k.pid, &k.status, WNOHANG) == k.pid) {
        k.running = false;
        const bool ok = WIFEXITED(k.status) && WEXITSTATUS(k.status) == 0;
        if (!ok && first_failed < 0 && !termed) {
          first_failed = r;
          failed_at = Clock::now();
          failure_unsaid = true;
        }
      } else {
        any_running = true;
      }
    }
    // The first failure is said once the other ranks have ended too or have had up to 2 s (at
    // most the grace period) to do so: ranks that refuse bad input end within milliseconds of
    // each other, and the line then says so instead of granting them a grace period.
    if (failure_unsaid &&
        (!any_running || std::chrono::duration<double>(Clock::now() - failed_at).count() >=
                             std::min(2.0, a.grace_s))) {
      failure_unsaid = false;
      const Rank& k = ranks[first_failed];
      // Exit code 2 is greenrl's bad input (a config error, which every rank prints alike
      // before any work), not a crash; 130 and 143 are a stop signal's graceful stop, which
      // every rank makes after the same iteration whichever rank the signal reached.
      const int code = WIFEXITED(k.status) ? WEXITSTATUS(k.status) : -1;
      const bool bad_input = code == 2;
      const double left_s =
          a.grace_s - std::chrono::duration<double>(Clock::now() - failed_at).count();
      const std::string others =
          any_running
              ? fmt::format("; the other ranks get {:.3g} s more to stop", std::max(0.0, left_s))
              : std::string(a.nproc > 1 ? "; every other rank has ended too" : "");
      if (code == 128 + SIGINT || code == 128 + SIGTERM) {
        fmt::print(stderr,
                   "greenrl launch: rank {} stopped on signal {} (exit {}), as every rank "
                   "does after a stop signal reaches any of them: each writes its checkpoint "
                   "of the same step{}\n",
                   first_failed, code - 128, code, others);
      } else {
        fmt::print(stderr, "greenrl launch: rank {} {}{}{}\n", first_failed,
                   DescribeStatus(k.status),
                   bad_input ? " (bad input: the error above, not a crash)" : "", others);
      }
    }
    if (!any_running) break;
    if (g_signal_count > signals_forwarded && (!termed || by_signal)) {
      signal_all(g_forward_signal);
      signals_forwarded = g_signal_count;
      if (!termed) term_at = Clock::now();
      termed = by_signal = true;
    }
    const auto now = Clock::now();
    if (first_failed >= 0 && !termed &&
        std::chrono::duration<double>(now - failed_at).count() > a.grace_s) {
      const std::set<int> left = still_running();
      fmt::print(stderr, "greenrl launch: stopping the remaining rank{} {} (SIGTERM)\n",
                 left.size() == 1 ? "" : "s", RankList(left));
      signal_all(SIGTERM);
      termed = true;
      term_at = now;
    }
    if (termed && !killed &&
        std::chrono::duration<double>(now - term_at).count() > (by_signal ? a.grace_s : 5.0)) {
      const std::set<int> left = still_running();
      fmt::print(
          stderr,
          "greenrl launch: rank{} {} still running {} s after the {}: killing {} (SIGKILL)\n",
          left.size() == 1 ? "" : "s", RankList(left), by_signal ? a.grace_s : 5.0,
          by_signal ? "forwarded stop signal" : "SIGTERM", left.size() == 1 ? "it" : "them");
      signal_all(SIGKILL);
      killed = true;
    }
  }
  for (int r = 0; r < a.nproc; ++r) {  // drain what is left in the pipes
    for (int* fd : {&ranks[r].out_fd, &ranks[r].err_fd}) {
      if (*fd < 0) continue;
      char buf[4096];
      std::string* line = fd == &ranks[r].out_fd ? &ranks[r].out_buf : &ranks[r].err_buf;
      for (ssize_t n; (n = ::read(*fd, buf, sizeof(buf))) > 0;) line->append(buf, n);
      const bool err = fd == &ranks[r].err_fd;
      Flush(line, r, err ? stderr : stdout, true, err ? &same : nullptr);
      ::close(*fd);
    }
  }
  // Ranks the forwarded signal ended by its default action (before their stop handler was
  // installed, early in their setup): they wrote no checkpoint, said as torchrun reports them.
  if (by_signal) {
    for (int r = 0; r < a.nproc; ++r) {
      const int st = ranks[r].status;
      if (WIFSIGNALED(st) && WTERMSIG(st) == g_forward_signal) {
        fmt::print(stderr,
                   "greenrl launch: rank {} {} before it could stop on its own (during its "
                   "setup: it wrote no checkpoint)\n",
                   r, DescribeStatus(st));
      }
    }
  }
  if (const int64_t hidden = same.hidden(); hidden > 0) {
    const std::set<int> from = same.hidden_from();
    fmt::print(stderr,
               "greenrl launch: {} line{} from rank{} {} repeated another rank's word for word "
               "(shown once, above)\n",
               hidden, hidden == 1 ? "" : "s", from.size() == 1 ? "" : "s", RankList(from));
  }
  if (first_failed >= 0) {
    const int st = ranks[first_failed].status;
    return WIFEXITED(st) && WEXITSTATUS(st) != 0 ? WEXITSTATUS(st) : 1;
  }
  if (g_forward_signal != 0) return 128 + g_forward_signal;
  return 0;
}
}  // namespace

Runner RegisterLaunch(CLI::App& app) {
  auto args = std::make_shared<LaunchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "launch", "Start N local data-parallel ranks of greenrl train (as torchrun does)");
  cmd->add_option("--nproc", args->nproc, "number of local ranks (processes)")->required();
  cmd->add_option("--master-port", args->master_port,
                  "rank 0's TCPStore port (default: a free one)");
  cmd->add_option("--grace-s", args->grace_s,
                  "seconds the other ranks get to stop on their own after one fails, and all "
                  "ranks after a forwarded SIGINT/SIGTERM before SIGKILL (default 10)");
  cmd->add_option("command", args->command, "the train command after --: -- train ...")->required();
  return [args]() { return RunLaunch(*args); };
}

}  // namespace greenrl::cli
