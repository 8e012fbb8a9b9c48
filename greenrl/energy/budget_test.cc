// BudgetController driven by a fake meter and a simulated clock, to the exact step and joule.
//
// Every scenario below is a trainer loop in miniature: 100 global steps per iteration, 2 s of
// work per iteration on a FakeClock, energy added to a FakeMeter and read back through an
// EnergyMonitor (as the trainer does), the controller called at the end of every iteration, and
// the idle it asks for "slept" by advancing the clock.
#include "greenrl/energy/budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/core/clock.h"
#include "greenrl/core/errors.h"
#include "greenrl/energy/fake_meter.h"
#include "greenrl/energy/monitor.h"

namespace greenrl::energy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::int64_t kStepsPerIteration = 100;
constexpr std::int64_t kTotalSteps = 10000;  // 100 iterations
constexpr double kWorkS = 2.0;               // work time of every iteration, s

// What a simulated run saw.
struct SimulatedRun {
  std::map<std::int64_t, BudgetDecision> decisions;  // by global step
  std::map<BudgetAction, std::int64_t> fired_at;     // step each action was first listed at
  std::int64_t last_step = 0;                        // step of the last iteration run
  double energy_used_j = 0.0;                        // energy at the end
  double end_s = 0.0;                                // clock at the end
};

// Runs iterations until the run completes or the controller stops it.
// iteration_energy_j(k): energy of iteration k (1-based), J; split 60/40 over two domains.
// on_decision: optional hook per decision (e.g. to report an action unsupported).
SimulatedRun Simulate(BudgetController& controller, FakeMeter* meter, const EnergyMonitor& monitor,
                      FakeClock& clock, const std::function<double(int)>& iteration_energy_j,
                      const std::function<void(const BudgetDecision&)>& on_decision = {}) {
  SimulatedRun run;
  for (int k = 1; run.last_step < kTotalSteps; ++k) {
    const double energy_j = iteration_energy_j(k);
    meter->AddEnergyJ(0, 0.625 * energy_j);  // gpu:0 (0.625 and 0.375: exact in binary)
    meter->AddEnergyJ(1, 0.375 * energy_j);  // cpu:package-0
    clock.AdvanceS(kWorkS);
    run.last_step = k * kStepsPerIteration;
    const BudgetDecision decision = controller.OnIteration(
        run.last_step, kTotalSteps, monitor.Total().total_energy_j(), clock.NowS());
    if (on_decision) on_decision(decision);
    run.decisions[run.last_step] = decision;
    for (BudgetAction action : decision.actions) run.fired_at.emplace(action, run.last_step);
    if (decision.stop) break;
    clock.AdvanceS(decision.idle_s);
  }
  run.energy_used_j = monitor.Total().total_energy_j();
  run.end_s = clock.NowS();
  return run;
}

// A fake meter, clock and monitor.
struct Rig {
  FakeClock clock{100.0};
  FakeMeter* meter = nullptr;  // owned by monitor
  std::unique_ptr<EnergyMonitor> monitor;

  Rig() {
    auto fake = std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0", "cpu:package-0"});
    meter = fake.get();
    std::vector<std::unique_ptr<EnergyMeter>> meters;
    meters.push_back(std::move(fake));
    monitor = std::make_unique<EnergyMonitor>(std::move(meters), clock);
  }
};

BudgetOptions OneWhBudget() {
  BudgetOptions options;
  options.budget_wh = 1.0;  // 3600 J
  options.warmup_steps = 500;
  options.throttle_duty_cycle = 0.5;
  return options;
}

