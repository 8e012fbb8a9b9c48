// cuda_graph_stub.cc: the CPU-only build's CudaGraph (see cuda_graph.h): graphs unavailable.
#include <stdexcept>

#include "greenrl/nn/cuda_graph.h"

namespace greenrl::nn {

namespace {
[[noreturn]] void Unavailable() {
  throw std::runtime_error(
      "CUDA graphs need a CUDA build of LibTorch (this greenrl was built without CUDA; see "
      "README, section GPU)");
}
}  // namespace

struct CudaSideStream::Impl {};
struct CudaGraph::Impl {};

bool CudaGraphsAvailable() { return false; }
CudaSideStream::CudaSideStream() = default;
CudaSideStream::~CudaSideStream() = default;
CudaGraph::CudaGraph() = default;
CudaGraph::~CudaGraph() = default;
void CudaGraph::Capture(const std::function<void()>&) { Unavailable(); }
void CudaGraph::Replay() { Unavailable(); }

}  // namespace greenrl::nn
