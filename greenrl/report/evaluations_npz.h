// evaluations_npz.h: SB3's evaluation log, evaluations.npz, as EvalCallback writes it with a
// log_path (stable_baselines3/common/callbacks.py, SB3 2.x: np.savez(log_path, timesteps=...,
// results=..., ep_lengths=...)), so rl-zoo's plotting scripts (scripts/all_plots.py,
// scripts/plot_from_file.py) and any `np.load` read a greenrl run's evaluations as an SB3 one's.
// The archive is a zip (stored, not compressed, as np.savez) of three NPY 1.0 arrays (the
// format of numpy/lib/format.py, that is magic, header dict padded to 64 bytes, C-order data),
// named and shaped as follows.
//   timesteps.npy   int64 [n_evals]                     env steps (all envs) at each evaluation
//   results.npy     float64 [n_evals, n_eval_episodes]  undiscounted return of each episode
//   ep_lengths.npy  int64 [n_evals, n_eval_episodes]    length (steps) of each episode
// libzip builds the archive in memory; WriteFileAtomic writes it. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace greenrl::report {

// The evaluations of one run, in the order they ran; every row has the same episode count.
struct EvaluationsLog {
  std::vector<int64_t> timesteps;                // int64 [n_evals], env steps
  std::vector<std::vector<double>> results;      // float64 [n_evals][n_eval_episodes]
  std::vector<std::vector<int64_t>> ep_lengths;  // int64 [n_evals][n_eval_episodes], steps

  // Episodes per evaluation: the width of every row (0 while the log is empty).
  size_t episodes() const { return results.empty() ? 0 : results.front().size(); }
  // Appends one evaluation's episodes (returns and lengths, one entry per episode).
  // Errors: std::invalid_argument when returns is empty, when lengths has another size than
  // returns, or when the log already holds rows of another width.
  void Append(int64_t timestep, const std::vector<double>& returns,
              const std::vector<int64_t>& lengths);
  // Keeps only the evaluations at timesteps <= `step` (a resumed run drops the ones after its
  // checkpoint, which it runs again).
  void KeepUpTo(int64_t step);
};

// One NPY 1.0 file: magic "\x93NUMPY", version 1.0, the little-endian uint16 header length, the
// header "{'descr': '<descr>', 'fortran_order': False, 'shape': (<shape>), }" padded with spaces
// and a newline so that the data starts at a multiple of 64 bytes (numpy's ARRAY_ALIGN), then
// the C-order data. `descr` is "<i8" or "<f8"; `data` holds product(shape) elements of 8 bytes.
// Errors: std::invalid_argument when data's size does not match shape.
std::string NpyBytes(const std::string& descr, const std::vector<int64_t>& shape,
                     const std::string& data);

// The whole evaluations.npz archive, as bytes. Errors: std::runtime_error when libzip fails.
std::string EvaluationsNpzBytes(const EvaluationsLog& log);

// Writes EvaluationsNpzBytes(log) to `path` atomically (WriteFileAtomic).
// Errors: std::runtime_error naming the path when it cannot be written.
void WriteEvaluationsNpz(const std::string& path, const EvaluationsLog& log);

// Reads an evaluations.npz back: the three arrays above, as numpy 1.x writes them (NPY 1.0 or
// 2.0, little-endian int64/float64, C order, stored or deflated members).
// Errors: std::runtime_error naming the path and what is wrong (not a zip, a missing member,
// another dtype or shape, rows of another count).
EvaluationsLog ReadEvaluationsNpz(const std::string& path);

}  // namespace greenrl::report
