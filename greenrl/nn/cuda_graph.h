// cuda_graph.h: capture a step of LibTorch work once as a CUDA graph and replay it, so a small
// model's update costs one graph launch instead of hundreds of kernel launches (CUDA Programming
// Guide, "CUDA Graphs"; PyTorch's torch.cuda.graph semantics). The header is torch-free; the
// implementation (cuda_graph.cc) is compiled only in a CUDA build of LibTorch
// (GREENRL_WITH_CUDA), else cuda_graph_stub.cc reports that graphs are unavailable.
//
// Rules of a captured step, as in PyTorch: it must not synchronise with the host (.item(),
// .cpu(), data-dependent control flow), every tensor it reads or writes across replays must be
// allocated before capture (its "static" inputs and outputs, refilled in place between
// replays), and the same shapes are used at every replay.
#pragma once

#include <functional>
#include <memory>

namespace greenrl::nn {

// Whether this build can capture CUDA graphs and a CUDA device is present.
bool CudaGraphsAvailable();

// Runs everything inside on one side CUDA stream of the current device (capture needs a
// non-default stream); the caller's stream waits for it at scope exit.
// A no-op in builds without CUDA and where no CUDA device is present. No errors.
class CudaSideStream {
 public:
  CudaSideStream();
  ~CudaSideStream();
  CudaSideStream(const CudaSideStream&) = delete;
  CudaSideStream& operator=(const CudaSideStream&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One captured step. Capture() runs `step` under stream capture (the work is recorded, not
// executed); Replay() launches the recorded work on the current stream.
// Errors: std::runtime_error when CUDA graphs are unavailable, and LibTorch's c10::Error for
// an operation that cannot be captured (a host sync inside the step).
class CudaGraph {
 public:
  CudaGraph();
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  void Capture(const std::function<void()>& step);
  void Replay();
  bool captured() const { return captured_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool captured_ = false;
};

}  // namespace greenrl::nn
