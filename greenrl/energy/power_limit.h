// power_limit.h: GPU power limits: read and set them through NVML (with a dry-run mode that only
// says what it would set), and Zeus's choice of the limit that minimises a blend of energy and
// time (issue 3, part 6).
//
// Facts (../shared/REFERENCES.md, "NVML"): nvmlDeviceGetPowerManagementLimit, ...LimitConstraints,
// ...DefaultLimit and nvmlDeviceSetPowerManagementLimit work in milliwatts; setting needs root,
// must lie inside the constraints, and is lost on reboot or driver unload.
// Zeus (Jie You, Jae-Won Chung, Mosharaf Chowdhury, "Zeus: Understanding and Optimizing GPU Energy
// Consumption of DNN Training", NSDI '23; ml-energy/zeus): profile limits from the maximum down in
// 25 W steps, pick the one minimising eta x energy + (1 - eta) x max_power x time (eta 0.5 by
// default), restore the original limit at exit.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "greenrl/energy/nvml_meter.h"

namespace greenrl::energy {

// Zeus's default weight of energy against time.
inline constexpr double kDefaultPowerLimitEta = 0.5;
// Zeus's step between profiled power limits, W.
inline constexpr double kPowerLimitStepW = 25.0;

// A device's power-limit settings, W (NVML reports mW).
struct PowerLimitInfo {
  std::string domain;            // "gpu:0" (CUDA visible index, as NvmlMeter)
  std::string uuid;              // "GPU-..."
  std::string name;              // "NVIDIA A100-SXM4-40GB"
  double current_limit_w = 0.0;  // nvmlDeviceGetPowerManagementLimit
  double default_limit_w = 0.0;  // nvmlDeviceGetPowerManagementDefaultLimit
  double min_limit_w = 0.0;      // nvmlDeviceGetPowerManagementLimitConstraints, minimum
  double max_limit_w = 0.0;      // nvmlDeviceGetPowerManagementLimitConstraints, maximum
};

// The outcome of a Set or a restore.
struct PowerLimitSetResult {
  bool ok = false;       // the request was valid and (unless dry-run) the driver accepted it
  bool applied = false;  // the device's limit was changed (never true in dry-run mode)
  std::string line;      // one line for the log: what was set, would be set, or why not
};

// Reads and sets power limits of a set of devices.
// Thread-safety: not thread-safe; one owner (the budget controller or the profiler).
class PowerLimitControl {
 public:
  virtual ~PowerLimitControl() = default;

  // Domains whose limits this object controls, e.g. {"gpu:0", "gpu:1"}.
  virtual std::vector<std::string> domains() const = 0;

  // True when Set only reports what it would do.
  virtual bool dry_run() const = 0;

  // Returns: the domain's current limit and constraints, or nullopt with *error (if non-null) set
  //   when the domain is unknown or the device does not report them. Never throws.
  virtual std::optional<PowerLimitInfo> Read(const std::string& domain, std::string* error) = 0;

  // Sets the domain's power limit to limit_w (W, rounded to whole mW), or in dry-run mode only
  // returns the line saying what it would set. The first successful Set of a domain remembers its
  // original limit for RestoreAll().
  // Returns: ok = false with the reason in `line` when the domain is unknown, limit_w is not
  //   finite or outside the constraints, or the driver refuses (e.g. no permission: needs root).
  //   Never throws.
  virtual PowerLimitSetResult Set(const std::string& domain, double limit_w) = 0;