// Constant 50 J per iteration (0.5 J/step): the full run would take 100 x 50 = 5000 J, the budget
// is 3600 J.
// - Steps 100..500 are the warm-up: no forecast, fraction = used / budget <= 250 / 3600 = 0.069.
//   Step 500 is the forecast's origin (500 steps, 250 J).
// - Step 600, the first forecast: rate (300 - 250) / (600 - 500) = 0.5 J/step, forecast
//   300 + 0.5 x 9400 = 5000 J, fraction 5000 / 3600 = 1.389 >= 0.6, 0.75 and 0.9: all three
//   rungs fire in this one call, in ladder order.
// - The stop: continue while used + next (max(50 J last iteration, 0.5 x 100)) <= 3600. At step
//   7100 used 3550 + 50 = 3600, not above: continue. At step 7200 used 3600 + 50 = 3650 > 3600:
//   stop. The run ends at exactly 3600 J, the budget.
TEST(BudgetControllerTest, ConstantEnergyPerStepExactSteps) {
  Rig rig;
  BudgetController controller(OneWhBudget(), rig.clock.NowS());
  EXPECT_TRUE(controller.enabled());
  EXPECT_EQ(controller.budget_j(), 3600.0);
  const SimulatedRun run =
      Simulate(controller, rig.meter, *rig.monitor, rig.clock, [](int) { return 50.0; });

  // Warm-up: no forecast, no action.
  for (std::int64_t step = 100; step <= 500; step += 100) {
    const BudgetDecision& d = run.decisions.at(step);
    EXPECT_FALSE(d.forecast_j.has_value()) << step;
    EXPECT_EQ(d.state, BudgetState::kNormal) << step;
    EXPECT_EQ(d.fraction, d.energy_used_j / 3600.0);
    EXPECT_EQ(d.next_iteration_energy_j, 50.0);
  }
  const BudgetDecision& first = run.decisions.at(600);
  ASSERT_TRUE(first.forecast_j.has_value());
  EXPECT_EQ(*first.forecast_j, 5000.0);
  EXPECT_EQ(first.energy_used_j, 300.0);
  EXPECT_THAT(first.actions, ElementsAre(BudgetAction::kReducePrecision,
                                         BudgetAction::kSkipNonCritical, BudgetAction::kThrottle));
  EXPECT_EQ(first.state, BudgetState::kThrottle);
  EXPECT_TRUE(first.reduced_precision && first.skip_non_critical && first.throttle);
  // Duty cycle 0.5: idle as long as the iteration worked (2 s); half the env threads.
  EXPECT_EQ(first.idle_s, 2.0);
  EXPECT_EQ(first.env_threads_fraction, 0.5);
  // Later iterations took 2 s of work + 2 s idle: the idle asked for stays 2 s.
  EXPECT_EQ(run.decisions.at(700).idle_s, 2.0);
  EXPECT_TRUE(run.decisions.at(700).actions.empty());

  EXPECT_EQ(run.fired_at.at(BudgetAction::kReducePrecision), 600);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kSkipNonCritical), 600);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kThrottle), 600);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kStop), 7200);
  EXPECT_FALSE(run.decisions.at(7100).stop);
  EXPECT_EQ(run.last_step, 7200);
  EXPECT_EQ(run.energy_used_j, 3600.0);  // exactly the budget, never above
  const BudgetDecision& last = run.decisions.at(7200);
  EXPECT_TRUE(last.stop);
  EXPECT_EQ(last.state, BudgetState::kStopped);
  EXPECT_THAT(last.actions, ElementsAre(BudgetAction::kStop));
  EXPECT_EQ(last.idle_s, 0.0);
  // Clock: 100 s start + 72 iterations x 2 s work + 66 idles of 2 s (after steps 600..7100).
  EXPECT_EQ(run.end_s, 100.0 + 72 * 2.0 + 66 * 2.0);

  // Events: the figures behind each decision.
  const std::vector<BudgetEvent>& events = controller.events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].action, BudgetAction::kReducePrecision);
  EXPECT_EQ(events[0].state, BudgetState::kReducedPrecision);
  EXPECT_EQ(events[1].state, BudgetState::kSkipNonCritical);
  EXPECT_EQ(events[2].state, BudgetState::kThrottle);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(events[i].global_step, 600);
    EXPECT_EQ(events[i].time_s, 100.0 + 6 * 2.0);
    EXPECT_EQ(events[i].energy_used_j, 300.0);
    EXPECT_EQ(events[i].forecast_j, 5000.0);
    EXPECT_EQ(events[i].fraction, 5000.0 / 3600.0);
    EXPECT_EQ(events[i].budget_j, 3600.0);
    EXPECT_TRUE(events[i].taken);
  }
  EXPECT_EQ(events[0].reason,
            "step 600: forecast 5000 J (used 300 J) is 1.3889 of the 3600 J budget >= "
            "reduced_precision_at 0.6: switch the update to reduced precision");
  EXPECT_EQ(events[3].action, BudgetAction::kStop);
  EXPECT_EQ(events[3].global_step, 7200);
  EXPECT_EQ(events[3].energy_used_j, 3600.0);
  EXPECT_EQ(events[3].next_iteration_energy_j, 50.0);
  EXPECT_EQ(events[3].forecast_j, 5000.0);
  EXPECT_EQ(events[3].reason,
            "step 7200: used 3600 J + stop_margin 1 x next iteration ~50 J = 3650 J would "
            "exceed the budget of 3600 J (1 Wh); the budget ends the run");
  EXPECT_TRUE(controller.stopped());
  EXPECT_EQ(controller.stop_reason(), events[3].reason);

  // After the stop: the same stopped decision, no new action, no new event.
  const BudgetDecision again = controller.OnIteration(7300, kTotalSteps, 3650.0, 300.0);
  EXPECT_TRUE(again.stop);
  EXPECT_TRUE(again.actions.empty());
  EXPECT_EQ(controller.events().size(), 4u);
}

// Same run, budget 2 Wh = 7200 J: the forecast (5000 J) is 0.694 of it from step 600 on, so only
// reduced precision fires (at 600); the run completes its 10000 steps with 5000 J, no stop.
TEST(BudgetControllerTest, ConstantEnergyOnlyTheNeededRungs) {
  Rig rig;
  BudgetOptions options = OneWhBudget();
  options.budget_wh = 2.0;
  BudgetController controller(options, rig.clock.NowS());
  const SimulatedRun run =
      Simulate(controller, rig.meter, *rig.monitor, rig.clock, [](int) { return 50.0; });
  EXPECT_EQ(run.fired_at.size(), 1u);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kReducePrecision), 600);
  EXPECT_EQ(run.last_step, kTotalSteps);
  EXPECT_EQ(run.energy_used_j, 5000.0);
  EXPECT_EQ(controller.state(), BudgetState::kReducedPrecision);
  EXPECT_FALSE(run.decisions.at(kTotalSteps).skip_non_critical);
  EXPECT_EQ(run.decisions.at(kTotalSteps).idle_s, 0.0);
  EXPECT_EQ(controller.events().size(), 1u);
  EXPECT_EQ(controller.stop_reason(), "");
}

