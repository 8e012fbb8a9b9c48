// power_limit.cc: NVML power-limit control with dry-run, and Zeus's limit choice (power_limit.h).
#include "greenrl/energy/power_limit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "greenrl/core/errors.h"

namespace greenrl::energy {
namespace {

std::string Watts(double power_w) { return fmt::format("{:g} W", power_w); }
std::string WattsFromMw(unsigned int power_mw) { return Watts(power_mw / 1000.0); }

std::string Describe(const NvmlGpu& gpu) {
  return gpu.domain + " (" + gpu.name + ", " + gpu.identity.uuid + ")";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// NvmlPowerLimitControl

std::unique_ptr<NvmlPowerLimitControl> NvmlPowerLimitControl::TryCreate(
    const PowerLimitOptions& options, std::string* why_not) {
  std::optional<NvmlVisibleGpus> visible = OpenNvmlVisibleGpus(options.nvml, why_not);
  if (!visible.has_value()) return nullptr;
  return std::unique_ptr<NvmlPowerLimitControl>(
      new NvmlPowerLimitControl(std::move(*visible), options));
}

NvmlPowerLimitControl::NvmlPowerLimitControl(NvmlVisibleGpus visible,
                                             const PowerLimitOptions& options)
    : library_(std::move(visible.library)), dry_run_(options.dry_run), log_(options.log) {
  for (NvmlGpu& gpu : visible.gpus) devices_.push_back(Device{std::move(gpu), {}, {}});
}

NvmlPowerLimitControl::~NvmlPowerLimitControl() {
  try {
    RestoreAll();
  } catch (...) {
    // A destructor must not throw; RestoreAll only throws on allocation failure.
  }
}

std::vector<std::string> NvmlPowerLimitControl::domains() const {
  std::vector<std::string> names;
  for (const Device& device : devices_) names.push_back(device.gpu.domain);
  return names;
}

NvmlPowerLimitControl::Device* NvmlPowerLimitControl::Find(const std::string& domain) {
  for (Device& device : devices_) {
    if (device.gpu.domain == domain) return &device;
  }
  return nullptr;
}

std::optional<PowerLimitInfo> NvmlPowerLimitControl::Read(const std::string& domain,
                                                          std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  Device* device = Find(domain);
  if (device == nullptr) {
    *error = "no GPU domain '" + domain + "'";
    return std::nullopt;
  }
  const nvml_abi::Api& api = library_->api();
  if (api.get_power_limit_mw == nullptr || api.get_power_limit_constraints_mw == nullptr ||
      api.get_power_default_limit_mw == nullptr) {
    *error = "the NVML library lacks the power-management limit entry points";
    return std::nullopt;
  }
  const nvml_abi::Device handle = device->gpu.handle;
  unsigned int current_mw = 0, default_mw = 0, min_mw = 0, max_mw = 0;
  nvml_abi::Return rc = api.get_power_limit_mw(handle, &current_mw);
  const char* call = "nvmlDeviceGetPowerManagementLimit";
  if (rc == nvml_abi::kSuccess) {
    rc = api.get_power_limit_constraints_mw(handle, &min_mw, &max_mw);
    call = "nvmlDeviceGetPowerManagementLimitConstraints";
  }
  if (rc == nvml_abi::kSuccess) {
    rc = api.get_power_default_limit_mw(handle, &default_mw);
    call = "nvmlDeviceGetPowerManagementDefaultLimit";
  }
  if (rc != nvml_abi::kSuccess) {
    *error = Describe(device->gpu) + ": " + call + " failed: " + library_->ErrorText(rc);
    return std::nullopt;
  }
  PowerLimitInfo info;
  info.domain = device->gpu.domain;
  info.uuid = device->gpu.identity.uuid;
  info.name = device->gpu.name;
  info.current_limit_w = current_mw / 1000.0;
  info.default_limit_w = default_mw / 1000.0;
  info.min_limit_w = min_mw / 1000.0;
  info.max_limit_w = max_mw / 1000.0;
  return info;
}

PowerLimitSetResult NvmlPowerLimitControl::Set(const std::string& domain, double limit_w) {
  PowerLimitSetResult result;
  std::string error;
  const std::optional<PowerLimitInfo> info = Read(domain, &error);
  if (!info.has_value()) {
    result.line = "cannot set power limit: " + error;
    Log(result);
    return result;
  }
  Device* device = Find(domain);
  const double limit_mw = std::round(limit_w * 1000.0);
  if (!std::isfinite(limit_w) || limit_w < info->min_limit_w || limit_w > info->max_limit_w) {
    result.line = "cannot set power limit of " + Describe(device->gpu) + " to " +
                  fmt::format("{:g}", limit_w) + " W: outside the constraints " +
                  Watts(info->min_limit_w) + " to " + Watts(info->max_limit_w);
    Log(result);
    return result;
  }
  const auto from_mw = static_cast<unsigned int>(std::lround(info->current_limit_w * 1000.0));
  const auto to_mw = static_cast<unsigned int>(limit_mw);
  if (!device->original_limit_mw.has_value()) device->original_limit_mw = from_mw;
  result = Apply(device, from_mw, to_mw, "set");
  if (result.ok) device->requested_limit_mw = to_mw;
  return result;
}

PowerLimitSetResult NvmlPowerLimitControl::Apply(Device* device, unsigned int from_mw,
                                                 unsigned int to_mw, const char* verb) {
  PowerLimitSetResult result;
  const std::string what = std::string(verb) + " power limit of " + Describe(device->gpu) +
                           " from " + WattsFromMw(from_mw) + " to " + WattsFromMw(to_mw) +
                           " (nvmlDeviceSetPowerManagementLimit, " + std::to_string(to_mw) + " mW)";
  if (dry_run_) {
    result.ok = true;
    result.line = "dry-run: would " + what + "; nothing was changed";
    Log(result);
    return result;
  }
  const nvml_abi::Api& api = library_->api();
  const nvml_abi::Return rc = api.set_power_limit_mw != nullptr
                                  ? api.set_power_limit_mw(device->gpu.handle, to_mw)
                                  : nvml_abi::kErrorNotSupported;
  if (rc != nvml_abi::kSuccess) {
    result.line = "failed to " + what + ": " + library_->ErrorText(rc);
    if (rc == nvml_abi::kErrorNoPermission) {
      result.line += "; setting a power limit needs root (or run with dry-run)";
    }
    Log(result);
    return result;
  }
  result.ok = true;
  result.applied = true;
  result.line = what;
  result.line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(result.line[0])));
  Log(result);
  return result;
}

std::vector<PowerLimitSetResult> NvmlPowerLimitControl::RestoreAll() {
  std::vector<PowerLimitSetResult> results;
  for (Device& device : devices_) {
    if (!device.original_limit_mw.has_value() || !device.requested_limit_mw.has_value()) continue;
    results.push_back(
        Apply(&device, *device.requested_limit_mw, *device.original_limit_mw, "restore"));
    device.original_limit_mw.reset();
    device.requested_limit_mw.reset();
  }
  return results;
}

void NvmlPowerLimitControl::Log(const PowerLimitSetResult& result) const {
  if (log_ != nullptr) *log_ << result.line << '\n';
}

// ---------------------------------------------------------------------------------------------
// Zeus's choice and plan

PowerLimitChoice ChoosePowerLimit(const std::vector<PowerLimitProfile>& profiles,
                                  double max_power_w, double eta) {
  if (!(eta >= 0.0 && eta <= 1.0)) {
    throw ConfigError("energy.power_limit_eta", fmt::format("{}", eta),
                      "a number in [0, 1] (Zeus's eta: 1 = minimise energy, 0 = minimise time)");
  }
  GREENRL_CHECK(!profiles.empty(), "ChoosePowerLimit needs at least one profiled limit");
  GREENRL_CHECK(std::isfinite(max_power_w) && max_power_w > 0.0, "max_power_w must be > 0");
  PowerLimitChoice choice;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const PowerLimitProfile& p = profiles[i];
    GREENRL_CHECK(std::isfinite(p.limit_w) && std::isfinite(p.energy_j) &&
                      std::isfinite(p.time_s) && p.energy_j >= 0.0 && p.time_s >= 0.0,
                  fmt::format("invalid power-limit profile {}: limit {} W, {} J, {} s", i,
                              p.limit_w, p.energy_j, p.time_s));
    const double cost_j = eta * p.energy_j + (1.0 - eta) * max_power_w * p.time_s;
    choice.cost_j.push_back(cost_j);
    const double best_j = choice.cost_j[choice.index];
    if (i == 0 || cost_j < best_j || (cost_j == best_j && p.limit_w > choice.limit_w)) {
      choice.index = i;
      choice.limit_w = p.limit_w;
    }
  }
  return choice;
}

