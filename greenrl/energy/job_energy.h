// job_energy.h: a data-parallel job's energy from its ranks' readings, each shared counter once.
//
// Every rank of a job meters its own domains (the same list on every rank: same build, same
// meter choice). A process-scope domain (the CPU-time estimator, "cpu:process") covers its rank
// alone, so the job's figure is the sum over ranks. A package- or device-scope domain (RAPL's
// "cpu:package-0", NVML's "gpu:0") covers every process on its machine: two ranks on one machine
// that read the same hardware read the same counter, and adding both would count the machine's
// energy twice. Such a domain enters the job's total from the lowest rank that reads it; ranks on
// other machines, or reading other hardware (another GPU), add theirs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// Keys are below 2^52, so they travel exactly as float64 through a sum all-reduce where every
// other rank contributes 0.
inline constexpr uint64_t kJobKeyMask = (uint64_t{1} << 52) - 1;

// Returns: a key of the machine this process runs on, below 2^52: FNV-1a (64-bit) of the kernel's
// boot id (/proc/sys/kernel/random/boot_id: one per running kernel, shared by its containers,
// which see the same RAPL counters), else of the host name. No errors (an unreadable boot id and
// host name give the key of the empty string).
uint64_t MachineKey();

// Returns: FNV-1a (64-bit) of `text`, masked to kJobKeyMask.
uint64_t JobKey(const std::string& text);

// What one rank meters, as exchanged between ranks.
struct RankDomainKeys {
  uint64_t machine_key = 0;             // MachineKey() of the rank
  std::vector<uint64_t> identity_keys;  // JobKey(DomainInfo::identity) per domain, domains order
};

// Returns: weights[q][k], 1.0 where rank q's reading of domain k enters the job's total, else
// 0.0: every process-scope domain, and a package- or device-scope domain unless a lower rank on
// the same machine (equal machine_key) reads a shared domain of the same identity.
// Args: scopes: the scope of each domain (domains order, the same on every rank);
//       ranks: one entry per rank, rank order, each with scopes.size() identity keys.
// Errors: GREENRL_CHECK when a rank's identity_keys size differs from scopes.size().
std::vector<std::vector<double>> JobDomainWeights(const std::vector<Scope>& scopes,
                                                  const std::vector<RankDomainKeys>& ranks);

}  // namespace greenrl::energy
