#include "greenrl/energy/job_energy.h"

#include <gtest/gtest.h>

#include <memory>

#include "greenrl/core/clock.h"
#include "greenrl/energy/fake_meter.h"
#include "greenrl/energy/monitor.h"

namespace greenrl::energy {
namespace {

using Weights = std::vector<std::vector<double>>;

RankDomainKeys Rank(uint64_t machine, const std::vector<std::string>& identities) {
  RankDomainKeys r;
  r.machine_key = machine;
  for (const std::string& id : identities) r.identity_keys.push_back(JobKey(id));
  return r;
}

TEST(JobEnergyTest, JobKeyIsFnv1aMaskedTo52Bits) {
  // FNV-1a 64 of "" is the offset basis 0xcbf29ce484222325; of "a", 0xaf63dc4c8601ec8c.
  EXPECT_EQ(JobKey(""), 0xcbf29ce484222325ull & kJobKeyMask);
  EXPECT_EQ(JobKey("a"), 0xaf63dc4c8601ec8cull & kJobKeyMask);
  EXPECT_EQ(MachineKey(), MachineKey());
  EXPECT_LE(MachineKey(), kJobKeyMask);
  // Exact through float64, as the all-reduce carries it.
  EXPECT_EQ(static_cast<uint64_t>(static_cast<double>(kJobKeyMask)), kJobKeyMask);
}

// Two ranks on one machine with the estimator (process) and RAPL (package): the estimator is
// summed, the package counter taken once, from rank 0. With energies of rank 0 {2 J, 10 J} and
// rank 1 {3 J, 10.5 J} the job spent 2 + 3 + 10 = 15 J, not 25.5 J.
TEST(JobEnergyTest, PackageCounterOnOneMachineCountsOnceProcessScopeSums) {
  const std::vector<Scope> scopes = {Scope::kProcess, Scope::kPackage};
  const Weights w = JobDomainWeights(scopes, {Rank(7, {"cpu:process", "cpu:package-0"}),
                                              Rank(7, {"cpu:process", "cpu:package-0"})});
  EXPECT_EQ(w, (Weights{{1.0, 1.0}, {1.0, 0.0}}));
  const double energy[2][2] = {{2.0, 10.0}, {3.0, 10.5}};
  double job_j = 0.0;
  for (int q = 0; q < 2; ++q) {
    for (int k = 0; k < 2; ++k) job_j += w[q][k] * energy[q][k];
  }
  EXPECT_DOUBLE_EQ(job_j, 15.0);
}

TEST(JobEnergyTest, RanksOnTwoMachinesEachCountTheirOwnPackages) {
  const Weights w = JobDomainWeights(
      {Scope::kPackage, Scope::kPackage},
      {Rank(1, {"cpu:package-0", "dram:0"}), Rank(2, {"cpu:package-0", "dram:0"})});
  EXPECT_EQ(w, (Weights{{1.0, 1.0}, {1.0, 1.0}}));
}

// Ranks 0 and 2 share machine 5, rank 1 is alone on machine 6: only rank 2's copy is dropped.
TEST(JobEnergyTest, LowestRankOfEachMachineCounts) {
  const std::vector<std::string> ids = {"cpu:package-0"};
  const Weights w = JobDomainWeights({Scope::kPackage}, {Rank(5, ids), Rank(6, ids), Rank(5, ids)});
  EXPECT_EQ(w, (Weights{{1.0}, {1.0}, {0.0}}));
}

// GPUs are told apart by UUID: with CUDA_VISIBLE_DEVICES=0 and =1, both ranks' "gpu:0" count;
// with the same GPU, once; with the order swapped (0,1 and 1,0), rank 1 adds nothing.
TEST(JobEnergyTest, GpusOnOneMachineAreToldApartByUuid) {
  const std::vector<Scope> one = {Scope::kDevice};
  EXPECT_EQ(JobDomainWeights(one, {Rank(3, {"GPU-aaa"}), Rank(3, {"GPU-bbb"})}),
            (Weights{{1.0}, {1.0}}));
  EXPECT_EQ(JobDomainWeights(one, {Rank(3, {"GPU-aaa"}), Rank(3, {"GPU-aaa"})}),
            (Weights{{1.0}, {0.0}}));
  const std::vector<Scope> two = {Scope::kDevice, Scope::kDevice};
  EXPECT_EQ(
      JobDomainWeights(two, {Rank(3, {"GPU-aaa", "GPU-bbb"}), Rank(3, {"GPU-bbb", "GPU-aaa"})}),
      (Weights{{1.0, 1.0}, {0.0, 0.0}}));
}

TEST(JobEnergyTest, MismatchedKeyCountIsAnError) {
  EXPECT_THROW(JobDomainWeights({Scope::kPackage, Scope::kProcess}, {Rank(1, {"cpu:package-0"})}),
               std::exception);
}

// The monitor carries each meter's identities: the default is the domain name.
TEST(JobEnergyTest, MonitorRecordsDomainIdentities) {
  FakeClock clock(0.0);
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0", "cpu:package-0"}));
  EnergyMonitor monitor(std::move(meters), clock);
  ASSERT_EQ(monitor.domains().size(), 2u);
  EXPECT_EQ(monitor.domains()[0].identity, "gpu:0");
  EXPECT_EQ(monitor.domains()[1].identity, "cpu:package-0");
}

}  // namespace
}  // namespace greenrl::energy
