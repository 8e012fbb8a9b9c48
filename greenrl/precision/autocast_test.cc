// Under CPU bf16 autocast a Linear's output is bf16 while its weight and gradient stay fp32.
#include "greenrl/precision/autocast.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "greenrl/core/errors.h"

namespace greenrl::precision {
namespace {

TEST(AutocastTest, Bf16OutputWithFp32WeightAndGradient) {
  torch::manual_seed(0);
  torch::nn::Linear linear(4, 3);
  auto x = torch::randn({5, 4});
  torch::Tensor y;
  {
    AutocastScope scope(Precision::kBf16);
    y = linear->forward(x);
  }
  EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(linear->weight.scalar_type(), torch::kFloat32);
  y.to(torch::kFloat32).sum().backward();
  ASSERT_TRUE(linear->weight.grad().defined());
  EXPECT_EQ(linear->weight.grad().scalar_type(), torch::kFloat32);
  // Outside the scope autocast is off again.
  EXPECT_EQ(linear->forward(x).scalar_type(), torch::kFloat32);
}

// The scope restores the autocast dtype it found (an embedding program's own setting), as
// PyTorch's autocast.__exit__ restores prev_fastdtype. Shown on the CUDA autocast state, which
// is plain thread state (no GPU needed) and, unlike LibTorch 1.13's CPU one, takes fp16 and bf16.
TEST(AutocastTest, ScopeRestoresThePreviousDtype) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  auto get = [] { return at::autocast::get_autocast_dtype(c10::DeviceType::CUDA); };
  auto set = [](at::ScalarType t) { at::autocast::set_autocast_dtype(c10::DeviceType::CUDA, t); };
#else
  auto get = [] { return at::autocast::get_autocast_gpu_dtype(); };
  auto set = [](at::ScalarType t) { at::autocast::set_autocast_gpu_dtype(t); };
#endif
  const at::ScalarType before = get();
  set(at::kBFloat16);
  {
    AutocastScope scope(Precision::kFp16, AutocastDevice::kCuda);
    EXPECT_EQ(get(), at::kHalf);
  }
  EXPECT_EQ(get(), at::kBFloat16);
  set(before);
}

TEST(AutocastTest, Fp16OnCpuIsRefusedAndParseNamesField) {
  EXPECT_THROW(AutocastScope scope(Precision::kFp16), ConfigError);
  EXPECT_THROW(ParsePrecision("precision", "int8"), ConfigError);
  EXPECT_EQ(ParsePrecision("precision", "bf16"), Precision::kBf16);
}

}  // namespace
}  // namespace greenrl::precision