std::vector<double> PowerLimitPlanW(double min_limit_w, double max_limit_w, double step_w) {
  GREENRL_CHECK(std::isfinite(min_limit_w) && std::isfinite(max_limit_w) && std::isfinite(step_w) &&
                    min_limit_w > 0.0 && min_limit_w <= max_limit_w && step_w > 0.0,
                fmt::format("invalid power-limit range {} to {} W, step {} W", min_limit_w,
                            max_limit_w, step_w));
  const long long min_mw = std::llround(min_limit_w * 1000.0);
  const long long max_mw = std::llround(max_limit_w * 1000.0);
  const long long step_mw = std::max(1LL, std::llround(step_w * 1000.0));
  std::vector<double> plan_w;
  for (long long limit_mw = max_mw; limit_mw >= min_mw; limit_mw -= step_mw) {
    plan_w.push_back(static_cast<double>(limit_mw) / 1000.0);
  }
  return plan_w;
}

std::string DescribePowerLimitPlan(const PowerLimitInfo& info, const std::vector<double>& plan_w) {
  std::string limits;
  for (std::size_t i = 0; i < plan_w.size(); ++i) {
    limits += (i > 0 ? ", " : "") + fmt::format("{:g}", plan_w[i]);
  }
  return fmt::format(
      "{} ({}, {}): power-limit plan {} W (constraints {:g}-{:g} W, current {:g} W, default {:g} "
      "W)",
      info.domain, info.name, info.uuid, limits, info.min_limit_w, info.max_limit_w,
      info.current_limit_w, info.default_limit_w);
}

}  // namespace greenrl::energy
