// MeasureWork: the energy a fake meter reports during the work, priced with the run's carbon.*
// keys (a fixed intensity, and an intensity series), to the joule and the gram.
#include "greenrl/train/work_energy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/energy/fake_meter.h"
#include "greenrl/train/run_config.h"

namespace greenrl::train {
namespace {

std::string Preset() { return SourceTreeDir() + "/configs/ppo/cartpole.yaml"; }

// 7,200 J during the work = 2 Wh = 0.002 kWh; x PUE 1.5 x 400 g/kWh = 1.2 g CO2e. The meter's
// reading before the work (50 J) is not the work's.
// A device domain's sharing note follows what its meter observed (NvmlMeter's
// "<domain>.shared_with_other_processes" and ".other_pids" details); without such details it is
// the scope's general note, as for process and package domains.
TEST(WorkEnergyTest, SharedNoteReportsTheMetersSharingVerdict) {
  energy::FakeMeter gpus({"gpu:0", "gpu:1", "gpu:2", "gpu:3"});
  gpus.SetExtraDetails({{"gpu:0.shared_with_other_processes", "yes"},
                        {"gpu:0.other_pids", "77 4242"},
                        {"gpu:1.shared_with_other_processes", "no"},
                        {"gpu:1.other_pids", "none"},
                        {"gpu:2.shared_with_other_processes", "unknown (no permission)"}});
  const std::vector<const energy::EnergyMeter*> meters = {&gpus};
  EXPECT_EQ(SharedNote("gpu:0", energy::Scope::kDevice, meters),
            "yes (other processes computed on the device: pids 77 4242; its energy includes "
            "theirs)");
  EXPECT_EQ(SharedNote("gpu:1", energy::Scope::kDevice, meters),
            "no (no other process computed on the device at any poll, every 10 s)");
  EXPECT_EQ(SharedNote("gpu:2", energy::Scope::kDevice, meters),
            "possibly (the whole device; unknown (no permission))");
  EXPECT_EQ(SharedNote("gpu:3", energy::Scope::kDevice, meters),
            SharedNote(energy::Scope::kDevice));
  EXPECT_EQ(SharedNote("cpu:process", energy::Scope::kProcess, meters),
            "no (this process's own CPU time)");
}

TEST(WorkEnergyTest, FakeMeterEnergyAndCarbonExact) {
  const Config config =
      LoadRunConfig(Preset(), {"carbon.intensity_g_per_kwh=400", "carbon.pue=1.5"}, std::nullopt);
  auto meter = std::make_unique<energy::FakeMeter>(
      std::vector<std::string>{"cpu:package-0", "cpu:package-0/core"},
      energy::Provenance::kMeasured, energy::Scope::kPackage, "fake");
  energy::FakeMeter* fake = meter.get();
  fake->SetEnergyJ({50.0, 10.0});
  bool ran = false;
  const WorkEnergy w = MeasureWork(
      config,
      [&] {
        ran = true;
        fake->AddEnergyJ(0, 7200.0);
        fake->AddEnergyJ(1, 3000.0);  // a part of the package: reported, not added
      },
      std::move(meter));
  EXPECT_TRUE(ran);
  ASSERT_EQ(w.domains.size(), 2u);
  EXPECT_EQ(w.domains[0].domain, "cpu:package-0");
  EXPECT_EQ(w.domains[0].energy_j, 7200.0);
  EXPECT_EQ(w.domains[0].provenance, "measured");
  EXPECT_EQ(w.domains[0].scope, "package");
  EXPECT_EQ(w.domains[1].energy_j, 3000.0);
  EXPECT_EQ(w.total_energy_j(), 7200.0);
  EXPECT_DOUBLE_EQ(w.carbon.energy_kwh, 0.002);
  EXPECT_EQ(w.carbon.pue, 1.5);
  EXPECT_EQ(w.carbon.intensity_g_per_kwh, 400.0);
  EXPECT_DOUBLE_EQ(w.carbon.kg_co2e * 1000.0, 1.2);
  EXPECT_EQ(w.meter_reason, "meter given by the caller (fake)");
  EXPECT_GE(w.duration_s, 0.0);
}

// carbon.intensity_csv prices the energy by the series: one value in force over the whole work
// (a point an hour before now, another a day after) gives 3,600 J = 0.001 kWh x 250 g/kWh =
// 0.25 g at PUE 1.
TEST(WorkEnergyTest, IntensitySeriesPricesTheWork) {
  const std::string csv = ::testing::TempDir() + "/greenrl_work_energy_series.csv";
  const long now = static_cast<long>(UnixNowS());
  {
    std::ofstream out(csv);
    out << "timestamp,g_per_kwh\n" << now - 3600 << ",250\n" << now + 86400 << ",999\n";
  }
  const Config config = LoadRunConfig(Preset(), {"carbon.intensity_csv=" + csv}, std::nullopt);
  auto meter = std::make_unique<energy::FakeMeter>(std::vector<std::string>{"gpu:0"});
  energy::FakeMeter* fake = meter.get();
  const WorkEnergy w = MeasureWork(
      config, [&] { fake->AddEnergyJ(0, 3600.0); }, std::move(meter));
  EXPECT_EQ(w.total_energy_j(), 3600.0);
  EXPECT_DOUBLE_EQ(w.carbon.energy_kwh, 0.001);
  EXPECT_DOUBLE_EQ(w.carbon.intensity_g_per_kwh, 250.0);
  EXPECT_DOUBLE_EQ(w.carbon.kg_co2e * 1000.0, 0.25);
  std::filesystem::remove(csv);
}

// An intensity series that cannot be read (the run's file was moved since) is refused before
// the work runs, naming the file.
TEST(WorkEnergyTest, UnreadableIntensitySeriesRefusedBeforeTheWork) {
  const std::string missing = ::testing::TempDir() + "/greenrl_moved_series.csv";
  std::ofstream(missing) << "timestamp,g_per_kwh\n1795971600,250\n";
  const Config config = LoadRunConfig(Preset(), {"carbon.intensity_csv=" + missing}, std::nullopt);
  std::filesystem::remove(missing);  // the run's config still names it
  bool ran = false;
  try {
    MeasureWork(config, [&] { ran = true; });
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace greenrl::train
