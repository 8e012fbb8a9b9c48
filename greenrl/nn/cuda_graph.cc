// cuda_graph.cc: CudaGraph over ATen's at::cuda::CUDAGraph (CUDA builds of LibTorch only).
#include "greenrl/nn/cuda_graph.h"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>

#include <optional>
#include <stdexcept>

namespace greenrl::nn {

bool CudaGraphsAvailable() { return torch::cuda::is_available(); }

struct CudaSideStream::Impl {
  c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream();
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  std::optional<c10::cuda::CUDAStreamGuard> guard;
};

CudaSideStream::CudaSideStream() {
  if (!torch::cuda::is_available()) return;
  impl_ = std::make_unique<Impl>();
  // The side stream starts after the caller's queued work (e.g. uploads) has finished.
  at::cuda::CUDAEvent ready;
  ready.record(impl_->caller);
  ready.block(impl_->side);
  impl_->guard.emplace(impl_->side);
}

CudaSideStream::~CudaSideStream() {
  if (!impl_) return;
  impl_->guard.reset();
  // The caller's later work waits for everything queued on the side stream.
  at::cuda::CUDAEvent done;
  done.record(impl_->side);
  done.block(impl_->caller);
}

struct CudaGraph::Impl {
  at::cuda::CUDAGraph graph;
};

CudaGraph::CudaGraph() : impl_(std::make_unique<Impl>()) {}
CudaGraph::~CudaGraph() = default;

void CudaGraph::Capture(const std::function<void()>& step) {
  if (!torch::cuda::is_available()) {
    throw std::runtime_error("CudaGraph::Capture: no CUDA device is available");
  }
  if (c10::cuda::getCurrentCUDAStream() == c10::cuda::getDefaultCUDAStream()) {
    throw std::runtime_error(
        "CudaGraph::Capture: capture needs a side stream (wrap it in a CudaSideStream)");
  }
  impl_->graph.capture_begin();
  step();
  impl_->graph.capture_end();
  captured_ = true;
}

void CudaGraph::Replay() {
  if (!captured_) throw std::runtime_error("CudaGraph::Replay: nothing captured");
  impl_->graph.replay();
}

}  // namespace greenrl::nn