// Energy per iteration rises mid-run: 20.5 J for iterations 1..40 (steps 100..4000), 80 J from
// iteration 41 on. Budget 3600 J, warm-up 500 steps (origin: step 500, 102.5 J).
// - Steps 600..4000: rate 0.205 J/step, forecast 2050 J, fraction 0.569 < 0.6.
// - Step 4100: used 900, rate (900 - 102.5) / 3600 = 0.2215, forecast 900 + 0.2215 x 5900 =
//   2207.0 J, fraction 0.613 >= 0.6: reduced precision.
// - Step 4400: forecast 1140 + (1037.5 / 3900) x 5600 = 2629.7 J, 0.730 < 0.75. Step 4500:
//   1220 + (1117.5 / 4000) x 5500 = 2756.6 J, 0.766 >= 0.75: skip non-critical.
// - Step 4900: 1540 + (1437.5 / 4400) x 5100 = 3206.2 J, 0.891 < 0.9. Step 5000: 1620 +
//   (1517.5 / 4500) x 5000 = 3306.1 J, 0.918 >= 0.9: throttle.
// - Stop: used at step 100k (k > 40) is 820 + 80 (k - 40) = 80k - 2380. The next iteration's
//   estimate is the last iteration's 80 J (above the mean rate's ~50 J). Step 7300: 3460 + 80 =
//   3540 <= 3600, continue. Step 7400: 3540 + 80 = 3620 > 3600: stop at 3540 J. (The mean rate
//   alone, 3437.5 / 6900 x 100 = 49.8 J, would have let the run go on to 3620 J.)
TEST(BudgetControllerTest, RisingEnergyPerStepExactSteps) {
  Rig rig;
  BudgetController controller(OneWhBudget(), rig.clock.NowS());
  const SimulatedRun run = Simulate(controller, rig.meter, *rig.monitor, rig.clock,
                                    [](int k) { return k <= 40 ? 20.5 : 80.0; });
  EXPECT_EQ(*run.decisions.at(4000).forecast_j, 2050.0);
  EXPECT_EQ(run.decisions.at(4000).state, BudgetState::kNormal);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kReducePrecision), 4100);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kSkipNonCritical), 4500);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kThrottle), 5000);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kStop), 7400);
  EXPECT_EQ(run.last_step, 7400);
  EXPECT_EQ(run.energy_used_j, 3540.0);
  EXPECT_LE(run.energy_used_j, controller.budget_j());

  const BudgetDecision& rp = run.decisions.at(4100);
  EXPECT_EQ(rp.energy_used_j, 900.0);
  EXPECT_DOUBLE_EQ(*rp.forecast_j, 900.0 + 797.5 / 3600.0 * 5900.0);
  EXPECT_DOUBLE_EQ(*run.decisions.at(4500).forecast_j, 2756.5625);
  EXPECT_DOUBLE_EQ(*run.decisions.at(5000).forecast_j, 1620.0 + 1517.5 / 4500.0 * 5000.0);
  EXPECT_LT(run.decisions.at(4400).fraction, 0.75);
  EXPECT_LT(run.decisions.at(4900).fraction, 0.9);

  const BudgetDecision& stop = run.decisions.at(7400);
  EXPECT_EQ(stop.energy_used_j, 3540.0);
  EXPECT_EQ(stop.next_iteration_energy_j, 80.0);
  EXPECT_FALSE(run.decisions.at(7300).stop);
  ASSERT_EQ(controller.events().size(), 4u);
  EXPECT_THAT(controller.stop_reason(),
              HasSubstr("used 3540 J + stop_margin 1 x next iteration ~80 J = 3620 J"));
}

// The guarantee when an iteration costs far more than any estimate: budget 0.5 Wh = 1800 J, 50 J
// per iteration except a 500 J 30th iteration. At step 2900 used 1450 + 50 <= 1800: continue;
// step 3000 brings 1950 J, and the controller stops there. Overshoot 150 J < that iteration's
// 500 J.
TEST(BudgetControllerTest, OvershootAtMostOneIteration) {
  Rig rig;
  BudgetOptions options = OneWhBudget();
  options.budget_wh = 0.5;
  BudgetController controller(options, rig.clock.NowS());
  const SimulatedRun run = Simulate(controller, rig.meter, *rig.monitor, rig.clock,
                                    [](int k) { return k == 30 ? 500.0 : 50.0; });
  EXPECT_EQ(run.fired_at.at(BudgetAction::kStop), 3000);
  EXPECT_EQ(run.energy_used_j, 1950.0);
  EXPECT_LE(run.energy_used_j - controller.budget_j(), 500.0);
  EXPECT_EQ(run.decisions.at(3000).next_iteration_energy_j, 500.0);
}

