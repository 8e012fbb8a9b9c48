// meter.cc: names of Provenance and Scope values.
#include "greenrl/energy/meter.h"

namespace greenrl::energy {

std::string ToString(Provenance provenance) {
  switch (provenance) {
    case Provenance::kMeasured:
      return "measured";
    case Provenance::kIntegrated:
      return "integrated";
    case Provenance::kEstimated:
      return "estimated";
  }
  return "unknown";
}

std::string ToString(Scope scope) {
  switch (scope) {
    case Scope::kDevice:
      return "device";
    case Scope::kPackage:
      return "package";
    case Scope::kProcess:
      return "process";
  }
  return "unknown";
}

}  // namespace greenrl::energy
