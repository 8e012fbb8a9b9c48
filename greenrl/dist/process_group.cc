// The c10d process group behind greenrl::dist::ProcessGroup. Debian's LibTorch 1.13 exports
// c10d::TCPStore, FileStore and ProcessGroupGloo from libtorch_cpu.so; ProcessGroupGloo.hpp needs
// USE_C10D_GLOO defined and the Gloo headers (libgloo-dev).
#include "greenrl/dist/process_group.h"

#include <fmt/format.h>

// Defined here rather than on the command line so the shared precompiled header stays valid.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "greenrl/core/errors.h"

namespace greenrl::dist {

namespace {
using Clock = std::chrono::steady_clock;

bool IsLoopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

std::string FirstLine(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}
}  // namespace

void ValidateDistOptions(const DistOptions& options) {
  if (options.backend == "nccl") {
    throw ConfigError("dist.backend", options.backend,
                      "gloo (NCCL all-reduces CUDA tensors, but greenrl's data-parallel update "
                      "all-reduces host buffers on device cpu, and Debian's LibTorch is a CPU "
                      "build without NCCL)");
  }
  if (options.backend != "gloo") {
    throw ConfigError("dist.backend", options.backend, "gloo");
  }
  if (!(options.timeout_s > 0.0) || !std::isfinite(options.timeout_s)) {
    throw ConfigError("dist.timeout_s", fmt::format("{}", options.timeout_s),
                      "a number of seconds > 0");
  }
}

struct ProcessGroup::Impl {
  DistEnv env;
  DistOptions options;
  c10::intrusive_ptr<c10d::Store> store;       // the rendezvous store (TCP or file)
  c10::intrusive_ptr<c10d::Store> own_keys;    // greenrl's failure keys under "greenrl/"
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;  // null for a group of one
  CommStats stats;
  int64_t seq = 0;  // collectives started

  // Names the ranks that did not report the failure: each failing rank writes a key, waits a
  // moment for the others' keys, and lists the missing ones (dead or hung). Never throws.
  std::string Diagnose() {
    const std::string mine = "failed/" + std::to_string(env.rank);
    try {
      own_keys->set(mine, std::vector<uint8_t>{1});
    } catch (const std::exception& e) {
      return "the rendezvous store on rank 0 (" + env.master_addr + ":" +
             std::to_string(env.master_port) + ") is unreachable, so rank 0 has likely died (" +
             FirstLine(e.what()) + ")";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(
        static_cast<int64_t>(std::min(2.0, options.timeout_s / 2.0) * 1000.0)));
    std::string silent;
    try {
      for (int r = 0; r < env.world_size; ++r) {
        if (r == env.rank) continue;
        if (!own_keys->check({"failed/" + std::to_string(r)})) {
          silent += (silent.empty() ? "" : ", ") + std::to_string(r);
        }
      }
    } catch (const std::exception& e) {
      return "the rendezvous store on rank 0 became unreachable (" + FirstLine(e.what()) + ")";
    }
    if (silent.empty()) return "every other rank reported the failure too";
    return "rank(s) " + silent + " did not report it: dead or hung";
  }