// The stop rule holds during the warm-up too, and a larger stop_margin stops earlier: budget
// 0.25 Wh = 900 J, 100 J per iteration, warm-up longer than the run can last, stop_margin 2:
// stop when used + 2 x 100 > 900, i.e. at step 800 (used 800; step 700: 700 + 200 = 900, not
// above). Used-only fractions: 0.6 x 900 = 540 -> reduced precision at step 600 (600 J), 0.75 ->
// 675 J -> skip at step 700, throttle (810 J) never reached.
TEST(BudgetControllerTest, StopDuringWarmupWithMargin) {
  Rig rig;
  BudgetOptions options = OneWhBudget();
  options.budget_wh = 0.25;
  options.warmup_steps = 5000;
  options.stop_margin = 2.0;
  BudgetController controller(options, rig.clock.NowS());
  const SimulatedRun run =
      Simulate(controller, rig.meter, *rig.monitor, rig.clock, [](int) { return 100.0; });
  EXPECT_EQ(run.fired_at.at(BudgetAction::kReducePrecision), 600);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kSkipNonCritical), 700);
  EXPECT_EQ(run.fired_at.count(BudgetAction::kThrottle), 0u);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kStop), 800);
  EXPECT_EQ(run.energy_used_j, 800.0);
  EXPECT_FALSE(run.decisions.at(800).forecast_j.has_value());
  EXPECT_EQ(controller.state(), BudgetState::kStopped);
}

// Reduced precision declared unsupported before the run: the rung is passed over (recorded with
// taken = false, not listed, flag off) and the ladder goes on. Throttle reported unsupported after
// it fired: recorded at that step, flag and idle off from then on.
TEST(BudgetControllerTest, UnsupportedActionsAreRecordedAndPassedOver) {
  Rig rig;
  BudgetController controller(OneWhBudget(), rig.clock.NowS());
  controller.ReportUnsupported(BudgetAction::kReducePrecision, "no float16 autocast on cpu");
  controller.ReportUnsupported(BudgetAction::kReducePrecision, "repeated: ignored");
  const SimulatedRun run = Simulate(
      controller, rig.meter, *rig.monitor, rig.clock, [](int) { return 50.0; },
      [&controller](const BudgetDecision& d) {
        for (BudgetAction action : d.actions) {
          if (action == BudgetAction::kThrottle) {
            controller.ReportUnsupported(BudgetAction::kThrottle, "dry run");
          }
        }
      });
  const BudgetDecision& first = run.decisions.at(600);
  EXPECT_THAT(first.actions, ElementsAre(BudgetAction::kSkipNonCritical, BudgetAction::kThrottle));
  EXPECT_FALSE(first.reduced_precision);
  EXPECT_TRUE(first.skip_non_critical);
  const BudgetDecision& later = run.decisions.at(700);
  EXPECT_EQ(later.state, BudgetState::kThrottle);
  EXPECT_FALSE(later.throttle);
  EXPECT_EQ(later.idle_s, 0.0);
  EXPECT_EQ(later.env_threads_fraction, 1.0);
  EXPECT_EQ(run.fired_at.at(BudgetAction::kStop), 7200);  // energy unchanged: same stop

  const std::vector<BudgetEvent>& events = controller.events();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].action, BudgetAction::kReducePrecision);
  EXPECT_FALSE(events[0].taken);
  EXPECT_EQ(events[0].global_step, 600);
  EXPECT_THAT(events[0].reason, HasSubstr("not supported (no float16 autocast on cpu)"));
  EXPECT_TRUE(events[1].taken);
  EXPECT_EQ(events[2].action, BudgetAction::kThrottle);
  EXPECT_TRUE(events[2].taken);
  EXPECT_EQ(events[3].action, BudgetAction::kThrottle);
  EXPECT_FALSE(events[3].taken);
  EXPECT_EQ(events[3].global_step, 600);
  EXPECT_EQ(events[3].reason,
            "step 600: throttle not supported (dry run); not applied, the ladder moves on");
  EXPECT_EQ(events[4].action, BudgetAction::kStop);
  EXPECT_THROW(controller.ReportUnsupported(BudgetAction::kStop, "x"), InternalError);
}

TEST(BudgetControllerTest, ZeroBudgetDisables) {
  Rig rig;
  BudgetOptions options;  // budget_wh = 0
  BudgetController controller(options, rig.clock.NowS());
  EXPECT_FALSE(controller.enabled());
  const SimulatedRun run =
      Simulate(controller, rig.meter, *rig.monitor, rig.clock, [](int) { return 1e6; });
  EXPECT_EQ(run.last_step, kTotalSteps);
  EXPECT_TRUE(run.fired_at.empty());
  EXPECT_TRUE(controller.events().empty());
  for (const auto& [step, d] : run.decisions) {
    EXPECT_EQ(d.state, BudgetState::kNormal);
    EXPECT_FALSE(d.stop || d.throttle || d.skip_non_critical || d.reduced_precision);
    EXPECT_EQ(d.idle_s, 0.0);
  }
}

