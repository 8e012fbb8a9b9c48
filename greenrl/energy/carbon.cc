// carbon.cc: intensity table and the kg CO2e formula (see carbon.h).
#include "greenrl/energy/carbon.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "greenrl/core/errors.h"

namespace greenrl::energy {
namespace {

// Joules per kilowatt-hour.
constexpr double kJoulesPerKwh = 3.6e6;

std::string ToUpper(const std::string& text) {
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

std::string AcceptedRegions() {
  std::string accepted = "one of: ";
  bool first = true;
  for (const RegionIntensity& row : RegionIntensities()) {
    if (!first) accepted += ", ";
    accepted += row.code;
    first = false;
  }
  return accepted +
         " (ISO 3166-1 alpha-2 code or English country name, case-insensitive), or empty for the "
         "world average";
}

}  // namespace

const std::vector<RegionIntensity>& RegionIntensities() {
  // Our World in Data, "Carbon intensity of electricity generation", g CO2e/kWh (Ember, Energy
  // Institute); 2023 unless marked 2022. Copied from ../shared/REFERENCES.md.
  static const std::vector<RegionIntensity> table = {
      {"AU", "Australia", 548.7, 2023},      {"BR", "Brazil", 98.3, 2023},
      {"CA", "Canada", 170.0, 2023},         {"CH", "Switzerland", 34.8, 2023},
      {"CN", "China", 582.3, 2023},          {"DE", "Germany", 381.0, 2023},
      {"ES", "Spain", 174.1, 2023},          {"FR", "France", 56.0, 2023},
      {"GB", "United Kingdom", 237.6, 2023}, {"ID", "Indonesia", 675.9, 2022},
      {"IE", "Ireland", 290.8, 2023},        {"IN", "India", 713.4, 2023},
      {"IT", "Italy", 330.7, 2023},          {"JP", "Japan", 485.4, 2023},
      {"KR", "South Korea", 430.6, 2023},    {"MX", "Mexico", 507.2, 2023},
      {"NL", "Netherlands", 267.6, 2023},    {"NO", "Norway", 30.1, 2023},
      {"PL", "Poland", 661.9, 2023},         {"RU", "Russia", 441.0, 2023},
      {"SA", "Saudi Arabia", 706.8, 2022},   {"SE", "Sweden", 40.7, 2023},
      {"SG", "Singapore", 470.8, 2023},      {"TW", "Taiwan", 642.4, 2023},
      {"US", "United States", 369.5, 2023},  {"ZA", "South Africa", 707.7, 2023},
  };
  return table;
}

const RegionIntensity* FindRegion(const std::string& region) {
  std::string wanted = ToUpper(region);
  if (wanted == "UK") wanted = "GB";
  for (const RegionIntensity& row : RegionIntensities()) {
    if (wanted == row.code || wanted == ToUpper(row.name)) return &row;
  }
  return nullptr;
}

void ValidateCarbonOptions(const CarbonOptions& options) {
  if (!options.region.empty() && FindRegion(options.region) == nullptr) {
    throw ConfigError("carbon.region", options.region, AcceptedRegions());
  }
  if (options.intensity_g_per_kwh.has_value() &&
      (!std::isfinite(*options.intensity_g_per_kwh) || *options.intensity_g_per_kwh < 0.0)) {
    throw ConfigError("carbon.intensity_g_per_kwh", fmt::format("{}", *options.intensity_g_per_kwh),
                      "a finite grid intensity in g CO2e per kWh, >= 0");
  }
  if (!std::isfinite(options.pue) || options.pue < 1.0) {
    throw ConfigError("carbon.pue", fmt::format("{}", options.pue),
                      "a finite power usage effectiveness >= 1 (default 1.0)");
  }
}

CarbonResult ComputeCarbon(double energy_j, const CarbonOptions& options) {
  ValidateCarbonOptions(options);
  GREENRL_CHECK(std::isfinite(energy_j) && energy_j >= 0.0,
                fmt::format("energy_j must be finite and >= 0, got {}", energy_j));
  CarbonResult result;
  result.energy_kwh = energy_j / kJoulesPerKwh;
  result.pue = options.pue;
  const RegionIntensity* row = options.region.empty() ? nullptr : FindRegion(options.region);
  result.region = row != nullptr ? row->code : "world";
  if (options.intensity_g_per_kwh.has_value()) {
    result.intensity_g_per_kwh = *options.intensity_g_per_kwh;
    result.intensity_source = "override (carbon.intensity_g_per_kwh)";
  } else if (row != nullptr) {
    result.intensity_g_per_kwh = row->intensity_g_per_kwh;
    result.intensity_source = fmt::format(
        "Our World in Data, Carbon intensity of electricity generation (Ember, Energy "
        "Institute), {}, {}",
        row->name, row->year);
  } else {
    result.intensity_g_per_kwh = kWorldIntensityGPerKwh;
    result.intensity_source = kWorldIntensitySource;
    result.intensity_is_default = true;
  }
  result.kg_co2e = result.energy_kwh * result.pue * result.intensity_g_per_kwh / 1000.0;
  return result;
}

}  // namespace greenrl::energy
