// process_group.h: greenrl's data-parallel process group on torch c10d (LibTorch's own
// distributed engine, as torch.distributed): rank 0 hosts a c10d::TCPStore at
// MASTER_ADDR:MASTER_PORT, every rank joins a c10d::ProcessGroupGloo through it, and the
// collectives algorithms need (core/collectives.h) run over the group. Collectives carry the
// group's timeout: a rank that dies or hangs makes the others fail with an error naming the
// collective and, where the store can tell, the rank; never a hang.
// The header is torch-free (pimpl); only process_group.cc sees c10d.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/core/collectives.h"
#include "greenrl/dist/dist_env.h"

namespace greenrl::dist {

struct DistOptions {
  // "gloo" (CPU tensors, TCP). "nccl" is refused: greenrl's data-parallel updates all-reduce host
  // buffers (device cpu), which NCCL cannot, and Debian's LibTorch is a CPU build without NCCL.
  std::string backend = "gloo";
  // Seconds any rendezvous or collective may wait for the other ranks before it fails
  // (torch.distributed's `timeout`; its default is 1800 s). > 0.
  double timeout_s = 300.0;
  // Tests: rendezvous through a c10d::FileStore at this path (must not exist yet, one per group)
  // instead of the TCPStore at MASTER_ADDR:MASTER_PORT.
  std::string file_store_path;
};

// Checks `options` (config keys dist.backend, dist.timeout_s).
// Errors: ConfigError("dist.backend", value, "gloo ...") for anything but gloo (nccl included,
// with the reason); ConfigError("dist.timeout_s", ...) for a non-positive timeout.
void ValidateDistOptions(const DistOptions& options);

// Time and volume spent in collectives since Connect (wall seconds as this rank saw them,
// waiting for slower ranks included).
struct CommStats {
  int64_t allreduce_calls = 0;
  int64_t allreduce_bytes = 0;  // payload per call, summed (not the wire traffic)
  double allreduce_s = 0.0;
  int64_t broadcast_calls = 0;
  double broadcast_s = 0.0;
};

class ProcessGroup final : public Collectives {
 public:
  // Joins the group `env` describes (env.world_size >= 1; a group of one works and its
  // collectives return their input). Blocks until every rank has joined or options.timeout_s
  // passes. Errors: ConfigError from ValidateDistOptions; std::runtime_error naming
  // MASTER_ADDR:MASTER_PORT and the rank when the rendezvous fails or times out.
  static std::unique_ptr<ProcessGroup> Connect(const DistEnv& env, const DistOptions& options);
  ~ProcessGroup() override;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const override;
  int world_size() const override;
  int local_rank() const;
  double timeout_s() const;
  void AllReduceMean(float* data, int64_t n, const char* what) override;
  void AllReduceSum(double* data, int64_t n, const char* what) override;
  void Broadcast(float* data, int64_t n, const char* what) override;
  // Waits until every rank has reached this point. Errors: as AllReduceMean.
  void Barrier(const char* what);
  // Every rank's `text` (index = rank), exchanged through the rendezvous store under
  // "greenrl/gather/<key>/<rank>" (a key used once per group): for small texts such as the
  // resolved config or rank 0's run directory. Blocks until every rank has given its text.
  // Errors: as AllReduceMean (a rank that never gives its text fails the others within
  // dist.timeout_s).
  std::vector<std::string> AllGatherText(const std::string& key, const std::string& text,
                                         const char* what);

  const CommStats& stats() const;

 private:
  struct Impl;
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace greenrl::dist