// Unknown total_steps: no forecast, fractions of the energy used.
TEST(BudgetControllerTest, UnknownTotalStepsUsesConsumption) {
  BudgetOptions options;
  options.budget_wh = 1.0;  // 3600 J; rungs at 2160, 2700, 3240 J
  BudgetController controller(options, 0.0);
  std::map<BudgetAction, std::int64_t> fired_at;
  for (int k = 1; k <= 100 && !controller.stopped(); ++k) {
    const BudgetDecision d = controller.OnIteration(k * 100, /*total_steps=*/0, k * 100.0, k);
    EXPECT_FALSE(d.forecast_j.has_value());
    for (BudgetAction action : d.actions) fired_at.emplace(action, k * 100);
  }
  EXPECT_EQ(fired_at.at(BudgetAction::kReducePrecision), 2200);  // 2200 J >= 2160
  EXPECT_EQ(fired_at.at(BudgetAction::kSkipNonCritical), 2700);  // 2700 J >= 2700
  EXPECT_EQ(fired_at.at(BudgetAction::kThrottle), 3300);         // 3300 J >= 3240
  EXPECT_EQ(fired_at.at(BudgetAction::kStop), 3600);             // 3500 + 100 = 3600 not above
}

TEST(BudgetControllerTest, BrokenCallsAreChecked) {
  BudgetOptions options;
  options.budget_wh = 1.0;
  BudgetController controller(options, 0.0);
  controller.OnIteration(100, 1000, 10.0, 1.0);
  EXPECT_THROW(controller.OnIteration(100, 1000, 20.0, 2.0), InternalError);  // same step
  EXPECT_THROW(controller.OnIteration(200, 1000, 5.0, 2.0), InternalError);   // energy down
  EXPECT_THROW(controller.OnIteration(200, 1000, 20.0, 0.5), InternalError);  // time back
}

// Expects BudgetController(options) to throw a ConfigError naming `field`; returns its message.
std::string ExpectConfigError(const BudgetOptions& options, const std::string& field) {
  try {
    BudgetController controller(options, 0.0);
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), field);
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError for " << field;
  return "";
}

TEST(BudgetControllerTest, InvalidOptionsRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {-1.0, nan, inf}) {
    BudgetOptions o;
    o.budget_wh = bad;
    ExpectConfigError(o, "energy.budget_wh");
  }
  {
    BudgetOptions o;
    o.budget_wh = -2.5;
    EXPECT_THAT(ExpectConfigError(o, "energy.budget_wh"), HasSubstr("got '-2.5'"));
  }
  {
    BudgetOptions o;
    o.warmup_steps = -1;
    ExpectConfigError(o, "energy.budget.warmup_steps");
  }
  for (double bad : {0.0, -0.1, nan, inf}) {
    BudgetOptions o;
    o.reduced_precision_at = bad;
    ExpectConfigError(o, "energy.budget.reduced_precision_at");
  }
  {
    BudgetOptions o;
    o.skip_at = 0.5;  // below reduced_precision_at 0.6
    EXPECT_THAT(ExpectConfigError(o, "energy.budget.skip_at"),
                HasSubstr(">= energy.budget.reduced_precision_at (0.6, its default)"));
  }
  {
    BudgetOptions o;
    o.throttle_at = 0.7;  // below skip_at 0.75
    EXPECT_THAT(ExpectConfigError(o, "energy.budget.throttle_at"),
                HasSubstr("got '0.7'; a value >= energy.budget.skip_at (0.75, its default)"));
  }
  {
    // A rung set above the next one's default: the error names the key that was set.
    BudgetOptions o;
    o.reduced_precision_at = 0.8;  // above skip_at's default 0.75
    EXPECT_THAT(ExpectConfigError(o, "energy.budget.reduced_precision_at"),
                HasSubstr("got '0.8'; a value <= energy.budget.skip_at (0.75, its default)"));
    BudgetOptions skip;
    skip.skip_at = 2;  // above throttle_at's default 0.9
    EXPECT_THAT(ExpectConfigError(skip, "energy.budget.skip_at"),
                HasSubstr("got '2'; a value <= energy.budget.throttle_at (0.9, its default)"));
    BudgetOptions both;  // both set: the upper one is named
    both.skip_at = 0.8;
    both.throttle_at = 0.7;
    EXPECT_THAT(ExpectConfigError(both, "energy.budget.throttle_at"),
                HasSubstr("got '0.7'; a value >= energy.budget.skip_at (0.8)"));
  }
  for (double bad : {0.0, 1.5, nan}) {
    BudgetOptions o;
    o.throttle_duty_cycle = bad;
    EXPECT_THAT(ExpectConfigError(o, "energy.budget.throttle_duty_cycle"), HasSubstr("(0, 1]"));
    BudgetOptions threads;
    threads.throttle_env_threads_fraction = bad;
    ExpectConfigError(threads, "energy.budget.throttle_env_threads_fraction");
  }
  for (double bad : {0.5, nan, inf}) {
    BudgetOptions o;
    o.stop_margin = bad;
    ExpectConfigError(o, "energy.budget.stop_margin");
  }
  // Fractions above 1 and equal fractions are accepted.
  BudgetOptions ok;
  ok.reduced_precision_at = 0.8;
  ok.skip_at = 0.8;
  ok.throttle_at = 1.2;
  EXPECT_NO_THROW(ValidateBudgetOptions(ok));
}

