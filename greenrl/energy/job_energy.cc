// job_energy.cc: see job_energy.h.
#include "greenrl/energy/job_energy.h"

#include <unistd.h>

#include <fstream>

#include "greenrl/core/errors.h"

namespace greenrl::energy {

uint64_t JobKey(const std::string& text) {
  // FNV-1a, 64-bit (Fowler, Noll, Vo; offset basis and prime from the reference implementation).
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h & kJobKeyMask;
}

uint64_t MachineKey() {
  std::string id;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  if (!(boot_id && std::getline(boot_id, id)) || id.empty()) {
    char host[256] = {};
    id = gethostname(host, sizeof(host) - 1) == 0 ? std::string("host:") + host : std::string();
  }
  return JobKey(id);
}

std::vector<std::vector<double>> JobDomainWeights(const std::vector<Scope>& scopes,
                                                  const std::vector<RankDomainKeys>& ranks) {
  std::vector<std::vector<double>> weights(ranks.size(), std::vector<double>(scopes.size(), 1.0));
  for (size_t q = 0; q < ranks.size(); ++q) {
    GREENRL_CHECK(ranks[q].identity_keys.size() == scopes.size(),
                  "rank " + std::to_string(q) + " has " +
                      std::to_string(ranks[q].identity_keys.size()) + " domain keys for " +
                      std::to_string(scopes.size()) + " domains");
  }
  for (size_t q = 0; q < ranks.size(); ++q) {
    for (size_t k = 0; k < scopes.size(); ++k) {
      if (scopes[k] == Scope::kProcess) continue;
      for (size_t lower = 0; lower < q && weights[q][k] != 0.0; ++lower) {
        if (ranks[lower].machine_key != ranks[q].machine_key) continue;
        for (size_t m = 0; m < scopes.size(); ++m) {
          if (scopes[m] != Scope::kProcess &&
              ranks[lower].identity_keys[m] == ranks[q].identity_keys[k]) {
            weights[q][k] = 0.0;  // the lower rank already counts this counter
            break;
          }
        }
      }
    }
  }
  return weights;
}

}  // namespace greenrl::energy
