#include "greenrl/train/policy_export.h"

#include <fmt/format.h>
#include <torch/script.h>

#include <sstream>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/wrappers.h"

namespace greenrl::train {

namespace {

torch::Tensor FloatTensor(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

torch::Tensor DoubleTensor(const std::vector<double>& v) {
  return torch::from_blob(const_cast<double*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kFloat64)
      .clone();
}

// `text` without the characters that would end or escape a TorchScript string literal.
std::string QuoteSafe(std::string text) {
  for (char& c : text) {
    if (c == '"' || c == '\\' || c == '\n') c = '?';
  }
  return text;
}

}  // namespace

void ExportTorchScriptPolicy(const algo::DeterministicPolicy& policy,
                             const NormalizerSnapshot* normalizer, const PolicyExportInfo& info,
                             const std::string& path) {
  using algo::PolicyHead;
  const env::EnvSpec& spec = env::FindEnvSpec(info.env_id);
  GREENRL_CHECK(!policy.layers.empty() && policy.layers.front().in_dim == policy.obs_dim &&
                    policy.layers.back().out_dim == policy.action_dim,
                "the policy's layers do not map obs_dim to action_dim");
  const bool box = policy.head != PolicyHead::kArgmax;
  GREENRL_CHECK(!box || (policy.low.size() == static_cast<size_t>(policy.action_dim) &&
                         policy.high.size() == static_cast<size_t>(policy.action_dim)),
                "a Box policy needs action_dim low and high bounds");

  torch::jit::Module m("GreenrlPolicy");
  m.register_attribute("algo", c10::StringType::get(), policy.algo);
  m.register_attribute("env_id", c10::StringType::get(), info.env_id);
  m.register_attribute("checkpoint", c10::StringType::get(), info.checkpoint);
  m.register_attribute("head", c10::StringType::get(), std::string(algo::ToString(policy.head)));
  m.register_attribute("observation_space", c10::StringType::get(),
                       env::FormatSpace(spec.observation_space));
  m.register_attribute("action_space", c10::StringType::get(), env::FormatSpace(spec.action_space));
  m.register_attribute("obs_dim", c10::IntType::get(), int64_t{policy.obs_dim});
  m.register_attribute("action_dim", c10::IntType::get(), int64_t{policy.action_dim});

  // normalize_obs: VecNormalize's observation transform in float64, as NormalizeVecEnv.
  const bool normalize = normalizer != nullptr && normalizer->options.norm_obs;
  m.register_attribute("normalize", c10::BoolType::get(), normalize);
  std::string code = fmt::format(R"JIT(
def normalize_obs(self, obs: Tensor) -> Tensor:
    assert obs.size(-1) == {0}, "greenrl policy for {1}: obs must have {0} values in its last dimension"
    x = obs.float()
)JIT",
                                 policy.obs_dim, QuoteSafe(info.env_id));
  if (normalize) {
    const env::RunningMeanStd stats =
        env::NormalizeVecEnv::ObsStatsFromState(normalizer->state, policy.obs_dim);
    m.register_buffer("obs_mean", DoubleTensor(stats.mean));
    m.register_buffer("obs_var", DoubleTensor(stats.var));
    m.register_attribute("obs_epsilon", c10::FloatType::get(), normalizer->options.epsilon);
    m.register_attribute("clip_obs", c10::FloatType::get(), normalizer->options.clip_obs);
    code += R"JIT(    z = (x.double() - self.obs_mean) / torch.sqrt(self.obs_var + self.obs_epsilon)
    x = torch.clamp(z, -self.clip_obs, self.clip_obs).float()
)JIT";
  }
  code += "    return x\n";

  // net: the MLP, the activation after every layer but the last.
  const char* act = policy.activation == nn::Activation::kTanh ? "torch.tanh" : "torch.relu";
  code += R"JIT(
def net(self, obs: Tensor) -> Tensor:
    x = self.normalize_obs(obs)
)JIT";
  for (size_t l = 0; l < policy.layers.size(); ++l) {
    const algo::DenseLayer& d = policy.layers[l];
    GREENRL_CHECK(l == 0 || d.in_dim == policy.layers[l - 1].out_dim,
                  "layer " + std::to_string(l) + " does not take the previous layer's output");
    m.register_buffer(fmt::format("layer{}_weight", l),
                      FloatTensor(d.weight, {d.out_dim, d.in_dim}));
    m.register_buffer(fmt::format("layer{}_bias", l), FloatTensor(d.bias, {d.out_dim}));
    const std::string linear =
        fmt::format("torch.linear(x, self.layer{0}_weight, self.layer{0}_bias)", l);
    code += l + 1 < policy.layers.size() ? fmt::format("    x = {}({})\n", act, linear)
                                         : fmt::format("    return {}\n", linear);
  }

  // forward: the head, on 2-D or 1-D observations.
  code += R"JIT(
def forward(self, obs: Tensor) -> Tensor:
    one = obs.dim() == 1
    if one:
        obs = obs.unsqueeze(0)
    y = self.net(obs)
)JIT";
  if (box) {
    m.register_buffer("low", FloatTensor(policy.low, {policy.action_dim}));
    m.register_buffer("high", FloatTensor(policy.high, {policy.action_dim}));
  }
  switch (policy.head) {
    case PolicyHead::kArgmax:
      code += "    a = torch.argmax(y, dim=-1)\n";
      break;
    case PolicyHead::kClipToBox:
      code += "    a = torch.max(torch.min(y, self.high), self.low)\n";
      break;
    case PolicyHead::kTanhToBox:
      m.register_attribute("clip_mean", c10::FloatType::get(), policy.clip_mean);
      if (policy.clip_mean > 0.0)
        code += "    y = torch.clamp(y, -self.clip_mean, self.clip_mean)\n";
      code += R"JIT(    a = self.low + 0.5 * (torch.tanh(y) + 1.0) * (self.high - self.low)
    a = torch.max(torch.min(a, self.high), self.low)
)JIT";
      break;
  }
  code += R"JIT(    if one:
        a = a.squeeze(0)
    return a
)JIT";
  m.define(code);
  m.eval();
  std::ostringstream bytes;
  m.save(bytes);
  WriteFileAtomic(path, bytes.str());
}

bool IsExportedPolicy(const std::string& path) {
  try {
    torch::jit::Module m = torch::jit::load(path);
    if (!m.find_method("forward")) return false;
    for (const char* name : {"algo", "env_id", "checkpoint", "head"}) {
      if (!m.hasattr(name)) return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace greenrl::train