// A resume checkpoint's snapshot under the same budget: the rungs taken before it are listed to
// apply again, the next iteration counts from the checkpoint's step, energy and time (not from
// 0), and the ladder goes on where it was. Budget 112.5 J (1/32 Wh, exact in binary), 100 steps.
TEST(BudgetControllerTest, ResumeUnderTheSameBudgetGoesOnDownTheLadder) {
  BudgetOptions options;
  options.budget_wh = 0.03125;
  BudgetController before(options, 0.0);
  // 9 J per 10 steps: forecast 9 + 0.9 x 90 = 90 J, 0.8 of the budget: reduce and skip fire.
  EXPECT_THAT(before.OnIteration(10, 100, 9.0, 1.0).actions,
              ElementsAre(BudgetAction::kReducePrecision, BudgetAction::kSkipNonCritical));
  EXPECT_TRUE(before.OnIteration(20, 100, 18.0, 2.0).actions.empty());
  const BudgetSnapshot saved = before.Snapshot();
  EXPECT_EQ(saved.budget_wh, 0.03125);
  EXPECT_EQ(saved.state, BudgetState::kSkipNonCritical);
  EXPECT_EQ(saved.events.size(), 2u);
  EXPECT_FALSE(saved.stopped());

  BudgetController after(options, 0.0);
  EXPECT_THAT(after.Resume(saved, 20, 18.0, 2.0),
              ElementsAre(BudgetAction::kReducePrecision, BudgetAction::kSkipNonCritical));
  EXPECT_EQ(after.state(), BudgetState::kSkipNonCritical);
  // The first iteration after the resume: 10 steps and 9 J (18 J and 20 steps before the fix
  // counted from 0), forecast 27 + 0.9 x 70 = 90 J.
  BudgetDecision d = after.OnIteration(30, 100, 27.0, 3.0);
  EXPECT_TRUE(d.actions.empty());
  EXPECT_TRUE(d.reduced_precision);
  EXPECT_TRUE(d.skip_non_critical);
  EXPECT_DOUBLE_EQ(d.next_iteration_energy_j, 9.0);
  ASSERT_TRUE(d.forecast_j.has_value());
  EXPECT_DOUBLE_EQ(*d.forecast_j, 90.0);
  // 13.5 J: rate (40.5 - 18) / 20 = 1.125 J/step, forecast 40.5 + 67.5 = 108 J (0.96): throttle,
  // idling as long as the iteration worked (1 s, duty cycle 0.5).
  d = after.OnIteration(40, 100, 40.5, 4.0);
  EXPECT_THAT(d.actions, ElementsAre(BudgetAction::kThrottle));
  EXPECT_DOUBLE_EQ(*d.forecast_j, 108.0);
  EXPECT_DOUBLE_EQ(d.idle_s, 1.0);
  ASSERT_EQ(after.events().size(), 3u);
  EXPECT_EQ(after.events()[0].action, BudgetAction::kReducePrecision);  // the earlier segment's
  EXPECT_EQ(after.events()[2].global_step, 40);
}

// A budget stop resumed with a larger budget: the earlier events stay, the ladder starts again
// and walks down to a stop of its own. 30 J per 10 steps; budget 112.5 J, then 225 J.
TEST(BudgetControllerTest, ResumeWithALargerBudgetAfterAStopStartsTheLadderAgain) {
  BudgetOptions options;
  options.budget_wh = 0.03125;
  BudgetController before(options, 0.0);
  EXPECT_EQ(before.OnIteration(10, 100, 30.0, 1.0).actions.size(), 3u);  // forecast 300 J
  EXPECT_FALSE(before.OnIteration(20, 100, 60.0, 2.0).stop);             // 60 + 30 <= 112.5
  EXPECT_TRUE(before.OnIteration(30, 100, 90.0, 3.0).stop);              // 90 + 30 > 112.5
  const BudgetSnapshot saved = before.Snapshot();
  EXPECT_TRUE(saved.stopped());
  EXPECT_EQ(saved.stopped_at_step(), 30);
  EXPECT_DOUBLE_EQ(saved.stopped_at_energy_j(), 90.0);

  // The same budget: still stopped, nothing to apply but the three rungs.
  BudgetController same(options, 0.0);
  EXPECT_EQ(same.Resume(saved, 30, 90.0, 3.0).size(), 3u);
  EXPECT_TRUE(same.stopped());
  EXPECT_TRUE(same.OnIteration(40, 100, 120.0, 4.0).stop);

  BudgetOptions larger = options;
  larger.budget_wh = 0.0625;  // 225 J
  BudgetController after(larger, 0.0);
  EXPECT_TRUE(after.Resume(saved, 30, 90.0, 3.0).empty());
  EXPECT_EQ(after.state(), BudgetState::kNormal);
  EXPECT_EQ(after.stop_reason(), "");  // the earlier stop is not this run's
  // Forecast 120 + 3 x 60 = 300 J, 1.33 of 225: the three rungs again; then 30 J a step until
  // 210 + 30 > 225 at step 70.
  EXPECT_EQ(after.OnIteration(40, 100, 120.0, 4.0).actions.size(), 3u);
  EXPECT_FALSE(after.OnIteration(50, 100, 150.0, 5.0).stop);
  EXPECT_FALSE(after.OnIteration(60, 100, 180.0, 6.0).stop);
  EXPECT_TRUE(after.OnIteration(70, 100, 210.0, 7.0).stop);
  EXPECT_THAT(after.stop_reason(), HasSubstr("step 70:"));
  ASSERT_EQ(after.events().size(), 8u);
  EXPECT_EQ(after.events()[3].global_step, 30);  // the first stop
  EXPECT_EQ(after.events()[3].budget_j, 112.5);
  EXPECT_EQ(after.events()[7].budget_j, 225.0);
  EXPECT_EQ(after.Snapshot().stopped_at_step(), 70);
}

