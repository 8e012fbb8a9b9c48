// power_limit_profiler.h: GPU power-limit profiling during training in the manner of Zeus
// (You, Chung, Chowdhury, "Zeus: Understanding and Optimizing GPU Energy Consumption of DNN
// Training", NSDI '23): run a few iterations at each limit from the maximum down in 25 W steps,
// then keep the limit minimising eta x energy + (1 - eta) x max_power x time, and restore the
// original limits at exit. `energy.power_limit` chooses the mode:
//   off      nothing;
//   dry-run  the plan is written to the log and energy.json, nothing is set (tests and shared
//            GPUs use this);
//   auto     the limits are set (needs root and a GPU of our own) and restored at exit.
// The budget's throttle rung asks for a lower limit through the same control (a dry-run line
// unless the mode is auto).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/energy/power_limit.h"

namespace greenrl::train {

class PowerLimitProfiler {
 public:
  // Args: control: the GPUs' power-limit control, or null when there is no GPU (the profiler
  //   then records why and does nothing); mode: "off", "dry-run" or "auto"; eta in [0, 1];
  //   iterations_per_limit >= 1; why_no_control: the reason control is null.
  PowerLimitProfiler(std::unique_ptr<energy::PowerLimitControl> control, std::string mode,
                     double eta, int iterations_per_limit, const std::string& why_no_control);
  ~PowerLimitProfiler();  // restores the original limits (auto mode)

  // Call before each training iteration: in auto mode, sets the next limit to profile.
  void BeforeIteration();
  // Call after each training iteration with the energy (J, GPU domains, or all domains when
  // there is no GPU meter) and wall time (s) it took.
  void AfterIteration(double energy_j, double duration_s);
  // The budget's throttle rung: one step (25 W) below the current limit of every GPU, within
  // its constraints; a dry-run line unless the mode is auto.
  void Throttle();
  // Restores the original limits now (also done by the destructor).
  void Restore();

  // Lines for the log and energy.json: the plan, each profiled limit's energy and time, the
  // choice, every set or would-set line.
  const std::vector<std::string>& log() const { return log_; }
  const std::string& mode() const { return mode_; }
  // Whether limits are still being profiled (auto mode): the caller then measures iterations.
  bool profiling() const { return profiling_; }
  // The chosen limit in W (auto mode, after profiling), else 0.
  double chosen_limit_w() const { return chosen_limit_w_; }

 private:
  void SetAll(double limit_w);

  std::unique_ptr<energy::PowerLimitControl> control_;
  std::string mode_;
  double eta_;
  int iterations_per_limit_;
  std::vector<double> plan_w_;            // limits to profile, W (auto mode)
  double max_power_w_ = 0.0;              // the highest limit of the plan, W
  size_t current_ = 0;                    // index into plan_w_ being profiled
  int iterations_done_ = 0;               // at the current limit
  double energy_j_ = 0.0, time_s_ = 0.0;  // accumulated at the current limit
  std::vector<energy::PowerLimitProfile> profiles_;
  bool profiling_ = false;
  bool restored_ = false;
  double chosen_limit_w_ = 0.0;
  std::vector<std::string> log_;
};

}  // namespace greenrl::train
