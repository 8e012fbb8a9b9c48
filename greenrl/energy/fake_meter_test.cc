#include "greenrl/energy/fake_meter.h"

#include <gtest/gtest.h>

#include "greenrl/core/errors.h"

namespace greenrl::energy {
namespace {

TEST(FakeMeterTest, SettableValues) {
  FakeMeter meter({"gpu:0", "cpu:package-0"}, Provenance::kIntegrated, Scope::kDevice);
  EXPECT_EQ(meter.name(), "fake");
  EXPECT_EQ(meter.provenance(), Provenance::kIntegrated);
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{0.0, 0.0}));
  meter.SetEnergyJ(0, 10.0);
  meter.AddEnergyJ(1, 2.5);
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{10.0, 2.5}));
  meter.SetEnergyJ({11.0, 3.0});
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{11.0, 3.0}));
  EXPECT_EQ(meter.read_count(), 3u);
}

TEST(FakeMeterTest, ScriptedSequenceThenHolds) {
  FakeMeter meter({"gpu:0"});
  meter.Script({{1.0}, {4.0}});
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{1.0}));
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{4.0}));
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{4.0}));
}

TEST(FakeMeterTest, RejectsDecreasingOrMalformedValues) {
  FakeMeter meter({"gpu:0"});
  meter.SetEnergyJ(0, 5.0);
  EXPECT_THROW(meter.SetEnergyJ(0, 4.0), InternalError);
  EXPECT_THROW(meter.Script({{6.0}, {5.0}}), InternalError);
  EXPECT_THROW(meter.SetEnergyJ({1.0, 2.0}), InternalError);
  EXPECT_THROW(meter.AddEnergyJ(3, 1.0), InternalError);
  EXPECT_THROW(FakeMeter({"a", "a"}), InternalError);
  EXPECT_THROW(FakeMeter(std::vector<std::string>{}), InternalError);
}

TEST(MeterTest, ProvenanceAndScopeNames) {
  EXPECT_EQ(ToString(Provenance::kMeasured), "measured");
  EXPECT_EQ(ToString(Provenance::kIntegrated), "integrated");
  EXPECT_EQ(ToString(Provenance::kEstimated), "estimated");
  EXPECT_EQ(ToString(Scope::kDevice), "device");
  EXPECT_EQ(ToString(Scope::kPackage), "package");
  EXPECT_EQ(ToString(Scope::kProcess), "process");
}

}  // namespace
}  // namespace greenrl::energy