// After a resume the forecast waits for warmup_steps more steps: the new process warms up again.
TEST(BudgetControllerTest, ResumeAnchorsTheForecastAgainAfterTheWarmup) {
  BudgetOptions options;
  options.budget_wh = 1.0;
  options.warmup_steps = 20;
  BudgetController controller(options, 0.0);
  EXPECT_TRUE(controller.Resume(BudgetSnapshot{}, 100, 50.0, 0.0).empty());
  EXPECT_FALSE(controller.OnIteration(110, 1000, 55.0, 1.0).forecast_j.has_value());
  EXPECT_FALSE(controller.OnIteration(120, 1000, 60.0, 2.0).forecast_j.has_value());  // anchor
  const BudgetDecision d = controller.OnIteration(130, 1000, 65.0, 3.0);
  ASSERT_TRUE(d.forecast_j.has_value());
  EXPECT_DOUBLE_EQ(*d.forecast_j, 65.0 + 0.5 * 870.0);
  EXPECT_THROW(controller.Resume(BudgetSnapshot{}, 0, 0.0, 0.0), InternalError);  // too late
}

// SetSteadyFrom (an off-policy run's learning_starts, 300): the cheap steps before it (0.01 J
// each) stay out of the forecast's rate, which counts from the first call at or after step 300
// (3 J) even though the warm-up (100 steps) ended before: at step 400 (3 + 1 J x 100 = 103 J) the
// rate is 1 J/step and the forecast 103 + 1 x 600 = 703 J, where a rate from the warm-up's end
// would give 103 + (102 / 300) x 600 = 307 J. Its step must be given before the first
// OnIteration().
TEST(BudgetControllerTest, ForecastWaitsForTheSteadyStep) {
  BudgetOptions options;
  options.budget_wh = 1.0;
  options.warmup_steps = 100;
  BudgetController controller(options, 0.0);
  controller.SetSteadyFrom(300);
  EXPECT_FALSE(controller.OnIteration(100, 1000, 1.0, 1.0).forecast_j.has_value());
  EXPECT_FALSE(controller.OnIteration(200, 1000, 2.0, 2.0).forecast_j.has_value());
  EXPECT_FALSE(controller.OnIteration(300, 1000, 3.0, 3.0).forecast_j.has_value());  // anchor
  const BudgetDecision d = controller.OnIteration(400, 1000, 103.0, 4.0);
  ASSERT_TRUE(d.forecast_j.has_value());
  EXPECT_DOUBLE_EQ(*d.forecast_j, 703.0);
  EXPECT_THROW(controller.SetSteadyFrom(500), InternalError);  // after OnIteration
  // Without a warm-up, a step of 0 keeps the start as the origin; a later one moves it.
  options.warmup_steps = 0;
  BudgetController from_start(options, 0.0);
  from_start.SetSteadyFrom(0);
  EXPECT_TRUE(from_start.OnIteration(100, 1000, 10.0, 1.0).forecast_j.has_value());
  BudgetController later(options, 0.0);
  later.SetSteadyFrom(100);
  EXPECT_FALSE(later.OnIteration(100, 1000, 1.0, 1.0).forecast_j.has_value());
  EXPECT_DOUBLE_EQ(*later.OnIteration(200, 1000, 11.0, 2.0).forecast_j, 11.0 + 0.1 * 800);
}

// The guard's restore: steps go back to the checkpoint's (200), energy goes on: the discarded
// iteration after step 300 used 30 J (100 -> 130 J at the restore). The iteration after the
// restore counts its own steps and energy (210 - 200 steps, 135 - 130 = 5 J), and the forecast's
// rate is that of the steps since the restore, 0.5 J/step: used 135 + 0.5 x (1000 - 210) =
// 530 J. A rewind past the last step, or with energy going back, is a broken call.
TEST(BudgetControllerTest, RewindRedoesStepsWithoutCountingThemTwice) {
  BudgetOptions options;
  options.budget_wh = 1.0;
  options.warmup_steps = 0;
  BudgetController controller(options, 0.0);
  controller.OnIteration(100, 1000, 50.0, 1.0);
  controller.OnIteration(200, 1000, 60.0, 2.0);
  controller.OnIteration(300, 1000, 100.0, 3.0);
  EXPECT_THROW(controller.Rewind(301, 130.0, 3.5), InternalError);
  EXPECT_THROW(controller.Rewind(200, 90.0, 3.5), InternalError);
  controller.Rewind(200, 130.0, 3.5);
  const BudgetDecision d = controller.OnIteration(210, 1000, 135.0, 4.0);
  ASSERT_TRUE(d.forecast_j.has_value());
  EXPECT_DOUBLE_EQ(*d.forecast_j, 135.0 + 0.5 * 790.0);
  EXPECT_DOUBLE_EQ(d.next_iteration_energy_j, 5.0);
  EXPECT_DOUBLE_EQ(d.energy_used_j, 135.0);
}

