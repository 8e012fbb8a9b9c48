// Under CPU bf16 autocast a Linear's output is bf16 while its weight and gradient stay fp32.
#include "greenrl/precision/autocast.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

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

TEST(AutocastTest, Fp16OnCpuIsRefusedAndParseNamesField) {
  EXPECT_THROW(AutocastScope scope(Precision::kFp16), ConfigError);
  EXPECT_THROW(ParsePrecision("precision", "int8"), ConfigError);
  EXPECT_EQ(ParsePrecision("precision", "bf16"), Precision::kBf16);
}

}  // namespace
}  // namespace greenrl::precision
