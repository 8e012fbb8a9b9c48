// collectives.h: the torch-free interface through which an algorithm takes part in data-parallel
// training (../shared/DESIGN.md, "Scaling out"). greenrl/dist implements it over torch c10d; algo
// sees only this interface, so algo never depends on dist. A single-process run passes no
// Collectives at all (nullptr), and algorithms then skip every call below.
//
// Every call is a collective: all ranks of the group must make the same calls, in the same order,
// with the same sizes, or the call fails after the group's timeout (it never hangs).
#pragma once

#include <cstdint>

namespace greenrl {

class Collectives {
 public:
  virtual ~Collectives() = default;

  // This process's rank in [0, world_size()), and the number of ranks.
  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // Replaces data float32 [n] on every rank by its element-wise mean over the ranks
  // (DD-PPO's gradient averaging: Wijmans et al., 2020, arXiv:1911.00357, section 3).
  // data lives in host memory. `what` names the buffer in error messages ("ppo gradients").
  // Errors: std::runtime_error naming the collective, `what`, this rank and the rank that failed
  // or timed out when it can be told.
  virtual void AllReduceMean(float* data, int64_t n, const char* what) = 0;

  // Replaces data float64 [n] on every rank by its element-wise sum over the ranks (metrics,
  // counts). Errors: as AllReduceMean.
  virtual void AllReduceSum(double* data, int64_t n, const char* what) = 0;

  // Replaces data float32 [n] on every rank by rank 0's (initial parameters).
  // Errors: as AllReduceMean.
  virtual void Broadcast(float* data, int64_t n, const char* what) = 0;
};

}  // namespace greenrl