// The controller over 100-step iterations of 50 J each against 1 Wh (3600 J): the step it stopped
// at (0: none within 100 iterations), with `reserve_j` at every call and `checkpoint_j` at the call
// of step `checkpoint_due_at`.
int64_t StopStepOf(BudgetController* controller, double reserve_j, int64_t checkpoint_due_at,
                   double checkpoint_j) {
  for (int i = 1; i <= 100; ++i) {
    const BudgetDecision d = controller->OnIteration(
        100 * i, 10000, 50.0 * i, i, reserve_j, 100 * i == checkpoint_due_at ? checkpoint_j : 0.0);
    EXPECT_EQ(d.reserve_j, reserve_j);
    if (d.stop) return 100 * i;
  }
  return 0;
}

BudgetOptions OneWhNoWarmup() {
  BudgetOptions options;
  options.budget_wh = 1.0;
  options.warmup_steps = 0;
  return options;
}

// The stop keeps the final evaluation's reserve in hand: 50 J per 100-step iteration against
// 3600 J with a 200 J reserve goes on while used + 50 + 200 <= 3600, so through used 3350 J (step
// 6700) and stops at 3400 J (step 6800), where without the reserve it stops at 3600 J (7200).
TEST(BudgetControllerTest, StopKeepsTheFinalEvaluationsReserve) {
  for (const double reserve_j : {200.0, 0.0}) {
    BudgetController controller(OneWhNoWarmup(), 0.0);
    EXPECT_EQ(StopStepOf(&controller, reserve_j, 0, 0.0), reserve_j > 0 ? 6800 : 7200);
    EXPECT_EQ(controller.stop_reason().find("final evaluation ~200 J") != std::string::npos,
              reserve_j > 0)
        << controller.stop_reason();
    EXPECT_EQ(controller.events().back().reserve_j, reserve_j);  // energy.json, checkpoints
  }
  BudgetController controller(OneWhNoWarmup(), 0.0);
  EXPECT_THROW(controller.OnIteration(100, 1000, 1.0, 1.0, -1.0), InternalError);
  EXPECT_THROW(controller.OnIteration(100, 1000, 1.0, 1.0, 0.0, -1.0), InternalError);
}

// A periodic checkpoint of 100 J due before the next iteration counts the same way where it is
// due: at 3500 J (step 7000) 3500 + 50 + 100 > 3600 stops the run; due at step 6000 (3000 J) it
// fits, and the run stops at 7200 as without it.
TEST(BudgetControllerTest, StopKeepsRoomForADueCheckpoint) {
  BudgetController due_at_7000(OneWhNoWarmup(), 0.0);
  EXPECT_EQ(StopStepOf(&due_at_7000, 0.0, 7000, 100.0), 7000);
  EXPECT_EQ(due_at_7000.stop_reason(),
            "step 7000: used 3500 J + stop_margin 1 x next iteration ~50 J + checkpoint ~100 J = "
            "3650 J would exceed the budget of 3600 J (1 Wh); the budget ends the run");
  EXPECT_EQ(due_at_7000.events().back().checkpoint_j, 100.0);  // energy.json, checkpoints
  BudgetController due_at_6000(OneWhNoWarmup(), 0.0);
  EXPECT_EQ(StopStepOf(&due_at_6000, 0.0, 6000, 100.0), 7200);
  EXPECT_EQ(due_at_6000.stop_reason(),
            "step 7200: used 3600 J + stop_margin 1 x next iteration ~50 J = 3650 J would exceed "
            "the budget of 3600 J (1 Wh); the budget ends the run");
  EXPECT_EQ(due_at_6000.events().back().checkpoint_j, 0.0);
}

// A decision that finds the budget already used up (a budget below the first iteration's energy)
// says so and by how much, beside the usual figures.
TEST(BudgetControllerTest, StopPastTheBudgetSaysSo) {
  BudgetController controller(OneWhNoWarmup(), 0.0);
  controller.OnIteration(100, 1000, 3700.0, 1.0);
  ASSERT_EQ(controller.state(), BudgetState::kStopped);
  EXPECT_EQ(controller.stop_reason(),
            "step 100: used 3700 J + stop_margin 1 x next iteration ~3700 J = 7400 J would "
            "exceed the budget of 3600 J (1 Wh) (already past the budget by 100 J: the "
            "iterations since the last decision used more than was left); the budget ends the "
            "run");
}

TEST(BudgetControllerTest, Names) {
  EXPECT_STREQ(BudgetStateName(BudgetState::kSkipNonCritical), "skip_non_critical");
  EXPECT_STREQ(BudgetStateName(BudgetState::kStopped), "stopped");
  EXPECT_STREQ(BudgetActionName(BudgetAction::kReducePrecision), "reduce_precision");
  EXPECT_STREQ(BudgetActionName(BudgetAction::kStop), "stop");
}

}  // namespace
}  // namespace greenrl::energy