  // Runs one collective with timing and the failure message the issue asks for.
  template <typename F>
  void Run(const char* op, const char* what, int64_t bytes, double* seconds, int64_t* calls,
           F&& body) {
    const int64_t n = ++seq;
    const auto t0 = Clock::now();
    try {
      if (pg) body();
    } catch (const std::exception& e) {
      const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
      throw std::runtime_error("dist: " + std::string(op) + " #" + std::to_string(n) + " of '" +
                               what + "' (" + std::to_string(bytes) + " bytes) failed on rank " +
                               std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                               " after " + fmt::format("{:.3g}", waited) +
                               " s (dist.timeout_s = " + fmt::format("{}", options.timeout_s) +
                               "): " + Diagnose() + ". c10d: " + FirstLine(e.what()));
    }
    *seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    ++*calls;
  }
};

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

std::unique_ptr<ProcessGroup> ProcessGroup::Connect(const DistEnv& env,
                                                    const DistOptions& options) {
  ValidateDistOptions(options);
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  impl->options = options;
  if (env.world_size == 1) return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(std::ceil(options.timeout_s * 1000.0)));
  const std::string where = options.file_store_path.empty()
                                ? env.master_addr + ":" + std::to_string(env.master_port)
                                : options.file_store_path;
  try {
    if (!options.file_store_path.empty()) {
      impl->store = c10::make_intrusive<c10d::FileStore>(options.file_store_path, env.world_size);
      impl->store->setTimeout(timeout);
    } else {
      c10d::TCPStoreOptions so;
      so.port = static_cast<uint16_t>(env.master_port);
      // Under torchrun's agent store every rank is a client of the agent's server, with the
      // keys of this restart attempt under its prefix (DistEnv::use_agent_store).
      so.isServer = env.rank == 0 && !env.use_agent_store;
      so.numWorkers = env.world_size;
      so.waitWorkers = false;
      so.timeout = timeout;
      // A stop signal while a client waits for rank 0's store interrupts the wait (EINTR):
      // connect again for the time left, so the signal is acted on after the first iteration,
      // as on rank 0 (train/signals.h), not taken for a failed rendezvous.
      const auto deadline = Clock::now() + timeout;
      for (;;) {
        try {
          impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
          break;
        } catch (const std::exception& e) {
          const auto left =
              std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
          if (so.isServer ||
              std::string(e.what()).find("Interrupted system call") == std::string::npos ||
              left.count() <= 0) {
            throw;
          }
          so.timeout = left;
        }
      }
      if (env.use_agent_store) {
        impl->store = c10::make_intrusive<c10d::PrefixStore>(
            "/worker/attempt_" + std::to_string(env.restart_count), impl->store);
      }
    }
    impl->own_keys = c10::make_intrusive<c10d::PrefixStore>("greenrl", impl->store);
    auto pg_options = c10d::ProcessGroupGloo::Options::create(timeout);
    if (IsLoopback(env.master_addr) && options.file_store_path.empty()) {
      pg_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME")) {
      pg_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else if (!options.file_store_path.empty()) {
      pg_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      pg_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    pg_options->threads = 1;  // one collective at a time: greenrl issues them in order
    impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(
        c10::make_intrusive<c10d::PrefixStore>("pg", impl->store), env.rank, env.world_size,
        pg_options);
  } catch (const std::exception& e) {
    const std::string why = FirstLine(e.what());
    // Rank 0 could not listen on MASTER_PORT at all: not a timeout, and not the other ranks'.
    if (why.find("errno: 98") != std::string::npos ||
        why.find("Address already in use") != std::string::npos) {
      throw std::runtime_error(fmt::format(
          "dist: rank {} of {} could not listen on {}: the port is in use (another run or "
          "program holds it; pick a free MASTER_PORT, or let greenrl launch pick one): {}",
          env.rank, env.world_size, where, why));
    }
    throw std::runtime_error(fmt::format(
        "dist: rank {} of {} could not join the group at {} within dist.timeout_s = {} s (are "
        "all ranks started, with the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE?): {}",
        env.rank, env.world_size, where, options.timeout_s, why));
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

int ProcessGroup::rank() const { return impl_->env.rank; }
int ProcessGroup::world_size() const { return impl_->env.world_size; }
int ProcessGroup::local_rank() const { return impl_->env.local_rank; }
double ProcessGroup::timeout_s() const { return impl_->options.timeout_s; }
const CommStats& ProcessGroup::stats() const { return impl_->stats; }

void ProcessGroup::AllReduceMean(float* data, int64_t n, const char* what) {
  Impl& s = *impl_;
  s.Run("all-reduce (mean)", what, n * 4, &s.stats.allreduce_s, &s.stats.allreduce_calls, [&] {
    std::vector<at::Tensor> t{torch::from_blob(data, {n}, torch::kFloat32)};
    s.pg->allreduce(t)->wait();
    t[0].div_(static_cast<double>(s.env.world_size));
  });
  s.stats.allreduce_bytes += n * 4;
}

void ProcessGroup::AllReduceSum(double* data, int64_t n, const char* what) {
  Impl& s = *impl_;
  s.Run("all-reduce (sum)", what, n * 8, &s.stats.allreduce_s, &s.stats.allreduce_calls, [&] {
    std::vector<at::Tensor> t{torch::from_blob(data, {n}, torch::kFloat64)};
    s.pg->allreduce(t)->wait();
  });
  s.stats.allreduce_bytes += n * 8;
}

void ProcessGroup::Broadcast(float* data, int64_t n, const char* what) {
  Impl& s = *impl_;
  s.Run("broadcast from rank 0", what, n * 4, &s.stats.broadcast_s, &s.stats.broadcast_calls, [&] {
    std::vector<at::Tensor> t{torch::from_blob(data, {n}, torch::kFloat32)};
    c10d::BroadcastOptions o;
    o.rootRank = 0;
    s.pg->broadcast(t, o)->wait();
  });
}

std::vector<std::string> ProcessGroup::AllGatherText(const std::string& key,
                                                     const std::string& text, const char* what) {
  Impl& s = *impl_;
  std::vector<std::string> texts(static_cast<size_t>(s.env.world_size));
  texts[static_cast<size_t>(s.env.rank)] = text;
  if (s.env.world_size == 1) return texts;
  double ignored_s = 0.0;
  int64_t ignored_calls = 0;
  const int64_t bytes = static_cast<int64_t>(text.size());
  s.Run("all-gather of a text", what, bytes, &ignored_s, &ignored_calls, [&] {
    const std::string prefix = "gather/" + key + "/";
    s.own_keys->set(prefix + std::to_string(s.env.rank),
                    std::vector<uint8_t>(text.begin(), text.end()));
    for (int r = 0; r < s.env.world_size; ++r) {
      if (r == s.env.rank) continue;
      const std::vector<uint8_t> value = s.own_keys->get(prefix + std::to_string(r));
      texts[static_cast<size_t>(r)].assign(value.begin(), value.end());
    }
  });
  return texts;
}

void ProcessGroup::Barrier(const char* what) {
  Impl& s = *impl_;
  double ignored_s = 0.0;
  int64_t ignored_calls = 0;
  s.Run("barrier", what, 0, &ignored_s, &ignored_calls, [&] { s.pg->barrier()->wait(); });
}

}  // namespace greenrl::dist