  // Puts every limit changed by Set back to its original value (dry-run: says it would).
  // Returns: one result per domain that had been set; empty when none.
  virtual std::vector<PowerLimitSetResult> RestoreAll() = 0;
};

// What NvmlPowerLimitControl needs.
struct PowerLimitOptions {
  // Library path and environment (CUDA_VISIBLE_DEVICES selects the devices, as for NvmlMeter).
  NvmlOptions nvml;
  // When true (the default, and what tests and shared GPUs use) nothing is ever set: Set and
  // RestoreAll return the line saying what they would set.
  bool dry_run = true;
  // If non-null, every Set/restore line is also written here, one per line.
  std::ostream* log = nullptr;
};

// PowerLimitControl over NVML. Destruction restores the original limits (RestoreAll).
class NvmlPowerLimitControl final : public PowerLimitControl {
 public:
  // Opens the visible GPUs (OpenNvmlVisibleGpus).
  // Returns: the control, or null with *why_not set (if non-null) for the reasons
  //   OpenNvmlVisibleGpus gives. Never throws for these.
  static std::unique_ptr<NvmlPowerLimitControl> TryCreate(const PowerLimitOptions& options,
                                                          std::string* why_not);
  ~NvmlPowerLimitControl() override;

  std::vector<std::string> domains() const override;
  bool dry_run() const override { return dry_run_; }
  std::optional<PowerLimitInfo> Read(const std::string& domain, std::string* error) override;
  PowerLimitSetResult Set(const std::string& domain, double limit_w) override;
  std::vector<PowerLimitSetResult> RestoreAll() override;

 private:
  struct Device {
    NvmlGpu gpu;
    std::optional<unsigned int> original_limit_mw;   // before the first Set
    std::optional<unsigned int> requested_limit_mw;  // the last Set (applied or dry-run)
  };

  NvmlPowerLimitControl(NvmlVisibleGpus visible, const PowerLimitOptions& options);
  Device* Find(const std::string& domain);
  PowerLimitSetResult Apply(Device* device, unsigned int from_mw, unsigned int to_mw,
                            const char* verb);
  void Log(const PowerLimitSetResult& result) const;

  std::shared_ptr<NvmlLibrary> library_;
  std::vector<Device> devices_;
  bool dry_run_;
  std::ostream* log_;
};

// One profiled power limit: the energy and time the same work took under it.
struct PowerLimitProfile {
  double limit_w = 0.0;   // the power limit, W
  double energy_j = 0.0;  // energy of the profiled iterations, J
  double time_s = 0.0;    // wall time of the same iterations, s
};

// Zeus's pick among profiled limits.
struct PowerLimitChoice {
  double limit_w = 0.0;        // the chosen limit, W
  std::size_t index = 0;       // its position in the profiles
  std::vector<double> cost_j;  // eta x energy_j + (1 - eta) x max_power_w x time_s, per profile
};

// Chooses the limit minimising eta x energy_j + (1 - eta) x max_power_w x time_s (Zeus, NSDI '23;
// the cost is in J). Ties go to the higher limit (the faster run).
// Args: profiles: at least one, finite, energy_j and time_s >= 0;
//       max_power_w: the device's maximum power limit, W (> 0), which converts time into J;
//       eta: weight of energy in [0, 1]; 1 minimises energy only, 0 time only.
// Errors: greenrl::ConfigError naming "energy.power_limit_eta" when eta is outside [0, 1];
//   GREENRL_CHECK on empty or invalid profiles or max_power_w <= 0.
PowerLimitChoice ChoosePowerLimit(const std::vector<PowerLimitProfile>& profiles,
                                  double max_power_w, double eta = kDefaultPowerLimitEta);

// The limits Zeus profiles: max_limit_w, max_limit_w - step_w, ... down to the last one that is
// still >= min_limit_w (computed in whole mW, so no rounding drift).
// Errors: GREENRL_CHECK unless 0 < min_limit_w <= max_limit_w and step_w > 0, all finite.
std::vector<double> PowerLimitPlanW(double min_limit_w, double max_limit_w,
                                    double step_w = kPowerLimitStepW);

// One line describing a plan for the log or a dry run, e.g. "gpu:0 (NVIDIA A100, GPU-1):
// power-limit plan 300, 275, 250 W (constraints 100-300 W, current 300 W, default 300 W)".
std::string DescribePowerLimitPlan(const PowerLimitInfo& info, const std::vector<double>& plan_w);

}  // namespace greenrl::energy
